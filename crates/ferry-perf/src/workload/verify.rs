//! Request and reply integrity: every request body carries a tag (requester number and
//! sequence) at both ends, and a reply counts only when its CorrelId is the request's
//! MsgId, its length is the request's and its tag is intact. Shared by the workloads.

use bytes::{Bytes, BytesMut};
use ferry_mqi::{MessageDescriptor, MsgId};

/// Bytes of the tag written at the start and at the end of every request body.
pub const TAG_LEN: usize = 16;
/// The tag of request `seq` of requester `requester`: both numbers, little-endian.
pub fn request_tag(requester: usize, seq: u64) -> [u8; TAG_LEN] {
    let mut t = [0u8; TAG_LEN];
    t[..8].copy_from_slice(&(requester as u64).to_le_bytes());
    t[8..].copy_from_slice(&seq.to_le_bytes());
    t
}

/// A request body: `template` with `tag` written over its start and its end (as much
/// of the tag as fits).
pub fn make_body(template: &[u8], tag: &[u8; TAG_LEN]) -> Bytes {
    let mut b = BytesMut::from(template);
    write_tag(&mut b, tag);
    b.freeze()
}

/// Writes `tag` over the start and the end of `body` (as much of it as fits).
pub fn write_tag(body: &mut [u8], tag: &[u8; TAG_LEN]) {
    let n = TAG_LEN.min(body.len());
    body[..n].copy_from_slice(&tag[..n]);
    let len = body.len();
    body[len - n..].copy_from_slice(&tag[..n]);
}

/// The next request body: the previous one's buffer when nobody else holds it any more
/// (only its tag is rewritten, so large bodies are not copied per request), else a
/// fresh copy of `template`.
pub fn next_body(previous: Option<Bytes>, template: &[u8], tag: &[u8; TAG_LEN]) -> Bytes {
    match previous.map(Bytes::try_into_mut) {
        Some(Ok(mut b)) if b.len() == template.len() => {
            write_tag(&mut b, tag);
            b.freeze()
        }
        _ => make_body(template, tag),
    }
}

/// The cheap integrity check: the tag at both ends of the body.
pub fn body_intact(body: &[u8], tag: &[u8; TAG_LEN]) -> bool {
    let n = TAG_LEN.min(body.len());
    body[..n] == tag[..n] && body[body.len() - n..] == tag[..n]
}

/// The verdict on one reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyCheck {
    /// The reply answers the request and its body is intact: a round trip.
    Good,
    /// The reply's CorrelId is not the request's MsgId.
    WrongCorrelId,
    /// The reply's length differs from the request's.
    WrongLength {
        /// Length of the reply (MQGET DataLength).
        got: usize,
        /// Length expected.
        want: usize,
    },
    /// The tag at the ends of the body differs: the body was damaged or is another's.
    CorruptBody,
}

/// Checks a reply got for a request: CorrelId first, then the full length, then the tag.
pub fn check_reply(
    request_msg_id: &MsgId,
    reply: &MessageDescriptor,
    body: &[u8],
    data_length: usize,
    size: usize,
    tag: &[u8; TAG_LEN],
) -> ReplyCheck {
    if reply.correl_id != *request_msg_id {
        ReplyCheck::WrongCorrelId
    } else if data_length != size || body.len() != size {
        ReplyCheck::WrongLength {
            got: data_length,
            want: size,
        }
    } else if !body_intact(body, tag) {
        ReplyCheck::CorruptBody
    } else {
        ReplyCheck::Good
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_mqi::descriptor::msg_type;

    fn reply_to(msg_id: MsgId) -> MessageDescriptor {
        MessageDescriptor {
            msg_type: msg_type::REPLY,
            correl_id: msg_id,
            ..MessageDescriptor::default()
        }
    }

    #[test]
    fn bodies_carry_their_tag_at_both_ends() {
        let tag = request_tag(3, 42);
        let body = make_body(&[0u8; 2048], &tag);
        assert_eq!(body.len(), 2048);
        assert!(body_intact(&body, &tag));
        assert!(!body_intact(&body, &request_tag(3, 43)));
        assert!(!body_intact(&body, &request_tag(4, 42)));
        let mut damaged = body.to_vec();
        damaged[2047] ^= 1;
        assert!(!body_intact(&damaged, &tag));
        // The buffer is reused once nobody else holds it; a shared one is copied.
        let again = next_body(Some(body), &[0u8; 2048], &request_tag(3, 43));
        assert!(body_intact(&again, &request_tag(3, 43)));
        let held = again.clone();
        let fresh = next_body(Some(again), &[0u8; 2048], &request_tag(3, 44));
        assert!(body_intact(&fresh, &request_tag(3, 44)));
        assert!(
            body_intact(&held, &request_tag(3, 43)),
            "a held body is never rewritten"
        );
        assert!(body_intact(&next_body(None, &[1u8; 64], &tag), &tag));
        // Tiny bodies hold what fits.
        let small = make_body(&[0u8; 5], &tag);
        assert!(body_intact(&small, &tag));
        assert_eq!(&small[..], &tag[..5]);
    }

    #[test]
    fn replies_are_checked_in_order() {
        let id: MsgId = [7; 24];
        let tag = request_tag(1, 1);
        let body = make_body(&[0u8; 256], &tag);
        assert_eq!(
            check_reply(&id, &reply_to(id), &body, 256, 256, &tag),
            ReplyCheck::Good
        );
        assert_eq!(
            check_reply(&id, &reply_to([8; 24]), &body, 256, 256, &tag),
            ReplyCheck::WrongCorrelId
        );
        assert_eq!(
            check_reply(&id, &reply_to(id), &body[..255], 255, 256, &tag),
            ReplyCheck::WrongLength {
                got: 255,
                want: 256
            }
        );
        // A longer reply arrives cut to the requested length: DataLength tells.
        assert_eq!(
            check_reply(&id, &reply_to(id), &body, 300, 256, &tag),
            ReplyCheck::WrongLength {
                got: 300,
                want: 256
            }
        );
        assert_eq!(
            check_reply(&id, &reply_to(id), &body, 256, 256, &request_tag(2, 1)),
            ReplyCheck::CorruptBody
        );
    }
}
