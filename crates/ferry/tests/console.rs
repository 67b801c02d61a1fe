//! The web console and login sessions against a real `ferry` process over real sockets:
//! the console in a real browser (Debian's chromium driven by playwright-core:
//! tests/console/console.mjs, run by tests/console/run.sh), login sessions of the REST
//! API (cookie, expiry, logout, forged tokens), and bad input: path traversal in asset
//! and page paths, pages and their JSON without a session, state-changing requests
//! without the CSRF header, markup in object names and message bodies shown escaped.

mod common;

use common::*;
use ferry_mqi::OpenOptions;
use reqwest::{redirect, StatusCode};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

const PASSWORD: &str = "console passw0rd";
const CSRF: &str = "ibm-mq-rest-csrf-token";

/// A queue manager with its web server on a free port (and `settings` in qm.ini), and
/// `user` in its repository (group `apps`) with the password [`PASSWORD`].
fn console_qm(
    name: &str,
    user: &str,
    settings: &[(&str, &str, &str)],
) -> (TestQueueManager, String) {
    console_qm_with(name, user, settings, false)
}

/// [`console_qm`], checking object authorities when `checks`.
fn console_qm_with(
    name: &str,
    user: &str,
    settings: &[(&str, &str, &str)],
    checks: bool,
) -> (TestQueueManager, String) {
    let port = free_port().to_string();
    let mut qm = TestQueueManager::create_with(bin(), name, &["--web-port", &port]);
    qm.set_ini("WebServer", "BindAddress", "127.0.0.1");
    for (stanza, key, value) in settings {
        qm.set_ini(stanza, key, value);
    }
    if checks {
        qm.check_authorities();
    }
    qm.launch();
    let out = qm.ferry_with_stdin(
        &["user", "add", name, user, "--group", "apps"],
        &format!("{PASSWORD}\n"),
    );
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    (qm, format!("http://127.0.0.1:{port}"))
}

/// An HTTP client that does not follow redirects (so they can be seen) and keeps no
/// cookies (each request says which it sends).
fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .redirect(redirect::Policy::none())
        .build()
        .expect("client")
}

