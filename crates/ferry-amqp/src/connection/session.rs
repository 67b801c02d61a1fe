//! Sessions: begin and end, the channel maps, and the transfer windows.
//!
//! Our incoming window stays wide open: it starts at [`Config::incoming_window`] and is
//! replenished with a session flow once half is used, so only a misbehaving peer ever
//! hits it (`amqp:session:window-violation`). The peer's incoming window is respected:
//! transfer frames beyond it wait in the session's queue, in order, and go out when the
//! peer's flow reopens it. Delivery ids are per session; so is the map of deliveries we
//! sent that the peer has not settled.

use foldhash::{HashMap, HashMapExt};
use std::collections::{BTreeMap, VecDeque};

use bytes::Bytes;

use super::delivery::{write_next_frame, Pending};
use super::link::Link;
use super::output::Output;
use super::{Config, Connection, ConnectionError, Event, LinkId, SessionId};
use crate::condition;
use crate::performative::{
    Begin, DeliveryState, Disposition, End, ErrorCondition, Flow, Performative, Role,
};

/// The outgoing window we announce: we never limit ourselves.
const OUTGOING_WINDOW: u32 = i32::MAX as u32;

/// One session's state.
#[derive(Debug)]
pub(crate) struct Session {
    /// The peer's channel, once its begin arrived.
    pub remote_channel: Option<u16>,
    /// We sent end (or ended it for a fault); it lingers until the peer's end.
    pub ended: bool,
    /// Our incoming window now, and what it is replenished to.
    pub incoming_window: u32,
    window_size: u32,
    /// The transfer id we expect next.
    pub next_incoming_id: u32,
    /// The transfer id of our next transfer frame.
    pub next_outgoing_id: u32,
    /// How many more transfer frames the peer accepts.
    pub remote_incoming_window: u32,
    /// Our next delivery id.
    pub next_delivery_id: u32,
    /// Our handle-max and the peer's.
    pub handle_max: u32,
    pub remote_handle_max: u32,
    /// Links by our handle (detached ones linger until the peer's detach).
    pub links: BTreeMap<u32, Link>,
    /// The peer's handle to ours.
    pub remote_handles: HashMap<u32, u32>,
    /// Deliveries we sent unsettled: delivery id → our handle.
    pub unsettled_out: BTreeMap<u32, u32>,
    /// Transfer frames waiting for the peer's window.
    queue: VecDeque<Pending>,
    /// The message bytes in `queue`.
    queued_bytes: usize,
}

impl Session {
    fn new(config: &Config) -> Self {
        Session {
            remote_channel: None,
            ended: false,
            incoming_window: config.incoming_window,
            window_size: config.incoming_window,
            next_incoming_id: 0,
            next_outgoing_id: 0,
            remote_incoming_window: 0,
            next_delivery_id: 0,
            handle_max: config.handle_max,
            remote_handle_max: u32::MAX,
            links: BTreeMap::new(),
            remote_handles: HashMap::new(),
            unsettled_out: BTreeMap::new(),
            queue: VecDeque::new(),
            queued_bytes: 0,
        }
    }

    fn begin_frame(&self) -> Performative {
        Performative::Begin(Begin {
            remote_channel: self.remote_channel,
            next_outgoing_id: self.next_outgoing_id,
            incoming_window: self.incoming_window,
            outgoing_window: OUTGOING_WINDOW,
            handle_max: self.handle_max,
            offered_capabilities: Vec::new(),
            desired_capabilities: Vec::new(),
            properties: Vec::new(),
        })
    }

    fn on_peer_begin(&mut self, channel: u16, begin: &Begin) {
        self.remote_channel = Some(channel);
        self.next_incoming_id = begin.next_outgoing_id;
        self.remote_incoming_window = begin.incoming_window;
        self.remote_handle_max = begin.handle_max;
    }

    /// A flow frame with the session's state, and the link's if given.
    pub fn flow(&self, link: Option<(u32, &Link)>) -> Flow {
        let mut flow = Flow {
            next_incoming_id: self.remote_channel.map(|_| self.next_incoming_id),
            incoming_window: self.incoming_window,
            next_outgoing_id: self.next_outgoing_id,
            outgoing_window: OUTGOING_WINDOW,
            ..Flow::default()
        };
        if let Some((handle, link)) = link {
            flow.handle = Some(handle);
            flow.delivery_count = Some(link.delivery_count);
            flow.link_credit = Some(link.credit);
            flow.drain = link.drain;
        }
        flow
    }

