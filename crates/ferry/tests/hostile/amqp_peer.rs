//! AMQP 1.0 peers for the probes, over blocking sockets.
//!
//! - [`AmqpPeer`]: a well-behaved client built on ferry-amqp's client-role state machine
//!   (SASL ANONYMOUS, open, begin, a sender and a receiver on one queue, accept what it
//!   receives). Every wait has a deadline and failures are returned, not panicked, so the
//!   harness can record them as the good client's failures.
//! - [`RawAmqp`]: a hostile one that writes hand-built frames (any channel, handle, range
//!   or credit, frames the state machine would never send) and reads the server's frames
//!   with the plain frame decoder.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use ferry_amqp::connection::{ClientSasl, Config, Connection, Event, LinkId, SessionId};
use ferry_amqp::{
    encode_frame, Attach, Begin, Body, DeliveryState, Disposition, ErrorCondition, Flow, Frame,
    FrameDecoder, LinkTarget, Message, Open, Performative, ProtocolHeader, ReceiverSettleMode,
    Role, SaslInit, SenderSettleMode, Source, Symbol, Target,
};

/// How long one socket read waits before a pump looks at its deadline again.
const POLL: Duration = Duration::from_millis(20);

/// The largest frame the probes' raw peers read from the server.
const READ_MAX_FRAME: u32 = 16 << 20;

