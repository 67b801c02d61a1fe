//! Every qm.ini key Ferry reads, in one table: stanza, key, kind of value, default,
//! accepted range and meaning.
//!
//! The table drives everything that shows a key: [`super::QmIni::parse`] reads and checks
//! values through it, [`super::QmIni::defaults`] takes its defaults from it,
//! [`super::QmIni::render`] writes `ferry create`'s file from it, and
//! [`render_doc_table`] writes the qm.ini section of docs/operations.md (a test keeps it
//! current: `FERRY_BLESS=1 cargo test -p ferry-server --lib qm_ini`). Each row reaches its
//! field of [`super::QmIni`] through a `get` and a `set` function, as ferry-objects'
//! attribute tables do. The `Limits:` stanza's rows come from [`crate::limits`], which
//! keeps what each limit bounds beside it.

use super::QmIni;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// A value read from qm.ini, checked against its row's [`ValueKind`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A number (a word such as `OFF` is stored as the number it stands for).
    Number(u64),
    /// Text: a path, a name, or one of a [`ValueKind::Choice`]'s words as spelt there.
    Text(String),
    /// A list of message numbers.
    Ids(BTreeSet<u32>),
}

impl Value {
    /// The number, or 0 for other kinds (a row's kind says which it gets).
    pub fn number(&self) -> u64 {
        match self {
            Value::Number(n) => *n,
            _ => 0,
        }
    }

    /// The number as a u32; the row's range keeps it in bounds.
    pub fn number_u32(&self) -> u32 {
        u32::try_from(self.number()).unwrap_or(u32::MAX)
    }

    /// The text, or an empty string for other kinds.
    pub fn text(&self) -> String {
        match self {
            Value::Text(t) => t.clone(),
            _ => String::new(),
        }
    }

    /// The list, or an empty one for other kinds.
    pub fn ids(&self) -> BTreeSet<u32> {
        match self {
            Value::Ids(ids) => ids.clone(),
            _ => BTreeSet::new(),
        }
    }
}

/// What a key accepts.
#[derive(Clone, Copy, Debug)]
pub enum ValueKind {
    /// A whole number in `min..=max`.
    Number {
        /// Smallest accepted.
        min: u64,
        /// Largest accepted.
        max: u64,
    },
    /// A word standing for one number (`OFF` for 0), or a whole number in `min..=max`.
    WordOrNumber {
        /// The word, as written (case does not matter when read).
        word: &'static str,
        /// The number it stands for.
        means: u64,
        /// Smallest number accepted.
        min: u64,
        /// Largest number accepted.
        max: u64,
        /// What the word does, for the docs and the error message.
        word_meaning: &'static str,
    },
    /// One of a few words, read in any case and written as spelt here.
    Choice {
        /// The words.
        words: &'static [&'static str],
        /// What is accepted, for the error message (may say why others are not).
        expected: &'static str,
    },
    /// Any text (a path, a name).
    Text,
    /// Comma-separated message numbers (`9504` or `FRY9504E`) that may be suppressed.
    MessageIds,
}

impl ValueKind {
    /// What is accepted, as error messages and the docs say it.
    pub fn describe(&self) -> String {
        match *self {
            ValueKind::Number { min, max } => format!("a number from {min} to {max}"),
            ValueKind::WordOrNumber {
                word,
                min,
                max,
                word_meaning,
                ..
            } => format!("{word} ({word_meaning}) or a number from {min} to {max}"),
            ValueKind::Choice { expected, .. } => expected.to_string(),
            ValueKind::Text => "text".to_string(),
            ValueKind::MessageIds => "comma-separated numbers of channel and connection messages \
                (9000-9999), listener and channel events (5000-5999) or 7234, e.g. 9504,9519"
                .to_string(),
        }
    }

    /// Reads `text` as this kind; `None` when it is not accepted.
    pub fn read(&self, text: &str) -> Option<Value> {
        let text = text.trim();
        match *self {
            ValueKind::Number { min, max } => text
                .parse::<u64>()
                .ok()
                .filter(|n| (min..=max).contains(n))
                .map(Value::Number),
            ValueKind::WordOrNumber {
                word,
                means,
                min,
                max,
                ..
            } => {
                if text.eq_ignore_ascii_case(word) {
                    return Some(Value::Number(means));
                }
                text.parse::<u64>()
                    .ok()
                    .filter(|n| (min..=max).contains(n))
                    .map(Value::Number)
            }
            ValueKind::Choice { words, .. } => words
                .iter()
                .find(|w| w.eq_ignore_ascii_case(text))
                .map(|w| Value::Text(w.to_string())),
            ValueKind::Text => Some(Value::Text(text.to_string())),
            ValueKind::MessageIds => message_ids(text).map(Value::Ids),
        }
    }

