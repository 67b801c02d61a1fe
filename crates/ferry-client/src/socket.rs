//! One shared socket: its conversations, the outgoing frame buffer and reply routing.
//!
//! Up to SHARECNV conversations (hconns) share a socket. Callers encode their request
//! straight into the socket's output buffer and wake the writer only when the buffer
//! was empty, so every frame queued before the writer runs leaves in one write. The
//! reader routes each reply into its conversation's slot and wakes that one caller.
//! All of it sits behind one short, uncontended `std::sync::Mutex` per socket: on a
//! single-threaded runtime it never blocks, and no call allocates a channel.

use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use bytes::BytesMut;
use ferry_mqi::{FixedStr, MqError, ReasonCode};
use ferry_wire::{
    encode_reply, encode_request, encode_request_at, Frame, FrameCompressor, Negotiated, Reply,
    Request,
};
use tokio::sync::{Notify, OwnedSemaphorePermit};

/// A conversation's place on its socket.
#[derive(Default)]
struct ConvSlot {
    /// Bumped each time the slot is handed to a new conversation, so a stale handle
    /// can never talk on a reused conversation id.
    generation: u32,
    in_use: bool,
    next_request: u32,
    in_flight: Option<u32>,
    reply: Option<Frame>,
    waker: Option<Waker>,
    /// The call gate of a request whose caller stopped waiting: released when its reply
    /// arrives, so the next call cannot overtake it.
    abandoned: Option<OwnedSemaphorePermit>,
}

struct SocketState {
    out: BytesMut,
    convs: Vec<ConvSlot>,
    free: Vec<u32>,
    live: u32,
    broken: bool,
    closing: bool,
    next_heartbeat: u32,
}

/// A connected, handshaken socket shared by conversations.
pub(crate) struct Socket {
    state: Mutex<SocketState>,
    /// Wakes the writer task when frames were queued into an empty buffer.
    pub(crate) wake_writer: Notify,
    /// Tells the reader task to stop (last conversation gone, or broken).
    pub(crate) shutdown: Notify,
    /// The values agreed in the handshake.
    pub(crate) negotiated: Negotiated,
    /// The queue manager's name from the server hello.
    pub(crate) qmgr_name: FixedStr<48>,
    /// Compresses PUT and PUT1 requests when the hello agreed on a technique; its own
    /// lock, so compressing a large message holds up neither the reader nor the other
    /// conversations' calls.
    compressor: Option<Mutex<FrameCompressor>>,
}

/// What the reader should do with a frame it routed.
pub(crate) enum Routed {
    /// Delivered (or discarded as stale); keep reading.
    Done,
    /// The frame breaks the protocol; drop the socket.
    Violation,
}

fn broken() -> MqError {
    MqError::from(ReasonCode::ConnectionBroken)
}

impl Socket {
    pub(crate) fn new(negotiated: Negotiated, qmgr_name: FixedStr<48>) -> Self {
        Socket {
            state: Mutex::new(SocketState {
                out: BytesMut::with_capacity(16 * 1024),
                convs: Vec::new(),
                free: Vec::new(),
                live: 0,
                broken: false,
                closing: false,
                next_heartbeat: 0,
            }),
            compressor: negotiated
                .compression
                .any()
                .then(|| Mutex::new(FrameCompressor::new(negotiated.compression))),
            wake_writer: Notify::new(),
            shutdown: Notify::new(),
            negotiated,
            qmgr_name,
        }
    }

    fn lock(&self) -> MutexGuard<'_, SocketState> {
        // A panic while holding the lock cannot leave the state half-updated in a way
        // that matters more than losing the socket, so keep going.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Conversations this socket may carry (SHARECNV 0 and 1 both mean one).
    pub(crate) fn capacity(&self) -> u32 {
        self.negotiated.sharecnv.max(1)
    }

    /// Claims a conversation id if the socket is healthy and has room.
    /// Returns `(conversation id, generation)`.
    pub(crate) fn try_reserve(&self) -> Option<(u32, u32)> {
        let mut st = self.lock();
        if st.broken || st.closing || st.live >= self.capacity() {
            return None;
        }
        let index = match st.free.pop() {
            Some(i) => i,
            None => {
                st.convs.push(ConvSlot::default());
                (st.convs.len() - 1) as u32
            }
        };
        st.live += 1;
        let slot = &mut st.convs[index as usize];
        slot.generation = slot.generation.wrapping_add(1);
        slot.in_use = true;
        slot.in_flight = None;
        slot.reply = None;
        slot.waker = None;
        Some((index + 1, slot.generation))
    }

