//! Entry points that push arbitrary bytes through this crate's decoders of structures
//! that come from outside: the transmission queue header ([`crate::transmission`]) heads
//! messages that arrive over channels and that come back from disk at restart; trigger
//! messages ([`crate::trigger`]) are read from initiation queues any application may
//! put to.
//!
//! Resource-monitoring publications ([`crate::pcf`]) arrive on `$SYS` topics that
//! any application with PUB authority could publish to: `ferry monitor` decodes them.
//! crates/ferry-mqi/fuzz's target `pcf_message` calls [`decode_pcf`], and this
//! crate's proptests call it too.
//!
//! Property values as text ([`crate::property_text`]) arrive in the messaging REST
//! API's `ibm-mq-usr-*` headers from any HTTP client: crates/ferry-mqi/fuzz's target
//! `property_text` calls [`parse_property_text`], and this crate's proptests call it too.
//!
//! W3C `traceparent` values ([`crate::trace_context`]) arrive as message properties from
//! any application: crates/ferry-mqi/fuzz's target `trace_context` calls
//! [`parse_trace_parent`], and this crate's proptests call it too.
//!
//! ferry-engine's cargo-fuzz target `trigger_message` calls
//! [`decode_trigger_messages`], and this crate's proptests call it too.
//!
//! ferry-engine's cargo-fuzz target `journal_record` (crates/ferry-engine/fuzz) calls
//! [`decode_transmission_header`] on every input, and this crate's proptests call it too,
//! so stable CI covers the same path. Besides "never panics", it checks that whatever
//! decodes re-encodes to a header that decodes to the same value.

use crate::pcf::{Encoding, PcfMessage};
use crate::transmission::TransmissionHeader;
use crate::trigger::{TriggerMessage, TriggerMessageChars};

/// Decodes `data` as an MQXQH (and MQMDE); if it decodes, re-encodes it and checks the
/// round trip. Panics only on a codec bug.
pub fn decode_transmission_header(data: &[u8]) {
    let Ok((header, used)) = TransmissionHeader::decode(data) else {
        return;
    };
    assert!(
        used <= data.len(),
        "consumed {used} of {} bytes",
        data.len()
    );
    let mut again = Vec::new();
    header.encode(&mut again);
    let (back, _) = TransmissionHeader::decode(&again).expect("a re-encoded header decodes");
    assert_eq!(back, header, "re-encoded header decodes differently");
}

/// Decodes `data` as an MQTM in both byte orders and as an MQTMC2; whatever decodes is
/// re-encoded and must decode to the same value. Panics only on a codec bug.
pub fn decode_trigger_messages(data: &[u8]) {
    for encoding in [crate::descriptor::ENCODING_NATIVE, 0x111] {
        if let Ok(tm) = TriggerMessage::decode(data, encoding) {
            let mut again = Vec::new();
            tm.encode(encoding, &mut again);
            let back = TriggerMessage::decode(&again, encoding).expect("a re-encoded MQTM decodes");
            assert_eq!(back, tm, "re-encoded MQTM decodes differently");
        }
    }
    if let Ok(c) = TriggerMessageChars::decode(data) {
        let again = c.encode();
        let back = TriggerMessageChars::decode(&again).expect("a re-encoded MQTMC2 decodes");
        assert_eq!(back, c, "re-encoded MQTMC2 decodes differently");
    }
}

/// Decodes `data` as a PCF message in both byte orders; whatever decodes is re-encoded
/// and must decode to the same value. Panics only on a codec bug.
pub fn decode_pcf(data: &[u8]) {
    for enc in [Encoding::Native, Encoding::Normal] {
        if let Ok(m) = PcfMessage::decode(data, enc) {
            let again = m.encode(enc);
            let back = PcfMessage::decode(&again, enc).expect("a re-encoded PCF message decodes");
            assert_eq!(back, m, "re-encoded PCF message decodes differently");
        }
    }
}

/// Reads `data` (as UTF-8, lossily) as a property value's text; whatever reads is
/// formatted and must read back to the same value (NaN to NaN). Panics only on a codec
/// bug.
pub fn parse_property_text(data: &[u8]) {
    use crate::property_text::{format_property, parse_property};
    use crate::PropertyValue;
    let text = String::from_utf8_lossy(data);
    let Ok(value) = parse_property(&text) else {
        return;
    };
    let again = format_property(&value);
    // Escapes lengthen text: a value read from text within the limit may format to more
    // (a REST answer sends it whole); such text is refused as too long, nothing else.
    if again.len() > crate::property_text::MAX_PROPERTY_TEXT {
        let refused = parse_property(&again).map_err(|e| e.reason());
        assert_eq!(refused, Err(crate::ReasonCode::PropertyValueTooBig));
        return;
    }
    let back = parse_property(&again).expect("a formatted property value reads back");
    let same = match (&back, &value) {
        (PropertyValue::Float32(a), PropertyValue::Float32(b)) => {
            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
        }
        (PropertyValue::Float64(a), PropertyValue::Float64(b)) => {
            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
        }
        _ => back == value,
    };
    assert!(
        same,
        "{value:?} formatted as {again:?} reads back as {back:?}"
    );
}

/// Parses `data` (when it is UTF-8) as a `traceparent`; whatever parses formats back to
/// a version-00 value that parses to the same context, and a version-00 input formats
/// back to itself. Panics only on a parser bug.
pub fn parse_trace_parent(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(tp) = crate::TraceParent::parse(text) else {
        return;
    };
    let again = tp.to_header();
    assert_eq!(
        crate::TraceParent::parse(&again),
        Ok(tp),
        "re-formatted value differs"
    );
    if text.starts_with("00-") {
        assert_eq!(again, text, "a version-00 value formats back to itself");
    }
}
