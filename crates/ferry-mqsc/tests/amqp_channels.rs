//! AMQP channels in MQSC: DEFINE/ALTER/DISPLAY CHANNEL CHLTYPE(AMQP), which attributes
//! each channel type takes, START/STOP CHANNEL and DISPLAY CHSTATUS, parsed and run
//! against the in-memory target.

use ferry_mqsc::command::{Command, NamePattern};
use ferry_mqsc::testing::MemoryTarget;
use ferry_mqsc::{execute, parse_command, CommandResult, ParseErrorKind};
use ferry_objects::channel::{ChannelType, SslClientAuth, StopMode, UseClientId};
use ferry_objects::status::ChannelClientStatus;
use ferry_objects::AttrError;

fn run(t: &mut MemoryTarget, text: &str) -> CommandResult {
    match parse_command(text) {
        Ok(cmd) => execute(&cmd, t),
        Err(e) => CommandResult::syntax_error(&e),
    }
}

fn ok(t: &mut MemoryTarget, text: &str) -> Vec<String> {
    let r = run(t, text);
    assert!(r.ok, "{text}: {:?}", r.lines);
    r.lines
}

fn fails(t: &mut MemoryTarget, text: &str) -> Vec<String> {
    let r = run(t, text);
    assert!(!r.ok, "{text} should fail: {:?}", r.lines);
    r.lines
}

fn parse_err(text: &str) -> ParseErrorKind {
    match parse_command(text) {
        Ok(c) => panic!("{text} parsed as {c:?}"),
        Err(e) => e.kind,
    }
}

fn target() -> MemoryTarget {
    MemoryTarget::with_defaults("QM1")
}

/// A target with AMQP.IN started on port 5673 and two clients connected.
fn busy_target() -> MemoryTarget {
    let mut t = target();
    ok(&mut t, "DEFINE CHANNEL(AMQP.IN) CHLTYPE(AMQP) PORT(5673)");
    ok(&mut t, "START CHANNEL(AMQP.IN)");
    let at = t.now_ms;
    t.connect_client(
        "AMQP.IN",
        ChannelClientStatus {
            client_id: "orders-1".into(),
            connection_name: "10.0.0.5".into(),
            user_id: "app".into(),
            messages_sent: 3,
            messages_received: 7,
            bytes_sent: 300,
            bytes_received: 700,
            last_message_ms: Some(at),
            connected_ms: at,
            tls: Default::default(),
        },
    );
    t.connect_client(
        "AMQP.IN",
        ChannelClientStatus {
            client_id: "billing".into(),
            connection_name: "10.0.0.6".into(),
            messages_received: 1,
            bytes_received: 50,
            connected_ms: at,
            ..ChannelClientStatus::default()
        },
    );
    t
}

#[test]
fn define_amqp_channel_starts_from_system_def_amqp() {
    let mut t = target();
    assert_eq!(t.channels["SYSTEM.DEF.AMQP"].attributes.port, 5672);
    ok(
        &mut t,
        "ALTER CHANNEL(SYSTEM.DEF.AMQP) CHLTYPE(AMQP) BATCHSZ(20)",
    );
    assert_eq!(
        ok(
            &mut t,
            "DEFINE CHANNEL(AMQP.IN) CHLTYPE(AMQP) PORT(5673) USECLTID(YES) TPROOT(APP.TOPIC)"
        ),
        vec!["FRY8014I: Ferry channel created."]
    );
    let c = &t.channels["AMQP.IN"];
    assert_eq!(c.channel_type, ChannelType::Amqp);
    let a = &c.attributes;
    assert_eq!((a.port, a.batch_size, a.batch_interval), (5673, 20, 50));
    assert_eq!(a.use_client_id, UseClientId::Yes);
    assert_eq!(a.topic_root, "APP.TOPIC");
    assert_eq!(a.ssl_client_auth, SslClientAuth::Required);
}

