//! qm.ini: the queue manager's configuration stanzas, with MQ's names and defaults.
//!
//! The file is MQ's stanza format: `Name:` at column 1, then indented `Key=Value` lines,
//! `#` or `;` comments. `ferry create` writes every stanza with its defaults so an
//! administrator sees what can be tuned; `ferry start` reads it back and refuses values it
//! cannot honour with a message naming the stanza, key and allowed range.
//!
//! Every key is a row of one table, [`keys::STANZAS`] (stanza, key, kind, default, range,
//! meaning): parsing, checking, defaults, the file `ferry create` writes and the docs all
//! come from it. This module holds the typed result, [`QmIni`], that the rest of the
//! server reads.

pub mod keys;

use crate::error_log::suppression::Rules;
use crate::limits::Limits;
use keys::{DefaultValue, STANZAS};
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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChannelsStanza {
    /// MaxChannels: most channel instances (client connections) at once.
    pub max_channels: u32,
    /// MaxActiveChannels: most channels running at once.
    pub max_active_channels: u32,
}

/// TCP stanza.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TcpStanza {
    /// KeepAlive: SO_KEEPALIVE on channel sockets.
    pub keep_alive: bool,
    /// ListenerBacklog (0: system default).
    pub listener_backlog: u32,
    /// SecureCommsOnly: conversations without TLS are refused on every channel.
    pub secure_comms_only: bool,
}

/// SSL stanza: which CipherSpecs the queue manager may use at all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SslStanza {
    /// AllowedCipherSpecs: `ALL`, or CipherSpec names separated by commas.
    pub allowed_cipher_specs: String,
    /// AllowTLSV13: TLS 1.3 CipherSpecs may be used.
    pub allow_tls13: bool,
}

impl SslStanza {
    /// The policy the TLS layer applies.
    pub fn policy(
        &self,
    ) -> Result<ferry_security::CipherSpecPolicy, ferry_security::CipherSpecError> {
        ferry_security::CipherSpecPolicy::parse(&self.allowed_cipher_specs, self.allow_tls13)
    }
}

/// TuningParameters stanza.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TuningStanza {
    /// DefaultQBufferSize: per-queue memory for non-persistent messages.
    pub default_q_buffer_size: u64,
    /// DefaultPQBufferSize: per-queue memory for persistent messages.
    pub default_pq_buffer_size: u64,
    /// ImplSyncOpenOutput: output handles from which persistent puts use implicit syncpoint (0 = OFF).
    pub impl_sync_open_output: u32,
    /// RuntimeScheduling: the Linux scheduling policy of the thread that serves every
    /// connection (`BATCH` or `NORMAL`; runtime/scheduling.rs).
    pub runtime_scheduling: String,
    /// WakeCoalescing: microseconds the runtime thread naps before it waits on its sockets
    /// under load from many connections (0 = never; runtime/wake_coalescing.rs).
    pub wake_coalescing: u32,
}

/// QMErrorLog stanza: the error log's size and suppression, and the console log's size.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
    /// AutoConfig stanza: configuration applied at every start.
    pub auto_config: AutoConfigStanza,
    /// Service stanza: the authorization service.
    pub service: ServiceStanza,
    /// SSL stanza: the CipherSpecs the queue manager may use.
    pub ssl: SslStanza,
    /// WebServer stanza: the HTTP(S) server (health, REST API).
    pub web: WebServerStanza,
    /// Monitoring stanza: `$SYS` publications and the Prometheus exposition.
    pub monitoring: MonitoringStanza,
    /// Tracing stanza: OpenTelemetry spans exported over OTLP.
    pub tracing: TracingStanza,
}

/// Tracing stanza (runtime/telemetry).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TracingStanza {
    /// Endpoint: the OTLP/HTTP collector URL (empty: off).
    pub endpoint: String,
    /// Sampler: off, always, parent or ratio.
    pub sampler: String,
    /// Ratio: the share of traces sampled by `Sampler=ratio`, 0 to 1 (text: qm.ini has
    /// no decimal kind).
    pub ratio: String,
    /// ServiceName: the spans' `service.name` (empty: the queue manager's name).
    pub service_name: String,
}

impl TracingStanza {
    /// Ratio as a number from 0 to 1, if it is one.
    pub fn ratio_value(&self) -> Option<f64> {
        self.ratio
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|r| (0.0..=1.0).contains(r))
    }
}

