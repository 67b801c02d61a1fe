//! A message's descriptor and properties as the HTTP headers of IBM MQ's messaging REST
//! API, both ways.
//!
//! Request (POST): `ibm-mq-md-correlationId` (hex), `ibm-mq-md-expiry` (`unlimited` or
//! milliseconds), `ibm-mq-md-persistence` (`persistent`/`nonPersistent`),
//! `ibm-mq-md-priority` (0-9), `ibm-mq-md-replyTo` (`queue[@qmgr]`), and one
//! `ibm-mq-usr-<name>` header per message property, its value in the text form of
//! [`ferry_mqi::property_text`] (plain text, or `"value";type=int32` and the like).
//!
//! Response (DELETE, GET): the same `ibm-mq-md-*` fields and `ibm-mq-md-messageId`, and
//! every property as `ibm-mq-usr-<name>`. HTTP header names do not keep case (the HTTP
//! stack delivers and sends them lower case), so property names travel lower case; a
//! property whose name cannot be a header name (characters outside HTTP's token set) is
//! not shown.

use super::errors::{self, RestError};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use bytes::Bytes;
use ferry_engine::GotMessage;
use ferry_mqi::descriptor::{format, persistence, EXPIRY_UNLIMITED, NONE_ID};
use ferry_mqi::property_text::{format_property, parse_property};
use ferry_mqi::{FixedStr, MessageDescriptor, MessageProperties, ReasonCode};

/// The prefix of the headers that carry message properties.
pub(super) const PROPERTY_PREFIX: &str = "ibm-mq-usr-";

/// A 24-byte identifier from up to 48 hex digits (padded with zeros, as MQ pads).
pub(super) fn id_from_hex(text: &str) -> Option<[u8; 24]> {
    let text = text.trim();
    if text.is_empty() || text.len() > 48 || !text.len().is_multiple_of(2) {
        return None;
    }
    let mut id = [0u8; 24];
    for (i, pair) in text.as_bytes().chunks(2).enumerate() {
        let hi = (pair[0] as char).to_digit(16)?;
        let lo = (pair[1] as char).to_digit(16)?;
        id[i] = u8::try_from(hi * 16 + lo).ok()?;
    }
    Some(id)
}

/// An identifier as 48 hex digits (upper case, as IBM's REST API shows them).
pub(crate) fn id_to_hex(id: &[u8; 24]) -> String {
    id.iter().map(|b| format!("{b:02X}")).collect()
}

/// The text of header `name`, trimmed; 400 when it is not UTF-8.
fn header_text<'a>(headers: &'a HeaderMap, name: &str) -> Result<Option<&'a str>, RestError> {
    match headers.get(name) {
        None => Ok(None),
        Some(v) => std::str::from_utf8(v.as_bytes())
            .map(|s| Some(s.trim()))
            .map_err(|_| errors::bad_request(0, format!("the {name} header is not UTF-8 text"))),
    }
}

