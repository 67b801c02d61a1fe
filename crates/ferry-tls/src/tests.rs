//! Handshakes between Ferry's server and client configurations over an in-memory pipe,
//! with certificates made for the test.

use crate::self_signed::ThrowawayCa;
use crate::*;
use rustls_pki_types::ServerName;
use std::path::Path;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A queue manager's repository (label `qm`, trusting `ca`) and a client's (trusting
/// `ca`, with certificate label `app` when `client_cert`).
fn repositories(
    ca: &ThrowawayCa,
    root: &Path,
    client_cert: bool,
) -> (KeyRepository, ClientTlsOptions) {
    let qm = root.join("qm");
    ca.issue(&qm, "qm", &[("O", "Ferry"), ("CN", "QM1")], false)
        .expect("qm cert");
    ca.write_trust(&qm).expect("trust");
    let app = root.join("app");
    ca.write_trust(&app).expect("trust");
    if client_cert {
        ca.issue(
            &app,
            "app",
            &[("O", "Ferry"), ("OU", "Payments"), ("CN", "app1")],
            false,
        )
        .expect("app cert");
    }
    let repo = KeyRepository::load(&qm, &provider()).expect("loads");
    let options = ClientTlsOptions {
        cipher_spec: "ANY_TLS12_OR_HIGHER".into(),
        key_repository: app,
        certificate_label: client_cert.then(|| "app".to_string()),
        peer_name: None,
    };
    (repo, options)
}

/// Runs a handshake; the server's view of what was negotiated, or the first error.
async fn handshake(
    server: Arc<rustls::ServerConfig>,
    client: Arc<rustls::ClientConfig>,
) -> Result<(Negotiated, Negotiated), String> {
    let (a, b) = tokio::io::duplex(64 * 1024);
    let acceptor = tokio_rustls::TlsAcceptor::from(server);
    let connector = tokio_rustls::TlsConnector::from(client);
    let name =
        ServerName::try_from(ferry_security::sni::host_for_channel("APP.SVRCONN")).expect("name");
    let (s, c) = tokio::join!(acceptor.accept(a), connector.connect(name, b));
    let s = s.map_err(|e| format!("server: {e}"))?;
    let c = c.map_err(|e| format!("client: {e}"))?;
    let sn = negotiated(s.get_ref().1).ok_or("server: nothing negotiated")?;
    let cn = negotiated(c.get_ref().1).ok_or("client: nothing negotiated")?;
    Ok((sn, cn))
}

fn channel(cipher: &'static str, required: bool) -> ChannelTls {
    ChannelTls {
        cipher: Some(cipher),
        client_auth_required: required,
        label: "qm".into(),
    }
}

#[tokio::test]
async fn the_channels_cipherspec_is_negotiated_and_names_are_read() {
    let dir = tempfile::tempdir().expect("dir");
    let ca = ThrowawayCa::new("Test CA").expect("ca");
    let (repo, options) = repositories(&ca, dir.path(), true);
    let tls = ServerTls::new(repo);
    let server = tls
        .config(&channel("TLS_AES_128_GCM_SHA256", true))
        .expect("config");
    let client = client_config(&options, "app").expect("client");
    let (s, c) = handshake(server, client).await.expect("handshake");
    assert_eq!(s.cipher_spec.name, "TLS_AES_128_GCM_SHA256");
    assert_eq!(c.cipher_spec.name, "TLS_AES_128_GCM_SHA256");
    let peer = s.peer.expect("client certificate");
    assert_eq!(peer.subject.to_string(), "CN=app1,OU=Payments,O=Ferry");
    assert_eq!(peer.issuer.to_string(), "CN=Test CA,O=Ferry Test");
    let server_cert = c.peer.expect("server certificate");
    assert_eq!(server_cert.subject.to_string(), "CN=QM1,O=Ferry");
}

#[tokio::test]
async fn tls12_cipherspecs_negotiate_tls12() {
    let dir = tempfile::tempdir().expect("dir");
    let ca = ThrowawayCa::new("Test CA").expect("ca");
    let (repo, options) = repositories(&ca, dir.path(), false);
    let tls = ServerTls::new(repo);
    // The test CA makes ECDSA keys, so the ECDSA suites are the ones that can be used.
    let server = tls
        .config(&channel("ECDHE_ECDSA_AES_128_GCM_SHA256", false))
        .expect("config");
    let client = client_config(&options, "app").expect("client");
    let (s, _) = handshake(server, client).await.expect("handshake");
    assert_eq!(s.cipher_spec.name, "ECDHE_ECDSA_AES_128_GCM_SHA256");
    assert!(s.peer.is_none(), "no client certificate");
}

#[tokio::test]
async fn disagreeing_cipherspecs_fail_the_handshake() {
    let dir = tempfile::tempdir().expect("dir");
    let ca = ThrowawayCa::new("Test CA").expect("ca");
    let (repo, mut options) = repositories(&ca, dir.path(), false);
    let tls = ServerTls::new(repo);
    let server = tls.config(&channel("ANY_TLS13", false)).expect("config");
    options.cipher_spec = "ANY_TLS12".into();
    let client = client_config(&options, "app").expect("client");
    assert!(handshake(server, client).await.is_err());
}

#[tokio::test]
async fn a_required_client_certificate_must_be_presented_and_trusted() {
    let dir = tempfile::tempdir().expect("dir");
    let ca = ThrowawayCa::new("Test CA").expect("ca");
    let (repo, options) = repositories(&ca, dir.path(), false);
    let tls = ServerTls::new(repo);
    let required = tls.config(&channel("ANY", true)).expect("config");
    let client = client_config(&options, "app").expect("client");
    assert!(
        handshake(required.clone(), client).await.is_err(),
        "none presented"
    );

    // A certificate from a CA the queue manager does not trust.
    let stranger = ThrowawayCa::new("Other CA").expect("ca");
    let other = dir.path().join("other");
    stranger
        .issue(&other, "app", &[("CN", "intruder")], false)
        .expect("cert");
    ca.write_trust(&other).expect("trust");
    let options = ClientTlsOptions {
        key_repository: other,
        certificate_label: Some("app".into()),
        ..options
    };
    let client = client_config(&options, "app").expect("client");
    assert!(handshake(required, client).await.is_err(), "untrusted");
}

#[tokio::test]
async fn an_expired_server_certificate_is_refused_by_the_client() {
    let dir = tempfile::tempdir().expect("dir");
    let ca = ThrowawayCa::new("Test CA").expect("ca");
    let (_, options) = repositories(&ca, dir.path(), false);
    let qm = dir.path().join("expired");
    ca.issue(&qm, "qm", &[("CN", "QM1")], true).expect("cert");
    let tls = ServerTls::new(KeyRepository::load(&qm, &provider()).expect("loads"));
    let server = tls.config(&channel("ANY", false)).expect("config");
    let client = client_config(&options, "app").expect("client");
    let e = handshake(server, client).await.expect_err("expired");
    assert!(e.contains("Expired"), "{e}");
}

#[tokio::test]
async fn key_resets_happen_every_sslrkeyc_bytes_on_tls13() {
    let dir = tempfile::tempdir().expect("dir");
    let ca = ThrowawayCa::new("Test CA").expect("ca");
    let (repo, options) = repositories(&ca, dir.path(), false);
    let tls = ServerTls::new(repo);
    let server = tls.config(&channel("ANY_TLS13", false)).expect("config");
    let client = client_config(&options, "app").expect("client");
    let (a, b) = tokio::io::duplex(64 * 1024);
    let name = ServerName::try_from("app.chl.mq.ibm.com").expect("name");
    let (s, c) = tokio::join!(
        tokio_rustls::TlsAcceptor::from(server).accept(a),
        tokio_rustls::TlsConnector::from(client).connect(name, b)
    );
    let (s, mut c) = (s.expect("server"), c.expect("client"));
    let local = tokio::task::LocalSet::new();
    local
        .run_until(async move {
            let (mut reader, mut writer, counters) = split(s, key_reset_bytes(1));
            let payload = vec![7u8; 200 * 1024];
            let sent = payload.clone();
            let client_side = async move {
                c.write_all(&sent).await.expect("write");
                c.flush().await.expect("flush");
                let mut back = vec![0u8; sent.len()];
                c.read_exact(&mut back).await.expect("read back");
                back
            };
            let server_side = async {
                let mut got = vec![0u8; payload.len()];
                reader.read_exact(&mut got).await.expect("read");
                writer.write_all(&got).await.expect("echo");
                writer.flush().await.expect("flush");
            };
            let (back, ()) = tokio::join!(client_side, server_side);
            assert_eq!(back, payload, "data crosses key updates intact");
            // 200 KB read in records of at most 16 KB, with a reset every 32 KB.
            assert!(counters.key_resets() >= 6, "{}", counters.key_resets());
        })
        .await;
}

#[test]
fn a_key_that_does_not_match_its_certificate_is_named() {
    let dir = tempfile::tempdir().expect("dir");
    let ca = ThrowawayCa::new("Test CA").expect("ca");
    ca.issue(dir.path(), "a", &[("CN", "a")], false).expect("a");
    ca.issue(dir.path(), "b", &[("CN", "b")], false).expect("b");
    std::fs::copy(dir.path().join("b.key"), dir.path().join("a.key")).expect("swap");
    let e = KeyRepository::load(dir.path(), &provider()).expect_err("mismatch");
    assert!(e.to_string().contains("a.key"), "{e}");
    let missing = KeyRepository::load(&dir.path().join("none"), &provider()).expect_err("none");
    assert!(missing.to_string().contains("cannot be read"), "{missing}");
}

#[test]
fn the_provider_offers_the_tables_suites_in_its_order() {
    let names: Vec<u16> = provider()
        .cipher_suites
        .iter()
        .map(|s| u16::from(s.suite()))
        .collect();
    assert_eq!(
        names,
        vec![0x1303, 0x1302, 0x1301, 0xC02C, 0xC030, 0xC02B, 0xC02F]
    );
}
