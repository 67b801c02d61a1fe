//! Probes of the native protocol (MQ clients' port, SYSTEM.DEF.SVRCONN): random bytes,
//! lying frame lengths, a hello and never a CONN, slowloris mid-frame, heartbeat 0 then
//! silence, requests pipelined without reading a reply, and a flood of connect/close.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use ferry_client::Connection;
use ferry_mqi::{
    GetOptionFlags, GetOptions, MatchOptions, MessageDescriptor, ObjectDescriptor, OpenOptions,
    PutOptions, ReasonCode,
};
use ferry_wire::{
    decode_frame, encode_request, max_frame_len, ClientHello, CloseNotice, Reply, Request,
    ServerHello, Verb, MAGIC,
};

use super::harness::{scaled, serial, Probe, Setup, GIVE_UP, SHORT_TIME_LIMIT_SECS};
use crate::common::{Rng, TestQueueManager};

/// Server memory one native socket may hold while it lasts: its 64 KiB read buffer and
/// 64 KiB output buffer, the reader, writer and heartbeat tasks, the conversation. What a
/// socket *claims* (a frame length) must not count: the read buffer grows with what
/// arrives. Measured: ~100-125 KiB per connected socket in a debug build.
const NATIVE_PER_CONNECTION_KIB: u64 = 256;

/// Server memory one socket that sends requests without reading replies may make the
/// server hold: the replies queued for it until its socket drains. A server that stops
/// reading a socket whose replies are not read (back-pressure) holds one read buffer and
/// what is already queued; one that reads on queues every reply (here 32 KiB each, for a
/// ~600-byte request).
const PIPELINED_PER_CONNECTION_KIB: u64 = 4 * 1024;

/// How long after its last byte a stalled socket may stay open: the probes' time limits
/// (HandshakeTimeout, PartialFrameTimeout) plus 3 s for the server's timer and a busy
/// machine.
fn stall_cut_off() -> Duration {
    Duration::from_secs(SHORT_TIME_LIMIT_SECS + 3)
}

/// The negotiated frame limit of a default SVRCONN (MAXMSGL 4 MiB).
fn default_max_frame() -> u32 {
    max_frame_len(4 * 1024 * 1024)
}

/// A client hello for SYSTEM.DEF.SVRCONN asking for `heartbeat_secs`.
fn hello_bytes(heartbeat_secs: u32) -> Vec<u8> {
    let hello = ClientHello {
        channel: ferry_mqi::FixedStr::new("SYSTEM.DEF.SVRCONN").expect("channel name"),
        heartbeat_interval: heartbeat_secs,
        sharecnv: 1,
        ..ClientHello::default()
    };
    let mut out = BytesMut::new();
    hello.encode(&mut out).expect("encode hello");
    out.to_vec()
}

/// One request frame.
fn request_bytes(conv: u32, rid: u32, req: &Request) -> Vec<u8> {
    let mut out = BytesMut::new();
    encode_request(conv, rid, req, &mut out).expect("encode request");
    out.to_vec()
}

/// A CONN on conversation 1.
fn conn_bytes() -> Vec<u8> {
    request_bytes(1, 1, &Request::Conn(Default::default()))
}

/// A frame header: length, conversation, request id, verb, no flags.
fn frame_header(len: u32, conv: u32, rid: u32, verb: Verb) -> Vec<u8> {
    let mut h = Vec::with_capacity(16);
    h.extend_from_slice(&len.to_le_bytes());
    h.extend_from_slice(&conv.to_le_bytes());
    h.extend_from_slice(&rid.to_le_bytes());
    h.push(verb.code());
    h.extend_from_slice(&[0, 0, 0]);
    h
}

/// How long a hostile connect may take: a SYN the kernel dropped while the listen backlog
/// was full is sent again after 1 s, then 3 s.
const CONNECT_WITHIN: Duration = Duration::from_secs(3);

/// A TCP connection to the listener.
fn tcp(qm: &TestQueueManager) -> std::io::Result<TcpStream> {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], qm.port()));
    let s = TcpStream::connect_timeout(&addr, CONNECT_WITHIN)?;
    s.set_nodelay(true)?;
    Ok(s)
}

