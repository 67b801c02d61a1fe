//! Selector hot paths: compiling, and `matches` for the request/reply shape
//! (`JMSCorrelationID = 'ID:...'`) and a typical content filter, against a message with
//! five properties. Reported, never asserted.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use ferry_selector::{Header, PropertySource, Selector, Value};

/// A message the way a server would hold one: headers in fields, properties in a list.
struct Message {
    correlation_id: String,
    properties: Vec<(String, Value<'static>)>,
}

impl PropertySource for Message {
    fn header(&self, header: Header) -> Option<Value<'_>> {
        match header {
            Header::CorrelationId => Some(Value::str(&self.correlation_id)),
            Header::Priority => Some(Value::Long(4)),
            _ => None,
        }
    }

    fn property(&self, name: &str) -> Option<Value<'_>> {
        self.properties
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| match v {
                Value::String(s) => Value::str(s),
                other => other.clone(),
            })
    }
}

fn message() -> Message {
    Message {
        correlation_id: "ID:414d5120514d31202020202020202020a1b2c3d4e5f60718".into(),
        properties: vec![
            ("region".into(), Value::str("emea")),
            ("color".into(), Value::str("red")),
            ("size".into(), Value::Long(42)),
            ("weight".into(), Value::Double(3.75)),
            ("fragile".into(), Value::Bool(false)),
        ],
    }
}

fn benches(c: &mut Criterion) {
    let text = "color = 'red' AND weight > 2.5";
    c.bench_function("parse_color_and_weight", |b| {
        b.iter(|| Selector::parse(black_box(text)))
    });
    let long = "JMSType = 'order' AND (region IN ('emea', 'apac') OR size BETWEEN 10 AND 100) \
                AND name LIKE 'ord!_%' ESCAPE '!' AND NOT fragile";
    c.bench_function("parse_long_selector", |b| {
        b.iter(|| Selector::parse(black_box(long)))
    });

    let reply = "JMSCorrelationID='ID:5e0e6ac2-1d2b-4b43-9d1c-27f0d4c1f3a9:1:1:1-42'";
    c.bench_function("parse_correlation_id", |b| {
        b.iter(|| Selector::parse(black_box(reply)))
    });

    let msg = message();
    let by_id = Selector::parse(&format!("JMSCorrelationID = '{}'", msg.correlation_id))
        .expect("valid selector");
    c.bench_function("matches_correlation_id", |b| {
        b.iter(|| black_box(&by_id).matches(black_box(&msg)))
    });
    let content = Selector::parse(text).expect("valid selector");
    c.bench_function("matches_color_and_weight", |b| {
        b.iter(|| black_box(&content).matches(black_box(&msg)))
    });
}

criterion_group!(selector, benches);
criterion_main!(selector);
