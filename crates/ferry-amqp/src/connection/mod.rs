//! A sans-I/O AMQP 1.0 connection: the protocol state machine both a broker (server
//! role) and a client drive, with no sockets, clocks, threads or async.
//!
//! The caller owns the I/O. It appends bytes it read to a buffer and passes them to
//! [`Connection::receive`], which consumes whole frames and pushes [`Event`]s; it writes
//! out [`Connection::output`] whenever [`Connection::wants_write`]; it calls
//! [`Connection::tick`] by the deadline `tick` returns (heartbeats, idle timeout), always
//! passing the time in ms. Everything semantic is the caller's decision (SASL outcome,
//! the answer to an open or attach, credit, dispositions); the connection does the
//! protocol bookkeeping: headers, channel and handle maps, session windows and transfer
//! ids, delivery ids and counts, link credit, multi-frame transfers, unsettled
//! deliveries, and the error condition for each fault of the peer.
//!
//! Faults of the peer never panic and never come back as `Err`: a malformed frame closes
//! the connection (`amqp:decode-error`, `amqp:connection:framing-error`), a session
//! fault ends the session (`amqp:session:window-violation`, `unattached-handle`,
//! `handle-in-use`), a link fault detaches the link (`amqp:link:transfer-limit-exceeded`,
//! `message-size-exceeded`), and an [`Event`] reports it. `Err(ConnectionError)` is
//! only for requests of the caller that do not fit the state.
//!
//! What a peer can make a connection hold is bounded by its [`Config`], whatever it
//! sends: frames of 512 bytes until the open is exchanged (AMQP 1.0 section 2.7.1), then
//! of max-frame-size; channel-max sessions and handle-max handles (a frame above either
//! closes the connection with framing-error, sections 2.7.2 and 2.7.3); `max_links` links
//! across the sessions (more attaches are refused with `amqp:resource-limit-exceeded`);
//! `max_incomplete_bytes` of multi-frame messages being reassembled. Work per frame is
//! bounded by what the connection holds, never by a range or count the peer writes.
//! [`Connection::footprint`] reports what is held.
//!
//! ```
//! use bytes::BytesMut;
//! use ferry_amqp::connection::{ClientSasl, Config, Connection, Event, SaslServer};
//! use ferry_amqp::Open;
//!
//! let mut client = Connection::client(Config::default(), ClientSasl::None);
//! let mut server = Connection::server(Config::default(), SaslServer::none());
//! client.open(Open::new("client")).unwrap();
//! let mut events = Vec::new();
//! let mut wire = client.take_output();
//! server.receive(&mut wire, 0, &mut events);
//! assert!(matches!(&events[0], Event::Open(open) if open.container_id == "client"));
//! server.open(Open::new("broker")).unwrap();
//! let mut wire = server.take_output();
//! client.receive(&mut wire, 0, &mut events);
//! assert!(client.is_open() && server.is_open());
//! ```

mod config;
mod delivery;
mod error;
mod event;
mod footprint;
mod link;
mod output;
mod sasl;
mod session;
#[cfg(test)]
mod tests;
mod transfer;

pub use config::{ClientSasl, Config, SaslServer};
pub use error::ConnectionError;
pub use event::{Event, LinkId, SessionId};
pub use footprint::Footprint;
pub use sasl::parse_plain;

use foldhash::{HashMap, HashMapExt};
use std::collections::BTreeMap;

use bytes::BytesMut;

use crate::condition;
use crate::frame::{Frame, FrameDecoder, FrameType, ProtocolHeader, MIN_MAX_FRAME_SIZE};
use crate::performative::{Close, ErrorCondition, Open, Performative};

use output::Output;
use session::Session;

/// Which end of the connection we are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Client,
    Server,
}

/// What the next input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// A protocol header.
    Header,
    /// SASL frames.
    Sasl,
    /// AMQP frames.
    Amqp,
    /// Nothing: the connection is finished.
    Done,
}

