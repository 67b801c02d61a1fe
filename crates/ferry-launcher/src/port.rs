//! Ports for the queue managers the launcher makes, chosen where nothing else will take
//! them between the choice and the server's bind.
//!
//! Asking the kernel for a free port (bind to port 0) hands out one from its ephemeral
//! range, the range it also gives every outgoing connection and every other bind to port
//! 0. Between the choice and `ferry start` binding it (a `ferry create` later), another
//! test's client connection or another queue manager's free port could be given that same
//! port; the listener then fails to bind and a client reaches whatever holds the port (a
//! self-connected socket, another queue manager's AMQP listener: 2539
//! MQRC_CHANNEL_CONFIG_ERROR). So ports come from below the ephemeral range, where the
//! kernel hands out none, at random, never twice from one process, and only when both
//! loopback and every address accept a bind.

use std::collections::hash_map::RandomState;
use std::collections::HashSet;
use std::hash::{BuildHasher, Hasher};
use std::net::{Ipv4Addr, TcpListener};
use std::sync::{LazyLock, Mutex};

/// The lowest port handed out: above the well-known and most registered services' ports.
const LOWEST: u16 = 20_000;

/// Where the kernel's ephemeral range starts when /proc does not say (Linux's default).
const EPHEMERAL_DEFAULT: u16 = 32_768;

/// How many random ports are tried before giving up.
const ATTEMPTS: usize = 2_000;

/// The ports this process has handed out (a test binary runs many queue managers at once).
static HANDED_OUT: LazyLock<Mutex<HashSet<u16>>> = LazyLock::new(|| Mutex::new(HashSet::new()));

/// The first port of the kernel's ephemeral range.
fn ephemeral_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse().ok())
        .unwrap_or(EPHEMERAL_DEFAULT)
}

/// A random number for choosing ports (the standard library's per-process random keys).
fn random() -> u64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0),
    );
    h.finish()
}

/// Whether a listener could bind `port` on every address and on loopback right now.
fn bindable(port: u16) -> bool {
    TcpListener::bind((Ipv4Addr::UNSPECIFIED, port)).is_ok()
        && TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok()
}

/// A port below the ephemeral range that nothing listens on, not handed out before by
/// this process; `None` when none was found (a range too small or all taken).
pub fn choose() -> Option<u16> {
    let high = ephemeral_start().max(LOWEST + 1);
    let span = u64::from(high - LOWEST);
    let mut handed_out = HANDED_OUT.lock().unwrap_or_else(|e| e.into_inner());
    for _ in 0..ATTEMPTS {
        let port = LOWEST + (random() % span) as u16;
        debug_assert!((LOWEST..high).contains(&port));
        if !handed_out.contains(&port) && bindable(port) {
            handed_out.insert(port);
            return Some(port);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_below_the_ephemeral_range_and_never_repeat() {
        let ports: Vec<u16> = (0..200).map(|_| choose().expect("a free port")).collect();
        let start = ephemeral_start();
        assert!(
            ports.iter().all(|p| (LOWEST..start).contains(p)),
            "{ports:?}"
        );
        let distinct: HashSet<_> = ports.iter().collect();
        assert_eq!(distinct.len(), ports.len(), "{ports:?}");
    }

    #[test]
    fn a_chosen_port_can_be_listened_on() {
        let port = choose().expect("a free port");
        TcpListener::bind((Ipv4Addr::UNSPECIFIED, port)).expect("bind the chosen port");
    }
}
