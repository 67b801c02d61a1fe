//! DEFINE, ALTER, DELETE and DISPLAY TOPIC against the in-memory target: defaults from
//! SYSTEM.DEFAULT.TOPIC (ASPARENT), LIKE and REPLACE, DISPLAY as defined, and the
//! refusals (TOPICSTR missing, blank, shared or altered; CLUSTER; bad values).

use ferry_mqsc::testing::MemoryTarget;
use ferry_mqsc::{execute, parse_command, CommandResult};
use ferry_objects::topic::{
    AsParentYesNo, MessageDelivery, TopicEnablement, WildcardOperation, SYSTEM_BASE_TOPIC,
};
use ferry_objects::{attribute::WORD_VALUE, AttributeSet, TopicAttributes};

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
    MemoryTarget::with_defaults("QM1")
}

#[test]
fn define_starts_from_system_default_topic_and_displays_asparent() {
    let mut t = target();
    t.now_ms = 1_709_212_455_000; // 2024-02-29 13:14:15 UTC
    assert_eq!(
        ok(
            &mut t,
            "DEFINE TOPIC(PRICES.TOPIC) TYPE(LOCAL) TOPICSTR('Prices') PMSGDLV(ALL) USEDLQ(NO) DEFPSIST(YES)"
        ),
        vec!["FRY8690I: Ferry topic object created."]
    );
    let d = t.topics.get("PRICES.TOPIC").expect("defined");
    assert_eq!(d.attributes.topic_string, "Prices");
    assert_eq!(d.attributes.persistent_delivery, MessageDelivery::All);
    assert_eq!(d.attributes.use_dlq, AsParentYesNo::No);
    assert_eq!(d.attributes.def_persistence, AsParentYesNo::Yes);
    assert_eq!(d.attributes.publish, TopicEnablement::AsParent);
    assert_eq!(d.attributes.def_priority, WORD_VALUE);
    assert_eq!(d.attributes.alteration_date, "2024-02-29");
    assert_eq!(d.attributes.alteration_time, "13.14.15");

    let shown = ok(&mut t, "DISPLAY TOPIC(PRICES.TOPIC)").join("\n");
    assert!(
        shown.starts_with("FRY8633I: Display topic details."),
        "{shown}"
    );
    for want in [
        "TOPIC(PRICES.TOPIC)",
        "TYPE(LOCAL)",
        "TOPICSTR(Prices)",
        "PUB(ASPARENT)",
        "DEFPRTY(ASPARENT)",
        "PMSGDLV(ALL)",
        "NPMSGDLV(ASPARENT)",
        "USEDLQ(NO)",
        "WILDCARD(PASSTHRU)",
        "ALTDATE(2024-02-29)",
    ] {
        assert!(shown.contains(want), "{want} in {shown}");
    }
    // Every attribute of the table is shown, in table order.
    for row in TopicAttributes::table() {
        assert!(
            shown.contains(&format!("{}(", row.keyword)),
            "{}",
            row.keyword
        );
    }
}

#[test]
fn unquoted_topic_strings_fold_to_upper_case_and_quoted_ones_keep_theirs() {
    let mut t = target();
    ok(&mut t, "DEFINE TOPIC(A) TOPICSTR(Sports/Tennis)");
    ok(&mut t, "DEFINE TOPIC(B) TOPICSTR('Sports/Tennis')");
    assert_eq!(t.topics["A"].attributes.topic_string, "SPORTS/TENNIS");
    assert_eq!(t.topics["B"].attributes.topic_string, "Sports/Tennis");
}