/// WebServer stanza: the queue manager's HTTP(S) server (runtime/web).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WebServerStanza {
    /// Port: 0 = no web server.
    pub port: u16,
    /// BindAddress: the address it listens on.
    pub bind_address: String,
    /// SSL: HTTPS with the queue manager's certificate from its key repository.
    pub ssl: bool,
    /// MaxConnections: HTTP connections served at once.
    pub max_connections: u32,
    /// MaxRequestBody: bytes of a request body.
    pub max_request_body: u64,
    /// HeaderReadTimeout: seconds a client has to send a request's headers.
    pub header_read_timeout: u64,
    /// IdleTimeout: seconds an idle keep-alive connection stays open.
    pub idle_timeout: u64,
    /// RequestTimeout: seconds one request may take, body and answer included.
    pub request_timeout: u64,
    /// SessionTimeout: seconds a console or REST login session lasts unused.
    pub session_timeout: u64,
}

/// Monitoring stanza.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MonitoringStanza {
    /// PublicationInterval: seconds between resource-monitoring publications.
    pub interval_secs: u64,
    /// PrometheusQueues: generic queue names the exposition shows.
    pub queues: String,
    /// PrometheusQueuesExclude: generic queue names it leaves out.
    pub queues_exclude: String,
    /// PrometheusChannels: generic channel names the exposition shows.
    pub channels: String,
    /// PrometheusChannelsExclude: generic channel names it leaves out.
    pub channels_exclude: String,
    /// PrometheusAuthentication: REMOTE (scrapes from other hosts authenticate) or NONE.
    pub authentication: String,
}

impl MonitoringStanza {
    /// The queues the Prometheus exposition shows.
    pub fn queue_filter(
        &self,
    ) -> Result<ferry_monitoring::NameFilter, ferry_monitoring::prometheus::FilterError> {
        ferry_monitoring::NameFilter::parse(&self.queues, &self.queues_exclude)
    }

    /// The channels the Prometheus exposition shows.
    pub fn channel_filter(
        &self,
    ) -> Result<ferry_monitoring::NameFilter, ferry_monitoring::prometheus::FilterError> {
        ferry_monitoring::NameFilter::parse(&self.channels, &self.channels_exclude)
    }
}

/// The name of the authorization service (qm.ini Service/Name), as MQ's qm.ini names it.
pub const AUTHORIZATION_SERVICE: &str = "AuthorizationService";

/// Service stanza.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServiceStanza {
    /// Name: `AuthorizationService` when object authorities are checked; blank (a queue
    /// manager created with MQSNOAUT=yes, or before Ferry had authority records): none.
    pub name: String,
}

impl ServiceStanza {
    /// True when object authorities are checked.
    pub fn checks_authority(&self) -> bool {
        self.name.eq_ignore_ascii_case(AUTHORIZATION_SERVICE)
    }
}

/// AutoConfig stanza.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AutoConfigStanza {
    /// MQSCConfig: an MQSC script, or a directory of `*.mqsc` scripts, run at every start
    /// (blank: none).
    pub mqsc_config: String,
}

impl QmIni {
    /// The defaults of every key (from [`keys::STANZAS`]) for a new queue manager `name`
    /// whose log lives in `log_path`.
    pub fn defaults(name: &str, log_path: &Path) -> Self {
        let mut ini = QmIni::default();
        for stanza in STANZAS {
            for key in stanza.keys {
                if let Some(value) = key.default_value() {
                    (key.set)(&mut ini, value);
                }
            }
        }
        ini.name = name.to_string();
        ini.log.path = format!("{}/", log_path.display());
        debug_assert!(
            STANZAS.iter().flat_map(|s| s.keys).all(|k| matches!(
                k.default,
                DefaultValue::FromCreate
            ) || k.default_value()
                == Some((k.get)(&ini))),
            "every default reads back as itself"
        );
        ini
    }

