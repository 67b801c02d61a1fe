//! TLS on native client channels, against a real queue manager process: certificates
//! made for the test (a CA, the queue manager's, clients'), the Rust client and OpenSSL's
//! `s_client` as the partners.
//!
//! A channel with SSLCIPH takes only TLS conversations with a suite it allows, and a
//! channel without takes none (the ends must agree, as in MQ); SSLCAUTH(REQUIRED) needs a
//! trusted client certificate and SSLPEER filters its subject; DISPLAY CHSTATUS shows what
//! was agreed; REFRESH SECURITY TYPE(SSL) reloads the key repository without a restart
//! and keeps the old one when the new files are bad. Every refusal has its reason code
//! and FRY message, and plain conversations on the same port carry on throughout.

mod common;

use common::*;
use ferry_client::{ConnectOptions, OutboundSni, TlsOptions};
use ferry_mqi::{OpenOptions, ReasonCode};
use ferry_tls::self_signed::ThrowawayCa;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const IO: OpenOptions = OpenOptions::OUTPUT.union(OpenOptions::INPUT_SHARED);

/// A queue manager with a key repository (its certificate signed by `ca`, trusting `ca`)
/// and a client key repository trusting `ca` with certificate `app` (CN=app1,O=Ferry).
struct Pki {
    ca: ThrowawayCa,
    qm_repository: PathBuf,
    app: PathBuf,
    _dir: tempfile::TempDir,
}

fn pki(qm: &TestQueueManager) -> Pki {
    let ca = ThrowawayCa::new("Ferry Test CA").expect("ca");
    let qm_repository = qm.qm_dir().join("ssl");
    let label = format!("ibmwebspheremq{}", qm.name().to_lowercase());
    ca.issue(
        &qm_repository,
        &label,
        &[("O", "Ferry"), ("CN", qm.name())],
        false,
    )
    .expect("qm certificate");
    ca.write_trust(&qm_repository).expect("qm trust");
    let dir = tempfile::tempdir().expect("dir");
    let app = dir.path().join("app");
    ca.write_trust(&app).expect("app trust");
    ca.issue(&app, "app", &[("O", "Ferry"), ("CN", "app1")], false)
        .expect("app certificate");
    Pki {
        ca,
        qm_repository,
        app,
        _dir: dir,
    }
}

fn tls_client(qm: &TestQueueManager, channel: &str, tls: TlsOptions) -> ConnectOptions {
    ConnectOptions::client(&qm.conname(), channel).tls(tls)
}

/// A client key repository in `dir` trusting `ca`, with certificate `app` for `subject`
/// signed by `signer`.
fn client_repository(dir: &Path, ca: &ThrowawayCa, signer: &ThrowawayCa, subject: &[(&str, &str)]) {
    ca.write_trust(dir).expect("trust");
    signer.issue(dir, "app", subject, false).expect("cert");
}

