//! Object authorities with users' groups from an LDAP directory (AUTHINFO AUTHORMD), against
//! a real slapd (`common::slapd`): a GROUP record naming a directory group gives its
//! members CONNECT and queue access, a user outside it is refused 2035, nested groups
//! count with NESTGRP(YES), REFRESH SECURITY picks up a membership changed in the
//! directory, a directory that cannot be asked refuses the connection (FRY5531E) without
//! a hang, and all three methods work: SEARCHGRP (groupOfNames member), SRCHGRPSN
//! (posixGroup memberUid, over AMQP) and SEARCHUSR (an attribute of the user entry
//! naming its groups).

mod common;

use bytes::{Bytes, BytesMut};
use common::slapd::{ldapmodify_installed, Slapd, ADMIN_DN, ADMIN_PASSWORD};
use common::*;
use ferry_amqp::connection::{ClientSasl, Config, Connection as AmqpConnection, Event};
use ferry_amqp::{Body, DeliveryState, Message, Open, Role, SaslCode, Target};
use ferry_client::{ConnectOptions, Connection};
use ferry_mqi::{ObjectDescriptor, OpenOptions, ReasonCode};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

const PASSWORD: &str = "pa55-in-ldap";

/// People and groups: carol is in `apps` (groupOfNames), which is in `staff`; erin is in
/// the posixGroup `ops` by short name; frank's entry names `ops` in seeAlso; dave is in
/// nothing.
fn directory() -> String {
    let mut ldif = String::new();
    for user in ["carol", "dave", "erin"] {
        ldif += &format!(
            "dn: uid={user},ou=people,dc=example,dc=com\nobjectClass: inetOrgPerson\n\
             uid: {user}\ncn: {user}\nsn: Example\nuserPassword: {PASSWORD}\n\n"
        );
    }
    ldif += &format!(
        "dn: uid=frank,ou=people,dc=example,dc=com\nobjectClass: inetOrgPerson\n\
         uid: frank\ncn: frank\nsn: Example\nuserPassword: {PASSWORD}\n\
         seeAlso: cn=ops,ou=groups,dc=example,dc=com\n\n"
    );
    ldif += "dn: cn=apps,ou=groups,dc=example,dc=com\nobjectClass: groupOfNames\ncn: apps\n\
             member: uid=carol,ou=people,dc=example,dc=com\n\n\
             dn: cn=staff,ou=groups,dc=example,dc=com\nobjectClass: groupOfNames\ncn: staff\n\
             member: cn=apps,ou=groups,dc=example,dc=com\n\n\
             dn: cn=ops,ou=groups,dc=example,dc=com\nobjectClass: posixGroup\ncn: ops\n\
             gidNumber: 5000\nmemberUid: erin\n\n";
    ldif
}

/// A queue manager with authority checks on, and an IDPWLDAP object named by CONNAUTH
/// with `authorization` (AUTHORMD and its attributes). Passwords are optional
/// (CHCKCLNT(OPTIONAL)): a client without one runs as the user id it asserts.
fn secured(name: &str, slapd: &Slapd, authorization: &str) -> TestQueueManager {
    let mut qm = TestQueueManager::create_with_mq_defaults(bin(), name);
    qm.check_authorities();
    qm.launch();
    mqsc_ok(
        &qm,
        &format!(
            "DEFINE CHANNEL(APP.SVRCONN) CHLTYPE(SVRCONN)\n\
             DEFINE AUTHINFO(LDAP.IDPW) AUTHTYPE(IDPWLDAP) CONNAME('{conname}') +\n\
               LDAPUSER('{ADMIN_DN}') LDAPPWD('{ADMIN_PASSWORD}') +\n\
               BASEDNU('ou=people,dc=example,dc=com') SHORTUSR('uid') ADOPTCTX(YES) +\n\
               CHCKCLNT(OPTIONAL) BASEDNG('ou=groups,dc=example,dc=com') GRPFIELD('cn') +\n\
               {authorization}\n\
             ALTER QMGR CONNAUTH(LDAP.IDPW)\n\
             REFRESH SECURITY TYPE(CONNAUTH)",
            conname = slapd.conname()
        ),
    );
    qm
}