/// Opens `n` sockets and writes `bytes(i)` on each, keeping them; sockets that could not
/// be opened or written are noted (the kernel or the server turned them away: not a
/// failure in itself, the good clients' round trips say whether the service suffered).
fn open_and_write(
    p: &mut Probe,
    n: usize,
    mut bytes: impl FnMut(usize) -> Vec<u8>,
) -> Vec<TcpStream> {
    let mut held = Vec::with_capacity(n);
    let mut failed = 0;
    let mut first = None;
    for i in 0..n {
        match tcp(&p.qm).and_then(|mut s| s.write_all(&bytes(i)).map(|()| s)) {
            Ok(s) => held.push(s),
            Err(e) => {
                failed += 1;
                first.get_or_insert(e.to_string());
            }
        }
    }
    if failed > 0 {
        p.note(format!(
            "{failed} of {n} hostile sockets could not be opened and written: {first:?}"
        ));
    }
    held
}

/// Reads from `s` until EOF (at most `within`): the server's hello answer, then frames;
/// returns the close notice sent before the close.
fn read_close_notice(s: &mut TcpStream, within: Duration) -> Result<CloseNotice, String> {
    let deadline = Instant::now() + within;
    let mut buf = BytesMut::new();
    let mut chunk = [0u8; 16 * 1024];
    s.set_read_timeout(Some(Duration::from_millis(50)))
        .map_err(|e| e.to_string())?;
    loop {
        match s.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => break,
        }
        if Instant::now() > deadline {
            return Err(format!(
                "the socket was still open after {within:?} ({} bytes received)",
                buf.len()
            ));
        }
    }
    let hello = ServerHello::decode(&mut buf)
        .map_err(|e| format!("the server's hello: {e}"))?
        .ok_or("no hello answer before the close")?;
    if hello.status.reason != ReasonCode::None {
        return Err(format!("the hello was refused: {hello:?}"));
    }
    let mut notice = None;
    while let Ok(Some(f)) = decode_frame(&mut buf, u32::MAX) {
        if f.verb == Verb::Error {
            notice = CloseNotice::decode(&f).ok();
        }
    }
    notice.ok_or_else(|| "the socket closed without a close notice".to_string())
}

/// Random bytes, the right magic then noise, or a valid hello then noise, on 300
/// (long: 5,000) sockets, half of them kept open afterwards: each is refused or cut off
/// by the handshake and partial-frame limits, and nothing stays behind.
#[test]
fn native_random_bytes_are_refused_and_leave_nothing_behind() {
    let _serial = serial();
    let n = scaled(300, 5000);
    let mut p = Probe::start(Setup::new("H.RANDOM"));
    p.abusing(n, NATIVE_PER_CONNECTION_KIB);
    p.bad_connections(n as u64);
    let mut rng = Rng::new(0x4057_11e5);
    let hello = hello_bytes(300);
    let mut kept = Vec::new();
    for i in 0..n {
        let mut bytes = match i % 3 {
            0 => Vec::new(),
            1 => MAGIC.to_vec(),
            _ => hello.clone(),
        };
        let len = rng.below(300);
        bytes.extend(rng.bytes(len));
        // The server may close before everything is written: that is its answer.
        let Ok(mut s) = tcp(&p.qm) else {
            p.note(format!(
                "random-bytes socket {i} of {n} could not be opened"
            ));
            continue;
        };
        let _ = s.write_all(&bytes);
        if i % 2 == 0 {
            kept.push(s);
        }
    }
    p.wait_closed_by_server(
        "random bytes on sockets the client keeps open (refusal, handshake and partial-frame limits)",
        &mut kept,
        stall_cut_off(),
    );
    drop(kept);
    p.finish();
}

