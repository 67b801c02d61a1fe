//! The client's socket sharing against an in-process fake queue manager built with
//! ferry-wire over loopback TCP: routing, batching, SHARECNV and broken sockets.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::BytesMut;
use ferry_client::{ConnectOptions, Connection};
use ferry_mqi::{FixedStr, ReasonCode};
use ferry_wire::{
    decode_frame, encode_reply, encode_request, max_frame_len, ClientHello, Frame, HelloFlags,
    Reply, Request, ServerHello, Status,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, Mutex};
use tokio::task::JoinHandle;

/// A request the fake server did not answer by itself.
struct Got {
    sock: usize,
    frame: Frame,
    /// How many frames the read that brought this one held.
    batch: usize,
}

#[derive(Default)]
struct Sock {
    writer: Option<OwnedWriteHalf>,
    reader: Option<JoinHandle<()>>,
}

struct Fake {
    addr: String,
    events: mpsc::UnboundedReceiver<Got>,
    socks: Arc<Mutex<Vec<Sock>>>,
    accepted: Arc<AtomicUsize>,
}

enum Answer {
    Accept { sharecnv: u32 },
    Refuse(ReasonCode),
}

impl Fake {
    async fn start(answer: Answer) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = format!("127.0.0.1({})", listener.local_addr().unwrap().port());
        let (tx, events) = mpsc::unbounded_channel();
        let socks: Arc<Mutex<Vec<Sock>>> = Arc::default();
        let accepted = Arc::new(AtomicUsize::new(0));
        let (s2, a2) = (socks.clone(), accepted.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let index = a2.fetch_add(1, Ordering::SeqCst);
                let (mut r, mut w) = stream.into_split();
                let mut buf = BytesMut::new();
                let hello = loop {
                    if let Some(h) = ClientHello::decode(&mut buf).unwrap() {
                        break h;
                    }
                    if r.read_buf(&mut buf).await.unwrap() == 0 {
                        return;
                    }
                };
                assert_eq!(hello.channel.as_str(), "SYSTEM.DEF.SVRCONN");
                let reply = match answer {
                    Answer::Accept { sharecnv } => ServerHello {
                        status: Status::OK,
                        major: 1,
                        minor: 0,
                        flags: HelloFlags::empty(),
                        max_msg_length: 1 << 20,
                        heartbeat_interval: 0,
                        sharecnv,
                        qmgr_name: FixedStr::new("QM1").unwrap(),
                        server_version: "fake".into(),
                        message: String::new(),
                        compression: Default::default(),
                    },
                    Answer::Refuse(rc) => ServerHello::refuse(rc, "refused by the fake"),
                };
                let mut out = BytesMut::new();
                reply.encode(&mut out).unwrap();
                w.write_all(&out).await.unwrap();
                let socks = s2.clone();
                let tx = tx.clone();
                let reader = tokio::spawn(async move {
                    loop {
                        buf.reserve(64 * 1024);
                        match r.read_buf(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(_) => {}
                        }
                        let mut frames = Vec::new();
                        while let Some(f) = decode_frame(&mut buf, max_frame_len(1 << 20)).unwrap()
                        {
                            frames.push(f);
                        }
                        let batch = frames.len();
                        for frame in frames {
                            let auto = match Request::decode_at(&frame, 0) {
                                Ok(Request::Conn(_)) => Some(Reply::Conn {
                                    status: Status::OK,
                                    qmgr_name: FixedStr::new("QM1").unwrap(),
                                }),
                                Ok(Request::Disc { .. }) => {
                                    Some(Reply::Disc { status: Status::OK })
                                }
                                _ => None,
                            };
                            match auto {
                                Some(rep) => {
                                    let mut out = BytesMut::new();
                                    encode_reply(
                                        frame.conversation,
                                        frame.request_id,
                                        &rep,
                                        &mut out,
                                    )
                                    .unwrap();
                                    let mut s = socks.lock().await;
                                    if let Some(w) = s[index].writer.as_mut() {
                                        let _ = w.write_all(&out).await;
                                    }
                                }
                                None => {
                                    let _ = tx.send(Got {
                                        sock: index,
                                        frame,
                                        batch,
                                    });
                                }
                            }
                        }
                    }
                });
                let mut s = s2.lock().await;
                if s.len() <= index {
                    s.resize_with(index + 1, Sock::default);
                }
                s[index] = Sock {
                    writer: Some(w),
                    reader: Some(reader),
                };
            }
        });
        Fake {
            addr,
            events,
            socks,
            accepted,
        }
    }

    fn opts(&self) -> ConnectOptions {
        ConnectOptions::client(&self.addr, "SYSTEM.DEF.SVRCONN").application_name("test")
    }

    async fn next(&mut self) -> Got {
        self.events.recv().await.expect("fake server stopped")
    }

    /// Writes all replies in one write.
    async fn reply_all(&self, sock: usize, replies: &[(&Frame, Reply)]) {
        let mut out = BytesMut::new();
        for (f, r) in replies {
            encode_reply(f.conversation, f.request_id, r, &mut out).unwrap();
        }
        let mut s = self.socks.lock().await;
        s[sock]
            .writer
            .as_mut()
            .unwrap()
            .write_all(&out)
            .await
            .unwrap();
    }

    async fn send_raw(&self, sock: usize, out: &[u8]) {
        let mut s = self.socks.lock().await;
        s[sock]
            .writer
            .as_mut()
            .unwrap()
            .write_all(out)
            .await
            .unwrap();
    }

    async fn drop_socket(&self, sock: usize) {
        let mut s = self.socks.lock().await;
        s[sock].writer = None;
        if let Some(r) = s[sock].reader.take() {
            r.abort();
        }
    }
}

