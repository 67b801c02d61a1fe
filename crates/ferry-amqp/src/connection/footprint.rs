//! What one connection holds, counted: the numbers its [`Config`](super::Config) bounds,
//! for a broker's back-pressure (bytes waiting to go out) and for tests and fuzzing that
//! check the bounds hold whatever the peer sends.

use super::Connection;

/// What a [`Connection`] holds now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Sessions, including ended ones waiting for the peer's end.
    pub sessions: usize,
    /// Links, including detached ones waiting for the peer's detach.
    pub links: usize,
    /// Links attached and not detached.
    pub live_links: usize,
    /// Deliveries we sent that the peer has not settled.
    pub unsettled_out: usize,
    /// Bytes of multi-frame deliveries being reassembled.
    pub incomplete_bytes: usize,
    /// Bytes of transfers waiting for the peer's session window.
    pub queued_bytes: usize,
    /// Bytes ready to write, and frames held until our header and open are out.
    pub output_bytes: usize,
}

impl Connection {
    /// What the connection holds now (walks its sessions and links: not for every frame).
    pub fn footprint(&self) -> Footprint {
        let mut f = Footprint {
            sessions: self.sessions.len(),
            incomplete_bytes: self.incomplete_bytes,
            output_bytes: self.output.bytes_pending(),
            ..Footprint::default()
        };
        for s in self.sessions.values() {
            f.links += s.links.len();
            f.live_links += s.links.values().filter(|l| !l.detach_sent).count();
            f.unsettled_out += s.unsettled_out.len();
            f.queued_bytes += s.queued_bytes();
            debug_assert_eq!(s.queued_bytes(), s.counted_queued_bytes());
        }
        debug_assert_eq!(self.incomplete_bytes, self.counted_incomplete());
        f
    }

    /// Bytes that wait to go out: the output, held frames and transfers waiting for the
    /// peer's session window. A broker stops taking on deliveries above its bound.
    pub fn pending_output_bytes(&self) -> usize {
        self.output.bytes_pending()
            + self
                .sessions
                .values()
                .map(|s| s.queued_bytes())
                .sum::<usize>()
    }
}
