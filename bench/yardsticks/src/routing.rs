//! The relay's routing, shared by its two I/O loops ([`crate::relay`] on epoll through
//! `mio`, [`crate::relay_uring`] on io_uring): roles, responder choice, forwarding, the
//! requests held while no responder is connected, and the stats frame. It does no I/O:
//! the loop hands it the bytes a connection sent and takes from it, once per loop turn,
//! the bytes each connection is to be sent, so frames for one destination that arrive
//! together leave in one write.
//!
//! Requests go to the responders in turn; a request that arrives before any responder
//! waits for the first. Connection slots are never reused, so a late reply can never reach
//! a newer requester.

use std::collections::VecDeque;

use crate::cpu_time::ProcessCpu;
use crate::frame::{self, Header, RelayStats, Role, HEADER_LEN, MAX_PAYLOAD};
use crate::YardstickError;

/// What the router knows of one open connection.
#[derive(Default)]
struct Route {
    /// `None` until the role byte has arrived.
    role: Option<Role>,
    /// Bytes to send that the I/O loop has not taken yet.
    output: Vec<u8>,
    /// Close once the output is written (stats connections).
    close_when_written: bool,
}

/// The routing state of a relay: one per relay, driven by its I/O loop.
#[derive(Default)]
pub struct Router {
    routes: Vec<Option<Route>>,
    responders: Vec<usize>,
    next_responder: usize,
    /// Requests that arrived while no responder was connected.
    unrouted: VecDeque<Vec<u8>>,
    /// Connections with output added since the loop last took the list.
    dirty: Vec<usize>,
    frames: u64,
}

impl Router {
    /// An empty router.
    pub fn new() -> Router {
        Router::default()
    }

    /// Opens a slot for a new connection; the loop keys its socket by it.
    pub fn open(&mut self) -> Result<usize, YardstickError> {
        let slot = self.routes.len();
        // Slots travel as a frame's 32-bit correlation.
        if u32::try_from(slot).is_err() {
            return Err(YardstickError::Protocol("too many connections".into()));
        }
        self.routes.push(Some(Route::default()));
        Ok(slot)
    }

    /// Frames forwarded so far (requests and replies).
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Routes the whole frames at the start of `input` (what `slot` sent); returns how many
    /// bytes it used, or `None` when the connection broke the protocol and must be closed.
    pub fn route(&mut self, slot: usize, input: &[u8]) -> Option<usize> {
        let mut pos = 0;
        let role = match self.routes.get(slot)?.as_ref()?.role {
            Some(role) => role,
            None => {
                let Some(&first) = input.first() else {
                    return Some(0);
                };
                let role = Role::from_byte(first)?;
                pos = 1;
                self.start_role(slot, role);
                role
            }
        };
        while let Some(header) = Header::read(&input[pos..]) {
            if header.len > MAX_PAYLOAD || role == Role::Stats {
                return None;
            }
            let end = pos + HEADER_LEN + header.len;
            if end > input.len() {
                break;
            }
            let frame = &input[pos..end];
            match role {
                Role::Requester => self.forward_request(slot, frame),
                Role::Responder => self.forward_reply(header.corr as usize, frame),
                Role::Stats => {}
            }
            self.frames += 1;
            pos = end;
        }
        Some(pos)
    }

    /// Swaps the list of connections given output since the last call into `into` (cleared
    /// first, so the loop can hand the same vector back every turn).
    pub fn take_dirty(&mut self, into: &mut Vec<usize>) {
        into.clear();
        std::mem::swap(&mut self.dirty, into);
    }

    /// Moves `slot`'s pending output to the end of `buf` (a swap when `buf` is empty).
    pub fn take_output(&mut self, slot: usize, buf: &mut Vec<u8>) {
        let Some(Some(route)) = self.routes.get_mut(slot) else {
            return;
        };
        if buf.is_empty() {
            std::mem::swap(&mut route.output, buf);
        } else {
            buf.extend_from_slice(&route.output);
            route.output.clear();
        }
        debug_assert!(route.output.is_empty());
    }

    /// Whether `slot` has output the loop has not taken.
    pub fn has_output(&self, slot: usize) -> bool {
        matches!(self.routes.get(slot), Some(Some(r)) if !r.output.is_empty())
    }

    /// Whether `slot` is to be closed once its output is written (a stats connection).
    pub fn close_when_written(&self, slot: usize) -> bool {
        matches!(self.routes.get(slot), Some(Some(r)) if r.close_when_written)
    }