    /// `value` as qm.ini spells it.
    pub fn write(&self, value: &Value) -> String {
        match (self, value) {
            (ValueKind::WordOrNumber { word, means, .. }, Value::Number(n)) if n == means => {
                word.to_string()
            }
            (_, Value::Number(n)) => n.to_string(),
            (_, Value::Text(t)) => t.clone(),
            (_, Value::Ids(ids)) => ids.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
        }
    }
}

/// A SuppressMessage or ExcludeMessage list: message numbers as MQ writes them (`9504`) or
/// as the error log shows them (`FRY9504E`), each in the message table and of a kind MQ
/// lets an administrator silence.
fn message_ids(text: &str) -> Option<BTreeSet<u32>> {
    let mut out = BTreeSet::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let upper = item.to_ascii_uppercase();
        let digits = upper.strip_prefix("FRY").unwrap_or(&upper);
        let digits = digits.strip_suffix(['I', 'W', 'E', 'S']).unwrap_or(digits);
        let number: u32 = digits.parse().ok()?;
        if ferry_messages::by_number(number).is_none()
            || !crate::error_log::suppression::may_suppress(number)
        {
            return None;
        }
        out.insert(number);
    }
    Some(out)
}

/// A key's default.
#[derive(Clone, Copy, Debug)]
pub enum DefaultValue {
    /// A number.
    Number(u64),
    /// As qm.ini would spell it (read through the row's kind).
    Text(&'static str),
    /// Set from where the queue manager is created (the queue manager's name, LogPath).
    FromCreate,
}

/// One key of a stanza.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    /// The key, as `ferry create` writes it (read in any case).
    pub key: &'static str,
    /// What it accepts.
    pub kind: ValueKind,
    /// Its value in a new queue manager.
    pub default: DefaultValue,
    /// What the number counts (bytes, seconds...), or "".
    pub unit: &'static str,
    /// What it sets.
    pub meaning: &'static str,
    /// What a client that reaches the bound sees ("" for keys that are not bounds).
    pub when_reached: &'static str,
    /// Reads the key's value out of a qm.ini.
    pub get: fn(&QmIni) -> Value,
    /// Stores a checked value.
    pub set: fn(&mut QmIni, Value),
}

impl Key {
    /// The default as a value, or `None` when it comes from create's arguments.
    pub fn default_value(&self) -> Option<Value> {
        match self.default {
            DefaultValue::Number(n) => Some(Value::Number(n)),
            DefaultValue::Text(t) => self.kind.read(t),
            DefaultValue::FromCreate => None,
        }
    }
}

/// One stanza: its name and keys.
#[derive(Clone, Copy, Debug)]
pub struct Stanza {
    /// The name, as in `Log:`.
    pub name: &'static str,
    /// Whether a key not in [`Stanza::keys`] stops the start. MQ's stanzas have keys Ferry
    /// does not use yet and they are left alone; a misspelt key of Ferry's own stanza must
    /// not silently leave a default in force.
    pub strict: bool,
    /// What the stanza is for.
    pub meaning: &'static str,
    /// Its keys, in the order `ferry create` writes them.
    pub keys: &'static [Key],
}

/// QueueManager stanza.
const QUEUE_MANAGER: &[Key] = &[Key {
    key: "Name",
    kind: ValueKind::Text,
    default: DefaultValue::FromCreate,
    unit: "",
    meaning: "The queue manager's name, as given to `ferry create`.",
    when_reached: "",
    get: |i| Value::Text(i.name.clone()),
    set: |i, v| i.name = v.text(),
}];

