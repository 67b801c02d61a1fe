//! Admission: clients can never take what the queue manager itself needs.
//!
//! At most qm.ini `Limits/MaxConnections` client sockets are open at once on all
//! listeners and AMQP channels, handshakes included; one more is closed as soon as it is
//! accepted (FRY9780W), `ferry status` counts them, and the administrator still gets in
//! over the bindings socket. A process whose open-file limit leaves less room lowers the
//! limit at start (FRY9781I) and keeps `ReservedFileDescriptors` for itself.

mod common;

use common::*;
use ferry_mqi::OpenOptions;
use std::io::Read;
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Whether the server closed `s` (EOF or reset) within `wait`.
fn closed_within(s: &mut TcpStream, wait: Duration) -> bool {
    s.set_read_timeout(Some(wait)).expect("read timeout");
    let mut buf = [0u8; 64];
    match s.read(&mut buf) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
    }
}

fn connect_raw(port: u16) -> TcpStream {
    TcpStream::connect(("127.0.0.1", port)).expect("TCP connect")
}

/// `ferry status QM` once it contains `want` (the status file is rewritten once a
/// second).
fn status_containing(qm: &TestQueueManager, want: &str) -> String {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let out = qm.ferry(&["status", qm.name()]);
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        if text.contains(want) {
            return text;
        }
        assert!(Instant::now() < deadline, "no {want} in: {text}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[tokio::test]
async fn sockets_over_max_connections_are_closed_at_once_and_the_administrator_gets_in() {
    let mut qm = TestQueueManager::create_with(bin(), "ADMIT", &[]);
    qm.set_ini("Limits", "MaxConnections", "6");
    qm.set_ini("Limits", "HandshakeTimeout", "600");
    qm.launch();
    let mqsc = qm.mqsc("DEFINE QLOCAL(ADMIT.Q)");
    assert!(mqsc.status.success(), "{}", stdout(&mqsc));

    // Six silent sockets, on both protocols' ports: they are admitted and held.
    let mut held: Vec<TcpStream> = (0..3)
        .flat_map(|_| [connect_raw(qm.port()), connect_raw(qm.amqp_port())])
        .collect();
    for s in &mut held {
        assert!(!closed_within(s, Duration::from_millis(200)), "admitted");
    }
    // The seventh, on either port, is closed as soon as it is accepted.
    for port in [qm.port(), qm.amqp_port()] {
        let mut extra = connect_raw(port);
        let started = Instant::now();
        assert!(
            closed_within(&mut extra, Duration::from_secs(5)),
            "a socket over MaxConnections on port {port} must be closed"
        );
        assert!(started.elapsed() < Duration::from_secs(2));
    }
    let log = qm.error_log();
    assert!(log.contains("FRY9780W"), "{log}");
    assert!(
        log.contains("6 client sockets are open, the most this queue manager admits"),
        "{log}"
    );
    status_containing(&qm, "SOCKETS(6) MAXCONN(6) REFUSED(2)");

    // The administrator is not a client socket: MQSC over the bindings socket works.
    let out = qm.mqsc("DISPLAY QLOCAL(ADMIT.Q) CURDEPTH");
    assert!(out.status.success(), "{}", stdout(&out));
    assert!(stdout(&out).contains("CURDEPTH(0)"), "{}", stdout(&out));

    // Places come free when sockets close: a well-behaved client connects and works.
    held.clear();
    status_containing(&qm, "SOCKETS(0)");
    let conn = connect(&qm.client()).await;
    put_and_get_one(&conn, "ADMIT.Q").await;
}

#[tokio::test]
async fn a_low_open_file_limit_lowers_max_connections_and_keeps_the_reserve() {
    const OPEN_FILE_LIMIT: u64 = 400;
    let mut qm = TestQueueManager::create_with(bin(), "FDLIM", &[]);
    qm.set_open_file_limit(OPEN_FILE_LIMIT);
    // The silent sockets below must stay while they are counted.
    qm.set_ini("Limits", "HandshakeTimeout", "600");
    qm.launch();
    let log = qm.error_log();
    let line = log
        .lines()
        .find(|l| l.starts_with("FRY9781I"))
        .unwrap_or_else(|| panic!("FRY9781I at start: {log}"));
    assert!(
        line.contains("Limits/MaxConnections is 5000, but this process may open only 400 files"),
        "{line}"
    );
    // "... at most N client sockets are admitted."
    let admitted: u64 = line
        .split("at most ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a number in {line}"));
    assert!(
        (100..=OPEN_FILE_LIMIT - 128).contains(&admitted),
        "{admitted} must leave the 128 reserved descriptors: {line}"
    );

    // Clients try to take every descriptor: far more sockets than the limit allows.
    let mut sockets: Vec<TcpStream> = (0..OPEN_FILE_LIMIT + 100)
        .map(|_| connect_raw(qm.amqp_port()))
        .collect();
    let mut open = 0;
    for s in &mut sockets {
        if !closed_within(s, Duration::from_millis(50)) {
            open += 1;
        }
    }
    assert_eq!(open, admitted, "exactly the budget is admitted");

    // The queue manager still has descriptors of its own: MQSC over the bindings
    // socket answers, and persistent work (log and queue files) goes on.
    let out = qm.mqsc("DEFINE QLOCAL(FDLIM.Q)\nDISPLAY QMSTATUS ALL");
    assert!(out.status.success(), "{}", stdout(&out));
    let conn = connect(&qm.bindings()).await;
    put_and_get_one(&conn, "FDLIM.Q").await;
    let log = qm.error_log();
    assert!(
        !log.contains("FRY9782E"),
        "the process never ran out of descriptors: {log}"
    );
    sockets.clear();
}

/// Puts one message on `queue` and gets it back over `conn`.
async fn put_and_get_one(conn: &ferry_client::Connection, queue: &str) {
    let q = open(conn, queue, OpenOptions::OUTPUT | OpenOptions::INPUT_SHARED).await;
    put(&q, "admitted").await;
    assert_eq!(get_text(&q).await, "admitted");
}
