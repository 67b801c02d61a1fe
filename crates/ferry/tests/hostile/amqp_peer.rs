//! AMQP 1.0 peers for the probes, over blocking sockets.
//!
//! - [`AmqpPeer`]: a well-behaved client built on ferry-amqp's client-role state machine
//!   (SASL ANONYMOUS, open, begin, a sender and a receiver on one queue, accept what it
//!   receives). Every wait has a deadline and failures are returned, not panicked, so the
//!   harness can record them as the good client's failures.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use ferry_amqp::connection::{ClientSasl, Config, Connection, Event, LinkId, SessionId};
use ferry_amqp::{Body, DeliveryState, Message, Open, Role, Source, Target};

/// How long one socket read waits before a pump looks at its deadline again.
const POLL: Duration = Duration::from_millis(20);

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