/// Log stanza.
const LOG: &[Key] = &[
    Key {
        key: "LogPrimaryFiles",
        kind: ValueKind::Number { min: 2, max: 510 },
        default: DefaultValue::Number(3),
        unit: "files",
        meaning: "Log extents preallocated when the queue manager is created.",
        when_reached: "",
        get: |i| Value::Number(i.log.primary_files.into()),
        set: |i, v| i.log.primary_files = v.number_u32(),
    },
    Key {
        key: "LogSecondaryFiles",
        kind: ValueKind::Number { min: 1, max: 509 },
        default: DefaultValue::Number(2),
        unit: "files",
        meaning: "Extents beyond the primary ones that checkpoints do not plan to use: headroom before the log is full (preallocated with the primary ones). LogPrimaryFiles + LogSecondaryFiles must not exceed 511.",
        when_reached: "",
        get: |i| Value::Number(i.log.secondary_files.into()),
        set: |i, v| i.log.secondary_files = v.number_u32(),
    },
    Key {
        key: "LogFilePages",
        kind: ValueKind::Number { min: 64, max: 65_535 },
        default: DefaultValue::Number(4096),
        unit: "pages of 4 KiB",
        meaning: "Size of each log extent.",
        when_reached: "",
        get: |i| Value::Number(i.log.file_pages.into()),
        set: |i, v| i.log.file_pages = v.number_u32(),
    },
    Key {
        key: "LogBufferPages",
        kind: ValueKind::WordOrNumber {
            word: "0",
            means: 0,
            min: 18,
            max: 4096,
            word_meaning: "default, 512 pages",
        },
        default: DefaultValue::Number(0),
        unit: "pages of 4 KiB",
        meaning: "The in-memory log buffer that persistent work is appended to before the log writer writes it.",
        when_reached: "",
        get: |i| Value::Number(i.log.buffer_pages.into()),
        set: |i, v| i.log.buffer_pages = v.number_u32(),
    },
    Key {
        key: "LogType",
        kind: ValueKind::Choice {
            words: &["CIRCULAR"],
            expected: "CIRCULAR (linear logging is not supported yet)",
        },
        default: DefaultValue::Text("CIRCULAR"),
        unit: "",
        meaning: "How log space is reused: CIRCULAR reuses extents once a checkpoint no longer needs them.",
        when_reached: "",
        get: |i| Value::Text(i.log.log_type.clone()),
        set: |i, v| i.log.log_type = v.text(),
    },
    Key {
        key: "LogWriteIntegrity",
        kind: ValueKind::Choice {
            words: &["SingleWrite", "DoubleWrite", "TripleWrite"],
            expected: "SingleWrite, DoubleWrite or TripleWrite",
        },
        default: DefaultValue::Text("TripleWrite"),
        unit: "",
        meaning: "How a partly filled log page is rewritten without risking the records already on it.",
        when_reached: "",
        get: |i| Value::Text(i.log.write_integrity.clone()),
        set: |i, v| i.log.write_integrity = v.text(),
    },
    Key {
        key: "LogPath",
        kind: ValueKind::Text,
        default: DefaultValue::FromCreate,
        unit: "",
        meaning: "Directory of the log extents: `$FERRY_HOME/log/QM/` unless `ferry create --log-path` names another.",
        when_reached: "",
        get: |i| Value::Text(i.log.path.clone()),
        set: |i, v| i.log.path = v.text(),
    },
];

/// Channels stanza.
const CHANNELS: &[Key] = &[
    Key {
        key: "MaxChannels",
        kind: ValueKind::Number { min: 1, max: 65_535 },
        default: DefaultValue::Number(100),
        unit: "instances",
        meaning: "Native client sockets (channel instances) at once; each carries up to SHARECNV conversations.",
        when_reached: "The client's connect fails with 2537 MQRC_CHANNEL_NOT_AVAILABLE; FRY9513E.",
        get: |i| Value::Number(i.channels.max_channels.into()),
        set: |i, v| i.channels.max_channels = v.number_u32(),
    },
    Key {
        key: "MaxActiveChannels",
        kind: ValueKind::Number { min: 1, max: 65_535 },
        default: DefaultValue::Number(100),
        unit: "channels",
        meaning: "Channels running at once in MQ. Read and checked, not used yet: MaxChannels is what bounds client connections.",
        when_reached: "",
        get: |i| Value::Number(i.channels.max_active_channels.into()),
        set: |i, v| i.channels.max_active_channels = v.number_u32(),
    },
];

/// TCP stanza.
const TCP: &[Key] = &[
    Key {
        key: "KeepAlive",
        kind: ValueKind::Choice {
            words: &["YES", "NO"],
            expected: "YES or NO",
        },
        default: DefaultValue::Text("NO"),
        unit: "",
        meaning: "SO_KEEPALIVE on client sockets.",
        when_reached: "",
        get: |i| Value::Text(if i.tcp.keep_alive { "YES" } else { "NO" }.into()),
        set: |i, v| i.tcp.keep_alive = v.text() == "YES",
    },
    Key {
        key: "ListenerBacklog",
        kind: ValueKind::Number { min: 0, max: 65_535 },
        default: DefaultValue::Number(0),
        unit: "connections",
        meaning: "Connections the operating system queues for a listener before it accepts them (0: the system's default). Read and checked, not used yet: listeners take the system's default.",
        when_reached: "",
        get: |i| Value::Number(i.tcp.listener_backlog.into()),
        set: |i, v| i.tcp.listener_backlog = v.number_u32(),
    },
    Key {
        key: "SecureCommsOnly",
        kind: ValueKind::Choice {
            words: &["YES", "NO"],
            expected: "YES or NO",
        },
        default: DefaultValue::Text("NO"),
        unit: "",
        meaning: "YES: every channel refuses conversations without TLS, whatever its SSLCIPH (FRY9643E), as MQ 9.3's SecureCommsOnly; a channel without SSLCIPH then takes no conversation at all.",
        when_reached: "",
        get: |i| Value::Text(if i.tcp.secure_comms_only { "YES" } else { "NO" }.into()),
        set: |i, v| i.tcp.secure_comms_only = v.text() == "YES",
    },
];

