//! DEFINE, ALTER, DELETE and DISPLAY SUB, DISPLAY SBSTATUS, TPSTATUS and PUBSUB, and
//! CLEAR TOPICSTR against the in-memory target.

use ferry_mqsc::testing::{topic_matches, MemoryTarget};
use ferry_mqsc::{execute, parse_command, CommandResult};
use ferry_objects::status::PublisherStatus;
use ferry_objects::subscription::{DestinationClass, PublishPriority, RequestOnly};

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

fn fails(t: &mut MemoryTarget, text: &str) -> String {
    let r = run(t, text);
    assert!(!r.ok, "{text} should fail: {:?}", r.lines);
    r.lines.join("\n")
}

fn target() -> MemoryTarget {
    let mut t = MemoryTarget::with_defaults("QM1");
    t.now_ms = 1_709_212_455_000; // 2024-02-29 13:14:15 UTC
    ok(&mut t, "DEFINE QLOCAL(APP.PRICE.FEED)");
    ok(&mut t, "DEFINE TOPIC(PRICES.TOPIC) TOPICSTR('Prices')");
    t
}

#[test]
fn define_starts_from_system_default_sub_and_combines_the_topic() {
    let mut t = target();
    assert_eq!(
        ok(
            &mut t,
            "DEFINE SUB(APP.PRICE.SUB) TOPICOBJ(PRICES.TOPIC) TOPICSTR('EUR/+') DEST(APP.PRICE.FEED) USERDATA('desk=fx') SELECTOR('Venue = ''LSE''')"
        ),
        ["FRY8094I: Ferry subscription created."]
    );
    let s = t.subscriptions[0].attributes.clone();
    assert_eq!(s.topic_string, "Prices/EUR/+");
    assert_eq!(s.topic_object, "PRICES.TOPIC");
    assert_eq!(s.selector, "Venue = 'LSE'");
    assert_eq!(s.user_data, "desk=fx");
    assert_eq!(s.pub_priority, PublishPriority::AsPublished);
    assert_eq!(s.sub_level, 1);
    assert_eq!(s.sub_user, "admin", "the user who issued it");
    assert_eq!(s.creation_date, "2024-02-29");

    // The summary, whatever is asked for; ALL adds the rest.
    let summary = ok(&mut t, "DISPLAY SUB(APP.PRICE.SUB)").join("\n");
    assert!(summary.starts_with("FRY8096I: Display subscription details."));
    for kw in [
        "SUB(APP.PRICE.SUB)",
        "SUBID(",
        "TOPICSTR(Prices/EUR/+)",
        "DEST(APP.PRICE.FEED)",
        "DESTQMGR( )",
        "DESTCORL( )",
        "DURABLE(YES)",
        "SUBTYPE(ADMIN)",
        "SUBUSER(admin)",
    ] {
        assert!(summary.contains(kw), "{kw} in {summary}");
    }
    assert!(!summary.contains("USERDATA"), "{summary}");
    let all = ok(&mut t, "DISPLAY SUB(APP.*) ALL").join("\n");
    for kw in [
        "USERDATA(desk=fx)",
        "PSPROP(MSGPROP)",
        "PUBPRTY(ASPUB)",
        "EXPIRY(UNLIMITED)",
        "SELTYPE(STANDARD)",
        "WSCHEMA(TOPIC)",
        "VARUSER(ANY)",
        "DESTCLAS(PROVIDED)",
        "CRDATE(2024-02-29)",
        "TOPICOBJ(PRICES.TOPIC)",
    ] {
        assert!(all.contains(kw), "{kw} in {all}");
    }
    let one = ok(&mut t, "DISPLAY SUB(*) USERDATA").join("\n");
    assert!(one.contains("USERDATA(desk=fx)") && !one.contains("PSPROP"));
    let id = s.sub_id.clone();
    let by_id = ok(&mut t, &format!("DISPLAY SUB SUBID({id})")).join("\n");
    assert!(by_id.contains("SUB(APP.PRICE.SUB)"), "{by_id}");
    // Filters.
    assert!(fails(&mut t, "DISPLAY SUB(*) SUBTYPE(API)").contains("FRY8147E"));
    assert!(fails(&mut t, "DISPLAY SUB(*) DURABLE(NO)").contains("FRY8147E"));
    ok(&mut t, "DISPLAY SUB(*) SUBTYPE(ADMIN) DURABLE(YES)");
    ok(&mut t, "DISPLAY SUB(*) WHERE(USERDATA EQ 'desk=fx')");
}

