//! The hostile-client suite (issue 18): no client, however hostile, may stall, starve or
//! lock out the queue manager.
//!
//! Each probe starts its own real `ferry` server, records its RSS and open descriptors,
//! and abuses it as an unauthenticated client could: random bytes, lying lengths, stalls
//! at every stage of the handshake and mid-frame, floods of idle and half-open
//! connections up to the descriptor limit, AMQP disposition, credit, session and link
//! abuse, huge selectors, huge MQSC commands and tens of thousands of DEFINEs. While it
//! runs, a well-behaved native client (put, then get by CorrelId) and a well-behaved
//! AMQP client (send, receive, accept) do round trips in a loop, and every round trip
//! (and every fresh connection they make) must be answered within
//! [`harness::GOOD_ROUND_TRIP_BOUND`] (1 s). Afterwards, once the server's time limits
//! have had time to act, its RSS and descriptors must be back near the baseline; while
//! it runs, RSS growth must stay under the probe's documented per-connection bound x
//! connections (+ [`harness::RSS_SLACK_KIB`]). Each probe prints one summary line
//! (`hostile: probe=... connections=... rss_growth_max=... good_rtt_max=... fds=...`),
//! also appended to `target/tmp/hostile-summary.txt`.
//!
//! The probes set short time limits through qm.ini's `Limits:` stanza
//! ([`harness::SHORT_TIME_LIMIT_SECS`]) so stalls end in seconds. Run by `cargo test`
//! in a short form; `FERRY_HOSTILE_SCALE=long` (scripts/hostile.sh, release build) runs
//! thousands of sockets per probe and longer stalls. docs/hostile-clients.md lists the
//! probes, their bounds and what each proves.
//!
//! Probes run one at a time ([`harness::serial`]).

mod common;

#[path = "hostile/admin.rs"]
mod admin;
#[path = "hostile/amqp.rs"]
mod amqp;
#[path = "hostile/amqp_peer.rs"]
mod amqp_peer;
#[path = "hostile/harness.rs"]
mod harness;
#[path = "hostile/native.rs"]
mod native;