/// SSL stanza.
const SSL: &[Key] = &[
    Key {
        key: "AllowedCipherSpecs",
        kind: ValueKind::Text,
        default: DefaultValue::Text("ALL"),
        unit: "",
        meaning: "The CipherSpecs the queue manager may use at all: `ALL`, or CipherSpec names separated by commas (`TLS_AES_128_GCM_SHA256,ECDHE_ECDSA_AES_128_GCM_SHA256`). Others are never offered, whatever a channel's SSLCIPH; a channel left with none refuses its handshakes (FRY9642E). Read at start.",
        when_reached: "",
        get: |i| Value::Text(i.ssl.allowed_cipher_specs.clone()),
        set: |i, v| i.ssl.allowed_cipher_specs = v.text(),
    },
    Key {
        key: "AllowTLSV13",
        kind: ValueKind::Choice {
            words: &["YES", "NO"],
            expected: "YES or NO",
        },
        default: DefaultValue::Text("YES"),
        unit: "",
        meaning: "NO: TLS 1.3 CipherSpecs are never offered (channels with SSLCIPH(ANY_TLS13) then refuse their handshakes). Read at start.",
        when_reached: "",
        get: |i| Value::Text(if i.ssl.allow_tls13 { "YES" } else { "NO" }.into()),
        set: |i, v| i.ssl.allow_tls13 = v.text() == "YES",
    },
];

/// WebServer stanza: the HTTP(S) server of runtime/web.
const WEB_SERVER: &[Key] = &[
    Key {
        key: "Port",
        kind: ValueKind::Number { min: 0, max: 65_535 },
        default: DefaultValue::FromCreate,
        unit: "",
        meaning: "TCP port of the queue manager's HTTP(S) server (health endpoints `/healthz` and `/readyz`, the administrative and messaging REST API): `ferry create --web-port` (default 0) or `ferry start --create --web-port` (default 9443, as IBM's developer container). 0: no web server. A port that cannot be bound is logged (FRY9783E) and the queue manager runs on. Read at start.",
        when_reached: "",
        get: |i| Value::Number(u64::from(i.web.port)),
        set: |i, v| i.web.port = u16::try_from(v.number()).unwrap_or(0),
    },
    Key {
        key: "BindAddress",
        kind: ValueKind::Text,
        default: DefaultValue::Text("0.0.0.0"),
        unit: "",
        meaning: "The IP address the web server listens on (`127.0.0.1`: this host only; `::` for IPv6).",
        when_reached: "",
        get: |i| Value::Text(i.web.bind_address.clone()),
        set: |i, v| i.web.bind_address = v.text(),
    },
    Key {
        key: "SSL",
        kind: ValueKind::Choice {
            words: &["YES", "NO"],
            expected: "YES or NO",
        },
        default: DefaultValue::Text("NO"),
        unit: "",
        meaning: "YES: HTTPS only, with the queue manager's certificate (CERTLABL) from its key repository (SSLKEYR), TLS 1.2/1.3 as qm.ini SSL allows; a client certificate the repository's trust.pem verifies authenticates its common name as the user; REFRESH SECURITY TYPE(SSL) applies to the next handshake. NO: plain HTTP (put it behind TLS termination, or keep BindAddress local).",
        when_reached: "",
        get: |i| Value::Text(if i.web.ssl { "YES" } else { "NO" }.into()),
        set: |i, v| i.web.ssl = v.text() == "YES",
    },
    Key {
        key: "MaxConnections",
        kind: ValueKind::Number { min: 1, max: 10_000 },
        default: DefaultValue::Number(32),
        unit: "connections",
        meaning: "HTTP connections served at once; more wait in the listen backlog.",
        when_reached: "A client's connection is accepted once another closes.",
        get: |i| Value::Number(u64::from(i.web.max_connections)),
        set: |i, v| i.web.max_connections = v.number_u32(),
    },
    Key {
        key: "MaxRequestBody",
        kind: ValueKind::Number { min: 1_024, max: 104_857_600 },
        default: DefaultValue::Number(4_194_304),
        unit: "bytes",
        meaning: "Largest request body (a message put through the messaging REST API, an MQSC request).",
        when_reached: "413 Payload Too Large.",
        get: |i| Value::Number(i.web.max_request_body),
        set: |i, v| i.web.max_request_body = v.number(),
    },
    Key {
        key: "HeaderReadTimeout",
        kind: ValueKind::Number { min: 1, max: 300 },
        default: DefaultValue::Number(10),
        unit: "seconds",
        meaning: "Time a client has to send a request's headers once it has begun (and for the TLS handshake).",
        when_reached: "The connection is closed.",
        get: |i| Value::Number(i.web.header_read_timeout),
        set: |i, v| i.web.header_read_timeout = v.number(),
    },
    Key {
        key: "IdleTimeout",
        kind: ValueKind::Number { min: 1, max: 3_600 },
        default: DefaultValue::Number(60),
        unit: "seconds",
        meaning: "Time a keep-alive connection may stay without a request.",
        when_reached: "The connection is closed.",
        get: |i| Value::Number(i.web.idle_timeout),
        set: |i, v| i.web.idle_timeout = v.number(),
    },
    Key {
        key: "RequestTimeout",
        kind: ValueKind::Number { min: 1, max: 3_600 },
        default: DefaultValue::Number(120),
        unit: "seconds",
        meaning: "Time one request may take, its body and answer included (a messaging get's wait is cut to it).",
        when_reached: "503 Service Unavailable; the connection is closed.",
        get: |i| Value::Number(i.web.request_timeout),
        set: |i, v| i.web.request_timeout = v.number(),
    },
    Key {
        key: "SessionTimeout",
        kind: ValueKind::Number { min: 60, max: 86_400 },
        default: DefaultValue::Number(1_800),
        unit: "seconds",
        meaning: "Time a login session (POST /ibmmq/rest/v2/login: the web console, the REST API with its LtpaToken2 cookie) lasts without a request.",
        when_reached: "The session ends: its cookie is refused (401) and the console shows its login page.",
        get: |i| Value::Number(i.web.session_timeout),
        set: |i, v| i.web.session_timeout = v.number(),
    },
];

