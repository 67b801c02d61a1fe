//! Tracing a message across protocols, with real `ferry` processes.
//!
//! Trace context: a `traceparent` and a `tracestate` are ordinary string properties, so
//! - a native application puts them (PUT/PUT1 carry properties from protocol minor 6)
//!   and an AMQP consumer receives them as application-properties of the same names
//!   (where OpenTelemetry's messaging conventions for AMQP look for the context);
//! - an AMQP producer's application-property `traceparent` is an MQ property a native
//!   MQGET sees;
//! - a message crossing a sender/receiver channel pair keeps them unchanged;
//! - a value that is not a valid `traceparent` is carried all the same (it is only never
//!   used as a parent), while names in the queue manager's own namespace (`mq…`) are
//!   refused with 2442 MQRC_PROPERTY_NAME_ERROR.
//!
//! Spans: queue managers whose qm.ini Tracing stanza names an OTLP receiver this test
//! runs (`common/otlp_receiver.rs`, a real OTLP/HTTP peer decoding protobuf) export
//! - for a native put with a sampled `traceparent` and an AMQP receive: `send ORDERS`
//!   and `receive ORDERS`, children of the producer's span, in its trace, with the
//!   messaging attributes;
//! - with `Sampler=always`, a put without `traceparent` gets one naming its `send`
//!   span, which the consumer sees; the get's `receive` and the `MQCMIT` settle are
//!   children of that span;
//! - an AMQP transaction that held a traced transfer ends with an `MQCMIT` settle span,
//!   a child of that transfer's `send` span;
//! - across a channel: the sending queue manager's `send` spans (the put, the channel)
//!   and the receiving one's `process` and `receive` spans, all in the producer's trace;
//! - nothing when `Sampler=off`; and an unreachable collector does not stop messaging,
//!   it gets FRY5591W in the error log.

#[path = "common/amqp_client.rs"]
mod amqp_client;
mod common;
#[path = "common/otlp_receiver.rs"]
mod otlp_receiver;

use amqp_client::*;
use bytes::Bytes;
use common::message_channels::*;
use common::*;
use ferry_amqp::{Body, Message, Value};
use ferry_mqi::trace_context::{TRACEPARENT, TRACESTATE};
use ferry_mqi::{
    MessageDescriptor, MessageProperties, ObjectDescriptor, OpenOptions, PropertyValue,
    PutOptionFlags, PutOptions, ReasonCode,
};

const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const STATE: &str = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7";

