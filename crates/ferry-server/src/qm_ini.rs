//! qm.ini: the queue manager's configuration stanzas, with MQ's names and defaults.
//!
//! The file is MQ's stanza format: `Name:` at column 1, then indented `Key=Value` lines,
//! `#` or `;` comments. `ferry create` writes every stanza with its defaults so an
//! administrator sees what can be tuned; `ferry start` reads it back and refuses values it
//! cannot honour with a message naming the stanza, key and allowed range.

use crate::error_log::suppression::{self, Rules};
use crate::limits::Limits;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

/// A refused qm.ini.
#[derive(Debug, thiserror::Error)]
pub enum IniError {
    /// The file could not be read or written.
    #[error("qm.ini: {0}")]
    Io(#[from] std::io::Error),
    /// A line is not a stanza header, key=value, comment or blank.
    #[error("qm.ini line {line}: expected 'Stanza:' or 'Key=Value', found {text:?}")]
    Syntax {
        /// 1-based line number.
        line: usize,
        /// The line.
        text: String,
    },
    /// A value is of the wrong kind or out of range.
    #[error("qm.ini {stanza}/{key}={value:?}: {expected}")]
    BadValue {
        /// Stanza name.
        stanza: &'static str,
        /// Key.
        key: &'static str,
        /// Value found.
        value: String,
        /// What is accepted.
        expected: String,
    },
}

/// Log stanza: the recovery log (used by persistent messaging).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogStanza {
    /// LogPrimaryFiles: extents preallocated (2-510).
    pub primary_files: u32,
    /// LogSecondaryFiles: extents beyond the primary ones that checkpoints do not plan to
    /// use: headroom before the log is full (1-509; preallocated with the primary ones).
    pub secondary_files: u32,
    /// LogFilePages: extent size in 4 KiB pages (64-65535).
    pub file_pages: u32,
    /// LogBufferPages: in-memory log buffer pages (0 = 512, else 18-4096).
    pub buffer_pages: u32,
    /// LogType: CIRCULAR (LINEAR comes later).
    pub log_type: String,
    /// LogWriteIntegrity: SingleWrite, DoubleWrite or TripleWrite.
    pub write_integrity: String,
    /// LogPath: where the extents live.
    pub path: String,
}

/// Channels stanza.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChannelsStanza {
    /// MaxChannels: most channel instances (client connections) at once.
    pub max_channels: u32,
    /// MaxActiveChannels: most channels running at once.
    pub max_active_channels: u32,
}

/// TCP stanza.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpStanza {
    /// KeepAlive: SO_KEEPALIVE on channel sockets.
    pub keep_alive: bool,
    /// ListenerBacklog (0: system default).
    pub listener_backlog: u32,
}

/// TuningParameters stanza.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TuningStanza {
    /// DefaultQBufferSize: per-queue memory for non-persistent messages.
    pub default_q_buffer_size: u64,
    /// DefaultPQBufferSize: per-queue memory for persistent messages.
    pub default_pq_buffer_size: u64,
    /// ImplSyncOpenOutput: output handles from which persistent puts use implicit syncpoint (0 = OFF).
    pub impl_sync_open_output: u32,
}

/// QMErrorLog stanza: the error log's size and suppression, and the console log's size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorLogStanza {
    /// ErrorLogSize: bytes before FRYERR01.LOG is rotated.
    pub error_log_size: u64,
    /// SuppressMessage: message numbers written once per SuppressInterval and cause, on
    /// top of the channel and connection family (9xxx) that always is.
    pub suppress_message: BTreeSet<u32>,
    /// SuppressInterval: seconds a suppressed message's repeats are counted, not written
    /// (1-86400, MQ's default 30).
    pub suppress_interval: u64,
    /// ExcludeMessage: message numbers never written.
    pub exclude_message: BTreeSet<u32>,
    /// ConsoleLogSize: bytes before run/console.log (a background queue manager's stdout
    /// and stderr) is rotated to console.log.1 and console.log.2. Ferry's own key: MQ
    /// has no console log.
    pub console_log_size: u64,
}

impl ErrorLogStanza {
    /// The suppression rules these keys give, tracking at most `max_causes` causes
    /// (Limits/ErrorLogCauses).
    pub fn suppression_rules(&self, max_causes: u64) -> Rules {
        Rules {
            interval: std::time::Duration::from_secs(self.suppress_interval),
            suppress: self.suppress_message.clone(),
            exclude: self.exclude_message.clone(),
            max_causes: usize::try_from(max_causes).unwrap_or(usize::MAX),
        }
    }
}

