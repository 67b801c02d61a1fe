//! Transfers: sending deliveries on links where we send, receiving them on links where
//! we receive.
//!
//! Sending checks and uses link credit, assigns the session's next delivery id, and
//! writes the frame straight into the output when the message fits one frame and the
//! peer's window is open (the fast path: header, transfer and message bytes written in
//! place, no buffer of its own). Otherwise the delivery is cut into frames as the
//! window allows. Receiving counts frames against the session window and deliveries
//! against link credit, reassembles multi-frame deliveries, drops aborted ones and
//! enforces the link's max-message-size and the connection's bound on the bytes of all
//! incomplete deliveries together ([`Config::max_incomplete_bytes`]).
//!
//! [`Config::max_incomplete_bytes`]: super::Config::max_incomplete_bytes

use bytes::{Bytes, BytesMut};

use super::delivery::{write_single_frame, Partial, Pending};
use super::{Connection, ConnectionError, Event, LinkId};
use crate::condition;
use crate::performative::{DeliveryState, ErrorCondition, Role, Transfer};

impl Connection {
    /// Sends a delivery on a link where we send; `write` appends the message bytes to
    /// the buffer it is given. Uses one credit (`Err(NoCredit)` without: check
    /// [`credit`](Self::credit) first). Returns the delivery id. A delivery sent
    /// unsettled is tracked until the peer settles it.
    pub fn send(
        &mut self,
        link: LinkId,
        tag: Bytes,
        settled: bool,
        message_format: u32,
        write: impl FnOnce(&mut BytesMut),
    ) -> Result<u32, ConnectionError> {
        let transfer = self.start_delivery(link, tag, settled, message_format)?;
        let delivery_id = transfer.delivery_id.unwrap_or(0);
        let max_frame = self.max_frame_size();
        let Some(s) = self.sessions.get_mut(&link.channel) else {
            return Err(ConnectionError::UnknownSession(link.channel));
        };
        let payload = if s.nothing_queued() && s.remote_incoming_window > 0 {
            match write_single_frame(
                self.output.sink(),
                link.channel,
                &transfer,
                max_frame,
                write,
            ) {
                Ok(()) => {
                    self.output.frames += 1;
                    s.remote_incoming_window -= 1;
                    s.next_outgoing_id = s.next_outgoing_id.wrapping_add(1);
                    return Ok(delivery_id);
                }
                Err(payload) => payload,
            }
        } else {
            let mut buf = BytesMut::new();
            write(&mut buf);
            buf.freeze()
        };
        s.push_pending(Pending { transfer, payload });
        s.flush(link.channel, &mut self.output, max_frame);
        Ok(delivery_id)
    }

    /// [`send`](Self::send) with the message bytes at hand (large ones are cut into
    /// frames without copying them first).
    pub fn send_bytes(
        &mut self,
        link: LinkId,
        tag: Bytes,
        settled: bool,
        message_format: u32,
        message: Bytes,
    ) -> Result<u32, ConnectionError> {
        if message.len() + 64 < self.max_frame_size() as usize {
            return self.send(link, tag, settled, message_format, |out| {
                out.extend_from_slice(&message)
            });
        }
        let transfer = self.start_delivery(link, tag, settled, message_format)?;
        let delivery_id = transfer.delivery_id.unwrap_or(0);
        let max_frame = self.max_frame_size();
        if let Some(s) = self.sessions.get_mut(&link.channel) {
            s.push_pending(Pending {
                transfer,
                payload: message,
            });
            s.flush(link.channel, &mut self.output, max_frame);
        }
        Ok(delivery_id)
    }

    /// Sends an unsettled delivery whose first transfer carries `state`: a transfer
    /// inside a transaction (`transactional-state` naming it, AMQP 1.0 part 4).
    pub fn send_in_state(
        &mut self,
        link: LinkId,
        tag: Bytes,
        state: DeliveryState,
        message: Bytes,
    ) -> Result<u32, ConnectionError> {
        let mut transfer = self.start_delivery(link, tag, false, 0)?;
        transfer.state = Some(state);
        let delivery_id = transfer.delivery_id.unwrap_or(0);
        let max_frame = self.max_frame_size();
        if let Some(s) = self.sessions.get_mut(&link.channel) {
            s.push_pending(Pending {
                transfer,
                payload: message,
            });
            s.flush(link.channel, &mut self.output, max_frame);
        }
        Ok(delivery_id)
    }

    /// Checks the link and uses a credit; returns the delivery's first transfer.
    fn start_delivery(
        &mut self,
        link: LinkId,
        tag: Bytes,
        settled: bool,
        message_format: u32,
    ) -> Result<Transfer, ConnectionError> {
        let l = self.live_link(link)?;
        if l.role != Role::Sender {
            return Err(ConnectionError::WrongRole("sending"));
        }
        if !l.attach_sent {
            return Err(ConnectionError::IllegalState("attach not answered"));
        }
        if l.credit == 0 {
            return Err(ConnectionError::NoCredit);
        }
        l.credit -= 1;
        l.delivery_count = l.delivery_count.wrapping_add(1);
        let s = self
            .sessions
            .get_mut(&link.channel)
            .ok_or(ConnectionError::UnknownSession(link.channel))?;
        let delivery_id = s.next_delivery_id;
        s.next_delivery_id = delivery_id.wrapping_add(1);
        if !settled {
            s.unsettled_out.insert(delivery_id, link.handle);
        }
        Ok(Transfer {
            handle: link.handle,
            delivery_id: Some(delivery_id),
            delivery_tag: Some(tag),
            message_format: Some(message_format),
            settled: Some(settled),
            ..Transfer::default()
        })
    }

