//! The deployment files against the binary they deploy: deploy/Containerfile's
//! invariants (a multi-stage build, a non-root USER, one VOLUME for the data, the ports,
//! an ENTRYPOINT and HEALTHCHECK that are real `ferry` commands), and the plain
//! Kubernetes manifests (deploy/kubernetes, rendered from the Helm chart; deploy/test.sh
//! keeps them equal to it and validates both) agreeing with the image: the same command,
//! probes, ports, volume and user.
//!
//! No container engine runs here, so the image is not built: this checks what can be
//! checked without one.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::*;

fn repo_file(path: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The Containerfile's instructions: keyword (upper case) and arguments, continuation
/// lines joined, comments dropped.
fn instructions(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let t = line.trim();
        if current.is_empty() && (t.is_empty() || t.starts_with('#')) {
            continue;
        }
        if let Some(part) = t.strip_suffix('\\') {
            current.push_str(part);
            current.push(' ');
            continue;
        }
        current.push_str(t);
        let (k, rest) = current.split_once(' ').unwrap_or((current.as_str(), ""));
        out.push((k.to_ascii_uppercase(), rest.trim().to_string()));
        current.clear();
    }
    out
}

/// The words of an exec-form (JSON array) instruction.
fn exec_form(args: &str) -> Vec<String> {
    let args = args.trim();
    assert!(
        args.starts_with('[') && args.ends_with(']'),
        "not in exec form: {args}"
    );
    serde_json::from_str(args).unwrap_or_else(|e| panic!("{args}: {e}"))
}

fn last<'a>(all: &'a [(String, String)], keyword: &str) -> &'a str {
    all.iter()
        .rev()
        .find(|(k, _)| k == keyword)
        .map(|(_, a)| a.as_str())
        .unwrap_or_else(|| panic!("no {keyword} in deploy/Containerfile"))
}

#[test]
fn the_containerfile_runs_ferry_as_non_root_with_one_volume() {
    let all = instructions(&repo_file("deploy/Containerfile"));
    let froms: Vec<&str> = all
        .iter()
        .filter(|(k, _)| k == "FROM")
        .map(|(_, a)| a.as_str())
        .collect();
    assert_eq!(
        froms.len(),
        2,
        "a build stage and a runtime stage: {froms:?}"
    );
    assert!(froms[0].contains(" AS build"), "{froms:?}");
    assert!(
        all.iter()
            .any(|(k, a)| k == "RUN" && a.contains("cargo build --release --locked")),
        "the build stage builds the release binaries"
    );
    assert!(
        all.iter()
            .any(|(k, a)| k == "COPY" && a.starts_with("--from=build")),
        "the runtime stage takes the binaries only"
    );
    // The last USER (the runtime's) is a non-root numeric uid, IBM's 1001.
    let user = last(&all, "USER");
    assert_eq!(user, "1001");
    // One volume, FERRY_HOME: data and recovery logs.
    let volume = exec_form(last(&all, "VOLUME"));
    assert_eq!(volume, ["/var/ferry"]);
    assert!(
        all.iter()
            .any(|(k, a)| k == "ENV" && a.contains("FERRY_HOME=/var/ferry")),
        "FERRY_HOME is the volume"
    );
    let mut ports: Vec<&str> = last(&all, "EXPOSE").split_whitespace().collect();
    ports.sort_unstable();
    assert_eq!(ports, ["1414", "5672", "9443"]);

    // ENTRYPOINT and HEALTHCHECK name real commands of this binary.
    let entry = exec_form(last(&all, "ENTRYPOINT"));
    assert_eq!(entry, ["ferry", "runmqserver"]);
    let help = Command::new(bin())
        .args(&entry[1..])
        .arg("--help")
        .output()
        .expect("ferry");
    assert!(help.status.success(), "{}", stderr(&help));
    assert!(stdout(&help).contains("--config-dir"), "{}", stdout(&help));
    let health = last(&all, "HEALTHCHECK");
    let cmd = exec_form(&health[health.find("CMD ").expect("HEALTHCHECK CMD") + 4..]);
    assert_eq!(cmd, ["ferry", "status", "--healthy"]);
    // Run against an empty volume: the probe's "cannot tell" status, IBM's 2.
    let dir = tempfile::tempdir().expect("temp dir");
    let out = Command::new(bin())
        .args(&cmd[1..])
        .env("FERRY_HOME", dir.path())
        .env("MQ_QMGR_NAME", "QM1")
        .output()
        .expect("ferry");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn the_plain_manifests_run_the_image_as_the_containerfile_says() {
    let manifest = repo_file("deploy/kubernetes/ferry.yaml");
    for wanted in [
        "kind: StatefulSet",
        "kind: Service",
        "kind: PodDisruptionBudget",
        "kind: ConfigMap",
        "replicas: 1",
        "volumeClaimTemplates:",
        r#"command: ["ferry", "runmqserver"]"#,
        r#"command: ["ferry", "status", "--ready"]"#,
        r#"command: ["ferry", "status", "--healthy"]"#,
        "mountPath: /var/ferry",
        "mountPath: /etc/ferry",
        "containerPort: 1414",
        "containerPort: 5672",
        "containerPort: 9443",
        "runAsNonRoot: true",
        "runAsUser: 1001",
        "name: MQ_QMGR_NAME",
        "name: MQ_APP_PASSWORD",
    ] {
        assert!(
            manifest.contains(wanted),
            "deploy/kubernetes/ferry.yaml lacks {wanted:?}"
        );
    }
    // The configuration directory the manifests mount is where the entry point reads.
    let containerfile = repo_file("deploy/Containerfile");
    assert!(containerfile.contains("FERRY_CONFIG_DIRS=/etc/ferry"));
}
