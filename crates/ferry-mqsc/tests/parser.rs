//! Parser tests: each MQSC syntax rule and each kind of error.

use ferry_mqsc::command::{
    Command, ConnType, FilterValue, NamePattern, Op, QueueStatusType, Setting,
};
use ferry_mqsc::{parse_command, ParseErrorKind};
use ferry_objects::channel::ChannelType;
use ferry_objects::queue::QueueType;
use ferry_objects::{AttrError, AttrValue};

fn ok(text: &str) -> Command {
    parse_command(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn err(text: &str) -> ParseErrorKind {
    match parse_command(text) {
        Ok(c) => panic!("{text} parsed as {c:?}"),
        Err(e) => e.kind,
    }
}

fn settings(cmd: &Command) -> &[Setting] {
    match cmd {
        Command::DefineQueue { settings, .. }
        | Command::AlterQueue { settings, .. }
        | Command::DefineChannel { settings, .. }
        | Command::AlterChannel { settings, .. }
        | Command::DefineListener { settings, .. }
        | Command::AlterListener { settings, .. }
        | Command::AlterQmgr { settings, .. } => settings,
        other => panic!("no settings in {other:?}"),
    }
}

fn setting(keyword: &'static str, value: AttrValue) -> Setting {
    Setting { keyword, value }
}

#[test]
fn keywords_fold_to_upper_case_and_names_too() {
    let cmd = ok("define qlocal(app.q) maxdepth(10) defpsist(yes)");
    assert_eq!(
        cmd,
        Command::DefineQueue {
            queue_type: QueueType::Local,
            name: "APP.Q".into(),
            like: None,
            replace: false,
            settings: vec![
                setting("MAXDEPTH", AttrValue::Int(10)),
                setting("DEFPSIST", AttrValue::Keyword("YES")),
            ],
        }
    );
}

#[test]
fn quoted_values_keep_case_and_doubled_quotes() {
    let cmd = ok("DEFINE QLOCAL('app.q') DESCR('Bob''s queue')");
    let Command::DefineQueue { name, settings, .. } = &cmd else {
        panic!("{cmd:?}")
    };
    assert_eq!(name, "app.q");
    assert_eq!(
        settings[0],
        setting("DESCR", AttrValue::Text("Bob's queue".into()))
    );
}

#[test]
fn unquoted_text_is_upper_cased() {
    let cmd = ok("DEFINE QLOCAL(A) DESCR(hello)");
    assert_eq!(settings(&cmd)[0].value, AttrValue::Text("HELLO".into()));
}

#[test]
fn commas_blanks_and_space_before_parenthesis() {
    let a = ok("DEFINE QLOCAL(A) MAXDEPTH(5) SHARE");
    assert_eq!(ok("DEFINE,QLOCAL(A),MAXDEPTH(5),SHARE"), a);
    assert_eq!(ok("DEFINE   QLOCAL (A)   MAXDEPTH ( 5 )  SHARE"), a);
}

#[test]
fn flags_are_bare_keywords_either_way() {
    let cmd = ok("DEFINE QLOCAL(A) NOSHARE HARDENBO NOTRIGGER");
    assert_eq!(
        settings(&cmd),
        &[
            setting("SHARE", AttrValue::Flag(false)),
            setting("HARDENBO", AttrValue::Flag(true)),
            setting("TRIGGER", AttrValue::Flag(false)),
        ]
    );
    assert_eq!(
        err("DEFINE QLOCAL(A) SHARE(YES)"),
        ParseErrorKind::ValueNotAllowed {
            keyword: "SHARE".into()
        }
    );
}

#[test]
fn abbreviations() {
    assert!(matches!(
        ok("DEF QL(A)"),
        Command::DefineQueue {
            queue_type: QueueType::Local,
            ..
        }
    ));
    assert!(matches!(
        ok("DEF QA(A) TARGET(B)"),
        Command::DefineQueue {
            queue_type: QueueType::Alias,
            ..
        }
    ));
    assert!(matches!(
        ok("DEF QM(A)"),
        Command::DefineQueue {
            queue_type: QueueType::Model,
            ..
        }
    ));
    assert!(matches!(
        ok("DIS Q(*)"),
        Command::DisplayQueue {
            queue_type: None,
            ..
        }
    ));
    assert!(matches!(
        ok("DIS QS(A)"),
        Command::DisplayQueueStatus { .. }
    ));
    assert!(matches!(
        ok("DEF CHL(C) CHLTYPE(SVRCONN)"),
        Command::DefineChannel { .. }
    ));
    assert!(matches!(ok("DEF LSTR(L)"), Command::DefineListener { .. }));
    assert!(matches!(ok("DIS LSTR(*)"), Command::DisplayListener { .. }));
    assert!(matches!(ok("CLEAR QL(A)"), Command::ClearQueue { .. }));
    assert!(matches!(ok("end"), Command::End));
}

#[test]
fn replace_noreplace_and_like() {
    let cmd = ok("DEFINE QLOCAL(B) LIKE(A) REPLACE");
    assert!(
        matches!(cmd, Command::DefineQueue { replace: true, ref like, .. } if like.as_deref() == Some("A"))
    );
    let cmd = ok("DEFINE QLOCAL(B) NOREPLACE");
    assert!(matches!(cmd, Command::DefineQueue { replace: false, .. }));
    assert!(matches!(
        err("DEFINE QLOCAL(B) REPLACE NOREPLACE"),
        ParseErrorKind::Conflict { .. }
    ));
    assert!(matches!(
        err("ALTER QLOCAL(B) REPLACE"),
        ParseErrorKind::UnknownKeyword { .. }
    ));
}

#[test]
fn purge_nopurge_force() {
    assert_eq!(
        ok("DELETE QLOCAL(A) PURGE"),
        Command::DeleteQueue {
            queue_type: QueueType::Local,
            name: "A".into(),
            purge: true
        }
    );
    assert!(matches!(
        ok("DELETE QL(A) NOPURGE"),
        Command::DeleteQueue { purge: false, .. }
    ));
    assert!(matches!(
        ok("DELETE QL(A)"),
        Command::DeleteQueue { purge: false, .. }
    ));
    assert!(matches!(
        err("DELETE QALIAS(A) PURGE"),
        ParseErrorKind::UnknownKeyword { .. }
    ));
    assert!(matches!(
        ok("ALTER QLOCAL(A) NOSHARE FORCE"),
        Command::AlterQueue { force: true, .. }
    ));
    assert!(matches!(
        ok("ALTER QMGR FORCE DESCR('x')"),
        Command::AlterQmgr { force: true, .. }
    ));
}

#[test]
fn generic_names_only_on_display() {
    let Command::DisplayQueue { selection, .. } = ok("DISPLAY QLOCAL(APP.*)") else {
        panic!()
    };
    assert_eq!(selection.name, NamePattern::Prefix("APP.".into()));
    assert!(
        !selection.request.all,
        "generic name without attributes shows names only"
    );
    let Command::DisplayQueue { selection, .. } = ok("DISPLAY QUEUE(*)") else {
        panic!()
    };
    assert_eq!(selection.name, NamePattern::Prefix(String::new()));
    assert!(matches!(
        err("DEFINE QLOCAL(APP.*)"),
        ParseErrorKind::Generic(_)
    ));
    assert!(matches!(
        err("DISPLAY QLOCAL(A*B)"),
        ParseErrorKind::Generic(_)
    ));
    assert!(matches!(
        err("DELETE QLOCAL(*)"),
        ParseErrorKind::Generic(_)
    ));
}

#[test]
fn display_of_one_name_without_attributes_shows_all() {
    let Command::DisplayQueue { selection, .. } = ok("DIS QL(A)") else {
        panic!()
    };
    assert!(selection.request.all);
    let Command::DisplayQueue { selection, .. } = ok("DIS QL(A) MAXDEPTH NOSHARE curdepth") else {
        panic!()
    };
    assert!(!selection.request.all);
    assert_eq!(
        selection.request.keywords,
        vec!["MAXDEPTH", "SHARE", "CURDEPTH"]
    );
    let Command::DisplayQueue { selection, .. } = ok("DIS QL(A*) ALL") else {
        panic!()
    };
    assert!(selection.request.all);
}

#[test]
fn where_operators() {
    for (op_kw, op) in Op::ALL {
        let text = format!("DIS Q(*) WHERE(DESCR {op_kw} 'x*')");
        let Command::DisplayQueue { selection, .. } = ok(&text) else {
            panic!()
        };
        let f = selection.filter.expect("filter");
        assert_eq!((f.keyword, f.op), ("DESCR", *op));
        assert_eq!(f.value, FilterValue::Text("x*".into()));
    }
    let Command::DisplayQueue { selection, .. } = ok("DIS Q(*) WHERE(CURDEPTH GT 0)") else {
        panic!()
    };
    let f = selection.filter.expect("filter");
    assert_eq!(
        (f.keyword, f.op, f.value),
        ("CURDEPTH", Op::Gt, FilterValue::Int(0))
    );
    let Command::DisplayQueue { selection, .. } = ok("DIS QL(*) WHERE(share eq noshare)") else {
        panic!()
    };
    assert_eq!(
        selection.filter.expect("filter").value,
        FilterValue::Flag(false)
    );
    let Command::DisplayQueue { selection, .. } = ok("DIS QL(*) WHERE(PUT EQ disabled)") else {
        panic!()
    };
    assert_eq!(
        selection.filter.expect("filter").value,
        FilterValue::Text("DISABLED".into())
    );
}

#[test]
fn where_errors() {
    assert!(matches!(
        err("DIS Q(*) WHERE(CURDEPTH GT)"),
        ParseErrorKind::Where(_)
    ));
    assert!(matches!(
        err("DIS Q(*) WHERE(CURDEPTH ZZ 1)"),
        ParseErrorKind::Where(_)
    ));
    assert!(matches!(
        err("DIS Q(*) WHERE(CURDEPTH LK 1)"),
        ParseErrorKind::Operator { .. }
    ));
    assert!(matches!(
        err("DIS Q(*) WHERE(CURDEPTH GT x)"),
        ParseErrorKind::Where(_)
    ));
    assert!(matches!(
        err("DIS Q(*) WHERE(PUT GT ENABLED)"),
        ParseErrorKind::Operator { .. }
    ));
    assert!(matches!(
        err("DIS Q(*) WHERE(PUT EQ MAYBE)"),
        ParseErrorKind::BadOption { .. }
    ));
    assert!(matches!(
        err("DIS Q(*) WHERE(NOSUCH EQ 1)"),
        ParseErrorKind::UnknownKeyword { .. }
    ));
    assert!(matches!(
        err("DIS Q(*) WHERE(A EQ 1 2)"),
        ParseErrorKind::Where(_)
    ));
}

#[test]
fn display_queue_type_filter() {
    let Command::DisplayQueue { type_filter, .. } = ok("DIS QUEUE(*) TYPE(QALIAS)") else {
        panic!()
    };
    assert_eq!(type_filter, Some(QueueType::Alias));
    let Command::DisplayQueue { type_filter, .. } = ok("DIS QUEUE(*) TYPE(ALL)") else {
        panic!()
    };
    assert_eq!(type_filter, None);
    assert!(matches!(
        err("DIS QUEUE(*) TYPE(BOGUS)"),
        ParseErrorKind::BadOption { .. }
    ));
}

#[test]
fn unknown_keyword() {
    assert_eq!(
        err("DEFINE QLOCAL(A) MAXDPTH(5)"),
        ParseErrorKind::UnknownKeyword {
            keyword: "MAXDPTH".into(),
            object: "QLOCAL".into()
        }
    );
    let e = parse_command("DEFINE QLOCAL(A) MAXDPTH(5) SHARE").unwrap_err();
    assert_eq!(e.segment(), "DEFINE QLOCAL(A) MAXDPTH");
}

#[test]
fn value_out_of_range() {
    assert_eq!(
        err("DEFINE QLOCAL(A) DEFPRTY(10)"),
        ParseErrorKind::Attr(AttrError::OutOfRange {
            keyword: "DEFPRTY",
            value: 10,
            min: 0,
            max: 9
        })
    );
    assert!(matches!(
        err("DEFINE QLOCAL(A) MAXDEPTH(-1)"),
        ParseErrorKind::Attr(AttrError::OutOfRange { .. })
    ));
    assert!(matches!(
        err("DEFINE QLOCAL(A) MAXDEPTH(99999999999)"),
        ParseErrorKind::Attr(AttrError::OutOfRange { .. })
    ));
    assert!(matches!(
        err("DEFINE QLOCAL(A) MAXDEPTH(999999999999999999999999)"),
        ParseErrorKind::NumberTooLarge { .. }
    ));
}

#[test]
fn wrong_kind_of_value() {
    assert!(matches!(
        err("DEFINE QLOCAL(A) MAXDEPTH(LOTS)"),
        ParseErrorKind::Attr(AttrError::WrongKind {
            keyword: "MAXDEPTH",
            ..
        })
    ));
    assert!(matches!(
        err("DEFINE QLOCAL(A) PUT(MAYBE)"),
        ParseErrorKind::Attr(AttrError::BadKeyword { keyword: "PUT", .. })
    ));
    assert!(matches!(
        err("DEFINE QLOCAL(A) DESCR('a' 'b')"),
        ParseErrorKind::SingleValue { .. }
    ));
    assert!(matches!(
        err("DEFINE QLOCAL(A) MAXDEPTH"),
        ParseErrorKind::ValueRequired { .. }
    ));
    assert!(matches!(
        err("DEFINE QLOCAL(A) MAXDEPTH()"),
        ParseErrorKind::ValueRequired { .. }
    ));
    assert!(matches!(
        err(&format!("DEFINE QLOCAL(A) DESCR('{}')", "d".repeat(65))),
        ParseErrorKind::Attr(AttrError::TooLong {
            keyword: "DESCR",
            ..
        })
    ));
    assert!(matches!(
        err("DEFINE QLOCAL(A) BOQNAME('bad name')"),
        ParseErrorKind::Attr(AttrError::BadName {
            keyword: "BOQNAME",
            ..
        })
    ));
}

#[test]
fn attribute_not_applicable_to_the_type() {
    assert_eq!(
        err("DEFINE QALIAS(A) MAXDEPTH(5)"),
        ParseErrorKind::Attr(AttrError::NotApplicable {
            keyword: "MAXDEPTH",
            object: "QALIAS"
        })
    );
    assert!(matches!(
        err("DEFINE QLOCAL(A) TARGET(B)"),
        ParseErrorKind::Attr(AttrError::NotApplicable { .. })
    ));
    assert!(matches!(
        err("DEFINE QLOCAL(A) DEFTYPE(PERMDYN)"),
        ParseErrorKind::Attr(AttrError::NotApplicable {
            keyword: "DEFTYPE",
            ..
        })
    ));
    assert!(matches!(
        err("DEFINE QMODEL(A) DEFTYPE(PREDEFINED)"),
        ParseErrorKind::Attr(AttrError::BadKeyword { .. })
    ));
    assert!(matches!(
        ok("DEFINE QMODEL(A) DEFTYPE(PERMDYN)"),
        Command::DefineQueue { .. }
    ));
    assert!(matches!(
        err("DIS QALIAS(*) MAXDEPTH"),
        ParseErrorKind::UnknownKeyword { .. }
    ));
}

#[test]
fn read_only_attributes() {
    assert_eq!(
        err("DEFINE QLOCAL(A) CRDATE('2020-01-01')"),
        ParseErrorKind::Attr(AttrError::ReadOnly { keyword: "CRDATE" })
    );
    assert!(matches!(
        err("ALTER QMGR MAXPRTY(9)"),
        ParseErrorKind::Attr(AttrError::ReadOnly { .. })
    ));
    // Displaying them is fine.
    assert!(matches!(
        ok("DIS QMGR MAXPRTY CRDATE"),
        Command::DisplayQmgr { .. }
    ));
}

#[test]
fn duplicate_keywords() {
    assert!(matches!(
        err("DEFINE QLOCAL(A) MAXDEPTH(1) MAXDEPTH(2)"),
        ParseErrorKind::Duplicate { .. }
    ));
    assert!(matches!(
        err("DEFINE QLOCAL(A) SHARE NOSHARE"),
        ParseErrorKind::Duplicate { .. }
    ));
}

/// MQ: "Repeated parameters are not allowed" in any command (docs/mqsc.md: a duplicate
/// keyword is a syntax error), whatever the keyword is for: attributes requested by
/// DISPLAY, options such as ALL, FORCE, REPLACE and PURGE, status fields, WHERE.
#[test]
fn every_command_refuses_a_repeated_keyword() {
    for text in [
        "DISPLAY QMGR DESCR DESCR",
        "DIS QMGR ALL ALL",
        "DISPLAY QLOCAL(*) CURDEPTH MAXDEPTH CURDEPTH",
        "DISPLAY QUEUE(A) ALL DESCR ALL",
        "DISPLAY CHANNEL(*) MAXMSGL MAXMSGL",
        "DISPLAY LISTENER(*) PORT PORT",
        "DISPLAY LSSTATUS(*) PORT PORT",
        "DISPLAY QSTATUS(A) CURDEPTH CURDEPTH",
        "DISPLAY CONN(*) APPLTAG APPLTAG",
        "DISPLAY CHSTATUS(*) MSGS MSGS",
        "DISPLAY QMSTATUS STATUS STATUS",
        "DISPLAY QLOCAL(*) WHERE(CURDEPTH GT 1) WHERE(CURDEPTH GT 2)",
        "DEFINE QLOCAL(A) REPLACE REPLACE",
        "DEFINE QLOCAL(A) LIKE(B) LIKE(C)",
        "ALTER QLOCAL(A) FORCE FORCE",
        "ALTER QMGR FORCE FORCE",
        "DELETE QLOCAL(A) PURGE PURGE",
        "DEFINE CHANNEL(C) CHLTYPE(SVRCONN) CHLTYPE(SVRCONN)",
        "DEFINE LISTENER(L) TRPTYPE(TCP) PORT(1) PORT(2)",
        "STOP CHANNEL(C) MODE(FORCE) MODE(FORCE)",
    ] {
        let e = parse_command(text).expect_err(text);
        assert!(
            matches!(&e.kind, ParseErrorKind::Duplicate { .. }),
            "{text}: {:?}",
            e.kind
        );
        // The segment runmqsc prints ends at the second occurrence.
        assert!(e.segment().len() <= text.len(), "{text}");
    }
    // Two keywords for one parameter (a flag and its NO form) repeat it too.
    assert!(matches!(
        err("DISPLAY QLOCAL(*) SHARE NOSHARE"),
        ParseErrorKind::Duplicate { .. }
    ));
    // What is not repeated still parses.
    assert!(matches!(
        ok("DISPLAY QMGR DESCR ALL"),
        Command::DisplayQmgr { .. }
    ));
}

#[test]
fn bad_names() {
    let name48 = "Q".repeat(48);
    assert!(matches!(
        ok(&format!("DEFINE QLOCAL({name48})")),
        Command::DefineQueue { .. }
    ));
    let e = err(&format!("DEFINE QLOCAL({})", "Q".repeat(49)));
    assert!(matches!(e, ParseErrorKind::BadName { .. }), "{e:?}");
    assert!(e.to_string().contains("49 characters"), "{e}");
    assert!(matches!(
        err("DEFINE QLOCAL('a b')"),
        ParseErrorKind::BadName { .. }
    ));
    assert!(matches!(
        err("DEFINE QLOCAL('a-b')"),
        ParseErrorKind::BadName { .. }
    ));
    assert!(matches!(
        err("DEFINE QLOCAL"),
        ParseErrorKind::MissingName { .. }
    ));
    assert!(matches!(
        err("DEFINE QLOCAL()"),
        ParseErrorKind::MissingName { .. }
    ));
    let chl20 = "C".repeat(20);
    assert!(matches!(
        ok(&format!("DEFINE CHANNEL({chl20}) CHLTYPE(SVRCONN)")),
        Command::DefineChannel { .. }
    ));
    assert!(matches!(
        err(&format!(
            "DEFINE CHANNEL({}) CHLTYPE(SVRCONN)",
            "C".repeat(21)
        )),
        ParseErrorKind::BadName { .. }
    ));
    assert!(matches!(
        err("DEFINE QLOCAL(A) LIKE('x y')"),
        ParseErrorKind::BadName { .. }
    ));
}

#[test]
fn structural_errors() {
    assert!(matches!(
        err("FROB QLOCAL(A)"),
        ParseErrorKind::UnknownCommand(_)
    ));
    assert!(matches!(
        err("DEFINE"),
        ParseErrorKind::MissingObject { .. }
    ));
    assert!(matches!(
        err("DEFINE WIDGET(A)"),
        ParseErrorKind::UnknownObject { .. }
    ));
    assert!(matches!(
        err("CLEAR QALIAS(A)"),
        ParseErrorKind::UnknownObject { .. }
    ));
    assert!(matches!(
        err("DEFINE QUEUE(A)"),
        ParseErrorKind::UnknownObject { .. }
    ));
    assert!(matches!(
        err("DELETE QUEUE(A)"),
        ParseErrorKind::UnknownObject { .. }
    ));
    assert!(matches!(
        err("DEFINE QLOCAL(A) DESCR('abc"),
        ParseErrorKind::UnclosedQuote
    ));
    assert!(matches!(
        err("DEFINE QLOCAL(A) DESCR(abc"),
        ParseErrorKind::UnclosedParen
    ));
    assert!(matches!(
        err("DEFINE QLOCAL(A) DESCR((a))"),
        ParseErrorKind::Unexpected(_)
    ));
    assert!(matches!(
        err("DEFINE QLOCAL(A) 'x'"),
        ParseErrorKind::Unexpected(_)
    ));
    assert!(matches!(err("END NOW"), ParseErrorKind::Unexpected(_)));
    assert!(matches!(err(""), ParseErrorKind::Empty));
}

#[test]
fn channels_need_chltype_on_define() {
    assert_eq!(
        err("DEFINE CHANNEL(C)"),
        ParseErrorKind::Missing {
            command: "DEFINE CHANNEL".into(),
            keyword: "CHLTYPE".into()
        }
    );
    let cmd = ok("DEFINE CHANNEL(C) HBINT(30) CHLTYPE(svrconn) REPLACE");
    assert!(matches!(
        cmd,
        Command::DefineChannel {
            channel_type: ChannelType::Svrconn,
            replace: true,
            ..
        }
    ));
    assert!(matches!(
        ok("DEFINE CHANNEL(C) CHLTYPE(SDR)"),
        Command::DefineChannel {
            channel_type: ChannelType::Sender,
            ..
        }
    ));
    assert!(matches!(
        err("DEFINE CHANNEL(C) CHLTYPE(BOGUS)"),
        ParseErrorKind::BadOption { .. }
    ));
    assert!(matches!(
        ok("DIS CHL(*) CHLTYPE(SVRCONN)"),
        Command::DisplayChannel {
            channel_type: Some(ChannelType::Svrconn),
            ..
        }
    ));
    assert!(matches!(
        ok("ALTER CHANNEL(C) SHARECNV(1)"),
        Command::AlterChannel { .. }
    ));
}

#[test]
fn status_commands() {
    let Command::DisplayQueueStatus {
        status_type,
        selection,
    } = ok("DIS QSTATUS(A) TYPE(HANDLE)")
    else {
        panic!()
    };
    assert_eq!(status_type, QueueStatusType::Handle);
    assert!(selection.request.all);
    let Command::DisplayQueueStatus {
        status_type,
        selection,
    } = ok("DIS QS(A*) CURDEPTH UNCOM LPUTDATE MSGAGE")
    else {
        panic!()
    };
    assert_eq!(status_type, QueueStatusType::Queue);
    assert_eq!(
        selection.request.keywords,
        vec!["CURDEPTH", "UNCOM", "LPUTDATE", "MSGAGE"]
    );
    assert!(matches!(
        err("DIS QS(A) TYPE(HANDLE) CURDEPTH"),
        ParseErrorKind::UnknownKeyword { .. }
    ));
    assert!(matches!(
        err("DIS QS(A) TYPE(BOTH)"),
        ParseErrorKind::BadOption { .. }
    ));
    assert!(matches!(
        ok("DIS CONN(*) TYPE(ALL) WHERE(APPLTAG EQ 'app')"),
        Command::DisplayConnection {
            conn_type: ConnType::All,
            ..
        }
    ));
    assert!(matches!(
        ok("DIS CONN(*)"),
        Command::DisplayConnection {
            conn_type: ConnType::Conn,
            ..
        }
    ));
    assert!(matches!(
        ok("DIS LSSTATUS(*) PORT"),
        Command::DisplayListenerStatus { .. }
    ));
    assert!(matches!(
        ok("START LISTENER(L)"),
        Command::StartListener { .. }
    ));
    assert!(matches!(ok("STOP LSTR(L)"), Command::StopListener { .. }));
}

#[test]
fn remote_queues_and_unsupported_commands_parse() {
    assert!(matches!(
        ok("DEFINE QREMOTE(R) RNAME(X) RQMNAME(QM2) XMITQ(QM2)"),
        Command::DefineQueue { queue_type: QueueType::Remote, ref name, .. } if name == "R"
    ));
    assert!(matches!(
        ok("DEF QR(R)"),
        Command::DefineQueue {
            queue_type: QueueType::Remote,
            ..
        }
    ));
    assert!(matches!(
        ok("ALTER QREMOTE(R) XMITQ(' ')"),
        Command::AlterQueue {
            queue_type: QueueType::Remote,
            ..
        }
    ));
    assert!(matches!(
        ok("DELETE QR(R)"),
        Command::DeleteQueue {
            queue_type: QueueType::Remote,
            ..
        }
    ));
    assert!(matches!(
        ok("DIS QREMOTE(*) RNAME RQMNAME XMITQ"),
        Command::DisplayQueue { .. }
    ));
    // Attributes of other queue types do not apply, nor PURGE.
    assert!(parse_command("DEFINE QREMOTE(R) MAXDEPTH(5)").is_err());
    assert!(parse_command("DEFINE QLOCAL(L) RNAME(X)").is_err());
    assert!(parse_command("DELETE QREMOTE(R) PURGE").is_err());
    assert!(matches!(
        ok("DEFINE SUB(S) TOPICSTR('a/b')"),
        Command::DefineSubscription { .. }
    ));
    assert!(matches!(
        ok("DEFINE SERVICE(N)"),
        Command::Unsupported { .. }
    ));
    assert!(matches!(
        ok("DEFINE NAMELIST(N)"),
        Command::DefineNamelist { .. }
    ));
    assert!(matches!(
        ok("PING CHANNEL(C)"),
        Command::OperateChannel { .. }
    ));
    assert_eq!(ok("PING QMGR"), Command::PingQmgr);
}

#[test]
fn authority_record_commands_parse_with_case_kept_entities() {
    use ferry_mqsc::command::{AuthRecKey, AuthRecMatch};
    use ferry_security::oam::{Authority, AuthorityName, EntityType, ProfileObjectType};
    match ok("SET AUTHREC PROFILE('App.**') OBJTYPE(QUEUE) GROUP('Apps') AUTHADD(PUT,GET) AUTHRMV(ALLADM)") {
        Command::SetAuthRec { key, add, remove } => {
            assert_eq!(
                key,
                AuthRecKey {
                    profile: "App.**".into(),
                    object_type: ProfileObjectType::Queue,
                    entity_type: EntityType::Group,
                    entity: "Apps".into(),
                }
            );
            assert_eq!(
                add,
                [
                    AuthorityName::One(Authority::Put),
                    AuthorityName::One(Authority::Get)
                ]
            );
            assert_eq!(remove, [AuthorityName::AllAdm]);
        }
        other => panic!("{other:?}"),
    }
    // The queue manager's records are its `self` profile, whatever PROFILE says.
    match ok("SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('app') AUTHADD(CONNECT)") {
        Command::SetAuthRec { key, .. } => assert_eq!(key.profile, "self"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        ok("DISPLAY AUTHREC PRINCIPAL('app') MATCH(MEMBERSHIP)"),
        Command::DisplayAuthRec {
            matching: AuthRecMatch::Membership,
            ..
        }
    ));
    assert!(matches!(
        ok("DIS ENTAUTH GROUP('apps') OBJNAME(Q1) OBJTYPE(QUEUE)"),
        Command::DisplayEntAuth { .. }
    ));
    for bad in [
        "SET AUTHREC PROFILE(A) OBJTYPE(QUEUE) AUTHADD(PUT)",
        "SET AUTHREC PROFILE(A) OBJTYPE(QUEUE) PRINCIPAL('a') GROUP('g') AUTHADD(PUT)",
        "SET AUTHREC PROFILE(A) OBJTYPE(QUEUE) PRINCIPAL('a')",
        "SET AUTHREC PROFILE(A) OBJTYPE(NOSUCH) PRINCIPAL('a') AUTHADD(PUT)",
        "SET AUTHREC PROFILE(A) OBJTYPE(QUEUE) PRINCIPAL('a') AUTHADD(FLY)",
        "DISPLAY AUTHREC GROUP('g') MATCH(MEMBERSHIP)",
        "DISPLAY ENTAUTH PRINCIPAL('a') OBJTYPE(QUEUE)",
    ] {
        assert!(ferry_mqsc::parse_command(bad).is_err(), "{bad}");
    }
}

#[test]
fn set_chlauth_takes_each_types_own_parameters() {
    use ferry_security::chlauth::{ChlauthType, SetAction, UserSource};
    match ok("SET CHLAUTH('App.*') TYPE(USERMAP) CLNTUSER('Alice') USERSRC(MAP) MCAUSER('a1') WARN(YES) ACTION(REPLACE)") {
        Command::SetChlauth { record, action } => {
            assert_eq!(action, SetAction::Replace);
            assert_eq!(record.profile, "App.*", "quoted: case kept");
            assert_eq!(record.kind, ChlauthType::UserMap);
            assert_eq!(record.client_user, "Alice");
            assert_eq!(record.mca_user, "a1");
            assert_eq!(record.user_source, UserSource::Map);
            assert!(record.warn);
        }
        other => panic!("{other:?}"),
    }
    match ok("SET CHLAUTH('*') TYPE(BLOCKUSER) USERLIST('nobody', '*MQADMIN')") {
        Command::SetChlauth { record, action } => {
            assert_eq!(action, SetAction::Add);
            assert_eq!(record.user_list, ["nobody", "*MQADMIN"]);
        }
        other => panic!("{other:?}"),
    }
    for bad in [
        "SET CHLAUTH('*') TYPE(BLOCKUSER) ADDRESS('1.2.3.4')",
        "SET CHLAUTH('*') TYPE(ADDRESSMAP) USERLIST('x')",
        "SET CHLAUTH('*') TYPE(NOSUCH)",
        "SET CHLAUTH('*') USERLIST('x')",
        "SET CHLAUTH('*') TYPE(ADDRESSMAP) ADDRESS('*') USERSRC(SOMETIMES)",
        "SET CHLAUTH('*') TYPE(ADDRESSMAP) ADDRESS('*') ACTION(REMOVEALL)",
        "SET CHLAUTH TYPE(BLOCKUSER) USERLIST('x')",
        "DISPLAY CHLAUTH(APP.*) MATCH(RUNCHECK) ADDRESS('1.2.3.4')",
        "DISPLAY CHLAUTH(APP) ADDRESS('1.2.3.4')",
    ] {
        assert!(
            ferry_mqsc::parse_command(bad).is_err(),
            "{bad} must be refused"
        );
    }
}
