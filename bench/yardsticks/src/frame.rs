//! The relay's wire format, as small as request/reply can be.
//!
//! A connection first sends one role byte ([`Role`]). Then both directions carry frames:
//! an 8-byte header, `[payload length: u32 LE][correlation: u32 LE]`, then the payload.
//! The relay overwrites a request's correlation with the requester's connection number;
//! the responder answers with a frame carrying the same correlation, which is how the relay
//! routes the reply back. A stats connection gets one [`RelayStats`] frame and is closed.

/// Length of a frame header.
pub const HEADER_LEN: usize = 8;

/// Largest payload the relay accepts (the harness's largest message is 2 MB).
pub const MAX_PAYLOAD: usize = 64 << 20;

/// What a connection does, announced by its first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Sends requests, receives replies (`Q`).
    Requester,
    /// Receives requests, answers each with a reply of the same correlation (`R`).
    Responder,
    /// Receives the relay's CPU time and frame count once (`S`).
    Stats,
}

impl Role {
    /// The byte that announces this role.
    pub fn byte(self) -> u8 {
        match self {
            Role::Requester => b'Q',
            Role::Responder => b'R',
            Role::Stats => b'S',
        }
    }

    /// The role a first byte announces, if any.
    pub fn from_byte(b: u8) -> Option<Role> {
        match b {
            b'Q' => Some(Role::Requester),
            b'R' => Some(Role::Responder),
            b'S' => Some(Role::Stats),
            _ => None,
        }
    }
}

/// A decoded frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Payload bytes after the header.
    pub len: usize,
    /// Correlation: the requester's connection number once the relay has routed it.
    pub corr: u32,
}

impl Header {
    /// Reads a header from the first [`HEADER_LEN`] bytes, or `None` if fewer are there.
    pub fn read(bytes: &[u8]) -> Option<Header> {
        let h: &[u8; HEADER_LEN] = bytes.get(..HEADER_LEN)?.try_into().ok()?;
        Some(Header {
            len: u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize,
            corr: u32::from_le_bytes([h[4], h[5], h[6], h[7]]),
        })
    }
}

/// Sets the correlation of the frame whose header starts `frame`.
pub fn set_corr(frame: &mut [u8], corr: u32) {
    frame[4..HEADER_LEN].copy_from_slice(&corr.to_le_bytes());
}

/// A whole frame: header, then `payload_len` bytes of `fill`.
pub fn make(payload_len: usize, corr: u32, fill: u8) -> Vec<u8> {
    let len = u32::try_from(payload_len).expect("payload length fits the header");
    let mut v = vec![fill; HEADER_LEN + payload_len];
    v[0..4].copy_from_slice(&len.to_le_bytes());
    set_corr(&mut v, corr);
    v
}

/// The relay's own counters, sent to a stats connection: what the load generator
/// subtracts over its measured window to get the relay's CPU per round trip.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RelayStats {
    /// The relay process's user CPU so far, µs.
    pub user_us: u64,
    /// The relay process's system CPU so far, µs.
    pub system_us: u64,
    /// Frames forwarded so far (requests and replies).
    pub frames: u64,
}

impl RelayStats {
    /// Payload length of a stats frame.
    pub const PAYLOAD_LEN: usize = 24;

    /// The stats as one frame.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = make(Self::PAYLOAD_LEN, 0, 0);
        v[HEADER_LEN..HEADER_LEN + 8].copy_from_slice(&self.user_us.to_le_bytes());
        v[HEADER_LEN + 8..HEADER_LEN + 16].copy_from_slice(&self.system_us.to_le_bytes());
        v[HEADER_LEN + 16..HEADER_LEN + 24].copy_from_slice(&self.frames.to_le_bytes());
        v
    }

    /// Reads a stats frame; `None` unless it is a whole one.
    pub fn decode(frame: &[u8]) -> Option<RelayStats> {
        let h = Header::read(frame)?;
        if h.len != Self::PAYLOAD_LEN || frame.len() < HEADER_LEN + Self::PAYLOAD_LEN {
            return None;
        }
        let field = |i: usize| {
            let start = HEADER_LEN + 8 * i;
            frame[start..start + 8]
                .try_into()
                .ok()
                .map(u64::from_le_bytes)
        };
        Some(RelayStats {
            user_us: field(0)?,
            system_us: field(1)?,
            frames: field(2)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_carries_its_length_and_correlation() {
        let mut f = make(2048, 7, 0x11);
        assert_eq!(f.len(), HEADER_LEN + 2048);
        assert_eq!(Header::read(&f), Some(Header { len: 2048, corr: 7 }));
        set_corr(&mut f, 0xdead_beef);
        assert_eq!(Header::read(&f).unwrap().corr, 0xdead_beef);
        assert!(f[HEADER_LEN..].iter().all(|&b| b == 0x11));
        assert_eq!(Header::read(&f[..HEADER_LEN - 1]), None);
    }

    #[test]
    fn roles_round_trip_through_their_byte() {
        for r in [Role::Requester, Role::Responder, Role::Stats] {
            assert_eq!(Role::from_byte(r.byte()), Some(r));
        }
        assert_eq!(Role::from_byte(b'E'), None);
    }

    #[test]
    fn stats_round_trip() {
        let s = RelayStats {
            user_us: 1,
            system_us: u64::MAX,
            frames: 42,
        };
        assert_eq!(RelayStats::decode(&s.encode()), Some(s));
        assert_eq!(RelayStats::decode(&make(8, 0, 0)), None);
    }
}
