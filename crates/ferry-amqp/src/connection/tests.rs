//! Loopback tests: a client and a server `Connection` in memory, bytes shuttled between
//! them, asserting what the broker and the perf client rely on.

use bytes::{BufMut, Bytes, BytesMut};
use proptest::prelude::*;

use super::*;
use crate::frame::{encode_frame, encode_transfer, FrameDecoder};
use crate::performative::{
    Attach, Begin, DeliveryState, Flow, LinkTarget, Role, SaslCode, Source, Target, Transfer,
};
use crate::value::Symbol;

/// Both ends, their unread input, their events and a fake clock.
struct Pair {
    client: Connection,
    server: Connection,
    to_client: BytesMut,
    to_server: BytesMut,
    cev: Vec<Event>,
    sev: Vec<Event>,
    now: u64,
}

impl Pair {
    fn new(client: Connection, server: Connection) -> Self {
        Pair {
            client,
            server,
            to_client: BytesMut::new(),
            to_server: BytesMut::new(),
            cev: Vec::new(),
            sev: Vec::new(),
            now: 1_000,
        }
    }

    /// Shuttles bytes until neither side has anything to write.
    fn pump(&mut self) {
        for _ in 0..10_000 {
            let c = self.client.take_output();
            let s = self.server.take_output();
            let idle = c.is_empty() && s.is_empty();
            self.to_server.unsplit(c);
            self.to_client.unsplit(s);
            self.server
                .receive(&mut self.to_server, self.now, &mut self.sev);
            self.client
                .receive(&mut self.to_client, self.now, &mut self.cev);
            if idle && !self.server.wants_write() && !self.client.wants_write() {
                return;
            }
        }
        panic!("pump did not settle");
    }

    /// Pumps, answering the server's SASL and open events like a broker would.
    fn pump_serving(&mut self) {
        let mut seen = self.sev.len();
        loop {
            self.pump();
            let mut acted = false;
            for i in seen..self.sev.len() {
                match &self.sev[i] {
                    Event::SaslInit {
                        initial_response, ..
                    } => {
                        let ok = initial_response
                            .as_deref()
                            .and_then(parse_plain)
                            .is_none_or(|(_, user, pw)| user == "app" && pw == "secret");
                        self.server.sasl_outcome(ok).unwrap();
                        acted = true;
                    }
                    Event::Open(_) => {
                        let mut open = Open::new("broker");
                        open.offered_capabilities =
                            vec![Symbol::from_static(condition::CAPABILITY_ANONYMOUS_RELAY)];
                        self.server.open(open).unwrap();
                        acted = true;
                    }
                    _ => {}
                }
            }
            seen = self.sev.len();
            if !acted {
                return;
            }
        }
    }

    /// Answers every pending server-side attach by echoing the termini.
    fn accept_attaches(&mut self) -> Vec<(LinkId, Role)> {
        let mut links = Vec::new();
        for e in std::mem::take(&mut self.sev) {
            if let Event::Attach { link, attach } = &e {
                self.server
                    .attach_reply(*link, attach.source.clone(), attach.target.clone())
                    .unwrap();
                links.push((*link, attach.role));
            } else {
                self.sev.push(e);
            }
        }
        self.pump();
        links
    }
}

fn opened(client_config: Config, server_config: Config) -> Pair {
    let mut client = Connection::client(client_config, ClientSasl::Anonymous);
    client.open(Open::new("client")).unwrap();
    let server = Connection::server(server_config, SaslServer::plain_and_anonymous());
    let mut p = Pair::new(client, server);
    p.pump_serving();
    assert!(p.client.is_open() && p.server.is_open());
    p.cev.clear();
    p.sev.clear();
    p
}

/// An open pair with one session, a client→server link and a server→client link.
fn linked(client_config: Config, server_config: Config) -> (Pair, Links) {
    let mut p = opened(client_config, server_config);
    let session = p.client.begin().unwrap();
    let c_send = p
        .client
        .attach_sender(session, "producer", target("Q1"))
        .unwrap();
    let c_recv = p
        .client
        .attach_receiver(session, "consumer", source("Q1"))
        .unwrap();
    p.pump();
    let links = p.accept_attaches();
    let s_recv = links.iter().find(|(_, r)| *r == Role::Sender).unwrap().0;
    let s_send = links.iter().find(|(_, r)| *r == Role::Receiver).unwrap().0;
    p.cev.clear();
    p.sev.clear();
    (
        p,
        Links {
            c_send,
            c_recv,
            s_recv,
            s_send,
        },
    )
}

struct Links {
    c_send: LinkId,
    c_recv: LinkId,
    s_recv: LinkId,
    s_send: LinkId,
}

fn target(address: &str) -> Target {
    Target {
        address: Some(address.into()),
        ..Target::default()
    }
}

fn source(address: &str) -> Source {
    Source {
        address: Some(address.into()),
        ..Source::default()
    }
}

fn messages(events: &[Event]) -> Vec<(u32, Bytes)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Message {
                delivery_id,
                message,
                ..
            } => Some((*delivery_id, message.clone())),
            _ => None,
        })
        .collect()
}

fn closed_error(events: &[Event]) -> Option<(bool, String)> {
    events.iter().find_map(|e| match e {
        Event::Closed { remote, error } => Some((
            *remote,
            error
                .as_ref()
                .map_or(String::new(), |e| e.condition.as_str().to_owned()),
        )),
        _ => None,
    })
}

