//! Channel compression in MQSC: COMPMSG and COMPHDR lists on SVRCONN channels (DEFINE,
//! ALTER, DISPLAY, WHERE) and COMPHDR/COMPMSG/COMPRATE/COMPTIME in DISPLAY CHSTATUS,
//! against the in-memory target.

use ferry_mqi::{HeaderCompression, MessageCompression};
use ferry_mqsc::testing::MemoryTarget;
use ferry_mqsc::{execute, parse_command, CommandResult};
use ferry_objects::channel::ChannelType;
use ferry_objects::status::{ChannelInstanceStatus, ChannelStatus, CompressionStatus};

fn run(t: &mut MemoryTarget, text: &str) -> CommandResult {
    match parse_command(text) {
        Ok(cmd) => execute(&cmd, t),
        Err(e) => CommandResult::syntax_error(&e),
    }
}

fn ok(t: &mut MemoryTarget, text: &str) -> String {
    let r = run(t, text);
    assert!(r.ok, "{text}: {:?}", r.lines);
    r.lines.join("\n")
}

fn fails(t: &mut MemoryTarget, text: &str) -> String {
    let r = run(t, text);
    assert!(!r.ok, "{text} should fail: {:?}", r.lines);
    r.lines.join("\n")
}

#[test]
fn compmsg_and_comphdr_are_lists_kept_in_order() {
    let mut t = MemoryTarget::with_defaults("QM1");
    ok(
        &mut t,
        "DEFINE CHANNEL(APP.SVRCONN) CHLTYPE(SVRCONN) COMPMSG(ZLIBFAST, lz4fast) COMPHDR(SYSTEM)",
    );
    let a = &t.channels["APP.SVRCONN"].attributes;
    assert_eq!(
        a.message_compression,
        vec![MessageCompression::ZlibFast, MessageCompression::Lz4Fast]
    );
    assert_eq!(a.header_compression, vec![HeaderCompression::System]);
    let shown = ok(&mut t, "DISPLAY CHANNEL(APP.SVRCONN) COMPMSG COMPHDR");
    assert!(shown.contains("COMPMSG(ZLIBFAST,LZ4FAST)"), "{shown}");
    assert!(shown.contains("COMPHDR(SYSTEM)"), "{shown}");
    ok(
        &mut t,
        "ALTER CHANNEL(APP.SVRCONN) CHLTYPE(SVRCONN) COMPMSG(ANY)",
    );
    let shown = ok(&mut t, "DISPLAY CHANNEL(APP.SVRCONN) COMPMSG");
    assert!(shown.contains("COMPMSG(ANY)"), "{shown}");
    // The default is NONE, as MQ's.
    let shown = ok(
        &mut t,
        "DISPLAY CHANNEL(SYSTEM.DEF.SVRCONN) COMPMSG COMPHDR",
    );
    assert!(
        shown.contains("COMPMSG(NONE)") && shown.contains("COMPHDR(NONE)"),
        "{shown}"
    );
}

#[test]
fn bad_compression_lists_are_refused_with_the_reason() {
    let mut t = MemoryTarget::with_defaults("QM1");
    let e = fails(&mut t, "DEFINE CHANNEL(A) CHLTYPE(SVRCONN) COMPMSG(LZ4)");
    assert!(e.contains("LZ4FAST"), "names what is allowed: {e}");
    let e = fails(
        &mut t,
        "DEFINE CHANNEL(A) CHLTYPE(SVRCONN) COMPMSG(RLE,RLE)",
    );
    assert!(e.contains("twice"), "{e}");
    let e = fails(
        &mut t,
        "DEFINE CHANNEL(A) CHLTYPE(SVRCONN) COMPHDR(NONE,SYSTEM,NONE)",
    );
    assert!(!e.is_empty());
    let e = fails(&mut t, "DEFINE CHANNEL(A) CHLTYPE(AMQP) COMPMSG(ZLIBFAST)");
    assert!(e.contains("COMPMSG"), "{e}");
}

#[test]
fn chstatus_shows_the_technique_and_what_it_achieved() {
    let mut t = MemoryTarget::with_defaults("QM1");
    let mut st = ChannelStatus::new("APP.SVRCONN", ChannelType::Svrconn, true, 0);
    st.instances.push(ChannelInstanceStatus {
        running: true,
        connection_name: "127.0.0.1".into(),
        compression: CompressionStatus {
            header: (HeaderCompression::None, HeaderCompression::None),
            message: (MessageCompression::Lz4Fast, MessageCompression::Lz4Fast),
            rate: (41, 40),
            time: (6, 7),
        },
        ..ChannelInstanceStatus::default()
    });
    t.channel_status.insert("APP.SVRCONN".into(), st);
    let shown = ok(
        &mut t,
        "DISPLAY CHSTATUS(APP.SVRCONN) COMPMSG COMPHDR COMPRATE COMPTIME",
    );
    for cell in [
        "COMPMSG(LZ4FAST,LZ4FAST)",
        "COMPHDR(NONE,NONE)",
        "COMPRATE(41,40)",
        "COMPTIME(6,7)",
    ] {
        assert!(shown.contains(cell), "{cell} missing: {shown}");
    }
}
