//! Parsing of the harness's option values: message sizes (`256B`, `2KB`, `2MB`) and lists
//! of them, client lists (`1,4,16,64`), responder counts (`auto` or a number), rates and
//! durations in seconds, and the AMQP choices (protocol, reply queues, prefetch).
//!
//! Each parser returns a message that says what is accepted, so clap prints it as is.

use std::fmt;

/// Largest message size the harness accepts (the client's default MAXMSGL is 4 MiB).
pub const MAX_SIZE: usize = 100 * 1024 * 1024;
/// Most requesters one step may run.
pub const MAX_CLIENTS: usize = 10_000;

/// Parses a message size: a whole number of bytes with an optional unit `B`, `KB`
/// (1024 bytes) or `MB` (1024 KB), case-insensitive; `K` and `M` are accepted too.
///
/// ```
/// assert_eq!(ferry_perf::args::parse_size("2KB"), Ok(2048));
/// assert!(ferry_perf::args::parse_size("3XB").is_err());
/// ```
pub fn parse_size(text: &str) -> Result<usize, String> {
    let bad = || {
        format!(
            "invalid size '{text}': use a whole number of bytes with an optional unit B, KB or MB \
             (KB = 1024 bytes), from 1B to 100MB, e.g. 256B, 2KB, 20KB, 200KB, 2MB"
        )
    };
    let t = text.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits_end);
    if num.is_empty() {
        return Err(bad());
    }
    let mult: usize = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" => 1024,
        "M" | "MB" => 1024 * 1024,
        _ => return Err(bad()),
    };
    let n: usize = num.parse().map_err(|_| bad())?;
    let bytes = n.checked_mul(mult).ok_or_else(bad)?;
    if bytes == 0 || bytes > MAX_SIZE {
        return Err(bad());
    }
    Ok(bytes)
}

/// Writes a size the way the reports do: `256B`, `2KB`, `20KB`, `2MB` (exact units only,
/// else bytes).
pub fn format_size(bytes: usize) -> String {
    const MB: usize = 1024 * 1024;
    if bytes >= MB && bytes / MB * MB == bytes {
        format!("{}MB", bytes / MB)
    } else if bytes >= 1024 && bytes / 1024 * 1024 == bytes {
        format!("{}KB", bytes / 1024)
    } else {
        format!("{bytes}B")
    }
}

/// A list of message sizes in bytes, one series each (a newtype so clap takes it as one value).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeList(pub Vec<usize>);

/// Parses a comma-separated list of sizes, e.g. `256B,2KB,20KB,200KB,2MB` (each as
/// [`parse_size`]; order kept).
pub fn parse_sizes(text: &str) -> Result<SizeList, String> {
    text.split(',')
        .map(|item| parse_size(item.trim()))
        .collect::<Result<Vec<_>, _>>()
        .map(SizeList)
}

/// Parses `--rate`: messages per second per requester (or sender), > 0 and at most
/// 1,000,000; fractions allowed (0.01 = one message every 100 s).
pub fn parse_rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 && r <= 1_000_000.0 => Ok(r),
        _ => Err(format!(
            "invalid rate '{text}': give messages per second per requester, greater than 0 and \
             at most 1000000 (fractions allowed: 0.01 is one message every 100 s), e.g. 100"
        )),
    }
}

/// Parses a comma-separated list of requester counts, each 1..=10000, e.g. `1,4,16,64`.
/// Order is kept; duplicates are allowed (a repeated step).
pub fn parse_clients(text: &str) -> Result<Vec<usize>, String> {
    let bad = |item: &str| {
        format!(
            "invalid client count '{item}' in '{text}': give a comma-separated list of whole \
             numbers of requesters from 1 to {MAX_CLIENTS}, e.g. 1,4,16,64"
        )
    };
    let mut out = Vec::new();
    for item in text.split(',') {
        let item = item.trim();
        let n: usize = item.parse().map_err(|_| bad(item))?;
        if n == 0 || n > MAX_CLIENTS {
            return Err(bad(item));
        }
        out.push(n);
    }
    Ok(out)
}