fn tag(n: u32) -> Bytes {
    Bytes::copy_from_slice(&n.to_be_bytes())
}

#[test]
fn sasl_plain_with_a_pipelined_open_begin_and_attach() {
    let mut client = Connection::client(
        Config::default(),
        ClientSasl::Plain {
            user: "app".into(),
            password: "secret".into(),
        },
    );
    // Everything at once, before the server said anything.
    client.open(Open::new("jms-client")).unwrap();
    let session = client.begin().unwrap();
    let link = client.attach_sender(session, "p", target("Q1")).unwrap();
    let server = Connection::server(Config::default(), SaslServer::plain_and_anonymous());
    let mut p = Pair::new(client, server);
    p.pump();
    let Some(Event::SaslInit {
        mechanism,
        initial_response,
        ..
    }) = p.sev.first()
    else {
        panic!("{:?}", p.sev)
    };
    assert_eq!(mechanism, &"PLAIN");
    assert_eq!(
        parse_plain(initial_response.as_deref().unwrap()),
        Some(("", "app", "secret"))
    );
    p.server.sasl_outcome(true).unwrap();
    p.pump_serving();
    let kinds: Vec<&str> = p.sev.iter().map(kind).collect();
    assert_eq!(kinds, ["SaslInit", "Open", "Begin", "Attach"]);
    let Some(Event::Open(open)) = p.sev.get(1) else {
        panic!()
    };
    assert_eq!(open.container_id, "jms-client");
    assert_eq!(open.idle_time_out, Some(60_000));
    p.accept_attaches();
    let kinds: Vec<&str> = p.cev.iter().map(kind).collect();
    assert_eq!(kinds, ["SaslOutcome", "Open", "Begin", "Attached"]);
    assert!(matches!(&p.cev[1], Event::Open(o) if o.offered_capabilities.len() == 1));
    assert!(
        matches!(&p.cev[3], Event::Attached { link: l, attach } if *l == link && attach.target.is_some())
    );
}

fn kind(e: &Event) -> &'static str {
    match e {
        Event::SaslInit { .. } => "SaslInit",
        Event::SaslOutcome(_) => "SaslOutcome",
        Event::Open(_) => "Open",
        Event::Begin { .. } => "Begin",
        Event::Attach { .. } => "Attach",
        Event::Attached { .. } => "Attached",
        Event::Flow { .. } => "Flow",
        Event::Message { .. } => "Message",
        Event::Disposition { .. } => "Disposition",
        Event::Detach { .. } => "Detach",
        Event::End { .. } => "End",
        Event::Closed { .. } => "Closed",
    }
}

#[test]
fn sasl_anonymous_succeeds_and_bad_credentials_close_the_connection() {
    let p = opened(Config::default(), Config::default());
    assert!(matches!(p.client.max_frame_size(), 1_048_576));

    let client = Connection::client(
        Config::default(),
        ClientSasl::Plain {
            user: "app".into(),
            password: "wrong".into(),
        },
    );
    let server = Connection::server(Config::default(), SaslServer::plain_and_anonymous());
    let mut p = Pair::new(client, server);
    p.pump_serving();
    assert!(p.server.is_finished() && p.client.is_finished());
    assert!(p.cev.contains(&Event::SaslOutcome(SaslCode::Auth)));
    assert_eq!(
        closed_error(&p.cev),
        Some((false, condition::UNAUTHORIZED_ACCESS.into()))
    );
}

#[test]
fn a_wrong_header_gets_the_right_one_back_and_the_connection_ends() {
    let mut server = Connection::server(Config::default(), SaslServer::plain_and_anonymous());
    let mut events = Vec::new();
    server.receive(
        &mut BytesMut::from(&b"GET / HTTP/1.1\r\n"[..]),
        0,
        &mut events,
    );
    assert_eq!(&server.take_output()[..], b"AMQP\x03\x01\x00\x00");
    assert!(server.is_finished());
    assert_eq!(
        closed_error(&events),
        Some((false, condition::FRAMING_ERROR.into()))
    );

    // A client skipping SASL where it is required.
    let client = Connection::client(Config::default(), ClientSasl::None);
    let server = Connection::server(Config::default(), SaslServer::plain_and_anonymous());
    let mut p = Pair::new(client, server);
    p.pump();
    assert!(p.server.is_finished() && p.client.is_finished());
    assert_eq!(
        closed_error(&p.cev),
        Some((false, condition::FRAMING_ERROR.into()))
    );
}

#[test]
fn max_frame_size_is_the_smaller_of_both_and_never_below_512() {
    let small = Config {
        max_frame_size: 4096,
        ..Config::default()
    };
    let p = opened(Config::default(), small.clone());
    assert_eq!(p.client.max_frame_size(), 4096);
    assert_eq!(p.server.max_frame_size(), 4096);
    let tiny = Config {
        max_frame_size: 100,
        ..Config::default()
    };
    let p = opened(tiny, Config::default());
    assert_eq!(p.server.max_frame_size(), 512);
}