#[test]
fn display_amqp_channel_shows_only_amqp_attributes() {
    let mut t = target();
    let lines = ok(&mut t, "DIS CHANNEL(SYSTEM.DEF.AMQP)");
    assert_eq!(lines[0], "FRY8414I: Display Channel details.");
    assert_eq!(
        lines[1],
        "   CHANNEL(SYSTEM.DEF.AMQP)                CHLTYPE(AMQP)"
    );
    let text = lines.join("\n");
    for cell in [
        "PORT(5672)",
        "LOCLADDR( )",
        "MAXMSGL(4194304)",
        "HBINT(300)",
        "MAXINST(1000)",
        "MAXINSTC(1000)",
        "MCAUSER( )",
        "USECLTID(NO)",
        "TPROOT(SYSTEM.BASE.TOPIC)",
        "SSLCIPH( )",
        "SSLCAUTH(REQUIRED)",
        "BATCHSZ(50)",
        "BATCHINT(50)",
    ] {
        assert!(text.contains(cell), "{cell} missing: {text}");
    }
    for absent in ["SHARECNV", "DISCINT", "TRPTYPE"] {
        assert!(!text.contains(absent), "{absent} shown: {text}");
    }
    let svrconn = ok(&mut t, "DIS CHANNEL(SYSTEM.DEF.SVRCONN)").join("\n");
    for absent in ["PORT", "BATCHSZ", "TPROOT"] {
        assert!(!svrconn.contains(absent), "{absent} shown: {svrconn}");
    }
    // TLS applies to both types.
    for cell in [
        "SSLCIPH( )",
        "SSLCAUTH(REQUIRED)",
        "SSLPEER( )",
        "CERTLABL( )",
    ] {
        assert!(svrconn.contains(cell), "{cell} missing: {svrconn}");
    }
    assert_eq!(
        ok(&mut t, "DIS CHL(*) WHERE(CHLTYPE EQ AMQP)")[1],
        "   CHANNEL(SYSTEM.DEF.AMQP)                CHLTYPE(AMQP)"
    );
    assert_eq!(
        ok(&mut t, "DIS CHL(SYSTEM.*) CHLTYPE(AMQP) PORT"),
        vec![
            "FRY8414I: Display Channel details.",
            "   CHANNEL(SYSTEM.DEF.AMQP)                CHLTYPE(AMQP)",
            "   PORT(5672)",
        ]
    );
}

#[test]
fn attributes_of_the_other_type_are_refused() {
    assert_eq!(
        parse_err("DEFINE CHANNEL(A) CHLTYPE(AMQP) SHARECNV(5)"),
        ParseErrorKind::Attr(AttrError::NotApplicable {
            keyword: "SHARECNV",
            object: "CHANNEL CHLTYPE(AMQP)",
        })
    );
    assert_eq!(
        parse_err("DEFINE CHANNEL(S) CHLTYPE(SVRCONN) PORT(5672)"),
        ParseErrorKind::Attr(AttrError::NotApplicable {
            keyword: "PORT",
            object: "CHANNEL CHLTYPE(SVRCONN)",
        })
    );
    assert!(matches!(
        parse_err("ALTER CHANNEL(A) CHLTYPE(AMQP) DISCINT(5)"),
        ParseErrorKind::Attr(AttrError::NotApplicable { .. })
    ));
    assert!(matches!(
        parse_err("DEFINE CHANNEL(A) CHLTYPE(AMQP) PORT(0)"),
        ParseErrorKind::Attr(AttrError::OutOfRange { .. })
    ));
    assert!(matches!(
        parse_err("DEFINE CHANNEL(A) CHLTYPE(AMQP) BATCHSZ(10000)"),
        ParseErrorKind::Attr(AttrError::OutOfRange { .. })
    ));
    // The whole response, as runmqsc prints it.
    let mut t = target();
    assert_eq!(
        fails(&mut t, "DEFINE CHANNEL(A) CHLTYPE(AMQP) SHARECNV(5)")[2],
        "FRY9405E: SHARECNV is not valid for CHANNEL CHLTYPE(AMQP)."
    );
    // ALTER without CHLTYPE is checked against the channel's own type.
    assert_eq!(
        fails(&mut t, "ALTER CHANNEL(SYSTEM.DEF.AMQP) SHARECNV(5)"),
        vec!["FRY9405E: SHARECNV is not valid for CHANNEL CHLTYPE(AMQP)."]
    );
    assert_eq!(
        fails(&mut t, "ALTER CHANNEL(SYSTEM.DEF.SVRCONN) BATCHINT(5)"),
        vec!["FRY9405E: BATCHINT is not valid for CHANNEL CHLTYPE(SVRCONN)."]
    );
    ok(&mut t, "ALTER CHANNEL(SYSTEM.DEF.AMQP) MAXINST(10)");
    assert_eq!(t.channels["SYSTEM.DEF.AMQP"].attributes.max_instances, 10);
}