/// One AMQP connection's protocol state, either role. See the module docs.
#[derive(Debug)]
pub struct Connection {
    side: Side,
    config: Config,
    sasl_server: SaslServer,
    client_sasl: ClientSasl,
    phase: Phase,
    /// The SASL layer completed successfully.
    sasl_done: bool,
    /// Server role: a `sasl-init` waits for `sasl_outcome`; input is not read meanwhile.
    awaiting_sasl: bool,
    output: Output,
    decoder: FrameDecoder,
    open_received: bool,
    remote_max_frame: u32,
    remote_channel_max: u16,
    remote_idle: Option<u32>,
    close_sent: bool,
    local_error: Option<ErrorCondition>,
    finished: bool,
    /// Sessions by our channel (ended ones linger until the peer's end).
    sessions: BTreeMap<u16, Session>,
    /// The peer's channel to ours.
    remote_channels: HashMap<u16, u16>,
    /// A session's incoming window is half used: replenish after this input.
    replenish_pending: bool,
    last_received: u64,
    last_sent: u64,
    frames_at_tick: u64,
    /// Bytes of multi-frame deliveries being reassembled, on every link.
    incomplete_bytes: usize,
}

impl Connection {
    /// A server-role connection: waits for the client's protocol header.
    pub fn server(config: Config, sasl: SaslServer) -> Self {
        Self::new(Side::Server, config, sasl, ClientSasl::None)
    }

    /// A client-role connection: its protocol header (SASL, or AMQP with
    /// [`ClientSasl::None`]) is already in the output. Call [`open`](Self::open) (and
    /// begin, attach...) right away: frames wait until SASL is done.
    pub fn client(config: Config, sasl: ClientSasl) -> Self {
        let mut c = Self::new(Side::Client, config, SaslServer::none(), sasl);
        if c.client_sasl == ClientSasl::None {
            c.output.header(ProtocolHeader::Amqp);
        } else {
            c.output.header(ProtocolHeader::Sasl);
        }
        c
    }

    fn new(
        side: Side,
        mut config: Config,
        sasl_server: SaslServer,
        client_sasl: ClientSasl,
    ) -> Self {
        config.max_frame_size = config.max_frame_size.max(MIN_MAX_FRAME_SIZE);
        config.max_links = config.max_links.max(1);
        Connection {
            side,
            // Until the peer's open (which says what it accepts and is itself bound by it),
            // frames are at most 512 bytes (AMQP 1.0 section 2.7.1).
            decoder: FrameDecoder::new(MIN_MAX_FRAME_SIZE),
            config,
            sasl_server,
            client_sasl,
            phase: Phase::Header,
            sasl_done: false,
            awaiting_sasl: false,
            output: Output::default(),
            open_received: false,
            remote_max_frame: MIN_MAX_FRAME_SIZE,
            remote_channel_max: u16::MAX,
            remote_idle: None,
            close_sent: false,
            local_error: None,
            finished: false,
            sessions: BTreeMap::new(),
            remote_channels: HashMap::new(),
            replenish_pending: false,
            last_received: 0,
            last_sent: 0,
            frames_at_tick: 0,
            incomplete_bytes: 0,
        }
    }

