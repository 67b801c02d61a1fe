//! The queue manager's web server against a real `ferry` process, over real sockets with
//! a real HTTP client (reqwest): health and readiness (also while quiescing), the
//! administrative REST API (runCommand, runCommandJSON, the queue manager list), CSRF and
//! authentication refusals, the messaging REST API interoperating with native clients
//! (message properties as `ibm-mq-usr-*` headers both ways, browsing by list and by id),
//! and bad input (huge bodies, malformed requests, traversal, bad names, stalled
//! clients) that never stops native messaging.

mod common;

use common::*;
use ferry_mqi::{MessageDescriptor, OpenOptions, PropertyValue, PutOptions};
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

const IO: OpenOptions = OpenOptions::OUTPUT.union(OpenOptions::INPUT_SHARED);
const ADMIN_PASSWORD: &str = "admin passw0rd";
const APP_PASSWORD: &str = "app passw0rd";
const CSRF: &str = "ibm-mq-rest-csrf-token";

/// A queue manager with its web server on a free port (and `settings` in qm.ini), user
/// `root` (an administrator) and user `app` in its repository, and queue WEB.Q.
fn web_qm(name: &str, settings: &[(&str, &str, &str)]) -> (TestQueueManager, String) {
    let port = free_port().to_string();
    let mut qm = TestQueueManager::create_with(bin(), name, &["--web-port", &port]);
    for (stanza, key, value) in settings {
        qm.set_ini(stanza, key, value);
    }
    qm.set_ini("WebServer", "BindAddress", "127.0.0.1");
    qm.launch();
    mqsc_ok(&qm, "DEFINE QLOCAL(WEB.Q)");
    for (user, password) in [("root", ADMIN_PASSWORD), ("app", APP_PASSWORD)] {
        let out = qm.ferry_with_stdin(&["user", "add", name, user], &format!("{password}\n"));
        assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    }
    (qm, format!("http://127.0.0.1:{port}"))
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

async fn mqsc_request(base: &str, qm: &str, body: Value) -> (StatusCode, Value) {
    let r = http()
        .post(format!("{base}/ibmmq/rest/v2/admin/action/qmgr/{qm}/mqsc"))
        .basic_auth("root", Some(ADMIN_PASSWORD))
        .header(CSRF, "x")
        .json(&body)
        .send()
        .await
        .expect("send");
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_and_the_administrative_api() {
    let (qm, base) = web_qm("WEB.ADMIN", &[]);
    let c = http();

    let r = c.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let r = c.get(format!("{base}/readyz")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let ready: Value = r.json().await.unwrap();
    assert_eq!(ready["status"], "ready", "{ready}");
    assert!(qm.error_log().contains("FRY5541I"), "started is logged");

    // No credentials, wrong ones: 401 with a challenge and IBM's error shape.
    let r = c
        .get(format!("{base}/ibmmq/rest/v2/admin/qmgr"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert!(r.headers().contains_key("www-authenticate"));
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"][0]["reasonCode"], 2035, "{e}");
    assert_eq!(e["error"][0]["completionCode"], 2, "{e}");
    let r = c
        .get(format!("{base}/ibmmq/rest/v2/admin/qmgr"))
        .basic_auth("root", Some("wrong"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert!(
        qm.error_log().contains("FRY5534E"),
        "the refusal is logged as connection authentication's"
    );

    // The queue manager list.
    let r = c
        .get(format!("{base}/ibmmq/rest/v2/admin/qmgr"))
        .basic_auth("root", Some(ADMIN_PASSWORD))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let list: Value = r.json().await.unwrap();
    assert_eq!(list["qmgr"][0]["name"], "WEB.ADMIN", "{list}");
    assert_eq!(list["qmgr"][0]["state"], "running", "{list}");
    let r = c
        .get(format!("{base}/ibmmq/rest/v2/admin/qmgr/NOT.HERE"))
        .basic_auth("root", Some(ADMIN_PASSWORD))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"][0]["reasonCode"], 2058, "{e}");
    assert_eq!(e["error"][0]["type"], "rest", "{e}");
    assert!(e["error"][0]["msgId"].as_str().is_some(), "{e}");
    assert!(e["error"][0]["explanation"].as_str().is_some(), "{e}");

    // CSRF: a POST without the header is refused before anything runs.
    let r = c
        .post(format!(
            "{base}/ibmmq/rest/v2/admin/action/qmgr/WEB.ADMIN/mqsc"
        ))
        .basic_auth("root", Some(ADMIN_PASSWORD))
        .json(&json!({"type":"runCommand","parameters":{"command":"DEFINE QLOCAL(CSRF.Q)"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert!(!mqsc_ok(&qm, "DISPLAY QLOCAL(*)").contains("CSRF.Q"));

    // runCommand.
    let (s, v) = mqsc_request(
        &base,
        "WEB.ADMIN",
        json!({"type":"runCommand","parameters":{"command":"DEFINE QLOCAL(REST.Q) DESCR('made by REST') MAXDEPTH(7)"}}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["overallCompletionCode"], 0, "{v}");
    assert_eq!(v["overallReasonCode"], 0, "{v}");
    assert_eq!(v["commandResponse"][0]["completionCode"], 0, "{v}");
    assert!(mqsc_ok(&qm, "DISPLAY QLOCAL(REST.Q)").contains("REST.Q"));
    let (_, v) = mqsc_request(
        &base,
        "WEB.ADMIN",
        json!({"type":"runCommand","parameters":{"command":"DISPLAY QLOCAL(REST.Q) MAXDEPTH"}}),
    )
    .await;
    let text = v["commandResponse"][0]["text"].to_string();
    assert!(
        text.contains("QUEUE(REST.Q)") && text.contains("MAXDEPTH(7)"),
        "{v}"
    );
    // A command that fails: completion code 2, MQRCCF_COMMAND_FAILED.
    let (s, v) = mqsc_request(
        &base,
        "WEB.ADMIN",
        json!({"type":"runCommand","parameters":{"command":"DELETE QLOCAL(NO.SUCH.Q)"}}),
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["overallCompletionCode"], 2, "{v}");
    assert_eq!(v["overallReasonCode"], 3008, "{v}");

    // runCommandJSON: lower-case parameters, numbers as numbers.
    let (s, v) = mqsc_request(
        &base,
        "WEB.ADMIN",
        json!({"type":"runCommandJSON","command":"display","qualifier":"qlocal","name":"REST.Q","responseParameters":["all"]}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let p = &v["commandResponse"][0]["parameters"];
    assert_eq!(p["queue"], "REST.Q", "{v}");
    assert_eq!(p["maxdepth"], 7, "{v}");
    assert_eq!(p["descr"], "made by REST", "{v}");
    assert_eq!(p["curdepth"], 0, "{v}");
    let (_, v) = mqsc_request(
        &base,
        "WEB.ADMIN",
        json!({"type":"runCommandJSON","command":"alter","qualifier":"qlocal","name":"REST.Q","parameters":{"maxdepth":9}}),
    )
    .await;
    assert_eq!(v["overallCompletionCode"], 0, "{v}");
    assert!(mqsc_ok(&qm, "DISPLAY QLOCAL(REST.Q) MAXDEPTH").contains("MAXDEPTH(9)"));

    // MQSC injection: one command per request.
    for body in [
        json!({"type":"runCommand","parameters":{"command":"DISPLAY QMGR\nDELETE QLOCAL(REST.Q)"}}),
        json!({"type":"runCommandJSON","command":"display","qualifier":"qlocal","name":"A) DELETE QLOCAL(REST.Q"}),
        json!({"type":"nonsense"}),
    ] {
        let (s, v) = mqsc_request(&base, "WEB.ADMIN", body).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
        assert_eq!(v["error"][0]["completionCode"], 2, "{v}");
    }
    assert!(mqsc_ok(&qm, "DISPLAY QLOCAL(REST.Q)").contains("REST.Q"));
    let r = c
        .post(format!(
            "{base}/ibmmq/rest/v2/admin/action/qmgr/WEB.ADMIN/mqsc"
        ))
        .basic_auth("root", Some(ADMIN_PASSWORD))
        .header(CSRF, "x")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);

    // A user who is not an administrator (authorities not checked): refused.
    let r = c
        .post(format!(
            "{base}/ibmmq/rest/v2/admin/action/qmgr/WEB.ADMIN/mqsc"
        ))
        .basic_auth("app", Some(APP_PASSWORD))
        .header(CSRF, "x")
        .json(&json!({"type":"runCommand","parameters":{"command":"DELETE QLOCAL(REST.Q)"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert!(mqsc_ok(&qm, "DISPLAY QLOCAL(REST.Q)").contains("REST.Q"));

    // An unknown queue manager in the action path: 404 in IBM's shape.
    let (s, v) = mqsc_request(
        &base,
        "OTHER",
        json!({"type":"runCommand","parameters":{"command":"DISPLAY QMGR"}}),
    )
    .await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{v}");
    assert_eq!(v["error"][0]["reasonCode"], 2058, "{v}");

    // Without a TCP listener, clients cannot connect: not ready until it listens again.
    mqsc_ok(&qm, "STOP LISTENER(SYSTEM.LISTENER.TCP.1)");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = c.get(format!("{base}/readyz")).send().await.unwrap();
        if r.status() == StatusCode::SERVICE_UNAVAILABLE {
            let v: Value = r.json().await.unwrap();
            assert!(v["reasons"].to_string().contains("listener"), "{v}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "readyz stayed 200 without a listener"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    mqsc_ok(&qm, "START LISTENER(SYSTEM.LISTENER.TCP.1)");
    wait_until_async("ready again", || {
        let c = c.clone();
        let base = base.clone();
        async move {
            c.get(format!("{base}/readyz"))
                .send()
                .await
                .is_ok_and(|r| r.status() == StatusCode::OK)
        }
    })
    .await;
}

fn message_url(base: &str, qm: &str, queue: &str) -> String {
    format!("{base}/ibmmq/rest/v2/messaging/qmgr/{qm}/queue/{queue}/message")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_put_and_got_over_rest_interoperate_with_native_clients() {
    let (qm, base) = web_qm("WEB.MSG", &[]);
    let c = http();
    let url = message_url(&base, "WEB.MSG", "WEB.Q");

    // REST put, native get.
    let r = c
        .post(&url)
        .basic_auth("app", Some(APP_PASSWORD))
        .header(CSRF, "x")
        .header("content-type", "text/plain;charset=utf-8")
        .header("ibm-mq-md-correlationId", "414243")
        .header("ibm-mq-md-persistence", "persistent")
        .header("ibm-mq-md-expiry", "unlimited")
        .body("hello from REST")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);
    let msg_id = r.headers()["ibm-mq-md-messageId"]
        .to_str()
        .unwrap()
        .to_string();
    assert_eq!(msg_id.len(), 48, "{msg_id}");
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "WEB.Q", IO).await;
    let (md, got) = get(&q).await.expect("the REST message");
    assert_eq!(&got.data[..], b"hello from REST");
    assert_eq!(&md.correl_id[..3], b"ABC");
    assert_eq!(md.persistence, 1);
    assert_eq!(md.user_identifier.as_str().trim(), "app", "put as the user");
    let hex: String = md.msg_id.iter().map(|b| format!("{b:02X}")).collect();
    assert_eq!(hex, msg_id);

    // Native put, REST get (destructive), then none left: 204.
    put(&q, "from native 1").await;
    put(&q, "from native 2").await;
    let r = c
        .delete(&url)
        .basic_auth("app", Some(APP_PASSWORD))
        .header(CSRF, "x")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert!(r.headers().contains_key("ibm-mq-md-messageId"));
    assert_eq!(r.text().await.unwrap(), "from native 1");
    let r = c
        .delete(&url)
        .basic_auth("app", Some(APP_PASSWORD))
        .header(CSRF, "x")
        .send()
        .await
        .unwrap();
    assert_eq!(r.text().await.unwrap(), "from native 2");
    assert_eq!(curdepth(&qm, "WEB.Q"), 0);
    let r = c
        .delete(&url)
        .basic_auth("app", Some(APP_PASSWORD))
        .header(CSRF, "x")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NO_CONTENT);

    // Selection by correlation id, and a get that waits for a native put.
    put(&q, "not this one").await;
    let r = c
        .post(&url)
        .basic_auth("app", Some(APP_PASSWORD))
        .header(CSRF, "x")
        .header("ibm-mq-md-correlationId", "C0FFEE")
        .body("this one")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);
    let r = c
        .delete(format!("{url}?correlationId=C0FFEE"))
        .basic_auth("app", Some(APP_PASSWORD))
        .header(CSRF, "x")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert!(r.headers()["ibm-mq-md-correlationId"]
        .to_str()
        .unwrap()
        .starts_with("C0FFEE"));
    assert_eq!(r.text().await.unwrap(), "this one");
    assert_eq!(get_text(&q).await, "not this one");

    let waiting = {
        let c = c.clone();
        let url = url.clone();
        tokio::spawn(async move {
            c.delete(format!("{url}?wait=10000"))
                .basic_auth("app", Some(APP_PASSWORD))
                .header(CSRF, "x")
                .send()
                .await
                .unwrap()
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    put(&q, "worth the wait").await;
    let r = within("the waiting REST get", waiting).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.text().await.unwrap(), "worth the wait");
    let started = Instant::now();
    let r = c
        .delete(format!("{url}?wait=400"))
        .basic_auth("app", Some(APP_PASSWORD))
        .header(CSRF, "x")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    assert!(started.elapsed() >= Duration::from_millis(350));

    // Refusals: CSRF, credentials, unknown queue, bad names, traversal.
    let r = c
        .post(&url)
        .basic_auth("app", Some(APP_PASSWORD))
        .body("x")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = c
        .post(&url)
        .header(CSRF, "x")
        .body("x")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let r = c
        .delete(message_url(&base, "WEB.MSG", "NO.SUCH.Q"))
        .basic_auth("app", Some(APP_PASSWORD))
        .header(CSRF, "x")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"][0]["reasonCode"], 2085, "{e}");
    for bad in ["BAD%20NAME", &"Q".repeat(49), "Q%00"] {
        let r = c
            .post(message_url(&base, "WEB.MSG", bad))
            .basic_auth("app", Some(APP_PASSWORD))
            .header(CSRF, "x")
            .body("x")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::BAD_REQUEST, "{bad}");
        let e: Value = r.json().await.unwrap();
        assert_eq!(e["error"][0]["reasonCode"], 2152, "{bad}: {e}");
    }
    for path in [
        "/ibmmq/rest/v2/messaging/qmgr/WEB.MSG/queue/..%2F..%2Fetc%2Fpasswd/message",
        "/ibmmq/rest/v2/../../../etc/passwd",
        "/ibmmq/rest/v2/messaging/qmgr/..%2FWEB.MSG/queue/WEB.Q/message",
    ] {
        let r = c
            .delete(format!("{base}{path}"))
            .basic_auth("app", Some(APP_PASSWORD))
            .header(CSRF, "x")
            .send()
            .await
            .unwrap();
        assert!(
            r.status() == StatusCode::NOT_FOUND || r.status() == StatusCode::BAD_REQUEST,
            "{path}: {}",
            r.status()
        );
    }
    let r = c
        .post(&url)
        .basic_auth("app", Some(APP_PASSWORD))
        .header(CSRF, "x")
        .header("ibm-mq-md-persistence", "sometimes")
        .body("x")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert_eq!(curdepth(&qm, "WEB.Q"), 0);
    drop(q);
    conn.disconnect().await.expect("disconnect");
}

fn list_url(base: &str, qm: &str, queue: &str) -> String {
    format!("{base}/ibmmq/rest/v2/messaging/qmgr/{qm}/queue/{queue}/messagelist")
}

/// The text of response header `name` ("" when it is missing).
fn header(r: &reqwest::Response, name: &str) -> String {
    r.headers()
        .get(name)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn message_properties_travel_as_ibm_mq_usr_headers() {
    let (qm, base) = web_qm("WEB.PROPS", &[]);
    let c = http();
    let url = message_url(&base, "WEB.PROPS", "WEB.Q");
    let post_with_properties = || {
        c.post(&url)
            .basic_auth("app", Some(APP_PASSWORD))
            .header(CSRF, "x")
            .header("ibm-mq-usr-colour", "blue")
            .header("ibm-mq-usr-size", "\"12\";type=int32")
            .header("ibm-mq-usr-ratio", "\"0.5\";type=float64")
            .header("ibm-mq-usr-fresh", "\"true\";type=boolean")
            .header("ibm-mq-usr-note", "\" two words, \\\"quoted\\\" \"")
            .header("ibm-mq-md-priority", "7")
            .body("with properties")
    };

    // REST put with properties, native get sees them.
    let r = post_with_properties().send().await.unwrap();
    assert_eq!(
        r.status(),
        StatusCode::CREATED,
        "{}",
        r.text().await.unwrap()
    );
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "WEB.Q", IO).await;
    let (md, got) = get(&q).await.expect("the REST message");
    assert_eq!(&got.data[..], b"with properties");
    assert_eq!(md.priority, 7);
    assert_eq!(
        got.property("colour"),
        Some(PropertyValue::String("blue".into()))
    );
    assert_eq!(got.property("size"), Some(PropertyValue::Int32(12)));
    assert_eq!(got.property("ratio"), Some(PropertyValue::Float64(0.5)));
    assert_eq!(got.property("fresh"), Some(PropertyValue::Boolean(true)));
    assert_eq!(
        got.property("note"),
        Some(PropertyValue::String(" two words, \"quoted\" ".into()))
    );

    // REST put, REST get: the same headers come back.
    assert_eq!(
        post_with_properties().send().await.unwrap().status(),
        StatusCode::CREATED
    );
    let r = c
        .delete(&url)
        .basic_auth("app", Some(APP_PASSWORD))
        .header(CSRF, "x")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(header(&r, "ibm-mq-usr-colour"), "blue");
    assert_eq!(header(&r, "ibm-mq-usr-size"), "\"12\";type=int32");
    assert_eq!(header(&r, "ibm-mq-usr-ratio"), "\"0.5\";type=float64");
    assert_eq!(header(&r, "ibm-mq-usr-fresh"), "\"true\";type=boolean");
    assert_eq!(
        header(&r, "ibm-mq-usr-note"),
        "\" two words, \\\"quoted\\\" \";type=string"
    );
    assert_eq!(header(&r, "ibm-mq-md-priority"), "7");

    // A publication the queue manager delivers natively to a queue carries the
    // properties it sets (MQTopicString, MQPubLevel): a REST get shows them.
    mqsc_ok(&qm, "DEFINE SUB(WEB.SUB) TOPICSTR('web/props') DEST(WEB.Q)");
    let topic = conn.open_topic("web/props").await.expect("open topic");
    topic.publish("published").await.expect("publish");
    let r = c
        .delete(&url)
        .basic_auth("app", Some(APP_PASSWORD))
        .header(CSRF, "x")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(header(&r, "ibm-mq-usr-mqtopicstring"), "web/props");
    let level = header(&r, "ibm-mq-usr-mqpublevel");
    assert!(level.ends_with("\";type=int32"), "{level}");
    assert_eq!(r.text().await.unwrap(), "published");

    // Bad property headers: 400 with MQ's reason, nothing put.
    let oversized = "x".repeat(9000);
    for (name, value, reason) in [
        ("ibm-mq-usr-size", "\"twelve\";type=int32", 2472),
        ("ibm-mq-usr-size", "\"300\";type=int8", 2472),
        ("ibm-mq-usr-size", "\"1\";type=decimal", 2473),
        ("ibm-mq-usr-size", "\"unterminated", 2472),
        ("ibm-mq-usr-mqsecret", "x", 2442),
        ("ibm-mq-usr-between", "x", 2442),
        ("ibm-mq-usr-1st", "x", 2442),
        ("ibm-mq-usr-big", &oversized, 2469),
        ("ibm-mq-md-priority", "10", 2050),
    ] {
        let r = c
            .post(&url)
            .basic_auth("app", Some(APP_PASSWORD))
            .header(CSRF, "x")
            .header(name, value)
            .body("refused")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::BAD_REQUEST, "{name}");
        let e: Value = r.json().await.unwrap();
        assert_eq!(e["error"][0]["reasonCode"], reason, "{name}: {e}");
        assert_eq!(e["error"][0]["msgId"], "FRYW0004E", "{name}: {e}");
    }
    assert_eq!(curdepth(&qm, "WEB.Q"), 0);
    drop(q);
    conn.disconnect().await.expect("disconnect");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browsing_lists_and_reads_messages_and_leaves_them() {
    let (qm, base) = web_qm("WEB.BROWSE", &[]);
    let c = http();
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "WEB.Q", IO).await;
    let first = put(&q, "first").await;
    let r = c
        .post(message_url(&base, "WEB.BROWSE", "WEB.Q"))
        .basic_auth("app", Some(APP_PASSWORD))
        .header(CSRF, "x")
        .header("ibm-mq-md-correlationId", "C0FFEE")
        .header("ibm-mq-md-persistence", "persistent")
        .header("ibm-mq-usr-colour", "green")
        .body("second")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);
    let second = header(&r, "ibm-mq-md-messageId");
    let hex = |id: &[u8]| -> String { id.iter().map(|b| format!("{b:02X}")).collect() };
    let browse = |url: String| {
        let c = c.clone();
        async move {
            c.get(url)
                .basic_auth("app", Some(APP_PASSWORD))
                .send()
                .await
                .unwrap()
        }
    };

    // The list: both, in the order a get takes them, no bodies.
    let r = browse(list_url(&base, "WEB.BROWSE", "WEB.Q")).await;
    assert_eq!(r.status(), StatusCode::OK);
    let list: Value = r.json().await.unwrap();
    let messages = list["messages"].as_array().expect("messages").clone();
    assert_eq!(messages.len(), 2, "{list}");
    assert_eq!(messages[0]["messageId"], hex(&first.msg_id), "{list}");
    assert_eq!(messages[1]["messageId"], second, "{list}");
    assert_eq!(messages[1]["format"], "MQSTR", "{list}");
    assert_eq!(messages[1]["persistence"], "persistent", "{list}");
    assert!(messages[1]["correlationId"]
        .as_str()
        .is_some_and(|c| c.starts_with("C0FFEE")));
    assert!(messages[0].get("correlationId").is_none(), "{list}");
    let r = browse(format!(
        "{}?limit=1",
        list_url(&base, "WEB.BROWSE", "WEB.Q")
    ))
    .await;
    let list: Value = r.json().await.unwrap();
    assert_eq!(list["messages"].as_array().map(Vec::len), Some(1), "{list}");
    let r = browse(format!(
        "{}?correlationId=C0FFEE",
        list_url(&base, "WEB.BROWSE", "WEB.Q")
    ))
    .await;
    let list: Value = r.json().await.unwrap();
    assert_eq!(list["messages"][0]["messageId"], second, "{list}");
    assert_eq!(list["messages"].as_array().map(Vec::len), Some(1), "{list}");

    // One message by id, with its headers; the first without one.
    let url = message_url(&base, "WEB.BROWSE", "WEB.Q");
    let r = browse(format!("{url}?messageId={second}")).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(header(&r, "ibm-mq-md-messageId"), second);
    assert_eq!(header(&r, "ibm-mq-usr-colour"), "green");
    assert_eq!(header(&r, "ibm-mq-md-persistence"), "persistent");
    assert_eq!(r.text().await.unwrap(), "second");
    let r = browse(url.clone()).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.text().await.unwrap(), "first");
    // A browse twice sees the same message: nothing was taken.
    let r = browse(format!("{url}?messageId={second}")).await;
    assert_eq!(r.text().await.unwrap(), "second");
    assert_eq!(curdepth(&qm, "WEB.Q"), 2);

    // No such message: 204. Bad input: MQ's error JSON.
    let r = browse(format!("{url}?messageId={}", "AB".repeat(24))).await;
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    for (query, reason) in [
        ("messageId=zz", 2206),
        ("correlationId=123", 2207),
        ("wait=soon", 2090),
        ("colour=red", 0),
    ] {
        let r = browse(format!("{url}?{query}")).await;
        assert_eq!(r.status(), StatusCode::BAD_REQUEST, "{query}");
        let e: Value = r.json().await.unwrap();
        assert_eq!(e["error"][0]["reasonCode"], reason, "{query}: {e}");
    }
    for query in ["limit=0", "limit=many", "wait=10"] {
        let r = browse(format!(
            "{}?{query}",
            list_url(&base, "WEB.BROWSE", "WEB.Q")
        ))
        .await;
        assert_eq!(r.status(), StatusCode::BAD_REQUEST, "{query}");
        let e: Value = r.json().await.unwrap();
        assert_eq!(e["error"][0]["msgId"], "FRYW0004E", "{query}: {e}");
    }
    for path in [
        list_url(&base, "WEB.BROWSE", "NO.SUCH.Q"),
        message_url(&base, "WEB.BROWSE", "NO.SUCH.Q"),
    ] {
        let r = browse(path.clone()).await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{path}");
        let e: Value = r.json().await.unwrap();
        assert_eq!(e["error"][0]["reasonCode"], 2085, "{path}: {e}");
    }
    let r = browse(list_url(&base, "OTHER.QM", "WEB.Q")).await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let r = c
        .get(list_url(&base, "WEB.BROWSE", "WEB.Q"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let r = c
        .get(list_url(&base, "WEB.BROWSE", "WEB.Q"))
        .basic_auth("app", Some("wrong"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(curdepth(&qm, "WEB.Q"), 2);
    assert_eq!(get_text(&q).await, "first");
    assert_eq!(get_text(&q).await, "second");
    drop(q);
    conn.disconnect().await.expect("disconnect");
}

/// Sends `bytes` on a raw socket and returns what comes back before the server closes
/// it (or 5 seconds pass).
fn raw_exchange(addr: &str, bytes: &[u8]) -> String {
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(bytes).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_http_input_never_stops_native_messaging() {
    let (qm, base) = web_qm(
        "WEB.BAD",
        &[
            ("WebServer", "MaxConnections", "4"),
            ("WebServer", "MaxRequestBody", "4096"),
            ("WebServer", "HeaderReadTimeout", "2"),
            ("WebServer", "IdleTimeout", "3"),
            ("WebServer", "RequestTimeout", "3"),
        ],
    );
    let addr = base.trim_start_matches("http://").to_string();
    let c = http();

    // A body over MaxRequestBody: 413.
    let r = c
        .post(message_url(&base, "WEB.BAD", "WEB.Q"))
        .basic_auth("app", Some(APP_PASSWORD))
        .header(CSRF, "x")
        .body("x".repeat(10_000))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(curdepth(&qm, "WEB.Q"), 0);

    // Malformed requests are answered 400 and closed.
    for bytes in [
        &b"GARBAGE\r\n\r\n"[..],
        b"GET /healthz HTTP/9.9\r\n\r\n",
        b"\x16\x03\x01\x00\x05hello\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
    ] {
        let answer = raw_exchange(&addr, bytes);
        assert!(
            answer.is_empty()
                || answer.starts_with("HTTP/1.1 4")
                || answer.starts_with("HTTP/1.1 5"),
            "{bytes:?}: {answer}"
        );
    }
    // Headers of hundreds of kilobytes: refused, not buffered.
    let mut huge = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ".to_vec();
    huge.extend(std::iter::repeat_n(b'a', 200_000));
    huge.extend(b"\r\n\r\n");
    let answer = raw_exchange(&addr, &huge);
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 431"),
        "{answer}"
    );

    // A keep-alive connection left idle is closed after IdleTimeout (3 s here).
    let mut idle = std::net::TcpStream::connect(&addr).expect("connect");
    idle.set_read_timeout(Some(Duration::from_secs(15)))
        .unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let since = Instant::now();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match idle.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
            Err(e) => panic!("the idle connection stayed open: {e}"),
        }
    }
    assert!(String::from_utf8_lossy(&seen).starts_with("HTTP/1.1 200"));
    assert!(
        since.elapsed() >= Duration::from_secs(2) && since.elapsed() < Duration::from_secs(10),
        "closed after {:?}",
        since.elapsed()
    );

    // A body that trickles in is cut at RequestTimeout (3 s here): 503, connection closed.
    let mut slow = std::net::TcpStream::connect(&addr).expect("connect");
    slow.set_read_timeout(Some(Duration::from_secs(15)))
        .unwrap();
    let auth = "cm9vdDphZG1pbiBwYXNzdzByZA=="; // root:admin passw0rd
    slow.write_all(
        format!(
            "POST /ibmmq/rest/v2/admin/action/qmgr/WEB.BAD/mqsc HTTP/1.1\r\nHost: x\r\n\
             Authorization: Basic {auth}\r\n{CSRF}: x\r\nContent-Length: 100\r\n\r\n{{\"ty"
        )
        .as_bytes(),
    )
    .unwrap();
    let since = Instant::now();
    let mut answer = String::new();
    let _ = slow.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(
        since.elapsed() < Duration::from_secs(10),
        "{:?}",
        since.elapsed()
    );

    // Clients that connect and stall take every connection slot...
    let stalled: Vec<std::net::TcpStream> = (0..6)
        .map(|_| {
            let mut s = std::net::TcpStream::connect(&addr).expect("connect");
            let _ = s.write_all(b"GET /healthz HTTP/1.1\r\nHo");
            s
        })
        .collect();
    // ...while native messaging carries on at full speed.
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "WEB.Q", IO).await;
    let started = Instant::now();
    for i in 0..200 {
        put(&q, &format!("m{i}")).await;
        assert_eq!(get_text(&q).await, format!("m{i}"));
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "native round trips took {:?}",
        started.elapsed()
    );
    // The stalled clients are dropped after HeaderReadTimeout; the server serves again.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(r) = c.get(format!("{base}/healthz")).send().await {
            if r.status() == StatusCode::OK {
                break;
            }
        }
        assert!(
            Instant::now() < deadline,
            "the web server never served again"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    drop(stalled);
    drop(q);
    conn.disconnect().await.expect("disconnect");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_says_quiescing_during_a_controlled_stop() {
    let (qm, base) = web_qm("WEB.QUIESCE", &[]);
    let c = http();
    // An application that stays keeps the controlled stop quiescing.
    let conn = connect(&qm.client()).await;
    let mut stop = qm.ferry_spawn(&["stop", "WEB.QUIESCE"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    let reasons = loop {
        let r = c.get(format!("{base}/readyz")).send().await.unwrap();
        if r.status() == StatusCode::SERVICE_UNAVAILABLE {
            let v: Value = r.json().await.unwrap();
            break v["reasons"].to_string();
        }
        assert!(
            Instant::now() < deadline,
            "readyz stayed 200 while stopping"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(reasons.contains("quiescing"), "{reasons}");
    // Still alive.
    let r = c.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    drop(conn);
    let status = stop.wait().expect("ferry stop");
    assert!(status.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_web_port_in_use_is_reported_and_the_queue_manager_runs_on() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let mut qm = TestQueueManager::create_with(bin(), "WEB.BUSY", &["--web-port", &port]);
    qm.set_ini("WebServer", "BindAddress", "127.0.0.1");
    qm.launch();
    wait_until("FRY9783E in the error log", || {
        qm.error_log().contains("FRY9783E")
    });
    let conn = connect(&qm.client()).await;
    mqsc_ok(&qm, "DEFINE QLOCAL(BUSY.Q)");
    let q = open(&conn, "BUSY.Q", IO).await;
    put(&q, "still serving").await;
    assert_eq!(get_text(&q).await, "still serving");
    drop(q);
    conn.disconnect().await.expect("disconnect");
    drop(taken);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_users_get_their_object_authorities() {
    let port = free_port().to_string();
    let mut qm = TestQueueManager::create_with(bin(), "WEB.AUTH", &["--web-port", &port]);
    qm.set_ini("WebServer", "BindAddress", "127.0.0.1");
    qm.check_authorities();
    qm.launch();
    let base = format!("http://127.0.0.1:{port}");
    mqsc_ok(&qm, "DEFINE QLOCAL(WEB.Q)");
    let out = qm.ferry_with_stdin(
        &["user", "add", "WEB.AUTH", "app", "--group", "apps"],
        &format!("{APP_PASSWORD}\n"),
    );
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let c = http();
    let url = message_url(&base, "WEB.AUTH", "WEB.Q");
    let put_once = || async {
        c.post(&url)
            .basic_auth("app", Some(APP_PASSWORD))
            .header(CSRF, "x")
            .body("m")
            .send()
            .await
            .unwrap()
    };
    let mqsc_as_app = |command: &str| {
        let body = json!({"type":"runCommand","parameters":{"command": command}});
        let c = c.clone();
        let base = base.clone();
        async move {
            let r = c
                .post(format!(
                    "{base}/ibmmq/rest/v2/admin/action/qmgr/WEB.AUTH/mqsc"
                ))
                .basic_auth("app", Some(APP_PASSWORD))
                .header(CSRF, "x")
                .json(&body)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), StatusCode::OK);
            r.json::<Value>().await.unwrap()
        }
    };

    // Without CONNECT: 2035, 403.
    let r = put_once().await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"][0]["reasonCode"], 2035, "{e}");
    let v = mqsc_as_app("DISPLAY QLOCAL(WEB.Q)").await;
    assert_eq!(v["overallCompletionCode"], 2, "{v}");
    assert!(v.to_string().contains("FRY8135E"), "{v}");

    mqsc_ok(
        &qm,
        "SET AUTHREC OBJTYPE(QMGR) GROUP('apps') AUTHADD(CONNECT)\n\
         SET AUTHREC PROFILE(WEB.Q) OBJTYPE(QUEUE) GROUP('apps') AUTHADD(PUT,GET,DSP)",
    );
    assert_eq!(put_once().await.status(), StatusCode::CREATED);
    let r = c
        .delete(&url)
        .basic_auth("app", Some(APP_PASSWORD))
        .header(CSRF, "x")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    // Browsing needs BROWSE: 403 with 2035 without it, the list once it is granted.
    let browse_list = || async {
        c.get(list_url(&base, "WEB.AUTH", "WEB.Q"))
            .basic_auth("app", Some(APP_PASSWORD))
            .send()
            .await
            .unwrap()
    };
    let r = browse_list().await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let e: Value = r.json().await.unwrap();
    assert_eq!(e["error"][0]["reasonCode"], 2035, "{e}");
    let r = c
        .get(&url)
        .basic_auth("app", Some(APP_PASSWORD))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    mqsc_ok(
        &qm,
        "SET AUTHREC PROFILE(WEB.Q) OBJTYPE(QUEUE) GROUP('apps') AUTHADD(BROWSE)",
    );
    let r = browse_list().await;
    assert_eq!(r.status(), StatusCode::OK);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["messages"].as_array().map(Vec::len), Some(0), "{v}");
    let v = mqsc_as_app("DISPLAY QLOCAL(WEB.Q)").await;
    assert_eq!(v["overallCompletionCode"], 0, "{v}");
    // DSP is not DLT.
    let v = mqsc_as_app("DELETE QLOCAL(WEB.Q)").await;
    assert_eq!(v["overallCompletionCode"], 2, "{v}");
    assert!(mqsc_ok(&qm, "DISPLAY QLOCAL(WEB.Q)").contains("WEB.Q"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_with_the_queue_managers_certificate_and_client_certificates() {
    use ferry_tls::self_signed::ThrowawayCa;
    let port = free_port();
    let mut qm =
        TestQueueManager::create_with(bin(), "WEB.TLS", &["--web-port", &port.to_string()]);
    qm.set_ini("WebServer", "BindAddress", "127.0.0.1");
    qm.set_ini("WebServer", "SSL", "YES");
    let ca = ThrowawayCa::new("Ferry Web Test CA").expect("ca");
    let repository = qm.qm_dir().join("ssl");
    ca.issue(
        &repository,
        "ibmwebspheremqweb.tls",
        &[("O", "Ferry"), ("CN", "WEB.TLS")],
        false,
    )
    .expect("qm certificate");
    ca.write_trust(&repository).expect("trust");
    let client_dir = tempfile::tempdir().expect("dir");
    ca.issue(
        client_dir.path(),
        "app",
        &[("O", "Ferry"), ("CN", "app")],
        false,
    )
    .expect("client certificate");
    qm.launch();
    let out = qm.ferry_with_stdin(&["user", "add", "WEB.TLS", "app"], "pw\n");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));

    let addr: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let builder = || {
        reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(ca.pem().as_bytes()).unwrap())
            .resolve("localhost", addr)
    };
    let base = format!("https://localhost:{port}");
    let anonymous = builder().build().unwrap();
    let r = anonymous
        .get(format!("{base}/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let r = anonymous
        .get(format!("{base}/ibmmq/rest/v2/admin/qmgr"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);

    // A client certificate the key repository trusts: its CN is the user.
    let mut pem = std::fs::read(client_dir.path().join("app.crt")).unwrap();
    pem.extend(std::fs::read(client_dir.path().join("app.key")).unwrap());
    let with_certificate = builder()
        .identity(reqwest::Identity::from_pem(&pem).unwrap())
        .build()
        .unwrap();
    let r = with_certificate
        .post(message_url(&base, "WEB.TLS", "SYSTEM.DEFAULT.LOCAL.QUEUE"))
        .header(CSRF, "x")
        .body("over https")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CREATED);
    let r = with_certificate
        .delete(message_url(&base, "WEB.TLS", "SYSTEM.DEFAULT.LOCAL.QUEUE"))
        .header(CSRF, "x")
        .send()
        .await
        .unwrap();
    assert_eq!(r.text().await.unwrap(), "over https");

    // REFRESH SECURITY TYPE(SSL) applies to the web server's next handshake.
    let new_ca = ThrowawayCa::new("Ferry Web Test CA 2").expect("ca");
    new_ca
        .issue(
            &repository,
            "ibmwebspheremqweb.tls",
            &[("O", "Ferry"), ("CN", "WEB.TLS")],
            false,
        )
        .expect("new qm certificate");
    mqsc_ok(&qm, "REFRESH SECURITY TYPE(SSL)");
    // A new connection (pooled ones keep the session they made) trusting the old CA only.
    assert!(builder()
        .build()
        .unwrap()
        .get(format!("{base}/healthz"))
        .send()
        .await
        .is_err());
    let trusting_the_new_ca = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(new_ca.pem().as_bytes()).unwrap())
        .resolve("localhost", addr)
        .build()
        .unwrap();
    let r = trusting_the_new_ca
        .get(format!("{base}/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);

    // Plain HTTP on the HTTPS port gets nowhere.
    assert!(http()
        .get(format!("http://127.0.0.1:{port}/healthz"))
        .send()
        .await
        .map(|r| r.status() != StatusCode::OK)
        .unwrap_or(true));
}

/// This host's address on its first non-loopback interface, if it has one (the route a
/// datagram to a private address would take; nothing is sent).
fn non_loopback_address() -> Option<std::net::IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("10.255.255.255:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_scrapes_mq_metric_samples_names() {
    let port = free_port().to_string();
    let mut qm = TestQueueManager::create_with(bin(), "WEB.PROM", &["--web-port", &port]);
    qm.set_ini("WebServer", "BindAddress", "0.0.0.0");
    qm.launch();
    mqsc_ok(&qm, "DEFINE QLOCAL(APP.PROM.Q)");
    for (user, password) in [("root", ADMIN_PASSWORD), ("app", APP_PASSWORD)] {
        let out = qm.ferry_with_stdin(&["user", "add", "WEB.PROM", user], &format!("{password}\n"));
        assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    }
    let base = format!("http://127.0.0.1:{port}");
    let c = http();
    for i in 0..3 {
        let r = c
            .post(message_url(&base, "WEB.PROM", "APP.PROM.Q"))
            .basic_auth("app", Some(APP_PASSWORD))
            .header(CSRF, "x")
            .header("content-type", "text/plain;charset=utf-8")
            .body(format!("message {i}"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::CREATED);
    }
    // A subscription, and two publications it receives.
    mqsc_ok(&qm, "DEFINE QLOCAL(APP.PROM.SUBQ)");
    mqsc_ok(
        &qm,
        "DEFINE SUB(PROM.SUB) TOPICSTR('price/fruit') DEST(APP.PROM.SUBQ)",
    );
    let conn = connect(&qm.client()).await;
    let topic = conn.open_topic("price/fruit").await.expect("open topic");
    for body in ["apple 1.10", "pear 0.90"] {
        let mut md = MessageDescriptor::default();
        topic
            .put(&mut md, &PutOptions::default(), body.to_owned())
            .await
            .expect("publish");
    }

    // From this host: no credentials needed (a Prometheus agent beside it).
    let r = c.get(format!("{base}/metrics")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(
        r.headers()["content-type"],
        "text/plain; version=0.0.4; charset=utf-8"
    );
    let text = r.text().await.unwrap();
    let depth = text
        .lines()
        .find(|l| l.starts_with("ibmmq_queue_depth{") && l.contains("queue=\"APP.PROM.Q\""))
        .unwrap_or_else(|| panic!("no depth for APP.PROM.Q in:\n{text}"));
    assert!(depth.contains("qmgr=\"WEB.PROM\""), "{depth}");
    assert!(depth.ends_with(" 3"), "three messages queued: {depth}");
    assert!(text.contains("# TYPE ibmmq_queue_depth gauge"), "{text}");
    assert!(
        text.lines().any(|l| l.starts_with("ibmmq_qmgr_")),
        "queue manager metrics: {text}"
    );
    assert!(
        !text.contains("queue=\"SYSTEM."),
        "SYSTEM.* queues are left out by default"
    );
    // Topics and subscriptions as the exporter shows DISPLAY TPSTATUS and SBSTATUS.
    let line = |prefix: &str| {
        text.lines()
            .find(|l| l.starts_with(prefix) && l.contains("topic=\"price/fruit\""))
            .unwrap_or_else(|| panic!("no {prefix} for price/fruit in:\n{text}"))
            .to_string()
    };
    assert!(
        line("ibmmq_topic_subscriber_count{").ends_with(" 1"),
        "{text}"
    );
    let received = line("ibmmq_subscription_messsages_received{");
    assert!(received.contains("subscription=\"PROM.SUB\""), "{received}");
    assert!(received.contains("type=\"ADMIN\""), "{received}");
    assert!(received.ends_with(" 2"), "two publications: {received}");
    assert!(
        line("ibmmq_topic_messages_received{").ends_with(" 2"),
        "{text}"
    );
    conn.disconnect().await.expect("disconnect");

    // From another host: authenticated like the REST API.
    match non_loopback_address() {
        Some(ip) => {
            let remote = format!("http://{ip}:{port}/metrics");
            let r = c.get(&remote).send().await.unwrap();
            assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
            let r = c
                .get(&remote)
                .basic_auth("app", Some(APP_PASSWORD))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), StatusCode::OK);
            assert!(r.text().await.unwrap().contains("ibmmq_queue_depth"));

            // PrometheusAuthentication=NONE: open to every scraper, as mq-metric-samples.
            stop_qm(&mut qm);
            qm.set_ini("Monitoring", "PrometheusAuthentication", "NONE");
            qm.launch();
            let r = c.get(&remote).send().await.unwrap();
            assert_eq!(r.status(), StatusCode::OK);
        }
        None => eprintln!(
            "this machine has no non-loopback address: the off-host half of this test \
             (401 without credentials) cannot run here"
        ),
    }
}