/// Tracing stanza.
const TRACING: &[Key] = &[
    Key {
        key: "Endpoint",
        kind: ValueKind::Text,
        default: DefaultValue::Text(""),
        unit: "",
        meaning: "The OpenTelemetry collector's OTLP/HTTP URL (`http://localhost:4318`; `/v1/traces` is added unless the path ends with it). Empty: tracing is off unless OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set. Read at start.",
        when_reached: "",
        get: |i| Value::Text(i.tracing.endpoint.clone()),
        set: |i, v| i.tracing.endpoint = v.text(),
    },
    Key {
        key: "Sampler",
        kind: ValueKind::Choice {
            words: &["off", "always", "parent", "ratio"],
            expected: "off, always, parent or ratio",
        },
        default: DefaultValue::Text("parent"),
        unit: "",
        meaning: "Which message operations make spans. off: none (as an empty Endpoint). always: all, joining the message's trace when its `traceparent` property names one. parent: only messages whose `traceparent` says sampled (an application that traces decides). ratio: as parent for messages with a `traceparent`, others sampled at Ratio by trace id. OTEL_TRACES_SAMPLER, when set, takes its place. Read at start.",
        when_reached: "",
        get: |i| Value::Text(i.tracing.sampler.clone()),
        set: |i, v| i.tracing.sampler = v.text(),
    },
    Key {
        key: "Ratio",
        kind: ValueKind::Text,
        default: DefaultValue::Text("1"),
        unit: "",
        meaning: "The share of traces Sampler=ratio samples among messages without a `traceparent`: a number from 0 to 1. Read at start.",
        when_reached: "",
        get: |i| Value::Text(i.tracing.ratio.clone()),
        set: |i, v| i.tracing.ratio = v.text(),
    },
    Key {
        key: "ServiceName",
        kind: ValueKind::Text,
        default: DefaultValue::Text(""),
        unit: "",
        meaning: "The spans' `service.name`. Empty: the queue manager's name. Read at start.",
        when_reached: "",
        get: |i| Value::Text(i.tracing.service_name.clone()),
        set: |i, v| i.tracing.service_name = v.text(),
    },
];