    /// Gives a conversation id back; the socket closes when its last one goes.
    pub(crate) fn release(&self, conv: u32, generation: u32) {
        let permit;
        {
            let mut st = self.lock();
            let Some(slot) = st.convs.get_mut(conv as usize - 1) else {
                return;
            };
            if !slot.in_use || slot.generation != generation {
                return;
            }
            slot.in_use = false;
            slot.in_flight = None;
            slot.reply = None;
            slot.waker = None;
            permit = slot.abandoned.take();
            st.free.push(conv - 1);
            st.live -= 1;
            if st.live == 0 {
                st.closing = true;
            }
        }
        drop(permit);
        if self.is_closing() {
            self.wake_writer.notify_one();
            self.shutdown.notify_one();
        }
    }

    /// True once the socket is closing (no conversations left) or broken.
    pub(crate) fn is_closing(&self) -> bool {
        let st = self.lock();
        st.closing || st.broken
    }

    /// Queues `req` on `conv` and returns its request id.
    pub(crate) fn send(&self, conv: u32, generation: u32, req: &Request) -> Result<u32, MqError> {
        if let (Some(compressor), Some(data)) = (&self.compressor, req.message_data()) {
            return self.send_compressed(conv, generation, req, data.len(), compressor);
        }
        let was_empty;
        let request_id;
        {
            let mut st = self.lock();
            if st.broken {
                return Err(broken());
            }
            let st = &mut *st;
            let slot = match st.convs.get_mut(conv as usize - 1) {
                Some(s) if s.in_use && s.generation == generation => s,
                _ => return Err(MqError::from(ReasonCode::HconnError)),
            };
            slot.next_request = slot.next_request.wrapping_add(1).max(1);
            request_id = slot.next_request;
            was_empty = st.out.is_empty();
            encode_request_at(conv, request_id, req, self.negotiated.minor, &mut st.out)
                .map_err(|_| MqError::from(ReasonCode::DataLengthError))?;
            slot.in_flight = Some(request_id);
            slot.reply = None;
        }
        if was_empty {
            self.wake_writer.notify_one();
        }
        Ok(request_id)
    }

    /// [`Socket::send`] of a message on a compressing socket: the request id is taken
    /// under the socket's lock, the frame encoded and compressed outside it, then queued.
    /// A conversation has one call at a time, so nothing of its own can pass it meanwhile.
    fn send_compressed(
        &self,
        conv: u32,
        generation: u32,
        req: &Request,
        data_len: usize,
        compressor: &Mutex<FrameCompressor>,
    ) -> Result<u32, MqError> {
        let request_id = {
            let mut st = self.lock();
            if st.broken {
                return Err(broken());
            }
            let slot = match st.convs.get_mut(conv as usize - 1) {
                Some(s) if s.in_use && s.generation == generation => s,
                _ => return Err(MqError::from(ReasonCode::HconnError)),
            };
            slot.next_request = slot.next_request.wrapping_add(1).max(1);
            slot.in_flight = Some(slot.next_request);
            slot.reply = None;
            slot.next_request
        };
        let mut frame = BytesMut::new();
        if encode_request_at(conv, request_id, req, self.negotiated.minor, &mut frame).is_err() {
            let mut st = self.lock();
            if let Some(slot) = st.convs.get_mut(conv as usize - 1) {
                if slot.generation == generation && slot.in_flight == Some(request_id) {
                    slot.in_flight = None;
                }
            }
            return Err(MqError::from(ReasonCode::DataLengthError));
        }
        compressor
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .compress_frame(&mut frame, 0, data_len);
        let was_empty = {
            let mut st = self.lock();
            if st.broken {
                return Err(broken());
            }
            let was_empty = st.out.is_empty();
            st.out.extend_from_slice(&frame);
            was_empty
        };
        if was_empty {
            self.wake_writer.notify_one();
        }
        Ok(request_id)
    }