#[test]
fn define_refuses_what_it_cannot_make() {
    let mut t = target();
    let missing = fails(&mut t, "DEFINE SUB(S) DEST(APP.PRICE.FEED)");
    assert!(missing.contains("TOPICSTR or TOPICOBJ"), "{missing}");
    let unknown = fails(&mut t, "DEFINE SUB(S) TOPICSTR('a') DEST(NOT.THERE)");
    assert!(
        unknown.contains("2085") && unknown.contains("NOT.THERE"),
        "{unknown}"
    );
    let other_qm = fails(
        &mut t,
        "DEFINE SUB(S) TOPICSTR('a') DEST(APP.PRICE.FEED) DESTQMGR(QM2)",
    );
    assert!(other_qm.contains("FRY9002E"), "{other_qm}");
    ok(
        &mut t,
        "DEFINE SUB(S) TOPICSTR('a') DEST(APP.PRICE.FEED) DESTQMGR(QM1)",
    );
    assert!(fails(&mut t, "DEFINE SUB(S) TOPICSTR('a') DEST(APP.PRICE.FEED)").contains("FRY8150E"));
    assert!(fails(&mut t, "DEFINE SUB(S2) TOPICSTR('a') SUBID(00)").contains("FRY8405I"));
    assert!(fails(&mut t, "DEFINE SUB(S2) TOPICSTR('a') PUBPRTY(10)").contains("PUBPRTY"));
    assert!(fails(&mut t, "DEFINE SUB(S2) TOPICSTR('a') DESTCORL(XYZ)").contains("DESTCORL"));
    assert!(fails(&mut t, "DEFINE SUB(S2) TOPICSTR('a') SUBLEVEL(10)").contains("SUBLEVEL"));
    assert!(fails(&mut t, "DEFINE SUB(S3) LIKE(NOPE) DEST(APP.PRICE.FEED)").contains("FRY8147E"));
}

#[test]
fn names_keep_case_and_any_character_and_like_copies() {
    let mut t = target();
    ok(
        &mut t,
        "DEFINE SUB('JMS:client:Sub one') TOPICSTR('Prices/#') DEST(APP.PRICE.FEED) PUBPRTY(7) REQONLY(YES)",
    );
    assert_eq!(t.subscriptions[0].name, "JMS:client:Sub one");
    ok(
        &mut t,
        "DEFINE SUB(COPY) LIKE('JMS:client:Sub one') USERDATA(x)",
    );
    let copy = t.subscription_named("COPY");
    assert_eq!(copy.topic_string, "Prices/#");
    assert_eq!(copy.pub_priority, PublishPriority::P7);
    assert_eq!(copy.request_only, RequestOnly::Yes);
    assert_ne!(copy.sub_id, t.subscriptions[0].attributes.sub_id);
    ok(
        &mut t,
        "DEFINE SUB(DEFAULTS) LIKE(SYSTEM.DEFAULT.SUB) TOPICSTR(b) DESTCLAS(MANAGED)",
    );
    let managed = t.subscription_named("DEFAULTS");
    assert_eq!(managed.dest_class, DestinationClass::Managed);
    assert!(managed.destination.starts_with("SYSTEM.MANAGED.DURABLE."));
    ok(&mut t, "DISPLAY SUB('JMS:*')");
}

