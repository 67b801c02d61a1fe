//! The close notice: the last frame a server sends before it drops a socket.
//!
//! Sent on conversation 0 with verb ERROR when the peer broke the protocol (the reason
//! comes from [`WireError::reason`]) or the queue manager is ending (2162
//! MQRC_Q_MGR_STOPPING). The client logs it and fails every conversation on the socket
//! with 2009 MQRC_CONNECTION_BROKEN.

use bytes::{BufMut, BytesMut};
use ferry_mqi::ReasonCode;

use crate::cursor::{put_string, Reader};
use crate::frame::{begin_frame, finish_frame, Frame, Verb, SOCKET_CONVERSATION};
use crate::structs::reason_from_wire;
use crate::WireError;

/// Why the server is closing the socket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CloseNotice {
    /// The MQ reason.
    pub reason: ReasonCode,
    /// An explanation for logs.
    pub text: String,
}

impl CloseNotice {
    /// A notice for a decoding failure of the peer's bytes.
    pub fn for_error(e: &WireError) -> Self {
        CloseNotice {
            reason: e.reason(),
            text: e.to_string(),
        }
    }

    /// Decodes an ERROR frame.
    pub fn decode(frame: &Frame) -> Result<CloseNotice, WireError> {
        if frame.verb != Verb::Error || frame.is_reply() {
            return Err(WireError::UnexpectedVerb {
                verb: frame.verb.code(),
                expected: "a close notice",
            });
        }
        let mut r = Reader::new(&frame.payload);
        let notice = CloseNotice {
            reason: reason_from_wire(r.i32()?),
            text: r.string("close notice text")?,
        };
        r.finish()?;
        Ok(notice)
    }

    /// Appends the notice as an ERROR frame on conversation 0.
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), WireError> {
        let start = begin_frame(out, SOCKET_CONVERSATION, 0, Verb::Error, false);
        out.put_i32_le(self.reason.number());
        if let Err(e) = put_string(out, &self.text) {
            out.truncate(start);
            return Err(e);
        }
        finish_frame(out, start)
    }
}
