//! A conversation: one hconn on a shared socket, making one MQI call at a time.
//!
//! MQI is synchronous per hconn, so each conversation has a gate (a one-permit
//! semaphore) that a call holds from sending its request until its reply arrives. A
//! caller that stops waiting (its future was dropped) leaves the permit with the socket,
//! which releases it when the late reply comes: the next call queues behind it instead
//! of overtaking it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use ferry_mqi::{MqError, ReasonCode};
use ferry_wire::{Frame, Reply, Request, Verb};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::socket::Socket;

/// One hconn's place on a socket.
pub(crate) struct Conversation {
    pub(crate) socket: Arc<Socket>,
    id: u32,
    generation: u32,
    gate: Arc<Semaphore>,
}

impl Conversation {
    pub(crate) fn new(socket: Arc<Socket>, id: u32, generation: u32) -> Self {
        Conversation {
            socket,
            id,
            generation,
            gate: Arc::new(Semaphore::new(1)),
        }
    }

    /// Sends `req` and waits for its reply, decoded and checked to answer `req`'s verb.
    pub(crate) async fn call(&self, req: &Request) -> Result<Reply, MqError> {
        let verb = req.verb();
        let frame = self.call_frame(req).await?;
        decode_reply(&frame, verb, self.socket.negotiated.minor)
    }

    async fn call_frame(&self, req: &Request) -> Result<Frame, MqError> {
        let permit = self
            .gate
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| MqError::from(ReasonCode::ConnectionBroken))?;
        let request_id = self.socket.send(self.id, self.generation, req)?;
        ReplyWait {
            socket: &self.socket,
            conv: self.id,
            request_id,
            permit: Some(permit),
        }
        .await
    }

    /// Gives the conversation id back to the socket (after DISC, or when abandoned).
    pub(crate) fn release(&self) {
        self.socket.release(self.id, self.generation);
    }

    /// The largest message body the socket accepts.
    pub(crate) fn max_msg_length(&self) -> u32 {
        self.socket.negotiated.max_msg_length
    }
}

/// Decodes the reply to a call of `verb`, laid out for the socket's protocol `minor`.
fn decode_reply(frame: &Frame, verb: Verb, minor: u16) -> Result<Reply, MqError> {
    match Reply::decode_at(frame, minor) {
        Ok(r) if r.verb() == verb => Ok(r),
        Ok(r) => {
            tracing::warn!(expected = ?verb, got = ?r.verb(), "reply to the wrong verb");
            Err(MqError::from(ReasonCode::UnexpectedError))
        }
        Err(e) => {
            tracing::warn!(error = %e, "undecodable reply");
            Err(MqError::from(ReasonCode::UnexpectedError))
        }
    }
}

/// Waits for the reply to one request; hands the gate to the socket if dropped early.
struct ReplyWait<'a> {
    socket: &'a Socket,
    conv: u32,
    request_id: u32,
    permit: Option<OwnedSemaphorePermit>,
}

impl Future for ReplyWait<'_> {
    type Output = Result<Frame, MqError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let r = self.socket.poll_reply(self.conv, self.request_id, cx);
        if r.is_ready() {
            self.permit = None;
        }
        r
    }
}

impl Drop for ReplyWait<'_> {
    fn drop(&mut self) {
        if let Some(permit) = self.permit.take() {
            self.socket.abandon(self.conv, self.request_id, permit);
        }
    }
}
