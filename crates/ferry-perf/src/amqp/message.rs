//! The messages of the AMQP workloads and their checks, as a JMS application would
//! build them: a request carries the requester's id as its correlation-id (`RQ-<i>`),
//! the reply queue in reply-to, `header.durable` for persistent messages, and the same
//! tagged body as native requests (requester number and sequence at both ends, see
//! [`crate::workload::verify`]). The responder copies the correlation-id and the body
//! into the reply; the requester's receiver selects `JMSCorrelationID = 'RQ-<i>'` and
//! checks correlation-id, length and tag, so a reply counts only when it is its own
//! and answers the request just sent.

use bytes::{Bytes, BytesMut};
use ferry_amqp::{Body, Header, Message, MessageId, Properties, Str};

use crate::workload::verify::{body_intact, ReplyCheck, TAG_LEN};

/// The correlation id of requester `i` (0-based): `RQ-1`, `RQ-2`...
pub fn requester_correlation(i: usize) -> String {
    format!("RQ-{}", i + 1)
}

/// The JMS selector that picks requester `i`'s replies off a shared reply queue.
pub fn reply_selector(i: usize) -> String {
    format!("JMSCorrelationID = '{}'", requester_correlation(i))
}

/// A request: `body` to `to`, correlation-id `correlation`, reply-to `reply_to`,
/// durable when persistent.
pub fn request(body: Bytes, to: &str, reply_to: &str, correlation: &str, durable: bool) -> Message {
    Message {
        header: Some(Header {
            durable,
            ..Header::default()
        }),
        properties: Some(Properties {
            to: Some(to.into()),
            reply_to: Some(reply_to.into()),
            correlation_id: Some(MessageId::String(correlation.into())),
            ..Properties::default()
        }),
        body: Some(Body::data(body)),
        ..Message::default()
    }
}

/// Puts `body` in as the message's one data section (a requester reuses its request
/// message, changing only the body).
pub fn set_body(m: &mut Message, body: Bytes) {
    match &mut m.body {
        Some(Body::Data(sections)) if sections.len() == 1 => sections[0] = body,
        _ => m.body = Some(Body::data(body)),
    }
}

/// Takes the body's one data section out of the message (so its buffer can be reused
/// once nobody else holds it), leaving it empty.
pub fn take_body(m: &mut Message) -> Option<Bytes> {
    match &mut m.body {
        Some(Body::Data(sections)) if sections.len() == 1 => Some(std::mem::take(&mut sections[0])),
        _ => None,
    }
}

/// A plain message (SR-CC): `body` to `to`, durable when persistent.
pub fn datagram(body: Bytes, to: &str, durable: bool) -> Message {
    Message {
        header: Some(Header {
            durable,
            ..Header::default()
        }),
        properties: Some(Properties {
            to: Some(to.into()),
            ..Properties::default()
        }),
        body: Some(Body::data(body)),
        ..Message::default()
    }
}

/// Why a request cannot be answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadRequest {
    /// The bytes are not an AMQP message.
    Undecodable(String),
    /// No reply-to address.
    NoReplyTo,
}

/// The reply to a request: to its reply-to, with its correlation-id, durability and
/// body (shared, not copied). Returns the reply and its address (the request's
/// reply-to, shared, not copied).
pub fn reply_to(request: &Message) -> Result<(Message, Str), BadRequest> {
    let props = request.properties.as_ref();
    let address = props
        .and_then(|p| p.reply_to.clone())
        .ok_or(BadRequest::NoReplyTo)?;
    let reply = Message {
        header: Some(Header {
            durable: request.header.as_ref().is_some_and(|h| h.durable),
            ..Header::default()
        }),
        properties: Some(Properties {
            to: Some(address.clone()),
            correlation_id: props.and_then(|p| p.correlation_id.clone()),
            ..Properties::default()
        }),
        body: request.body.clone(),
        ..Message::default()
    };
    Ok((reply, address))
}