    /// Counts an incoming transfer frame against our window; true when the window is
    /// down to half and should be replenished (after the current batch of input).
    pub fn take_incoming_frame(&mut self) -> Result<bool, ErrorCondition> {
        if self.incoming_window == 0 {
            return Err(ErrorCondition::new(
                condition::WINDOW_VIOLATION,
                "transfer beyond the incoming window",
            ));
        }
        self.incoming_window -= 1;
        self.next_incoming_id = self.next_incoming_id.wrapping_add(1);
        Ok(self.incoming_window <= self.window_size / 2)
    }

    /// Reopens our incoming window with a session flow if half of it is used.
    pub fn replenish(&mut self, channel: u16, output: &mut Output) {
        if !self.ended && self.incoming_window <= self.window_size / 2 {
            self.incoming_window = self.window_size;
            output.frame(channel, &Performative::Flow(self.flow(None)));
        }
    }

    /// Bytes of transfers waiting for the peer's window.
    pub fn queued_bytes(&self) -> usize {
        self.queued_bytes
    }

    /// The same, counted transfer by transfer (for checks).
    pub fn counted_queued_bytes(&self) -> usize {
        self.queue.iter().map(|p| p.payload.len()).sum()
    }

    /// True when no transfer waits for the peer's window.
    pub fn nothing_queued(&self) -> bool {
        self.queue.is_empty()
    }

    /// Transfers (whole or the rest of one) waiting for the peer's window.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Queues a delivery's frames behind those waiting for the peer's window.
    pub fn push_pending(&mut self, pending: Pending) {
        self.queued_bytes += pending.payload.len();
        self.queue.push_back(pending);
    }

    /// Drops every queued transfer.
    fn clear_queue(&mut self) {
        self.queue.clear();
        self.queued_bytes = 0;
    }

    /// Sends queued transfer frames while the peer's window allows.
    pub fn flush(&mut self, channel: u16, output: &mut Output, max_frame: u32) {
        while self.remote_incoming_window > 0 {
            let Some(pending) = self.queue.front_mut() else {
                break;
            };
            let before = pending.payload.len();
            let last = write_next_frame(output.sink(), channel, pending, max_frame);
            self.queued_bytes -= before - pending.payload.len();
            output.frames += 1;
            self.remote_incoming_window -= 1;
            self.next_outgoing_id = self.next_outgoing_id.wrapping_add(1);
            if last {
                self.queue.pop_front();
            }
        }
    }

    /// Removes a link's unsettled deliveries and queued frames; returns the ids.
    pub fn forget_link(&mut self, handle: u32) -> Vec<u32> {
        self.queue.retain(|p| p.transfer.handle != handle);
        self.queued_bytes = self.queue.iter().map(|p| p.payload.len()).sum();
        let ids: Vec<u32> = self
            .unsettled_out
            .iter()
            .filter(|(_, h)| **h == handle)
            .map(|(id, _)| *id)
            .collect();
        for id in &ids {
            self.unsettled_out.remove(id);
        }
        ids
    }

    /// Settles deliveries we sent in `first..=last` (serial numbers may wrap).
    fn settle_out(&mut self, first: u32, last: u32) {
        // The common disposition settles one delivery: no list of ids to build.
        if first == last {
            self.unsettled_out.remove(&first);
            return;
        }
        let mut ids: Vec<u32> = Vec::new();
        if first <= last {
            ids.extend(self.unsettled_out.range(first..=last).map(|(id, _)| *id));
        } else {
            ids.extend(self.unsettled_out.range(first..).map(|(id, _)| *id));
            ids.extend(self.unsettled_out.range(..=last).map(|(id, _)| *id));
        }
        for id in ids {
            self.unsettled_out.remove(&id);
        }
    }

    /// Reports every live link as detached (with its unsettled deliveries) and the
    /// session as ended, for an end the caller did not ask for.
    pub fn report_lost(
        &mut self,
        channel: u16,
        error: &Option<ErrorCondition>,
        events: &mut Vec<Event>,
    ) {
        let handles: Vec<u32> = self
            .links
            .iter()
            .filter(|(_, l)| !l.detach_sent)
            .map(|(h, _)| *h)
            .collect();
        for handle in handles {
            let unsettled = self.forget_link(handle);
            events.push(Event::Detach {
                link: LinkId { channel, handle },
                closed: false,
                error: error.clone(),
                unsettled,
            });
        }
        self.links.clear();
        self.clear_queue();
        events.push(Event::End {
            session: SessionId(channel),
            error: error.clone(),
        });
    }
}

