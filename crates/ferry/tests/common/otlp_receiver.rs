//! A minimal OTLP/HTTP trace receiver for the tracing tests: a real protocol peer that
//! listens on a free loopback port, answers `POST /v1/traces` (HTTP/1.1, keep-alive,
//! `Content-Length` bodies) with 200, and decodes each body as an OTLP
//! `ExportTraceServiceRequest` (protobuf) into [`ReceivedSpan`]s the test can read.
//! Included with `#[path]` by `tracing.rs`.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as ProtoValue;
use opentelemetry_proto::tonic::common::v1::KeyValue as ProtoKeyValue;
use prost::Message as _;

/// One span as the receiver got it: ids as lowercase hex, attributes as text.
#[derive(Clone, Debug, PartialEq)]
pub struct ReceivedSpan {
    /// The resource's `service.name`.
    pub service: String,
    /// The span's name.
    pub name: String,
    /// OTLP span kind (2 server, 3 client, 4 producer, 5 consumer).
    pub kind: i32,
    /// 32 hex digits.
    pub trace_id: String,
    /// 16 hex digits.
    pub span_id: String,
    /// 16 hex digits; empty for a root span.
    pub parent_span_id: String,
    /// The W3C tracestate the span carries.
    pub trace_state: String,
    /// Attribute values as text (`true`, `42`, `ORDERS`).
    pub attributes: BTreeMap<String, String>,
    /// OTLP status code (0 unset, 1 ok, 2 error).
    pub status_code: i32,
}

impl ReceivedSpan {
    /// Attribute `key`, if the span has it.
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }
}

/// The receiver: its port, and what it has received so far.
pub struct OtlpReceiver {
    port: u16,
    spans: Arc<Mutex<Vec<ReceivedSpan>>>,
    requests: Arc<Mutex<u64>>,
}

impl OtlpReceiver {
    /// Listens on a free loopback port, serving each connection on a thread.
    pub fn start() -> OtlpReceiver {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the OTLP receiver");
        let port = listener.local_addr().expect("local addr").port();
        let spans = Arc::new(Mutex::new(Vec::new()));
        let requests = Arc::new(Mutex::new(0));
        let (s, r) = (spans.clone(), requests.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (s, r) = (s.clone(), r.clone());
                std::thread::spawn(move || serve(stream, &s, &r));
            }
        });
        OtlpReceiver {
            port,
            spans,
            requests,
        }
    }

    /// The base URL to give qm.ini Tracing/Endpoint.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The spans received so far.
    pub fn spans(&self) -> Vec<ReceivedSpan> {
        self.spans.lock().expect("spans").clone()
    }

    /// Export requests received so far.
    pub fn requests(&self) -> u64 {
        *self.requests.lock().expect("requests")
    }
}

/// Serves one keep-alive connection until the peer closes it or sends nonsense.
fn serve(stream: TcpStream, spans: &Mutex<Vec<ReceivedSpan>>, requests: &Mutex<u64>) {
    let mut writer = stream.try_clone().expect("clone the stream");
    let mut reader = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut content_length = 0usize;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    content_length = value.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0u8; content_length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let decoded = request_line.starts_with("POST /v1/traces")
            && ExportTraceServiceRequest::decode(body.as_slice())
                .map(|req| spans.lock().expect("spans").extend(flatten(req)))
                .is_ok();
        *requests.lock().expect("requests") += 1;
        let status = if decoded { "200 OK" } else { "400 Bad Request" };
        let answer = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n"
        );
        if writer.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

/// The spans of a request, each with its resource's service name.
fn flatten(req: ExportTraceServiceRequest) -> Vec<ReceivedSpan> {
    let mut out = Vec::new();
    for rs in req.resource_spans {
        let service = rs
            .resource
            .map(|r| attributes(&r.attributes))
            .and_then(|a| a.get("service.name").cloned())
            .unwrap_or_default();
        for ss in rs.scope_spans {
            for s in ss.spans {
                out.push(ReceivedSpan {
                    service: service.clone(),
                    name: s.name,
                    kind: s.kind,
                    trace_id: hex(&s.trace_id),
                    span_id: hex(&s.span_id),
                    parent_span_id: hex(&s.parent_span_id),
                    trace_state: s.trace_state,
                    attributes: attributes(&s.attributes),
                    status_code: s.status.map_or(0, |st| st.code),
                });
            }
        }
    }
    out
}

fn attributes(kvs: &[ProtoKeyValue]) -> BTreeMap<String, String> {
    kvs.iter()
        .map(|kv| {
            let v = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                Some(ProtoValue::StringValue(s)) => s.clone(),
                Some(ProtoValue::BoolValue(b)) => b.to_string(),
                Some(ProtoValue::IntValue(i)) => i.to_string(),
                Some(ProtoValue::DoubleValue(d)) => d.to_string(),
                other => format!("{other:?}"),
            };
            (kv.key.clone(), v)
        })
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
