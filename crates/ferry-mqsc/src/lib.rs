//! MQSC for Ferry (placeholder until the parser lands).
pub mod target;
pub use target::AdminTarget;