impl Connection {
    /// Begins a session (client role, or a server starting one); the peer's answer is
    /// reported as [`Event::Begin`].
    pub fn begin(&mut self) -> Result<SessionId, ConnectionError> {
        if self.close_sent || self.finished {
            return Err(ConnectionError::Closed);
        }
        let channel = self.free_channel()?;
        let session = Session::new(&self.config);
        self.output.frame(channel, &session.begin_frame());
        self.sessions.insert(channel, session);
        Ok(SessionId(channel))
    }

    fn free_channel(&self) -> Result<u16, ConnectionError> {
        let max = self.config.channel_max.min(self.remote_channel_max);
        (0..=max)
            .find(|c| !self.sessions.contains_key(c))
            .ok_or(ConnectionError::NoChannel(max))
    }

    /// Ends a session, with an error or not. Its links are gone with it. Returns the
    /// deliveries we sent on it that were never settled.
    pub fn end(
        &mut self,
        session: SessionId,
        error: Option<ErrorCondition>,
    ) -> Result<Vec<(LinkId, u32)>, ConnectionError> {
        let s = self.live_session(session)?;
        let unsettled = s
            .unsettled_out
            .iter()
            .map(|(id, handle)| {
                let link = LinkId {
                    channel: session.0,
                    handle: *handle,
                };
                (link, *id)
            })
            .collect();
        self.end_session(session.0, error);
        Ok(unsettled)
    }

    fn end_session(&mut self, channel: u16, error: Option<ErrorCondition>) {
        if let Some(s) = self.sessions.get_mut(&channel) {
            s.ended = true;
            s.links.clear();
            s.unsettled_out.clear();
            s.clear_queue();
            self.output
                .frame(channel, &Performative::End(End { error }));
            self.recount_incomplete();
        }
    }

    /// Ends a session for the peer's fault and reports it.
    pub(super) fn session_error(
        &mut self,
        channel: u16,
        error: ErrorCondition,
        events: &mut Vec<Event>,
    ) {
        if let Some(s) = self.sessions.get_mut(&channel) {
            s.report_lost(channel, &Some(error.clone()), events);
        }
        self.end_session(channel, Some(error));
    }

    pub(super) fn live_session(
        &mut self,
        session: SessionId,
    ) -> Result<&mut Session, ConnectionError> {
        if self.close_sent || self.finished {
            return Err(ConnectionError::Closed);
        }
        match self.sessions.get_mut(&session.0) {
            Some(s) if !s.ended => Ok(s),
            _ => Err(ConnectionError::UnknownSession(session.0)),
        }
    }

    pub(super) fn on_begin(&mut self, channel: u16, begin: Begin, events: &mut Vec<Event>) {
        // (A channel above channel-max never gets here: see `on_frame`.)
        if self.remote_channels.contains_key(&channel) {
            self.fail(
                condition::ILLEGAL_STATE,
                format!("channel {channel} already begun"),
                events,
            );
            return;
        }
        let local = match begin.remote_channel {
            Some(ours) => match self.sessions.get_mut(&ours) {
                Some(s) if s.remote_channel.is_none() => {
                    s.on_peer_begin(channel, &begin);
                    if s.ended {
                        self.remote_channels.insert(channel, ours);
                        return;
                    }
                    ours
                }
                _ => {
                    self.fail(
                        condition::ILLEGAL_STATE,
                        format!("begin answers channel {ours}, which we did not begin"),
                        events,
                    );
                    return;
                }
            },
            None => {
                let Ok(ours) = self.free_channel() else {
                    self.fail(
                        condition::RESOURCE_LIMIT_EXCEEDED,
                        "no free channel",
                        events,
                    );
                    return;
                };
                let mut s = Session::new(&self.config);
                s.on_peer_begin(channel, &begin);
                self.output.frame(ours, &s.begin_frame());
                self.sessions.insert(ours, s);
                ours
            }
        };
        self.remote_channels.insert(channel, local);
        events.push(Event::Begin {
            session: SessionId(local),
            begin,
        });
    }

    pub(super) fn on_end(&mut self, channel: u16, end: End, events: &mut Vec<Event>) {
        let Some(local) = self.remote_channels.remove(&channel) else {
            self.fail(
                condition::ILLEGAL_STATE,
                format!("end on unbegun channel {channel}"),
                events,
            );
            return;
        };
        let Some(mut s) = self.sessions.remove(&local) else {
            return;
        };
        if !s.ended {
            self.output.frame(local, &Performative::End(End::default()));
            s.report_lost(local, &end.error, events);
        }
        self.recount_incomplete();
    }