/// `traceparent` (and `tracestate` when given) as message properties.
fn trace_properties(parent: &str, state: Option<&str>) -> MessageProperties {
    let mut p = MessageProperties::new();
    p.set(TRACEPARENT, PropertyValue::String(parent.into()))
        .expect("traceparent is a valid name");
    if let Some(state) = state {
        p.set(TRACESTATE, PropertyValue::String(state.into()))
            .expect("tracestate is a valid name");
    }
    p
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// The string application-property `name` of an AMQP message.
fn app_property(m: &Message, name: &str) -> Option<String> {
    m.application_properties
        .iter()
        .flatten()
        .find(|(k, _)| k.as_str() == name)
        .map(|(_, v)| match v {
            Value::String(s) => s.as_str().to_string(),
            other => panic!("{name} is not a string: {other:?}"),
        })
}

#[test]
fn a_native_traceparent_reaches_an_amqp_consumer_as_an_application_property() {
    let qm = start("TC.N2A");
    mqsc_ok(&qm, "DEFINE QLOCAL(ORDERS)");
    let rt = runtime();
    rt.block_on(async {
        let conn = connect(&qm.client()).await;
        let q = open(&conn, "ORDERS", OpenOptions::OUTPUT).await;
        let mut md = MessageDescriptor::default();
        let props = trace_properties(PARENT, Some(STATE));
        q.put_with_properties(&mut md, &PutOptions::default(), &props, "order 1")
            .await
            .expect("put with a traceparent");
        // MQPUT1 carries them too.
        let mut md = MessageDescriptor::default();
        conn.put1_with_properties(
            &ObjectDescriptor::queue("ORDERS").expect("a queue name"),
            &mut md,
            &PutOptions::default(),
            &trace_properties(PARENT, None),
            "order 2",
        )
        .await
        .expect("put1 with a traceparent");
    });
    let mut c = AmqpTestClient::connect(&qm, "itest-trace");
    let receiver = c.attach_receiver("ORDERS", 2);
    let (id, _, first) = c.receive(receiver);
    assert_eq!(app_property(&first, TRACEPARENT).as_deref(), Some(PARENT));
    assert_eq!(app_property(&first, TRACESTATE).as_deref(), Some(STATE));
    c.accept(id);
    let (id, _, second) = c.receive(receiver);
    assert_eq!(app_property(&second, TRACEPARENT).as_deref(), Some(PARENT));
    assert_eq!(app_property(&second, TRACESTATE), None);
    c.accept(id);
    c.close();
}

#[test]
fn an_amqp_traceparent_reaches_a_native_get_as_a_property() {
    let qm = start("TC.A2N");
    mqsc_ok(&qm, "DEFINE QLOCAL(ORDERS)");
    let mut c = AmqpTestClient::connect(&qm, "itest-trace");
    let sender = c.attach_sender("ORDERS");
    c.send_accepted(
        sender,
        &Message {
            application_properties: Some(vec![
                (TRACEPARENT.into(), Value::from(PARENT)),
                (TRACESTATE.into(), Value::from(STATE)),
            ]),
            body: Some(Body::data(Bytes::from_static(b"order"))),
            ..Message::default()
        },
    );
    c.close();
    let got = runtime().block_on(async {
        let conn = connect(&qm.client()).await;
        let q = open(&conn, "ORDERS", OpenOptions::INPUT_SHARED).await;
        get(&q).await.expect("native get").1
    });
    assert_eq!(
        got.property(TRACEPARENT),
        Some(PropertyValue::String(PARENT.into()))
    );
    assert_eq!(
        got.property(TRACESTATE),
        Some(PropertyValue::String(STATE.into()))
    );
}

#[tokio::test(flavor = "current_thread")]
async fn trace_context_crosses_a_channel_unchanged() {
    let qma = start("TCA");
    let qmb = start("TCB");
    let channel = link(&qma, &qmb);
    mqsc_ok(&qmb, "DEFINE QLOCAL(APP.IN)\n");
    mqsc_ok(
        &qma,
        "DEFINE QREMOTE(APP.REMOTE) RNAME(APP.IN) RQMNAME(TCB) XMITQ(TCB)\n",
    );
    start_channel(&qma, &channel);
    let a = connect(&qma.client()).await;
    let q = open(&a, "APP.REMOTE", OpenOptions::OUTPUT).await;
    // Not a valid traceparent (upper case): carried all the same.
    let odd = PARENT.to_uppercase();
    for (i, parent) in [PARENT, odd.as_str()].into_iter().enumerate() {
        let mut md = MessageDescriptor::default();
        let pmo = PutOptions::new(PutOptionFlags::NO_SYNCPOINT);
        let props = trace_properties(parent, Some(STATE));
        q.put_with_properties(&mut md, &pmo, &props, format!("m{i}"))
            .await
            .expect("put to the remote queue");
    }
    let b = connect(&qmb.client()).await;
    let inq = open(&b, "APP.IN", OpenOptions::INPUT_SHARED).await;
    for parent in [PARENT, odd.as_str()] {
        let gmo = gmo(ferry_mqi::GetOptionFlags::WAIT, 30_000);
        let (_, got) = get_with(&inq, gmo).await.expect("the message arrives");
        assert_eq!(
            got.property(TRACEPARENT),
            Some(PropertyValue::String(parent.into()))
        );
        assert_eq!(
            got.property(TRACESTATE),
            Some(PropertyValue::String(STATE.into()))
        );
    }
}

#[tokio::test(flavor = "current_thread")]
async fn properties_in_the_queue_managers_namespace_are_refused() {
    let qm = start("TC.RESERVED");
    mqsc_ok(&qm, "DEFINE QLOCAL(ORDERS)");
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "ORDERS", OpenOptions::OUTPUT).await;
    // `set_reserved` is the queue manager's own door: an application using it gets 2442.
    let mut props = MessageProperties::new();
    props
        .set_reserved("mq.amqp.sections", PropertyValue::String("forged".into()))
        .expect("syntax is fine");
    let mut md = MessageDescriptor::default();
    let err = q
        .put_with_properties(&mut md, &PutOptions::default(), &props, "x")
        .await
        .expect_err("a reserved name is refused");
    assert_eq!(err.reason, ReasonCode::PropertyNameError);
    let err = conn
        .put1_with_properties(
            &ObjectDescriptor::queue("ORDERS").expect("a queue name"),
            &mut md,
            &PutOptions::default(),
            &props,
            "x",
        )
        .await
        .expect_err("a reserved name is refused on MQPUT1 too");
    assert_eq!(err.reason, ReasonCode::PropertyNameError);
    // The connection carries on.
    put(&q, "after").await;
}