/// The descriptor the request's `ibm-mq-md-*` headers ask for.
pub(super) fn request_descriptor(headers: &HeaderMap) -> Result<MessageDescriptor, RestError> {
    let mut md = MessageDescriptor {
        format: format::STRING,
        ccsid: 1208,
        ..MessageDescriptor::default()
    };
    if let Some(c) = header_text(headers, "ibm-mq-md-correlationId")? {
        md.correl_id = id_from_hex(c).ok_or_else(|| {
            errors::bad_request(
                ReasonCode::CorrelIdError.number(),
                "ibm-mq-md-correlationId must be up to 48 hex digits".into(),
            )
        })?;
    }
    if let Some(p) = header_text(headers, "ibm-mq-md-persistence")? {
        md.persistence = match p {
            "persistent" => persistence::PERSISTENT,
            "nonPersistent" => persistence::NOT_PERSISTENT,
            _ => {
                return Err(errors::bad_request(
                    ReasonCode::PersistenceError.number(),
                    "ibm-mq-md-persistence must be 'persistent' or 'nonPersistent'".into(),
                ))
            }
        };
    }
    if let Some(e) = header_text(headers, "ibm-mq-md-expiry")? {
        md.expiry = if e.eq_ignore_ascii_case("unlimited") {
            EXPIRY_UNLIMITED
        } else {
            let ms: u64 = e.parse().ok().filter(|ms| *ms > 0).ok_or_else(|| {
                errors::bad_request(
                    ReasonCode::ExpiryError.number(),
                    "ibm-mq-md-expiry must be 'unlimited' or milliseconds".into(),
                )
            })?;
            // MQMD Expiry counts tenths of a second.
            i32::try_from(ms.div_ceil(100)).unwrap_or(i32::MAX)
        };
    }
    if let Some(p) = header_text(headers, "ibm-mq-md-priority")? {
        md.priority = p
            .parse()
            .ok()
            .filter(|p| (0..=9).contains(p))
            .ok_or_else(|| {
                errors::bad_request(
                    ReasonCode::PriorityError.number(),
                    "ibm-mq-md-priority must be 0 to 9".into(),
                )
            })?;
    }
    if let Some(r) = header_text(headers, "ibm-mq-md-replyTo")? {
        let (q, qm) = r.split_once('@').unwrap_or((r, ""));
        let bad = || {
            errors::bad_request(
                ReasonCode::MissingReplyToQ.number(),
                "ibm-mq-md-replyTo must be queue[@qmgr]".into(),
            )
        };
        md.reply_to_q = FixedStr::new(q).map_err(|_| bad())?;
        md.reply_to_qmgr = FixedStr::new(qm).map_err(|_| bad())?;
    }
    if let Some(t) = header_text(headers, "content-type")? {
        if !t.to_ascii_lowercase().starts_with("text/") {
            return Err(RestError {
                status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
                ..errors::bad_request(
                    0,
                    format!("Content-Type '{t}' is not text: send text/plain;charset=utf-8"),
                )
            });
        }
    }
    Ok(md)
}

/// The message properties of the request's `ibm-mq-usr-<name>` headers, encoded (empty
/// when there are none): 400 with MQ's reason for a bad name, type or value.
pub(super) fn request_properties(headers: &HeaderMap) -> Result<Bytes, RestError> {
    let mut properties = MessageProperties::new();
    for (name, value) in headers {
        let Some(property) = name.as_str().strip_prefix(PROPERTY_PREFIX) else {
            continue;
        };
        let header = name.as_str();
        let text = std::str::from_utf8(value.as_bytes()).map_err(|_| {
            errors::bad_request(0, format!("the {header} header is not UTF-8 text"))
        })?;
        let value = parse_property(text.trim())
            .map_err(|e| errors::bad_request(e.reason().number(), format!("{header}: {e}")))?;
        properties
            .set(property, value)
            .map_err(|e| errors::bad_request(e.reason().number(), format!("{header}: {e}")))?;
    }
    Ok(properties.encode())
}

/// The `ibm-mq-md-*` and `ibm-mq-usr-*` headers of a message that was got or browsed.
pub(super) fn message_headers(got: &GotMessage, headers: &mut HeaderMap) {
    let md = &got.md;
    let mut set = |name: &'static str, value: String| {
        if let Ok(v) = HeaderValue::from_str(&value) {
            headers.insert(name, v);
        }
    };
    set("ibm-mq-md-messageId", id_to_hex(&md.msg_id));
    if md.correl_id != NONE_ID {
        set("ibm-mq-md-correlationId", id_to_hex(&md.correl_id));
    }
    set("ibm-mq-md-persistence", persistence_text(md).to_string());
    set("ibm-mq-md-expiry", expiry_text(md));
    set("ibm-mq-md-priority", md.priority.to_string());
    if let Some(reply_to) = reply_to_text(md) {
        set("ibm-mq-md-replyTo", reply_to);
    }
    // Properties the queue manager stored are well formed; a malformed encoding shows none.
    let Ok(properties) = MessageProperties::decode(&got.properties) else {
        return;
    };
    for (name, value) in properties.iter() {
        let header = HeaderName::from_bytes(format!("{PROPERTY_PREFIX}{name}").as_bytes());
        let text = HeaderValue::from_bytes(format_property(value).as_bytes());
        if let (Ok(header), Ok(text)) = (header, text) {
            headers.append(header, text);
        }
    }
}