    /// Polls for the reply to `request_id` on `conv`.
    pub(crate) fn poll_reply(
        &self,
        conv: u32,
        request_id: u32,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Frame, MqError>> {
        let mut st = self.lock();
        let broken_now = st.broken;
        let Some(slot) = st.convs.get_mut(conv as usize - 1) else {
            return Poll::Ready(Err(broken()));
        };
        if slot.in_flight != Some(request_id) {
            return Poll::Ready(Err(broken()));
        }
        if let Some(frame) = slot.reply.take() {
            slot.in_flight = None;
            return Poll::Ready(Ok(frame));
        }
        if broken_now {
            slot.in_flight = None;
            return Poll::Ready(Err(broken()));
        }
        match &slot.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => slot.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }

    /// The caller of `request_id` stopped waiting: park its gate permit until the reply
    /// arrives (or release it at once if the reply is already here).
    pub(crate) fn abandon(&self, conv: u32, request_id: u32, permit: OwnedSemaphorePermit) {
        let mut st = self.lock();
        let broken_now = st.broken;
        if let Some(slot) = st.convs.get_mut(conv as usize - 1) {
            if slot.in_flight == Some(request_id) {
                slot.waker = None;
                if slot.reply.take().is_some() || broken_now {
                    slot.in_flight = None;
                } else {
                    slot.abandoned = Some(permit);
                    return;
                }
            }
        }
        drop(st);
        drop(permit);
    }

    /// Routes one frame read from the socket.
    pub(crate) fn route(&self, frame: Frame) -> Routed {
        if frame.conversation == ferry_wire::SOCKET_CONVERSATION {
            return self.route_socket_frame(frame);
        }
        let mut waker = None;
        let mut permit = None;
        {
            let mut st = self.lock();
            let Some(slot) = st.convs.get_mut(frame.conversation as usize - 1) else {
                return Routed::Violation;
            };
            if !frame.is_reply() {
                return Routed::Violation;
            }
            if slot.in_use && slot.in_flight == Some(frame.request_id) {
                if slot.abandoned.is_some() {
                    slot.in_flight = None;
                    permit = slot.abandoned.take();
                } else {
                    slot.reply = Some(frame);
                    waker = slot.waker.take();
                }
            } else {
                tracing::debug!(
                    conversation = frame.conversation,
                    request_id = frame.request_id,
                    "discarding a reply nobody waits for"
                );
            }
        }
        drop(permit);
        if let Some(w) = waker {
            w.wake();
        }
        Routed::Done
    }

    fn route_socket_frame(&self, frame: Frame) -> Routed {
        match (frame.verb, frame.is_reply()) {
            (ferry_wire::Verb::Heartbeat, false) => {
                let was_empty;
                {
                    let mut st = self.lock();
                    was_empty = st.out.is_empty();
                    if encode_reply(0, frame.request_id, &Reply::Heartbeat, &mut st.out).is_err() {
                        return Routed::Violation;
                    }
                }
                if was_empty {
                    self.wake_writer.notify_one();
                }
                Routed::Done
            }
            (ferry_wire::Verb::Heartbeat, true) => Routed::Done,
            (ferry_wire::Verb::Error, false) => {
                match ferry_wire::CloseNotice::decode(&frame) {
                    Ok(n) => tracing::warn!(reason = %n.reason, text = %n.text,
                        "queue manager closed the connection"),
                    Err(e) => tracing::warn!(error = %e, "malformed close notice"),
                }
                Routed::Violation
            }
            _ => Routed::Violation,
        }
    }

    /// Queues a heartbeat request (the reader found the socket idle).
    pub(crate) fn send_heartbeat(&self) {
        let was_empty;
        {
            let mut st = self.lock();
            st.next_heartbeat = st.next_heartbeat.wrapping_add(1);
            let id = st.next_heartbeat;
            was_empty = st.out.is_empty();
            if encode_request(0, id, &Request::Heartbeat, &mut st.out).is_err() {
                return;
            }
        }
        if was_empty {
            self.wake_writer.notify_one();
        }
    }

    /// Takes everything queued for writing, leaving `spare` (emptied) in its place.
    /// Returns `None` when the writer should stop.
    pub(crate) fn take_output(&self, spare: &mut BytesMut) -> Option<bool> {
        let mut st = self.lock();
        if st.broken {
            return None;
        }
        if st.out.is_empty() {
            return if st.closing { None } else { Some(false) };
        }
        spare.clear();
        std::mem::swap(&mut st.out, spare);
        Some(true)
    }

    /// Marks the socket broken: every waiting and later call on it fails with 2009.
    pub(crate) fn fail(&self) {
        let mut wakers = Vec::new();
        let mut permits = Vec::new();
        {
            let mut st = self.lock();
            if st.broken {
                return;
            }
            st.broken = true;
            st.out.clear();
            for slot in &mut st.convs {
                wakers.extend(slot.waker.take());
                permits.extend(slot.abandoned.take());
            }
        }
        drop(permits);
        for w in wakers {
            w.wake();
        }
        self.wake_writer.notify_one();
        self.shutdown.notify_one();
    }
}