/// A list of requester counts, one step each (a newtype so clap takes it as one value).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientList(pub Vec<usize>);

/// [`parse_clients`] for clap.
pub fn parse_client_list(text: &str) -> Result<ClientList, String> {
    parse_clients(text).map(ClientList)
}

/// How many responders a step runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Responders {
    /// One per requester, at least one per request queue.
    Auto,
    /// This many, spread round-robin over the request queues.
    Fixed(usize),
}

impl Responders {
    /// The responder count for `clients` requesters over `queues` request queues.
    pub fn count(self, clients: usize, queues: usize) -> usize {
        match self {
            Responders::Auto => clients.max(queues),
            Responders::Fixed(n) => n,
        }
    }
}

impl fmt::Display for Responders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Responders::Auto => f.write_str("auto"),
            Responders::Fixed(n) => write!(f, "{n}"),
        }
    }
}

/// Parses `--responders`: `auto` or a whole number from 1 to 10000.
pub fn parse_responders(text: &str) -> Result<Responders, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("auto") {
        return Ok(Responders::Auto);
    }
    match t.parse::<usize>() {
        Ok(n) if (1..=MAX_CLIENTS).contains(&n) => Ok(Responders::Fixed(n)),
        _ => Err(format!(
            "invalid responder count '{text}': use 'auto' (one per requester, at least one per \
             request queue) or a whole number from 1 to {MAX_CLIENTS}"
        )),
    }
}

/// Parses a duration in seconds for `--secs` (> 0, at most one day; fractions allowed).
pub fn parse_secs(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => Ok(s),
        _ => Err(format!(
            "invalid duration '{text}': give seconds greater than 0 (fractions allowed), e.g. 10 or 0.5"
        )),
    }
}

/// Parses a duration in seconds for `--warmup` (>= 0, at most one hour).
pub fn parse_warmup(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && (0.0..=3_600.0).contains(&s) => Ok(s),
        _ => Err(format!(
            "invalid warm-up '{text}': give seconds from 0 to 3600 (fractions allowed), e.g. 3"
        )),
    }
}

/// Parses `--queues`: the number of request queues, 1..=100.
pub fn parse_queues(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=100).contains(&n) => Ok(n),
        _ => Err(format!(
            "invalid queue count '{text}': give a whole number of request queues from 1 to 100 \
             (the reports use 10)"
        )),
    }
}

/// `--bind`: how RR-CLUSTER-BB's requesters bind their request queue to an instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Bind {
    /// MQOO_BIND_ON_OPEN: one instance per requester, chosen at MQOPEN.
    #[default]
    Open,
    /// MQOO_BIND_NOT_FIXED: an instance chosen for every put.
    NotFixed,
}

impl Bind {
    /// The MQOPEN option.
    pub fn open_option(self) -> ferry_mqi::OpenOptions {
        match self {
            Bind::Open => ferry_mqi::OpenOptions::BIND_ON_OPEN,
            Bind::NotFixed => ferry_mqi::OpenOptions::BIND_NOT_FIXED,
        }
    }
}

impl fmt::Display for Bind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Bind::Open => "bind on open",
            Bind::NotFixed => "bind not fixed",
        })
    }
}

/// Parses `--channel-pairs`: 1 to [`crate::workload::distributed::MAX_CHANNEL_PAIRS`].
pub fn parse_channel_pairs(text: &str) -> Result<usize, String> {
    let max = crate::workload::distributed::MAX_CHANNEL_PAIRS;
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!(
            "invalid channel pair count '{text}': give a whole number from 1 to {max}"
        )),
    }
}

