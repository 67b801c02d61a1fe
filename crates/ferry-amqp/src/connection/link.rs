//! Links: attach and detach in both directions, and link credit.
//!
//! A link is named by a [`LinkId`] (our channel and our handle); the peer's handle is
//! mapped to it. Credit follows the spec's flow-control arithmetic: where we send, the
//! peer's flow gives `credit = delivery-count(peer) + link-credit(peer) - our
//! delivery-count`, and each delivery uses one; where we receive, the caller grants
//! credit and each incoming delivery uses one. Credit is a uint, not a serial number:
//! only the difference of the two delivery-counts (the deliveries in flight) is serial
//! arithmetic, so any credit up to 2^32-1 works. A link the caller (or a fault) detached
//! lingers, ignoring frames, until the peer's detach frees its handle; the links the peer
//! may hold are bounded by [`Config::max_links`](super::Config::max_links).

use super::delivery::Partial;
use super::{Connection, ConnectionError, Event, LinkId, SessionId};
use crate::condition;
use crate::performative::{
    Attach, Detach, ErrorCondition, Flow, LinkTarget, Performative, ReceiverSettleMode, Role,
    SenderSettleMode, Source, Target,
};
use crate::value::Str;

/// One link's state.
#[derive(Debug)]
pub(crate) struct Link {
    /// The link's name.
    pub name: Str,
    /// Our role.
    pub role: Role,
    /// The peer's handle, once its attach arrived.
    pub remote_handle: Option<u32>,
    /// We sent our attach.
    pub attach_sent: bool,
    /// The peer's attach arrived.
    pub attach_received: bool,
    /// We detached it; it lingers until the peer's detach.
    pub detach_sent: bool,
    /// Settle modes the peer asked for (echoed in our reply).
    pub snd_settle_mode: SenderSettleMode,
    pub rcv_settle_mode: ReceiverSettleMode,
    /// The link's delivery-count (the sender's count, mirrored by the receiver).
    pub delivery_count: u32,
    /// Link credit: the peer's grant where we send, ours where we receive.
    pub credit: u32,
    /// Drain requested (by the peer where we send, by us where we receive).
    pub drain: bool,
    /// Largest message accepted where we receive.
    pub max_message_size: Option<u64>,
    /// A multi-frame delivery being received.
    pub partial: Option<Partial>,
}

impl Link {
    fn new(name: Str, role: Role) -> Self {
        Link {
            name,
            role,
            remote_handle: None,
            attach_sent: false,
            attach_received: false,
            detach_sent: false,
            snd_settle_mode: SenderSettleMode::Mixed,
            rcv_settle_mode: ReceiverSettleMode::First,
            delivery_count: 0,
            credit: 0,
            drain: false,
            max_message_size: None,
            partial: None,
        }
    }

    /// Applies the peer's flow for this link.
    fn on_flow(&mut self, flow: &Flow) {
        match self.role {
            Role::Sender => {
                if let Some(credit) = flow.link_credit {
                    // delivery-count absent: the peer has not seen our attach's initial
                    // count yet, which is where ours started.
                    let theirs = flow.delivery_count.unwrap_or(self.delivery_count);
                    // Our deliveries the peer had not seen when it wrote the flow use
                    // part of its grant.
                    let in_flight = serial_ahead(self.delivery_count, theirs);
                    self.credit = credit.saturating_sub(in_flight);
                }
                self.drain = flow.drain;
            }
            Role::Receiver => {
                if let Some(count) = flow.delivery_count {
                    // The sender's count moved on by what it sent or gave back (drain).
                    let used = serial_ahead(count, self.delivery_count);
                    self.delivery_count = count;
                    self.credit = self.credit.saturating_sub(used);
                }
                if !flow.drain {
                    self.drain = false;
                }
                if flow.link_credit == Some(0) {
                    self.credit = 0;
                    self.drain = false;
                }
            }
        }
    }
}

/// How far delivery-count `a` is ahead of `b` in serial-number arithmetic (RFC 1982), 0
/// if it is behind. Only counts are serial numbers; credit is not.
fn serial_ahead(a: u32, b: u32) -> u32 {
    let d = a.wrapping_sub(b);
    if d > i32::MAX as u32 {
        0
    } else {
        d
    }
}