fn client(qm: &TestQueueManager, user: &str) -> ConnectOptions {
    ConnectOptions::client(&qm.conname(), "APP.SVRCONN")
        .queue_manager(qm.name())
        .user_id(user)
        .sharecnv(1)
}

fn with_password(qm: &TestQueueManager, user: &str) -> ConnectOptions {
    client(qm, "someone").credentials(user, PASSWORD)
}

fn od(name: &str) -> ObjectDescriptor {
    ObjectDescriptor::queue(name).expect("name")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn directory_groups_grant_connect_and_queue_access() {
    let Some(slapd) = Slapd::start(&directory()) else {
        return;
    };
    if !ldapmodify_installed() {
        eprintln!(
            "skipped: ldapmodify is not installed here (scripts/test.sh installs ldap-utils)"
        );
        return;
    }
    let qm = secured("OAM.LDAP", &slapd, "AUTHORMD(SEARCHGRP)");
    // Group names are taken as given: the directory cannot be asked inside a command.
    let set = mqsc_ok(
        &qm,
        "DEFINE QLOCAL(APP.Q)\nDEFINE QLOCAL(STAFF.Q)\n\
         SET AUTHREC OBJTYPE(QMGR) GROUP('apps') AUTHADD(CONNECT)\n\
         SET AUTHREC PROFILE('APP.**') OBJTYPE(QUEUE) GROUP('apps') AUTHADD(PUT,GET,INQ)\n\
         SET AUTHREC PROFILE('STAFF.Q') OBJTYPE(QUEUE) GROUP('staff') AUTHADD(PUT)\n\
         DISPLAY AUTHINFO(LDAP.IDPW) ALL",
    );
    for (keyword, value) in [
        ("AUTHORMD", "SEARCHGRP"),
        ("BASEDNG", "ou=groups,dc=example,dc=com"),
        ("CLASSGRP", "groupOfNames"),
        ("FINDGRP", ""),
        ("GRPFIELD", "cn"),
        ("NESTGRP", "NO"),
    ] {
        assert_eq!(
            attr(&set, keyword).as_deref().map(str::trim),
            Some(value),
            "{set}"
        );
    }

    // carol is in 'apps': without a password (her groups read before the engine
    // connection, aside), then with one (remembered since).
    for opts in [client(&qm, "carol"), with_password(&qm, "carol")] {
        let carol = connect(&opts).await;
        let q = open(
            &carol,
            "APP.Q",
            OpenOptions::OUTPUT | OpenOptions::INPUT_SHARED,
        )
        .await;
        put(&q, "from a directory group").await;
        assert_eq!(get_text(&q).await, "from a directory group");
        // 'staff' holds 'apps', but NESTGRP(NO) does not follow it.
        assert_reason(
            carol.open(&od("STAFF.Q"), OpenOptions::OUTPUT).await,
            ReasonCode::NotAuthorized,
        );
    }
    // dave is in no group: not even CONNECT.
    assert_reason(
        Connection::connect(&with_password(&qm, "dave")).await,
        ReasonCode::NotAuthorized,
    );
    let log = qm.error_log();
    assert!(
        log.contains("FRY8077W") && log.contains("'dave'") && log.contains("CONNECT"),
        "{log}"
    );

    // NESTGRP(YES): carol is in 'staff' through 'apps'.
    mqsc_ok(
        &qm,
        "ALTER AUTHINFO(LDAP.IDPW) AUTHTYPE(IDPWLDAP) NESTGRP(YES)\nREFRESH SECURITY TYPE(CONNAUTH)",
    );
    let carol = connect(&with_password(&qm, "carol")).await;
    put(
        &open(&carol, "STAFF.Q", OpenOptions::OUTPUT).await,
        "nested",
    )
    .await;
    drop(carol);
    assert_reason(
        Connection::connect(&with_password(&qm, "dave")).await,
        ReasonCode::NotAuthorized,
    );

    // The directory changes: dave joins 'apps', carol leaves it. Memberships read are
    // remembered until REFRESH SECURITY, as MQ's OAM caches them.
    slapd.modify(
        "dn: cn=apps,ou=groups,dc=example,dc=com\nchangetype: modify\n\
         add: member\nmember: uid=dave,ou=people,dc=example,dc=com\n-\n\
         delete: member\nmember: uid=carol,ou=people,dc=example,dc=com\n-\n",
    );
    assert_reason(
        Connection::connect(&with_password(&qm, "dave")).await,
        ReasonCode::NotAuthorized,
    );
    connect(&with_password(&qm, "carol")).await;
    mqsc_ok(&qm, "REFRESH SECURITY TYPE(AUTHSERV)");
    let dave = connect(&with_password(&qm, "dave")).await;
    put(
        &open(&dave, "APP.Q", OpenOptions::OUTPUT).await,
        "dave's turn",
    )
    .await;
    assert_reason(
        Connection::connect(&with_password(&qm, "carol")).await,
        ReasonCode::NotAuthorized,
    );

    // The directory gone: a user whose groups must be read is refused at once, and the log
    // says why; administrators (`ferry mqsc`) carry on without it.
    drop(slapd);
    mqsc_ok(&qm, "REFRESH SECURITY TYPE(AUTHSERV)");
    let started = Instant::now();
    assert_reason(
        Connection::connect(&client(&qm, "dave")).await,
        ReasonCode::NotAuthorized,
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "refused without a hang: {:?}",
        started.elapsed()
    );
    let log = qm.error_log();
    assert!(
        log.contains("FRY5531E") && log.contains("'dave'") && log.contains("cannot be asked"),
        "{log}"
    );
    mqsc_ok(&qm, "DISPLAY QMGR CONNAUTH");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn posix_groups_over_amqp_and_groups_named_by_the_user_entry() {
    let Some(slapd) = Slapd::start(&directory()) else {
        return;
    };
    let qm = secured(
        "OAM.LDAP.SN",
        &slapd,
        "AUTHORMD(SRCHGRPSN) CLASSGRP('posixGroup')",
    );
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(OPS.Q)\n\
         SET CHLAUTH('SYSTEM.DEF.AMQP') TYPE(ADDRESSMAP) ADDRESS('*') USERSRC(CHANNEL)\n\
         SET AUTHREC OBJTYPE(QMGR) GROUP('ops') AUTHADD(CONNECT)\n\
         SET AUTHREC PROFILE('OPS.Q') OBJTYPE(QUEUE) GROUP('ops') AUTHADD(PUT)",
    );
    // SRCHGRPSN: erin's short name is a memberUid of 'ops'. Over AMQP the open waits
    // for her groups, and the begin and attach pipelined behind it wait too.
    let port = qm.amqp_port();
    let sent = tokio::task::spawn_blocking(move || amqp_send(port, "erin", "OPS.Q", "by AMQP"))
        .await
        .expect("AMQP client");
    assert_eq!(sent, Ok(()));
    assert_eq!(curdepth(&qm, "OPS.Q"), 1);
    let refused = tokio::task::spawn_blocking(move || amqp_send(port, "dave", "OPS.Q", "no"))
        .await
        .expect("AMQP client");
    assert_eq!(refused, Err("amqp:unauthorized-access".to_string()));

    // SEARCHUSR: frank's entry names his groups (here in seeAlso, as memberOf would).
    mqsc_ok(
        &qm,
        "ALTER AUTHINFO(LDAP.IDPW) AUTHTYPE(IDPWLDAP) AUTHORMD(SEARCHUSR) FINDGRP('seeAlso')\n\
         REFRESH SECURITY TYPE(CONNAUTH)",
    );
    let frank = connect(&with_password(&qm, "frank")).await;
    put(&open(&frank, "OPS.Q", OpenOptions::OUTPUT).await, "by MQI").await;
    assert_eq!(curdepth(&qm, "OPS.Q"), 2);
    assert_reason(
        Connection::connect(&with_password(&qm, "erin")).await,
        ReasonCode::NotAuthorized,
    );

    // A method that searches group entries needs BASEDNG; FINDGRP is an attribute name.
    let refused = mqsc_exit(
        &qm,
        "ALTER AUTHINFO(LDAP.IDPW) AUTHTYPE(IDPWLDAP) AUTHORMD(SEARCHGRP) BASEDNG(' ')\n\
         ALTER AUTHINFO(LDAP.IDPW) AUTHTYPE(IDPWLDAP) FINDGRP('member)(uid=*')",
        10,
    );
    assert!(refused.contains("BASEDNG must say where"), "{refused}");
    assert!(
        refused.contains("is not an LDAP attribute name"),
        "{refused}"
    );
}

/// Sends `body` to `queue` over AMQP as `user` (SASL PLAIN with [`PASSWORD`]), with open,
/// begin, attach and transfer pipelined as a client may: `Ok` once accepted, else the
/// error condition that closed the connection (or detached the link).
fn amqp_send(port: u16, user: &str, queue: &str, body: &str) -> Result<(), String> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("AMQP connect");
    stream
        .set_read_timeout(Some(Duration::from_millis(20)))
        .expect("read timeout");
    let config = Config {
        idle_time_out: None,
        ..Config::default()
    };
    let sasl = ClientSasl::Plain {
        user: user.into(),
        password: PASSWORD.into(),
    };
    let mut conn = AmqpConnection::client(config, sasl);
    conn.open(Open::new("ldap-groups-test")).expect("open");
    let session = conn.begin().expect("begin");
    let target = Target {
        address: Some(queue.into()),
        ..Target::default()
    };
    let link = conn
        .attach_sender(session, "sender", target)
        .expect("attach");
    let message = Message {
        body: Some(Body::data(Bytes::copy_from_slice(body.as_bytes()))),
        ..Message::default()
    };
    let (epoch, deadline) = (Instant::now(), Instant::now() + DEADLINE);
    let (mut input, mut events, mut sent) = (BytesMut::new(), Vec::new(), None);
    loop {
        assert!(Instant::now() < deadline, "no outcome within {DEADLINE:?}");
        if conn.wants_write() {
            stream.write_all(&conn.take_output()).expect("AMQP write");
        }
        let mut chunk = [0u8; 16 * 1024];
        let now = u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        match stream.read(&mut chunk) {
            Ok(0) => return Err("the server closed the socket".into()),
            Ok(n) => {
                input.extend_from_slice(&chunk[..n]);
                conn.receive(&mut input, now, &mut events);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(format!("AMQP read: {e}")),
        }
        let condition = |e: &Option<ferry_amqp::ErrorCondition>| match e {
            Some(e) => e.condition.as_str().to_string(),
            None => "no error condition".to_string(),
        };
        if let Some(Event::Closed { error, .. }) =
            events.iter().find(|e| matches!(e, Event::Closed { .. }))
        {
            return Err(condition(error));
        }
        for e in events.drain(..) {
            match e {
                Event::SaslOutcome(code) if code != SaslCode::Ok => {
                    return Err(format!("SASL outcome {code:?}"))
                }
                Event::Detach { error, .. } => return Err(condition(&error)),
                Event::Disposition {
                    role: Role::Receiver,
                    first,
                    last,
                    state,
                    ..
                } if sent.is_some_and(|id| first <= id && id <= last) => {
                    return match state {
                        Some(DeliveryState::Accepted) => Ok(()),
                        other => Err(format!("outcome {other:?}")),
                    };
                }
                _ => {}
            }
        }
        if sent.is_none() && conn.credit(link) > 0 {
            let mut encoded = BytesMut::new();
            message.encode(&mut encoded);
            let tag = Bytes::from_static(b"t1");
            sent = Some(
                conn.send_bytes(link, tag, false, 0, encoded.freeze())
                    .expect("send"),
            );
        }
    }
}