/// Parses `--cipherspec`: a CipherSpec name or alias Ferry offers, as SSLCIPH takes it.
pub fn parse_cipherspec(text: &str) -> Result<String, String> {
    match ferry_security::CipherSpecChoice::parse(text) {
        Ok(Some(c)) => Ok(c.name().to_string()),
        Ok(None) => Err("give a CipherSpec name, e.g. TLS_AES_128_GCM_SHA256".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// Parses `--sharecnv`: conversations per socket, 0..=999 (0 and 1: no sharing).
pub fn parse_sharecnv(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(n) if n <= 999 => Ok(n),
        _ => Err(format!(
            "invalid SHARECNV '{text}': give a whole number from 0 to 999 (0 and 1: one socket \
             per connection)"
        )),
    }
}

/// Parses `--sessions-per-connection`: AMQP applications per connection, 1..=255 (a
/// connection has at most 256 channels; 1: a connection per application).
pub fn parse_sessions_per_connection(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(n) if (1..=255).contains(&n) => Ok(n),
        _ => Err(format!(
            "invalid sessions per connection '{text}': give a whole number from 1 to 255 (1: a \
             connection per application)"
        )),
    }
}

/// Which protocol the applications speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Protocol {
    /// Ferry's MQI client (IBM MQ's protocol).
    #[default]
    Native,
    /// AMQP 1.0 (to Ferry's AMQP channel or any AMQP 1.0 broker).
    Amqp,
}

/// Parses `--protocol`: `native` or `amqp`.
pub fn parse_protocol(text: &str) -> Result<Protocol, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "native" | "mq" => Ok(Protocol::Native),
        "amqp" => Ok(Protocol::Amqp),
        _ => Err(format!(
            "invalid protocol '{text}': use native (the MQI client) or amqp (AMQP 1.0)"
        )),
    }
}

/// Where AMQP requesters get their replies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ReplyQueues {
    /// One reply queue `REPLY`; each requester selects its replies by correlation id.
    #[default]
    Shared,
    /// `REPLY.1..N`, one per requester, no selector (brokers that ignore selectors).
    PerRequester,
}

/// Parses `--reply-queues`: `shared` or `per-requester`.
pub fn parse_reply_queues(text: &str) -> Result<ReplyQueues, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "shared" => Ok(ReplyQueues::Shared),
        "per-requester" => Ok(ReplyQueues::PerRequester),
        _ => Err(format!(
            "invalid reply queues '{text}': use shared (one REPLY queue, replies selected by \
             JMSCorrelationID) or per-requester (REPLY.1..N, no selector)"
        )),
    }
}