#[test]
fn alter_keeps_the_type_and_like_and_replace_work() {
    let mut t = target();
    ok(
        &mut t,
        "DEFINE CHANNEL(A) CHLTYPE(AMQP) PORT(6000) DESCR('first')",
    );
    // ALTER naming another type finds no such channel.
    assert_eq!(
        fails(&mut t, "ALTER CHANNEL(A) CHLTYPE(SVRCONN) HBINT(5)"),
        vec!["FRY8147E: Ferry object A not found."]
    );
    ok(&mut t, "ALTER CHANNEL(A) HBINT(60)");
    assert_eq!(t.channels["A"].channel_type, ChannelType::Amqp);
    assert_eq!(t.channels["A"].attributes.port, 6000);
    // LIKE copies an AMQP channel; LIKE of a SVRCONN for an AMQP channel is not found.
    ok(&mut t, "DEFINE CHANNEL(B) CHLTYPE(AMQP) LIKE(A) PORT(6001)");
    let b = &t.channels["B"].attributes;
    assert_eq!((b.port, b.heartbeat_interval), (6001, 60));
    assert_eq!(b.descr, "first");
    assert_eq!(
        fails(
            &mut t,
            "DEFINE CHANNEL(C) CHLTYPE(AMQP) LIKE(SYSTEM.DEF.SVRCONN)"
        ),
        vec!["FRY8147E: Ferry object SYSTEM.DEF.SVRCONN not found."]
    );
    // REPLACE resets unnamed attributes from SYSTEM.DEF.AMQP; another type is refused.
    ok(&mut t, "DEFINE CHANNEL(B) CHLTYPE(AMQP) REPLACE");
    assert_eq!(t.channels["B"].attributes.port, 5672);
    assert_eq!(
        fails(&mut t, "DEFINE CHANNEL(B) CHLTYPE(SVRCONN) REPLACE"),
        vec!["FRY8150E: Ferry object B already exists."]
    );
    fails(&mut t, "DEFINE CHANNEL(B) CHLTYPE(AMQP)");
}

#[test]
fn start_and_stop_parse_with_mode() {
    assert_eq!(
        parse_command("START CHANNEL(AMQP.IN)").ok(),
        Some(Command::StartChannel {
            name: "AMQP.IN".into()
        })
    );
    assert_eq!(
        parse_command("STOP CHL(AMQP.IN)").ok(),
        Some(Command::StopChannel {
            name: "AMQP.IN".into(),
            mode: StopMode::Quiesce
        })
    );
    assert_eq!(
        parse_command("STOP CHANNEL(AMQP.IN) MODE(force)").ok(),
        Some(Command::StopChannel {
            name: "AMQP.IN".into(),
            mode: StopMode::Force
        })
    );
    assert!(matches!(
        parse_err("STOP CHANNEL(X) MODE(SOON)"),
        ParseErrorKind::BadOption { .. }
    ));
    assert!(matches!(
        parse_err("STOP CHANNEL(X) MODE"),
        ParseErrorKind::ValueRequired { .. }
    ));
    assert!(matches!(
        parse_err("START CHANNEL(X) PORT(1)"),
        ParseErrorKind::Unexpected(_)
    ));
    assert!(matches!(
        parse_err("START CHANNEL(X*)"),
        ParseErrorKind::Generic(_)
    ));
}

#[test]
fn start_and_stop_an_amqp_channel() {
    let mut t = target();
    t.now_ms = 1_709_212_455_000; // 2024-02-29 13:14:15 UTC
    assert_eq!(
        ok(&mut t, "START CHANNEL(SYSTEM.DEF.AMQP)"),
        vec!["FRY8018I: Start Ferry channel accepted."]
    );
    assert_eq!(
        fails(&mut t, "START CHANNEL(SYSTEM.DEF.AMQP)"),
        vec!["FRY8148E: Ferry object SYSTEM.DEF.AMQP in use."]
    );
    assert_eq!(
        fails(&mut t, "DELETE CHANNEL(SYSTEM.DEF.AMQP)"),
        vec!["FRY8148E: Ferry object SYSTEM.DEF.AMQP in use."]
    );
    assert_eq!(
        ok(&mut t, "DIS CHS(SYSTEM.DEF.AMQP)"),
        vec![
            "FRY8417I: Display Channel Status details.",
            "   CHANNEL(SYSTEM.DEF.AMQP)                CHLTYPE(AMQP)",
            "   STATUS(RUNNING)                         CONNS(0)",
            "   PORT(5672)                              MSGSNT(0)",
            "   MSGRCVD(0)                              BYTSSENT(0)",
            "   BYTSRCVD(0)                             LSTMSGDA( )",
            "   LSTMSGTI( )                             CHSTADA(2024-02-29)",
            "   CHSTATI(13.14.15)",
        ]
    );
    assert_eq!(
        ok(&mut t, "STOP CHANNEL(SYSTEM.DEF.AMQP) MODE(FORCE)"),
        vec!["FRY8019I: Stop Ferry channel accepted."]
    );
    assert_eq!(t.last_stop_mode, Some(StopMode::Force));
    assert_eq!(
        ok(&mut t, "DIS CHS(SYSTEM.DEF.AMQP) STATUS"),
        vec![
            "FRY8417I: Display Channel Status details.",
            "   CHANNEL(SYSTEM.DEF.AMQP)                CHLTYPE(AMQP)",
            "   STATUS(STOPPED)",
        ]
    );
    assert_eq!(
        fails(&mut t, "STOP CHANNEL(SYSTEM.DEF.AMQP)"),
        vec!["FRY9533E: Channel SYSTEM.DEF.AMQP is not currently active."]
    );
    ok(&mut t, "DELETE CHANNEL(SYSTEM.DEF.AMQP)");
}