    /// The limits in force.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Consumes whole headers and frames from the front of `input` (bytes read so far;
    /// a partial frame stays for next time) and pushes what happened into `events`.
    /// Server role: stops after an [`Event::SaslInit`] until
    /// [`sasl_outcome`](Self::sasl_outcome); call `receive` again then.
    pub fn receive(&mut self, input: &mut BytesMut, now_ms: u64, events: &mut Vec<Event>) {
        let before = input.len();
        while !self.finished && !self.awaiting_sasl {
            match self.phase {
                Phase::Header => match ProtocolHeader::decode(input) {
                    Ok(None) => break,
                    Ok(Some(h)) => self.on_header(Some(h), events),
                    Err(_) => self.on_header(None, events),
                },
                Phase::Sasl | Phase::Amqp => match self.decoder.decode(input) {
                    Ok(None) => break,
                    Ok(Some(frame)) => self.on_frame(frame, events),
                    Err(crate::FrameError::TooLarge { size, max }) if !self.open_received => self
                        .fail(
                            condition::FRAMING_ERROR,
                            format!(
                                "frame of {size} bytes before the open is exchanged (at most {max})"
                            ),
                            events,
                        ),
                    Err(e) => self.fail(e.condition(), e.to_string(), events),
                },
                Phase::Done => break,
            }
        }
        if input.len() != before {
            self.last_received = now_ms;
        }
        if self.replenish_pending {
            self.replenish_pending = false;
            if !self.close_sent && !self.finished {
                for (channel, s) in self.sessions.iter_mut() {
                    s.replenish(*channel, &mut self.output);
                }
            }
        }
    }

    /// Heartbeats and idle timeout. Sends an empty frame when nothing went out for half
    /// the peer's idle-time-out; closes with `amqp:resource-limit-exceeded` ("idle
    /// timeout", reported as [`Event::Closed`]) when nothing came in for twice ours.
    /// Returns when to call again (ms), if ever.
    pub fn tick(&mut self, now_ms: u64, events: &mut Vec<Event>) -> Option<u64> {
        if self.finished
            || self.phase != Phase::Amqp
            || !self.open_received
            || !self.output.open_sent
        {
            return None;
        }
        if self.output.frames != self.frames_at_tick {
            self.frames_at_tick = self.output.frames;
            self.last_sent = now_ms;
        }
        let mut deadline: Option<u64> = None;
        if let Some(ours) = self.config.idle_time_out.filter(|t| *t > 0) {
            let limit = self.last_received.saturating_add(2 * u64::from(ours));
            if now_ms >= limit {
                self.fail(condition::RESOURCE_LIMIT_EXCEEDED, "idle timeout", events);
                return None;
            }
            deadline = Some(limit);
        }
        if let Some(peer) = self.remote_idle.filter(|t| *t > 0) {
            let interval = u64::from(peer / 2).max(1);
            if now_ms >= self.last_sent.saturating_add(interval) {
                self.output.heartbeat();
                self.frames_at_tick = self.output.frames;
                self.last_sent = now_ms;
            }
            let next = self.last_sent + interval;
            deadline = Some(deadline.map_or(next, |d| d.min(next)));
        }
        deadline
    }

    /// The bytes to write; drain as much as the socket takes.
    pub fn output(&mut self) -> &mut BytesMut {
        &mut self.output.out
    }

    /// Takes all bytes to write.
    pub fn take_output(&mut self) -> BytesMut {
        self.output.out.split()
    }

    /// True when there are bytes to write.
    pub fn wants_write(&self) -> bool {
        !self.output.out.is_empty()
    }

    /// True once the connection is over: write out the output, then close the socket.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// True once both opens are exchanged and no close was sent or received.
    pub fn is_open(&self) -> bool {
        self.open_received && self.output.open_sent && !self.close_sent && !self.finished
    }

    /// The largest frame we send: the smaller of both max-frame-sizes (512 before the
    /// peer's open).
    pub fn max_frame_size(&self) -> u32 {
        self.config.max_frame_size.min(self.remote_max_frame)
    }

    /// Sends our open. `open` supplies container-id, hostname, capabilities and
    /// properties; max-frame-size, channel-max and idle-time-out come from the
    /// [`Config`]. Server role: answer [`Event::Open`] with it.
    pub fn open(&mut self, open: Open) -> Result<(), ConnectionError> {
        if self.output.open_sent {
            return Err(ConnectionError::IllegalState("open already sent"));
        }
        if self.close_sent || self.finished {
            return Err(ConnectionError::Closed);
        }
        let open = self.with_limits(open);
        self.output.open(&Performative::Open(open));
        Ok(())
    }

