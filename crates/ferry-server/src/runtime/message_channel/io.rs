//! One message channel conversation's socket: channel frames out and in, with the bytes
//! counted for DISPLAY CHSTATUS.
//!
//! Frames are encoded into one output buffer and written together when the agent
//! flushes (a batch's messages and its confirmation request go out in one write); what
//! arrives is read into one buffer that grows with what the peer sends, never with what
//! a header claims (the frame decoder refuses a length over the agreed maximum first).

use super::Agent;
use bytes::BytesMut;
use ferry_wire::channel::{decode_channel_frame, encode_channel_frame, ChannelFrame};
use ferry_wire::WireError;
use std::rc::Rc;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Why a conversation cannot go on.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConversationError {
    /// The socket failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The partner closed the connection.
    #[error("the partner closed the connection")]
    Closed,
    /// The partner sent something the channel protocol does not allow.
    #[error("protocol error: {0}")]
    Protocol(#[from] WireError),
    /// The partner said nothing for longer than the heartbeat interval allows.
    #[error("nothing arrived for {0} seconds")]
    Silent(u64),
}

/// The socket of one conversation.
pub(crate) struct ChannelIo {
    reader: Box<dyn AsyncRead + Unpin>,
    writer: Box<dyn AsyncWrite + Unpin>,
    inbound: BytesMut,
    out: BytesMut,
    max_frame: usize,
    agent: Rc<Agent>,
    /// Frames in `out`, counted into BUFSSENT when written.
    frames_queued: u64,
}

impl ChannelIo {
    /// A conversation over `reader` and `writer`, starting with `inbound` (bytes read
    /// already), accepting frames up to `max_frame` bytes.
    pub(crate) fn new(
        reader: Box<dyn AsyncRead + Unpin>,
        writer: Box<dyn AsyncWrite + Unpin>,
        inbound: BytesMut,
        max_frame: usize,
        agent: Rc<Agent>,
    ) -> Self {
        ChannelIo {
            reader,
            writer,
            inbound,
            out: BytesMut::with_capacity(64 * 1024),
            max_frame,
            agent,
            frames_queued: 0,
        }
    }

    /// Counts the bytes on `agent` from now on (a ping's own scratch agent).
    pub(crate) fn count_for(&mut self, agent: Rc<Agent>) {
        self.agent = agent;
    }

    /// The largest frame accepted from now on (once the channel's values are agreed).
    pub(crate) fn set_max_frame(&mut self, max_frame: usize) {
        self.max_frame = max_frame;
    }

    /// Adds `frame` to what the next flush writes (refused when the codec cannot
    /// encode it: a text or ping data out of bounds).
    pub(crate) fn queue(&mut self, frame: &ChannelFrame) -> Result<(), ConversationError> {
        encode_channel_frame(frame, &mut self.out)?;
        self.frames_queued += 1;
        Ok(())
    }

    /// Bytes waiting for the next flush.
    pub(crate) fn queued(&self) -> usize {
        self.out.len()
    }

    /// Writes what was queued.
    pub(crate) async fn flush(&mut self) -> Result<(), ConversationError> {
        if self.out.is_empty() {
            return Ok(());
        }
        let n = self.out.len();
        self.writer.write_all(&self.out).await?;
        self.writer.flush().await?;
        self.out.clear();
        let mut status = self.agent.status.borrow_mut();
        status.bytes_sent += n as u64;
        status.buffers_sent += std::mem::take(&mut self.frames_queued);
        Ok(())
    }

    /// Queues `frame` and writes everything queued.
    pub(crate) async fn send(&mut self, frame: &ChannelFrame) -> Result<(), ConversationError> {
        self.queue(frame)?;
        self.flush().await
    }

    /// Writes raw bytes (a hello or its answer, encoded by the caller).
    pub(crate) async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), ConversationError> {
        self.writer.write_all(bytes).await?;
        self.writer.flush().await?;
        let mut status = self.agent.status.borrow_mut();
        status.bytes_sent += bytes.len() as u64;
        status.buffers_sent += 1;
        Ok(())
    }

    /// The next frame from the partner.
    pub(crate) async fn recv(&mut self) -> Result<ChannelFrame, ConversationError> {
        loop {
            if let Some(frame) = decode_channel_frame(&mut self.inbound, self.max_frame)? {
                self.agent.status.borrow_mut().buffers_received += 1;
                return Ok(frame);
            }
            self.read_more().await?;
        }
    }

    /// Reads what the partner sent into the inbound buffer.
    pub(crate) async fn read_more(&mut self) -> Result<(), ConversationError> {
        if self.inbound.capacity() - self.inbound.len() < 16 * 1024 {
            self.inbound.reserve(64 * 1024);
        }
        let n = self.reader.read_buf(&mut self.inbound).await?;
        if n == 0 {
            return Err(ConversationError::Closed);
        }
        self.agent.status.borrow_mut().bytes_received += n as u64;
        Ok(())
    }

    /// The inbound buffer (a hello answer is decoded from it by the caller).
    pub(crate) fn inbound(&mut self) -> &mut BytesMut {
        &mut self.inbound
    }
}
