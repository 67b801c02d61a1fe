//! Deterministic simulation of a whole Ferry queue manager under one seed.
//!
//! The engine ([`ferry_engine::QueueManager`]), its recovery log
//! ([`ferry_store::LogCore`]) and its queue files ([`ferry_store::QueueFile`]) run on
//! simulated devices ([`ferry_store::SimDevice`]) with a simulated clock, wired as the
//! server wires them ([`node`]). Simulated applications ([`simulation`]) make random MQI
//! calls: puts and gets in and out of syncpoint, persistent and not, request/reply pairs
//! matched by CorrelId, commits, backouts, normal and broken disconnects. A reply that
//! must wait for the log is held until a flush makes the log durable past its records;
//! that, checkpoints and log room are decided by the runtime's own state machine,
//! `ferry-durability` ([`durability`] adapts it). Faults strike at random: power loss (unsynced writes kept, lost or
//! torn), short writes, fsync errors, ENOSPC in the log or a queue file; each failure
//! stops the queue manager, which restarts from the disk.
//!
//! After every step the engine's invariants, CURDEPTH and UNCOM, and what gets and
//! browses return are checked against a model ([`model`]); after every restart the
//! recovered persistent messages are checked against the states the acknowledged calls
//! allow: nothing acknowledged lost or duplicated, units of work all or nothing, nothing
//! backed out visible, no non-persistent message surviving.
//!
//! Everything random comes from the seed, so [`run`] with the seed a failure prints
//! replays it exactly (`FERRY_SIM_SEED=<seed> cargo test -p ferry-simulation --test
//! simulation`). Design and invariants: `docs/internals/simulation.md`.

pub mod durability;
pub mod model;
pub mod node;
pub mod rng;
pub mod simulation;

pub use simulation::{run, Failure, Summary};