    fn with_limits(&self, mut open: Open) -> Open {
        open.max_frame_size = self.config.max_frame_size;
        open.channel_max = self.config.channel_max;
        open.idle_time_out = self.config.idle_time_out;
        open
    }

    /// Closes the connection, with an error or not; finished once the peer's close
    /// arrives. Returns the deliveries we sent that were never settled, by link.
    pub fn close(
        &mut self,
        error: Option<ErrorCondition>,
    ) -> Result<Vec<(LinkId, u32)>, ConnectionError> {
        if self.close_sent || self.finished {
            return Err(ConnectionError::Closed);
        }
        let unsettled = self.unsettled_deliveries();
        if self.phase == Phase::Amqp {
            if !self.output.open_sent {
                let open = self.with_limits(Open::new(""));
                self.output.open(&Performative::Open(open));
            }
            self.output.frame(
                0,
                &Performative::Close(Close {
                    error: error.clone(),
                }),
            );
            self.close_sent = true;
            self.local_error = error;
        } else {
            self.finished = true;
            self.phase = Phase::Done;
        }
        self.sessions.clear();
        self.remote_channels.clear();
        self.incomplete_bytes = 0;
        Ok(unsettled)
    }

    /// Every delivery we sent that the peer has not settled, by link (for default
    /// outcomes when the connection is lost).
    pub fn unsettled_deliveries(&self) -> Vec<(LinkId, u32)> {
        let mut all = Vec::new();
        for (channel, s) in &self.sessions {
            for (id, handle) in &s.unsettled_out {
                all.push((
                    LinkId {
                        channel: *channel,
                        handle: *handle,
                    },
                    *id,
                ));
            }
        }
        all
    }

    fn on_header(&mut self, header: Option<ProtocolHeader>, events: &mut Vec<Event>) {
        match self.side {
            Side::Server => self.server_header(header, events),
            Side::Client => {
                let expected = if self.sasl_done || self.client_sasl == ClientSasl::None {
                    ProtocolHeader::Amqp
                } else {
                    ProtocolHeader::Sasl
                };
                if header == Some(expected) {
                    self.phase = if expected == ProtocolHeader::Sasl {
                        Phase::Sasl
                    } else {
                        Phase::Amqp
                    };
                } else {
                    self.fail(
                        condition::FRAMING_ERROR,
                        format!("unexpected protocol header {header:?}"),
                        events,
                    );
                }
            }
        }
    }

    fn server_header(&mut self, header: Option<ProtocolHeader>, events: &mut Vec<Event>) {
        let sasl_wanted = !self.sasl_done && !self.sasl_server.mechanisms.is_empty();
        match header {
            Some(ProtocolHeader::Sasl) if sasl_wanted => self.start_sasl(),
            Some(ProtocolHeader::Amqp) if self.sasl_done || self.sasl_server.allow_no_sasl => {
                self.output.header(ProtocolHeader::Amqp);
                self.phase = Phase::Amqp;
            }
            _ => {
                // The spec: answer with the header we do speak, then close.
                let ours = if sasl_wanted {
                    ProtocolHeader::Sasl
                } else {
                    ProtocolHeader::Amqp
                };
                ours.encode(&mut self.output.out);
                self.fail(
                    condition::FRAMING_ERROR,
                    format!("unsupported protocol header {header:?}, expected {ours:?}"),
                    events,
                );
            }
        }
    }