#[test]
fn generic_display_shows_names_and_where_filters() {
    let mut t = target();
    ok(&mut t, "DEFINE TOPIC(APP.A) TOPICSTR('a') PUB(DISABLED)");
    ok(&mut t, "DEFINE TOPIC(APP.B) TOPICSTR('b')");
    let shown = ok(&mut t, "DISPLAY TOPIC(APP.*) TYPE(ALL)");
    assert_eq!(
        shown,
        vec![
            "FRY8633I: Display topic details.",
            "   TOPIC(APP.A)                            TYPE(LOCAL)",
            "FRY8633I: Display topic details.",
            "   TOPIC(APP.B)                            TYPE(LOCAL)",
        ]
    );
    let shown = ok(&mut t, "DIS TOPIC(*) WHERE(PUB EQ DISABLED)").join("\n");
    assert!(
        shown.contains("TOPIC(APP.A)") && shown.contains("PUB(DISABLED)"),
        "{shown}"
    );
    assert!(!shown.contains("APP.B"), "{shown}");
    let shown = ok(&mut t, "DISPLAY TOPIC(*) TOPICSTR").join("\n");
    assert!(shown.contains("TOPIC(SYSTEM.BASE.TOPIC)"), "{shown}");
    assert!(shown.contains("TOPICSTR(b)"), "{shown}");
    assert!(
        fails(&mut t, "DISPLAY TOPIC(NOPE.*)").contains("FRY8147E"),
        "nothing matched"
    );
}

#[test]
fn alter_changes_only_what_it_names_and_never_the_topic_string() {
    let mut t = target();
    ok(&mut t, "DEFINE TOPIC(T) TOPICSTR('a/b') DEFPRTY(4)");
    assert_eq!(
        ok(
            &mut t,
            "ALTER TOPIC(T) PUB(DISABLED) WILDCARD(BLOCK) DEFPRTY(ASPARENT)"
        ),
        vec!["FRY8691I: Ferry topic object changed."]
    );
    let d = &t.topics["T"].attributes;
    assert_eq!(d.publish, TopicEnablement::Disabled);
    assert_eq!(d.wildcard, WildcardOperation::Block);
    assert_eq!(d.def_priority, WORD_VALUE);
    assert_eq!(d.topic_string, "a/b");
    let e = fails(&mut t, "ALTER TOPIC(T) TOPICSTR('c')");
    assert!(
        e.contains("TOPICSTR is fixed when the topic object is defined"),
        "{e}"
    );
    assert!(fails(&mut t, "ALTER TOPIC(NONE) PUB(ENABLED)")
        .contains("FRY8147E: Ferry object NONE not found."));
    assert!(fails(&mut t, "ALTER TOPIC(T) ALTDATE('2020-01-01')").contains("ALTDATE cannot be set"));
}

#[test]
fn like_and_replace() {
    let mut t = target();
    ok(
        &mut t,
        "DEFINE TOPIC(SRC) TOPICSTR('src') SUB(DISABLED) MDURMDL(APP.MODEL)",
    );
    ok(&mut t, "DEFINE TOPIC(COPY) LIKE(SRC) TOPICSTR('copy')");
    assert_eq!(
        t.topics["COPY"].attributes.subscribe,
        TopicEnablement::Disabled
    );
    assert_eq!(t.topics["COPY"].attributes.durable_model_q, "APP.MODEL");
    assert!(fails(&mut t, "DEFINE TOPIC(X) LIKE(NONE) TOPICSTR('x')").contains("FRY8147E"));
    assert!(fails(&mut t, "DEFINE TOPIC(SRC) TOPICSTR('src')").contains("FRY8150E"));
    // REPLACE resets what it does not name from SYSTEM.DEFAULT.TOPIC.
    ok(
        &mut t,
        "DEFINE TOPIC(SRC) TOPICSTR('src') DESCR('again') REPLACE",
    );
    assert_eq!(
        t.topics["SRC"].attributes.subscribe,
        TopicEnablement::AsParent
    );
    assert_eq!(t.topics["SRC"].attributes.descr, "again");
    let e = fails(&mut t, "DEFINE TOPIC(SRC) TOPICSTR('other') REPLACE");
    assert!(
        e.contains("FRY9003E") && e.contains("cannot be changed"),
        "{e}"
    );
}

