//! The JSON of a run: the whole [`Document`], pretty-printed. Reading accepts it and
//! also the single-series file that `ferry perf rr-cc --json` wrote before documents
//! existed (one [`RunReport`]), so old results can still be re-rendered.

use std::path::Path;

use super::Document;
use crate::machine::Machine;
use crate::report::RunReport;

/// Writes `doc` to `path`.
pub fn write(doc: &Document, path: &Path) -> Result<(), String> {
    let text = to_string(doc)?;
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// `doc` as pretty JSON with a final newline.
pub fn to_string(doc: &Document) -> Result<String, String> {
    serde_json::to_string_pretty(doc)
        .map(|t| t + "\n")
        .map_err(|e| format!("cannot encode the results: {e}"))
}

/// Parses a document (or a single series) from JSON text; `name` is used in messages.
pub fn parse(text: &str, name: &str) -> Result<Document, String> {
    match serde_json::from_str::<Document>(text) {
        Ok(d) => Ok(d),
        Err(doc_err) => match serde_json::from_str::<RunReport>(text) {
            Ok(run) => Ok(Document {
                format: super::FORMAT,
                title: run.test.clone(),
                created: String::new(),
                command: String::new(),
                machine: Machine::default(),
                series: vec![run],
                charts: Vec::new(),
            }),
            Err(_) => Err(format!(
                "{name} is not the JSON of a ferry perf run: {doc_err}"
            )),
        },
    }
}

/// Reads a document from `path`.
pub fn read(path: &Path) -> Result<Document, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse(&text, &path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::testdata;

    #[test]
    fn documents_and_single_series_read_back() {
        let doc = testdata::document();
        let text = to_string(&doc).expect("encodes");
        let back = parse(&text, "x").expect("reads");
        assert_eq!(back.series.len(), 2);
        assert_eq!(back.machine, doc.machine);
        let single = serde_json::to_string(&doc.series[0]).expect("encodes");
        let back = parse(&single, "old.json").expect("reads a single series");
        assert_eq!(back.series.len(), 1);
        assert_eq!(back.title, "RR-CC (2KB Non-persistent)");
        let e = parse("{\"x\": 1}", "bad.json").expect_err("not a run");
        assert!(
            e.contains("bad.json is not the JSON of a ferry perf run"),
            "{e}"
        );
    }
}