#[test]
fn alter_changes_only_what_alter_may_and_replace_alters() {
    let mut t = target();
    ok(&mut t, "DEFINE QLOCAL(OTHER.Q)");
    ok(&mut t, "DEFINE SUB(S) TOPICSTR('a/b') DEST(APP.PRICE.FEED)");
    assert_eq!(
        ok(
            &mut t,
            "ALTER SUB(S) USERDATA('new') PUBPRTY(ASQDEF) DEST(OTHER.Q) EXPIRY(600)"
        ),
        ["FRY8095I: Ferry subscription changed."]
    );
    let s = t.subscription_named("S");
    assert_eq!(s.user_data, "new");
    assert_eq!(s.destination, "OTHER.Q");
    assert_eq!(s.expiry, 600);
    for fixed in [
        "TOPICSTR('x')",
        "SELECTOR('a = 1')",
        "SUBLEVEL(2)",
        "DESTCLAS(MANAGED)",
        "WSCHEMA(CHAR)",
        "TOPICOBJ(PRICES.TOPIC)",
    ] {
        let e = fails(&mut t, &format!("ALTER SUB(S) {fixed}"));
        assert!(e.contains("cannot be altered"), "{fixed}: {e}");
    }
    assert!(fails(&mut t, "ALTER SUB(NOPE) USERDATA(x)").contains("FRY8147E"));
    assert!(fails(&mut t, "ALTER SUB(S) DESTQMGR(QM9)").contains("FRY9002E"));
    let id = t.subscription_named("S").sub_id;
    ok(&mut t, &format!("ALTER SUB SUBID({id}) USERDATA('by-id')"));
    assert_eq!(t.subscription_named("S").user_data, "by-id");
    // REPLACE: the whole definition again; what ALTER cannot change must not change.
    ok(
        &mut t,
        "DEFINE SUB(S) TOPICSTR('a/b') DEST(APP.PRICE.FEED) REPLACE",
    );
    assert_eq!(
        t.subscription_named("S").user_data,
        "",
        "reset from the defaults"
    );
    assert_eq!(
        t.subscription_named("S").sub_id,
        id,
        "the same subscription"
    );
    let e = fails(
        &mut t,
        "DEFINE SUB(S) TOPICSTR('a/c') DEST(APP.PRICE.FEED) REPLACE",
    );
    assert!(e.contains("2510"), "{e}");
}

#[test]
fn delete_by_name_or_subid() {
    let mut t = target();
    ok(&mut t, "DEFINE SUB(S1) TOPICSTR('a') DEST(APP.PRICE.FEED)");
    ok(&mut t, "DEFINE SUB(S2) TOPICSTR('b') DEST(APP.PRICE.FEED)");
    let id2 = t.subscription_named("S2").sub_id;
    assert_eq!(
        ok(&mut t, "DELETE SUB(S1)"),
        ["FRY8097I: Ferry subscription deleted."]
    );
    t.open_subscriptions.push(id2.clone());
    assert!(fails(&mut t, &format!("DELETE SUB SUBID({id2})")).contains("FRY8148E"));
    t.open_subscriptions.clear();
    let wrong = "0".repeat(48);
    assert!(fails(&mut t, &format!("DELETE SUB(S2) SUBID({wrong})")).contains("FRY8147E"));
    ok(&mut t, &format!("DELETE SUB SUBID({})", id2.to_lowercase()));
    assert!(t.subscriptions.is_empty());
    assert!(fails(&mut t, "DELETE SUB(S1)").contains("FRY8147E"));
    assert!(fails(&mut t, "DELETE SUB SUBID(12)").contains("48 hexadecimal"));
}

#[test]
fn sbstatus_shows_every_field() {
    let mut t = target();
    ok(&mut t, "DEFINE SUB(S) TOPICSTR('a/b') DEST(APP.PRICE.FEED)");
    let out = ok(&mut t, "DISPLAY SBSTATUS(S)").join("\n");
    assert!(out.starts_with("FRY8099I: Display subscription status details."));
    for kw in [
        "SUB(S)",
        "SUBID(",
        "ACTCONN( )",
        "DURABLE(YES)",
        "LMSGDATE( )",
        "NUMMSGS(0)",
        "RESMDATE(2024-02-29)",
        "SUBTYPE(ADMIN)",
        "SUBUSER(admin)",
        "TOPICSTR(a/b)",
    ] {
        assert!(out.contains(kw), "{kw} in {out}");
    }
    let few = ok(&mut t, "DISPLAY SBSTATUS(*) NUMMSGS").join("\n");
    assert!(
        few.contains("NUMMSGS(0)") && !few.contains("TOPICSTR"),
        "{few}"
    );
    assert!(fails(&mut t, "DISPLAY SBSTATUS(NOPE)").contains("FRY8147E"));
}