/// Parses `--prefetch`: AMQP link credit per receiver, 1..=10000.
pub fn parse_prefetch(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(n) if (1..=10_000).contains(&n) => Ok(n),
        _ => Err(format!(
            "invalid prefetch '{text}': give the credit each AMQP receiver keeps open, a whole \
             number from 1 to 10000 (1: one message at a time)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_of_the_reports_parse() {
        assert_eq!(parse_size("256B"), Ok(256));
        assert_eq!(parse_size("2KB"), Ok(2048));
        assert_eq!(parse_size("20KB"), Ok(20 * 1024));
        assert_eq!(parse_size("200KB"), Ok(200 * 1024));
        assert_eq!(parse_size("2MB"), Ok(2 * 1024 * 1024));
        assert_eq!(parse_size("2kb"), Ok(2048));
        assert_eq!(parse_size("2k"), Ok(2048));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size(" 1M "), Ok(1024 * 1024));
    }

    #[test]
    fn bad_sizes_say_what_is_accepted() {
        for bad in [
            "3XB",
            "",
            "KB",
            "0",
            "0KB",
            "-1KB",
            "2.5KB",
            "101MB",
            "2 KB",
            "99999999999999999999",
        ] {
            let e = parse_size(bad).expect_err(bad);
            assert!(e.contains("256B, 2KB"), "{bad}: {e}");
        }
    }

    #[test]
    fn sizes_format_like_the_reports() {
        assert_eq!(format_size(256), "256B");
        assert_eq!(format_size(2048), "2KB");
        assert_eq!(format_size(200 * 1024), "200KB");
        assert_eq!(format_size(2 * 1024 * 1024), "2MB");
        assert_eq!(format_size(1500), "1500B");
    }

    #[test]
    fn client_lists_parse_in_order() {
        assert_eq!(parse_clients("1,4,16,64"), Ok(vec![1, 4, 16, 64]));
        assert_eq!(parse_clients(" 8 , 2 "), Ok(vec![8, 2]));
        assert_eq!(parse_clients("10000"), Ok(vec![10000]));
    }

    #[test]
    fn bad_client_lists_name_the_culprit() {
        for (bad, culprit) in [
            ("0", "'0'"),
            ("1,,4", "''"),
            ("1,x", "'x'"),
            ("10001", "'10001'"),
            ("-1", "'-1'"),
        ] {
            let e = parse_clients(bad).expect_err(bad);
            assert!(e.contains(culprit) && e.contains("1,4,16,64"), "{bad}: {e}");
        }
    }

    #[test]
    fn responders_auto_covers_every_queue() {
        assert_eq!(parse_responders("auto"), Ok(Responders::Auto));
        assert_eq!(parse_responders("AUTO"), Ok(Responders::Auto));
        assert_eq!(parse_responders("12"), Ok(Responders::Fixed(12)));
        assert!(parse_responders("0").is_err());
        assert!(parse_responders("many").is_err());
        assert_eq!(Responders::Auto.count(1, 10), 10);
        assert_eq!(Responders::Auto.count(64, 10), 64);
        assert_eq!(Responders::Fixed(20).count(64, 10), 20);
    }

    #[test]
    fn size_lists_and_rates() {
        assert_eq!(
            parse_sizes("256B,2KB,20KB,200KB,2MB"),
            Ok(SizeList(vec![256, 2048, 20480, 204800, 2097152]))
        );
        assert_eq!(parse_sizes(" 2KB , 20KB"), Ok(SizeList(vec![2048, 20480])));
        let e = parse_sizes("2KB,,20KB").expect_err("empty item");
        assert!(e.contains("invalid size ''"), "{e}");
        assert_eq!(parse_rate("100"), Ok(100.0));
        assert_eq!(parse_rate("0.01"), Ok(0.01));
        for bad in ["0", "-5", "inf", "x", "2000000"] {
            let e = parse_rate(bad).expect_err(bad);
            assert!(e.contains("per requester"), "{bad}: {e}");
        }
    }

    #[test]
    fn durations_and_counts_are_checked() {
        assert_eq!(parse_secs("10"), Ok(10.0));
        assert_eq!(parse_secs("0.5"), Ok(0.5));
        assert!(parse_secs("0").is_err());
        assert!(parse_secs("nan").is_err());
        assert_eq!(parse_warmup("0"), Ok(0.0));
        assert!(parse_warmup("-1").is_err());
        assert_eq!(parse_queues("10"), Ok(10));
        assert!(parse_queues("0").is_err());
        assert_eq!(parse_sharecnv("0"), Ok(0));
        assert!(parse_sharecnv("1000").is_err());
    }

    #[test]
    fn amqp_choices_parse() {
        assert_eq!(parse_protocol("amqp"), Ok(Protocol::Amqp));
        assert_eq!(parse_protocol("Native"), Ok(Protocol::Native));
        assert!(parse_protocol("mqtt").unwrap_err().contains("native"));
        assert_eq!(
            parse_reply_queues("per-requester"),
            Ok(ReplyQueues::PerRequester)
        );
        assert_eq!(parse_reply_queues("shared"), Ok(ReplyQueues::Shared));
        assert!(parse_reply_queues("private").is_err());
        assert_eq!(parse_prefetch("1"), Ok(1));
        assert!(parse_prefetch("0").is_err());
        assert_eq!(parse_sessions_per_connection("10"), Ok(10));
        assert!(parse_sessions_per_connection("0").is_err());
        assert!(parse_sessions_per_connection("256").is_err());
    }
}