/// The whole qm.ini.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QmIni {
    /// QueueManager/Name.
    pub name: String,
    /// Log stanza.
    pub log: LogStanza,
    /// Channels stanza.
    pub channels: ChannelsStanza,
    /// TCP stanza.
    pub tcp: TcpStanza,
    /// TuningParameters stanza.
    pub tuning: TuningStanza,
    /// QMErrorLog stanza.
    pub error_log: ErrorLogStanza,
    /// Limits stanza: what a client can make the queue manager hold or wait for.
    pub limits: Limits,
}

impl QmIni {
    /// MQ's defaults for a new queue manager whose log lives in `log_path`.
    pub fn defaults(name: &str, log_path: &Path) -> Self {
        QmIni {
            name: name.to_string(),
            log: LogStanza {
                primary_files: 3,
                secondary_files: 2,
                file_pages: 4096,
                buffer_pages: 0,
                log_type: "CIRCULAR".into(),
                write_integrity: "TripleWrite".into(),
                path: format!("{}/", log_path.display()),
            },
            channels: ChannelsStanza {
                max_channels: 100,
                max_active_channels: 100,
            },
            tcp: TcpStanza {
                keep_alive: false,
                listener_backlog: 0,
            },
            tuning: TuningStanza {
                default_q_buffer_size: 65_536,
                default_pq_buffer_size: 131_072,
                impl_sync_open_output: 2,
            },
            error_log: ErrorLogStanza {
                error_log_size: 33_554_432,
                suppress_message: BTreeSet::new(),
                suppress_interval: 30,
                exclude_message: BTreeSet::new(),
                console_log_size: 8_388_608,
            },
            limits: Limits::default(),
        }
    }

