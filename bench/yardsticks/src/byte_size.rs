//! Sizes on the command line: `2048`, `2k`, `2KB`, `1m`, `1MiB` (binary units, as the
//! harness's `--sizes` reads them).

use crate::YardstickError;

/// Parses a byte count with an optional binary-unit suffix (k, KB, KiB, m, MB, MiB, g, GB, GiB;
/// any case).
pub fn parse(text: &str) -> Result<u64, YardstickError> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let number: u64 = digits
        .parse()
        .map_err(|_| YardstickError::Usage(format!("not a size: {text:?}")))?;
    let multiplier: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => {
            return Err(YardstickError::Usage(format!(
                "unknown size unit in {text:?}"
            )))
        }
    };
    number
        .checked_mul(multiplier)
        .ok_or_else(|| YardstickError::Usage(format!("size too large: {text:?}")))
}

/// [`parse`] for clap's `value_parser`.
pub fn parse_arg(text: &str) -> Result<u64, String> {
    parse(text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_binary() {
        assert_eq!(parse("2048").unwrap(), 2048);
        assert_eq!(parse("2k").unwrap(), 2048);
        assert_eq!(parse("2KB").unwrap(), 2048);
        assert_eq!(parse("20KiB").unwrap(), 20 * 1024);
        assert_eq!(parse("1m").unwrap(), 1 << 20);
        assert_eq!(parse("1G").unwrap(), 1 << 30);
    }

    #[test]
    fn refuses_what_is_not_a_size() {
        assert!(parse("").is_err());
        assert!(parse("k").is_err());
        assert!(parse("2x").is_err());
        assert!(parse("-1").is_err());
        assert!(parse("99999999999999999999g").is_err());
    }
}
