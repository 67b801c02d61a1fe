//! One message channel conversation's socket: channel frames out and in, with the bytes
//! counted for DISPLAY CHSTATUS.
//!
//! Frames are encoded into one output buffer and written together when the agent
//! flushes (a batch's messages and its confirmation request go out in one vectored
//! write, each message's payload written from where it lies rather than copied); what
//! arrives is read into one buffer that grows with what the peer sends, never with what
//! a header claims (the frame decoder refuses a length over the agreed maximum first).

use super::Agent;
use bytes::{Bytes, BytesMut};
use ferry_wire::channel::{
    decode_channel_frame, encode_channel_frame, encode_message_head, ChannelFrame, MessageFlags,
};
use ferry_wire::WireError;
use std::io::IoSlice;
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
    /// Frames queued since the last write, counted into BUFSSENT when written.
    frames_queued: u64,
    /// What was queued before `out`'s bytes, in order: encoded frames and the payloads
    /// of messages, written by the next flush before `out`.
    chunks: Vec<Bytes>,
    /// Bytes in `chunks`.
    chunk_bytes: usize,
}

/// The most buffers one vectored write is given.
const MAX_IO_SLICES: usize = 64;

/// Message payloads from this size on are written from where they lie; smaller ones are
/// copied into the output buffer, which costs less than a write buffer of their own.
const BY_REFERENCE_FROM: usize = 16 * 1024;

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
            chunks: Vec::new(),
            chunk_bytes: 0,
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

    /// Adds a MESSAGE frame to what the next flush writes; a payload of
    /// [`BY_REFERENCE_FROM`] bytes or more is written from where it lies, not copied.
    pub(crate) fn queue_message(
        &mut self,
        seq: u32,
        flags: MessageFlags,
        properties: &[u8],
        payload: Bytes,
    ) -> Result<(), ConversationError> {
        encode_message_head(seq, flags, properties, payload.len(), &mut self.out)?;
        if payload.len() < BY_REFERENCE_FROM {
            self.out.extend_from_slice(&payload);
            self.frames_queued += 1;
            return Ok(());
        }
        let head = self.out.split().freeze();
        self.chunk_bytes += head.len() + payload.len();
        self.chunks.push(head);
        self.chunks.push(payload);
        self.frames_queued += 1;
        Ok(())
    }

    /// Bytes waiting for the next flush.
    pub(crate) fn queued(&self) -> usize {
        self.chunk_bytes + self.out.len()
    }

    /// Writes what was queued.
    pub(crate) async fn flush(&mut self) -> Result<(), ConversationError> {
        if !self.out.is_empty() {
            let rest = self.out.split().freeze();
            self.chunk_bytes += rest.len();
            self.chunks.push(rest);
        }
        if self.chunk_bytes == 0 {
            self.chunks.clear();
            return Ok(());
        }
        let n = self.chunk_bytes;
        let mut chunks = std::mem::take(&mut self.chunks);
        self.chunk_bytes = 0;
        write_all_vectored(&mut self.writer, &mut chunks).await?;
        self.writer.flush().await?;
        // The emptied vector keeps its capacity for the next batch.
        self.chunks = chunks;
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

    /// The next frame if the inbound buffer holds all of it, without reading: a batch
    /// arrives in few reads, and its frames need no wait (nor a timer) each.
    pub(crate) fn try_recv(&mut self) -> Result<Option<ChannelFrame>, ConversationError> {
        let frame = decode_channel_frame(&mut self.inbound, self.max_frame)?;
        if frame.is_some() {
            self.agent.status.borrow_mut().buffers_received += 1;
        }
        Ok(frame)
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

/// Writes every byte of `chunks` in order, as few system calls as the socket allows,
/// and empties it.
async fn write_all_vectored(
    writer: &mut Box<dyn AsyncWrite + Unpin>,
    chunks: &mut Vec<Bytes>,
) -> std::io::Result<()> {
    let mut first = 0;
    while first < chunks.len() {
        let slices: Vec<IoSlice<'_>> = chunks[first..]
            .iter()
            .filter(|c| !c.is_empty())
            .take(MAX_IO_SLICES)
            .map(|c| IoSlice::new(c))
            .collect();
        if slices.is_empty() {
            break;
        }
        let mut n = writer.write_vectored(&slices).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        // Drop what was written: whole chunks, then the front of a partly written one.
        while n > 0 && first < chunks.len() {
            let len = chunks[first].len();
            if n >= len {
                n -= len;
                first += 1;
            } else {
                let _ = chunks[first].split_to(n);
                n = 0;
            }
        }
    }
    chunks.clear();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// A pipe that takes 7 bytes at a time: every write is partial, some end inside a
    /// chunk, and the bytes still arrive whole and in order.
    #[tokio::test(flavor = "current_thread")]
    async fn vectored_writes_survive_partial_writes() {
        let (ours, mut theirs) = tokio::io::duplex(7);
        let mut writer: Box<dyn AsyncWrite + Unpin> = Box::new(ours);
        let mut chunks = vec![
            Bytes::from_static(b"abc"),
            Bytes::new(),
            Bytes::from_static(b"defghijklmnopq"),
            Bytes::from_static(b"r"),
            Bytes::from(vec![b's'; 200]),
        ];
        let expected: Vec<u8> = chunks.iter().flat_map(|c| c.to_vec()).collect();
        let reader = async {
            let mut got = vec![0u8; expected.len()];
            theirs.read_exact(&mut got).await.expect("read");
            got
        };
        let (written, got) = tokio::join!(write_all_vectored(&mut writer, &mut chunks), reader);
        written.expect("written");
        assert_eq!(got, expected);
        assert!(chunks.is_empty());
    }
}