// ---- Spans ----------------------------------------------------------------------------

use otlp_receiver::{OtlpReceiver, ReceivedSpan};

/// OTLP span kinds.
const PRODUCER: i32 = 4;
const CONSUMER: i32 = 5;
const CLIENT: i32 = 3;

/// The trace id and parent span id of [`PARENT`].
const PARENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_SPAN: &str = "00f067aa0ba902b7";

/// Creates and starts `name` exporting to `receiver` with `sampler`.
fn start_traced(name: &str, endpoint: &str, sampler: &str) -> TestQueueManager {
    start_with_ini(
        name,
        &[
            ("Tracing", "Endpoint", endpoint),
            ("Tracing", "Sampler", sampler),
        ],
    )
}

/// Waits until the receiver holds a span named `name` from `service`, and returns it.
#[track_caller]
fn wait_span(receiver: &OtlpReceiver, service: &str, name: &str) -> ReceivedSpan {
    let mut found = None;
    wait_until(&format!("span '{name}' from {service}"), || {
        found = receiver
            .spans()
            .into_iter()
            .find(|s| s.service == service && s.name == name);
        found.is_some()
    });
    found.expect("found")
}

#[track_caller]
fn assert_messaging(span: &ReceivedSpan, operation_type: &str, destination: &str, protocol: &str) {
    assert_eq!(span.attr("messaging.system"), Some("ferry"), "{span:?}");
    assert_eq!(
        span.attr("messaging.operation.type"),
        Some(operation_type),
        "{span:?}"
    );
    assert_eq!(
        span.attr("messaging.destination.name"),
        Some(destination),
        "{span:?}"
    );
    assert_eq!(
        span.attr("network.protocol.name"),
        Some(protocol),
        "{span:?}"
    );
}

#[test]
fn spans_follow_a_message_from_a_native_put_to_an_amqp_receive() {
    let receiver = OtlpReceiver::start();
    let qm = start_traced("TR.SPANS", &receiver.endpoint(), "parent");
    assert!(qm.error_log().contains("FRY5590I"), "{}", qm.error_log());
    mqsc_ok(&qm, "DEFINE QLOCAL(ORDERS)");
    let msg_id = runtime().block_on(async {
        let conn = connect(&qm.client()).await;
        let q = open(&conn, "ORDERS", OpenOptions::OUTPUT).await;
        let mut md = MessageDescriptor::default();
        q.put_with_properties(
            &mut md,
            &PutOptions::default(),
            &trace_properties(PARENT, Some(STATE)),
            "order",
        )
        .await
        .expect("put");
        md.msg_id
    });
    let mut c = AmqpTestClient::connect(&qm, "itest-spans");
    let link = c.attach_receiver("ORDERS", 1);
    let (id, _, m) = c.receive(link);
    assert_eq!(
        app_property(&m, TRACEPARENT).as_deref(),
        Some(PARENT),
        "the producer's context reaches the consumer unchanged"
    );
    c.accept(id);
    c.close();

    let send = wait_span(&receiver, "TR.SPANS", "send ORDERS");
    assert_eq!(send.kind, PRODUCER);
    assert_eq!(send.trace_id, PARENT_TRACE);
    assert_eq!(
        send.parent_span_id, PARENT_SPAN,
        "a child of the producer's span"
    );
    assert_eq!(
        send.trace_state, STATE,
        "the message's tracestate is carried"
    );
    assert_messaging(&send, "send", "ORDERS", "ferry");
    assert_eq!(send.attr("messaging.operation.name"), Some("MQPUT"));
    let hex_id: String = msg_id.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(send.attr("messaging.message.id"), Some(hex_id.as_str()));
    assert_eq!(send.attr("messaging.message.body.size"), Some("5"));

    let receive = wait_span(&receiver, "TR.SPANS", "receive ORDERS");
    assert_eq!(receive.kind, CONSUMER);
    assert_eq!(receive.trace_id, PARENT_TRACE);
    assert_eq!(receive.parent_span_id, PARENT_SPAN);
    assert_messaging(&receive, "receive", "ORDERS", "amqp");
    assert_eq!(receive.attr("messaging.message.id"), Some(hex_id.as_str()));
}