/// Frame headers that lie about their length: 200 (long: 2,000) connected sockets each
/// announce a frame just under the negotiated maximum (4 MiB) and send 16 bytes of it;
/// the server holds what arrived, not what was announced, and PartialFrameTimeout cuts
/// them off. Twenty more announce 100 MB: each gets a close notice at once.
#[test]
fn native_lying_frame_lengths_cost_nothing_and_are_cut_off() {
    let _serial = serial();
    let n = scaled(200, 2000);
    let mut p = Probe::start(Setup::new("H.LYING").max_channels(n as u64 + 50));
    p.abusing(n + 20, NATIVE_PER_CONNECTION_KIB);
    p.bad_connections(n as u64 + 20);
    let claim = default_max_frame() - 1;
    let mut wire = hello_bytes(300);
    wire.extend(conn_bytes());
    wire.extend(frame_header(claim, 1, 2, Verb::Put));
    wire.extend([0u8; 16]);
    let held = open_and_write(&mut p, n, |_| wire.clone());
    p.wait_accepted(held.len());

    let mut huge = hello_bytes(300);
    huge.extend(conn_bytes());
    huge.extend(frame_header(100_000_000, 1, 2, Verb::Put));
    let began = Instant::now();
    let mut noticed = 0;
    for i in 0..20 {
        let Ok(mut s) = tcp(&p.qm) else {
            p.fail(format!("100 MB claim {i}: no socket"));
            continue;
        };
        let _ = s.write_all(&huge);
        match read_close_notice(&mut s, Duration::from_secs(2)) {
            Ok(notice) => {
                noticed += 1;
                p.check(notice.reason != ReasonCode::None && !notice.text.is_empty(), || {
                    format!("a 100 MB frame header: expected a close notice with a reason and text, got {notice:?}")
                });
            }
            Err(e) => p.fail(format!(
                "a 100 MB frame header: expected a close notice and the socket closed within 2 s: {e}"
            )),
        }
    }
    p.note(format!(
        "{noticed}/20 sockets announcing 100 MB closed with a notice in {} ms",
        began.elapsed().as_millis()
    ));
    p.wait_fds_back(
        "sockets stalled inside a frame announced at 4 MiB (PartialFrameTimeout)",
        stall_cut_off(),
    );
    drop(held);
    p.finish();
}

/// 150 (long: 2,000) sockets send a valid hello and never a CONN. A hello starts a channel
/// instance, as in MQ, so while they wait they hold MaxChannels (100) and fresh native
/// connections are refused with 2537 — for HandshakeTimeout at most, not for ever as
/// before (they stayed open after 11 minutes). The good clients already connected keep
/// their answers meanwhile, and once HandshakeTimeout has closed the sockets a fresh
/// native connection is admitted again.
#[test]
fn native_hello_without_conn_does_not_lock_out_clients() {
    let _serial = serial();
    let n = scaled(150, 2000);
    let mut p = Probe::start(Setup::new("H.HELLO").fresh_connections(false));
    p.abusing(n, NATIVE_PER_CONNECTION_KIB);
    p.bad_connections(n as u64);
    let hello = hello_bytes(300);
    let held = open_and_write(&mut p, n, |_| hello.clone());
    p.wait_accepted(held.len());
    std::thread::sleep(Duration::from_millis(1500));
    p.wait_fds_back(
        "sockets that sent a hello and no CONN (HandshakeTimeout)",
        stall_cut_off(),
    );
    let fresh = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(async {
            let conn = ferry_client::Connection::connect(&p.qm.client()).await?;
            conn.disconnect().await
        });
    p.check(fresh.is_ok(), || {
        format!(
            "a fresh native connection after HandshakeTimeout: expected it admitted, got {fresh:?}"
        )
    });
    drop(held);
    p.finish();
}

/// Slowloris: 100 (long: 1,000) connected sockets start a PUT frame and send one more
/// byte of it every PartialFrameTimeout + 1 s; each is cut off after its first silence.
#[test]
fn native_slowloris_mid_frame_is_cut_off() {
    let _serial = serial();
    let n = scaled(100, 1000);
    let rounds = scaled(1, 5);
    let gap = Duration::from_secs(SHORT_TIME_LIMIT_SECS + 1);
    let mut p = Probe::start(Setup::new("H.SLOWLORIS").max_channels(n as u64 + 50));
    p.abusing(n, NATIVE_PER_CONNECTION_KIB);
    p.bad_connections(n as u64);
    let mut wire = hello_bytes(300);
    wire.extend(conn_bytes());
    let frame = frame_header(400, 1, 2, Verb::Put);
    wire.extend(&frame[..4]);
    let mut held = open_and_write(&mut p, n, |_| wire.clone());
    p.wait_accepted(held.len());
    let mut open = held.len();
    for round in 0..rounds {
        std::thread::sleep(gap);
        open = 0;
        for s in held.iter_mut() {
            // Writing to a socket the server closed fails (at the latest on the second
            // write after the reset).
            if s.write_all(&[0u8]).is_ok() {
                open += 1;
            }
        }
        p.note(format!(
            "slowloris round {round}: {open} sockets still took a byte, server fds {}",
            p.fds()
        ));
    }
    let _ = open;
    p.wait_fds_back(
        "slowloris sockets silent for longer than PartialFrameTimeout",
        stall_cut_off(),
    );
    drop(held);
    p.finish();
}

