//! DEFINE, ALTER, DELETE and DISPLAY NAMELIST against the in-memory target, and the
//! cluster attributes that name namelists (CLUSNL, REPOSNL, SUSPEND QMGR CLUSNL).

use ferry_mqsc::testing::MemoryTarget;
use ferry_mqsc::{execute, parse_command, CommandResult};

fn run(t: &mut MemoryTarget, text: &str) -> CommandResult {
    let cmd = parse_command(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    execute(&cmd, t)
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

#[test]
fn namelists_are_defined_altered_displayed_and_deleted_as_in_mq() {
    let mut t = MemoryTarget::with_defaults("QM1");
    assert_eq!(
        ok(
            &mut t,
            "DEFINE NAMELIST(CLUSTERS) NAMES(CLUS1, CLUS2) DESCR('both clusters')"
        ),
        vec!["FRY8552I: Ferry namelist created."]
    );
    let lines = ok(&mut t, "DISPLAY NAMELIST(CLUSTERS) ALL");
    assert_eq!(lines[0], "FRY8550I: Display namelist details.");
    let text = lines.join("\n");
    assert!(text.contains("NAMELIST(CLUSTERS)"), "{text}");
    assert!(text.contains("NAMCOUNT(2)"), "{text}");
    assert!(text.contains("NAMES(CLUS1,CLUS2)"), "{text}");
    assert!(text.contains("DESCR(both clusters)"), "{text}");
    assert!(text.contains("ALTDATE("), "{text}");

    // NOREPLACE is the default; REPLACE and LIKE as for every object.
    fails(&mut t, "DEFINE NAMELIST(CLUSTERS)");
    ok(&mut t, "DEFINE NAMELIST(COPY) LIKE(CLUSTERS)");
    let text = ok(&mut t, "DISPLAY NL(COPY) NAMES").join("\n");
    assert!(text.contains("NAMES(CLUS1,CLUS2)"), "{text}");
    ok(&mut t, "DEFINE NAMELIST(COPY) NAMES() REPLACE");
    let text = ok(&mut t, "DISPLAY NAMELIST(COPY) NAMCOUNT").join("\n");
    assert!(text.contains("NAMCOUNT(0)"), "{text}");
    assert_eq!(
        ok(&mut t, "ALTER NAMELIST(COPY) NAMES(CLUS3)"),
        vec!["FRY8551I: Ferry namelist changed."]
    );
    let text = ok(&mut t, "DISPLAY NAMELIST(COPY) WHERE(NAMCOUNT EQ 1)").join("\n");
    assert!(text.contains("NAMELIST(COPY)"), "{text}");

    // The shipped namelists are there; a generic DISPLAY lists them too.
    let text = ok(&mut t, "DISPLAY NAMELIST(SYSTEM.*)").join("\n");
    assert!(text.contains("NAMELIST(SYSTEM.DEFAULT.NAMELIST)"), "{text}");
    assert!(
        text.contains("NAMELIST(SYSTEM.QPUBSUB.QUEUE.NAMELIST)"),
        "{text}"
    );

    assert_eq!(
        ok(&mut t, "DELETE NAMELIST(COPY)"),
        vec!["FRY8553I: Ferry namelist deleted."]
    );
    fails(&mut t, "DELETE NAMELIST(COPY)");
}

#[test]
fn bad_names_and_zos_only_parameters_are_refused() {
    let refused = |text: &str| parse_command(text).expect_err(text).to_string();
    assert!(refused("DEFINE NAMELIST(N) NLTYPE(CLUSTER)").contains("z/OS"));
    assert!(refused("DEFINE NAMELIST(N) NAMES(GOOD, BAD!NAME)").contains("NAMES"));
    let long = "X".repeat(49);
    assert!(refused(&format!("DEFINE NAMELIST(N) NAMES({long})")).contains("NAMES"));
    assert!(refused("SUSPEND QMGR CLUSTER(A) CLUSNL(B)").contains("CLUSNL"));
}

#[test]
fn cluster_objects_name_namelists() {
    let mut t = MemoryTarget::with_defaults("QM1");
    ok(&mut t, "DEFINE NAMELIST(BOTH) NAMES(CLUS1, CLUS2)");
    ok(&mut t, "ALTER QMGR REPOSNL(BOTH)");
    let text = ok(&mut t, "DISPLAY QMGR REPOSNL").join("\n");
    assert!(text.contains("REPOSNL(BOTH)"), "{text}");
    ok(
        &mut t,
        "DEFINE CHANNEL(TO.QM1) CHLTYPE(CLUSRCVR) CONNAME('localhost(1414)') CLUSNL(BOTH)",
    );
    ok(&mut t, "DEFINE QLOCAL(APP.Q) CLUSNL(BOTH)");
    let text = ok(&mut t, "DISPLAY QLOCAL(APP.Q) CLUSNL CLUSTER").join("\n");
    assert!(text.contains("CLUSNL(BOTH)"), "{text}");
    // SUSPEND QMGR CLUSNL: each cluster of the namelist in turn (the in-memory target has
    // no cluster-receivers, so the first refuses); an unknown namelist is not found.
    let lines = fails(&mut t, "SUSPEND QMGR CLUSNL(BOTH)");
    assert!(lines.join(" ").contains("CLUS1"), "{lines:?}");
    let lines = fails(&mut t, "RESUME QMGR CLUSNL(NONE.SUCH)");
    assert!(lines[0].contains("NONE.SUCH"), "{lines:?}");
}
