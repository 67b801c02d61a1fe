//! The wall clock the server reads and hands to the engine (which never reads one).

use ferry_engine::Timestamp;
use std::time::{SystemTime, UNIX_EPOCH};

/// Now, in ms since the Unix epoch.
pub fn now() -> Timestamp {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    Timestamp(ms)
}