impl Connection {
    /// Attaches a link we start (client role). `attach.handle` is chosen here; `role`
    /// is ours. The peer's answer is reported as [`Event::Attached`].
    pub fn attach(
        &mut self,
        session: SessionId,
        mut attach: Attach,
    ) -> Result<LinkId, ConnectionError> {
        let max_message_size = self.config.max_message_size;
        let s = self.live_session(session)?;
        let limit = s.handle_max.min(s.remote_handle_max);
        let handle = (0..=limit)
            .find(|h| !s.links.contains_key(h))
            .ok_or(ConnectionError::NoHandle(limit))?;
        attach.handle = handle;
        let mut link = Link::new(attach.name.clone(), attach.role);
        match attach.role {
            Role::Sender => {
                link.delivery_count = *attach.initial_delivery_count.get_or_insert(0);
            }
            Role::Receiver => {
                attach.initial_delivery_count = None;
                if attach.max_message_size.is_none() {
                    attach.max_message_size = max_message_size;
                }
                link.max_message_size = attach.max_message_size;
            }
        }
        link.snd_settle_mode = attach.snd_settle_mode;
        link.rcv_settle_mode = attach.rcv_settle_mode;
        link.attach_sent = true;
        s.links.insert(handle, link);
        self.output
            .frame(session.0, &Performative::Attach(Box::new(attach)));
        Ok(LinkId {
            channel: session.0,
            handle,
        })
    }

    /// Attaches a link on which we send to `target`.
    pub fn attach_sender(
        &mut self,
        session: SessionId,
        name: impl Into<Str>,
        target: Target,
    ) -> Result<LinkId, ConnectionError> {
        let attach = Attach {
            name: name.into(),
            role: Role::Sender,
            source: Some(Source::default()),
            target: Some(LinkTarget::Node(target)),
            ..Attach::default()
        };
        self.attach(session, attach)
    }

    /// Attaches a link on which we receive from `source`.
    pub fn attach_receiver(
        &mut self,
        session: SessionId,
        name: impl Into<Str>,
        source: Source,
    ) -> Result<LinkId, ConnectionError> {
        let attach = Attach {
            name: name.into(),
            role: Role::Receiver,
            source: Some(source),
            target: Some(LinkTarget::Node(Target::default())),
            ..Attach::default()
        };
        self.attach(session, attach)
    }

    /// Answers the peer's [`Event::Attach`] with our termini (echoed or adjusted).
    pub fn attach_reply(
        &mut self,
        link: LinkId,
        source: Option<Source>,
        target: Option<LinkTarget>,
    ) -> Result<(), ConnectionError> {
        self.attach_reply_with(link, |a| {
            a.source = source;
            a.target = target;
        })
    }

    /// Answers the peer's [`Event::Attach`]; `fill` sets termini, capabilities,
    /// properties... on the prepared attach (name, handle, role, settle modes, initial
    /// delivery-count and max-message-size are filled in already).
    pub fn attach_reply_with(
        &mut self,
        link: LinkId,
        fill: impl FnOnce(&mut Attach),
    ) -> Result<(), ConnectionError> {
        let l = self.live_link(link)?;
        if l.attach_sent {
            return Err(ConnectionError::AlreadyAttached);
        }
        let mut attach = reply_for(link.handle, l);
        fill(&mut attach);
        if l.role == Role::Receiver {
            l.max_message_size = attach.max_message_size;
        }
        l.attach_sent = true;
        self.output
            .frame(link.channel, &Performative::Attach(Box::new(attach)));
        Ok(())
    }

    /// Refuses the peer's [`Event::Attach`]: an attach with null termini, then a
    /// detach (closed) with `error`.
    pub fn refuse_attach(
        &mut self,
        link: LinkId,
        error: ErrorCondition,
    ) -> Result<(), ConnectionError> {
        self.attach_reply(link, None, None)?;
        self.detach(link, true, Some(error)).map(|_| ())
    }

    /// Detaches a link (closes it if `closed`), with an error or not. Returns the
    /// deliveries we sent on it that were never settled.
    pub fn detach(
        &mut self,
        link: LinkId,
        closed: bool,
        error: Option<ErrorCondition>,
    ) -> Result<Vec<u32>, ConnectionError> {
        let l = self.live_link(link)?;
        if !l.attach_sent {
            let attach = reply_for(link.handle, l);
            l.attach_sent = true;
            self.output
                .frame(link.channel, &Performative::Attach(Box::new(attach)));
        }
        Ok(self.send_detach(link, closed, error))
    }