#[test]
fn a_put_without_traceparent_gets_one_that_the_consumer_joins() {
    let receiver = OtlpReceiver::start();
    let qm = start_traced("TR.ADDED", &receiver.endpoint(), "always");
    mqsc_ok(&qm, "DEFINE QLOCAL(ORDERS)");
    let got = runtime().block_on(async {
        let conn = connect(&qm.client()).await;
        let q = open(&conn, "ORDERS", OpenOptions::OUTPUT).await;
        let mut md = MessageDescriptor::default();
        put_md(
            &q,
            &mut md,
            PutOptions::new(PutOptionFlags::SYNCPOINT),
            "order",
        )
        .await
        .expect("put under syncpoint");
        conn.commit().await.expect("commit");
        let inq = open(&conn, "ORDERS", OpenOptions::INPUT_SHARED).await;
        get(&inq).await.expect("get").1
    });
    let send = wait_span(&receiver, "TR.ADDED", "send ORDERS");
    assert_eq!(
        send.parent_span_id, "",
        "a root span: the message had no context"
    );
    let Some(PropertyValue::String(added)) = got.property(TRACEPARENT) else {
        panic!(
            "the queue manager added a traceparent: {:?}",
            got.decode_properties()
        );
    };
    assert_eq!(
        added,
        format!("00-{}-{}-01", send.trace_id, send.span_id),
        "it names the send span, sampled"
    );
    let receive = wait_span(&receiver, "TR.ADDED", "receive ORDERS");
    assert_eq!(receive.trace_id, send.trace_id);
    assert_eq!(
        receive.parent_span_id, send.span_id,
        "the consumer joins the trace"
    );
    assert_messaging(&receive, "receive", "ORDERS", "ferry");
    let commit = wait_span(&receiver, "TR.ADDED", "MQCMIT");
    assert_eq!(commit.kind, CLIENT);
    assert_eq!(commit.attr("messaging.operation.type"), Some("settle"));
    assert_eq!(commit.trace_id, send.trace_id);
    assert_eq!(
        commit.parent_span_id, send.span_id,
        "settles the traced put"
    );
}

#[test]
fn an_amqp_transaction_that_held_a_traced_send_settles_in_its_trace() {
    let receiver = OtlpReceiver::start();
    let qm = start_traced("TR.AMQPTX", &receiver.endpoint(), "parent");
    mqsc_ok(&qm, "DEFINE QLOCAL(ORDERS)");
    let mut c = AmqpTestClient::connect(&qm, "itest-trace-tx");
    let coordinator = c.attach_coordinator();
    let txn = c.declare(coordinator);
    let sender = c.attach_sender("ORDERS");
    let traced = Message {
        application_properties: Some(vec![(TRACEPARENT.into(), Value::from(PARENT))]),
        body: Some(Body::data(Bytes::from_static(b"order"))),
        ..Message::default()
    };
    c.send_in(sender, &traced, &txn);
    assert_eq!(
        c.discharge(coordinator, &txn, false),
        Some(ferry_amqp::DeliveryState::Accepted),
        "the commit is accepted"
    );
    c.close();
    let send = wait_span(&receiver, "TR.AMQPTX", "send ORDERS");
    assert_eq!(send.parent_span_id, PARENT_SPAN);
    assert_messaging(&send, "send", "ORDERS", "amqp");
    assert_eq!(send.attr("messaging.operation.name"), Some("transfer"));
    let commit = wait_span(&receiver, "TR.AMQPTX", "MQCMIT");
    assert_eq!(commit.trace_id, PARENT_TRACE);
    assert_eq!(
        commit.parent_span_id, send.span_id,
        "settles the traced transfer"
    );
}

