//! Connection authentication against a real LDAP directory: OpenLDAP's slapd, started by
//! the test with a directory of its own (`common::slapd`; scripts/test.sh installs it from
//! Debian). An AUTHINFO AUTHTYPE(IDPWLDAP) object finds users under BASEDNU and binds as
//! them. Groups from the directory (AUTHORMD) are tests/authorities_ldap.rs's.

mod common;

use common::slapd::Slapd;
use common::*;
use ferry_client::{ConnectOptions, Connection};
use ferry_mqi::{OpenOptions, ReasonCode};

const IO: OpenOptions = OpenOptions::OUTPUT.union(OpenOptions::INPUT_SHARED);
const CAROL_PASSWORD: &str = "c4rol-in-ldap";

fn client(qm: &TestQueueManager, user: &str) -> ConnectOptions {
    ConnectOptions::client(&qm.conname(), "APP.SVRCONN")
        .queue_manager(qm.name())
        .user_id(user)
        .sharecnv(1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_of_an_ldap_directory_connect_with_their_passwords() {
    let Some(slapd) = Slapd::start(&format!(
        "dn: uid=carol,ou=people,dc=example,dc=com\nobjectClass: inetOrgPerson\nuid: carol\ncn: Carol\nsn: Example\nuserPassword: {CAROL_PASSWORD}\n\n"
    )) else {
        return;
    };
    let mut qm = TestQueueManager::create_with_mq_defaults(bin(), "CN.LDAP");
    qm.launch();
    let defined = mqsc_ok(
        &qm,
        &format!(
            "DEFINE QLOCAL(APP.Q)\nDEFINE CHANNEL(APP.SVRCONN) CHLTYPE(SVRCONN)\n\
             DEFINE AUTHINFO(LDAP.IDPW) AUTHTYPE(IDPWLDAP) CONNAME('127.0.0.1({port})') +\n\
               LDAPUSER('cn=admin,dc=example,dc=com') LDAPPWD('secret') +\n\
               BASEDNU('ou=people,dc=example,dc=com') SHORTUSR('uid') ADOPTCTX(YES)\n\
             ALTER QMGR CONNAUTH(LDAP.IDPW)\n\
             REFRESH SECURITY TYPE(CONNAUTH)\n\
             DISPLAY AUTHINFO(LDAP.IDPW) ALL",
            port = slapd.port
        ),
    );
    assert_eq!(
        attr(&defined, "LDAPPWD").as_deref(),
        Some("********"),
        "{defined}"
    );
    let shown = defined
        .split("DISPLAY AUTHINFO(LDAP.IDPW) ALL")
        .nth(1)
        .unwrap_or_default();
    assert!(
        !shown.contains("secret"),
        "DISPLAY never shows LDAPPWD: {shown}"
    );

    // A short user id, found under BASEDNU; ADOPTCTX(YES) makes SHORTUSR's value the
    // connection's.
    let conn = connect(&client(&qm, "bob").credentials("carol", CAROL_PASSWORD)).await;
    let q = open(&conn, "APP.Q", IO).await;
    assert_eq!(put(&q, "from ldap").await.user_identifier.as_str(), "carol");
    // A distinguished name is bound as directly.
    connect(
        &client(&qm, "bob").credentials("uid=carol,ou=people,dc=example,dc=com", CAROL_PASSWORD),
    )
    .await;
    // Wrong, empty and unknown.
    for (user, password) in [
        ("carol", "not-hers"),
        ("carol", ""),
        ("mallory", CAROL_PASSWORD),
    ] {
        assert_reason(
            Connection::connect(&client(&qm, "bob").credentials(user, password)).await,
            ReasonCode::NotAuthorized,
        );
    }
    let log = qm.error_log();
    assert!(log.contains("the LDAP directory refused it"), "{log}");
    assert!(log.contains("an empty password"), "{log}");
    assert!(log.contains("0 entries match"), "{log}");
    assert!(
        !log.contains(CAROL_PASSWORD),
        "a password reached the error log"
    );

    // The directory gone: refused, and the log says so.
    drop(slapd);
    assert_reason(
        Connection::connect(&client(&qm, "bob").credentials("carol", CAROL_PASSWORD)).await,
        ReasonCode::NotAuthorized,
    );
    assert!(
        qm.error_log()
            .contains("the LDAP directory cannot be asked"),
        "{}",
        qm.error_log()
    );
}

/// SECCOMM(YES): passwords travel to the directory over TLS (ldaps), the directory's
/// certificate checked against the key repository's trust.pem; without the CA there the
/// directory is never asked in clear text (FRY5532E) and connections are refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seccomm_yes_checks_passwords_over_tls() {
    let pki = tempfile::tempdir().expect("dir");
    let ca = ferry_tls::self_signed::ThrowawayCa::new("Directory CA").expect("ca");
    ca.issue(
        pki.path(),
        "slapd",
        &[("O", "Ferry"), ("CN", "localhost")],
        false,
    )
    .expect("slapd certificate");
    let Some(slapd) = Slapd::start_with(
        &format!(
            "dn: uid=carol,ou=people,dc=example,dc=com\nobjectClass: inetOrgPerson\nuid: carol\ncn: Carol\nsn: Example\nuserPassword: {CAROL_PASSWORD}\n\n"
        ),
        Some(pki.path()),
    ) else {
        return;
    };
    let mut qm = TestQueueManager::create_with_mq_defaults(bin(), "CN.LDAPS");
    qm.launch();
    // First without the directory's CA in the key repository.
    let script = format!(
        "DEFINE QLOCAL(APP.Q)\nDEFINE CHANNEL(APP.SVRCONN) CHLTYPE(SVRCONN)\n\
         DEFINE AUTHINFO(LDAPS.IDPW) AUTHTYPE(IDPWLDAP) CONNAME('localhost({port})') +\n\
           SECCOMM(YES) LDAPUSER('cn=admin,dc=example,dc=com') LDAPPWD('secret') +\n\
           BASEDNU('ou=people,dc=example,dc=com') SHORTUSR('uid') ADOPTCTX(YES) +\n\
           CHCKCLNT(REQUIRED)\n\
         ALTER QMGR CONNAUTH(LDAPS.IDPW)\n\
         REFRESH SECURITY TYPE(CONNAUTH)",
        port = slapd.port
    );
    qm.mqsc(&script);
    assert_reason(
        Connection::connect(&client(&qm, "x").credentials("carol", CAROL_PASSWORD)).await,
        ReasonCode::NotAuthorized,
    );
    let log = qm.error_log();
    assert!(log.contains("FRY5532E"), "{log}");
    // With it, carol's password is checked over TLS.
    ca.write_trust(&qm.qm_dir().join("ssl")).expect("trust");
    mqsc_ok(&qm, "REFRESH SECURITY TYPE(CONNAUTH)");
    let conn = connect(&client(&qm, "x").credentials("carol", CAROL_PASSWORD)).await;
    let q = open(&conn, "APP.Q", IO).await;
    let md = put(&q, "over ldaps").await;
    assert_eq!(md.user_identifier.as_str(), "carol");
    assert_reason(
        Connection::connect(&client(&qm, "x").credentials("carol", "wrong")).await,
        ReasonCode::NotAuthorized,
    );
}
