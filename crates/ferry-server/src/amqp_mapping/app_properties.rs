//! AMQP application-property values ⇄ MQ message-property values.
//!
//! JMS user properties are simple types, and MQ's property types are JMS's, so most
//! values map one to one: boolean, byte, short, int, long, float, double, string and
//! binary become MQTYPE_BOOLEAN, INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, STRING and
//! BYTE_STRING, and null MQTYPE_NULL. AMQP's unsigned integers (proton clients send them)
//! widen to the next signed type that holds every value (a ulong only when it fits a
//! long) and symbols read as strings, so selectors compare them as numbers and text.
//! Other types (timestamps, uuids, chars, decimals, lists, maps, described values) have
//! no MQ property type and are skipped: an AMQP consumer still gets them from the raw
//! sections, only MQINQMP and selectors do not see them.

use ferry_amqp::{Str, Value};
use ferry_mqi::PropertyRef;

/// The MQ property value for an application-property value, if it has one (borrowing
/// strings and binaries from the decoded message).
pub(crate) fn to_property(v: &Value) -> Option<PropertyRef<'_>> {
    Some(match v {
        Value::Null => PropertyRef::Null,
        Value::Bool(b) => PropertyRef::Boolean(*b),
        Value::Byte(x) => PropertyRef::Int8(*x),
        Value::Short(x) => PropertyRef::Int16(*x),
        Value::Int(x) => PropertyRef::Int32(*x),
        Value::Long(x) => PropertyRef::Int64(*x),
        Value::Ubyte(x) => PropertyRef::Int16((*x).into()),
        Value::Ushort(x) => PropertyRef::Int32((*x).into()),
        Value::Uint(x) => PropertyRef::Int64((*x).into()),
        Value::Ulong(x) => PropertyRef::Int64(i64::try_from(*x).ok()?),
        Value::Float(x) => PropertyRef::Float32(*x),
        Value::Double(x) => PropertyRef::Float64(*x),
        Value::String(s) => PropertyRef::String(s.as_str()),
        Value::Symbol(s) => PropertyRef::String(s.as_str()),
        Value::Binary(b) => PropertyRef::ByteString(b),
        _ => return None,
    })
}

/// The application-property value for an MQ property value.
pub(crate) fn to_amqp(p: PropertyRef<'_>) -> Value {
    match p {
        PropertyRef::Null => Value::Null,
        PropertyRef::Boolean(b) => Value::Bool(b),
        PropertyRef::Int8(x) => Value::Byte(x),
        PropertyRef::Int16(x) => Value::Short(x),
        PropertyRef::Int32(x) => Value::Int(x),
        PropertyRef::Int64(x) => Value::Long(x),
        PropertyRef::Float32(x) => Value::Float(x),
        PropertyRef::Float64(x) => Value::Double(x),
        PropertyRef::String(s) => Value::String(Str::from(s)),
        PropertyRef::ByteString(b) => Value::Binary(bytes::Bytes::copy_from_slice(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    #[test]
    fn jms_types_map_both_ways() {
        let values = [
            Value::Null,
            Value::Bool(true),
            Value::Byte(-1),
            Value::Short(-300),
            Value::Int(70_000),
            Value::Long(-1 << 40),
            Value::Float(1.5),
            Value::Double(-2.25),
            Value::from("text"),
            Value::Binary(Bytes::from_static(b"\0\x01")),
        ];
        for v in values {
            let p = to_property(&v).expect("maps");
            assert_eq!(to_amqp(p), v);
        }
    }

    #[test]
    fn unsigned_widen_and_the_rest_is_skipped() {
        assert_eq!(
            to_property(&Value::Ubyte(255)),
            Some(PropertyRef::Int16(255))
        );
        assert_eq!(
            to_property(&Value::Uint(u32::MAX)),
            Some(PropertyRef::Int64(u32::MAX.into()))
        );
        assert_eq!(to_property(&Value::Ulong(u64::MAX)), None);
        assert_eq!(to_property(&Value::Uuid([0; 16])), None);
        assert_eq!(to_property(&Value::List(vec![])), None);
    }
}
