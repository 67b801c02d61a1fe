//! A real LDAP directory for the tests: OpenLDAP's slapd, started with a database of its
//! own on a free loopback port (scripts/test.sh installs slapd and ldap-utils from
//! Debian). Tests skip, with the reason printed, where slapd is not installed.

use super::{free_port, DEADLINE};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The directory's suffix.
pub const SUFFIX: &str = "dc=example,dc=com";
/// Its administrator (rootdn) and password.
pub const ADMIN_DN: &str = "cn=admin,dc=example,dc=com";
/// The administrator's password.
pub const ADMIN_PASSWORD: &str = "secret";

/// A slapd serving [`SUFFIX`] on a free loopback port, killed when dropped.
pub struct Slapd {
    child: Child,
    /// Its port on 127.0.0.1.
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Slapd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The entries every directory starts with: the suffix, `ou=people` and `ou=groups`.
fn base_ldif() -> String {
    format!(
        "dn: {SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\no: Example\ndc: example\n\n\
         dn: ou=people,{SUFFIX}\nobjectClass: organizationalUnit\nou: people\n\n\
         dn: ou=groups,{SUFFIX}\nobjectClass: organizationalUnit\nou: groups\n\n"
    )
}

impl Slapd {
    /// Starts slapd with the base entries and `ldif` (more entries, each ending with a
    /// blank line), with the core, cosine, inetorgperson and nis schemas. `None` (with the
    /// reason printed) when slapd is not installed.
    pub fn start(ldif: &str) -> Option<Slapd> {
        Self::start_with(ldif, None)
    }

    /// [`Slapd::start`], serving LDAP over TLS (ldaps) with certificate `<dir>/slapd.crt`
    /// and key `<dir>/slapd.key` when `tls` names that directory.
    pub fn start_with(ldif: &str, tls: Option<&Path>) -> Option<Slapd> {
        let slapd = Path::new("/usr/sbin/slapd");
        let slapadd = Path::new("/usr/sbin/slapadd");
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
                "{tls}include /etc/ldap/schema/core.schema\n\
                 include /etc/ldap/schema/cosine.schema\n\
                 include /etc/ldap/schema/inetorgperson.schema\n\
                 include /etc/ldap/schema/nis.schema\n\
                 pidfile {dir}/slapd.pid\n\
                 modulepath /usr/lib/ldap\n\
                 moduleload back_mdb\n\
                 database mdb\n\
                 suffix \"{SUFFIX}\"\n\
                 rootdn \"{ADMIN_DN}\"\n\
                 rootpw {ADMIN_PASSWORD}\n\
                 directory {db}\n",
                dir = dir.path().display(),
                db = db.display(),
                tls = tls.map_or(String::new(), |t| format!(
                    "TLSCertificateFile {crt}\nTLSCertificateKeyFile {key}\n",
                    crt = t.join("slapd.crt").display(),
                    key = t.join("slapd.key").display()
                ))
            ),
        )
        .expect("slapd.conf");
        let data = dir.path().join("data.ldif");
        std::fs::write(&data, format!("{}{ldif}", base_ldif())).expect("ldif");
        let added = Command::new(slapadd)
            .arg("-f")
            .arg(&conf)
            .arg("-l")
            .arg(&data)
            .output()
            .expect("slapadd runs");
        assert!(added.status.success(), "slapadd: {added:?}");
        let port = free_port();
        let child = Command::new(slapd)
            .arg("-f")
            .arg(&conf)
            .args([
                "-h",
                &format!(
                    "{}://127.0.0.1:{port}/",
                    if tls.is_some() { "ldaps" } else { "ldap" }
                ),
                "-d",
                "0",
            ])
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

    /// `127.0.0.1(port)`, for AUTHINFO CONNAME.
    pub fn conname(&self) -> String {
        format!("127.0.0.1({})", self.port)
    }

    /// Applies `changes` (LDIF change records) as the administrator, with ldapmodify.
    pub fn modify(&self, changes: &str) {
        use std::io::Write;
        let mut child = Command::new("ldapmodify")
            .args([
                "-x",
                "-H",
                &format!("ldap://127.0.0.1:{}/", self.port),
                "-D",
                ADMIN_DN,
                "-w",
                ADMIN_PASSWORD,
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("ldapmodify runs (scripts/test.sh installs ldap-utils)");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(changes.as_bytes())
            .expect("ldapmodify's input");
        let out = child.wait_with_output().expect("ldapmodify ends");
        assert!(out.status.success(), "ldapmodify: {out:?}");
    }
}

/// True when `ldapmodify` (ldap-utils) can be run here.
pub fn ldapmodify_installed() -> bool {
    Command::new("ldapmodify")
        .arg("-VV")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}