async fn round_trip(opts: &ConnectOptions, body: &str) {
    let conn = connect(opts).await;
    let q = open(&conn, "Q", IO).await;
    put(&q, body).await;
    assert_eq!(get_text(&q).await, body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tls_channel_takes_only_tls_with_its_cipherspec_and_shows_what_was_agreed() {
    let qm = start("TLS.NATIVE");
    let pki = pki(&qm);
    let refreshed = mqsc_ok(
        &qm,
        "DEFINE QLOCAL(Q)\n\
         DEFINE CHANNEL(TLS.SVRCONN) CHLTYPE(SVRCONN) SSLCIPH(TLS_AES_128_GCM_SHA256) SSLCAUTH(OPTIONAL)\n\
         REFRESH SECURITY TYPE(SSL)",
    );
    assert!(refreshed.contains("FRY8560I"), "{refreshed}");
    assert!(
        refreshed.contains("1 certificate, with trust.pem"),
        "{refreshed}"
    );

    let tls = TlsOptions::new("TLS_AES_128_GCM_SHA256", &pki.app).certificate_label("app");
    let opts = tls_client(&qm, "TLS.SVRCONN", tls);
    let conn = connect(&opts).await;
    let q = open(&conn, "Q", IO).await;
    put(&q, "over tls").await;
    assert_eq!(get_text(&q).await, "over tls");
    let shown = mqsc_ok(&qm, "DISPLAY CHSTATUS(TLS.SVRCONN) ALL");
    assert_eq!(
        attr(&shown, "SSLCIPH").as_deref(),
        Some("TLS_AES_128_GCM_SHA256"),
        "{shown}"
    );
    assert_eq!(attr(&shown, "SSLPEER").as_deref(), Some("CN=app1,O=Ferry"));
    assert_eq!(
        attr(&shown, "SSLCERTI").as_deref(),
        Some("CN=Ferry Test CA,O=Ferry Test")
    );
    assert_eq!(attr(&shown, "SSLRKEYS").as_deref(), Some("0"));

    // Plain to the TLS channel, TLS to a plain channel: both refused, with the reason.
    let plain = ConnectOptions::client(&qm.conname(), "TLS.SVRCONN");
    assert_reason(
        ferry_client::Connection::connect(&plain).await,
        ReasonCode::SslInitializationError,
    );
    let tls_to_plain = tls_client(
        &qm,
        "SYSTEM.DEF.SVRCONN",
        TlsOptions::new("ANY_TLS12_OR_HIGHER", &pki.app),
    );
    assert_reason(
        ferry_client::Connection::connect(&tls_to_plain).await,
        ReasonCode::SslInitializationError,
    );
    // A client whose CipherSpec the channel does not allow: the handshake finds none.
    let other_spec = tls_client(&qm, "TLS.SVRCONN", TlsOptions::new("ANY_TLS12", &pki.app));
    assert_reason(
        ferry_client::Connection::connect(&other_spec).await,
        ReasonCode::SslInitializationError,
    );
    // Without the channel in SNI (OutboundSni::HostName; 127.0.0.1 sends none) the
    // handshake offers every CipherSpec, and the channel's check refuses the one agreed.
    let no_sni = tls_client(
        &qm,
        "TLS.SVRCONN",
        TlsOptions::new("TLS_AES_256_GCM_SHA384", &pki.app).outbound_sni(OutboundSni::HostName),
    );
    assert_reason(
        ferry_client::Connection::connect(&no_sni).await,
        ReasonCode::SslInitializationError,
    );
    // The client may have its answer before the queue manager has written its line.
    for id in ["FRY9639E", "FRY9640E", "FRY9641E", "FRY9631E"] {
        wait_until(id, || qm.error_log().contains(id));
    }
    // Plain clients on the same port, and the TLS conversation, carry on.
    round_trip(&qm.client(), "plain still works").await;
    put(&q, "still").await;
    assert_eq!(get_text(&q).await, "still");

    // SSLRKEYC: new conversations reset their key every 32 KB (TLS 1.3 key updates).
    mqsc_ok(&qm, "ALTER QMGR SSLRKEYC(32768)");
    let tls = TlsOptions::new("TLS_AES_128_GCM_SHA256", &pki.app);
    let resetting = connect(&tls_client(&qm, "TLS.SVRCONN", tls).application_name("resets")).await;
    let rq = open(&resetting, "Q", IO).await;
    let big = "k".repeat(50_000);
    for _ in 0..4 {
        put(&rq, &big).await;
        assert_eq!(get_text(&rq).await, big);
    }
    let shown = mqsc_ok(
        &qm,
        "DISPLAY CHSTATUS(TLS.SVRCONN) WHERE(RAPPLTAG EQ 'resets')",
    );
    let resets: u64 = attr(&shown, "SSLRKEYS")
        .and_then(|n| n.parse().ok())
        .expect("SSLRKEYS shown");
    // 400 KB crossed the conversation: at least one reset per 32 KB read.
    assert!(resets >= 6, "SSLRKEYS({resets}):\n{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sslcauth_required_and_sslpeer_decide_which_certificates_connect() {
    let qm = start("TLS.PEER");
    let pki = pki(&qm);
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(Q)\n\
         DEFINE CHANNEL(AUTH.SVRCONN) CHLTYPE(SVRCONN) SSLCIPH(ANY_TLS12_OR_HIGHER) SSLCAUTH(REQUIRED) SSLPEER('CN=app*,O=Ferry')\n\
         REFRESH SECURITY TYPE(SSL)",
    );
    let spec = "ANY_TLS12_OR_HIGHER";
    // The right certificate.
    let good = TlsOptions::new(spec, &pki.app).certificate_label("app");
    round_trip(&tls_client(&qm, "AUTH.SVRCONN", good), "trusted").await;

    // No certificate at all.
    let none_dir = tempfile::tempdir().expect("dir");
    pki.ca.write_trust(none_dir.path()).expect("trust");
    let none = TlsOptions::new(spec, none_dir.path());
    assert_reason(
        ferry_client::Connection::connect(&tls_client(&qm, "AUTH.SVRCONN", none)).await,
        ReasonCode::SslInitializationError,
    );

    // A certificate from the right CA whose subject SSLPEER does not accept.
    let intruder = tempfile::tempdir().expect("dir");
    client_repository(
        intruder.path(),
        &pki.ca,
        &pki.ca,
        &[("O", "Ferry"), ("CN", "intruder")],
    );
    let wrong_subject = TlsOptions::new(spec, intruder.path()).certificate_label("app");
    assert_reason(
        ferry_client::Connection::connect(&tls_client(&qm, "AUTH.SVRCONN", wrong_subject)).await,
        ReasonCode::SslPeerNameMismatch,
    );
    wait_until("FRY9636E naming the subject", || {
        let log = qm.error_log();
        log.contains("FRY9636E") && log.contains("CN=intruder,O=Ferry")
    });

    // A certificate from a CA the queue manager does not trust.
    let stranger = ThrowawayCa::new("Stranger CA").expect("ca");
    let untrusted = tempfile::tempdir().expect("dir");
    client_repository(
        untrusted.path(),
        &pki.ca,
        &stranger,
        &[("O", "Ferry"), ("CN", "app9")],
    );
    let untrusted = TlsOptions::new(spec, untrusted.path()).certificate_label("app");
    assert_reason(
        ferry_client::Connection::connect(&tls_client(&qm, "AUTH.SVRCONN", untrusted)).await,
        ReasonCode::SslInitializationError,
    );

    // The client's own SSLPEER on the queue manager's certificate.
    let wrong_qm = TlsOptions::new(spec, &pki.app)
        .certificate_label("app")
        .peer_name("CN=SOMEONE.ELSE");
    assert_reason(
        ferry_client::Connection::connect(&tls_client(&qm, "AUTH.SVRCONN", wrong_qm)).await,
        ReasonCode::SslPeerNameMismatch,
    );
    let right_qm = TlsOptions::new(spec, &pki.app)
        .certificate_label("app")
        .peer_name("CN=TLS.PEER,O=Ferry");
    round_trip(
        &tls_client(&qm, "AUTH.SVRCONN", right_qm),
        "checked both ways",
    )
    .await;
}

/// `openssl s_client` against the listener; returns what it printed.
fn s_client(port: u16, args: &[&str]) -> String {
    let mut child = Command::new("openssl")
        .arg("s_client")
        .arg("-connect")
        .arg(format!("127.0.0.1:{port}"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("openssl s_client (install openssl)");
    // Closing stdin ends the session after the handshake.
    drop(child.stdin.take());
    let out = child.wait_with_output().expect("s_client ran");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openssl_handshakes_bad_handshakes_and_key_repository_refreshes() {
    let qm = start("TLS.OPENSSL");
    let pki = pki(&qm);
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(Q)\n\
         DEFINE CHANNEL(TLS.SVRCONN) CHLTYPE(SVRCONN) SSLCIPH(TLS_AES_256_GCM_SHA384) SSLCAUTH(OPTIONAL)\n\
         REFRESH SECURITY TYPE(SSL)",
    );
    let trust = pki.qm_repository.join("trust.pem");
    let trust = trust.to_str().expect("path");
    // MQ's SNI for the channel: the queue manager offers that channel's CipherSpec.
    let sni = "tls2e-svrconn.chl.mq.ibm.com";
    let shown = s_client(qm.port(), &["-CAfile", trust, "-servername", sni]);
    assert!(
        shown.contains("Cipher is TLS_AES_256_GCM_SHA384"),
        "{shown}"
    );
    assert!(shown.contains("Verify return code: 0 (ok)"), "{shown}");
    assert!(shown.contains(&format!("CN = {}", qm.name())), "{shown}");
    // TLS 1.2 only, to a channel whose CipherSpec is TLS 1.3: no handshake.
    let refused = s_client(
        qm.port(),
        &["-CAfile", trust, "-servername", sni, "-tls1_2"],
    );
    assert!(refused.contains("alert protocol version"), "{refused}");
    assert!(!refused.contains("Cipher is TLS"), "{refused}");

    // A handshake record followed by rubbish, and a client that stops mid-handshake.
    for bytes in [
        &[0x16u8, 0x03, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5][..],
        &[0x16u8, 0x03, 0x01, 0x40, 0x00][..],
    ] {
        let mut raw = std::net::TcpStream::connect(("127.0.0.1", qm.port())).expect("connect");
        raw.write_all(bytes).expect("write");
        raw.shutdown(std::net::Shutdown::Write).expect("shutdown");
        raw.set_read_timeout(Some(DEADLINE)).expect("timeout");
        let mut rest = Vec::new();
        let _ = raw.read_to_end(&mut rest);
    }
    wait_until("FRY9641E", || qm.error_log().contains("FRY9641E"));
    round_trip(&qm.client(), "plain after rubbish").await;

    // A bad file: REFRESH fails with FRY9660E and the repository in use stays.
    let label = format!("ibmwebspheremq{}", qm.name().to_lowercase());
    let key = pki.qm_repository.join(format!("{label}.key"));
    let good_key = std::fs::read(&key).expect("key");
    std::fs::write(&key, b"not a key").expect("spoil");
    let out = qm.mqsc("REFRESH SECURITY TYPE(SSL)");
    assert!(stdout(&out).contains("FRY9660E"), "{}", stdout(&out));
    let tls = TlsOptions::new("TLS_AES_256_GCM_SHA384", &pki.app);
    round_trip(&tls_client(&qm, "TLS.SVRCONN", tls.clone()), "old keys").await;

    // A repository without the queue manager's certificate: FRY9642E, 2393 for clients.
    std::fs::remove_file(&key).expect("remove");
    mqsc_ok(&qm, "REFRESH SECURITY TYPE(SSL)");
    let tls_after = TlsOptions::new("TLS_AES_256_GCM_SHA384", &pki.app);
    assert_reason(
        ferry_client::Connection::connect(&tls_client(&qm, "TLS.SVRCONN", tls_after)).await,
        ReasonCode::SslInitializationError,
    );
    wait_until("FRY9642E", || qm.error_log().contains("FRY9642E"));
    // Put back: new conversations work again without a restart.
    std::fs::write(&key, good_key).expect("restore");
    mqsc_ok(&qm, "REFRESH SECURITY TYPE(SSL)");
    let tls_again = TlsOptions::new("TLS_AES_256_GCM_SHA384", &pki.app);
    round_trip(&tls_client(&qm, "TLS.SVRCONN", tls_again), "new keys").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mqsc_refuses_cipherspecs_ferry_does_not_offer_and_bad_sslpeer_filters() {
    let qm = start("TLS.MQSC");
    let out = qm
        .mqsc("DEFINE CHANNEL(CBC.SVRCONN) CHLTYPE(SVRCONN) SSLCIPH(ECDHE_RSA_AES_256_CBC_SHA384)");
    let text = stdout(&out);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("CBC"), "{text}");
    let out = qm.mqsc("DEFINE CHANNEL(PEER.SVRCONN) CHLTYPE(SVRCONN) SSLPEER('CN=a*b')");
    assert!(!out.status.success());
    assert!(stdout(&out).contains("wildcard"), "{}", stdout(&out));
    let shown = mqsc_ok(
        &qm,
        "DEFINE CHANNEL(OK.SVRCONN) CHLTYPE(SVRCONN) SSLCIPH(ANY_TLS13_OR_HIGHER) SSLPEER('CN=app*')\n\
         DISPLAY CHANNEL(OK.SVRCONN) SSLCIPH SSLPEER SSLCAUTH",
    );
    assert_eq!(
        attr(&shown, "SSLCIPH").as_deref(),
        Some("ANY_TLS13_OR_HIGHER")
    );
    assert_eq!(attr(&shown, "SSLCAUTH").as_deref(), Some("REQUIRED"));
}

/// qm.ini's SSL stanza limits what every channel may use, and TCP SecureCommsOnly=YES
/// refuses every conversation without TLS.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qm_ini_limits_cipherspecs_and_can_refuse_plain_conversations() {
    let mut qm = TestQueueManager::create_with(bin(), "TLS.POLICY", &[]);
    qm.set_ini("SSL", "AllowedCipherSpecs", "TLS_AES_256_GCM_SHA384");
    qm.set_ini("TCP", "SecureCommsOnly", "YES");
    qm.launch();
    let pki = pki(&qm);
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(Q)\n\
         DEFINE CHANNEL(TLS.ANY) CHLTYPE(SVRCONN) SSLCIPH(ANY_TLS13_OR_HIGHER) SSLCAUTH(OPTIONAL)\n\
         DEFINE CHANNEL(TLS.128) CHLTYPE(SVRCONN) SSLCIPH(TLS_AES_128_GCM_SHA256) SSLCAUTH(OPTIONAL)\n\
         REFRESH SECURITY TYPE(SSL)",
    );
    // The alias agrees on the one CipherSpec qm.ini allows.
    let any = tls_client(
        &qm,
        "TLS.ANY",
        TlsOptions::new("ANY_TLS13_OR_HIGHER", &pki.app),
    );
    let conn = connect(&any).await;
    let q = open(&conn, "Q", IO).await;
    put(&q, "allowed").await;
    assert_eq!(get_text(&q).await, "allowed");
    let shown = mqsc_ok(&qm, "DISPLAY CHSTATUS(TLS.ANY) SSLCIPH");
    assert_eq!(
        attr(&shown, "SSLCIPH").as_deref(),
        Some("TLS_AES_256_GCM_SHA384"),
        "{shown}"
    );
    // A channel left with no allowed CipherSpec refuses its handshakes, saying why.
    let only_128 = tls_client(
        &qm,
        "TLS.128",
        TlsOptions::new("TLS_AES_128_GCM_SHA256", &pki.app),
    );
    assert_reason(
        ferry_client::Connection::connect(&only_128).await,
        ReasonCode::SslInitializationError,
    );
    // Plain conversations are refused on every channel, SYSTEM.DEF.SVRCONN included.
    assert_reason(
        ferry_client::Connection::connect(&qm.client()).await,
        ReasonCode::SslInitializationError,
    );
    let log = qm.error_log();
    assert!(log.contains("FRY9643E"), "{log}");
    assert!(
        log.contains("FRY9642E") && log.contains("AllowedCipherSpecs"),
        "{log}"
    );
    // A name qm.ini cannot hold stops the start with the key named.
    drop(q);
    conn.disconnect().await.expect("disconnect");
    qm.set_ini("SSL", "AllowedCipherSpecs", "TLS_NO_SUCH_SPEC");
    stop_qm(&mut qm);
    let out = qm.ferry(&["start", qm.name()]);
    assert!(!out.status.success());
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(text.contains("AllowedCipherSpecs"), "{text}");
}