    /// Marks the link detached, writes the detach, forgets its deliveries.
    fn send_detach(
        &mut self,
        link: LinkId,
        closed: bool,
        error: Option<ErrorCondition>,
    ) -> Vec<u32> {
        let Some(s) = self.sessions.get_mut(&link.channel) else {
            return Vec::new();
        };
        let Some(l) = s.links.get_mut(&link.handle) else {
            return Vec::new();
        };
        l.detach_sent = true;
        if let Some(p) = l.partial.take() {
            self.incomplete_bytes -= p.bytes.len();
        }
        let unsettled = s.forget_link(link.handle);
        let detach = Detach {
            handle: link.handle,
            closed,
            error,
        };
        self.output
            .frame(link.channel, &Performative::Detach(detach));
        unsettled
    }

    /// Detaches a link for the peer's fault (closed, with `error`) and reports it.
    pub(super) fn link_error(
        &mut self,
        link: LinkId,
        error: ErrorCondition,
        events: &mut Vec<Event>,
    ) {
        let unsettled = self.send_detach(link, true, Some(error.clone()));
        events.push(Event::Detach {
            link,
            closed: true,
            error: Some(error),
            unsettled,
        });
    }

    pub(super) fn live_link(
        &mut self,
        link: LinkId,
    ) -> Result<&mut super::link::Link, ConnectionError> {
        let unknown = ConnectionError::UnknownLink {
            channel: link.channel,
            handle: link.handle,
        };
        let s = self
            .live_session(SessionId(link.channel))
            .map_err(|_| unknown.clone())?;
        match s.links.get_mut(&link.handle) {
            Some(l) if !l.detach_sent => Ok(l),
            _ => Err(unknown),
        }
    }

    /// Link credit: where we send, what the peer granted and we have not used; where we
    /// receive, what we granted and the peer has not used. 0 for an unknown link.
    pub fn credit(&self, link: LinkId) -> u32 {
        self.sessions
            .get(&link.channel)
            .and_then(|s| s.links.get(&link.handle))
            .map_or(0, |l| l.credit)
    }

    /// Where we receive: credit granted and not yet used by the peer.
    pub fn credit_outstanding(&self, link: LinkId) -> u32 {
        self.credit(link)
    }

    /// Where we send: the peer asked to drain (use up the credit, then `drained`).
    pub fn draining(&self, link: LinkId) -> bool {
        self.sessions
            .get(&link.channel)
            .and_then(|s| s.links.get(&link.handle))
            .is_some_and(|l| l.role == Role::Sender && l.drain)
    }

    /// Where we receive: grants `n` more deliveries (a flow with the new link-credit).
    pub fn grant_credit(&mut self, link: LinkId, n: u32) -> Result<(), ConnectionError> {
        let l = self.receiving_link(link)?;
        l.credit = l.credit.saturating_add(n);
        self.send_link_flow(link);
        Ok(())
    }

    /// Where we receive: asks the sender to use up our credit or give it back (drain);
    /// its answering flow is reported as [`Event::Flow`] with credit 0.
    pub fn drain(&mut self, link: LinkId) -> Result<(), ConnectionError> {
        let l = self.receiving_link(link)?;
        l.drain = true;
        self.send_link_flow(link);
        Ok(())
    }

    fn receiving_link(&mut self, link: LinkId) -> Result<&mut Link, ConnectionError> {
        let l = self.live_link(link)?;
        if l.role != Role::Receiver {
            return Err(ConnectionError::WrongRole("receiving"));
        }
        Ok(l)
    }

    /// Where we send, after the peer asked to drain and nothing is left to send: gives
    /// the rest of the credit back (delivery-count += credit, credit = 0) in a flow
    /// with drain set.
    pub fn drained(&mut self, link: LinkId) -> Result<(), ConnectionError> {
        let l = self.live_link(link)?;
        if l.role != Role::Sender {
            return Err(ConnectionError::WrongRole("sending"));
        }
        l.delivery_count = l.delivery_count.wrapping_add(l.credit);
        l.credit = 0;
        l.drain = true;
        self.send_link_flow(link);
        if let Ok(l) = self.live_link(link) {
            l.drain = false;
        }
        Ok(())
    }

    fn send_link_flow(&mut self, link: LinkId) {
        let Some(s) = self.sessions.get(&link.channel) else {
            return;
        };
        let Some(l) = s.links.get(&link.handle) else {
            return;
        };
        let flow = s.flow(Some((link.handle, l)));
        self.output.frame(link.channel, &Performative::Flow(flow));
    }