    fn on_frame(&mut self, frame: Frame, events: &mut Vec<Event>) {
        if self.phase == Phase::Sasl {
            if frame.frame_type != FrameType::Sasl {
                self.fail(condition::FRAMING_ERROR, "AMQP frame during SASL", events);
                return;
            }
            match frame.performative {
                Some(p) => self.on_sasl_frame(p, events),
                None => self.fail(condition::FRAMING_ERROR, "empty SASL frame", events),
            }
            return;
        }
        let Some(performative) = frame.performative else {
            return; // heartbeat
        };
        if frame.channel > self.config.channel_max {
            // Section 2.7.2: a channel beyond channel-max is a framing error.
            self.fail(
                condition::FRAMING_ERROR,
                format!(
                    "{} on channel {} above channel-max {}",
                    performative.name(),
                    frame.channel,
                    self.config.channel_max
                ),
                events,
            );
            return;
        }
        if self.close_sent && !matches!(performative, Performative::Close(_)) {
            return; // we are closing: only the peer's close matters
        }
        if !self.open_received && !matches!(performative, Performative::Open(_)) {
            self.fail(
                condition::ILLEGAL_STATE,
                format!("{} before open", performative.name()),
                events,
            );
            return;
        }
        match performative {
            Performative::Open(open) => self.on_open(open, events),
            Performative::Close(close) => self.on_close(close, events),
            Performative::Begin(begin) => self.on_begin(frame.channel, begin, events),
            Performative::End(end) => self.on_end(frame.channel, end, events),
            p if p.is_sasl() => {
                self.fail(condition::FRAMING_ERROR, "SASL frame after SASL", events)
            }
            p => self.on_session_frame(frame.channel, p, frame.payload, events),
        }
    }

    fn on_open(&mut self, open: Open, events: &mut Vec<Event>) {
        if self.open_received {
            self.fail(condition::ILLEGAL_STATE, "second open", events);
            return;
        }
        self.open_received = true;
        self.decoder.set_max_frame_size(self.config.max_frame_size);
        self.remote_max_frame = open.max_frame_size.max(MIN_MAX_FRAME_SIZE);
        self.remote_channel_max = open.channel_max;
        self.remote_idle = open.idle_time_out;
        events.push(Event::Open(Box::new(open)));
    }

    fn on_close(&mut self, close: Close, events: &mut Vec<Event>) {
        if self.close_sent {
            self.finished = true;
            self.phase = Phase::Done;
            events.push(Event::Closed {
                remote: false,
                error: self.local_error.clone(),
            });
            return;
        }
        if !self.output.open_sent {
            let open = self.with_limits(Open::new(""));
            self.output.open(&Performative::Open(open));
        }
        self.output.frame(0, &Performative::Close(Close::default()));
        self.close_sent = true;
        self.terminate(close.error, true, events);
    }

    /// Closes the connection at once for a fault (ours to report, the peer's to blame):
    /// close frame with the condition if AMQP frames flow, then finished.
    fn fail(
        &mut self,
        condition: &'static str,
        description: impl Into<String>,
        events: &mut Vec<Event>,
    ) {
        if self.finished {
            return;
        }
        let error = ErrorCondition::new(condition, description.into());
        if self.phase == Phase::Amqp && !self.close_sent {
            if !self.output.open_sent {
                let open = self.with_limits(Open::new(""));
                self.output.open(&Performative::Open(open));
            }
            let close = Close {
                error: Some(error.clone()),
            };
            self.output.frame(0, &Performative::Close(close));
            self.close_sent = true;
        }
        self.terminate(Some(error), false, events);
    }

    /// Reports every live link and session as gone, then the connection as closed.
    fn terminate(&mut self, error: Option<ErrorCondition>, remote: bool, events: &mut Vec<Event>) {
        let sessions = std::mem::take(&mut self.sessions);
        for (channel, mut session) in sessions {
            if !session.ended {
                session.report_lost(channel, &error, events);
            }
        }
        self.remote_channels.clear();
        self.incomplete_bytes = 0;
        self.finished = true;
        self.phase = Phase::Done;
        events.push(Event::Closed { remote, error });
    }

    /// Counts again the bytes of incomplete deliveries, after links or sessions went.
    fn recount_incomplete(&mut self) {
        self.incomplete_bytes = self
            .sessions
            .values()
            .flat_map(|s| s.links.values())
            .filter_map(|l| l.partial.as_ref())
            .map(|p| p.bytes.len())
            .sum();
    }
}