#[test]
fn a_refused_attach_has_a_null_terminus_then_a_detach_with_the_error() {
    let mut p = opened(Config::default(), Config::default());
    let session = p.client.begin().unwrap();
    let link = p
        .client
        .attach_receiver(session, "c", source("MISSING"))
        .unwrap();
    p.pump();
    let Some(Event::Attach {
        link: s_link,
        attach,
    }) = p.sev.pop()
    else {
        panic!()
    };
    assert_eq!(attach.role, Role::Receiver);
    assert_eq!(attach.source, Some(source("MISSING")));
    p.sev.clear();
    p.server
        .refuse_attach(
            s_link,
            ErrorCondition::new(condition::NOT_FOUND, "no such queue"),
        )
        .unwrap();
    p.pump();
    assert!(matches!(&p.cev[1], Event::Attached { attach, .. } if attach.source.is_none()));
    let Event::Detach {
        link: l,
        closed,
        error,
        ..
    } = &p.cev[2]
    else {
        panic!("{:?}", p.cev)
    };
    assert_eq!((*l, *closed), (link, true));
    assert_eq!(error.as_ref().unwrap().condition, condition::NOT_FOUND);
    // The server got the client's detach back and freed the handle: it is reused.
    assert!(p.sev.is_empty(), "{:?}", p.sev);
    p.client
        .attach_receiver(session, "c2", source("Q"))
        .unwrap();
    p.pump();
    assert!(matches!(p.sev.pop(), Some(Event::Attach { link, .. }) if link == s_link));
}

#[test]
fn credit_grant_use_and_drain() {
    let (mut p, l) = linked(Config::default(), Config::default());
    assert_eq!(p.server.credit(l.s_send), 0);
    assert_eq!(
        p.server
            .send_bytes(l.s_send, tag(0), true, 0, Bytes::from_static(b"m")),
        Err(ConnectionError::NoCredit)
    );
    p.client.grant_credit(l.c_recv, 5).unwrap();
    p.pump();
    assert!(
        matches!(p.sev[..], [Event::Flow { link, credit: 5, drain: false, .. }] if link == l.s_send)
    );
    assert_eq!(p.server.credit(l.s_send), 5);
    for i in 0..2 {
        p.server
            .send_bytes(l.s_send, tag(i), true, 0, Bytes::from_static(b"m"))
            .unwrap();
    }
    p.pump();
    assert_eq!(messages(&p.cev).len(), 2);
    assert_eq!(p.client.credit_outstanding(l.c_recv), 3);
    p.sev.clear();
    p.cev.clear();
    p.client.drain(l.c_recv).unwrap();
    p.pump();
    assert!(matches!(
        p.sev[..],
        [Event::Flow {
            credit: 3,
            drain: true,
            ..
        }]
    ));
    assert!(p.server.draining(l.s_send));
    p.server.drained(l.s_send).unwrap();
    p.pump();
    assert_eq!(p.server.credit(l.s_send), 0);
    assert!(matches!(p.cev[..], [Event::Flow { credit: 0, .. }]));
    assert_eq!(p.client.credit_outstanding(l.c_recv), 0);
    assert_eq!(
        p.client.grant_credit(l.c_send, 1),
        Err(ConnectionError::WrongRole("receiving"))
    );
}

#[test]
fn an_echo_flow_gets_our_link_state_back() {
    let (mut p, l) = linked(Config::default(), Config::default());
    p.client.grant_credit(l.c_recv, 7).unwrap();
    p.pump();
    // Hand-made echo request on the client's receiving link.
    let mut wire = BytesMut::new();
    let flow = Flow {
        next_incoming_id: Some(0),
        incoming_window: 100,
        next_outgoing_id: 0,
        outgoing_window: 100,
        handle: Some(l.c_recv.handle),
        delivery_count: Some(0),
        link_credit: Some(7),
        echo: true,
        ..Flow::default()
    };
    encode_frame(0, &Performative::Flow(flow), &[], &mut wire);
    p.server.receive(&mut wire, p.now, &mut p.sev);
    let mut out = p.server.take_output();
    let f = FrameDecoder::new(1 << 20)
        .decode(&mut out)
        .unwrap()
        .unwrap();
    let Some(Performative::Flow(back)) = f.performative else {
        panic!()
    };
    assert_eq!(
        (back.handle, back.link_credit),
        (Some(l.s_send.handle), Some(7))
    );
}

#[test]
fn single_and_three_megabyte_transfers_both_ways_at_max_frame_4096() {
    let small = Config {
        max_frame_size: 4096,
        ..Config::default()
    };
    let (mut p, l) = linked(small.clone(), small);
    let big: Bytes = (0..3 * 1024 * 1024u32)
        .map(|i| (i % 251) as u8)
        .collect::<Vec<_>>()
        .into();
    // Client → server.
    p.server.grant_credit(l.s_recv, 10).unwrap();
    p.pump();
    assert_eq!(p.client.credit(l.c_send), 10);
    let d0 = p
        .client
        .send_bytes(l.c_send, tag(0), false, 0, Bytes::from_static(b"small"))
        .unwrap();
    let d1 = p
        .client
        .send_bytes(l.c_send, tag(1), false, 0, big.clone())
        .unwrap();
    assert_eq!((d0, d1), (0, 1));
    p.pump();
    let got = messages(&p.sev);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0], (0, Bytes::from_static(b"small")));
    assert_eq!(got[1].0, 1);
    assert!(got[1].1 == big, "reassembled message differs");
    assert_eq!(p.server.credit_outstanding(l.s_recv), 8);
    // Server → client, the message written in place by the closure.
    p.client.grant_credit(l.c_recv, 2).unwrap();
    p.pump();
    p.server
        .send(l.s_send, tag(9), true, 0, |out| out.put_slice(b"hello"))
        .unwrap();
    p.server
        .send(l.s_send, tag(10), true, 0, |out| out.put_slice(&big))
        .unwrap();
    p.pump();
    let got = messages(&p.cev);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].1, Bytes::from_static(b"hello"));
    assert!(got[1].1 == big);
    assert!(
        matches!(&p.cev[p.cev.len() - 1], Event::Message { settled: true, delivery_tag, .. } if delivery_tag == &tag(10))
    );
}