    pub(super) fn on_attach(
        &mut self,
        channel: u16,
        attach: Attach,
        events: &mut Vec<Event>,
    ) -> Result<(), ErrorCondition> {
        let max_message_size = self.config.max_message_size;
        let max_links = self.config.max_links;
        // Links held now: live ones, and those detached that the peer has not answered.
        let (held, live) = self.sessions.values().fold((0, 0), |(h, l), s| {
            let live = s.links.values().filter(|l| !l.detach_sent).count();
            (h + s.links.len(), l + live)
        });
        let Some(s) = self.sessions.get_mut(&channel) else {
            return Ok(());
        };
        // (A handle above handle-max never gets here: see `on_session_frame`.)
        if s.remote_handles.contains_key(&attach.handle) {
            return Err(ErrorCondition::new(
                condition::HANDLE_IN_USE,
                format!("handle {} is in use", attach.handle),
            ));
        }
        let answered = s.links.iter_mut().find(|(_, l)| {
            l.attach_sent && !l.attach_received && l.name == attach.name && l.role != attach.role
        });
        if let Some((&handle, l)) = answered {
            l.attach_received = true;
            l.remote_handle = Some(attach.handle);
            if l.role == Role::Receiver {
                l.delivery_count = attach.initial_delivery_count.unwrap_or(0);
            }
            let report = !l.detach_sent;
            s.remote_handles.insert(attach.handle, handle);
            if report {
                events.push(Event::Attached {
                    link: LinkId { channel, handle },
                    attach: Box::new(attach),
                });
            }
            return Ok(());
        }
        if held >= 2 * max_links {
            // The peer leaves our refusals unanswered: it cannot make us hold more.
            return Err(ErrorCondition::new(
                condition::RESOURCE_LIMIT_EXCEEDED,
                format!("the connection holds {held} links (at most {max_links} attached)"),
            ));
        }
        let limit = s.handle_max.min(s.remote_handle_max);
        let Some(handle) = (0..=limit).find(|h| !s.links.contains_key(h)) else {
            return Err(ErrorCondition::new(
                condition::RESOURCE_LIMIT_EXCEEDED,
                "no free handle",
            ));
        };
        let role = match attach.role {
            Role::Sender => Role::Receiver,
            Role::Receiver => Role::Sender,
        };
        // The name is copied: a slice would keep the whole read buffer it came in alive
        // for as long as the link lasts.
        let mut link = Link::new(Str::from(attach.name.as_str()), role);
        link.attach_received = true;
        link.remote_handle = Some(attach.handle);
        link.snd_settle_mode = attach.snd_settle_mode;
        link.rcv_settle_mode = attach.rcv_settle_mode;
        if role == Role::Receiver {
            link.delivery_count = attach.initial_delivery_count.unwrap_or(0);
            link.max_message_size = max_message_size;
        }
        s.links.insert(handle, link);
        s.remote_handles.insert(attach.handle, handle);
        let link = LinkId { channel, handle };
        if live >= max_links {
            // Refused here, as a broker refuses: null termini, then a closed detach.
            let error = ErrorCondition::new(
                condition::RESOURCE_LIMIT_EXCEEDED,
                format!("the connection has {live} links attached, the most it takes"),
            );
            let _ = self.refuse_attach(link, error);
            return Ok(());
        }
        events.push(Event::Attach {
            link,
            attach: Box::new(attach),
        });
        Ok(())
    }

    /// Maps the peer's handle to our link, or the session error for an unknown one.
    pub(super) fn local_handle(&self, channel: u16, remote: u32) -> Result<u32, ErrorCondition> {
        self.sessions
            .get(&channel)
            .and_then(|s| s.remote_handles.get(&remote))
            .copied()
            .ok_or_else(|| {
                ErrorCondition::new(
                    condition::UNATTACHED_HANDLE,
                    format!("no link attached on handle {remote}"),
                )
            })
    }

