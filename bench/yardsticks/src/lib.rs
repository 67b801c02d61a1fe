//! Yardsticks: what this machine allows a queue manager at best, measured with the same
//! shapes as Ferry's benchmarks, so Ferry's figures can be quoted as ratios of them.
//!
//! - The **relay** ([`routing`], [`relay`], [`relay_uring`], [`relay_load`]): request/reply
//!   clients and a relay that forwards each request to a responder and the reply back,
//!   with no queuing, no persistence and no protocol beyond a length and a correlation id.
//!   Its round trips/s and CPU per round trip are the ceiling of RR-CC for any broker on
//!   this machine (binaries `relay` and `relay-load`; `ferry perf rr-cc --relay-baseline
//!   target/release/relay-load` runs it next to every step). The same routing runs on
//!   epoll through `mio` or on io_uring ([`relay_io`]), to measure what io_uring saves.
//! - The **group-commit writer** ([`group_commit`]): producer threads append 2 KiB
//!   records that one writer thread makes durable with `pwrite` + `fdatasync` in groups.
//!   Its records/s and fsyncs/s are the ceiling of persistent messaging on this disk
//!   (binary `group-commit`).
//!
//! Every binary prints one `RESULT key=value ...` line per measured step, the form
//! `ferry perf` and the bench scripts read. The code is plain std threads and one `mio`
//! event loop (or one io_uring) per thread: a yardstick must cost less than what it
//! measures.

pub mod byte_size;
pub mod cpu_time;
pub mod error;
pub mod frame;
pub mod group_commit;
pub mod relay;
pub mod relay_io;
pub mod relay_load;
pub mod relay_uring;
pub mod routing;

pub use error::YardstickError;