    pub(super) fn on_session_frame(
        &mut self,
        channel: u16,
        p: Performative,
        payload: Bytes,
        events: &mut Vec<Event>,
    ) {
        let Some(&local) = self.remote_channels.get(&channel) else {
            self.fail(
                condition::ILLEGAL_STATE,
                format!("{} on unbegun channel {channel}", p.name()),
                events,
            );
            return;
        };
        let Some(session) = self.sessions.get(&local).filter(|s| !s.ended) else {
            return; // ended by us: ignore until the peer's end
        };
        let handle = match &p {
            Performative::Attach(a) => Some(a.handle),
            Performative::Flow(f) => f.handle,
            Performative::Transfer(t) => Some(t.handle),
            Performative::Detach(d) => Some(d.handle),
            _ => None,
        };
        if let Some(h) = handle.filter(|h| *h > session.handle_max) {
            // Section 2.7.3: a handle beyond handle-max is a framing error.
            let max = session.handle_max;
            self.fail(
                condition::FRAMING_ERROR,
                format!("{} on handle {h} above handle-max {max}", p.name()),
                events,
            );
            return;
        }
        let result = match p {
            Performative::Attach(a) => self.on_attach(local, *a, events),
            Performative::Flow(f) => self.on_flow(local, f, events),
            Performative::Transfer(t) => self.on_transfer(local, t, payload, events),
            Performative::Disposition(d) => {
                self.on_disposition(local, d, events);
                Ok(())
            }
            Performative::Detach(d) => self.on_detach(local, d, events),
            _ => Ok(()),
        };
        if let Err(error) = result {
            self.session_error(local, error, events);
        }
    }

    fn on_disposition(&mut self, channel: u16, d: Disposition, events: &mut Vec<Event>) {
        let last = d.last.unwrap_or(d.first);
        if let Some(s) = self.sessions.get_mut(&channel) {
            if d.role == Role::Receiver && d.settled {
                s.settle_out(d.first, last);
            }
        }
        events.push(Event::Disposition {
            session: SessionId(channel),
            role: d.role,
            first: d.first,
            last,
            settled: d.settled,
            state: d.state,
        });
    }

    /// Sends a disposition for deliveries `first..=last` of a session. `role` is ours
    /// for those deliveries: `Receiver` to accept/settle messages we received, `Sender`
    /// to settle ones we sent.
    pub fn disposition(
        &mut self,
        session: SessionId,
        role: Role,
        first: u32,
        last: u32,
        settled: bool,
        state: Option<DeliveryState>,
    ) -> Result<(), ConnectionError> {
        let s = self.live_session(session)?;
        if role == Role::Sender && settled {
            s.settle_out(first, last);
        }
        let d = Disposition {
            role,
            first,
            last: (last != first).then_some(last),
            settled,
            state,
            batchable: false,
        };
        self.output.frame(session.0, &Performative::Disposition(d));
        Ok(())
    }

    /// Accepts and settles delivery `delivery_id` the peer sent on `session`, as
    /// [`Connection::disposition`] would, but with the next frame the connection sends
    /// rather than at once: a peer that is about to be sent something gets both in one
    /// write. The caller bounds the wait ([`Connection::send_deferred_accepts`]).
    /// Consecutive ids become one disposition.
    pub fn accept_with_next_frame(
        &mut self,
        session: SessionId,
        delivery_id: u32,
    ) -> Result<(), ConnectionError> {
        self.live_session(session)?;
        self.output.defer_accept(session.0, delivery_id);
        Ok(())
    }

    /// True while acceptances wait for the next frame.
    pub fn has_deferred_accepts(&self) -> bool {
        self.output.has_deferred()
    }

    /// Sends the acceptances waiting for the next frame now.
    pub fn send_deferred_accepts(&mut self) {
        self.output.release_deferred();
    }

    /// Sends transfers that waited for the peer's window.
    pub(super) fn flush_session(&mut self, channel: u16) {
        let max_frame = self.max_frame_size();
        if let Some(s) = self.sessions.get_mut(&channel) {
            s.flush(channel, &mut self.output, max_frame);
        }
    }

    /// Deliveries (whole or the rest of one) waiting for the peer's session window.
    pub fn queued_deliveries(&self, session: SessionId) -> usize {
        self.sessions.get(&session.0).map_or(0, |s| s.queued())
    }
}