/// The body's bytes: the one data section (several are joined; other bodies: none).
pub fn body_bytes(m: &Message) -> Option<Bytes> {
    match &m.body {
        Some(Body::Data(sections)) if sections.len() == 1 => Some(sections[0].clone()),
        Some(Body::Data(sections)) => {
            let mut all = BytesMut::new();
            for s in sections {
                all.extend_from_slice(s);
            }
            Some(all.freeze())
        }
        _ => None,
    }
}

/// Checks a reply: the requester's correlation-id first, then the full length, then
/// the tag of the request just sent at both ends of the body.
pub fn check_reply(
    reply: &Message,
    correlation: &str,
    size: usize,
    tag: &[u8; TAG_LEN],
) -> ReplyCheck {
    let correl_ok = matches!(
        reply.properties.as_ref().and_then(|p| p.correlation_id.as_ref()),
        Some(MessageId::String(s)) if s.as_str() == correlation
    );
    if !correl_ok {
        return ReplyCheck::WrongCorrelId;
    }
    let body = body_bytes(reply).unwrap_or_default();
    if body.len() != size {
        ReplyCheck::WrongLength {
            got: body.len(),
            want: size,
        }
    } else if !body_intact(&body, tag) {
        ReplyCheck::CorruptBody
    } else {
        ReplyCheck::Good
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::verify::{make_body, request_tag};

    fn roundtrip(m: &Message) -> Message {
        let mut out = BytesMut::new();
        m.encode(&mut out);
        Message::decode(out.freeze()).expect("decodes")
    }

    #[test]
    fn a_reply_answers_its_request_through_the_wire() {
        let tag = request_tag(4, 17);
        let body = make_body(&[0x5A; 2048], &tag);
        let req = roundtrip(&request(
            body,
            "REQUEST.5",
            "REPLY",
            &requester_correlation(4),
            true,
        ));
        assert!(req.header.as_ref().is_some_and(|h| h.durable));
        let (reply, address) = reply_to(&req).expect("answerable");
        assert_eq!(address.as_str(), "REPLY");
        let reply = roundtrip(&reply);
        assert!(
            reply.header.as_ref().is_some_and(|h| h.durable),
            "durability copied"
        );
        assert_eq!(check_reply(&reply, "RQ-5", 2048, &tag), ReplyCheck::Good);
        // Another requester's reply, a stale one, a short one.
        assert_eq!(
            check_reply(&reply, "RQ-6", 2048, &tag),
            ReplyCheck::WrongCorrelId
        );
        assert_eq!(
            check_reply(&reply, "RQ-5", 2048, &request_tag(4, 18)),
            ReplyCheck::CorruptBody
        );
        assert_eq!(
            check_reply(&reply, "RQ-5", 4096, &tag),
            ReplyCheck::WrongLength {
                got: 2048,
                want: 4096
            }
        );
    }

    #[test]
    fn requests_without_reply_to_and_odd_bodies_are_caught() {
        let d = datagram(Bytes::from_static(b"x"), "SR.1", false);
        assert_eq!(reply_to(&d).err(), Some(BadRequest::NoReplyTo));
        assert!(d.header.as_ref().is_some_and(|h| !h.durable));
        let mut split = d.clone();
        split.body = Some(Body::Data(
            vec![Bytes::from_static(b"ab"), Bytes::from_static(b"cd")].into(),
        ));
        assert_eq!(body_bytes(&split).as_deref(), Some(&b"abcd"[..]));
        split.body = Some(Body::Value(ferry_amqp::Value::from("text")));
        assert_eq!(body_bytes(&split), None);
        let numeric = Message {
            properties: Some(Properties {
                correlation_id: Some(MessageId::Ulong(1)),
                ..Properties::default()
            }),
            ..Message::default()
        };
        assert_eq!(
            check_reply(&numeric, "RQ-1", 0, &request_tag(0, 1)),
            ReplyCheck::WrongCorrelId
        );
    }

    #[test]
    fn selectors_name_the_requester() {
        assert_eq!(requester_correlation(0), "RQ-1");
        assert_eq!(reply_selector(15), "JMSCorrelationID = 'RQ-16'");
    }
}
