//! The runtime's modules are layered: a test reads their sources and fails on an import
//! circle, naming it.
//!
//! A module is a file under `src/runtime/` or a directory there (`amqp/`: its files are
//! one module). A module imports another when its code (not its comments) names
//! `super::other` (`super::super::other` from a file inside a directory) or
//! `crate::runtime::other`. `runtime/mod.rs`, which builds the server from every module,
//! is the top and is left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Imports that still close a circle, each with what will remove it. Each must still be
/// there (the test says when one can go), and no other circle may appear. None today.
const ALLOWED: &[(&str, &str, &str)] = &[];

/// The protocols: modules of one kind of connection each. The rest of the runtime (the
/// server, the log driver, the command server, the endpoints) reaches them only through
/// the `Connection` trait and the endpoints registered in `runtime/mod.rs`.
const PROTOCOLS: &[&str] = &["native", "amqp"];

/// Every runtime module and the runtime modules it imports.
fn import_graph(runtime: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files: Vec<(String, String, bool)> = Vec::new(); // (module, source, nested)
    for entry in std::fs::read_dir(runtime).expect("src/runtime is readable") {
        let path = entry.expect("a directory entry").path();
        let name = path
            .file_stem()
            .and_then(|n| n.to_str())
            .expect("a UTF-8 file name")
            .to_string();
        if path.is_dir() {
            for inner in std::fs::read_dir(&path).expect("a readable module directory") {
                let inner = inner.expect("a directory entry").path();
                if inner.extension().is_some_and(|e| e == "rs") {
                    let nested = inner.file_name().is_some_and(|n| n != "mod.rs");
                    let source = std::fs::read_to_string(&inner).expect("a readable source");
                    files.push((name.clone(), source, nested));
                }
            }
        } else if path.extension().is_some_and(|e| e == "rs") && name != "mod" {
            let source = std::fs::read_to_string(&path).expect("a readable source");
            files.push((name, source, false));
        }
    }
    let modules: BTreeSet<String> = files.iter().map(|(m, _, _)| m.clone()).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = modules
        .iter()
        .map(|m| (m.clone(), BTreeSet::new()))
        .collect();
    for (module, source, nested) in &files {
        let parent = if *nested { "super::super::" } else { "super::" };
        for line in source.lines() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            for prefix in [parent, "crate::runtime::"] {
                for (at, _) in code.match_indices(prefix) {
                    // `super::super::x` also contains `super::x`: count it once, as written.
                    if prefix == "super::" && code[..at].ends_with("super::") {
                        continue;
                    }
                    let rest = &code[at + prefix.len()..];
                    let target: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if modules.contains(&target) && target != *module {
                        graph
                            .get_mut(module)
                            .expect("every module is in the graph")
                            .insert(target);
                    }
                }
            }
        }
    }
    graph
}

/// The circles of `graph`: its strongly connected components of more than one module.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    let reaches = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_string()];
        while let Some(m) = stack.pop() {
            for next in &graph[&m] {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|m| (m, reaches(m))).collect();
    let mut found: Vec<BTreeSet<String>> = Vec::new();
    for m in graph.keys() {
        let component: BTreeSet<String> = reach[m]
            .iter()
            .filter(|other| reach[*other].contains(m))
            .cloned()
            .collect();
        if component.len() > 1 && !found.contains(&component) {
            found.push(component);
        }
    }
    found
}

#[test]
fn runtime_modules_import_each_other_without_a_circle() {
    let runtime = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/runtime");
    let mut graph = import_graph(&runtime);
    assert!(
        graph.len() > 5 && graph["server"].contains("clock"),
        "the reader found the runtime's modules and imports: {graph:?}"
    );
    for (from, to, why) in ALLOWED {
        let edges = graph
            .get_mut(*from)
            .expect("an allowed import's module exists");
        assert!(
            edges.remove(*to),
            "{from} no longer imports {to}: remove it from ALLOWED (it was there because {why})"
        );
    }
    let found = circles(&graph);
    let listed: Vec<String> = found
        .iter()
        .map(|c| {
            let edges: Vec<String> = c
                .iter()
                .flat_map(|m| {
                    graph[m]
                        .iter()
                        .filter(|t| c.contains(*t))
                        .map(move |t| format!("{m} -> {t}"))
                })
                .collect();
            edges.join(", ")
        })
        .collect();
    assert!(
        found.is_empty(),
        "runtime modules import each other in a circle: {}",
        listed.join("; ")
    );
}

#[test]
fn only_the_protocols_name_a_protocol() {
    let runtime = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/runtime");
    let graph = import_graph(&runtime);
    for protocol in PROTOCOLS {
        assert!(
            graph.contains_key(*protocol),
            "no runtime module {protocol}"
        );
    }
    let mut wrong = Vec::new();
    for (module, imports) in &graph {
        if PROTOCOLS.contains(&module.as_str()) {
            continue;
        }
        for protocol in PROTOCOLS.iter().filter(|p| imports.contains(**p)) {
            wrong.push(format!("{module} -> {protocol}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "runtime modules outside the protocols import one (a new protocol would have to \
         edit them): {}",
        wrong.join(", ")
    );
}

#[test]
fn a_circle_is_found_and_named() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(m, ts)| (m.to_string(), ts.into_iter().map(String::from).collect()))
    .collect();
    let found = circles(&graph);
    assert_eq!(found.len(), 1);
    assert_eq!(
        found[0],
        ["a", "b", "c"].into_iter().map(String::from).collect()
    );
}

#[test]
fn a_graph_without_a_circle_has_none() {
    let graph: BTreeMap<String, BTreeSet<String>> = [("a", vec!["b"]), ("b", vec![])]
        .into_iter()
        .map(|(m, ts)| (m.to_string(), ts.into_iter().map(String::from).collect()))
        .collect();
    assert!(circles(&graph).is_empty());
}
