//! The relay and its load generator over real loopback sockets: replies reach the
//! requester that asked, and a measured step counts only valid round trips. Each test runs
//! against every relay (epoll, two ways of reading, and io_uring): they share the routing, and must behave alike.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use ferry_yardsticks::frame::{self, Header, Role, HEADER_LEN};
use ferry_yardsticks::relay_io::{BoundRelay, RelayIo};
use ferry_yardsticks::relay_load::{self, StepConfig};

/// A relay on a free port, stopped when dropped.
struct RunningRelay {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl RunningRelay {
    fn start(io: RelayIo) -> RunningRelay {
        let mut relay = BoundRelay::bind(io, "127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = relay.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || relay.run(&flag).unwrap());
        RunningRelay {
            addr,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for RunningRelay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

fn connect(addr: SocketAddr, role: Role) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(&[role.byte()]).unwrap();
    s
}

fn read_frame(s: &mut TcpStream) -> (u32, Vec<u8>) {
    let mut header = [0u8; HEADER_LEN];
    s.read_exact(&mut header).unwrap();
    let h = Header::read(&header).unwrap();
    let mut payload = vec![0; h.len];
    s.read_exact(&mut payload).unwrap();
    (h.corr, payload)
}

fn each_reply_goes_back_to_the_requester_that_asked(io: RelayIo) {
    let relay = RunningRelay::start(io);
    let mut responder = connect(relay.addr, Role::Responder);
    let mut a = connect(relay.addr, Role::Requester);
    let mut b = connect(relay.addr, Role::Requester);
    a.write_all(&frame::make(3, 0, b'a')).unwrap();
    b.write_all(&frame::make(5, 0, b'b')).unwrap();

    let first = read_frame(&mut responder);
    let second = read_frame(&mut responder);
    assert_ne!(first.0, second.0, "requests carry their requester's number");
    // Answer in the opposite order, echoing each request's payload in upper case.
    for (corr, payload) in [second, first] {
        let reply: Vec<u8> = payload.iter().map(u8::to_ascii_uppercase).collect();
        let mut f = frame::make(reply.len(), corr, 0);
        f[HEADER_LEN..].copy_from_slice(&reply);
        responder.write_all(&f).unwrap();
    }
    assert_eq!(read_frame(&mut a).1, b"AAA");
    assert_eq!(read_frame(&mut b).1, b"BBBBB");
}

fn a_request_sent_before_any_responder_waits_for_one(io: RelayIo) {
    let relay = RunningRelay::start(io);
    let mut requester = connect(relay.addr, Role::Requester);
    requester.write_all(&frame::make(4, 0, b'q')).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let mut responder = connect(relay.addr, Role::Responder);
    let (corr, payload) = read_frame(&mut responder);
    assert_eq!(payload, b"qqqq");
    responder.write_all(&frame::make(1, corr, b'r')).unwrap();
    assert_eq!(read_frame(&mut requester).1, b"r");
}

fn a_measured_step_counts_valid_round_trips_and_the_relays_cpu(io: RelayIo) {
    let relay = RunningRelay::start(io);
    let config = StepConfig {
        addr: relay.addr,
        requesters: 4,
        size: 2048,
        threads: 2,
        warmup: Duration::from_millis(50),
        secs: Duration::from_millis(300),
    };
    let result = relay_load::run_step(&config).unwrap();
    assert!(result.round_trips > 0, "no round trip in 300 ms");
    assert_eq!(result.bad_frames, 0);
    assert!(
        result.relay_cpu.is_some(),
        "the relay's stats were not read"
    );
    let relay_stats = relay_load::fetch_stats(relay.addr).unwrap();
    assert!(
        relay_stats.frames >= 2 * result.round_trips,
        "every round trip is a request and a reply through the relay"
    );
    let line = result.result_line(io.name());
    assert!(line.starts_with(&format!("RESULT bench=rr relay={io} n=4 size=2048 ")));
    assert!(line.contains(&format!(" rts={} ", result.round_trips)));
    assert!(!line.contains("BAD_FRAMES"));
}

fn a_step_refuses_sizes_it_cannot_carry(io: RelayIo) {
    let relay = RunningRelay::start(io);
    let config = StepConfig {
        addr: relay.addr,
        requesters: 1,
        size: usize::MAX,
        threads: 1,
        warmup: Duration::ZERO,
        secs: Duration::ZERO,
    };
    assert!(relay_load::run_step(&config).is_err());
}

/// A frame whose bytes say where they are, to catch a lost, repeated or reordered chunk.
fn numbered_frame(payload_len: usize, corr: u32, salt: u8) -> Vec<u8> {
    let mut f = frame::make(payload_len, corr, 0);
    for (i, b) in f[HEADER_LEN..].iter_mut().enumerate() {
        *b = (i % 251) as u8 ^ salt;
    }
    f
}

fn a_frame_larger_than_the_socket_buffers_arrives_whole_and_in_order(io: RelayIo) {
    // Several MB cannot leave in one send: the relay must carry on after partial sends
    // and grow its receive buffer.
    const LEN: usize = 6 << 20;
    let relay = RunningRelay::start(io);
    let mut responder = connect(relay.addr, Role::Responder);
    let mut requester = connect(relay.addr, Role::Requester);
    let request = numbered_frame(LEN, 0, 0);
    let writer = {
        let mut requester = requester.try_clone().unwrap();
        std::thread::spawn(move || requester.write_all(&request).unwrap())
    };
    let (corr, payload) = read_frame(&mut responder);
    writer.join().unwrap();
    assert_eq!(payload, numbered_frame(LEN, 0, 0)[HEADER_LEN..]);
    let reply = numbered_frame(LEN, corr, 0x5a);
    let writer = std::thread::spawn(move || responder.write_all(&reply).unwrap());
    let (_, payload) = read_frame(&mut requester);
    writer.join().unwrap();
    assert_eq!(payload, numbered_frame(LEN, 0, 0x5a)[HEADER_LEN..]);
}

fn closed_connections_leave_the_others_served(io: RelayIo) {
    let relay = RunningRelay::start(io);
    let mut gone_responder = connect(relay.addr, Role::Responder);
    let mut responder = connect(relay.addr, Role::Responder);
    let mut gone = connect(relay.addr, Role::Requester);
    gone.write_all(&frame::make(1, 0, b'g')).unwrap();
    // Wait until the relay has routed it (to either responder), then close both.
    std::thread::sleep(Duration::from_millis(100));
    drop(gone);
    // Its last bytes and its close arrive together: the relay must still see the close.
    gone_responder
        .write_all(&frame::make(1, u32::MAX, b'z'))
        .unwrap();
    drop(gone_responder);
    std::thread::sleep(Duration::from_millis(100));

    // A reply for the closed requester is dropped; requests reach the remaining responder.
    let mut requester = connect(relay.addr, Role::Requester);
    for round in 0..3u8 {
        requester
            .write_all(&frame::make(2, 0, b'a' + round))
            .unwrap();
        let (corr, payload) = loop {
            let (corr, payload) = read_frame(&mut responder);
            if payload != b"g" {
                break (corr, payload);
            }
            // The closed requester's request came here: answer it; nobody must get it.
            responder.write_all(&frame::make(1, corr, b'x')).unwrap();
        };
        assert_eq!(payload, vec![b'a' + round; 2]);
        responder.write_all(&frame::make(3, corr, b'r')).unwrap();
        assert_eq!(read_frame(&mut requester).1, b"rrr");
    }
    // A connection that breaks the protocol is closed, and the relay goes on.
    let mut bad = TcpStream::connect(relay.addr).unwrap();
    bad.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    bad.write_all(b"E").unwrap();
    assert_eq!(bad.read(&mut [0u8; 1]).unwrap(), 0, "the relay closes it");
    assert!(relay_load::fetch_stats(relay.addr).unwrap().frames >= 7);
}

/// Runs each scenario above against the epoll relays and the io_uring relay.
macro_rules! for_each_relay {
    ($($scenario:ident),* $(,)?) => {
        mod mio {
            $(#[test]
            fn $scenario() {
                super::$scenario(super::RelayIo::Mio);
            })*
        }
        mod mio_short_reads {
            $(#[test]
            fn $scenario() {
                super::$scenario(super::RelayIo::MioShortReads);
            })*
        }
        mod uring {
            $(#[test]
            fn $scenario() {
                super::$scenario(super::RelayIo::Uring);
            })*
        }
    };
}

for_each_relay!(
    each_reply_goes_back_to_the_requester_that_asked,
    a_request_sent_before_any_responder_waits_for_one,
    a_measured_step_counts_valid_round_trips_and_the_relays_cpu,
    a_step_refuses_sizes_it_cannot_carry,
    a_frame_larger_than_the_socket_buffers_arrives_whole_and_in_order,
    closed_connections_leave_the_others_served,
);