#[test]
fn tpstatus_lists_nodes_with_resolved_attributes() {
    let mut t = target();
    ok(&mut t, "ALTER TOPIC(PRICES.TOPIC) DEFPRTY(4) PMSGDLV(ALL)");
    ok(
        &mut t,
        "DEFINE SUB(S) TOPICSTR('Prices/EUR/#') DEST(APP.PRICE.FEED)",
    );
    t.retained.insert("Prices/EUR/GBP".into());
    t.publishers.push(PublisherStatus {
        topic_string: "Prices/EUR/GBP".into(),
        active_connection: "00000000000000AB".into(),
        ..PublisherStatus::default()
    });
    let out = ok(&mut t, "DISPLAY TPSTATUS('#')").join("\n");
    assert!(out.starts_with("FRY8754I: Display topic status details."));
    assert_eq!(
        out.matches("FRY8754I").count(),
        4,
        "root, Prices, the sub's, the retained: {out}"
    );
    assert!(out.contains("ADMIN(SYSTEM.BASE.TOPIC)"), "{out}");
    let prices = ok(&mut t, "DISPLAY TPSTATUS('Prices/+/GBP')").join("\n");
    for kw in [
        "TOPICSTR(Prices/EUR/GBP)",
        "ADMIN( )",
        "DEFPRTY(4)",
        "PMSGDLV(ALL)",
        "NPMSGDLV(ALLAVAIL)",
        "MDURMDL(SYSTEM.DURABLE.MODEL.QUEUE)",
        "RETAINED(YES)",
        "PUBCOUNT(1)",
        "SUBCOUNT(0)",
        "PUB(ENABLED)",
    ] {
        assert!(prices.contains(kw), "{kw} in {prices}");
    }
    let subs = ok(&mut t, "DISPLAY TPSTATUS('Prices/#') TYPE(SUB)").join("\n");
    assert!(
        subs.contains("TOPICSTR(Prices/EUR/#)") && subs.contains("SUBTYPE(ADMIN)"),
        "{subs}"
    );
    let pubs = ok(&mut t, "DISPLAY TPSTATUS('Prices/#') TYPE(PUB)").join("\n");
    assert!(
        pubs.contains("ACTCONN(00000000000000AB)") && pubs.contains("NUMPUBS(0)"),
        "{pubs}"
    );
    assert!(ok(&mut t, "DISPLAY TPSTATUS('Prices') TYPE(SUB)").is_empty());
    assert!(fails(&mut t, "DISPLAY TPSTATUS('Nothing/#')").contains("FRY8147E"));
    assert!(fails(&mut t, "DISPLAY TPSTATUS('#') TYPE(ALL)").contains("FRY8405I"));
}

#[test]
fn pubsub_and_clear_topic_string() {
    let mut t = target();
    ok(&mut t, "DEFINE SUB(S) TOPICSTR('a') DEST(APP.PRICE.FEED)");
    let out = ok(&mut t, "DISPLAY PUBSUB ALL").join("\n");
    assert!(out.starts_with("FRY8723I"), "{out}");
    for kw in [
        "QMNAME(QM1)",
        "TYPE(LOCAL)",
        "STATUS(ACTIVE)",
        "SUBCOUNT(1)",
        "TPCOUNT(3)",
    ] {
        assert!(out.contains(kw), "{kw} in {out}");
    }
    ok(&mut t, "DISPLAY PUBSUB TYPE(ALL)");
    assert!(fails(&mut t, "DISPLAY PUBSUB TYPE(PARENT)").contains("FRY9002E"));
    t.retained.insert("a/b".into());
    let cleared = ok(
        &mut t,
        "CLEAR TOPICSTR('a/b') CLRTYPE(RETAINED) SCOPE(LOCAL)",
    );
    assert!(
        cleared[0].contains("retained publication was removed"),
        "{cleared:?}"
    );
    let again = ok(&mut t, "CLEAR TOPICSTR('a/b') CLRTYPE(RETAINED)");
    assert!(
        again[0].contains("had no retained publication"),
        "{again:?}"
    );
    assert!(fails(&mut t, "CLEAR TOPICSTR('a/b')").contains("CLRTYPE"));
    assert!(fails(
        &mut t,
        "CLEAR TOPICSTR('a/b') CLRTYPE(RETAINED) SCOPE(GLOBAL)"
    )
    .contains("FRY9002E"));
}

#[test]
fn topic_patterns_match_as_subscriptions_do() {
    assert!(topic_matches("#", ""));
    assert!(topic_matches("Prices/#", "Prices"));
    assert!(topic_matches("Prices/#", "Prices/EUR/GBP"));
    assert!(topic_matches("Prices/+/GBP", "Prices/EUR/GBP"));
    assert!(!topic_matches("Prices/+", "Prices/EUR/GBP"));
    assert!(!topic_matches("Prices", "prices"));
}