#[test]
fn topic_strings_are_required_not_blank_and_not_shared() {
    let mut t = target();
    let e = fails(&mut t, "DEFINE TOPIC(T)");
    assert!(e.contains("DEFINE TOPIC needs TOPICSTR"), "{e}");
    let e = fails(&mut t, "DEFINE TOPIC(T) TOPICSTR('')");
    assert!(e.contains("FRY9003E") && e.contains("blank"), "{e}");
    ok(&mut t, "DEFINE TOPIC(FIRST) TOPICSTR('Prices')");
    let e = fails(&mut t, "DEFINE TOPIC(SECOND) TOPICSTR('Prices')");
    assert!(
        e.contains("FRY9003E") && e.contains("'Prices'") && e.contains("FIRST"),
        "{e}"
    );
    assert!(!t.topics.contains_key("SECOND"));
    // Case matters in topic strings.
    ok(&mut t, "DEFINE TOPIC(SECOND) TOPICSTR('prices')");
}

#[test]
fn clusters_and_bad_values_are_refused_clearly() {
    let mut t = target();
    let e = fails(&mut t, "DEFINE TOPIC(T) TOPICSTR('t') CLUSTER(DEMO)");
    assert!(e.contains("FRY9002E") && e.contains("CLUSTER(DEMO)"), "{e}");
    ok(&mut t, "DEFINE TOPIC(T) TOPICSTR('t') CLUSTER(' ')");
    assert!(fails(&mut t, "ALTER TOPIC(T) CLUSTER(DEMO)").contains("FRY9002E"));
    assert!(fails(&mut t, "DEFINE TOPIC(U) TYPE(CLUSTER) TOPICSTR('u')").contains("FRY9002E"));
    assert!(fails(&mut t, "DISPLAY TOPIC(*) TYPE(CLUSTER)").contains("FRY9002E"));
    for (cmd, why) in [
        ("DEFINE TOPIC(U) TYPE(REMOTE) TOPICSTR('u')", "TYPE"),
        (
            "DEFINE TOPIC(U) TOPICSTR('u') PUB(MAYBE)",
            "PUB(MAYBE) is not valid",
        ),
        (
            "DEFINE TOPIC(U) TOPICSTR('u') DEFPRTY(10)",
            "DEFPRTY(10) is outside the range",
        ),
        (
            "DEFINE TOPIC(U) TOPICSTR('u') PMSGDLV(SOME)",
            "PMSGDLV(SOME)",
        ),
        (
            "DEFINE TOPIC(U) TOPICSTR('u') MDURMDL('BAD NAME')",
            "MDURMDL",
        ),
        (
            "DEFINE TOPIC(U) TOPICSTR('u') WILDCARD(ASPARENT)",
            "WILDCARD",
        ),
        (
            "DEFINE TOPIC(U) TOPICSTR('u') NOSUCH(1)",
            "NOSUCH is not a valid keyword",
        ),
        (
            "DEFINE TOPIC(U) TOPICSTR('u') TOPICSTR('v')",
            "more than once",
        ),
        ("DELETE TOPIC(U) PURGE", "PURGE"),
        ("DEFINE TOPIC(U*) TOPICSTR('u')", "U*"),
    ] {
        let e = fails(&mut t, cmd);
        assert!(e.contains("FRY8405I") && e.contains(why), "{cmd}: {e}");
    }
    let long = format!("DEFINE TOPIC(U) TOPICSTR('{}')", "x".repeat(10_241));
    assert!(fails(&mut t, &long).contains("at most 10240"));
    assert!(!t.topics.contains_key("U"));
}

#[test]
fn delete_removes_the_object_even_system_base_topic() {
    let mut t = target();
    ok(&mut t, "DEFINE TOPIC(T) TOPICSTR('t')");
    assert_eq!(
        ok(&mut t, "DELETE TOPIC(T)"),
        vec!["FRY8692I: Ferry topic object deleted."]
    );
    assert!(fails(&mut t, "DELETE TOPIC(T)").contains("FRY8147E: Ferry object T not found."));
    ok(&mut t, &format!("DELETE TOPIC({SYSTEM_BASE_TOPIC})"));
    assert!(!t.topics.contains_key(SYSTEM_BASE_TOPIC));
    // DEFINE still works from SYSTEM.DEFAULT.TOPIC, and without it from the table.
    ok(&mut t, "DELETE TOPIC(SYSTEM.DEFAULT.TOPIC)");
    ok(&mut t, "DEFINE TOPIC(T) TOPICSTR('t')");
    assert_eq!(t.topics["T"].attributes.publish, TopicEnablement::AsParent);
}