#[test]
fn dispositions_settle_ranges_and_unsettled_deliveries_are_reported_on_detach() {
    let (mut p, l) = linked(Config::default(), Config::default());
    p.client.grant_credit(l.c_recv, 100).unwrap();
    p.pump();
    p.sev.clear();
    for i in 0..5 {
        p.server
            .send_bytes(l.s_send, tag(i), false, 0, Bytes::from_static(b"m"))
            .unwrap();
    }
    p.pump();
    assert_eq!(
        messages(&p.cev).iter().map(|m| m.0).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4]
    );
    p.client
        .disposition(
            l.c_recv.session(),
            Role::Receiver,
            0,
            2,
            true,
            Some(DeliveryState::Accepted),
        )
        .unwrap();
    p.pump();
    assert_eq!(
        p.sev,
        [Event::Disposition {
            session: l.s_send.session(),
            role: Role::Receiver,
            first: 0,
            last: 2,
            settled: true,
            state: Some(DeliveryState::Accepted),
        }]
    );
    assert_eq!(
        p.server.unsettled_deliveries(),
        [(l.s_send, 3), (l.s_send, 4)]
    );
    p.sev.clear();
    p.client.detach(l.c_recv, true, None).unwrap();
    p.pump();
    assert_eq!(
        p.sev,
        [Event::Detach {
            link: l.s_send,
            closed: true,
            error: None,
            unsettled: vec![3, 4],
        }]
    );
    // The detach was answered and the client reports nothing for its own detach.
    assert!(p.cev.iter().all(|e| !matches!(e, Event::Detach { .. })));
}

#[test]
fn deferred_acceptances_go_out_ahead_of_the_next_frame_or_when_sent() {
    let (mut p, l) = linked(Config::default(), Config::default());
    p.server.grant_credit(l.s_recv, 10).unwrap();
    p.client.grant_credit(l.c_recv, 10).unwrap();
    p.pump();
    for i in 0..3 {
        p.client
            .send_bytes(l.c_send, tag(i), false, 0, Bytes::from_static(b"request"))
            .unwrap();
    }
    p.pump();
    let received: Vec<u32> = messages(&p.sev).iter().map(|m| m.0).collect();
    assert_eq!(received, [0, 1, 2]);
    p.cev.clear();
    for id in received {
        p.server
            .accept_with_next_frame(l.s_recv.session(), id)
            .unwrap();
    }
    // Nothing goes out for them alone...
    assert!(p.server.has_deferred_accepts());
    assert!(!p.server.wants_write());
    p.pump();
    assert!(p.cev.is_empty(), "{:?}", p.cev);
    // ...they ride ahead of the next frame, as one disposition for the run.
    p.server
        .send_bytes(l.s_send, tag(0), true, 0, Bytes::from_static(b"reply"))
        .unwrap();
    assert!(!p.server.has_deferred_accepts());
    p.pump();
    assert_eq!(
        p.cev.iter().map(kind).collect::<Vec<_>>(),
        ["Disposition", "Message"]
    );
    assert!(matches!(
        &p.cev[0],
        Event::Disposition {
            role: Role::Receiver,
            first: 0,
            last: 2,
            settled: true,
            state: Some(DeliveryState::Accepted),
            ..
        }
    ));
    // With nothing to ride on, the caller sends them.
    p.cev.clear();
    p.client
        .send_bytes(l.c_send, tag(3), false, 0, Bytes::from_static(b"request"))
        .unwrap();
    p.pump();
    p.server
        .accept_with_next_frame(l.s_recv.session(), 3)
        .unwrap();
    p.server.send_deferred_accepts();
    assert!(p.server.wants_write());
    p.pump();
    assert!(matches!(
        p.cev[..],
        [Event::Disposition {
            first: 3,
            last: 3,
            settled: true,
            ..
        }]
    ));
}