    /// The file text: a header, then every stanza of [`keys::STANZAS`] with every key.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for line in [
            "#*******************************************************************#",
            "#* Ferry queue manager configuration file                          *#",
            "#* Read at start; restart the queue manager after a change.         *#",
            "#*******************************************************************#",
        ] {
            let _ = writeln!(s, "{line}");
        }
        for stanza in STANZAS {
            let _ = writeln!(s, "{}:", stanza.name);
            for key in stanza.keys {
                let _ = writeln!(s, "   {}={}", key.key, key.kind.write(&(key.get)(self)));
            }
        }
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

    /// Parses and checks qm.ini text: every key of [`keys::STANZAS`] the text sets is read
    /// through its row; a key a strict stanza does not know is refused; stanzas Ferry
    /// does not read are left alone.
    pub fn parse(text: &str, log_path: &Path) -> Result<Self, IniError> {
        let file = parse_stanzas(text)?;
        let mut ini = QmIni::defaults("", log_path);
        for (name, values) in &file {
            let Some(stanza) = keys::stanza(name) else {
                continue;
            };
            if stanza.strict {
                if let Some(unknown) = values.keys().find(|k| {
                    !stanza
                        .keys
                        .iter()
                        .any(|row| row.key.eq_ignore_ascii_case(k))
                }) {
                    return Err(IniError::BadValue {
                        stanza: stanza.name,
                        key: "(key)",
                        value: unknown.clone(),
                        expected: format!(
                            "one of {}",
                            stanza
                                .keys
                                .iter()
                                .map(|r| r.key)
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    });
                }
            }
            for row in stanza.keys {
                let Some((_, text)) = values.iter().find(|(k, _)| row.key.eq_ignore_ascii_case(k))
                else {
                    continue;
                };
                let value = row.kind.read(text).ok_or_else(|| IniError::BadValue {
                    stanza: stanza.name,
                    key: row.key,
                    value: text.clone(),
                    expected: row.kind.describe(),
                })?;
                (row.set)(&mut ini, value);
            }
        }
        if ini.log.primary_files + ini.log.secondary_files > 511 {
            return Err(IniError::BadValue {
                stanza: "Log",
                key: "LogSecondaryFiles",
                value: ini.log.secondary_files.to_string(),
                expected: "LogPrimaryFiles + LogSecondaryFiles must not exceed 511".into(),
            });
        }
        for (key, value, check) in [
            (
                "PrometheusQueues",
                &ini.monitoring.queues,
                ini.monitoring.queue_filter(),
            ),
            (
                "PrometheusChannels",
                &ini.monitoring.channels,
                ini.monitoring.channel_filter(),
            ),
        ] {
            if let Err(e) = check {
                return Err(IniError::BadValue {
                    stanza: "Monitoring",
                    key,
                    value: value.clone(),
                    expected: e.to_string(),
                });
            }
        }
        if ini.tracing.ratio_value().is_none() {
            return Err(IniError::BadValue {
                stanza: "Tracing",
                key: "Ratio",
                value: ini.tracing.ratio.clone(),
                expected: "a number from 0 to 1 (e.g. 0.01)".into(),
            });
        }
        if let Err(e) = ini.ssl.policy() {
            return Err(IniError::BadValue {
                stanza: "SSL",
                key: "AllowedCipherSpecs",
                value: ini.ssl.allowed_cipher_specs.clone(),
                expected: format!(
                    "ALL, or CipherSpec names (not aliases) separated by commas: {e}"
                ),
            });
        }
        Ok(ini)
    }
}

/// A qm.ini override file (MQ's AutoConfig/IniConfig, `crtmqm -ii`: a container's
/// `*.ini` files) that could not be merged: the line of the override and why.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct OverrideError {
    /// 1-based line of the override file (0 when no line of it is to blame).
    pub line: usize,
    /// What is wrong, as a start would say it.
    pub reason: String,
}

/// Merges `overrides`, text in qm.ini's format holding only the stanzas and keys that
/// change (MQ's IniConfig files), into the qm.ini text `base`, as MQ merges IniConfig at
/// each start: a key replaces the value of the same key (any case) in the stanza of the
/// same name, or is added at the end of that stanza; a stanza `base` lacks is added at
/// the end. Comments and every other line of `base` stay as they are. The result is then
/// checked as a start checks qm.ini, so a value out of range is refused here with the
/// line of the override that set it. Returns the merged text and the number of keys set.
pub fn merge_overrides(
    base: &str,
    overrides: &str,
    log_path: &Path,
) -> Result<(String, usize), OverrideError> {
    let mut entries: Vec<(String, String, String, usize)> = Vec::new();
    let mut current: Option<String> = None;
    for (i, raw) in overrides.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if !raw.starts_with([' ', '\t']) && line.ends_with(':') && !line.contains('=') {
            current = Some(line.trim_end_matches(':').trim().to_string());
            continue;
        }
        match (line.split_once('='), &current) {
            (Some((k, v)), Some(stanza)) if !k.trim().is_empty() => {
                let value = v.split(['#', ';']).next().unwrap_or("").trim().to_string();
                entries.push((stanza.clone(), k.trim().to_string(), value, i + 1));
            }
            (Some(_), None) => {
                return Err(OverrideError {
                    line: i + 1,
                    reason: format!("{raw:?} comes before any 'Stanza:' line"),
                })
            }
            _ => {
                return Err(OverrideError {
                    line: i + 1,
                    reason: format!("expected 'Stanza:' or 'Key=Value', found {raw:?}"),
                })
            }
        }
    }
    let mut text = base.to_string();
    for (stanza, key, value, _) in &entries {
        text = set_key(&text, stanza, key, value);
    }
    if let Err(e) = QmIni::parse(&text, log_path) {
        let line = match &e {
            IniError::BadValue {
                stanza, key, value, ..
            } => entries
                .iter()
                .find(|(s, k, _, _)| {
                    s.eq_ignore_ascii_case(stanza)
                        && (k.eq_ignore_ascii_case(key)
                            || (*key == "(key)" && k.eq_ignore_ascii_case(value)))
                })
                .map_or(0, |e| e.3),
            _ => 0,
        };
        return Err(OverrideError {
            line,
            reason: e.to_string(),
        });
    }
    Ok((text, entries.len()))
}

