//! Connection authentication against a real LDAP directory: OpenLDAP's slapd, started by
//! the test with a directory of its own (scripts/test.sh installs it from Debian). An
//! AUTHINFO AUTHTYPE(IDPWLDAP) object finds users under BASEDNU and binds as them.

mod common;

use common::*;
use ferry_client::{ConnectOptions, Connection};
use ferry_mqi::{OpenOptions, ReasonCode};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const IO: OpenOptions = OpenOptions::OUTPUT.union(OpenOptions::INPUT_SHARED);
const CAROL_PASSWORD: &str = "c4rol-in-ldap";

/// A slapd serving `dc=example,dc=com` on a free loopback port, killed when dropped.
struct Slapd {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Slapd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Slapd {
    /// `None` (with the reason printed) when slapd is not installed.
    fn start() -> Option<Slapd> {
        let slapd = std::path::Path::new("/usr/sbin/slapd");
        let slapadd = std::path::Path::new("/usr/sbin/slapadd");
        if !slapd.exists() || !slapadd.exists() {
            eprintln!(
                "skipped: slapd is not installed here (scripts/test.sh installs it with apt)"
            );
            return None;
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("db");
        std::fs::create_dir_all(&db).expect("db dir");
        let conf = dir.path().join("slapd.conf");
        std::fs::write(
            &conf,
            format!(
                "include /etc/ldap/schema/core.schema\n\
                 include /etc/ldap/schema/cosine.schema\n\
                 include /etc/ldap/schema/inetorgperson.schema\n\
                 pidfile {dir}/slapd.pid\n\
                 modulepath /usr/lib/ldap\n\
                 moduleload back_mdb\n\
                 database mdb\n\
                 suffix \"dc=example,dc=com\"\n\
                 rootdn \"cn=admin,dc=example,dc=com\"\n\
                 rootpw secret\n\
                 directory {db}\n",
                dir = dir.path().display(),
                db = db.display()
            ),
        )
        .expect("slapd.conf");
        let ldif = dir.path().join("data.ldif");
        std::fs::write(
            &ldif,
            format!(
                "dn: dc=example,dc=com\nobjectClass: dcObject\nobjectClass: organization\no: Example\ndc: example\n\n\
                 dn: ou=people,dc=example,dc=com\nobjectClass: organizationalUnit\nou: people\n\n\
                 dn: uid=carol,ou=people,dc=example,dc=com\nobjectClass: inetOrgPerson\nuid: carol\ncn: Carol\nsn: Example\nuserPassword: {CAROL_PASSWORD}\n\n"
            ),
        )
        .expect("ldif");
        let added = Command::new(slapadd)
            .args(["-f"])
            .arg(&conf)
            .arg("-l")
            .arg(&ldif)
            .output()
            .expect("slapadd runs");
        assert!(added.status.success(), "slapadd: {added:?}");
        let port = free_port();
        let child = Command::new(slapd)
            .arg("-f")
            .arg(&conf)
            .args(["-h", &format!("ldap://127.0.0.1:{port}/"), "-d", "0"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("slapd starts");
        let until = Instant::now() + DEADLINE;
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < until, "slapd did not listen on {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(Slapd {
            child,
            port,
            _dir: dir,
        })
    }
}

fn client(qm: &TestQueueManager, user: &str) -> ConnectOptions {
    ConnectOptions::client(&qm.conname(), "APP.SVRCONN")
        .queue_manager(qm.name())
        .user_id(user)
        .sharecnv(1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_of_an_ldap_directory_connect_with_their_passwords() {
    let Some(slapd) = Slapd::start() else {
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