#[test]
fn a_peer_close_reports_every_link_with_its_unsettled_deliveries() {
    let (mut p, l) = linked(Config::default(), Config::default());
    p.client.grant_credit(l.c_recv, 10).unwrap();
    p.pump();
    p.server
        .send_bytes(l.s_send, tag(0), false, 0, Bytes::from_static(b"m"))
        .unwrap();
    p.pump();
    p.sev.clear();
    p.client
        .close(Some(ErrorCondition::new(
            condition::CONNECTION_FORCED,
            "bye",
        )))
        .unwrap();
    p.pump();
    let detaches: Vec<(LinkId, Vec<u32>)> = p
        .sev
        .iter()
        .filter_map(|e| match e {
            Event::Detach {
                link, unsettled, ..
            } => Some((*link, unsettled.clone())),
            _ => None,
        })
        .collect();
    assert!(detaches.contains(&(l.s_send, vec![0])));
    assert!(detaches.contains(&(l.s_recv, vec![])));
    let kinds: Vec<&str> = p.sev.iter().map(kind).collect();
    assert_eq!(kinds, ["Detach", "Detach", "End", "Closed"]);
    assert_eq!(
        closed_error(&p.sev),
        Some((true, condition::CONNECTION_FORCED.into()))
    );
    assert!(p.client.is_finished() && p.server.is_finished());
    assert_eq!(
        closed_error(&p.cev),
        Some((false, condition::CONNECTION_FORCED.into()))
    );
}

#[test]
fn a_peer_end_reports_its_links_and_is_answered() {
    let (mut p, l) = linked(Config::default(), Config::default());
    p.client.end(l.c_send.session(), None).unwrap();
    p.pump();
    let kinds: Vec<&str> = p.sev.iter().map(kind).collect();
    assert_eq!(kinds, ["Detach", "Detach", "End"]);
    assert!(p.cev.is_empty());
    // Both sides forgot the session: a new one gets channel 0 again.
    assert_eq!(p.client.begin().unwrap(), SessionId(0));
    p.pump();
    assert!(matches!(
        p.sev.last(),
        Some(Event::Begin {
            session: SessionId(0),
            ..
        })
    ));
}

#[test]
fn heartbeats_go_out_at_half_the_peer_idle_timeout_and_silence_closes() {
    let idle = Config {
        idle_time_out: Some(1_000),
        ..Config::default()
    };
    let mut p = opened(idle.clone(), idle);
    let t0 = p.now;
    let deadline = p.client.tick(t0, &mut p.cev).unwrap();
    assert_eq!(deadline, t0 + 500);
    assert!(!p.client.wants_write());
    p.client.tick(t0 + 500, &mut p.cev);
    assert_eq!(&p.client.take_output()[..], [0, 0, 0, 8, 2, 0, 0, 0]);
    // Heartbeats received keep the server's idle timer happy.
    p.server.receive(
        &mut BytesMut::from(&[0, 0, 0, 8, 2, 0, 0, 0][..]),
        t0 + 1_500,
        &mut p.sev,
    );
    p.server.tick(t0 + 3_000, &mut p.sev);
    assert!(!p.server.is_finished());
    // Then nothing for twice our idle-time-out.
    p.server.tick(t0 + 3_500, &mut p.sev);
    assert!(p.server.is_finished());
    assert_eq!(
        closed_error(&p.sev),
        Some((false, condition::RESOURCE_LIMIT_EXCEEDED.into()))
    );
    p.pump();
    assert_eq!(
        closed_error(&p.cev),
        Some((true, condition::RESOURCE_LIMIT_EXCEEDED.into()))
    );
}

#[test]
fn transfers_wait_for_the_peer_window_and_resume_in_order() {
    let narrow = Config {
        incoming_window: 4,
        ..Config::default()
    };
    let (mut p, l) = linked(narrow, Config::default());
    p.client.grant_credit(l.c_recv, 100).unwrap();
    p.pump();
    for i in 0..10 {
        p.server
            .send_bytes(l.s_send, tag(i), true, 0, Bytes::from(vec![i as u8; 10]))
            .unwrap();
    }
    // Only the window's worth went out.
    assert_eq!(p.server.queued_deliveries(l.s_send.session()), 6);
    let mut out = p.server.take_output();
    let mut dec = FrameDecoder::new(1 << 20);
    let mut n = 0;
    while dec.decode(&mut out).unwrap().is_some() {
        n += 1;
    }
    assert_eq!(n, 4);
    // Let the frames through again and shuttle: the client's window flows reopen it.
    let mut resend = BytesMut::new();
    for i in 0..4u32 {
        let t = Transfer {
            handle: l.s_send.handle,
            delivery_id: Some(i),
            delivery_tag: Some(tag(i)),
            message_format: Some(0),
            settled: Some(true),
            ..Transfer::default()
        };
        encode_transfer(0, &t, &[i as u8; 10], &mut resend);
    }
    p.to_client.unsplit(resend);
    p.pump();
    let got = messages(&p.cev);
    assert_eq!(got.len(), 10);
    for (i, (id, m)) in got.iter().enumerate() {
        assert_eq!((*id, m[0]), (i as u32, i as u8));
    }
    assert_eq!(p.server.queued_deliveries(l.s_send.session()), 0);
}

/// Feeds hand-made frames from the client to the server.
fn inject(p: &mut Pair, frames: BytesMut) {
    let mut frames = frames;
    p.server.receive(&mut frames, p.now, &mut p.sev);
    p.pump();
}

fn transfer_frame(handle: u32, id: u32) -> BytesMut {
    let t = Transfer {
        handle,
        delivery_id: Some(id),
        delivery_tag: Some(tag(id)),
        message_format: Some(0),
        ..Transfer::default()
    };
    let mut wire = BytesMut::new();
    encode_transfer(0, &t, b"x", &mut wire);
    wire
}