#[test]
fn start_and_stop_are_refused_where_they_cannot_apply() {
    let mut t = target();
    let svrconn = "Channel SYSTEM.DEF.SVRCONN is a SVRCONN channel: it runs when a client \
                   connects through a listener, so it cannot be started or stopped.";
    assert_eq!(
        fails(&mut t, "START CHANNEL(SYSTEM.DEF.SVRCONN)"),
        vec![format!("FRY9004E: {svrconn}")]
    );
    assert_eq!(
        fails(&mut t, "STOP CHANNEL(SYSTEM.DEF.SVRCONN)"),
        vec![format!("FRY9004E: {svrconn}")]
    );
    assert_eq!(
        fails(&mut t, "START CHANNEL(NO.SUCH)"),
        vec!["FRY8147E: Ferry object NO.SUCH not found."]
    );
    assert_eq!(
        fails(&mut t, "STOP CHANNEL(NO.SUCH)"),
        vec!["FRY8147E: Ferry object NO.SUCH not found."]
    );
    // A TLS channel starts like any other (AMQPS on its port); a CipherSpec Ferry does
    // not offer is refused when it is set, with the reason.
    ok(
        &mut t,
        "DEFINE CHANNEL(AMQP.TLS) CHLTYPE(AMQP) SSLCIPH(ANY_TLS12_OR_HIGHER) SSLCAUTH(OPTIONAL)",
    );
    assert_eq!(
        t.channels["AMQP.TLS"].attributes.ssl_cipher,
        "ANY_TLS12_OR_HIGHER"
    );
    let refused = fails(
        &mut t,
        "ALTER CHANNEL(AMQP.TLS) CHLTYPE(AMQP) SSLCIPH(TLS_RSA_WITH_AES_128_CBC_SHA256)",
    )
    .join("\n");
    assert!(refused.contains("RSA key exchange"), "{refused}");
    ok(&mut t, "START CHANNEL(AMQP.TLS)");
}

#[test]
fn chstatus_summary_counts_connections_and_traffic() {
    let mut t = busy_target();
    let lines = ok(&mut t, "DIS CHSTATUS(AMQP.IN) CHLTYPE(AMQP)");
    let text = lines.join("\n");
    for cell in [
        "STATUS(RUNNING)",
        "CONNS(2)",
        "PORT(5673)",
        "MSGSNT(3)",
        "MSGRCVD(8)",
        "BYTSSENT(300)",
        "BYTSRCVD(750)",
    ] {
        assert!(text.contains(cell), "{cell} missing: {text}");
    }
    assert_eq!(
        ok(&mut t, "DIS CHS(AMQP.*) CONNS BYTSRCVD"),
        vec![
            "FRY8417I: Display Channel Status details.",
            "   CHANNEL(AMQP.IN)                        CHLTYPE(AMQP)",
            "   STATUS(RUNNING)                         CONNS(2)",
            "   BYTSRCVD(750)",
        ]
    );
}

