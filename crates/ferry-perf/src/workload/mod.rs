//! The reports' workloads. Each runs its applications as tasks on the harness's one
//! current-thread runtime (inside a `LocalSet`), so the client side costs little CPU
//! and the server is what gets measured.
//!
//! - [`rr`]: RR-CC, client-mode requesters and responders over ten request queues.
//! - [`verify`]: request tags and reply checks; [`tally`]: the counters a step shares.

pub mod rr;
pub mod tally;
pub mod verify;