/// Logs `user` in over the REST API: the session cookie's `name=value`.
async fn login(base: &str, user: &str, password: &str) -> Result<String, StatusCode> {
    let r = http()
        .post(format!("{base}/ibmmq/rest/v2/login"))
        .header(CSRF, "x")
        .json(&json!({"username": user, "password": password}))
        .send()
        .await
        .expect("send");
    if r.status() != StatusCode::NO_CONTENT {
        return Err(r.status());
    }
    let set = r.headers()["set-cookie"]
        .to_str()
        .expect("text")
        .to_string();
    assert!(set.contains("HttpOnly"), "{set}");
    assert!(set.contains("SameSite=Strict"), "{set}");
    assert!(!set.contains("Secure"), "no Secure over plain HTTP: {set}");
    Ok(set.split(';').next().expect("name=value").to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_in_a_real_browser() {
    let (qm, base) = console_qm("CONSOLE.UI", "root", &[]);
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(APP.ORDERS) MAXDEPTH(5000) DESCR('orders')",
    );
    mqsc_ok(&qm, "DEFINE QLOCAL(APP.REPLIES)");
    let body = "order 1001: 3 widgets";
    let script_body = "<script>window.ferryPwned=true</script>";
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "APP.ORDERS", OpenOptions::OUTPUT).await;
    for text in [body, script_body, "order 1002: 1 gadget"] {
        put(&q, text).await;
    }
    let replies = open(&conn, "APP.REPLIES", OpenOptions::OUTPUT).await;
    put(&replies, "reply").await;
    // CLEAR QLOCAL (the browser clears APP.ORDERS) refuses an open queue, as MQ does.
    q.close(ferry_mqi::CloseOptions::empty())
        .await
        .expect("close");
    // Traffic on a third queue while the browser looks, so the rates are not all zero.
    mqsc_ok(&qm, "DEFINE QLOCAL(APP.EVENTS)");
    let load_conn = connect(&qm.client()).await;
    let events = open(
        &load_conn,
        "APP.EVENTS",
        OpenOptions::OUTPUT.union(OpenOptions::INPUT_SHARED),
    )
    .await;
    let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
    let traffic = tokio::spawn(async move {
        let mut n = 0u64;
        while stopped.try_recv().is_err() {
            put(&events, &format!("event {n}")).await;
            if !n.is_multiple_of(3) {
                let _ = get(&events).await;
            }
            n += 1;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });

    // docs/images/console-*.png are these, looked at and copied by hand.
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("console-screenshots");
    std::fs::create_dir_all(&shots).expect("screenshot folder");
    let runner = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/console/run.sh");
    let out = std::process::Command::new(&runner)
        .env("FERRY_CONSOLE_URL", &base)
        .env("FERRY_CONSOLE_USER", "root")
        .env("FERRY_CONSOLE_PASSWORD", PASSWORD)
        .env("FERRY_CONSOLE_QUEUE", "APP.ORDERS")
        .env("FERRY_CONSOLE_DEPTH", "3")
        .env("FERRY_CONSOLE_BODY", body)
        .env("FERRY_CONSOLE_SCRIPT_BODY", script_body)
        .env("FERRY_CONSOLE_SHOTS", &shots)
        .output()
        .unwrap_or_else(|e| panic!("{} could not run: {e}", runner.display()));
    let _ = stop.send(());
    traffic.await.expect("the traffic ran");
    let (text, errors) = (stdout(&out), stderr(&out));
    assert!(
        out.status.success(),
        "the browser test failed ({}):\n{text}\n{errors}",
        out.status
    );
    assert!(!text.contains("not ok"), "{text}");
    assert!(text.contains("15 passed, 0 failed"), "{text}\n{errors}");
    for shot in [
        "console-queues.png",
        "console-queue.png",
        "console-mqsc.png",
    ] {
        let bytes = std::fs::read(shots.join(shot)).expect("a screenshot");
        assert!(bytes.starts_with(b"\x89PNG"), "{shot} is a PNG");
        assert!(bytes.len() > 10_000, "{shot} shows something");
    }
    // The browser's actions were the queue manager's: the queue was cleared at the end,
    // the other queue untouched, native messaging goes on.
    assert_eq!(curdepth(&qm, "APP.ORDERS"), 0);
    assert_eq!(curdepth(&qm, "APP.REPLIES"), 1);
    assert!(!mqsc_ok(&qm, "DISPLAY QLOCAL(*)").contains("CSRF.ATTACK"));
    let q = open(&conn, "APP.ORDERS", OpenOptions::OUTPUT).await;
    put(&q, "after the browser").await;
    assert_eq!(curdepth(&qm, "APP.ORDERS"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_sessions_authenticate_expire_and_end() {
    let (qm, base) = console_qm("CONSOLE.LOGIN", "root", &[]);
    let c = http();

    // Wrong password, malformed body, no CSRF header: no session.
    assert_eq!(
        login(&base, "root", "wrong").await,
        Err(StatusCode::UNAUTHORIZED)
    );
    let r = c
        .post(format!("{base}/ibmmq/rest/v2/login"))
        .header(CSRF, "x")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let r = c
        .post(format!("{base}/ibmmq/rest/v2/login"))
        .json(&json!({"username": "root", "password": PASSWORD}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);

    let cookie = login(&base, "root", PASSWORD).await.expect("a session");
    assert!(cookie.starts_with("LtpaToken2="), "{cookie}");
    let r = c
        .get(format!("{base}/ibmmq/rest/v2/login"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let me: Value = r.json().await.unwrap();
    assert_eq!(me["user"][0]["name"], "root", "{me}");
    assert!(me["user"][0]["role"]
        .as_array()
        .is_some_and(|r| r.contains(&json!("MQWebAdmin"))));

    // The cookie runs commands as its user; changing something still needs the header.
    let mqsc = format!("{base}/ibmmq/rest/v2/admin/action/qmgr/CONSOLE.LOGIN/mqsc");
    let define = json!({"type":"runCommand","parameters":{"command":"DEFINE QLOCAL(BY.COOKIE)"}});
    let r = c
        .post(&mqsc)
        .header("cookie", &cookie)
        .json(&define)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN, "no CSRF header");
    assert!(!mqsc_ok(&qm, "DISPLAY QLOCAL(*)").contains("BY.COOKIE"));
    let r = c
        .post(&mqsc)
        .header("cookie", &cookie)
        .header(CSRF, "x")
        .json(&define)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert!(mqsc_ok(&qm, "DISPLAY QLOCAL(*)").contains("BY.COOKIE"));

    // Forged and garbled tokens are refused.
    for forged in [
        "LtpaToken2=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA".to_string(),
        format!("{cookie}x"),
        "LtpaToken2=../../etc/passwd".to_string(),
        format!("LtpaToken2={}", "A".repeat(5000)),
    ] {
        let r = c
            .get(format!("{base}/ibmmq/rest/v2/login"))
            .header("cookie", &forged)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{forged}");
    }

    // Logout ends the session.
    let r = c
        .delete(format!("{base}/ibmmq/rest/v2/login"))
        .header("cookie", &cookie)
        .header(CSRF, "x")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    assert!(r.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .contains("Max-Age=0"));
    let r = c
        .get(format!("{base}/ibmmq/rest/v2/login"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    drop(qm);

    // qm.ini SessionTimeout is read (a value out of its range stops the start, as every
    // key's does). That a session unused for it ends is the unit test of
    // runtime::web::session: 60 s, the shortest allowed, is too long to wait for here.
    let (_qm, base) = console_qm(
        "CONSOLE.IDLE",
        "root",
        &[("WebServer", "SessionTimeout", "60")],
    );
    let cookie = login(&base, "root", PASSWORD).await.expect("a session");
    let r = c
        .get(format!("{base}/ibmmq/console/queues"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK, "the session serves while fresh");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_to_the_console() {
    let (qm, base) = console_qm(
        "CONSOLE.BAD",
        "root",
        &[("WebServer", "MaxRequestBody", "65536")],
    );
    let addr = base.trim_start_matches("http://").to_string();
    let c = http();

    // Without a session: pages go to the login page, their JSON and actions are 401.
    for page in [
        "/ibmmq/console/",
        "/ibmmq/console/queues",
        "/ibmmq/console/mqsc",
    ] {
        let r = c.get(format!("{base}{page}")).send().await.unwrap();
        assert_eq!(r.status(), StatusCode::SEE_OTHER, "{page}");
        assert_eq!(r.headers()["location"], "/ibmmq/console/login", "{page}");
    }
    let r = c
        .get(format!("{base}/ibmmq/console/api/stats"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let r = c
        .post(format!("{base}/ibmmq/console/mqsc"))
        .header(CSRF, "x")
        .form(&[("command", "DEFINE QLOCAL(NO.SESSION)")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let r = c
        .get(format!("{base}/ibmmq/console/login"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let csp = r.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        csp.contains("default-src 'self'") && !csp.contains("unsafe-inline"),
        "{csp}"
    );
    assert_eq!(r.headers()["x-frame-options"], "DENY");
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");

    // Assets: from the table, with their type and ETag; a second ask is 304.
    let r = c
        .get(format!("{base}/ibmmq/console/assets/htmx.min.js"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/javascript"));
    let etag = r.headers()["etag"].clone();
    let r = c
        .get(format!("{base}/ibmmq/console/assets/htmx.min.js"))
        .header("if-none-match", etag)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_MODIFIED);

    // Path traversal, raw on the socket so nothing normalises the paths first.
    for path in [
        "/ibmmq/console/../../etc/passwd",
        "/ibmmq/console/assets/../../../../etc/passwd",
        "/ibmmq/console/assets/..%2F..%2F..%2Fetc%2Fpasswd",
        "/ibmmq/console/assets/%2e%2e/%2e%2e/etc/passwd",
        "/ibmmq/console/assets/..%5c..%5cCargo.toml",
        "/ibmmq/console/assets/console.js%00.png",
        "/ibmmq/console/assets/vendor%2Fhtmx.min.js",
        "/ibmmq/console/queue/..%2F..%2Fetc%2Fpasswd",
        "/ibmmq/rest/v2/messaging/qmgr/CONSOLE.BAD/queue/..%2F..%2Fetc%2Fpasswd/message",
        "/ibmmq/console/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    ] {
        let answer = raw(
            &addr,
            &format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
        );
        let status: u16 = answer
            .get(9..12)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{path}: {answer}"));
        assert!(
            [303, 400, 401, 404, 405].contains(&status),
            "{path}: {answer}"
        );
        assert!(!answer.contains("root:"), "{path} leaked /etc/passwd");
        assert!(!answer.contains("[workspace]"), "{path} leaked a file");
    }

    // An administrator's session: markup in MQSC output and names is shown escaped.
    let cookie = login(&base, "root", PASSWORD).await.expect("a session");
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(ESCAPE.Q) DESCR('<script>alert(1)</script>')",
    );
    let r = c
        .post(format!("{base}/ibmmq/console/mqsc"))
        .header("cookie", &cookie)
        .header(CSRF, "x")
        .form(&[("command", "DISPLAY QLOCAL(ESCAPE.Q) DESCR")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let html = r.text().await.unwrap();
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{html}"
    );
    assert!(!html.contains("<script>"), "{html}");

    // Actions without the CSRF header: 403, nothing done.
    let r = c
        .post(format!("{base}/ibmmq/console/mqsc"))
        .header("cookie", &cookie)
        .form(&[("command", "DEFINE QLOCAL(NO.CSRF)")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = c
        .post(format!("{base}/ibmmq/console/queue/ESCAPE.Q/put"))
        .header("cookie", &cookie)
        .form(&[("body", "no")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert_eq!(curdepth(&qm, "ESCAPE.Q"), 0);
    assert!(!mqsc_ok(&qm, "DISPLAY QLOCAL(*)").contains("NO.CSRF"));

    // MQSC injection through the console: one command only.
    for sneaky in [
        "DISPLAY QMGR\nDEFINE QLOCAL(INJECTED)",
        "DISPLAY QMGR +\nDEFINE QLOCAL(INJECTED)",
    ] {
        let r = c
            .post(format!("{base}/ibmmq/console/mqsc"))
            .header("cookie", &cookie)
            .header(CSRF, "x")
            .form(&[("command", sneaky)])
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::BAD_REQUEST, "{sneaky:?}");
    }
    assert!(!mqsc_ok(&qm, "DISPLAY QLOCAL(*)").contains("INJECTED"));

    // Bad queue names and a huge body: 400 and 413.
    let r = c
        .get(format!("{base}/ibmmq/console/queue/{}", "Q".repeat(49)))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let r = c
        .post(format!("{base}/ibmmq/console/queue/ESCAPE.Q/put"))
        .header("cookie", &cookie)
        .header(CSRF, "x")
        .form(&[("body", "x".repeat(100_000))])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(curdepth(&qm, "ESCAPE.Q"), 0);

    // A message whose body is markup is browsed as text.
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "ESCAPE.Q", OpenOptions::OUTPUT).await;
    put(&q, "<img src=x onerror=alert(1)>").await;
    let r = c
        .get(format!("{base}/ibmmq/console/queue/ESCAPE.Q/messages"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    let html = r.text().await.unwrap();
    assert!(
        html.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "{html}"
    );
    assert!(!html.contains("<img"), "{html}");
    assert_eq!(curdepth(&qm, "ESCAPE.Q"), 1, "browsing takes nothing");

    // After all that, native messaging is unaffected.
    put(&q, "still here").await;
    assert_eq!(curdepth(&qm, "ESCAPE.Q"), 2);
}

/// A user without authority sees refusals, not objects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn console_users_get_their_object_authorities() {
    let (qm, base) = console_qm_with("CONSOLE.AUTH", "app", &[], true);
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(SECRET.Q)\n\
         SET AUTHREC OBJTYPE(QMGR) GROUP('apps') AUTHADD(CONNECT)",
    );
    let cookie = login(&base, "app", PASSWORD).await.expect("a session");
    let c = http();
    let r = c
        .get(format!("{base}/ibmmq/console/queue/SECRET.Q/messages"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    let html = r.text().await.unwrap();
    assert!(html.contains("2035"), "browsing needs authority: {html}");
    let r = c
        .post(format!("{base}/ibmmq/console/queue/SECRET.Q/clear"))
        .header("cookie", &cookie)
        .header(CSRF, "x")
        .send()
        .await
        .unwrap();
    let html = r.text().await.unwrap();
    assert!(
        html.contains("FRY8135E"),
        "clearing needs authority: {html}"
    );
    let r = c
        .post(format!("{base}/ibmmq/console/queue/SECRET.Q/put"))
        .header("cookie", &cookie)
        .header(CSRF, "x")
        .form(&[("body", "not allowed")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert_eq!(curdepth(&qm, "SECRET.Q"), 0);
}

fn raw(addr: &str, request: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}