/// Sets `key=value` in the first stanza named `stanza` (any case) of qm.ini text, adding
/// the key at the end of the stanza, or the stanza at the end of the text.
fn set_key(text: &str, stanza: &str, key: &str, value: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let is_header =
        |l: &str| !l.starts_with([' ', '\t']) && l.trim().ends_with(':') && !l.contains('=');
    let entry = format!("   {key}={value}");
    let Some(start) = lines.iter().position(|l| {
        is_header(l)
            && l.trim()
                .trim_end_matches(':')
                .trim()
                .eq_ignore_ascii_case(stanza)
    }) else {
        lines.push(format!("{stanza}:"));
        lines.push(entry);
        return lines.join("\n") + "\n";
    };
    let end = lines[start + 1..]
        .iter()
        .position(|l| is_header(l))
        .map_or(lines.len(), |i| start + 1 + i);
    let existing = lines[start + 1..end].iter().position(|l| {
        let t = l.trim();
        !t.starts_with(['#', ';'])
            && t.split_once('=')
                .is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case(key))
    });
    match existing {
        Some(i) => lines[start + 1 + i] = entry,
        None => {
            // After the stanza's last key, before trailing blank or comment lines.
            let mut at = end;
            while at > start + 1 && {
                let t = lines[at - 1].trim();
                t.is_empty() || t.starts_with(['#', ';'])
            } {
                at -= 1;
            }
            lines.insert(at, entry);
        }
    }
    lines.join("\n") + "\n"
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
    fn tracing_keys_are_read_and_a_bad_ratio_is_refused() {
        let ini = QmIni::parse("Log:\n   LogFilePages=4096\n", Path::new("/l")).unwrap();
        assert_eq!(ini.tracing.endpoint, "", "a qm.ini without the stanza: off");
        assert_eq!(ini.tracing.sampler, "parent");
        assert_eq!(ini.tracing.ratio_value(), Some(1.0));
        let text = "Tracing:\n   Endpoint=http://localhost:4318\n   Sampler=RATIO\n   Ratio=0.25\n   ServiceName=orders\n";
        let ini = QmIni::parse(text, Path::new("/l")).unwrap();
        assert_eq!(ini.tracing.endpoint, "http://localhost:4318");
        assert_eq!(ini.tracing.sampler, "ratio");
        assert_eq!(ini.tracing.ratio_value(), Some(0.25));
        assert_eq!(ini.tracing.service_name, "orders");
        let err = QmIni::parse("Tracing:\n   Ratio=2\n", Path::new("/l")).unwrap_err();
        assert!(err.to_string().contains("Tracing/Ratio"), "{err}");
        let err = QmIni::parse("Tracing:\n   Sampler=sometimes\n", Path::new("/l")).unwrap_err();
        assert!(
            err.to_string().contains("off, always, parent or ratio"),
            "{err}"
        );
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
            ("ExcludeMessage", "9998"),
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

    #[test]
    fn every_key_of_the_table_is_written_and_read_back() {
        let ini = QmIni::defaults("QM1", Path::new("/var/ferry/log/QM1"));
        let text = ini.render();
        for stanza in STANZAS {
            assert!(
                text.contains(&format!("\n{}:\n", stanza.name)),
                "{}",
                stanza.name
            );
            for key in stanza.keys {
                assert!(text.contains(&format!("\n   {}=", key.key)), "{}", key.key);
                if let Some(default) = key.default_value() {
                    assert_eq!((key.get)(&ini), default, "{}/{}", stanza.name, key.key);
                }
            }
        }
        assert!(text.contains("\n   LogPath=/var/ferry/log/QM1/\n"));
        assert!(text.contains("\n   ImplSyncOpenOutput=2\n"));
        assert!(text.contains("\n   KeepAlive=NO\n"));
    }

    #[test]
    fn unknown_keys_stop_only_ferrys_own_stanza() {
        // MQ's stanzas have keys Ferry does not read yet: they are left alone.
        let ini = QmIni::parse(
            "Log:\n   LogDefaultPath=/x\nService:\n   Name=S\n",
            Path::new("/l"),
        )
        .unwrap();
        assert_eq!(ini.log.primary_files, 3);
        let err = QmIni::parse("Limits:\n   MaxSockets=9\n", Path::new("/l")).unwrap_err();
        assert_eq!(
            err.to_string().split(':').next(),
            Some("qm.ini Limits/(key)=\"MaxSockets\"")
        );
        let err = QmIni::parse("Log:\n   LogBufferPages=5\n", Path::new("/l")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "qm.ini Log/LogBufferPages=\"5\": 0 (default, 512 pages) or a number from 18 to 4096"
        );
        let err = QmIni::parse(
            "Log:\n   LogPrimaryFiles=500\n   LogSecondaryFiles=100\n",
            Path::new("/l"),
        )
        .unwrap_err();
        assert!(err.to_string().contains("must not exceed 511"), "{err}");
    }

    #[test]
    fn overrides_merge_into_their_stanzas_and_add_new_ones() {
        let base = QmIni::defaults("QM1", Path::new("/l")).render();
        let over = "# seed\nChannels:\n   MQIBindType=FASTPATH\n   maxchannels=5000\nTuningParameters:\n   DefaultQBufferSize=10485760\nNewStanza:\n   A=b\n";
        let (text, keys) = merge_overrides(&base, over, Path::new("/l")).unwrap();
        assert_eq!(keys, 4);
        let ini = QmIni::parse(&text, Path::new("/l")).unwrap();
        assert_eq!(ini.channels.max_channels, 5000);
        assert_eq!(ini.tuning.default_q_buffer_size, 10_485_760);
        assert_eq!(
            text.matches("MaxChannels=").count() + text.matches("maxchannels=").count(),
            1
        );
        assert!(text.contains("   MQIBindType=FASTPATH\n"));
        assert!(text.ends_with("NewStanza:\n   A=b\n"));
        // Merging again changes nothing.
        let (again, _) = merge_overrides(&text, over, Path::new("/l")).unwrap();
        assert_eq!(again, text);
    }

    #[test]
    fn bad_overrides_name_their_line() {
        let base = QmIni::defaults("QM1", Path::new("/l")).render();
        let err = merge_overrides(
            &base,
            "Log:\n   LogBufferPages=4096\nChannels:\n   MaxChannels=0\n",
            Path::new("/l"),
        )
        .unwrap_err();
        assert_eq!(err.line, 4, "{err}");
        assert!(err.reason.contains("Channels/MaxChannels"), "{err}");
        let err = merge_overrides(&base, "Channels:\nMaxChannels\n", Path::new("/l")).unwrap_err();
        assert_eq!(err.line, 2, "{err}");
        let err = merge_overrides(&base, "MaxChannels=5\n", Path::new("/l")).unwrap_err();
        assert_eq!(err.line, 1, "{err}");
        let err =
            merge_overrides(&base, "\nLimits:\n   NoSuchLimit=1\n", Path::new("/l")).unwrap_err();
        assert_eq!(err.line, 3, "{err}");
    }

    #[test]
    fn docs_are_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/operations.md");
        let doc = std::fs::read_to_string(path).unwrap_or_default();
        let wanted = ferry_mqsc::docs::splice_section(
            &doc,
            keys::BEGIN_MARKER,
            keys::END_MARKER,
            &keys::render_doc_table(),
        );
        if std::env::var("FERRY_BLESS").is_ok_and(|v| v == "1") {
            std::fs::write(path, &wanted).expect("docs/operations.md is writable");
            return;
        }
        assert!(
            doc == wanted,
            "docs/operations.md's qm.ini section is out of date: run FERRY_BLESS=1 cargo test -p ferry-server --lib qm_ini"
        );
    }
}