/// Monitoring stanza.
const MONITORING: &[Key] = &[
    Key {
        key: "PublicationInterval",
        kind: ValueKind::Number { min: 1, max: 3600 },
        default: DefaultValue::Number(10),
        unit: "seconds",
        meaning: "How often the resource-monitoring publications on `$SYS/MQ/INFO/QMGR/<qmgr>/Monitor/...` are made while someone subscribes (MQ publishes every 10 seconds). Read at start.",
        when_reached: "",
        get: |i| Value::Number(i.monitoring.interval_secs),
        set: |i, v| i.monitoring.interval_secs = v.number(),
    },
    Key {
        key: "PrometheusQueues",
        kind: ValueKind::Text,
        default: DefaultValue::Text("*"),
        unit: "",
        meaning: "The local queues the Prometheus exposition shows: generic names separated by commas (`APP.*,ORDERS`). Read at start.",
        when_reached: "",
        get: |i| Value::Text(i.monitoring.queues.clone()),
        set: |i, v| i.monitoring.queues = v.text(),
    },
    Key {
        key: "PrometheusQueuesExclude",
        kind: ValueKind::Text,
        default: DefaultValue::Text("SYSTEM.*"),
        unit: "",
        meaning: "Queues left out of the Prometheus exposition even when PrometheusQueues names them: generic names separated by commas. Left-out queues cost a scrape nothing. Read at start.",
        when_reached: "",
        get: |i| Value::Text(i.monitoring.queues_exclude.clone()),
        set: |i, v| i.monitoring.queues_exclude = v.text(),
    },
    Key {
        key: "PrometheusChannels",
        kind: ValueKind::Text,
        default: DefaultValue::Text("*"),
        unit: "",
        meaning: "The channels whose status the Prometheus exposition shows: generic names separated by commas. Read at start.",
        when_reached: "",
        get: |i| Value::Text(i.monitoring.channels.clone()),
        set: |i, v| i.monitoring.channels = v.text(),
    },
    Key {
        key: "PrometheusChannelsExclude",
        kind: ValueKind::Text,
        default: DefaultValue::Text("SYSTEM.*"),
        unit: "",
        meaning: "Channels left out of the Prometheus exposition: generic names separated by commas. Read at start.",
        when_reached: "",
        get: |i| Value::Text(i.monitoring.channels_exclude.clone()),
        set: |i, v| i.monitoring.channels_exclude = v.text(),
    },
    Key {
        key: "PrometheusAuthentication",
        kind: ValueKind::Choice {
            words: &["REMOTE", "NONE"],
            expected: "REMOTE or NONE",
        },
        default: DefaultValue::Text("REMOTE"),
        unit: "",
        meaning: "Who may scrape `GET /metrics` on the web server. REMOTE: clients on this host without credentials, others authenticated as for the REST API (basic authentication or a client certificate). NONE: anyone who reaches the port, as mq-metric-samples serves them (a pod network where Prometheus finds targets by annotation). Read at start.",
        when_reached: "",
        get: |i| Value::Text(i.monitoring.authentication.clone()),
        set: |i, v| i.monitoring.authentication = v.text(),
    },
];

/// TuningParameters stanza.
const TUNING: &[Key] = &[
    Key {
        key: "DefaultQBufferSize",
        kind: ValueKind::Number { min: 0, max: 104_857_600 },
        default: DefaultValue::Number(65_536),
        unit: "bytes",
        meaning: "Bytes of non-persistent message bodies a queue keeps in memory before spilling the newest to its queue file.",
        when_reached: "",
        get: |i| Value::Number(i.tuning.default_q_buffer_size),
        set: |i, v| i.tuning.default_q_buffer_size = v.number(),
    },
    Key {
        key: "DefaultPQBufferSize",
        kind: ValueKind::Number { min: 0, max: 104_857_600 },
        default: DefaultValue::Number(131_072),
        unit: "bytes",
        meaning: "Bytes of persistent message bodies a queue keeps in memory once they are in its queue file.",
        when_reached: "",
        get: |i| Value::Number(i.tuning.default_pq_buffer_size),
        set: |i, v| i.tuning.default_pq_buffer_size = v.number(),
    },
    Key {
        key: "ImplSyncOpenOutput",
        kind: ValueKind::WordOrNumber {
            word: "OFF",
            means: 0,
            min: 1,
            max: 999_999_999,
            word_meaning: "never",
        },
        default: DefaultValue::Number(2),
        unit: "handles",
        meaning: "Output handles open on a queue from which persistent puts outside syncpoint are made in an implicit unit of work, so they share log flushes.",
        when_reached: "",
        get: |i| Value::Number(i.tuning.impl_sync_open_output.into()),
        set: |i, v| i.tuning.impl_sync_open_output = v.number_u32(),
    },
    Key {
        key: "RuntimeScheduling",
        kind: ValueKind::Choice {
            words: &["AUTO", "BATCH", "NORMAL"],
            expected: "AUTO, BATCH or NORMAL",
        },
        default: DefaultValue::Text("AUTO"),
        unit: "",
        meaning: "Linux scheduling policy of the thread that serves every connection. BATCH (SCHED_BATCH): a message arriving for it does not preempt an application running on that CPU; the queue manager runs at the next switch and handles what arrived meanwhile in one pass, which costs it less CPU per message when applications keep the CPUs busy (docs/performance.md). NORMAL: the system's default, woken at once. AUTO: BATCH while no message channel runs, NORMAL while one does, because every message crossing to another queue manager waits for that queue manager's wake-up and its reply for this one's, which BATCH delays by a time slice when the CPUs are busy. Idle CPUs run it at once either way. The log, queue-file and definition writers keep the default.",
        when_reached: "",
        get: |i| Value::Text(i.tuning.runtime_scheduling.clone()),
        set: |i, v| i.tuning.runtime_scheduling = v.text(),
    },
    Key {
        key: "WakeCoalescing",
        kind: ValueKind::Number { min: 0, max: 10_000 },
        default: DefaultValue::Number(500),
        unit: "microseconds",
        meaning: "Under load from many connections, how long the thread that serves every connection naps before it waits on its sockets again, so that one wake-up serves what several connections sent meanwhile (docs/performance.md). It naps only right after a short wait and where naps cost no throughput (every 4 s it compares the bytes read per second with naps and without), and stops when the passes after its naps serve about one connection each (one application waiting for its reply), so a lightly used queue manager answers at once. Naps stop while a message channel runs: a message crossing between queue managers would wait for one at every hop. 0: never.",
        when_reached: "",
        get: |i| Value::Number(i.tuning.wake_coalescing.into()),
        set: |i, v| i.tuning.wake_coalescing = v.number_u32(),
    },
];