    pub(super) fn on_detach(
        &mut self,
        channel: u16,
        detach: Detach,
        events: &mut Vec<Event>,
    ) -> Result<(), ErrorCondition> {
        let handle = self.local_handle(channel, detach.handle)?;
        let link = LinkId { channel, handle };
        let Some(s) = self.sessions.get_mut(&channel) else {
            return Ok(());
        };
        s.remote_handles.remove(&detach.handle);
        let Some(l) = s.links.get_mut(&handle) else {
            return Ok(());
        };
        if l.detach_sent {
            s.links.remove(&handle);
            return Ok(());
        }
        if !l.attach_sent {
            let attach = reply_for(handle, l);
            self.output
                .frame(channel, &Performative::Attach(Box::new(attach)));
        }
        let unsettled = self.send_detach(link, detach.closed, None);
        if let Some(s) = self.sessions.get_mut(&channel) {
            s.links.remove(&handle);
        }
        events.push(Event::Detach {
            link,
            closed: detach.closed,
            error: detach.error,
            unsettled,
        });
        Ok(())
    }

    pub(super) fn on_flow(
        &mut self,
        channel: u16,
        flow: Flow,
        events: &mut Vec<Event>,
    ) -> Result<(), ErrorCondition> {
        let handle = match flow.handle {
            Some(remote) => Some(self.local_handle(channel, remote)?),
            None => None,
        };
        let Some(s) = self.sessions.get_mut(&channel) else {
            return Ok(());
        };
        // The peer's incoming window, per the spec: next-incoming-id (our first id, 0,
        // if absent) + incoming-window - our next-outgoing-id.
        s.remote_incoming_window = flow
            .next_incoming_id
            .unwrap_or(0)
            .wrapping_add(flow.incoming_window)
            .wrapping_sub(s.next_outgoing_id);
        let mut echo_link = None;
        match handle {
            Some(handle) => {
                if let Some(l) = s.links.get_mut(&handle).filter(|l| !l.detach_sent) {
                    l.on_flow(&flow);
                    events.push(Event::Flow {
                        link: LinkId { channel, handle },
                        credit: l.credit,
                        drain: l.drain,
                        available: flow.available,
                    });
                    echo_link = flow.echo.then_some(handle);
                }
            }
            None if flow.echo => {
                let f = s.flow(None);
                self.output.frame(channel, &Performative::Flow(f));
            }
            None => {}
        }
        if let Some(handle) = echo_link {
            self.send_link_flow(LinkId { channel, handle });
        }
        self.flush_session(channel);
        Ok(())
    }
}

/// Our attach answering the peer's, before termini are filled in.
fn reply_for(handle: u32, l: &Link) -> Attach {
    Attach {
        name: l.name.clone(),
        handle,
        role: l.role,
        snd_settle_mode: l.snd_settle_mode,
        rcv_settle_mode: l.rcv_settle_mode,
        initial_delivery_count: (l.role == Role::Sender).then_some(l.delivery_count),
        max_message_size: if l.role == Role::Receiver {
            l.max_message_size
        } else {
            None
        },
        ..Attach::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credit_arithmetic_follows_the_spec_across_wrap() {
        assert_eq!(serial_ahead(10, 4), 6);
        assert_eq!(serial_ahead(4, 10), 0);
        assert_eq!(serial_ahead(3, u32::MAX - 1), 5);
        let mut l = Link::new("l".into(), Role::Sender);
        l.delivery_count = 5;
        l.on_flow(&Flow {
            delivery_count: Some(3),
            link_credit: Some(10),
            ..Flow::default()
        });
        // The receiver had not seen 2 of our deliveries yet: 8 remain.
        assert_eq!(l.credit, 8);
    }

    /// Issue 18, point 6: credit is a uint, not a serial number: 2^31 and more is
    /// credit, on both ends of the link, whatever the delivery-counts (across wrap too).
    #[test]
    fn credit_of_2_to_the_31_and_more_is_credit() {
        for count in [0, 7, u32::MAX - 1] {
            for credit in [0x7fff_ffff, 0x8000_0000, u32::MAX] {
                let mut sender = Link::new("l".into(), Role::Sender);
                sender.delivery_count = count.wrapping_add(2);
                sender.on_flow(&Flow {
                    delivery_count: Some(count),
                    link_credit: Some(credit),
                    ..Flow::default()
                });
                assert_eq!(sender.credit, credit - 2, "sender, count {count}");
                let mut receiver = Link::new("l".into(), Role::Receiver);
                receiver.delivery_count = count;
                receiver.credit = credit;
                receiver.on_flow(&Flow {
                    delivery_count: Some(count.wrapping_add(3)),
                    link_credit: Some(credit),
                    ..Flow::default()
                });
                assert_eq!(receiver.credit, credit - 3, "receiver, count {count}");
            }
        }
    }
}
