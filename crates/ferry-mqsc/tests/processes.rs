//! DEFINE, ALTER, DELETE and DISPLAY PROCESS against the in-memory target: defaults from
//! SYSTEM.DEFAULT.PROCESS, APPLTYPE(DEF) stored as UNIX, LIKE and REPLACE, and the
//! refusals (unknown APPLTYPE, user-defined numbers, too long APPLICID, missing objects).

use ferry_mqsc::testing::MemoryTarget;
use ferry_mqsc::{execute, parse_command, CommandResult};
use ferry_objects::process::ApplType;

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

#[test]
fn define_display_alter_delete() {
    let mut t = MemoryTarget::with_defaults("QM1");
    t.now_ms = 1_709_212_455_000; // 2024-02-29 13:14:15 UTC
    assert_eq!(
        ok(
            &mut t,
            "DEFINE PROCESS(APP.PROC) APPLICID('/opt/app/serve --fast') USERDATA('u d') ENVRDATA('&') DESCR('server')"
        ),
        vec!["FRY8010I: Ferry process created."]
    );
    let p = t.processes.get("APP.PROC").expect("defined");
    assert_eq!(p.attributes.appl_type, ApplType::Unix);
    assert_eq!(p.attributes.appl_id, "/opt/app/serve --fast");
    assert_eq!(p.attributes.alteration_date, "2024-02-29");

    let shown = ok(&mut t, "DIS PRO(APP.*) ALL").join("\n");
    assert!(
        shown.starts_with("FRY8407I: Display process details."),
        "{shown}"
    );
    for field in [
        "PROCESS(APP.PROC)",
        "APPLTYPE(UNIX)",
        "APPLICID(/opt/app/serve --fast)",
        "USERDATA(u d)",
        "ENVRDATA(&)",
        "ALTDATE(2024-02-29)",
    ] {
        assert!(shown.contains(field), "{field} in {shown}");
    }

    ok(
        &mut t,
        "ALTER PROCESS(APP.PROC) APPLTYPE(WINDOWSNT) USERDATA('changed')",
    );
    let p = t.processes.get("APP.PROC").unwrap();
    assert_eq!(p.attributes.appl_type, ApplType::WindowsNt);
    assert_eq!(p.attributes.user_data, "changed");
    assert_eq!(p.attributes.appl_id, "/opt/app/serve --fast", "kept");

    assert!(fails(&mut t, "DEFINE PROCESS(APP.PROC)").contains("FRY8150E"));
    ok(&mut t, "DEFINE PROCESS(APP.PROC2) LIKE(APP.PROC)");
    assert_eq!(
        t.processes.get("APP.PROC2").unwrap().attributes.user_data,
        "changed"
    );
    ok(&mut t, "DEFINE PROCESS(APP.PROC2) APPLTYPE(DEF) REPLACE");
    assert_eq!(
        t.processes.get("APP.PROC2").unwrap().attributes.appl_type,
        ApplType::Unix,
        "DEF is the platform's type, stored as such"
    );
    assert_eq!(
        t.processes.get("APP.PROC2").unwrap().attributes.user_data,
        "",
        "REPLACE without LIKE starts from SYSTEM.DEFAULT.PROCESS"
    );

    assert_eq!(
        ok(&mut t, "DELETE PROCESS(APP.PROC2)"),
        vec!["FRY8013I: Ferry process deleted."]
    );
    assert!(fails(&mut t, "DELETE PROCESS(APP.PROC2)").contains("FRY8147E"));
    assert!(fails(&mut t, "ALTER PROCESS(NOPE) USERDATA(x)").contains("FRY8147E"));
}

#[test]
fn bad_values_are_refused() {
    let mut t = MemoryTarget::with_defaults("QM1");
    let e = fails(&mut t, "DEFINE PROCESS(P) APPLTYPE(SOLARIS)");
    assert!(e.contains("APPLTYPE"), "{e}");
    let e = fails(&mut t, "DEFINE PROCESS(P) APPLTYPE(70000)");
    assert!(e.contains("FRY9002E"), "{e}");
    let long = "x".repeat(257);
    fails(&mut t, &format!("DEFINE PROCESS(P) APPLICID('{long}')"));
    fails(&mut t, "DEFINE PROCESS(P) NOSUCH(1)");
    fails(&mut t, "DEFINE PROCESS(P) ALTDATE(2024-01-01)");
    assert!(!t.processes.contains_key("P"));
}