/// QMErrorLog stanza.
const ERROR_LOG: &[Key] = &[
    Key {
        key: "ErrorLogSize",
        kind: ValueKind::Number { min: 32_768, max: 2_147_483_647 },
        default: DefaultValue::Number(33_554_432),
        unit: "bytes",
        meaning: "Size of errors/FRYERR01.LOG before it becomes FRYERR02.LOG; three files are kept.",
        when_reached: "The oldest file, FRYERR03.LOG, is dropped.",
        get: |i| Value::Number(i.error_log.error_log_size),
        set: |i, v| i.error_log.error_log_size = v.number(),
    },
    Key {
        key: "SuppressMessage",
        kind: ValueKind::MessageIds,
        default: DefaultValue::Text(""),
        unit: "",
        meaning: "Messages written once per SuppressInterval and cause, on top of the channel and connection family (FRY9xxx) that always is.",
        when_reached: "",
        get: |i| Value::Ids(i.error_log.suppress_message.clone()),
        set: |i, v| i.error_log.suppress_message = v.ids(),
    },
    Key {
        key: "SuppressInterval",
        kind: ValueKind::Number { min: 1, max: 86_400 },
        default: DefaultValue::Number(30),
        unit: "seconds",
        meaning: "Seconds during which repeats of a suppressed message with the same cause are counted, not written; FRY7185W gives the count.",
        when_reached: "",
        get: |i| Value::Number(i.error_log.suppress_interval),
        set: |i, v| i.error_log.suppress_interval = v.number(),
    },
    Key {
        key: "ExcludeMessage",
        kind: ValueKind::MessageIds,
        default: DefaultValue::Text(""),
        unit: "",
        meaning: "Messages never written.",
        when_reached: "",
        get: |i| Value::Ids(i.error_log.exclude_message.clone()),
        set: |i, v| i.error_log.exclude_message = v.ids(),
    },
    Key {
        key: "ConsoleLogSize",
        kind: ValueKind::Number { min: 32_768, max: 2_147_483_647 },
        default: DefaultValue::Number(8_388_608),
        unit: "bytes",
        meaning: "Size of run/console.log (a background queue manager's stdout and stderr) before it becomes console.log.1; three files are kept. Ferry's own key: MQ has no console log.",
        when_reached: "The oldest file, console.log.2, is dropped.",
        get: |i| Value::Number(i.error_log.console_log_size),
        set: |i, v| i.error_log.console_log_size = v.number(),
    },
];

/// AutoConfig stanza.
const AUTO_CONFIG: &[Key] = &[Key {
    key: "MQSCConfig",
    kind: ValueKind::Text,
    default: DefaultValue::Text(""),
    unit: "",
    meaning: "An MQSC script, or a directory whose `*.mqsc` files (in name order) are run at every start, after recovery and before the listeners and channels start, as MQ's `crtmqm -ic` sets it: definitions a container or a team keeps in files. Several, separated by commas, run one after the other (Ferry's extension: `ferry runmqserver` names the developer configuration and the mounted directories). Their commands must replay (DEFINE ... REPLACE, SET CHLAUTH ... ACTION(REPLACE)); the output goes to the error log (FRY8950I, FRY8951E for a command that failed). Blank: none.",
    when_reached: "",
    get: |i| Value::Text(i.auto_config.mqsc_config.clone()),
    set: |i, v| i.auto_config.mqsc_config = v.text(),
}];

/// Service stanza.
const SERVICE: &[Key] = &[Key {
    key: "Name",
    kind: ValueKind::Text,
    default: DefaultValue::FromCreate,
    unit: "",
    meaning: "`AuthorizationService`: object authorities are checked (SET AUTHREC, `ferry setmqaut`) at MQCONN and MQOPEN. Blank or absent: nothing is checked and FRY7482W says so at start, as for a queue manager MQ's crtmqm made with MQSNOAUT=yes. `ferry create` writes `AuthorizationService` unless MQSNOAUT=yes is set in its environment.",
    when_reached: "",
    get: |i| Value::Text(i.service.name.clone()),
    set: |i, v| i.service.name = v.text(),
}];

