//! The connection state machine's per-message cost in the server role: receiving one
//! single-frame transfer of a 2 KB message (decode, window and credit bookkeeping, the
//! `Message` event) and sending one (credit, delivery id, transfer written in place).

use std::hint::black_box;

use bytes::{Bytes, BytesMut};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use ferry_amqp::connection::{ClientSasl, Config, Connection, Event, LinkId, SaslServer};
use ferry_amqp::{encode_transfer, Open, Role, Source, Target, Transfer};

/// Shuttles bytes until both sides are quiet, answering the server's open and attaches.
fn pump(client: &mut Connection, server: &mut Connection) -> Vec<Event> {
    let mut server_events = Vec::new();
    let mut client_events = Vec::new();
    for _ in 0..100 {
        let mut to_server = client.take_output();
        let mut to_client = server.take_output();
        if to_server.is_empty() && to_client.is_empty() {
            break;
        }
        let mut fresh = Vec::new();
        server.receive(&mut to_server, 0, &mut fresh);
        client.receive(&mut to_client, 0, &mut client_events);
        for e in fresh {
            match &e {
                Event::Open(_) => server.open(Open::new("broker")).unwrap(),
                Event::Attach { link, attach } => server
                    .attach_reply(*link, attach.source.clone(), attach.target.clone())
                    .unwrap(),
                _ => {}
            }
            server_events.push(e);
        }
    }
    server_events
}

/// An open server with a link the client sends on (server receives, with credit) and
/// one it receives on (server sends, with credit and a wide-open window).
fn setup() -> (Connection, LinkId, LinkId, u32) {
    let client_config = Config {
        incoming_window: u32::MAX - 1,
        ..Config::default()
    };
    let mut client = Connection::client(client_config, ClientSasl::None);
    let mut server = Connection::server(Config::default(), SaslServer::none());
    client.open(Open::new("bench")).unwrap();
    let session = client.begin().unwrap();
    let c_send = client
        .attach_sender(session, "producer", Target::default())
        .unwrap();
    let c_recv = client
        .attach_receiver(session, "consumer", Source::default())
        .unwrap();
    let events = pump(&mut client, &mut server);
    let mut s_recv = None;
    let mut s_send = None;
    for e in events {
        if let Event::Attach { link, attach } = e {
            if attach.role == Role::Sender {
                s_recv = Some(link);
            } else {
                s_send = Some(link);
            }
        }
    }
    let (s_recv, s_send) = (s_recv.unwrap(), s_send.unwrap());
    client.grant_credit(c_recv, 1 << 30).unwrap();
    server.grant_credit(s_recv, 1 << 30).unwrap();
    pump(&mut client, &mut server);
    assert_eq!(server.credit(s_send), 1 << 30);
    (server, s_recv, s_send, c_send.handle)
}

fn message_2k() -> Bytes {
    // A data section of 2 KB: descriptor 0x75, vbin32.
    let mut m = vec![0x00, 0x53, 0x75, 0xb0, 0, 0, 8, 0];
    m.extend(std::iter::repeat_n(b'x', 2048));
    m.into()
}

fn bench(c: &mut Criterion) {
    let (mut server, _s_recv, s_send, client_handle) = setup();
    let message = message_2k();
    let mut frame = BytesMut::new();
    let t = Transfer {
        handle: client_handle,
        delivery_id: Some(17),
        delivery_tag: Some(Bytes::from_static(&[0, 0, 0, 17])),
        message_format: Some(0),
        settled: Some(false),
        ..Transfer::default()
    };
    encode_transfer(0, &t, &message, &mut frame);
    let tag = Bytes::from_static(&[0, 0, 0, 1]);
    let mut events = Vec::with_capacity(4);

    c.bench_function("amqp connection: receive one 2 KB transfer (server)", |b| {
        b.iter_batched_ref(
            || frame.clone(),
            |input| {
                server.receive(input, 0, &mut events);
                black_box(events.len());
                events.clear();
                server.output().clear();
            },
            BatchSize::SmallInput,
        )
    });

    c.bench_function("amqp connection: send one 2 KB transfer (server)", |b| {
        b.iter(|| {
            let id = server
                .send(s_send, tag.clone(), true, 0, |out| {
                    out.extend_from_slice(black_box(&message))
                })
                .unwrap();
            server.output().clear();
            black_box(id)
        })
    });

    c.bench_function(
        "amqp connection: receive + send one 2 KB message (server)",
        |b| {
            b.iter_batched_ref(
                || frame.clone(),
                |input| {
                    server.receive(input, 0, &mut events);
                    for e in events.drain(..) {
                        if let Event::Message { message, .. } = e {
                            server
                                .send(s_send, tag.clone(), true, 0, |out| {
                                    out.extend_from_slice(&message)
                                })
                                .unwrap();
                        }
                    }
                    server.output().clear();
                },
                BatchSize::SmallInput,
            )
        },
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
