//! MQSC for the administrative REST API, as IBM MQ's `action/qmgr/{qmgr}/mqsc` resource
//! shapes it: no I/O, so the web server's handlers and the fuzz target share it.
//!
//! - [`single_command`]: the text of a `runCommand` request, refused unless it is one
//!   command on one line (a newline would smuggle a second command past the check that
//!   the first was allowed: MQSC injection);
//! - [`command_from_json`]: the MQSC command a `runCommandJSON` request stands for, every
//!   word it takes from the request checked so that none can end the command early or
//!   add a keyword;
//! - [`responses`] and [`parameters`]: the command server's output lines cut into IBM's
//!   `commandResponse` items, and a DISPLAY's `KEY(value)` pairs read into the lower-case
//!   `parameters` objects IBM's JSON form gives.

use serde_json::{Map, Value};

/// The longest MQSC command a request may carry, in bytes (MQ's limit on a command).
pub const MAX_COMMAND_LEN: usize = 32_768;

/// Why a request's MQSC cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RestCommandError {
    /// Nothing to run.
    #[error("the request carries no MQSC command")]
    Empty,
    /// More than one line.
    #[error("the command must be one MQSC command on one line: line breaks are refused")]
    MultipleLines,
    /// A control character other than a tab.
    #[error("the command contains a control character")]
    ControlCharacter,
    /// Longer than [`MAX_COMMAND_LEN`].
    #[error("the command is longer than {MAX_COMMAND_LEN} bytes")]
    TooLong,
    /// A field of a runCommandJSON request is missing or of the wrong JSON type.
    #[error("runCommandJSON: {0}")]
    BadField(String),
}

/// The one command of a `runCommand` request, trimmed; refused when it has a line break,
/// a control character, is empty or too long.
pub fn single_command(text: &str) -> Result<&str, RestCommandError> {
    if text.len() > MAX_COMMAND_LEN {
        return Err(RestCommandError::TooLong);
    }
    if text.contains(['\n', '\r']) {
        return Err(RestCommandError::MultipleLines);
    }
    if text.chars().any(|c| c.is_control() && c != '\t') {
        return Err(RestCommandError::ControlCharacter);
    }
    let text = text.trim();
    if text.is_empty() {
        return Err(RestCommandError::Empty);
    }
    Ok(text)
}

/// A word of MQSC syntax (a command, a qualifier, a keyword): ASCII letters, digits and
/// `_` only, 1 to 48 of them.
fn keyword(field: &str, text: &str) -> Result<String, RestCommandError> {
    if text.is_empty()
        || text.len() > 48
        || !text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(RestCommandError::BadField(format!(
            "{field} '{}' is not an MQSC keyword",
            text.chars().take(64).collect::<String>()
        )));
    }
    Ok(text.to_ascii_uppercase())
}

/// A value as MQSC reads it: quoted (with quotes doubled) unless it is a plain word.
fn mqsc_value(text: &str) -> Result<String, RestCommandError> {
    if text.chars().any(|c| c.is_control()) {
        return Err(RestCommandError::ControlCharacter);
    }
    Ok(format!("'{}'", text.replace('\'', "''")))
}

/// An object name, quoted when it holds characters MQSC would otherwise fold or split
/// (generic names end in `*`).
fn object_name(text: &str) -> Result<String, RestCommandError> {
    if text.is_empty() || text.len() > 48 {
        return Err(RestCommandError::BadField(
            "name must be 1 to 48 characters".into(),
        ));
    }
    if !text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | '%' | '*'))
    {
        return Err(RestCommandError::BadField(format!(
            "name '{text}' has a character MQ names cannot have"
        )));
    }
    // Unquoted MQSC folds to upper case: a name with lower-case letters is quoted.
    if text.chars().any(|c| c.is_ascii_lowercase()) {
        Ok(format!("'{text}'"))
    } else {
        Ok(text.to_string())
    }
}

/// The parameter value of a runCommandJSON `parameters` or `responseParameters` entry.
fn parameter_value(key: &str, value: &Value) -> Result<String, RestCommandError> {
    match value {
        Value::String(s) => mqsc_value(s),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(if *b { "YES" } else { "NO" }.into()),
        Value::Array(items) => {
            let parts: Result<Vec<String>, _> =
                items.iter().map(|v| parameter_value(key, v)).collect();
            Ok(parts?.join(","))
        }
        _ => Err(RestCommandError::BadField(format!(
            "parameter '{key}' must be text, a number, true/false or a list"
        ))),
    }
}