/// Every stanza Ferry reads, in the order `ferry create` writes them.
pub const STANZAS: &[Stanza] = &[
    Stanza {
        name: "QueueManager",
        strict: false,
        meaning: "Which queue manager the file belongs to.",
        keys: QUEUE_MANAGER,
    },
    Stanza {
        name: "Log",
        strict: false,
        meaning: "The recovery log that persistent messaging writes to.",
        keys: LOG,
    },
    Stanza {
        name: "Channels",
        strict: false,
        meaning: "Client connections.",
        keys: CHANNELS,
    },
    Stanza {
        name: "TCP",
        strict: false,
        meaning: "Sockets.",
        keys: TCP,
    },
    Stanza {
        name: "TuningParameters",
        strict: false,
        meaning: "Memory kept per queue, and implicit syncpoint.",
        keys: TUNING,
    },
    Stanza {
        name: "QMErrorLog",
        strict: false,
        meaning: "The error log's size and suppression, and the console log's size (see [The error log](#the-error-log)).",
        keys: ERROR_LOG,
    },
    Stanza {
        name: "AutoConfig",
        strict: false,
        meaning: "Configuration applied at every start.",
        keys: AUTO_CONFIG,
    },
    Stanza {
        name: "SSL",
        strict: false,
        meaning: "Which CipherSpecs TLS may use (see docs/security.md).",
        keys: SSL,
    },
    Stanza {
        name: "Monitoring",
        strict: false,
        meaning: "Resource-monitoring publications and the Prometheus exposition (see [Monitoring](#monitoring)).",
        keys: MONITORING,
    },
    Stanza {
        name: "Tracing",
        strict: true,
        meaning: "OpenTelemetry spans for message operations, exported over OTLP (see docs/operations.md, Tracing).",
        keys: TRACING,
    },
    Stanza {
        name: "Service",
        strict: false,
        meaning: "The authorization service (object authorities).",
        keys: SERVICE,
    },
    Stanza {
        name: "WebServer",
        strict: true,
        meaning: "The queue manager's HTTP(S) server: health endpoints and the REST API (see [The web server](#the-web-server-health-and-the-rest-api)).",
        keys: WEB_SERVER,
    },
    Stanza {
        name: crate::limits::STANZA,
        strict: true,
        meaning: "What a client can make the queue manager hold or wait for (see [Limits](#limits-what-one-client-can-make-the-queue-manager-hold)).",
        keys: crate::limits::KEYS,
    },
];

/// The stanza named `name` (any case).
pub fn stanza(name: &str) -> Option<&'static Stanza> {
    STANZAS.iter().find(|s| s.name.eq_ignore_ascii_case(name))
}

/// Line opening the generated qm.ini section of docs/operations.md.
pub const BEGIN_MARKER: &str =
    "<!-- BEGIN GENERATED QM.INI: do not edit; FERRY_BLESS=1 cargo test -p ferry-server --lib qm_ini rewrites it -->";
/// Line closing it.
pub const END_MARKER: &str = "<!-- END GENERATED QM.INI -->";

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The default as the docs show it.
fn default_text(key: &Key) -> String {
    match (key.default, key.default_value()) {
        (DefaultValue::FromCreate, _) => "set by `ferry create`".to_string(),
        (_, Some(v)) => match key.kind.write(&v) {
            s if s.is_empty() => "(none)".to_string(),
            s if matches!(key.kind, ValueKind::WordOrNumber { word, .. } if word == s) => s,
            s if key.unit.is_empty() => s,
            s => format!("{s} {}", key.unit),
        },
        (_, None) => "(invalid)".to_string(),
    }
}

/// The qm.ini keys as a Markdown table, one row per key; the `Limits:` stanza's keys are
/// in their own section, generated by [`crate::limits::render_doc_table`].
pub fn render_doc_table() -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{BEGIN_MARKER}");
    let _ = writeln!(
        out,
        "| Stanza | Key | Accepts | Default | Meaning |\n|---|---|---|---|---|"
    );
    for s in STANZAS {
        if s.name == crate::limits::STANZA {
            let _ = writeln!(
                out,
                "| `{}` | every key below | | | {} |",
                s.name,
                cell(s.meaning)
            );
            continue;
        }
        for k in s.keys {
            let _ = writeln!(
                out,
                "| `{}` | `{}` | {} | {} | {} |",
                s.name,
                k.key,
                cell(&k.kind.describe()),
                cell(&default_text(k)),
                cell(k.meaning)
            );
        }
    }
    let _ = writeln!(out, "{END_MARKER}");
    out
}