fn cmit_reply(reason: ReasonCode) -> Reply {
    Reply::Cmit {
        status: Status::from_reason(reason),
    }
}

fn back_reply(reason: ReasonCode) -> Reply {
    Reply::Back {
        status: Status::from_reason(reason),
    }
}

#[tokio::test]
async fn replies_routed_to_their_conversation_out_of_order() {
    let mut fake = Fake::start(Answer::Accept { sharecnv: 10 }).await;
    let c1 = Connection::connect(&fake.opts()).await.unwrap();
    let c2 = Connection::connect(&fake.opts()).await.unwrap();
    assert_eq!(fake.accepted.load(Ordering::SeqCst), 1, "one shared socket");
    assert_eq!(c1.queue_manager_name(), "QM1");
    let server = async {
        let a = fake.next().await;
        let b = fake.next().await;
        let (cmit, back) = match Request::decode(&a.frame).unwrap() {
            Request::Cmit => (a, b),
            _ => (b, a),
        };
        assert_ne!(cmit.frame.conversation, back.frame.conversation);
        // Answer the later request first.
        fake.reply_all(
            0,
            &[
                (&back.frame, back_reply(ReasonCode::None)),
                (&cmit.frame, cmit_reply(ReasonCode::BackedOut)),
            ],
        )
        .await;
    };
    let (r1, r2, ()) = tokio::join!(c1.commit(), c2.backout(), server);
    assert_eq!(r1.unwrap_err().reason, ReasonCode::BackedOut);
    assert_eq!(r2, Ok(()));
    c1.disconnect().await.unwrap();
    c2.disconnect().await.unwrap();
}

#[tokio::test]
async fn dropped_socket_fails_outstanding_and_later_calls_with_2009() {
    let mut fake = Fake::start(Answer::Accept { sharecnv: 10 }).await;
    let c1 = Connection::connect(&fake.opts()).await.unwrap();
    let c2 = Connection::connect(&fake.opts()).await.unwrap();
    let server = async {
        let got = fake.next().await;
        fake.drop_socket(got.sock).await;
    };
    let (r1, ()) = tokio::join!(c1.commit(), server);
    assert_eq!(r1.unwrap_err().reason, ReasonCode::ConnectionBroken);
    assert_eq!(
        c2.backout().await.unwrap_err().reason,
        ReasonCode::ConnectionBroken
    );
    assert_eq!(
        c1.commit().await.unwrap_err().reason,
        ReasonCode::ConnectionBroken
    );
    // A new connection does not reuse the broken socket.
    let c3 = Connection::connect(&fake.opts()).await.unwrap();
    assert_eq!(fake.accepted.load(Ordering::SeqCst), 2);
    drop(c3);
}

#[tokio::test]
async fn sharecnv_limit_opens_a_second_socket() {
    let mut fake = Fake::start(Answer::Accept { sharecnv: 2 }).await;
    let c1 = Connection::connect(&fake.opts()).await.unwrap();
    let c2 = Connection::connect(&fake.opts()).await.unwrap();
    assert_eq!(fake.accepted.load(Ordering::SeqCst), 1);
    let c3 = Connection::connect(&fake.opts()).await.unwrap();
    assert_eq!(fake.accepted.load(Ordering::SeqCst), 2);
    let server = async {
        let got = fake.next().await;
        assert_eq!(
            got.sock, 1,
            "the third conversation rides the second socket"
        );
        fake.reply_all(got.sock, &[(&got.frame, cmit_reply(ReasonCode::None))])
            .await;
    };
    let (r, ()) = tokio::join!(c3.commit(), server);
    assert_eq!(r, Ok(()));
    for c in [c1, c2, c3] {
        c.disconnect().await.unwrap();
    }
}

