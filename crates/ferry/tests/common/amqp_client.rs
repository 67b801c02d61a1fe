//! A blocking AMQP 1.0 test client over Ferry's own sans-I/O state machine
//! (`ferry_amqp::connection::Connection`): one connection, one session, pumped by hand,
//! every wait bounded by [`DEADLINE`]. Shared by the AMQP tests (`amqp.rs`) and the
//! tracing tests (`tracing.rs`), which include it with `#[path]`.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use ferry_amqp::connection::{ClientSasl, Config, Connection, Event, LinkId, SessionId};
use ferry_amqp::{
    condition, Body, DeliveryState, Header, LinkTarget, Message, Open, Role, Source, Target, Value,
};

use crate::common::{TestQueueManager, DEADLINE};

/// How long one socket read waits before the pump looks at its deadline again.
pub const POLL: Duration = Duration::from_millis(20);

/// The AMQP protocol header (after SASL).
pub const AMQP_HEADER: &[u8] = b"AMQP\x00\x01\x00\x00";

/// A blocking AMQP client: one connection with one session over a `TcpStream`, pumped
/// by hand. Events the test has not claimed yet wait in `events`.
pub struct AmqpTestClient {
    pub stream: TcpStream,
    pub conn: Connection,
    pub input: BytesMut,
    pub events: Vec<Event>,
    pub epoch: Instant,
    pub session: Option<SessionId>,
    pub eof: bool,
    pub next_link: u32,
    pub next_tag: u64,
}

impl AmqpTestClient {
    /// A TCP connection to `qm`'s AMQP channel with SASL ANONYMOUS queued; nothing else.
    pub fn socket(qm: &TestQueueManager) -> AmqpTestClient {
        let stream = TcpStream::connect(("127.0.0.1", qm.amqp_port())).expect("AMQP tcp connect");
        stream.set_read_timeout(Some(POLL)).expect("read timeout");
        stream.set_nodelay(true).expect("nodelay");
        let config = Config {
            idle_time_out: None,
            ..Config::default()
        };
        AmqpTestClient {
            stream,
            conn: Connection::client(config, ClientSasl::Anonymous),
            input: BytesMut::new(),
            events: Vec::new(),
            epoch: Instant::now(),
            session: None,
            eof: false,
            next_link: 0,
            next_tag: 0,
        }
    }

    /// Sends header, SASL, open (as `container_id`) and begin, without waiting.
    pub fn start(qm: &TestQueueManager, container_id: &str) -> AmqpTestClient {
        let mut c = AmqpTestClient::socket(qm);
        c.conn.open(Open::new(container_id)).expect("open");
        c.session = Some(c.conn.begin().expect("begin"));
        c.flush();
        c
    }

    /// Connects and waits until the server has answered the open and the begin.
    pub fn connect(qm: &TestQueueManager, container_id: &str) -> AmqpTestClient {
        let mut c = AmqpTestClient::start(qm, container_id);
        let open = c.expect("the server's open", |e| matches!(e, Event::Open(_)));
        let Event::Open(open) = open else {
            unreachable!()
        };
        assert_eq!(
            open.container_id,
            qm.name(),
            "the server's container id is the queue manager's name"
        );
        c.expect("the server's begin", |e| matches!(e, Event::Begin { .. }));
        c
    }

    pub fn session(&self) -> SessionId {
        self.session.expect("a session was begun")
    }

    pub fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Writes out whatever the state machine has queued.
    pub fn flush(&mut self) {
        if self.conn.wants_write() {
            let out = self.conn.take_output();
            if self.stream.write_all(&out).is_err() {
                self.eof = true;
            }
        }
    }

    /// One round: write, read for up to [`POLL`], feed the state machine, tick, write.
    pub fn pump(&mut self) {
        self.flush();
        self.read_some();
        let now = self.now();
        self.conn.tick(now, &mut self.events);
        self.flush();
    }