#[test]
fn a_transfer_on_an_unknown_handle_ends_the_session() {
    let (mut p, _) = linked(Config::default(), Config::default());
    inject(&mut p, transfer_frame(99, 0));
    let Some(Event::End { error, .. }) = p.sev.last() else {
        panic!("{:?}", p.sev)
    };
    assert_eq!(
        error.as_ref().unwrap().condition,
        condition::UNATTACHED_HANDLE
    );
    assert!(
        matches!(p.cev.last(), Some(Event::End { error: Some(e), .. }) if e.condition == condition::UNATTACHED_HANDLE)
    );
    assert!(p.client.is_open() && p.server.is_open());
}

#[test]
fn a_transfer_without_credit_detaches_the_link() {
    let (mut p, l) = linked(Config::default(), Config::default());
    inject(&mut p, transfer_frame(l.c_send.handle, 0));
    assert!(
        matches!(&p.sev[..], [Event::Detach { link, error: Some(e), closed: true, .. }]
        if *link == l.s_recv && e.condition == condition::TRANSFER_LIMIT_EXCEEDED)
    );
    assert!(
        matches!(&p.cev[..], [Event::Detach { link, error: Some(e), .. }]
        if *link == l.c_send && e.condition == condition::TRANSFER_LIMIT_EXCEEDED)
    );
}

#[test]
fn a_message_over_the_link_limit_detaches_with_message_size_exceeded() {
    let (mut p, l) = linked(Config::default(), Config::default());
    p.server.set_max_message_size(l.s_recv, Some(1000)).unwrap();
    p.server.grant_credit(l.s_recv, 1).unwrap();
    p.pump();
    p.client
        .send_bytes(l.c_send, tag(0), false, 0, Bytes::from(vec![0; 2000]))
        .unwrap();
    p.pump();
    assert!(matches!(&p.sev[..], [Event::Detach { error: Some(e), .. }]
        if e.condition == condition::MESSAGE_SIZE_EXCEEDED));
    assert!(p.server.is_open());
}

#[test]
fn an_aborted_delivery_is_dropped() {
    let small = Config {
        max_frame_size: 512,
        ..Config::default()
    };
    let (mut p, l) = linked(small.clone(), small);
    p.server.grant_credit(l.s_recv, 5).unwrap();
    p.pump();
    let mut wire = BytesMut::new();
    let first = Transfer {
        handle: l.c_send.handle,
        delivery_id: Some(0),
        delivery_tag: Some(tag(0)),
        more: true,
        ..Transfer::default()
    };
    encode_transfer(0, &first, b"part", &mut wire);
    let abort = Transfer {
        handle: l.c_send.handle,
        aborted: true,
        ..Transfer::default()
    };
    encode_transfer(0, &abort, b"", &mut wire);
    wire.unsplit(transfer_frame(l.c_send.handle, 1));
    inject(&mut p, wire);
    assert_eq!(messages(&p.sev), [(1, Bytes::from_static(b"x"))]);
}

#[test]
fn a_reused_handle_and_a_window_violation_end_the_session() {
    let (mut p, l) = linked(Config::default(), Config::default());
    let attach = Attach {
        name: "dup".into(),
        handle: l.c_send.handle,
        role: Role::Sender,
        initial_delivery_count: Some(0),
        target: Some(LinkTarget::Node(target("Q"))),
        ..Attach::default()
    };
    let mut wire = BytesMut::new();
    encode_frame(0, &Performative::Attach(Box::new(attach)), &[], &mut wire);
    inject(&mut p, wire);
    assert!(
        matches!(p.sev.last(), Some(Event::End { error: Some(e), .. }) if e.condition == condition::HANDLE_IN_USE)
    );

    let narrow = Config {
        incoming_window: 4,
        ..Config::default()
    };
    let (mut p, l) = linked(Config::default(), narrow);
    p.server.grant_credit(l.s_recv, 100).unwrap();
    p.pump();
    let mut wire = BytesMut::new();
    for i in 0..5 {
        wire.unsplit(transfer_frame(l.c_send.handle, i));
    }
    inject(&mut p, wire);
    assert_eq!(messages(&p.sev).len(), 4);
    assert!(
        matches!(p.sev.last(), Some(Event::End { error: Some(e), .. }) if e.condition == condition::WINDOW_VIOLATION)
    );
}

#[test]
fn garbage_after_the_headers_closes_with_decode_error() {
    let mut p = opened(Config::default(), Config::default());
    // A described value whose descriptor is no performative.
    inject(
        &mut p,
        BytesMut::from(&[0, 0, 0, 12, 2, 0, 0, 0, 0x00, 0x53, 0xff, 0x45][..]),
    );
    assert!(p.server.is_finished());
    let (remote, condition) = closed_error(&p.sev).unwrap();
    assert_eq!((remote, condition.as_str()), (false, "amqp:decode-error"));
    let Some(Event::Closed { error: Some(e), .. }) = p.cev.last() else {
        panic!()
    };
    assert_eq!(e.condition, condition::DECODE_ERROR);
    assert!(e.description.as_ref().is_some_and(|d| !d.is_empty()));
}

#[test]
fn an_oversized_frame_closes_with_framing_error() {
    let mut p = opened(Config::default(), Config::default());
    inject(&mut p, BytesMut::from(&[0xff, 0, 0, 0, 2, 0, 0, 0][..]));
    assert_eq!(
        closed_error(&p.sev),
        Some((false, condition::FRAMING_ERROR.into()))
    );
}