fn since(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// A well-behaved AMQP client: one connection, one session, optionally a sender and a
/// receiver on one queue for round trips.
pub struct AmqpPeer {
    stream: TcpStream,
    conn: Connection,
    input: BytesMut,
    events: Vec<Event>,
    epoch: Instant,
    session: SessionId,
    eof: bool,
    sender: Option<LinkId>,
    receiver: Option<LinkId>,
}

impl AmqpPeer {
    /// Connects to the AMQP port, SASL ANONYMOUS, open and begin; returns once the server
    /// has answered the open and the begin, or `Err` after `within`.
    pub fn connect(port: u16, container: &str, within: Duration) -> Result<AmqpPeer, String> {
        let deadline = Instant::now() + within;
        let stream =
            TcpStream::connect(("127.0.0.1", port)).map_err(|e| format!("tcp connect: {e}"))?;
        stream
            .set_read_timeout(Some(POLL))
            .map_err(|e| e.to_string())?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        let config = Config {
            idle_time_out: None,
            ..Config::default()
        };
        let mut conn = Connection::client(config, ClientSasl::Anonymous);
        conn.open(Open::new(container)).map_err(|e| e.to_string())?;
        let session = conn.begin().map_err(|e| e.to_string())?;
        let mut p = AmqpPeer {
            stream,
            conn,
            input: BytesMut::new(),
            events: Vec::new(),
            epoch: Instant::now(),
            session,
            eof: false,
            sender: None,
            receiver: None,
        };
        p.wait_event(deadline, "the server's open", |e| {
            matches!(e, Event::Open(_))
        })?;
        p.wait_event(deadline, "the server's begin", |e| {
            matches!(e, Event::Begin { .. })
        })?;
        Ok(p)
    }

    /// Attaches a sender to and a receiver from `queue` (10 credit), for round trips.
    pub fn round_trip_links(&mut self, queue: &str, within: Duration) -> Result<(), String> {
        let deadline = Instant::now() + within;
        let sender = self
            .conn
            .attach_sender(
                self.session,
                "hostile-good-sender",
                Target {
                    address: Some(queue.into()),
                    ..Target::default()
                },
            )
            .map_err(|e| e.to_string())?;
        let receiver = self
            .conn
            .attach_receiver(
                self.session,
                "hostile-good-receiver",
                Source {
                    address: Some(queue.into()),
                    ..Source::default()
                },
            )
            .map_err(|e| e.to_string())?;
        for link in [sender, receiver] {
            let attached = self.wait_event(
                deadline,
                "the answer to an attach",
                |e| matches!(e, Event::Attached { link: l, .. } if *l == link),
            )?;
            if let Event::Attached { attach, .. } = attached {
                if attach.source.is_none() || attach.target.is_none() {
                    return Err(format!("the server refused the link: {attach:?}"));
                }
            }
        }
        self.conn
            .grant_credit(receiver, 10)
            .map_err(|e| e.to_string())?;
        while self.conn.credit(sender) == 0 {
            self.step(deadline, "credit to send")?;
        }
        self.sender = Some(sender);
        self.receiver = Some(receiver);
        Ok(())
    }

    /// One round trip: sends `rt-N` pre-settled, waits for it on the receiver, accepts it.
    pub fn round_trip(&mut self, n: u64, within: Duration) -> Result<(), String> {
        let deadline = Instant::now() + within;
        let (Some(sender), Some(receiver)) = (self.sender, self.receiver) else {
            return Err("no round-trip links".into());
        };
        while self.conn.credit(sender) == 0 {
            self.step(deadline, "credit to send")?;
        }
        let text = format!("rt-{n}");
        let message = Message {
            body: Some(Body::data(Bytes::copy_from_slice(text.as_bytes()))),
            ..Message::default()
        };
        let mut body = BytesMut::new();
        message.encode(&mut body);
        self.conn
            .send_bytes(
                sender,
                Bytes::copy_from_slice(&n.to_be_bytes()),
                true,
                0,
                body.freeze(),
            )
            .map_err(|e| e.to_string())?;
        let wanted = text.into_bytes();
        loop {
            let got = self.wait_event(
                deadline,
                "the round trip's message",
                |e| matches!(e, Event::Message { link, .. } if *link == receiver),
            )?;
            let Event::Message {
                delivery_id,
                settled,
                message,
                ..
            } = got
            else {
                unreachable!()
            };
            if !settled {
                self.conn
                    .disposition(
                        self.session,
                        Role::Receiver,
                        delivery_id,
                        delivery_id,
                        true,
                        Some(DeliveryState::Accepted),
                    )
                    .map_err(|e| e.to_string())?;
            }
            self.conn
                .grant_credit(receiver, 1)
                .map_err(|e| e.to_string())?;
            self.flush();
            if message
                .windows(wanted.len())
                .any(|w| w == wanted.as_slice())
            {
                return Ok(());
            }
            // An earlier round trip's message that came late: keep waiting for ours.
        }
    }

    /// Closes the connection and waits for the server's close.
    pub fn close(mut self, within: Duration) -> Result<(), String> {
        let deadline = Instant::now() + within;
        self.conn.close(None).map_err(|e| e.to_string())?;
        self.wait_event(deadline, "the server's close", |e| {
            matches!(e, Event::Closed { .. })
        })?;
        Ok(())
    }

    fn flush(&mut self) {
        if self.conn.wants_write() {
            let out = self.conn.take_output();
            if self.stream.write_all(&out).is_err() {
                self.eof = true;
            }
        }
    }

    /// One round: write, read for up to [`POLL`], feed the state machine, tick, write.
    fn step(&mut self, deadline: Instant, what: &str) -> Result<(), String> {
        if self.eof {
            return Err(format!(
                "the server closed the socket while waiting for {what}: {:?}",
                self.events.iter().rev().take(3).collect::<Vec<_>>()
            ));
        }
        if Instant::now() >= deadline {
            return Err(format!("timed out waiting for {what}"));
        }
        self.flush();
        let mut chunk = [0u8; 64 * 1024];
        match self.stream.read(&mut chunk) {
            Ok(0) => self.eof = true,
            Ok(n) => {
                self.input.extend_from_slice(&chunk[..n]);
                let now = since(self.epoch);
                self.conn.receive(&mut self.input, now, &mut self.events);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(_) => self.eof = true,
        }
        let now = since(self.epoch);
        self.conn.tick(now, &mut self.events);
        self.flush();
        Ok(())
    }

    fn wait_event(
        &mut self,
        deadline: Instant,
        what: &str,
        mut pred: impl FnMut(&Event) -> bool,
    ) -> Result<Event, String> {
        loop {
            if let Some(i) = self.events.iter().position(&mut pred) {
                return Ok(self.events.remove(i));
            }
            if let Some(Event::Closed { error, .. }) = self
                .events
                .iter()
                .find(|e| matches!(e, Event::Closed { .. }))
            {
                return Err(format!(
                    "the server closed the connection while waiting for {what}: {error:?}"
                ));
            }
            self.step(deadline, what)?;
        }
    }
}

/// A hostile AMQP peer: hand-built frames over a blocking socket.
pub struct RawAmqp {
    /// The socket.
    pub stream: TcpStream,
    input: BytesMut,
    decoder: FrameDecoder,
    /// The server closed its end.
    pub eof: bool,
    /// The server's begin answers, by our channel: its next-outgoing-id.
    next_incoming: std::collections::HashMap<u16, u32>,
    /// The server's open, once it came.
    pub server_open: Option<Open>,
}

impl RawAmqp {
    /// A TCP connection to the AMQP port, nothing sent.
    pub fn connect(port: u16) -> std::io::Result<RawAmqp> {
        let stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_read_timeout(Some(POLL))?;
        stream.set_nodelay(true)?;
        Ok(RawAmqp {
            stream,
            input: BytesMut::new(),
            decoder: FrameDecoder::new(READ_MAX_FRAME),
            eof: false,
            next_incoming: std::collections::HashMap::new(),
            server_open: None,
        })
    }

    /// The bytes of a whole client handshake, pipelined: SASL header, sasl-init
    /// ANONYMOUS, AMQP header, open (no idle-time-out: the client asks for no
    /// heartbeats).
    pub fn handshake_bytes(container: &str) -> BytesMut {
        let mut out = BytesMut::new();
        ProtocolHeader::Sasl.encode(&mut out);
        encode_frame(
            0,
            &Performative::SaslInit(SaslInit {
                mechanism: Symbol::from_static("ANONYMOUS"),
                ..SaslInit::default()
            }),
            &[],
            &mut out,
        );
        ProtocolHeader::Amqp.encode(&mut out);
        encode_frame(0, &Performative::Open(Open::new(container)), &[], &mut out);
        out
    }

    /// Connects and completes SASL and open; returns once the server's open arrived.
    pub fn open(port: u16, container: &str, within: Duration) -> Result<RawAmqp, String> {
        let mut r = RawAmqp::connect(port).map_err(|e| format!("tcp connect: {e}"))?;
        r.write(&RawAmqp::handshake_bytes(container))
            .map_err(|e| format!("write the handshake: {e}"))?;
        let f = r.wait_for(within, "the server's open", |f| {
            matches!(f.performative, Some(Performative::Open(_)))
        })?;
        if let Some(Performative::Open(open)) = f.performative {
            r.server_open = Some(open);
        }
        Ok(r)
    }

    /// Writes raw bytes.
    pub fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stream.write_all(bytes)
    }

    /// Writes one frame on `channel`.
    pub fn send(&mut self, channel: u16, p: &Performative) -> std::io::Result<()> {
        let mut out = BytesMut::new();
        encode_frame(channel, p, &[], &mut out);
        self.write(&out)
    }

    /// A begin with wide windows (the hostile peer lets the server send all it will).
    pub fn begin_frame() -> Performative {
        Performative::Begin(Begin {
            remote_channel: None,
            next_outgoing_id: 0,
            incoming_window: i32::MAX as u32,
            outgoing_window: i32::MAX as u32,
            handle_max: u32::MAX,
            offered_capabilities: Vec::new(),
            desired_capabilities: Vec::new(),
            properties: Vec::new(),
        })
    }

    /// Begins a session on `channel` and waits for the server's answer.
    pub fn begin(&mut self, channel: u16, within: Duration) -> Result<Begin, String> {
        self.send(channel, &RawAmqp::begin_frame())
            .map_err(|e| format!("write begin: {e}"))?;
        let f = self.wait_for(within, "the server's begin", |f| {
            matches!(&f.performative, Some(Performative::Begin(b)) if b.remote_channel == Some(channel))
        })?;
        let Some(Performative::Begin(b)) = f.performative else {
            unreachable!()
        };
        self.next_incoming.insert(channel, b.next_outgoing_id);
        Ok(b)
    }

    /// An attach of a receiving link (we receive) from `queue` with `handle`.
    pub fn receiver_attach(name: &str, handle: u32, queue: &str, settled: bool) -> Attach {
        Attach {
            name: name.into(),
            handle,
            role: Role::Receiver,
            snd_settle_mode: if settled {
                SenderSettleMode::Settled
            } else {
                SenderSettleMode::Unsettled
            },
            rcv_settle_mode: ReceiverSettleMode::First,
            source: Some(Source {
                address: Some(queue.into()),
                ..Source::default()
            }),
            target: Some(LinkTarget::Node(Target::default())),
            ..Attach::default()
        }
    }

    /// A flow giving link `handle` on `channel` `credit` (delivery-count 0).
    pub fn credit_flow(&self, channel: u16, handle: u32, credit: u32) -> Performative {
        Performative::Flow(Flow {
            next_incoming_id: Some(self.next_incoming.get(&channel).copied().unwrap_or(0)),
            incoming_window: i32::MAX as u32,
            next_outgoing_id: 0,
            outgoing_window: i32::MAX as u32,
            handle: Some(handle),
            delivery_count: Some(0),
            link_credit: Some(credit),
            available: None,
            drain: false,
            echo: false,
            properties: Vec::new(),
        })
    }

    /// A disposition settling (accepted) every delivery id from `first` to `last`.
    pub fn disposition(first: u32, last: u32) -> Performative {
        Performative::Disposition(Disposition {
            role: Role::Receiver,
            first,
            last: Some(last),
            settled: true,
            state: Some(DeliveryState::Accepted),
            batchable: false,
        })
    }

    /// The next frame from the server before `deadline`: `Ok(None)` at EOF, `Err` when
    /// the deadline passes or the bytes are not AMQP frames.
    pub fn next_frame(&mut self, deadline: Instant) -> Result<Option<Frame>, String> {
        loop {
            // Protocol headers (SASL, then AMQP) precede the frames of each layer.
            if self.input.len() >= 4 && &self.input[..4] == b"AMQP" {
                if self.input.len() >= 8 {
                    let _ = self.input.split_to(8);
                    continue;
                }
            } else if let Some(f) = self
                .decoder
                .decode(&mut self.input)
                .map_err(|e| format!("the server's bytes are not AMQP frames: {e}"))?
            {
                return Ok(Some(f));
            }
            if self.eof {
                return Ok(None);
            }
            if Instant::now() >= deadline {
                return Err("no frame from the server in time".into());
            }
            let mut chunk = [0u8; 64 * 1024];
            match self.stream.read(&mut chunk) {
                Ok(0) => self.eof = true,
                Ok(n) => self.input.extend_from_slice(&chunk[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock
                            | std::io::ErrorKind::TimedOut
                            | std::io::ErrorKind::Interrupted
                    ) => {}
                Err(_) => self.eof = true,
            }
        }
    }

    /// Reads frames until one matches `pred` (others are dropped); `Err` at EOF, on a close
    /// from the server, or after `within`.
    pub fn wait_for(
        &mut self,
        within: Duration,
        what: &str,
        mut pred: impl FnMut(&Frame) -> bool,
    ) -> Result<Frame, String> {
        let deadline = Instant::now() + within;
        loop {
            match self.next_frame(deadline) {
                Ok(Some(f)) if pred(&f) => return Ok(f),
                Ok(Some(Frame {
                    performative: Some(Performative::Close(c)),
                    ..
                })) => {
                    return Err(format!(
                        "the server closed the connection while waiting for {what}: {:?}",
                        c.error
                    ))
                }
                Ok(Some(_)) => {}
                Ok(None) => {
                    return Err(format!(
                        "the server closed the socket while waiting for {what}"
                    ))
                }
                Err(e) => return Err(format!("waiting for {what}: {e}")),
            }
        }
    }

    /// Reads until the server's close frame or EOF (at most `within`): what ended the
    /// connection, as seen from here.
    pub fn ending(&mut self, within: Duration) -> Ending {
        let deadline = Instant::now() + within;
        let mut ends = Vec::new();
        loop {
            match self.next_frame(deadline) {
                Ok(Some(Frame {
                    performative: Some(Performative::Close(c)),
                    ..
                })) => return Ending::Closed(c.error, ends),
                Ok(Some(Frame {
                    performative: Some(Performative::End(e)),
                    channel,
                    ..
                })) => ends.push((channel, e.error)),
                Ok(Some(_)) => {}
                Ok(None) => return Ending::Eof(ends),
                Err(e) => return Ending::StillOpen(e, ends),
            }
        }
    }
}

/// How the server ended (or did not end) a hostile connection. The fields are shown in
/// notes and failure messages (through Debug).
#[derive(Debug)]
#[allow(dead_code)]
pub enum Ending {
    /// A close frame, with its error; the session ends seen before it.
    Closed(Option<ErrorCondition>, Vec<(u16, Option<ErrorCondition>)>),
    /// The socket closed without a close frame.
    Eof(Vec<(u16, Option<ErrorCondition>)>),
    /// Nothing ended it in time (or its bytes made no sense).
    StillOpen(String, Vec<(u16, Option<ErrorCondition>)>),
}

impl Ending {
    /// The close's condition, if the server sent a close with an error.
    pub fn close_condition(&self) -> Option<&str> {
        match self {
            Ending::Closed(Some(e), _) => Some(e.condition.as_str()),
            _ => None,
        }
    }
}