/// The MQSC command of a runCommandJSON request: `command` (display, define, ...),
/// `qualifier` (qlocal, channel, ...), `name`, `parameters` (an object of keyword to
/// value; a `null` value is a keyword alone, such as `replace`) and, for DISPLAY,
/// `responseParameters` (attribute names, or `all`).
pub fn command_from_json(request: &Value) -> Result<String, RestCommandError> {
    let field = |name: &str| request.get(name);
    let text = |name: &str| -> Result<Option<&str>, RestCommandError> {
        match field(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(_) => Err(RestCommandError::BadField(format!("'{name}' must be text"))),
        }
    };
    let command = text("command")?
        .ok_or_else(|| RestCommandError::BadField("'command' is required".into()))?;
    let mut out = keyword("command", command)?;
    if let Some(q) = text("qualifier")? {
        out.push(' ');
        out.push_str(&keyword("qualifier", q)?);
        match text("name")? {
            Some(n) => out.push_str(&format!("({})", object_name(n)?)),
            None if out.starts_with("DISPLAY") => out.push_str("(*)"),
            None => {}
        }
    } else if text("name")?.is_some() {
        return Err(RestCommandError::BadField(
            "'name' needs a 'qualifier'".into(),
        ));
    }
    match field("parameters") {
        None | Some(Value::Null) => {}
        Some(Value::Object(params)) => {
            for (key, value) in params {
                out.push(' ');
                out.push_str(&keyword("parameter", key)?);
                if !value.is_null() {
                    out.push_str(&format!("({})", parameter_value(key, value)?));
                }
            }
        }
        Some(_) => {
            return Err(RestCommandError::BadField(
                "'parameters' must be an object".into(),
            ))
        }
    }
    match field("responseParameters") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for item in items {
                let Value::String(word) = item else {
                    return Err(RestCommandError::BadField(
                        "'responseParameters' must list attribute names".into(),
                    ));
                };
                out.push(' ');
                out.push_str(&keyword("response parameter", word)?);
            }
        }
        Some(_) => {
            return Err(RestCommandError::BadField(
                "'responseParameters' must be a list".into(),
            ))
        }
    }
    single_command(&out).map(str::to_string)
}

/// Whether `line` begins a response message (`FRY8409I: ...`, or MQ's `AMQ...`): three
/// letters, four digits, a severity letter and a colon.
fn is_message_line(line: &str) -> bool {
    let b = line.as_bytes();
    b.len() >= 9
        && b[..3].iter().all(u8::is_ascii_uppercase)
        && b[3..7].iter().all(u8::is_ascii_digit)
        && b[7].is_ascii_uppercase()
        && b[8] == b':'
}

/// The command server's output cut into responses: each message line with the indented
/// lines that follow it (a DISPLAY's attributes); lines before the first message form a
/// response of their own.
pub fn responses(lines: &[String]) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    for line in lines {
        if line.trim().is_empty() {
            continue;
        }
        if is_message_line(line) || out.is_empty() {
            out.push(vec![line.clone()]);
        } else if let Some(last) = out.last_mut() {
            last.push(line.clone());
        }
    }
    out
}

/// The `KEY(value)` pairs of a response's attribute lines, lower-case keys as IBM's JSON
/// gives them; whole numbers become JSON numbers. A value ends at the `)` that is followed
/// by a space or the end of the line (MQ does not quote displayed values, which may hold
/// parentheses). A keyword without a value (`KEY` alone) is `true`.
pub fn parameters(response: &[String]) -> Map<String, Value> {
    let mut out = Map::new();
    for line in response.iter().filter(|l| !is_message_line(l)) {
        let mut rest = line.as_str();
        loop {
            rest = rest.trim_start();
            if rest.is_empty() {
                break;
            }
            let key_len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            if key_len == 0 {
                // Not an attribute: skip one character (never loops forever).
                let mut chars = rest.chars();
                chars.next();
                rest = chars.as_str();
                continue;
            }
            let key = rest[..key_len].to_ascii_lowercase();
            rest = &rest[key_len..];
            if let Some(after) = rest.strip_prefix('(') {
                let end = value_end(after);
                let value = &after[..end];
                out.insert(key, json_value(value));
                rest = after.get(end + 1..).unwrap_or("");
            } else {
                out.insert(key, Value::Bool(true));
            }
        }
    }
    out
}