/// Issue 18, point 2: until the open is exchanged, frames are at most 512 bytes: a SASL
/// frame header claiming more is refused at once, and so is an open over 512 bytes; an
/// open that keeps to it lifts the limit to our max-frame-size.
#[test]
fn frames_over_512_bytes_before_open_are_framing_errors() {
    let mut server = Connection::server(Config::default(), SaslServer::plain_and_anonymous());
    let mut input = BytesMut::new();
    ProtocolHeader::Sasl.encode(&mut input);
    input.extend_from_slice(&[0, 0, 2, 1, 2, 1, 0, 0]);
    let mut events = Vec::new();
    server.receive(&mut input, 0, &mut events);
    assert!(server.is_finished(), "{events:?}");
    assert!(
        matches!(&events[..], [Event::Closed { error: Some(e), .. }] if e.condition == condition::FRAMING_ERROR),
        "{events:?}"
    );

    let mut open = Open::new("c");
    open.hostname = Some("h".repeat(600).as_str().into());
    let mut input = BytesMut::new();
    ProtocolHeader::Amqp.encode(&mut input);
    encode_frame(0, &Performative::Open(open), &[], &mut input);
    let mut server = Connection::server(Config::default(), SaslServer::none());
    let mut events = Vec::new();
    server.receive(&mut input, 0, &mut events);
    assert_eq!(
        closed_error(&events),
        Some((false, condition::FRAMING_ERROR.into()))
    );

    // After a small open, a 100 KiB frame is taken.
    let (mut p, l) = linked(Config::default(), Config::default());
    p.server.grant_credit(l.s_recv, 1).unwrap();
    p.pump();
    p.client
        .send_bytes(l.c_send, tag(0), false, 0, Bytes::from(vec![7; 100 * 1024]))
        .unwrap();
    p.pump();
    assert_eq!(messages(&p.sev).len(), 1);
}

/// Issue 18, point 9: a frame on a channel above channel-max, or naming a handle above
/// handle-max, closes the connection with framing-error (AMQP 1.0 sections 2.7.2, 2.7.3).
#[test]
fn a_channel_or_handle_above_the_maximum_is_a_framing_error() {
    let small = Config {
        channel_max: 3,
        handle_max: 7,
        ..Config::default()
    };
    let mut p = opened(Config::default(), small.clone());
    let begin = Begin {
        remote_channel: None,
        next_outgoing_id: 0,
        incoming_window: 10,
        outgoing_window: 10,
        handle_max: 10,
        offered_capabilities: Vec::new(),
        desired_capabilities: Vec::new(),
        properties: Vec::new(),
    };
    let mut wire = BytesMut::new();
    encode_frame(4, &Performative::Begin(begin), &[], &mut wire);
    inject(&mut p, wire);
    assert_eq!(
        closed_error(&p.sev),
        Some((false, condition::FRAMING_ERROR.into()))
    );

    for handle_frame in [
        Performative::Attach(Box::new(Attach {
            name: "high".into(),
            handle: 8,
            role: Role::Sender,
            ..Attach::default()
        })),
        Performative::Flow(Flow {
            handle: Some(1000),
            link_credit: Some(1),
            ..Flow::default()
        }),
        Performative::Detach(crate::performative::Detach {
            handle: u32::MAX,
            closed: true,
            error: None,
        }),
    ] {
        let (mut p, _) = linked(Config::default(), small.clone());
        let mut wire = BytesMut::new();
        encode_frame(0, &handle_frame, &[], &mut wire);
        inject(&mut p, wire);
        assert_eq!(
            closed_error(&p.sev),
            Some((false, condition::FRAMING_ERROR.into())),
            "{handle_frame:?}"
        );
    }
}

/// Issue 18, limits: past `max_links` links attached, an attach is refused with
/// resource-limit-exceeded (null terminus, closed detach) and the connection carries on;
/// a peer that leaves the refusals unanswered ends its session at twice the limit.
#[test]
fn links_beyond_max_links_are_refused() {
    let server_config = Config {
        max_links: 2,
        ..Config::default()
    };
    let (mut p, l) = linked(Config::default(), server_config);
    let session = l.c_send.session();
    let third = p
        .client
        .attach_sender(session, "third", target("Q"))
        .unwrap();
    p.pump();
    assert!(
        !p.sev.iter().any(|e| matches!(e, Event::Attach { .. })),
        "the server's caller never sees the refused attach: {:?}",
        p.sev
    );
    assert!(
        p.cev.iter().any(
            |e| matches!(e, Event::Detach { link, error: Some(e), closed: true, .. }
            if *link == third && e.condition == condition::RESOURCE_LIMIT_EXCEEDED)
        ),
        "{:?}",
        p.cev
    );
    assert!(p.server.is_open());
    assert_eq!(p.server.footprint().live_links, 2);

    // Attaches written by hand, never detached: the session ends at four held links.
    let mut wire = BytesMut::new();
    for h in 10..14 {
        let attach = Attach {
            name: format!("hostile-{h}").as_str().into(),
            handle: h,
            role: Role::Sender,
            target: Some(LinkTarget::Node(target("Q"))),
            ..Attach::default()
        };
        encode_frame(0, &Performative::Attach(Box::new(attach)), &[], &mut wire);
    }
    inject(&mut p, wire);
    assert!(
        p.sev
            .iter()
            .any(|e| matches!(e, Event::End { error: Some(e), .. }
            if e.condition == condition::RESOURCE_LIMIT_EXCEEDED)),
        "{:?}",
        p.sev
    );
    assert!(
        p.server.footprint().links <= 4,
        "{:?}",
        p.server.footprint()
    );
}

