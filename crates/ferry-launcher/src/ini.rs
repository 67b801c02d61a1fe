//! Editing a qm.ini text: set one key of a stanza, or replace the values of keys the
//! file has (the harness's tuning, a test's settings).

/// Sets `key=value` in stanza `stanza` (adding the stanza at the end, or the key at the
/// end of its stanza, when missing).
pub fn set_ini_value(text: &str, stanza: &str, key: &str, value: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let header = format!("{stanza}:");
    let start = match lines.iter().position(|l| l.trim() == header) {
        Some(i) => i,
        None => {
            lines.push(header);
            lines.len() - 1
        }
    };
    let end = lines[start + 1..]
        .iter()
        .position(|l| !l.starts_with([' ', '\t']) && !l.trim().is_empty())
        .map_or(lines.len(), |i| start + 1 + i);
    let entry = format!("   {key}={value}");
    match lines[start + 1..end]
        .iter()
        .position(|l| l.trim().split('=').next() == Some(key))
    {
        Some(i) => lines[start + 1 + i] = entry,
        None => lines.insert(end, entry),
    }
    lines.join("\n") + "\n"
}

/// Replaces the value of every `   Key=value` line whose key is in `values`, keeping its
/// indentation; keys the file does not have are not added.
pub fn set_ini_values(text: &str, values: &[(&str, u32)]) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let key = line.split('=').next().unwrap_or("").trim();
        match values.iter().find(|(k, _)| *k == key && line.contains('=')) {
            Some((k, v)) => {
                let indent = &line[..line.len() - line.trim_start().len()];
                out.push_str(&format!("{indent}{k}={v}"));
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_replaced_in_place() {
        let ini = "QueueManager:\n   Name=PERFQM\nChannels:\n   MaxChannels=100\n   MaxActiveChannels=100\nTCP:\n   KeepAlive=NO\n";
        let out = set_ini_values(ini, &[("MaxChannels", 400), ("MaxActiveChannels", 400)]);
        assert_eq!(
            out,
            "QueueManager:\n   Name=PERFQM\nChannels:\n   MaxChannels=400\n   MaxActiveChannels=400\nTCP:\n   KeepAlive=NO\n"
        );
    }

    #[test]
    fn a_key_is_set_added_or_given_a_new_stanza() {
        let ini = "Log:\n   LogPrimaryFiles=3\nTCP:\n   KeepAlive=NO\n";
        assert_eq!(
            set_ini_value(ini, "Log", "LogPrimaryFiles", "5"),
            "Log:\n   LogPrimaryFiles=5\nTCP:\n   KeepAlive=NO\n"
        );
        assert_eq!(
            set_ini_value(ini, "Log", "LogBufferPages", "64"),
            "Log:\n   LogPrimaryFiles=3\n   LogBufferPages=64\nTCP:\n   KeepAlive=NO\n"
        );
        assert_eq!(
            set_ini_value(ini, "Tuning", "X", "1"),
            "Log:\n   LogPrimaryFiles=3\nTCP:\n   KeepAlive=NO\nTuning:\n   X=1\n"
        );
    }
}