    /// The file text, every stanza with its values.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "#*******************************************************************#"
        );
        let _ = writeln!(
            s,
            "#* Ferry queue manager configuration file                          *#"
        );
        let _ = writeln!(
            s,
            "#* Read at start; restart the queue manager after a change.         *#"
        );
        let _ = writeln!(
            s,
            "#*******************************************************************#"
        );
        let _ = writeln!(s, "QueueManager:\n   Name={}", self.name);
        let l = &self.log;
        let _ = writeln!(s, "Log:");
        let _ = writeln!(s, "   LogPrimaryFiles={}", l.primary_files);
        let _ = writeln!(s, "   LogSecondaryFiles={}", l.secondary_files);
        let _ = writeln!(s, "   LogFilePages={}", l.file_pages);
        let _ = writeln!(s, "   LogBufferPages={}", l.buffer_pages);
        let _ = writeln!(s, "   LogType={}", l.log_type);
        let _ = writeln!(s, "   LogWriteIntegrity={}", l.write_integrity);
        let _ = writeln!(s, "   LogPath={}", l.path);
        let _ = writeln!(s, "Channels:");
        let _ = writeln!(s, "   MaxChannels={}", self.channels.max_channels);
        let _ = writeln!(
            s,
            "   MaxActiveChannels={}",
            self.channels.max_active_channels
        );
        let _ = writeln!(s, "TCP:");
        let _ = writeln!(
            s,
            "   KeepAlive={}",
            if self.tcp.keep_alive { "YES" } else { "NO" }
        );
        let _ = writeln!(s, "   ListenerBacklog={}", self.tcp.listener_backlog);
        let _ = writeln!(s, "TuningParameters:");
        let _ = writeln!(
            s,
            "   DefaultQBufferSize={}",
            self.tuning.default_q_buffer_size
        );
        let _ = writeln!(
            s,
            "   DefaultPQBufferSize={}",
            self.tuning.default_pq_buffer_size
        );
        let iso = match self.tuning.impl_sync_open_output {
            0 => "OFF".to_string(),
            n => n.to_string(),
        };
        let _ = writeln!(s, "   ImplSyncOpenOutput={iso}");
        let _ = writeln!(s, "QMErrorLog:");
        let e = &self.error_log;
        let _ = writeln!(s, "   ErrorLogSize={}", e.error_log_size);
        let _ = writeln!(s, "   SuppressMessage={}", id_list(&e.suppress_message));
        let _ = writeln!(s, "   SuppressInterval={}", e.suppress_interval);
        let _ = writeln!(s, "   ExcludeMessage={}", id_list(&e.exclude_message));
        let _ = writeln!(s, "   ConsoleLogSize={}", e.console_log_size);
        self.limits.render(&mut s);
        s
    }

    /// Writes the file.
    pub fn write(&self, path: &Path) -> Result<(), IniError> {
        std::fs::write(path, self.render())?;
        Ok(())
    }

    /// Reads and checks the file; keys it does not set keep MQ's defaults.
    pub fn read(path: &Path, log_path: &Path) -> Result<Self, IniError> {
        let text = std::fs::read_to_string(path)?;
        Self::parse(&text, log_path)
    }

    /// Parses and checks qm.ini text.
    pub fn parse(text: &str, log_path: &Path) -> Result<Self, IniError> {
        let stanzas = parse_stanzas(text)?;
        let name = stanzas
            .get("QueueManager")
            .and_then(|s| s.get("Name"))
            .cloned()
            .unwrap_or_default();
        let mut ini = QmIni::defaults(&name, log_path);
        let get = |stanza: &str, key: &str| stanzas.get(stanza).and_then(|s| s.get(key)).cloned();

        if let Some(v) = get("Log", "LogPrimaryFiles") {
            ini.log.primary_files = number(&v, "Log", "LogPrimaryFiles", 2, 510)? as u32;
        }
        if let Some(v) = get("Log", "LogSecondaryFiles") {
            ini.log.secondary_files = number(&v, "Log", "LogSecondaryFiles", 1, 509)? as u32;
        }
        if ini.log.primary_files + ini.log.secondary_files > 511 {
            return Err(IniError::BadValue {
                stanza: "Log",
                key: "LogSecondaryFiles",
                value: ini.log.secondary_files.to_string(),
                expected: "LogPrimaryFiles + LogSecondaryFiles must not exceed 511".into(),
            });
        }
        if let Some(v) = get("Log", "LogFilePages") {
            ini.log.file_pages = number(&v, "Log", "LogFilePages", 64, 65_535)? as u32;
        }
        if let Some(v) = get("Log", "LogBufferPages") {
            let n = number(&v, "Log", "LogBufferPages", 0, 4096)? as u32;
            if n != 0 && n < 18 {
                return Err(IniError::BadValue {
                    stanza: "Log",
                    key: "LogBufferPages",
                    value: v,
                    expected: "0 (default, 512 pages) or 18 to 4096".into(),
                });
            }
            ini.log.buffer_pages = n;
        }
        if let Some(v) = get("Log", "LogType") {
            ini.log.log_type = match v.to_ascii_uppercase().as_str() {
                "CIRCULAR" => "CIRCULAR".into(),
                "LINEAR" => {
                    return Err(IniError::BadValue {
                        stanza: "Log",
                        key: "LogType",
                        value: v,
                        expected: "CIRCULAR (linear logging is not supported yet)".into(),
                    })
                }
                _ => {
                    return Err(IniError::BadValue {
                        stanza: "Log",
                        key: "LogType",
                        value: v,
                        expected: "CIRCULAR".into(),
                    })
                }
            };
        }
        if let Some(v) = get("Log", "LogWriteIntegrity") {
            ini.log.write_integrity = match v.to_ascii_lowercase().as_str() {
                "singlewrite" => "SingleWrite".into(),
                "doublewrite" => "DoubleWrite".into(),
                "triplewrite" => "TripleWrite".into(),
                _ => {
                    return Err(IniError::BadValue {
                        stanza: "Log",
                        key: "LogWriteIntegrity",
                        value: v,
                        expected: "SingleWrite, DoubleWrite or TripleWrite".into(),
                    })
                }
            };
        }
        if let Some(v) = get("Log", "LogPath") {
            ini.log.path = v;
        }
        if let Some(v) = get("Channels", "MaxChannels") {
            ini.channels.max_channels = number(&v, "Channels", "MaxChannels", 1, 65_535)? as u32;
        }
        if let Some(v) = get("Channels", "MaxActiveChannels") {
            ini.channels.max_active_channels =
                number(&v, "Channels", "MaxActiveChannels", 1, 65_535)? as u32;
        }
        if let Some(v) = get("TCP", "KeepAlive") {
            ini.tcp.keep_alive = yes_no(&v, "TCP", "KeepAlive")?;
        }
        if let Some(v) = get("TCP", "ListenerBacklog") {
            ini.tcp.listener_backlog = number(&v, "TCP", "ListenerBacklog", 0, 65_535)? as u32;
        }
        if let Some(v) = get("TuningParameters", "DefaultQBufferSize") {
            ini.tuning.default_q_buffer_size =
                number(&v, "TuningParameters", "DefaultQBufferSize", 0, 104_857_600)? as u64;
        }
        if let Some(v) = get("TuningParameters", "DefaultPQBufferSize") {
            ini.tuning.default_pq_buffer_size = number(
                &v,
                "TuningParameters",
                "DefaultPQBufferSize",
                0,
                104_857_600,
            )? as u64;
        }
        if let Some(v) = get("TuningParameters", "ImplSyncOpenOutput") {
            ini.tuning.impl_sync_open_output = if v.eq_ignore_ascii_case("OFF") {
                0
            } else {
                number(&v, "TuningParameters", "ImplSyncOpenOutput", 1, 999_999_999)? as u32
            };
        }
        if let Some(v) = get("QMErrorLog", "ErrorLogSize") {
            ini.error_log.error_log_size =
                number(&v, "QMErrorLog", "ErrorLogSize", 32_768, 2_147_483_647)? as u64;
        }
        if let Some(v) = get("QMErrorLog", "SuppressMessage") {
            ini.error_log.suppress_message = message_ids(&v, "SuppressMessage")?;
        }
        if let Some(v) = get("QMErrorLog", "SuppressInterval") {
            ini.error_log.suppress_interval =
                number(&v, "QMErrorLog", "SuppressInterval", 1, 86_400)? as u64;
        }
        if let Some(v) = get("QMErrorLog", "ExcludeMessage") {
            ini.error_log.exclude_message = message_ids(&v, "ExcludeMessage")?;
        }
        if let Some(v) = get("QMErrorLog", "ConsoleLogSize") {
            ini.error_log.console_log_size =
                number(&v, "QMErrorLog", "ConsoleLogSize", 32_768, 2_147_483_647)? as u64;
        }
        ini.limits = Limits::from_stanza(stanzas.get(crate::limits::STANZA))?;
        Ok(ini)
    }
}