#[tokio::test]
async fn sharecnv_one_means_a_socket_per_connection() {
    let fake = Fake::start(Answer::Accept { sharecnv: 10 }).await;
    let opts = fake.opts().sharecnv(1);
    let c1 = Connection::connect(&opts).await.unwrap();
    let c2 = Connection::connect(&opts).await.unwrap();
    assert_eq!(fake.accepted.load(Ordering::SeqCst), 2);
    c1.disconnect().await.unwrap();
    c2.disconnect().await.unwrap();
}

#[tokio::test]
async fn many_requests_in_one_write_and_many_replies_in_one_read() {
    const N: usize = 8;
    let mut fake = Fake::start(Answer::Accept { sharecnv: 10 }).await;
    let mut tasks = tokio::task::JoinSet::new();
    let mut conns = Vec::new();
    for _ in 0..N {
        conns.push(Connection::connect(&fake.opts()).await.unwrap());
    }
    for c in conns {
        tasks.spawn(async move {
            let r = c.commit().await;
            (c, r)
        });
    }
    let mut got = Vec::new();
    for _ in 0..N {
        got.push(fake.next().await);
    }
    // The client queued all N requests before its writer ran: one write, one read.
    let batches: Vec<usize> = got.iter().map(|g| g.batch).collect();
    assert!(
        got.iter().all(|g| g.batch == N),
        "requests were not batched: {batches:?}"
    );
    got.reverse();
    let replies: Vec<(&Frame, Reply)> = got
        .iter()
        .map(|g| (&g.frame, cmit_reply(ReasonCode::None)))
        .collect();
    fake.reply_all(0, &replies).await;
    while let Some(done) = tasks.join_next().await {
        let (c, r) = done.unwrap();
        assert_eq!(r, Ok(()));
        c.disconnect().await.unwrap();
    }
}

#[tokio::test]
async fn client_answers_server_heartbeats() {
    let mut fake = Fake::start(Answer::Accept { sharecnv: 10 }).await;
    let c = Connection::connect(&fake.opts()).await.unwrap();
    let mut out = BytesMut::new();
    encode_request(0, 77, &Request::Heartbeat, &mut out).unwrap();
    fake.send_raw(0, &out).await;
    let got = fake.next().await;
    assert_eq!((got.frame.conversation, got.frame.request_id), (0, 77));
    assert_eq!(Reply::decode(&got.frame), Ok(Reply::Heartbeat));
    c.disconnect().await.unwrap();
}

#[tokio::test]
async fn an_abandoned_call_is_not_overtaken() {
    let mut fake = Fake::start(Answer::Accept { sharecnv: 10 }).await;
    let c = Connection::connect(&fake.opts()).await.unwrap();
    // Poll the commit once (it sends), then give up on it.
    let gave_up = tokio::time::timeout(std::time::Duration::ZERO, c.commit()).await;
    assert!(gave_up.is_err());
    let server = async {
        let first = fake.next().await;
        assert!(matches!(Request::decode(&first.frame), Ok(Request::Cmit)));
        fake.reply_all(0, &[(&first.frame, cmit_reply(ReasonCode::BackedOut))])
            .await;
        let second = fake.next().await;
        assert!(matches!(Request::decode(&second.frame), Ok(Request::Back)));
        fake.reply_all(0, &[(&second.frame, back_reply(ReasonCode::None))])
            .await;
    };
    let (r, ()) = tokio::join!(c.backout(), server);
    assert_eq!(
        r,
        Ok(()),
        "the late commit reply must not answer the backout"
    );
    c.disconnect().await.unwrap();
}

#[tokio::test]
async fn refused_hello_reports_the_servers_reason() {
    let fake = Fake::start(Answer::Refuse(ReasonCode::UnknownChannelName)).await;
    let e = Connection::connect(&fake.opts()).await.unwrap_err();
    assert_eq!(e.reason, ReasonCode::UnknownChannelName);
}

#[tokio::test]
async fn nothing_listening_is_host_not_available() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let opts = ConnectOptions::client(&format!("127.0.0.1({port})"), "SYSTEM.DEF.SVRCONN");
    let e = Connection::connect(&opts).await.unwrap_err();
    assert_eq!(e.reason, ReasonCode::HostNotAvailable);
}

#[cfg(unix)]
#[tokio::test]
async fn missing_bindings_socket_is_qmgr_not_available() {
    let opts = ConnectOptions::bindings("/nonexistent/ferry/qm.sock");
    let e = Connection::connect(&opts).await.unwrap_err();
    assert_eq!(e.reason, ReasonCode::QMgrNotAvailable);
}
