//! `ferry perf --compress`: channel compression in a run. The message bodies a
//! compression run sends (JSON-like text, as the IBM report's compression figures used),
//! the channel the embedded queue manager defines for it, and the COMPRATE and COMPTIME
//! DISPLAY CHSTATUS shows at the end of each measured window.

use ferry_client::Connection;
use ferry_mqi::compression::{list_text, parse_list, MAX_MESSAGE_COMPRESSION_LIST};
use ferry_mqi::MessageCompression;
use serde::{Deserialize, Serialize};

use crate::PerfError;

/// The channel `ferry perf --compress` defines on its embedded queue manager: it lists
/// COMPMSG(ANY), so the client's list decides.
pub const COMPRESSION_CHANNEL: &str = "PERF.COMP.SVRCONN";

/// The client's COMPMSG list of `--compress`, in order of preference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompressList(pub Vec<MessageCompression>);

/// Parses `--compress`: the client's COMPMSG list, in order of preference, e.g.
/// `LZ4FAST` or `ZLIBFAST,NONE`. ANY is the receiving end's and is refused.
pub fn parse_compress(text: &str) -> Result<CompressList, String> {
    let list = parse_list::<MessageCompression>(text, MAX_MESSAGE_COMPRESSION_LIST)
        .map_err(|e| format!("invalid --compress '{text}': {e}"))?;
    if list.contains(&MessageCompression::Any) {
        return Err(format!(
            "invalid --compress '{text}': ANY is only valid on the receiving end (the \
             SVRCONN channel); give the techniques the client asks for, e.g. LZ4FAST"
        ));
    }
    Ok(CompressList(list))
}

/// The list as MQSC writes it, for test names and lines.
pub fn describe(list: &[MessageCompression]) -> String {
    list_text(list)
}

/// What a run's message bodies hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BodyKind {
    /// One byte repeated (the default): cheap to make, and what every other figure used.
    #[default]
    Fill,
    /// JSON-like text (orders with ids, names, prices and notes): what compression
    /// figures need, since a repeated byte compresses to almost nothing.
    Json,
}

/// Parses `--body`: `fill` or `json`.
pub fn parse_body(text: &str) -> Result<BodyKind, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "fill" => Ok(BodyKind::Fill),
        "json" => Ok(BodyKind::Json),
        _ => Err(format!(
            "invalid body '{text}': use fill (one byte repeated) or json (JSON-like text)"
        )),
    }
}

/// A body template of `size` bytes of `kind`.
pub fn body_template(kind: BodyKind, size: usize, fill: u8) -> Vec<u8> {
    match kind {
        BodyKind::Fill => vec![fill; size],
        BodyKind::Json => json_body(size),
    }
}

/// `size` bytes of JSON-like text: an array of order records whose keys repeat and whose
/// values (ids, customers, SKUs, prices, timestamps, free-text notes) vary, from a fixed
/// seed so every run sends the same bytes. Cut at `size` (the end may not parse: the
/// queue manager does not care, and neither does the compression).
pub fn json_body(size: usize) -> Vec<u8> {
    const NAMES: [&str; 12] = [
        "Ada Lovelace",
        "Grace Hopper",
        "Alan Turing",
        "Edsger Dijkstra",
        "Barbara Liskov",
        "Donald Knuth",
        "Frances Allen",
        "John Backus",
        "Margaret Hamilton",
        "Ken Thompson",
        "Radia Perlman",
        "Tony Hoare",
    ];
    const WORDS: [&str; 16] = [
        "deliver", "before", "noon", "leave", "at", "door", "fragile", "gift", "wrap", "call",
        "on", "arrival", "back", "entrance", "second", "floor",
    ];
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut s = String::with_capacity(size + 512);
    s.push('[');
    let mut order = 0u64;
    while s.len() < size {
        let id = next();
        let customer = next() % 1_000_000;
        let name = NAMES[(next() % NAMES.len() as u64) as usize];
        let items = 1 + next() % 3;
        s.push_str(&format!(
            "{{\"orderId\":\"{:016x}\",\"seq\":{},\"created\":\"2026-11-{:02}T{:02}:{:02}:{:02}.{:03}Z\",\
             \"customer\":{{\"id\":{customer},\"name\":\"{name}\",\"tier\":\"{}\"}},\"items\":[",
            id,
            order,
            1 + next() % 28,
            next() % 24,
            next() % 60,
            next() % 60,
            next() % 1000,
            ["bronze", "silver", "gold"][(next() % 3) as usize],
        ));
        for i in 0..items {
            if i > 0 {
                s.push(',');
            }
            s.push_str(&format!(
                "{{\"sku\":\"SKU-{:05}\",\"qty\":{},\"price\":{}.{:02}}}",
                next() % 100_000,
                1 + next() % 9,
                next() % 1000,
                next() % 100
            ));
        }
        let note: Vec<&str> = (0..(next() % 5))
            .map(|_| WORDS[(next() % WORDS.len() as u64) as usize])
            .collect();
        s.push_str(&format!(
            "],\"note\":\"{}\",\"status\":\"{}\"}},",
            note.join(" "),
            ["NEW", "PAID", "SHIPPED", "DELIVERED"][(next() % 4) as usize]
        ));
        order += 1;
    }
    let mut b = s.into_bytes();
    b.truncate(size);
    b
}