    /// Reads for up to [`POLL`] and feeds what came to the state machine (writes
    /// nothing).
    pub fn read_some(&mut self) {
        let mut chunk = [0u8; 64 * 1024];
        match self.stream.read(&mut chunk) {
            Ok(0) => self.eof = true,
            Ok(n) => {
                self.input.extend_from_slice(&chunk[..n]);
                let now = self.now();
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
    }

    /// Pumps until an event matching `pred` arrives and returns it (other events stay
    /// queued); panics at the deadline or when the server closes the socket first.
    #[track_caller]
    pub fn expect(&mut self, what: &str, mut pred: impl FnMut(&Event) -> bool) -> Event {
        let deadline = Instant::now() + DEADLINE;
        loop {
            if let Some(i) = self.events.iter().position(&mut pred) {
                return self.events.remove(i);
            }
            assert!(
                !self.eof,
                "the server closed the socket while waiting for {what}; unclaimed events: {:?}",
                self.events
            );
            assert!(
                Instant::now() < deadline,
                "timed out after {DEADLINE:?} waiting for {what}; unclaimed events: {:?}",
                self.events
            );
            self.pump();
        }
    }

    /// Pumps until `cond` holds, panicking at the deadline.
    #[track_caller]
    pub fn wait(&mut self, what: &str, mut cond: impl FnMut(&mut Self) -> bool) {
        let deadline = Instant::now() + DEADLINE;
        while !cond(self) {
            assert!(
                !self.eof,
                "the server closed the socket while waiting for {what}"
            );
            assert!(
                Instant::now() < deadline,
                "timed out after {DEADLINE:?} waiting for {what}; unclaimed events: {:?}",
                self.events
            );
            self.pump();
        }
    }

    pub fn link_name(&mut self, role: &str) -> String {
        self.next_link += 1;
        format!("itest-{role}-{}", self.next_link)
    }

    /// Attaches a sender to `address` and returns the server's answering attach.
    pub fn attach_sender_raw(&mut self, address: &str) -> (LinkId, Box<ferry_amqp::Attach>) {
        let name = self.link_name("sender");
        let target = Target {
            address: Some(address.into()),
            ..Target::default()
        };
        let session = self.session();
        let link = self
            .conn
            .attach_sender(session, name, target)
            .expect("attach sender");
        let Event::Attached { attach, .. } = self.expect(
            &format!("the answer to the sender attach to {address}"),
            |e| matches!(e, Event::Attached { link: l, .. } if *l == link),
        ) else {
            unreachable!()
        };
        (link, attach)
    }

    /// Attaches a sender to `address`, asserting the server accepts the link and gives
    /// it credit.
    #[track_caller]
    pub fn attach_sender(&mut self, address: &str) -> LinkId {
        let (link, attach) = self.attach_sender_raw(address);
        assert!(
            matches!(&attach.target, Some(LinkTarget::Node(t)) if t.address.as_ref().map(|a| a.as_str()) == Some(address)),
            "the server takes a sender to {address}: {attach:?}"
        );
        self.wait(&format!("credit to send to {address}"), |c| {
            c.conn.credit(link) > 0
        });
        link
    }

    /// Sends `message` unsettled on `link`; returns its delivery id.
    pub fn send(&mut self, link: LinkId, message: &Message) -> u32 {
        self.wait("credit to send", |c| c.conn.credit(link) > 0);
        let mut body = BytesMut::new();
        message.encode(&mut body);
        self.next_tag += 1;
        let tag = Bytes::copy_from_slice(&self.next_tag.to_be_bytes());
        let id = self
            .conn
            .send_bytes(link, tag, false, 0, body.freeze())
            .expect("send");
        self.flush();
        id
    }

    /// Waits for the server's outcome of our delivery `id`.
    pub fn outcome(&mut self, id: u32) -> Option<DeliveryState> {
        let Event::Disposition { state, settled, .. } =
            self.expect(&format!("the outcome of delivery {id}"), |e| {
                matches!(e, Event::Disposition { role: Role::Receiver, first, last, .. }
                    if *first <= id && id <= *last)
            })
        else {
            unreachable!()
        };
        assert!(settled, "the server settles its outcome of delivery {id}");
        state
    }

    /// Sends `message` and asserts it is `accepted`.
    #[track_caller]
    pub fn send_accepted(&mut self, link: LinkId, message: &Message) {
        let id = self.send(link, message);
        let state = self.outcome(id);
        assert_eq!(
            state,
            Some(DeliveryState::Accepted),
            "outcome of delivery {id} ({message:?})"
        );
    }

    /// Attaches a receiver from `address`, asserting the server takes it, and grants
    /// `credit`.
    #[track_caller]
    pub fn attach_receiver(&mut self, address: &str, credit: u32) -> LinkId {
        let name = self.link_name("receiver");
        let source = Source {
            address: Some(address.into()),
            ..Source::default()
        };
        let session = self.session();
        let link = self
            .conn
            .attach_receiver(session, name, source)
            .expect("attach receiver");
        let Event::Attached { attach, .. } = self.expect(
            &format!("the answer to the receiver attach to {address}"),
            |e| matches!(e, Event::Attached { link: l, .. } if *l == link),
        ) else {
            unreachable!()
        };
        assert!(
            attach
                .source
                .as_ref()
                .is_some_and(|s| s.address.as_ref().map(|a| a.as_str()) == Some(address)),
            "the server takes a receiver from {address}: {attach:?}"
        );
        self.conn.grant_credit(link, credit).expect("grant credit");
        self.flush();
        link
    }

    /// Waits for the next message on `link`; returns its delivery id and the message.
    #[track_caller]
    pub fn receive(&mut self, link: LinkId) -> (u32, bool, Message) {
        let Event::Message {
            delivery_id,
            settled,
            message,
            ..
        } = self.expect(
            "a message",
            |e| matches!(e, Event::Message { link: l, .. } if *l == link),
        )
        else {
            unreachable!()
        };
        let decoded = Message::decode(message.clone())
            .unwrap_or_else(|e| panic!("the server's message decodes ({e}): {message:?}"));
        (delivery_id, settled, decoded)
    }

    /// Settles delivery `id` that we received as `modified` with `delivery-failed`, as
    /// Qpid JMS does on recover or rollback (BackoutCount + 1).
    pub fn fail(&mut self, id: u32) {
        let session = self.session();
        self.conn
            .disposition(
                session,
                Role::Receiver,
                id,
                id,
                true,
                Some(DeliveryState::Modified {
                    delivery_failed: true,
                    undeliverable_here: false,
                    message_annotations: Vec::new(),
                }),
            )
            .expect("disposition");
        self.flush();
    }

    /// Accepts (and settles) delivery `id` that we received.
    pub fn accept(&mut self, id: u32) {
        let session = self.session();
        self.conn
            .disposition(
                session,
                Role::Receiver,
                id,
                id,
                true,
                Some(DeliveryState::Accepted),
            )
            .expect("disposition");
        self.flush();
    }

    /// Attaches a transaction controller (target: the coordinator, local transactions),
    /// asserting the server takes it and gives it credit.
    #[track_caller]
    pub fn attach_coordinator(&mut self) -> LinkId {
        let name = self.link_name("txn");
        let attach = ferry_amqp::Attach {
            name: name.into(),
            role: Role::Sender,
            source: Some(Source::default()),
            target: Some(LinkTarget::Coordinator(ferry_amqp::Coordinator {
                capabilities: vec![condition::CAPABILITY_LOCAL_TRANSACTIONS.into()],
            })),
            ..ferry_amqp::Attach::default()
        };
        let session = self.session();
        let link = self
            .conn
            .attach(session, attach)
            .expect("attach coordinator");
        let Event::Attached { attach, .. } = self.expect(
            "the answer to the coordinator attach",
            |e| matches!(e, Event::Attached { link: l, .. } if *l == link),
        ) else {
            unreachable!()
        };
        assert!(
            matches!(&attach.target, Some(LinkTarget::Coordinator(_))),
            "the server takes the coordinator link: {attach:?}"
        );
        self.wait("credit to declare", |c| c.conn.credit(link) > 0);
        link
    }

    /// Sends a declare or discharge (`body`, as an amqp-value) to coordinator `link`;
    /// returns the server's outcome.
    pub fn control(
        &mut self,
        link: LinkId,
        body: &impl ferry_amqp::Encode,
    ) -> Option<DeliveryState> {
        let mut bytes = BytesMut::new();
        body.encode(&mut bytes);
        let value: Value = ferry_amqp::codec::from_bytes(bytes.freeze()).expect("a value");
        let id = self.send(
            link,
            &Message {
                body: Some(Body::Value(value)),
                ..Message::default()
            },
        );
        self.outcome(id)
    }

    /// Declares a transaction on coordinator `link`; returns its id.
    #[track_caller]
    pub fn declare(&mut self, link: LinkId) -> Bytes {
        match self.control(link, &ferry_amqp::Declare::default()) {
            Some(DeliveryState::Declared { txn_id }) => txn_id,
            other => panic!("a declare is answered declared, not {other:?}"),
        }
    }

    /// Discharges transaction `txn` (rolls it back when `fail`); returns the outcome.
    pub fn discharge(&mut self, link: LinkId, txn: &Bytes, fail: bool) -> Option<DeliveryState> {
        let discharge = ferry_amqp::Discharge {
            txn_id: txn.clone(),
            fail,
        };
        self.control(link, &discharge)
    }

    /// Sends `message` on `link` inside transaction `txn`; returns the outcome.
    pub fn send_in(
        &mut self,
        link: LinkId,
        message: &Message,
        txn: &Bytes,
    ) -> Option<DeliveryState> {
        self.wait("credit to send", |c| c.conn.credit(link) > 0);
        let mut body = BytesMut::new();
        message.encode(&mut body);
        self.next_tag += 1;
        let tag = Bytes::copy_from_slice(&self.next_tag.to_be_bytes());
        let state = DeliveryState::Transactional {
            txn_id: txn.clone(),
            outcome: None,
        };
        let id = self
            .conn
            .send_in_state(link, tag, state, body.freeze())
            .expect("send in a transaction");
        self.flush();
        self.outcome(id)
    }

    /// Accepts (and settles) delivery `id` inside transaction `txn`, as Qpid JMS does
    /// in a transacted session.
    pub fn accept_in(&mut self, id: u32, txn: &Bytes) {
        let session = self.session();
        let state = DeliveryState::Transactional {
            txn_id: txn.clone(),
            outcome: Some(Box::new(DeliveryState::Accepted)),
        };
        self.conn
            .disposition(session, Role::Receiver, id, id, true, Some(state))
            .expect("disposition");
        self.flush();
    }

    /// Closes the connection cleanly and waits until the server has closed its end.
    pub fn close(mut self) {
        self.conn.close(None).expect("close");
        self.expect("the server's close", |e| matches!(e, Event::Closed { .. }));
        let deadline = Instant::now() + DEADLINE;
        while !self.eof {
            assert!(
                Instant::now() < deadline,
                "the server keeps the socket open"
            );
            self.pump();
        }
    }
}

/// A message with a `data` body and a header with `durable`.
pub fn data_message(body: &str, durable: bool) -> Message {
    data_with_header(
        body,
        Header {
            durable,
            ..Header::default()
        },
    )
}

/// A message with a `data` body and `header`.
pub fn data_with_header(body: &str, header: Header) -> Message {
    Message {
        header: Some(header),
        body: Some(Body::data(Bytes::copy_from_slice(body.as_bytes()))),
        ..Message::default()
    }
}

/// The single `data` section of `m` as text.
#[track_caller]
pub fn data_text(m: &Message) -> String {
    match &m.body {
        Some(Body::Data(sections)) if sections.len() == 1 => {
            String::from_utf8(sections[0].to_vec()).expect("utf-8 data")
        }
        other => panic!("expected one data section, got {other:?}"),
    }
}

/// header.durable of a received message (an absent header is not durable).
pub fn durable(m: &Message) -> bool {
    m.header.as_ref().is_some_and(|h| h.durable)
}
