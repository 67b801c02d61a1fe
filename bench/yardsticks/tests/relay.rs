//! The relay and its load generator over real loopback sockets: replies reach the
//! requester that asked, and a measured step counts only valid round trips.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use ferry_yardsticks::frame::{self, Header, Role, HEADER_LEN};
use ferry_yardsticks::relay::Relay;
use ferry_yardsticks::relay_load::{self, StepConfig};

/// A relay on a free port, stopped when dropped.
struct RunningRelay {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl RunningRelay {
    fn start() -> RunningRelay {
        let mut relay = Relay::bind("127.0.0.1:0".parse().unwrap()).unwrap();
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

#[test]
fn each_reply_goes_back_to_the_requester_that_asked() {
    let relay = RunningRelay::start();
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

#[test]
fn a_request_sent_before_any_responder_waits_for_one() {
    let relay = RunningRelay::start();
    let mut requester = connect(relay.addr, Role::Requester);
    requester.write_all(&frame::make(4, 0, b'q')).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let mut responder = connect(relay.addr, Role::Responder);
    let (corr, payload) = read_frame(&mut responder);
    assert_eq!(payload, b"qqqq");
    responder.write_all(&frame::make(1, corr, b'r')).unwrap();
    assert_eq!(read_frame(&mut requester).1, b"r");
}

#[test]
fn a_measured_step_counts_valid_round_trips_and_the_relays_cpu() {
    let relay = RunningRelay::start();
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
    let line = result.result_line("mio");
    assert!(line.starts_with("RESULT bench=rr relay=mio n=4 size=2048 "));
    assert!(line.contains(&format!(" rts={} ", result.round_trips)));
    assert!(!line.contains("BAD_FRAMES"));
}

#[test]
fn a_step_refuses_sizes_it_cannot_carry() {
    let relay = RunningRelay::start();
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