    pub(super) fn on_transfer(
        &mut self,
        channel: u16,
        t: Transfer,
        payload: Bytes,
        events: &mut Vec<Event>,
    ) -> Result<(), ErrorCondition> {
        let handle = self.local_handle(channel, t.handle)?;
        let link = LinkId { channel, handle };
        let Some(s) = self.sessions.get_mut(&channel) else {
            return Ok(());
        };
        if s.take_incoming_frame()? {
            self.replenish_pending = true;
        }
        let Some(l) = s.links.get_mut(&handle).filter(|l| !l.detach_sent) else {
            return Ok(()); // detached by us: its frames are dropped
        };
        if l.role != Role::Receiver {
            let e = ErrorCondition::new(condition::NOT_ALLOWED, "transfer on a link where we send");
            self.link_error(link, e, events);
            return Ok(());
        }
        let partial = match l.partial.take() {
            Some(p) => p,
            None => {
                let Some(delivery_id) = t.delivery_id else {
                    let e = ErrorCondition::new(
                        condition::NOT_ALLOWED,
                        "first transfer of a delivery without delivery-id",
                    );
                    self.link_error(link, e, events);
                    return Ok(());
                };
                if l.credit == 0 {
                    let e = ErrorCondition::new(
                        condition::TRANSFER_LIMIT_EXCEEDED,
                        "transfer without link credit",
                    );
                    self.link_error(link, e, events);
                    return Ok(());
                }
                l.credit -= 1;
                l.delivery_count = l.delivery_count.wrapping_add(1);
                if !t.more && !t.aborted {
                    // The common case: one frame, the message is a slice of the input.
                    if exceeds(l.max_message_size, payload.len()) {
                        return self.too_large(link, events);
                    }
                    events.push(Event::Message {
                        link,
                        delivery_id,
                        delivery_tag: t.delivery_tag.unwrap_or_default(),
                        settled: t.settled.unwrap_or(false),
                        message_format: t.message_format.unwrap_or(0),
                        state: t.state,
                        message: payload,
                    });
                    return Ok(());
                }
                Partial::start(delivery_id, &t)
            }
        };
        let mut partial = partial;
        let had = partial.bytes.len();
        if t.aborted {
            self.incomplete_bytes -= had;
            return Ok(()); // the delivery is dropped; its credit stays used
        }
        if exceeds(l.max_message_size, had + payload.len()) {
            self.incomplete_bytes -= had;
            return self.too_large(link, events);
        }
        let others = self.incomplete_bytes - had;
        if t.more
            && others > 0
            && self.incomplete_bytes + payload.len() > self.config.max_incomplete_bytes
        {
            // One delivery alone may grow to max-message-size; together with other
            // links' incomplete ones, no further than the connection's bound.
            self.incomplete_bytes -= had;
            let e = ErrorCondition::new(
                condition::RESOURCE_LIMIT_EXCEEDED,
                format!(
                    "incomplete messages on this connection would hold more than {} bytes",
                    self.config.max_incomplete_bytes
                ),
            );
            self.link_error(link, e, events);
            return Ok(());
        }
        partial.push(&t, &payload);
        if t.more {
            self.incomplete_bytes += payload.len();
            l.partial = Some(partial);
            debug_assert_eq!(self.incomplete_bytes, self.counted_incomplete());
            return Ok(());
        }
        self.incomplete_bytes -= had;
        events.push(Event::Message {
            link,
            delivery_id: partial.delivery_id,
            delivery_tag: partial.tag,
            settled: partial.settled,
            message_format: partial.message_format,
            state: partial.state,
            message: partial.bytes.freeze(),
        });
        Ok(())
    }

    fn too_large(&mut self, link: LinkId, events: &mut Vec<Event>) -> Result<(), ErrorCondition> {
        let e = ErrorCondition::new(
            condition::MESSAGE_SIZE_EXCEEDED,
            "message exceeds the link's max-message-size",
        );
        self.link_error(link, e, events);
        Ok(())
    }

    /// Sets the largest message accepted on a link where we receive (`None`: no limit);
    /// a larger one detaches the link with `amqp:link:message-size-exceeded`.
    pub fn set_max_message_size(
        &mut self,
        link: LinkId,
        max: Option<u64>,
    ) -> Result<(), ConnectionError> {
        self.live_link(link)?.max_message_size = max;
        Ok(())
    }
}

impl Connection {
    /// The bytes of incomplete deliveries, counted link by link (for debug assertions).
    pub(super) fn counted_incomplete(&self) -> usize {
        self.sessions
            .values()
            .flat_map(|s| s.links.values())
            .filter_map(|l| l.partial.as_ref())
            .map(|p| p.bytes.len())
            .sum()
    }
}

fn exceeds(limit: Option<u64>, size: usize) -> bool {
    limit.is_some_and(|max| size as u64 > max)
}