/// Issue 18, limits: incomplete multi-frame deliveries hold at most
/// `max_incomplete_bytes` together; one delivery alone may pass it (up to its link's
/// max-message-size).
#[test]
fn incomplete_deliveries_are_bounded_per_connection() {
    let server_config = Config {
        max_incomplete_bytes: 1000,
        ..Config::default()
    };
    let mut p = opened(Config::default(), server_config);
    let session = p.client.begin().unwrap();
    let one = p.client.attach_sender(session, "one", target("Q")).unwrap();
    let two = p.client.attach_sender(session, "two", target("Q")).unwrap();
    p.pump();
    let links = p.accept_attaches();
    for (link, _) in &links {
        p.server.grant_credit(*link, 10).unwrap();
    }
    p.pump();
    let part = |handle: u32, id: u32, more: bool, n: usize| {
        let t = Transfer {
            handle,
            delivery_id: Some(id),
            delivery_tag: Some(tag(id)),
            more,
            ..Transfer::default()
        };
        let mut wire = BytesMut::new();
        encode_transfer(0, &t, &vec![1; n], &mut wire);
        wire
    };
    // One delivery alone: 3 x 600 bytes, past the bound, is whole.
    let mut wire = part(one.handle, 0, true, 600);
    wire.unsplit(part(one.handle, 0, true, 600));
    wire.unsplit(part(one.handle, 0, false, 600));
    inject(&mut p, wire);
    assert_eq!(messages(&p.sev).len(), 1);
    assert_eq!(p.server.footprint().incomplete_bytes, 0);
    // Two at once: the frame that passes 1000 bytes detaches its link.
    inject(&mut p, part(one.handle, 1, true, 600));
    assert_eq!(p.server.footprint().incomplete_bytes, 600);
    inject(&mut p, part(two.handle, 2, true, 600));
    assert!(
        p.sev
            .iter()
            .any(|e| matches!(e, Event::Detach { error: Some(e), .. }
            if e.condition == condition::RESOURCE_LIMIT_EXCEEDED)),
        "{:?}",
        p.sev
    );
    assert_eq!(p.server.footprint().incomplete_bytes, 600);
    assert!(p.server.is_open());
}

/// Issue 18, point 6: a receiver that grants 2^32-1 credit gets deliveries.
#[test]
fn a_grant_of_all_the_credit_there_is_delivers() {
    let (mut p, l) = linked(Config::default(), Config::default());
    p.client.grant_credit(l.c_recv, u32::MAX).unwrap();
    p.pump();
    assert_eq!(p.server.credit(l.s_send), u32::MAX);
    p.server
        .send(l.s_send, tag(0), true, 0, |o| o.extend_from_slice(b"m"))
        .unwrap();
    p.pump();
    assert_eq!(messages(&p.cev).len(), 1);
    assert_eq!(p.server.credit(l.s_send), u32::MAX - 1);
}

/// A server that accepted the AMQP header without SASL, fed `data`.
fn feed_after_headers(data: &[u8]) -> (Connection, Vec<Event>) {
    let config = Config {
        max_frame_size: 4096,
        ..Config::default()
    };
    let mut server = Connection::server(config, SaslServer::none());
    let mut input = BytesMut::new();
    ProtocolHeader::Amqp.encode(&mut input);
    input.extend_from_slice(data);
    // Zeros complete any partial frame and then are a frame of size 0: always an error.
    input.extend_from_slice(&[0; 8192]);
    let mut events = Vec::new();
    server.receive(&mut input, 0, &mut events);
    (server, events)
}

proptest! {
    #[test]
    fn arbitrary_bytes_after_the_headers_end_in_an_error_close(
        data in proptest::collection::vec(any::<u8>(), 0..600)
    ) {
        let (server, events) = feed_after_headers(&data);
        prop_assert!(server.is_finished());
        let closed = closed_error(&events);
        prop_assert!(matches!(closed, Some((false, ref c)) if !c.is_empty()), "{:?}", closed);
    }
}

#[test]
fn a_transfer_sent_in_a_state_reaches_the_peer_with_it_across_frames() {
    let small = Config {
        max_frame_size: 512,
        ..Config::default()
    };
    let (mut p, l) = linked(small.clone(), small);
    p.server.grant_credit(l.s_recv, 10).unwrap();
    p.pump();
    let state = DeliveryState::Transactional {
        txn_id: Bytes::from_static(b"\0\0\0\x01"),
        outcome: None,
    };
    let body: Bytes = vec![7u8; 2000].into();
    let id = p
        .client
        .send_in_state(l.c_send, tag(0), state.clone(), body.clone())
        .unwrap();
    p.pump();
    let got: Vec<_> = p
        .sev
        .iter()
        .filter_map(|e| match e {
            Event::Message {
                delivery_id,
                settled,
                state,
                message,
                ..
            } => Some((*delivery_id, *settled, state.clone(), message.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(got, vec![(id, false, Some(state), body)]);
}