#[test]
fn sampler_off_sends_no_spans() {
    let receiver = OtlpReceiver::start();
    let mut qm = start_traced("TR.OFF", &receiver.endpoint(), "off");
    mqsc_ok(&qm, "DEFINE QLOCAL(ORDERS)");
    runtime().block_on(async {
        let conn = connect(&qm.client()).await;
        let q = open(&conn, "ORDERS", OpenOptions::OUTPUT).await;
        let mut md = MessageDescriptor::default();
        q.put_with_properties(
            &mut md,
            &PutOptions::default(),
            &trace_properties(PARENT, None),
            "x",
        )
        .await
        .expect("put");
        let inq = open(&conn, "ORDERS", OpenOptions::INPUT_SHARED).await;
        get(&inq).await.expect("get");
    });
    // A controlled stop flushes whatever an exporter holds: with tracing off there is
    // none, so nothing reached the receiver, then or before.
    stop_qm(&mut qm);
    assert_eq!(receiver.requests(), 0, "no export requests");
    assert!(
        !qm.error_log().contains("FRY5590I"),
        "tracing did not start"
    );
}

#[test]
fn an_unreachable_collector_does_not_stop_messaging() {
    // A port nothing listens on.
    let endpoint = format!("http://127.0.0.1:{}", free_port());
    let qm = start_traced("TR.DOWN", &endpoint, "always");
    mqsc_ok(&qm, "DEFINE QLOCAL(ORDERS)");
    runtime().block_on(async {
        let conn = connect(&qm.client()).await;
        let q = open(&conn, "ORDERS", OpenOptions::OUTPUT).await;
        let inq = open(&conn, "ORDERS", OpenOptions::INPUT_SHARED).await;
        for i in 0..50 {
            put(&q, &format!("m{i}")).await;
            let (_, got) = get(&inq).await.expect("get");
            assert_eq!(got.data.as_ref(), format!("m{i}").as_bytes());
        }
    });
    wait_until("FRY5591W in the error log", || {
        qm.error_log().contains("FRY5591W")
    });
    // Messaging carries on after the warning too.
    runtime().block_on(async {
        let conn = connect(&qm.client()).await;
        let q = open(&conn, "ORDERS", OpenOptions::OUTPUT).await;
        put(&q, "after").await;
    });
}

#[tokio::test(flavor = "current_thread")]
async fn spans_of_both_queue_managers_join_the_trace_across_a_channel() {
    let receiver = OtlpReceiver::start();
    let qma = start_traced("TRA", &receiver.endpoint(), "parent");
    let qmb = start_traced("TRB", &receiver.endpoint(), "parent");
    let channel = link(&qma, &qmb);
    mqsc_ok(&qmb, "DEFINE QLOCAL(APP.IN)\n");
    mqsc_ok(
        &qma,
        "DEFINE QREMOTE(APP.REMOTE) RNAME(APP.IN) RQMNAME(TRB) XMITQ(TRB)\n",
    );
    start_channel(&qma, &channel);
    let a = connect(&qma.client()).await;
    let q = open(&a, "APP.REMOTE", OpenOptions::OUTPUT).await;
    let mut md = MessageDescriptor::default();
    let pmo = PutOptions::new(PutOptionFlags::NO_SYNCPOINT);
    q.put_with_properties(&mut md, &pmo, &trace_properties(PARENT, None), "hop")
        .await
        .expect("put to the remote queue");
    let b = connect(&qmb.client()).await;
    let inq = open(&b, "APP.IN", OpenOptions::INPUT_SHARED).await;
    let gmo = gmo(ferry_mqi::GetOptionFlags::WAIT, 30_000);
    get_with(&inq, gmo).await.expect("the message arrives");

    let put = wait_span(&receiver, "TRA", "send APP.REMOTE");
    let sent = wait_span(&receiver, "TRA", "send TRB");
    let process = wait_span(&receiver, "TRB", "process APP.IN");
    let receive = wait_span(&receiver, "TRB", "receive APP.IN");
    for span in [&put, &sent, &process, &receive] {
        assert_eq!(span.trace_id, PARENT_TRACE, "one trace: {span:?}");
        assert_eq!(
            span.parent_span_id, PARENT_SPAN,
            "children of the producer: {span:?}"
        );
    }
    assert_eq!(sent.kind, PRODUCER);
    assert_eq!(sent.attr("ferry.channel.name"), Some(channel.as_str()));
    assert_eq!(sent.attr("network.protocol.name"), Some("ferry-channel"));
    assert_eq!(process.kind, CONSUMER);
    assert_eq!(process.attr("ferry.channel.name"), Some(channel.as_str()));
    assert_messaging(&process, "process", "APP.IN", "ferry-channel");
    assert_messaging(&receive, "receive", "APP.IN", "ferry");
}