/// Stanza name → key → value. Repeated stanzas merge (later keys win).
fn parse_stanzas(text: &str) -> Result<BTreeMap<String, BTreeMap<String, String>>, IniError> {
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if !raw.starts_with([' ', '\t']) && line.ends_with(':') && !line.contains('=') {
            let name = line.trim_end_matches(':').trim().to_string();
            out.entry(name.clone()).or_default();
            current = Some(name);
            continue;
        }
        match (line.split_once('='), &current) {
            (Some((k, v)), Some(stanza)) => {
                let value = v.split(['#', ';']).next().unwrap_or("").trim().to_string();
                out.entry(stanza.clone())
                    .or_default()
                    .insert(k.trim().to_string(), value);
            }
            _ => {
                return Err(IniError::Syntax {
                    line: i + 1,
                    text: raw.to_string(),
                })
            }
        }
    }
    Ok(out)
}

fn number(
    v: &str,
    stanza: &'static str,
    key: &'static str,
    min: i64,
    max: i64,
) -> Result<i64, IniError> {
    match v.trim().parse::<i64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(IniError::BadValue {
            stanza,
            key,
            value: v.to_string(),
            expected: format!("a number from {min} to {max}"),
        }),
    }
}

/// A SuppressMessage or ExcludeMessage list: comma-separated message numbers, written
/// as MQ writes them (`9504`) or as the error log shows them (`FRY9504E`); each must be
/// in the catalogue and of a kind MQ lets an administrator silence.
fn message_ids(v: &str, key: &'static str) -> Result<BTreeSet<u32>, IniError> {
    let bad = || IniError::BadValue {
        stanza: "QMErrorLog",
        key,
        value: v.to_string(),
        expected: "comma-separated numbers of channel and connection messages (9000-9999), \
                   listener and channel events (5000-5999) or 7234, e.g. 9504,9519"
            .into(),
    };
    let mut out = BTreeSet::new();
    for item in v.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let upper = item.to_ascii_uppercase();
        let digits = upper.strip_prefix("FRY").unwrap_or(&upper);
        let digits = digits.strip_suffix(['I', 'W', 'E']).unwrap_or(digits);
        let number: u32 = digits.parse().map_err(|_| bad())?;
        let known = crate::messages::ALL.iter().any(|m| m.number == number);
        if !known || !suppression::may_suppress(number) {
            return Err(bad());
        }
        out.insert(number);
    }
    Ok(out)
}