/// Where the value that begins `text` ends: the `)` that closes the opening one (inner
/// parentheses balanced) followed by whitespace or the end; when none does, the first
/// `)` followed by whitespace or the end, else the last `)`, else the end.
fn value_end(text: &str) -> usize {
    let bytes = text.as_bytes();
    let closes_here = |i: usize| bytes.get(i + 1).is_none_or(u8::is_ascii_whitespace);
    let mut depth = 0usize;
    for (i, b) in bytes.iter().enumerate() {
        match b {
            b'(' => depth += 1,
            b')' if depth == 0 && closes_here(i) => return i,
            b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    for (i, b) in bytes.iter().enumerate() {
        if *b == b')' && closes_here(i) {
            return i;
        }
    }
    text.rfind(')').unwrap_or(text.len())
}

/// A displayed value as JSON: a whole number without leading zeros is a number, anything
/// else text (trailing blanks trimmed, as MQ pads some fields).
fn json_value(text: &str) -> Value {
    let t = text.trim_end();
    let plain = t.strip_prefix('-').unwrap_or(t);
    if !plain.is_empty()
        && plain.len() < 18
        && plain.bytes().all(|b| b.is_ascii_digit())
        && (plain == "0" || !plain.starts_with('0'))
    {
        if let Ok(n) = t.parse::<i64>() {
            return Value::from(n);
        }
    }
    Value::String(t.to_string())
}

/// Runs every decoder of this module on `data` (the fuzz target's body): none may panic.
pub fn fuzz_one(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = single_command(&text);
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    for r in responses(&lines) {
        let _ = parameters(&r);
    }
    if let Ok(v) = serde_json::from_slice::<Value>(data) {
        if let Ok(cmd) = command_from_json(&v) {
            assert!(!cmd.contains(['\n', '\r']));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn one_command_on_one_line_only() {
        assert_eq!(
            single_command("  DISPLAY QLOCAL(*) "),
            Ok("DISPLAY QLOCAL(*)")
        );
        assert_eq!(
            single_command("DISPLAY QLOCAL(*)\nDELETE QLOCAL(A)"),
            Err(RestCommandError::MultipleLines)
        );
        assert_eq!(single_command("X\rY"), Err(RestCommandError::MultipleLines));
        assert_eq!(
            single_command("X\0"),
            Err(RestCommandError::ControlCharacter)
        );
        assert_eq!(single_command("   "), Err(RestCommandError::Empty));
        assert_eq!(
            single_command(&"A".repeat(MAX_COMMAND_LEN + 1)),
            Err(RestCommandError::TooLong)
        );
    }

    #[test]
    fn json_requests_become_quoted_mqsc() {
        let r = json!({"type":"runCommandJSON","command":"display","qualifier":"qlocal","name":"*","responseParameters":["all"]});
        assert_eq!(command_from_json(&r).unwrap(), "DISPLAY QLOCAL(*) ALL");
        let r = json!({"command":"define","qualifier":"qlocal","name":"Q.1","parameters":{"descr":"it's","maxdepth":10,"replace":null}});
        assert_eq!(
            command_from_json(&r).unwrap(),
            "DEFINE QLOCAL(Q.1) DESCR('it''s') MAXDEPTH(10) REPLACE"
        );
        // Nothing can close the command early or add a keyword.
        for bad in [
            json!({"command":"display qlocal(*) all"}),
            json!({"command":"display","qualifier":"qlocal) DELETE"}),
            json!({"command":"display","qualifier":"qlocal","name":"A') DELETE QLOCAL('B"}),
            json!({"command":"alter","qualifier":"qlocal","name":"A","parameters":{"descr) PUT(DISABLED":"x"}}),
            json!({"command":"alter","qualifier":"qlocal","name":"A","parameters":{"descr":"a\nDELETE QLOCAL(B)"}}),
            json!({"qualifier":"qlocal"}),
            json!({"command":7}),
        ] {
            assert!(command_from_json(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn display_output_reads_into_parameters() {
        let lines: Vec<String> = [
            "FRY8409I: Display Queue details.",
            "   QUEUE(DEV.QUEUE.1)                      TYPE(QLOCAL)",
            "   DESCR(a (b) c)                          CURDEPTH(12)",
            "   DEFPSIST(NO)                            CRDATE(2026-01-01)",
            "FRY8409I: Display Queue details.",
            "   QUEUE(Q2)   TYPE(QLOCAL)   MAXDEPTH(0)   RNAME( )",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let r = responses(&lines);
        assert_eq!(r.len(), 2);
        let p = parameters(&r[0]);
        assert_eq!(p["queue"], json!("DEV.QUEUE.1"));
        assert_eq!(p["type"], json!("QLOCAL"));
        assert_eq!(p["descr"], json!("a (b) c"));
        assert_eq!(p["curdepth"], json!(12));
        assert_eq!(p["crdate"], json!("2026-01-01"));
        let p = parameters(&r[1]);
        assert_eq!(p["maxdepth"], json!(0));
        assert_eq!(p["rname"], json!(""));
    }

    #[test]
    fn decoders_survive_garbage() {
        for s in [
            "((((",
            "A(",
            ")))",
            "AMQ1234I:",
            "   K(v",
            "é(ü) x",
            "\u{0}(\u{1})",
        ] {
            fuzz_one(s.as_bytes());
        }
        fuzz_one(br#"{"command":"display","parameters":{"a":[1,[2,{"x":1}]]}}"#);
    }

    proptest::proptest! {
        #[test]
        fn decoders_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            fuzz_one(&bytes);
        }

        #[test]
        fn json_commands_stay_one_command(
            command in "[a-z]{1,8}",
            qualifier in "[a-z]{1,8}",
            name in "\\PC{0,60}",
            key in "\\PC{0,20}",
            value in "\\PC{0,60}",
        ) {
            let request = json!({"command": command, "qualifier": qualifier, "name": name,
                "parameters": {key: value}});
            if let Ok(cmd) = command_from_json(&request) {
                proptest::prop_assert!(!cmd.contains(['\n', '\r']));
                // A value cannot close its quotes: every quote inside is doubled.
                let quotes = cmd.matches('\'').count();
                proptest::prop_assert!(quotes % 2 == 0, "{}", cmd);
            }
        }
    }
}