/// COMPRATE and COMPTIME of a channel's instances at the end of a measured window, as
/// DISPLAY CHSTATUS showed them (each the mean over the instances that agreed on a
/// technique).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompressionFigures {
    /// The channel.
    pub channel: String,
    /// COMPMSG agreed (the first value), e.g. `LZ4FAST`.
    pub technique: String,
    /// Channel instances read.
    pub instances: usize,
    /// COMPRATE, short term: percent of the compressible bytes saved.
    pub rate_short_pct: f64,
    /// COMPRATE, long term.
    pub rate_long_pct: f64,
    /// COMPTIME, short term: microseconds spent compressing or expanding one message.
    pub time_short_us: f64,
    /// COMPTIME, long term.
    pub time_long_us: f64,
}

/// Reads the figures out of DISPLAY CHSTATUS output (`COMPMSG(a,b)`, `COMPRATE(s,l)`,
/// `COMPTIME(s,l)` per instance); `None` when no instance agreed on a technique.
pub fn parse_chstatus(channel: &str, lines: &[String]) -> Option<CompressionFigures> {
    let text = lines.join("\n");
    let values = |key: &str| -> Vec<String> {
        let pat = format!("{key}(");
        text.match_indices(&pat)
            .filter_map(|(at, _)| {
                let rest = &text[at + pat.len()..];
                rest.find(')').map(|end| rest[..end].to_string())
            })
            .collect()
    };
    let pair = |v: &String| -> Option<(f64, f64)> {
        let (a, b) = v.split_once(',')?;
        Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
    };
    let (techniques, rates, times) = (values("COMPMSG"), values("COMPRATE"), values("COMPTIME"));
    let mut f = CompressionFigures {
        channel: channel.to_string(),
        ..CompressionFigures::default()
    };
    for ((t, r), m) in techniques.iter().zip(&rates).zip(&times) {
        let agreed = t.split(',').next().unwrap_or("NONE").trim();
        if agreed == "NONE" {
            continue;
        }
        let (Some(r), Some(m)) = (pair(r), pair(m)) else {
            continue;
        };
        f.technique = agreed.to_string();
        f.instances += 1;
        f.rate_short_pct += r.0;
        f.rate_long_pct += r.1;
        f.time_short_us += m.0;
        f.time_long_us += m.1;
    }
    if f.instances == 0 {
        return None;
    }
    let n = f.instances as f64;
    f.rate_short_pct /= n;
    f.rate_long_pct /= n;
    f.time_short_us /= n;
    f.time_long_us /= n;
    Some(f)
}

/// Asks the queue manager for `channel`'s compression figures now.
pub async fn read(
    admin: &Connection,
    channel: &str,
) -> Result<Option<CompressionFigures>, PerfError> {
    let lines = crate::target::run_mqsc(
        admin,
        &format!("DISPLAY CHSTATUS({channel}) COMPMSG COMPRATE COMPTIME"),
    )
    .await?;
    Ok(parse_chstatus(channel, &lines))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_the_clients() {
        assert_eq!(
            parse_compress("lz4fast,ZLIBFAST"),
            Ok(CompressList(vec![
                MessageCompression::Lz4Fast,
                MessageCompression::ZlibFast
            ]))
        );
        assert!(parse_compress("ANY").unwrap_err().contains("receiving end"));
        assert!(parse_compress("LZ4").unwrap_err().contains("LZ4FAST"));
        assert_eq!(describe(&parse_compress("zlibhigh").unwrap().0), "ZLIBHIGH");
    }

    #[test]
    fn json_bodies_are_the_size_asked_the_same_every_time_and_not_trivial() {
        for size in [0, 1, 2048, 20 * 1024] {
            let b = json_body(size);
            assert_eq!(b.len(), size);
            assert_eq!(b, json_body(size));
        }
        let b = json_body(20 * 1024);
        assert!(b.starts_with(b"[{\"orderId\":\""));
        let distinct = b.iter().collect::<std::collections::HashSet<_>>().len();
        assert!(distinct > 40, "{distinct} distinct bytes");
        assert_eq!(body_template(BodyKind::Fill, 3, 7), vec![7, 7, 7]);
    }

    #[test]
    fn chstatus_figures_are_the_mean_of_the_instances_that_compress() {
        let lines: Vec<String> = [
            "FRY8417I: Display Channel Status details.",
            "   CHANNEL(PERF.COMP.SVRCONN)              CHLTYPE(SVRCONN)",
            "   COMPMSG(LZ4FAST,LZ4FAST)                COMPRATE(40,38)",
            "   COMPTIME(5,7)",
            "FRY8417I: Display Channel Status details.",
            "   CHANNEL(PERF.COMP.SVRCONN)              CHLTYPE(SVRCONN)",
            "   COMPMSG(LZ4FAST,NONE)                   COMPRATE(30,36)",
            "   COMPTIME(7,9)",
            "FRY8417I: Display Channel Status details.",
            "   CHANNEL(PERF.COMP.SVRCONN)              CHLTYPE(SVRCONN)",
            "   COMPMSG(NONE,NONE)                      COMPRATE(0,0)",
            "   COMPTIME(0,0)",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let f = parse_chstatus(COMPRESSION_CHANNEL, &lines).expect("figures");
        assert_eq!(f.technique, "LZ4FAST");
        assert_eq!(f.instances, 2);
        assert_eq!((f.rate_short_pct, f.rate_long_pct), (35.0, 37.0));
        assert_eq!((f.time_short_us, f.time_long_us), (6.0, 8.0));
        assert_eq!(parse_chstatus("X", &lines[8..]), None);
    }
}