/// MQMD Persistence as the REST API spells it.
pub(super) fn persistence_text(md: &MessageDescriptor) -> &'static str {
    if md.persistence == persistence::PERSISTENT {
        "persistent"
    } else {
        "nonPersistent"
    }
}

/// MQMD Expiry (time left) as the REST API gives it: `unlimited` or milliseconds.
pub(super) fn expiry_text(md: &MessageDescriptor) -> String {
    if md.expiry < 0 {
        "unlimited".to_string()
    } else {
        (i64::from(md.expiry) * 100).to_string()
    }
}

/// MQMD ReplyToQ and ReplyToQMgr as `queue[@qmgr]`; `None` when there is no reply queue.
pub(super) fn reply_to_text(md: &MessageDescriptor) -> Option<String> {
    let reply_q = md.reply_to_q.as_str().trim();
    if reply_q.is_empty() {
        return None;
    }
    let qm = md.reply_to_qmgr.as_str().trim();
    Some(if qm.is_empty() {
        reply_q.to_string()
    } else {
        format!("{reply_q}@{qm}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_mqi::PropertyValue;

    #[test]
    fn identifiers_are_hex() {
        let id = id_from_hex("414D51").unwrap();
        assert_eq!(&id[..3], b"AMQ");
        assert_eq!(id[3..], [0u8; 21]);
        assert_eq!(id_to_hex(&id).len(), 48);
        assert_eq!(id_from_hex(&id_to_hex(&id)), Some(id));
        for bad in ["", "4", "zz", &"00".repeat(25), "é0"] {
            assert_eq!(id_from_hex(bad), None, "{bad}");
        }
    }

    #[test]
    fn property_headers_round_trip() {
        let mut request = HeaderMap::new();
        request.insert("ibm-mq-usr-colour", HeaderValue::from_static("blue"));
        request.insert(
            "ibm-mq-usr-size",
            HeaderValue::from_static("\"12\";type=int32"),
        );
        request.insert("ibm-mq-md-priority", HeaderValue::from_static("7"));
        let encoded = request_properties(&request).expect("properties");
        let md = request_descriptor(&request).expect("descriptor");
        assert_eq!(md.priority, 7);
        let got = GotMessage {
            md,
            data: Bytes::new(),
            data_length: 0,
            properties: encoded,
            warning: None,
        };
        let mut response = HeaderMap::new();
        message_headers(&got, &mut response);
        assert_eq!(response["ibm-mq-usr-colour"], "blue");
        assert_eq!(response["ibm-mq-usr-size"], "\"12\";type=int32");
        assert_eq!(response["ibm-mq-md-priority"], "7");
        let decoded = MessageProperties::decode(&got.properties).expect("decodes");
        assert_eq!(decoded.get("size"), Some(&PropertyValue::Int32(12)));
    }

    #[test]
    fn bad_property_headers_get_mqs_reasons() {
        for (name, value, reason) in [
            ("ibm-mq-usr-n", "\"x\";type=int32", 2472),
            ("ibm-mq-usr-n", "\"1\";type=money", 2473),
            ("ibm-mq-usr-mqfoo", "x", 2442),
            ("ibm-mq-usr-1abc", "x", 2442),
            ("ibm-mq-usr-and", "x", 2442),
        ] {
            let mut request = HeaderMap::new();
            request.insert(
                HeaderName::from_static(name),
                HeaderValue::from_static(value),
            );
            let err = request_properties(&request).expect_err(name);
            assert_eq!(err.reason, reason, "{name}: {value}: {err}");
            assert_eq!(err.status, StatusCode::BAD_REQUEST);
        }
    }
}