/// 100 (long: 1,000) clients connect asking for heartbeat 0 and then say nothing: the
/// server insists on the channel's HBINT (here 1 s) and drops them after two intervals
/// plus its slack.
#[test]
fn native_heartbeat_zero_then_silence_is_dropped() {
    let _serial = serial();
    let n = scaled(100, 1000);
    let hbint = 1;
    let mut p = Probe::start(
        Setup::new("H.HB0")
            .max_channels(n as u64 + 50)
            .mqsc(&format!(
                "ALTER CHANNEL(SYSTEM.DEF.SVRCONN) CHLTYPE(SVRCONN) HBINT({hbint})"
            )),
    );
    p.abusing(n, NATIVE_PER_CONNECTION_KIB);
    p.bad_connections(n as u64);
    let mut wire = hello_bytes(0);
    wire.extend(conn_bytes());
    let held = open_and_write(&mut p, n, |_| wire.clone());
    p.wait_accepted(held.len());
    // docs/protocol.md §7: silent for twice the interval plus 5 s slack ends a socket.
    p.wait_fds_back(
        "connected sockets that asked for heartbeat 0 and went silent (HBINT 1)",
        Duration::from_secs(2 * hbint + 5 + 3),
    );
    drop(held);
    p.finish();
}

/// Reads one reply with request id `rid` from a raw socket (after the hello answer).
fn read_reply(
    s: &mut TcpStream,
    buf: &mut BytesMut,
    hello_done: &mut bool,
    rid: u32,
) -> Result<Reply, String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if !*hello_done {
            if let Some(h) = ServerHello::decode(buf).map_err(|e| e.to_string())? {
                if h.status.reason != ReasonCode::None {
                    return Err(format!("hello refused: {h:?}"));
                }
                *hello_done = true;
                continue;
            }
        } else if let Some(f) = decode_frame(buf, u32::MAX).map_err(|e| e.to_string())? {
            if f.request_id == rid && f.is_reply() {
                return Reply::decode(&f).map_err(|e| e.to_string());
            }
            continue;
        }
        if Instant::now() > deadline {
            return Err(format!("no reply {rid} within 10 s"));
        }
        match s.read(&mut chunk) {
            Ok(0) => return Err("closed".into()),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Puts `count` messages of `size` bytes on `queue` with a client connection; `Err` says
/// which put failed or went unanswered for [`GIVE_UP`].
pub fn put_messages(
    qm: &TestQueueManager,
    queue: &str,
    count: usize,
    size: usize,
) -> Result<(), String> {
    puts(qm, queue, count, Bytes::from(vec![b'p'; size])).map(drop)
}

/// Puts `count` small messages on `queue` (CorrelIds no selector names), one at a time;
/// returns the slowest put.
pub fn timed_puts(qm: &TestQueueManager, queue: &str, count: usize) -> Result<Duration, String> {
    puts(qm, queue, count, Bytes::from_static(b"selected by nobody"))
}

fn puts(qm: &TestQueueManager, queue: &str, count: usize, body: Bytes) -> Result<Duration, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let opts = qm.client().sharecnv(1).connect_timeout(GIVE_UP);
    rt.block_on(async {
        let conn = Connection::connect(&opts)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let od = ObjectDescriptor::queue(queue).map_err(|e| e.to_string())?;
        let q = conn
            .open(&od, OpenOptions::OUTPUT)
            .await
            .map_err(|e| format!("open {queue}: {e}"))?;
        let mut slowest = Duration::ZERO;
        for i in 0..count {
            let mut md = MessageDescriptor::default();
            md.correl_id[..8].copy_from_slice(&(i as u64).to_be_bytes());
            let began = Instant::now();
            match tokio::time::timeout(
                GIVE_UP,
                q.put(&mut md, &PutOptions::default(), body.clone()),
            )
            .await
            {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(format!("put {i} of {count} to {queue}: {e}")),
                Err(_) => {
                    return Err(format!(
                        "put {i} of {count} to {queue}: no answer within {GIVE_UP:?}"
                    ))
                }
            }
            slowest = slowest.max(began.elapsed());
        }
        let _ = conn.disconnect().await;
        Ok(slowest)
    })
}