    /// Forgets a closed connection; its pending output is dropped, replies for it too.
    pub fn close(&mut self, slot: usize) {
        if let Some(route) = self.routes.get_mut(slot).and_then(Option::take) {
            if route.role == Some(Role::Responder) {
                self.responders.retain(|&r| r != slot);
                self.next_responder = 0;
            }
        }
        debug_assert!(self.routes.get(slot).is_some_and(Option::is_none));
        debug_assert!(!self.responders.contains(&slot));
    }

    fn start_role(&mut self, slot: usize, role: Role) {
        debug_assert!(self.routes[slot].as_ref().is_some_and(|r| r.role.is_none()));
        if let Some(route) = self.routes[slot].as_mut() {
            route.role = Some(role);
        }
        match role {
            Role::Responder => {
                self.responders.push(slot);
                while let Some(request) = self.unrouted.pop_front() {
                    self.append_output(slot, &request, None);
                }
            }
            Role::Stats => {
                let cpu = ProcessCpu::now().unwrap_or_default();
                let stats = RelayStats {
                    user_us: cpu.user_us,
                    system_us: cpu.system_us,
                    frames: self.frames,
                };
                self.append_output(slot, &stats.encode(), None);
                if let Some(route) = self.routes[slot].as_mut() {
                    route.close_when_written = true;
                }
            }
            Role::Requester => {}
        }
        debug_assert!(self.routes[slot]
            .as_ref()
            .is_some_and(|r| r.role == Some(role)));
    }

    fn forward_request(&mut self, requester: usize, frame: &[u8]) {
        let corr = u32::try_from(requester).unwrap_or(u32::MAX);
        if self.responders.is_empty() {
            let mut held = frame.to_vec();
            frame::set_corr(&mut held, corr);
            self.unrouted.push_back(held);
            return;
        }
        self.next_responder = (self.next_responder + 1) % self.responders.len();
        let responder = self.responders[self.next_responder];
        self.append_output(responder, frame, Some(corr));
    }

    fn forward_reply(&mut self, requester: usize, frame: &[u8]) {
        // A reply for a requester that has gone is dropped.
        let alive = matches!(
            self.routes.get(requester),
            Some(Some(Route {
                role: Some(Role::Requester),
                ..
            }))
        );
        if alive {
            self.append_output(requester, frame, None);
        }
    }

    /// Appends a frame to `slot`'s output, with its correlation replaced if given.
    fn append_output(&mut self, slot: usize, frame: &[u8], corr: Option<u32>) {
        let Some(Some(route)) = self.routes.get_mut(slot) else {
            return;
        };
        let start = route.output.len();
        if start == 0 {
            self.dirty.push(slot);
        }
        route.output.extend_from_slice(frame);
        if let Some(corr) = corr {
            frame::set_corr(&mut route.output[start..], corr);
        }
        debug_assert!(self.dirty.contains(&slot));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_goes_to_the_requester_whose_slot_it_names() {
        let mut router = Router::new();
        let requester = router.open().unwrap();
        let responder = router.open().unwrap();
        assert_eq!(router.route(responder, b"R"), Some(1));
        let request = frame::make(3, 99, b'x');
        let mut input = vec![b'Q'];
        input.extend_from_slice(&request);
        input.extend_from_slice(&request[..4]);
        assert_eq!(router.route(requester, &input), Some(1 + request.len()));
        let mut dirty = Vec::new();
        router.take_dirty(&mut dirty);
        assert_eq!(dirty, [responder]);
        let mut out = Vec::new();
        router.take_output(responder, &mut out);
        assert_eq!(Header::read(&out).unwrap().corr, requester as u32);
        assert!(!router.has_output(responder));

        let reply = frame::make(2, requester as u32, b'y');
        assert_eq!(router.route(responder, &reply), Some(reply.len()));
        router.close(requester);
        assert!(!router.has_output(requester));
        assert_eq!(router.frames(), 2);
    }

    #[test]
    fn an_unknown_role_or_a_frame_from_a_stats_connection_closes_it() {
        let mut router = Router::new();
        let a = router.open().unwrap();
        assert_eq!(router.route(a, b"E"), None);
        let s = router.open().unwrap();
        assert_eq!(router.route(s, b"S"), Some(1));
        assert!(router.close_when_written(s) && router.has_output(s));
        assert_eq!(router.route(s, &frame::make(0, 0, 0)), None);
    }
}