fn id_list(ids: &BTreeSet<u32>) -> String {
    ids.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

fn yes_no(v: &str, stanza: &'static str, key: &'static str) -> Result<bool, IniError> {
    match v.to_ascii_uppercase().as_str() {
        "YES" => Ok(true),
        "NO" => Ok(false),
        _ => Err(IniError::BadValue {
            stanza,
            key,
            value: v.to_string(),
            expected: "YES or NO".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_round_trip_through_the_file() {
        let ini = QmIni::defaults("QM1", Path::new("/tmp/log/QM1"));
        let parsed = QmIni::parse(&ini.render(), Path::new("/x")).unwrap();
        assert_eq!(parsed, ini);
        assert!(ini.render().contains("LogWriteIntegrity=TripleWrite"));
    }

    #[test]
    fn edited_values_are_read() {
        let text = "QueueManager:\n   Name=QM2\nLog:\n   LogFilePages=16384  # bigger\n   LogWriteIntegrity=singlewrite\nTuningParameters:\n   ImplSyncOpenOutput=OFF\n";
        let ini = QmIni::parse(text, Path::new("/l")).unwrap();
        assert_eq!(ini.name, "QM2");
        assert_eq!(ini.log.file_pages, 16384);
        assert_eq!(ini.log.write_integrity, "SingleWrite");
        assert_eq!(ini.tuning.impl_sync_open_output, 0);
        assert_eq!(ini.log.primary_files, 3);
    }

    #[test]
    fn bad_values_name_stanza_key_and_range() {
        let err = QmIni::parse("Log:\n   LogFilePages=10\n", Path::new("/l")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "qm.ini Log/LogFilePages=\"10\": a number from 64 to 65535"
        );
        let err = QmIni::parse("Log:\n   LogType=LINEAR\n", Path::new("/l")).unwrap_err();
        assert!(err
            .to_string()
            .contains("linear logging is not supported yet"));
        let err = QmIni::parse("Log:\ngarbage\n", Path::new("/l")).unwrap_err();
        assert!(matches!(err, IniError::Syntax { line: 2, .. }));
    }

    #[test]
    fn error_log_suppression_keys_are_read_and_checked() {
        let text = "QMErrorLog:\n   SuppressMessage=5026, FRY5027I\n   SuppressInterval=5\n   ExcludeMessage=9208\n   ConsoleLogSize=65536\n";
        let ini = QmIni::parse(text, Path::new("/l")).unwrap();
        let e = &ini.error_log;
        assert_eq!(e.suppress_message, BTreeSet::from([5026, 5027]));
        assert_eq!(e.exclude_message, BTreeSet::from([9208]));
        assert_eq!(e.suppress_interval, 5);
        assert_eq!(e.console_log_size, 65_536);
        let rules = e.suppression_rules(64);
        assert_eq!(rules.interval, std::time::Duration::from_secs(5));
        assert_eq!(rules.max_causes, 64);
        // The rendered file reads back the same.
        assert_eq!(QmIni::parse(&ini.render(), Path::new("/l")).unwrap(), ini);
        // Empty lists are the default.
        let ini = QmIni::parse("QMErrorLog:\n   SuppressMessage=\n", Path::new("/l")).unwrap();
        assert!(ini.error_log.suppress_message.is_empty());
        assert_eq!(ini.error_log.suppress_interval, 30);

        for (key, value) in [
            ("SuppressMessage", "8003"),
            ("ExcludeMessage", "7466"),
            ("ExcludeMessage", "9999"),
            ("SuppressMessage", "9504,abc"),
            ("SuppressInterval", "0"),
            ("SuppressInterval", "86401"),
            ("ConsoleLogSize", "100"),
        ] {
            let text = format!("QMErrorLog:\n   {key}={value}\n");
            let err = QmIni::parse(&text, Path::new("/l")).unwrap_err();
            assert!(
                err.to_string()
                    .starts_with(&format!("qm.ini QMErrorLog/{key}=")),
                "{key}={value}: {err}"
            );
        }
    }
}