#[test]
fn chstatus_clientid_shows_one_record_per_client() {
    let mut t = busy_target();
    let lines = ok(&mut t, "DIS CHS(*) CLIENTID(*) MSGSNT CONNAME");
    assert_eq!(
        lines,
        vec![
            "FRY8417I: Display Channel Status details.",
            "   CHANNEL(AMQP.IN)                        CHLTYPE(AMQP)",
            "   CLIENTID(orders-1)                      STATUS(RUNNING)",
            "   CONNAME(10.0.0.5)                       MSGSNT(3)",
            "FRY8417I: Display Channel Status details.",
            "   CHANNEL(AMQP.IN)                        CHLTYPE(AMQP)",
            "   CLIENTID(billing)                       STATUS(RUNNING)",
            "   CONNAME(10.0.0.6)                       MSGSNT(0)",
        ]
    );
    // Client ids keep their case when quoted; generic ids end in *.
    let one = ok(&mut t, "DIS CHS(AMQP.IN) CLIENTID('orders*') MSGRCVD");
    assert_eq!(one.len(), 4, "{one:?}");
    assert_eq!(
        one[2],
        "   CLIENTID(orders-1)                      STATUS(RUNNING)"
    );
    assert_eq!(one[3], "   MSGRCVD(7)");
    assert_eq!(
        fails(&mut t, "DIS CHS(AMQP.IN) CLIENTID(ORDERS*)"),
        vec!["FRY8420I: Channel Status not found."]
    );
    // Summary-only and detail-only keywords are told apart.
    assert!(matches!(
        parse_err("DIS CHS(*) CLIENTID(*) CONNS"),
        ParseErrorKind::UnknownKeyword { .. }
    ));
    assert!(matches!(
        parse_err("DIS CHS(*) CHLTYPE(AMQP) CONNAME"),
        ParseErrorKind::UnknownKeyword { .. }
    ));
    assert!(matches!(
        parse_command("DIS CHS(*) CLIENTID('a') CHLTYPE(AMQP)"),
        Ok(Command::DisplayChannelStatus {
            channel_type: Some(ChannelType::Amqp),
            client_id: Some(NamePattern::Exact(_)),
            ..
        })
    ));
}

#[test]
fn chstatus_where_filters_records() {
    let mut t = busy_target();
    ok(&mut t, "START CHANNEL(SYSTEM.DEF.AMQP)");
    ok(&mut t, "STOP CHANNEL(SYSTEM.DEF.AMQP)");
    let running = ok(&mut t, "DIS CHS(*) WHERE(STATUS EQ RUNNING)");
    assert_eq!(running.len(), 8, "{running:?}");
    assert!(running[1].contains("CHANNEL(AMQP.IN)"));
    let stopped = ok(&mut t, "DIS CHS(*) WHERE(STATUS EQ STOPPED) PORT");
    assert_eq!(
        stopped,
        vec![
            "FRY8417I: Display Channel Status details.",
            "   CHANNEL(SYSTEM.DEF.AMQP)                CHLTYPE(AMQP)",
            "   STATUS(STOPPED)                         PORT(5672)",
        ]
    );
    let busy = ok(&mut t, "DIS CHS(*) CLIENTID(*) WHERE(MSGRCVD GT 5)");
    assert_eq!(
        busy.iter().filter(|l| l.contains("CLIENTID(")).count(),
        1,
        "{busy:?}"
    );
    assert!(ok(&mut t, "DIS CHS(*) WHERE(CONNS GT 5)").is_empty());
    assert!(matches!(
        parse_err("DIS CHS(*) WHERE(STATUS EQ WAITING)"),
        ParseErrorKind::BadOption { .. }
    ));
}

#[test]
fn chstatus_not_found_and_other_channel_types() {
    let mut t = target();
    assert_eq!(
        fails(&mut t, "DIS CHSTATUS(*)"),
        vec!["FRY8420I: Channel Status not found."]
    );
    assert_eq!(
        fails(&mut t, "DIS CHSTATUS(SYSTEM.DEF.AMQP)"),
        vec!["FRY8420I: Channel Status not found."]
    );
    // SVRCONN channels have status once clients connect (crates/ferry/tests/native_limits.rs).
    assert_eq!(
        fails(&mut t, "DIS CHS(*) CHLTYPE(SVRCONN)"),
        vec!["FRY8420I: Channel Status not found."]
    );
    // Message channels have status once their agent ran (crates/ferry/tests/channels.rs).
    assert_eq!(
        fails(&mut t, "DIS CHS(*) CHLTYPE(SDR)"),
        vec!["FRY8420I: Channel Status not found."]
    );
    assert_eq!(
        fails(&mut t, "DIS CHS(*) CHLTYPE(CLUSSDR)"),
        vec!["FRY8420I: Channel Status not found."]
    );
    assert!(matches!(
        parse_command("DIS CHS(*) CHLTYPE(CLNTCONN)"),
        Ok(Command::Unsupported { .. })
    ));
}