/// 8 (long: 64) sockets each send 2,000 (long: 20,000) GETs that browse a 32 KiB message,
/// pipelined, and never read a reply: the server must stop reading a socket whose
/// replies pile up (back-pressure) instead of queueing 32 KiB per 600-byte request.
#[test]
fn native_pipelined_requests_without_reading_replies_stay_bounded() {
    let _serial = serial();
    let sockets = scaled(8, 64);
    let requests = scaled(2000, 20000);
    let mut p = Probe::start(
        Setup::new("H.PIPELINE")
            .max_channels(sockets as u64 + 50)
            .mqsc("DEFINE QLOCAL(PIPE.Q)"),
    );
    if let Err(e) = put_messages(&p.qm, "PIPE.Q", 1, 32 * 1024) {
        p.fail(format!("putting the message to browse: {e}"));
    }
    p.abusing(sockets, PIPELINED_PER_CONNECTION_KIB);
    let mut held = Vec::new();
    for i in 0..sockets {
        let mut s = match tcp(&p.qm) {
            Ok(s) => s,
            Err(e) => {
                p.fail(format!("pipelining socket {i}: {e}"));
                continue;
            }
        };
        let _ = s.set_read_timeout(Some(Duration::from_millis(50)));
        let mut wire = hello_bytes(300);
        wire.extend(conn_bytes());
        wire.extend(request_bytes(
            1,
            2,
            &Request::Open {
                od: ObjectDescriptor::queue("PIPE.Q").expect("queue name"),
                options: OpenOptions::BROWSE | OpenOptions::INPUT_SHARED,
            },
        ));
        let (mut buf, mut hello_done) = (BytesMut::new(), false);
        let opened = s
            .write_all(&wire)
            .map_err(|e| e.to_string())
            .and_then(|()| read_reply(&mut s, &mut buf, &mut hello_done, 2));
        let hobj = match opened {
            Ok(Reply::Open { status, hobj, .. }) if status.reason == ReasonCode::None => hobj,
            other => {
                p.fail(format!("pipelining socket {i}: OPEN PIPE.Q: {other:?}"));
                continue;
            }
        };
        held.push((s, hobj));
    }
    let get = |hobj| Request::Get {
        hobj,
        md: MessageDescriptor::default(),
        gmo: GetOptions {
            options: GetOptionFlags::BROWSE_FIRST | GetOptionFlags::NO_SYNCPOINT,
            wait_interval: 0,
            match_options: MatchOptions::empty(),
        },
        max_len: 64 * 1024,
    };
    let mut written = 0usize;
    let mut blocked = 0;
    for (s, hobj) in held.iter_mut() {
        // A server that applies back-pressure stops reading: the write then times out.
        let _ = s.set_write_timeout(Some(Duration::from_millis(300)));
        let mut batch = Vec::new();
        for rid in 0..requests {
            batch.extend(request_bytes(1, 3 + rid as u32, &get(*hobj)));
        }
        match s.write_all(&batch) {
            Ok(()) => written += requests,
            Err(_) => blocked += 1,
        }
    }
    p.note(format!(
        "{blocked} of {} sockets were blocked by back-pressure; {written} requests written in full by the others",
        held.len()
    ));
    // Let the server work through what it read while the good clients run.
    std::thread::sleep(Duration::from_secs(2));
    drop(held);
    p.wait_fds_back("closed pipelining sockets", stall_cut_off());
    p.finish();
}

/// 1,000 (long: 20,000) connections made and closed as fast as four threads can: half
/// close right after connecting, half after a hello and a CONN. Nothing stays behind.
#[test]
fn native_connect_close_flood_leaves_nothing_behind() {
    let _serial = serial();
    let n = scaled(1000, 20000);
    let mut p = Probe::start(Setup::new("H.CHURN"));
    // At most a few hundred are open at any moment; count each as a connection anyway
    // for the memory bound of the churn (at most four are being set up at once).
    p.abusing(4, NATIVE_PER_CONNECTION_KIB);
    p.bad_connections(n as u64);
    let port = p.qm.port();
    let mut wire = hello_bytes(300);
    wire.extend(conn_bytes());
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let wire = wire.clone();
            std::thread::spawn(move || {
                let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
                let mut failed = 0;
                for i in 0..n / 4 {
                    match TcpStream::connect_timeout(&addr, CONNECT_WITHIN) {
                        Ok(mut s) => {
                            if (i + t) % 2 == 1 {
                                let _ = s.write_all(&wire);
                            }
                        }
                        Err(_) => failed += 1,
                    }
                }
                failed
            })
        })
        .collect();
    let failed: usize = threads.into_iter().map(|t| t.join().unwrap_or(n)).sum();
    if failed > 0 {
        p.note(format!("{failed} of {n} connects failed during the churn"));
    }
    p.wait_fds_back("connections closed by their clients", stall_cut_off());
    p.finish();
}
