//! Every FRY message id written anywhere in the repository (code, tests, docs, scripts)
//! is in the table, with the severity the table gives it: a message printed from a
//! literal, or a doc quoting a renumbered id, fails here.

use ferry_messages::{by_number, Severity};
use std::path::{Path, PathBuf};

/// Directories never scanned: build output, version control, vendored trees.
const SKIPPED: &[&str] = &["target", ".git", "node_modules", "perf-results"];

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() {
            if !SKIPPED.contains(&name.as_ref()) && !name.starts_with('.') {
                files(&path, out);
            }
        } else {
            out.push(path);
        }
    }
}

/// Each `FRYnnnn` in `text` with the letter after it, if any.
fn ids(text: &str) -> Vec<(u32, Option<char>)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(found) = text[at..].find("FRY") {
        let start = at + found + 3;
        at = start;
        let digits = &bytes[start..(start + 4).min(bytes.len())];
        if digits.len() < 4 || !digits.iter().all(u8::is_ascii_digit) {
            continue;
        }
        // Five digits, or an id glued to more letters, is not an id.
        let after = bytes.get(start + 4).copied().map(char::from);
        if after.is_some_and(|c| c.is_ascii_digit()) {
            continue;
        }
        let letter = after.filter(|c| c.is_ascii_alphabetic());
        if letter.is_some()
            && bytes
                .get(start + 5)
                .is_some_and(|b| b.is_ascii_alphanumeric())
        {
            continue;
        }
        let number = text[start..start + 4].parse().unwrap_or(0);
        out.push((number, letter));
    }
    out
}

#[test]
fn every_id_in_the_repository_is_in_the_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut all = Vec::new();
    files(&root, &mut all);
    let mut wrong = Vec::new();
    let mut seen = 0;
    for path in all {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue; // not text
        };
        for (number, letter) in ids(&text) {
            seen += 1;
            let shown = path.strip_prefix(&root).unwrap_or(&path).display();
            match (by_number(number), letter) {
                (None, _) => wrong.push(format!(
                    "{shown}: FRY{number:04}{} is not in the table",
                    letter.map(String::from).unwrap_or_default()
                )),
                (Some(m), Some(l)) if Severity::from_letter(l) != Some(m.severity) => wrong.push(
                    format!("{shown}: FRY{number:04}{l} is {} in the table", m.id()),
                ),
                _ => {}
            }
        }
    }
    assert!(
        seen > 100,
        "the scan found only {seen} ids: is the root right?"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_scanner_finds_ids_and_skips_other_words() {
    assert_eq!(
        ids("FRY8006I: ok; 9504, FRY9504E and FRY7234 but not FRYERR01.LOG, FRY12345, FRY9xxx"),
        vec![(8006, Some('I')), (9504, Some('E')), (7234, None)]
    );
}
