//! DISPLAY output in MQ's layout, and the status fields DISPLAY can show.
//!
//! An object to display becomes a list of [`Field`]s (name first, then TYPE, then its
//! attributes); WHERE filters on those fields and [`render_block`] prints them under a
//! header message in MQ's two-column layout: three blanks, then cells padded to 40
//! columns, two per line; a cell too wide for its column takes a line of its own.
//!
//! Status fields (DISPLAY QSTATUS, CONN, LSSTATUS, CHSTATUS and the live
//! CURDEPTH/IPPROCS/OPPROCS of DISPLAY QLOCAL) are not definition attributes, so they are
//! not in ferry-objects' tables; their one table each is here, read by the parser, the
//! executor and the docs.

use ferry_messages::Message;
use ferry_objects::status::{
    ChannelClientStatus, ChannelInstanceStatus, ChannelStatus, ConnectionStatus, HandleStatus,
    ListenerStatus, MessageChannelState, MessageChannelStatus, PubSubStatus, PublisherStatus,
    QmgrStatus, QueueStatus, RecoveryLogStatus, SubscriptionStatusRecord, TopicNodeStatus,
};
use ferry_objects::{AttrKind, AttrValue};

/// A value as DISPLAY shows it and WHERE compares it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldValue {
    /// A number: `MAXDEPTH(5000)`.
    Int(i64),
    /// Text or a name: `DESCR(x)`, blank shown as `DESCR( )`.
    Text(String),
    /// A keyword value: `PUT(ENABLED)`.
    Keyword(&'static str),
    /// A flag, shown as the bare keyword for its state (SHARE / NOSHARE).
    Flag {
        /// The keyword for its state.
        shown: &'static str,
        /// Its state.
        on: bool,
    },
    /// A count shown as NO when zero (UNCOM).
    NoOrCount(i64),
}

/// One keyword and value of an object being displayed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// Canonical keyword.
    pub keyword: &'static str,
    /// Its value.
    pub value: FieldValue,
}

impl Field {
    /// A field.
    pub fn new(keyword: &'static str, value: FieldValue) -> Self {
        Field { keyword, value }
    }

    /// The cell text: `KEYWORD(value)` or a bare flag keyword.
    pub fn cell(&self) -> String {
        match &self.value {
            FieldValue::Int(n) => format!("{}({n})", self.keyword),
            FieldValue::Text(s) if s.is_empty() => format!("{}( )", self.keyword),
            FieldValue::Text(s) => format!("{}({s})", self.keyword),
            FieldValue::Keyword(k) => format!("{}({k})", self.keyword),
            FieldValue::Flag { shown, .. } => (*shown).to_string(),
            FieldValue::NoOrCount(0) => format!("{}(NO)", self.keyword),
            FieldValue::NoOrCount(n) => format!("{}({n})", self.keyword),
        }
    }
}

/// Converts a table attribute's value for display.
pub fn attr_field(keyword: &'static str, kind: AttrKind, value: AttrValue) -> Field {
    let value = match (kind, value) {
        (AttrKind::Flag { on, off }, AttrValue::Flag(b)) => FieldValue::Flag {
            shown: if b { on } else { off },
            on: b,
        },
        (
            AttrKind::IntOrWord { word, .. },
            AttrValue::Int(ferry_objects::attribute::WORD_VALUE),
        ) => FieldValue::Keyword(word),
        (_, AttrValue::Int(n)) => FieldValue::Int(n.into()),
        (_, AttrValue::Text(s)) => FieldValue::Text(s),
        (_, AttrValue::Keyword(k)) => FieldValue::Keyword(k),
        (_, AttrValue::Flag(b)) => FieldValue::Keyword(if b { "YES" } else { "NO" }),
    };
    Field { keyword, value }
}

/// Width of a display column.
pub const COLUMN: usize = 40;

/// A header line and the fields in MQ's two-column layout.
pub fn render_block(header: &'static Message, fields: &[Field]) -> Vec<String> {
    let mut lines = vec![header.line()];
    lines.extend(two_columns(fields.iter().map(Field::cell)));
    lines
}

/// Lays cells out two per line, three blanks in, 40 columns each.
pub fn two_columns(cells: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut lines = Vec::new();
    let mut left: Option<String> = None;
    for cell in cells {
        match left.take() {
            None if cell.chars().count() >= COLUMN => lines.push(format!("   {cell}")),
            None => left = Some(cell),
            Some(l) => lines.push(format!("   {l:<COLUMN$}{cell}")),
        }
    }
    if let Some(l) = left {
        lines.push(format!("   {l}"));
    }
    lines
}

/// Date and time of a moment as MQ shows them: `yyyy-mm-dd`, `hh.mm.ss` (UTC).
pub fn date_time(ms: u64) -> (String, String) {
    ferry_objects::status::date_time(ms)
}

/// The kind of a status field, for WHERE checking and docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// A number.
    Int,
    /// Text.
    Text,
    /// One of the keywords.
    Keyword(&'static [&'static str]),
}

impl FieldKind {
    /// Words for docs.
    pub fn describe(self) -> String {
        match self {
            FieldKind::Int => "number".into(),
            FieldKind::Text => "text".into(),
            FieldKind::Keyword(v) => v.join(" or "),
        }
    }
}

/// One field of a status record: keyword, kind, docs and how to read it.
pub struct StatusField<S: 'static> {
    /// MQSC keyword.
    pub keyword: &'static str,
    /// Value kind.
    pub kind: FieldKind,
    /// What it shows.
    pub doc: &'static str,
    /// Reads it from the record.
    pub get: fn(&S) -> FieldValue,
}

impl<S> StatusField<S> {
    /// The field of a record.
    pub fn field(&self, s: &S) -> Field {
        Field::new(self.keyword, (self.get)(s))
    }
}

fn count(n: impl TryInto<i64>) -> FieldValue {
    FieldValue::Int(n.try_into().unwrap_or(i64::MAX))
}

fn opt_date(ms: Option<u64>) -> FieldValue {
    FieldValue::Text(ms.map(|m| date_time(m).0).unwrap_or_default())
}

fn opt_time(ms: Option<u64>) -> FieldValue {
    FieldValue::Text(ms.map(|m| date_time(m).1).unwrap_or_default())
}

fn yes_no(b: bool) -> FieldValue {
    FieldValue::Keyword(if b { "YES" } else { "NO" })
}

const YES_NO: &[&str] = &["YES", "NO"];

/// Live fields DISPLAY QLOCAL shows besides the definition.
pub static QUEUE_LIVE_FIELDS: &[StatusField<QueueStatus>] = &[
    StatusField {
        keyword: "CURDEPTH",
        kind: FieldKind::Int,
        doc: "Messages on the queue.",
        get: |s| count(s.current_depth),
    },
    StatusField {
        keyword: "IPPROCS",
        kind: FieldKind::Int,
        doc: "Handles open for input.",
        get: |s| count(s.open_input_count),
    },
    StatusField {
        keyword: "OPPROCS",
        kind: FieldKind::Int,
        doc: "Handles open for output.",
        get: |s| count(s.open_output_count),
    },
];

/// DISPLAY QSTATUS TYPE(QUEUE) fields.
pub static QSTATUS_QUEUE_FIELDS: &[StatusField<QueueStatus>] = &[
    StatusField {
        keyword: "CURDEPTH",
        kind: FieldKind::Int,
        doc: "Messages on the queue, uncommitted included.",
        get: |s| count(s.current_depth),
    },
    StatusField {
        keyword: "IPPROCS",
        kind: FieldKind::Int,
        doc: "Handles open for input.",
        get: |s| count(s.open_input_count),
    },
    StatusField {
        keyword: "OPPROCS",
        kind: FieldKind::Int,
        doc: "Handles open for output.",
        get: |s| count(s.open_output_count),
    },
    StatusField {
        keyword: "UNCOM",
        kind: FieldKind::Int,
        doc: "Uncommitted puts and gets (NO when none).",
        get: |s| FieldValue::NoOrCount(i64::try_from(s.uncommitted).unwrap_or(i64::MAX)),
    },
    StatusField {
        keyword: "LPUTDATE",
        kind: FieldKind::Text,
        doc: "Date of the last put (blank unless MONQ collects it).",
        get: |s| opt_date(s.last_put_ms),
    },
    StatusField {
        keyword: "LPUTTIME",
        kind: FieldKind::Text,
        doc: "Time of the last put (blank unless MONQ collects it).",
        get: |s| opt_time(s.last_put_ms),
    },
    StatusField {
        keyword: "LGETDATE",
        kind: FieldKind::Text,
        doc: "Date of the last get (blank unless MONQ collects it).",
        get: |s| opt_date(s.last_get_ms),
    },
    StatusField {
        keyword: "LGETTIME",
        kind: FieldKind::Text,
        doc: "Time of the last get (blank unless MONQ collects it).",
        get: |s| opt_time(s.last_get_ms),
    },
    StatusField {
        keyword: "MSGAGE",
        kind: FieldKind::Int,
        doc: "Age in seconds of the oldest message (blank unless MONQ collects it: the queue's MONQ, or with MONQ(QMGR) the queue manager's, not OFF).",
        get: |s| match s.oldest_msg_age_secs {
            Some(a) => count(a),
            None => FieldValue::Text(String::new()),
        },
    },
    StatusField {
        keyword: "CURMAXFS",
        kind: FieldKind::Int,
        doc: "The queue's MAXFSIZE in MB, DEFAULT resolved (2088960).",
        get: |s| count(s.max_file_size_mb),
    },
    StatusField {
        keyword: "CURFSIZE",
        kind: FieldKind::Int,
        doc: "Size of the queue file in MB, rounded up (persistent messages that outlived a checkpoint; 0 without one).",
        get: |s| count(s.queue_file_bytes.div_ceil(1 << 20)),
    },
];

/// DISPLAY QSTATUS TYPE(HANDLE) fields.
pub static QSTATUS_HANDLE_FIELDS: &[StatusField<HandleStatus>] = &[
    StatusField {
        keyword: "CONN",
        kind: FieldKind::Text,
        doc: "Connection holding the handle.",
        get: |h| FieldValue::Text(h.connection_id.clone()),
    },
    StatusField {
        keyword: "APPLTAG",
        kind: FieldKind::Text,
        doc: "Application name.",
        get: |h| FieldValue::Text(h.application_tag.clone()),
    },
    StatusField {
        keyword: "CHANNEL",
        kind: FieldKind::Text,
        doc: "Channel of a client connection.",
        get: |h| FieldValue::Text(h.channel.clone()),
    },
    StatusField {
        keyword: "CONNAME",
        kind: FieldKind::Text,
        doc: "Client address.",
        get: |h| FieldValue::Text(h.connection_name.clone()),
    },
    StatusField {
        keyword: "USERID",
        kind: FieldKind::Text,
        doc: "User id.",
        get: |h| FieldValue::Text(h.user_id.clone()),
    },
    StatusField {
        keyword: "PID",
        kind: FieldKind::Int,
        doc: "Process id: a bindings application's own; for a client (MQ or AMQP), the queue manager process that serves its channel, as MQ shows its channel process.",
        get: |h| h.pid.map(count).unwrap_or(FieldValue::Text(String::new())),
    },
    StatusField {
        keyword: "OPENOPTS",
        kind: FieldKind::Int,
        doc: "MQOO open options.",
        get: |h| count(h.open_options),
    },
    StatusField {
        keyword: "INPUT",
        kind: FieldKind::Keyword(&["SHARED", "EXCL", "NO"]),
        doc: "Open for input: SHARED, EXCL or NO.",
        get: |h| FieldValue::Text(h.input.clone()),
    },
    StatusField {
        keyword: "OUTPUT",
        kind: FieldKind::Keyword(YES_NO),
        doc: "Open for output.",
        get: |h| yes_no(h.output),
    },
    StatusField {
        keyword: "BROWSE",
        kind: FieldKind::Keyword(YES_NO),
        doc: "Open for browse.",
        get: |h| yes_no(h.browse),
    },
    StatusField {
        keyword: "INQUIRE",
        kind: FieldKind::Keyword(YES_NO),
        doc: "Open for inquire.",
        get: |h| yes_no(h.inquire),
    },
    StatusField {
        keyword: "SET",
        kind: FieldKind::Keyword(YES_NO),
        doc: "Open for set.",
        get: |h| yes_no(h.set),
    },
];

/// DISPLAY CONN TYPE(CONN) fields.
pub static CONN_FIELDS: &[StatusField<ConnectionStatus>] = &[
    StatusField {
        keyword: "APPLTAG",
        kind: FieldKind::Text,
        doc: "Application name.",
        get: |c| FieldValue::Text(c.application_tag.clone()),
    },
    StatusField {
        keyword: "CHANNEL",
        kind: FieldKind::Text,
        doc: "Channel of a client connection.",
        get: |c| FieldValue::Text(c.channel.clone()),
    },
    StatusField {
        keyword: "CONNAME",
        kind: FieldKind::Text,
        doc: "Client address.",
        get: |c| FieldValue::Text(c.connection_name.clone()),
    },
    StatusField {
        keyword: "USERID",
        kind: FieldKind::Text,
        doc: "User id.",
        get: |c| FieldValue::Text(c.user_id.clone()),
    },
    StatusField {
        keyword: "PID",
        kind: FieldKind::Int,
        doc: "Process id: a bindings application's own; for a client (MQ or AMQP), the queue manager process that serves its channel, as MQ shows its channel process.",
        get: |c| c.pid.map(count).unwrap_or(FieldValue::Text(String::new())),
    },
    StatusField {
        keyword: "UOWSTATE",
        kind: FieldKind::Keyword(&["NONE", "ACTIVE"]),
        doc: "Whether a unit of work is open.",
        get: |c| FieldValue::Keyword(if c.uow_active { "ACTIVE" } else { "NONE" }),
    },
];

/// One object a connection has open (DISPLAY CONN TYPE(HANDLE)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnHandle {
    /// The connection id.
    pub connection_id: String,
    /// The object's name.
    pub object: String,
}

/// DISPLAY CONN TYPE(HANDLE) fields.
pub static CONN_HANDLE_FIELDS: &[StatusField<ConnHandle>] = &[
    StatusField {
        keyword: "OBJNAME",
        kind: FieldKind::Text,
        doc: "Name of an object the connection has open.",
        get: |h| FieldValue::Text(h.object.clone()),
    },
    StatusField {
        keyword: "OBJTYPE",
        kind: FieldKind::Keyword(&["QUEUE"]),
        doc: "Type of that object.",
        get: |_| FieldValue::Keyword("QUEUE"),
    },
];

/// DISPLAY LSSTATUS fields.
pub static LSSTATUS_FIELDS: &[StatusField<ListenerStatus>] = &[
    StatusField {
        keyword: "STATUS",
        kind: FieldKind::Keyword(&["RUNNING", "STOPPED"]),
        doc: "Whether the listener runs.",
        get: |l| FieldValue::Keyword(if l.running { "RUNNING" } else { "STOPPED" }),
    },
    StatusField {
        keyword: "PORT",
        kind: FieldKind::Int,
        doc: "Port bound.",
        get: |l| count(l.port),
    },
    StatusField {
        keyword: "IPADDR",
        kind: FieldKind::Text,
        doc: "Address bound (blank: all).",
        get: |l| FieldValue::Text(l.ip_address.clone()),
    },
    StatusField {
        keyword: "STARTDA",
        kind: FieldKind::Text,
        doc: "Date it started.",
        get: |l| opt_date(l.started_ms),
    },
    StatusField {
        keyword: "STARTTI",
        kind: FieldKind::Text,
        doc: "Time it started.",
        get: |l| opt_time(l.started_ms),
    },
];

fn log_text(q: &QmgrStatus, f: fn(&RecoveryLogStatus) -> String) -> FieldValue {
    FieldValue::Text(q.log.as_ref().map(f).unwrap_or_default())
}

fn log_count(q: &QmgrStatus, f: fn(&RecoveryLogStatus) -> u64) -> FieldValue {
    count(q.log.as_ref().map_or(0, f))
}

/// DISPLAY QMSTATUS fields: MQ's, then Ferry's log counters (with LOGTYPE through
/// SLOWWRT absent from MQ or named as MQ names them).
pub static QMSTATUS_FIELDS: &[StatusField<QmgrStatus>] = &[
    StatusField {
        keyword: "STATUS",
        kind: FieldKind::Keyword(&["RUNNING"]),
        doc: "The queue manager runs (a stopped one answers no commands).",
        get: |_| FieldValue::Keyword("RUNNING"),
    },
    StatusField {
        keyword: "CONNS",
        kind: FieldKind::Int,
        doc: "Connected applications.",
        get: |q| count(q.connections),
    },
    StatusField {
        keyword: "STARTDA",
        kind: FieldKind::Text,
        doc: "Date the queue manager started.",
        get: |q| opt_date(Some(q.started_ms)),
    },
    StatusField {
        keyword: "STARTTI",
        kind: FieldKind::Text,
        doc: "Time the queue manager started.",
        get: |q| opt_time(Some(q.started_ms)),
    },
    StatusField {
        keyword: "CMDSERV",
        kind: FieldKind::Keyword(&["RUNNING"]),
        doc: "The command server (it answers this command).",
        get: |_| FieldValue::Keyword("RUNNING"),
    },
    StatusField {
        keyword: "LOGTYPE",
        kind: FieldKind::Text,
        doc: "The recovery log's type (CIRCULAR).",
        get: |q| log_text(q, |l| l.log_type.clone()),
    },
    StatusField {
        keyword: "LOGPATH",
        kind: FieldKind::Text,
        doc: "The recovery log's directory (qm.ini Log stanza LogPath).",
        get: |q| log_text(q, |l| l.path.clone()),
    },
    StatusField {
        keyword: "CURRLOG",
        kind: FieldKind::Text,
        doc: "The log extent being written.",
        get: |q| log_text(q, |l| l.current_extent.clone()),
    },
    StatusField {
        keyword: "RECLOG",
        kind: FieldKind::Text,
        doc: "The oldest log extent restart recovery needs.",
        get: |q| log_text(q, |l| l.restart_extent.clone()),
    },
    StatusField {
        keyword: "LOGINUSE",
        kind: FieldKind::Int,
        doc: "Percentage of the circular log in use (restart point to head).",
        get: |q| log_count(q, |l| l.in_use_percent),
    },
    StatusField {
        keyword: "CHKPTLSN",
        kind: FieldKind::Int,
        doc: "LSN of the last checkpoint (Ferry).",
        get: |q| log_count(q, |l| l.checkpoint_lsn),
    },
    StatusField {
        keyword: "RESTLSN",
        kind: FieldKind::Int,
        doc: "LSN restart recovery starts reading at (Ferry).",
        get: |q| log_count(q, |l| l.restart_lsn),
    },
    StatusField {
        keyword: "DURLSN",
        kind: FieldKind::Int,
        doc: "Everything below this LSN is on stable storage (Ferry).",
        get: |q| log_count(q, |l| l.durable_lsn),
    },
    StatusField {
        keyword: "LOGBYTES",
        kind: FieldKind::Int,
        doc: "Bytes written to the log files since the start (Ferry).",
        get: |q| log_count(q, |l| l.bytes_written),
    },
    StatusField {
        keyword: "LOGRECS",
        kind: FieldKind::Int,
        doc: "Log records made durable since the start (Ferry).",
        get: |q| log_count(q, |l| l.records),
    },
    StatusField {
        keyword: "LOGFLUSH",
        kind: FieldKind::Int,
        doc: "Log flushes (write + fdatasync) since the start; LOGFLUSH/LOGRECS well below 1 is group commit at work (Ferry).",
        get: |q| log_count(q, |l| l.flushes),
    },
    StatusField {
        keyword: "LOGCHKPT",
        kind: FieldKind::Int,
        doc: "Checkpoints taken since the start (Ferry).",
        get: |q| log_count(q, |l| l.checkpoints),
    },
    StatusField {
        keyword: "SLOWWRT",
        kind: FieldKind::Int,
        doc: "Log writes slower than AMQ_IODELAY since the start (Ferry).",
        get: |q| log_count(q, |l| l.slow_writes),
    },
    StatusField {
        keyword: "LASTSLOW",
        kind: FieldKind::Text,
        doc: "The last slow log write: operation, bytes, file, time taken, threshold (Ferry).",
        get: |q| log_text(q, |l| l.last_slow_write.clone()),
    },
];

fn running(b: bool) -> FieldValue {
    FieldValue::Keyword(if b { "RUNNING" } else { "STOPPED" })
}

const RUNNING_STOPPED: &[&str] = &["RUNNING", "STOPPED"];

/// DISPLAY CHSTATUS fields of a channel's summary (no CLIENTID).
pub static CHSTATUS_FIELDS: &[StatusField<ChannelStatus>] = &[
    StatusField {
        keyword: "STATUS",
        kind: FieldKind::Keyword(RUNNING_STOPPED),
        doc: "RUNNING: listening; STOPPED: stopped by STOP CHANNEL.",
        get: |c| running(c.running),
    },
    StatusField {
        keyword: "CONNS",
        kind: FieldKind::Int,
        doc: "Clients connected now.",
        get: |c| count(c.clients.len()),
    },
    StatusField {
        keyword: "PORT",
        kind: FieldKind::Int,
        doc: "Port the channel listens on.",
        get: |c| count(c.port),
    },
    StatusField {
        keyword: "MSGSNT",
        kind: FieldKind::Int,
        doc: "Messages sent to clients since the channel started.",
        get: |c| count(c.messages_sent),
    },
    StatusField {
        keyword: "MSGRCVD",
        kind: FieldKind::Int,
        doc: "Messages received from clients since the channel started.",
        get: |c| count(c.messages_received),
    },
    StatusField {
        keyword: "BYTSSENT",
        kind: FieldKind::Int,
        doc: "Bytes sent since the channel started.",
        get: |c| count(c.bytes_sent),
    },
    StatusField {
        keyword: "BYTSRCVD",
        kind: FieldKind::Int,
        doc: "Bytes received since the channel started.",
        get: |c| count(c.bytes_received),
    },
    StatusField {
        keyword: "LSTMSGDA",
        kind: FieldKind::Text,
        doc: "Date of the last message sent or received.",
        get: |c| opt_date(c.last_message_ms),
    },
    StatusField {
        keyword: "LSTMSGTI",
        kind: FieldKind::Text,
        doc: "Time of the last message sent or received.",
        get: |c| opt_time(c.last_message_ms),
    },
    StatusField {
        keyword: "CHSTADA",
        kind: FieldKind::Text,
        doc: "Date the channel started.",
        get: |c| opt_date(c.started_ms),
    },
    StatusField {
        keyword: "CHSTATI",
        kind: FieldKind::Text,
        doc: "Time the channel started.",
        get: |c| opt_time(c.started_ms),
    },
];

/// The fields listed, then SSLCIPH, SSLPEER, SSLCERTI and SSLRKEYS read from the
/// record's `tls` ([`ferry_objects::status::TlsStatus`]): one definition for every
/// status record of a conversation that may use TLS.
macro_rules! with_tls_fields {
    // A channel instance that compresses: COMPHDR, COMPMSG, COMPRATE and COMPTIME before
    // the TLS fields.
    (compression; $($field:expr),* $(,)?) => {
        with_tls_fields![
            $($field,)*
            StatusField {
                keyword: "COMPHDR",
                kind: FieldKind::Text,
                doc: "Header compression: the technique agreed when the channel started, and the one the last message used.",
                get: |c| pair(c.compression.header.0, c.compression.header.1),
            },
            StatusField {
                keyword: "COMPMSG",
                kind: FieldKind::Text,
                doc: "Message data compression: the technique agreed when the channel started, and the one the last message used (NONE when its data did not shrink).",
                get: |c| pair(c.compression.message.0, c.compression.message.1),
            },
            StatusField {
                keyword: "COMPRATE",
                kind: FieldKind::Text,
                doc: "Percent of the compressible bytes saved: short term, long term (a client channel: both directions; a message channel: the messages sent, or at its receiving end received).",
                get: |c| pair(c.compression.rate.0, c.compression.rate.1),
            },
            StatusField {
                keyword: "COMPTIME",
                kind: FieldKind::Text,
                doc: "Microseconds spent compressing or expanding one message: short term, long term.",
                get: |c| pair(c.compression.time.0, c.compression.time.1),
            },
        ]
    };
    ($($field:expr),* $(,)?) => {
        [
            $($field,)*
            StatusField {
                keyword: "SSLCIPH",
                kind: FieldKind::Text,
                doc: "CipherSpec the TLS handshake agreed (blank without TLS).",
                get: |c| FieldValue::Text(c.tls.cipher_spec.clone()),
            },
            StatusField {
                keyword: "SSLPEER",
                kind: FieldKind::Text,
                doc: "Subject of the partner's certificate: the client's, or the other queue manager's (blank without one).",
                get: |c| FieldValue::Text(c.tls.peer.clone()),
            },
            StatusField {
                keyword: "SSLCERTI",
                kind: FieldKind::Text,
                doc: "Issuer of the partner's certificate.",
                get: |c| FieldValue::Text(c.tls.cert_issuer.clone()),
            },
            StatusField {
                keyword: "SSLRKEYS",
                kind: FieldKind::Int,
                doc: "Secret-key resets so far (TLS 1.3 key updates every SSLRKEYC bytes).",
                get: |c| count(c.tls.key_resets),
            },
        ]
    };
}

/// Two values as DISPLAY CHSTATUS shows them: `COMPRATE(34,33)`.
fn pair(a: impl std::fmt::Display, b: impl std::fmt::Display) -> FieldValue {
    FieldValue::Text(format!("{a},{b}"))
}

/// The STATUS values of a SVRCONN channel instance.
const BINDING_RUNNING: &[&str] = &["BINDING", "RUNNING"];

/// Every STATUS value DISPLAY CHSTATUS shows, for a WHERE without CHLTYPE.
pub const CHSTATUS_STATUSES: &[&str] = &[
    "INACTIVE",
    "BINDING",
    "STARTING",
    "RUNNING",
    "STOPPING",
    "RETRYING",
    "STOPPED",
    "REQUESTING",
    "PAUSED",
];

/// A logical unit of work id as MQ shows it: 16 hex digits.
fn luwid(id: u64) -> FieldValue {
    FieldValue::Text(format!("{id:016X}"))
}

/// A short-term/long-term pair of microsecond figures (NETTIME, XQTIME): the last
/// batch's value twice, as Ferry keeps no long-term average yet.
fn micros(v: Option<u64>) -> FieldValue {
    match v {
        Some(us) => pair(us, us),
        None => FieldValue::Text(String::new()),
    }
}

/// DISPLAY CHSTATUS fields of a message channel (SDR, RCVR, SVR, RQSTR), in MQ's names.
pub static CHSTATUS_MESSAGE_FIELDS: &[StatusField<MessageChannelStatus>] = &with_tls_fields![compression;
    StatusField {
        keyword: "STATUS",
        kind: FieldKind::Keyword(MessageChannelState::KEYWORDS),
        doc: "INACTIVE, BINDING (connecting, agreeing values), RUNNING, STOPPING, RETRYING (waiting SHORTTMR or LONGTMR to start again), STOPPED (STOP CHANNEL or retries exhausted: START CHANNEL resumes), PAUSED (a put waits MRTMR to be retried).",
        get: |c| FieldValue::Keyword(c.state.keyword()),
    },
    StatusField {
        keyword: "SUBSTATE",
        kind: FieldKind::Text,
        doc: "What the agent does now: MQGET, SEND, RECEIVE, ENDBATCH, HEARTBEAT, NETCONNECT, RESYNCH, MQPUT.",
        get: |c| FieldValue::Text(c.substate.clone()),
    },
    StatusField {
        keyword: "CONNAME",
        kind: FieldKind::Text,
        doc: "The partner's address.",
        get: |c| FieldValue::Text(c.connection_name.clone()),
    },
    StatusField {
        keyword: "XMITQ",
        kind: FieldKind::Text,
        doc: "Transmission queue (sending channels).",
        get: |c| FieldValue::Text(c.xmit_q.clone()),
    },
    StatusField {
        keyword: "RQMNAME",
        kind: FieldKind::Text,
        doc: "The partner queue manager.",
        get: |c| FieldValue::Text(c.remote_qmgr.clone()),
    },
    StatusField {
        keyword: "MSGS",
        kind: FieldKind::Int,
        doc: "Messages sent or received since the channel started.",
        get: |c| count(c.messages),
    },
    StatusField {
        keyword: "BATCHES",
        kind: FieldKind::Int,
        doc: "Batches completed since the channel started.",
        get: |c| count(c.batches),
    },
    StatusField {
        keyword: "BYTSSENT",
        kind: FieldKind::Int,
        doc: "Bytes sent, control data included.",
        get: |c| count(c.bytes_sent),
    },
    StatusField {
        keyword: "BYTSRCVD",
        kind: FieldKind::Int,
        doc: "Bytes received, control data included.",
        get: |c| count(c.bytes_received),
    },
    StatusField {
        keyword: "BUFSSENT",
        kind: FieldKind::Int,
        doc: "Transmission buffers (channel frames) sent, control frames included.",
        get: |c| count(c.buffers_sent),
    },
    StatusField {
        keyword: "BUFSRCVD",
        kind: FieldKind::Int,
        doc: "Transmission buffers (channel frames) received, control frames included.",
        get: |c| count(c.buffers_received),
    },
    StatusField {
        keyword: "CURSEQNO",
        kind: FieldKind::Int,
        doc: "Sequence number of the last message sent or received.",
        get: |c| count(c.current_seq),
    },
    StatusField {
        keyword: "LSTSEQNO",
        kind: FieldKind::Int,
        doc: "Sequence number of the last message of the last committed batch.",
        get: |c| count(c.last_seq),
    },
    StatusField {
        keyword: "CURLUWID",
        kind: FieldKind::Text,
        doc: "Logical unit of work id of the batch in progress.",
        get: |c| luwid(c.current_luwid),
    },
    StatusField {
        keyword: "LSTLUWID",
        kind: FieldKind::Text,
        doc: "Logical unit of work id of the last committed batch.",
        get: |c| luwid(c.last_luwid),
    },
    StatusField {
        keyword: "INDOUBT",
        kind: FieldKind::Keyword(&["YES", "NO"]),
        doc: "YES while the sending end waits for its partner to confirm a batch with persistent messages.",
        get: |c| yes_no(c.in_doubt),
    },
    StatusField {
        keyword: "CURMSGS",
        kind: FieldKind::Int,
        doc: "Messages in the current batch (in doubt when INDOUBT(YES)).",
        get: |c| count(c.current_messages),
    },
    StatusField {
        keyword: "SHORTRTS",
        kind: FieldKind::Int,
        doc: "Short retries left.",
        get: |c| count(c.short_retries_left),
    },
    StatusField {
        keyword: "LONGRTS",
        kind: FieldKind::Int,
        doc: "Long retries left.",
        get: |c| count(c.long_retries_left),
    },
    StatusField {
        keyword: "BATCHSZ",
        kind: FieldKind::Int,
        doc: "Batch size agreed with the partner.",
        get: |c| count(c.batch_size),
    },
    StatusField {
        keyword: "HBINT",
        kind: FieldKind::Int,
        doc: "Heartbeat interval agreed with the partner, seconds.",
        get: |c| count(c.heartbeat_interval),
    },
    StatusField {
        keyword: "MAXMSGL",
        kind: FieldKind::Int,
        doc: "Maximum message length agreed with the partner.",
        get: |c| count(c.max_msg_length),
    },
    StatusField {
        keyword: "NPMSPEED",
        kind: FieldKind::Keyword(&["FAST", "NORMAL"]),
        doc: "Non-persistent message speed agreed with the partner.",
        get: |c| FieldValue::Keyword(if c.np_speed_fast { "FAST" } else { "NORMAL" }),
    },
    StatusField {
        keyword: "NETTIME",
        kind: FieldKind::Text,
        doc: "Microseconds of the last batch's confirmation round trip (short-term, long-term).",
        get: |c| micros(c.network_time_us),
    },
    StatusField {
        keyword: "XQTIME",
        kind: FieldKind::Text,
        doc: "Microseconds the last message sent waited on the transmission queue (short-term, long-term).",
        get: |c| micros(c.xmitq_time_us),
    },
    StatusField {
        keyword: "STOPREQ",
        kind: FieldKind::Keyword(&["YES", "NO"]),
        doc: "YES while a STOP CHANNEL waits for the current batch to end.",
        get: |c| yes_no(c.stop_requested),
    },
    StatusField {
        keyword: "LSTMSGDA",
        kind: FieldKind::Text,
        doc: "Date of the last message sent or received.",
        get: |c| opt_date(c.last_message_ms),
    },
    StatusField {
        keyword: "LSTMSGTI",
        kind: FieldKind::Text,
        doc: "Time of the last message sent or received.",
        get: |c| opt_time(c.last_message_ms),
    },
    StatusField {
        keyword: "CHSTADA",
        kind: FieldKind::Text,
        doc: "Date the channel's conversation started.",
        get: |c| opt_date(c.started_ms),
    },
    StatusField {
        keyword: "CHSTATI",
        kind: FieldKind::Text,
        doc: "Time the channel's conversation started.",
        get: |c| opt_time(c.started_ms),
    },
];

/// DISPLAY CHSTATUS fields of a SVRCONN channel instance (one client socket), in MQ's
/// names for server-connection channels.
pub static CHSTATUS_SVRCONN_FIELDS: &[StatusField<ChannelInstanceStatus>] = &with_tls_fields![compression;
    StatusField {
        keyword: "STATUS",
        kind: FieldKind::Keyword(BINDING_RUNNING),
        doc: "BINDING: the client is handshaking (hello or first MQCONN not done; closed after HandshakeTimeout); RUNNING: a conversation connected.",
        get: |c| FieldValue::Keyword(if c.running { "RUNNING" } else { "BINDING" }),
    },
    StatusField {
        keyword: "CONNAME",
        kind: FieldKind::Text,
        doc: "Client address.",
        get: |c| FieldValue::Text(c.connection_name.clone()),
    },
    StatusField {
        keyword: "CURSHCNV",
        kind: FieldKind::Int,
        doc: "Conversations on the socket now.",
        get: |c| count(c.current_conversations),
    },
    StatusField {
        keyword: "MAXSHCNV",
        kind: FieldKind::Int,
        doc: "Conversations the socket may carry (negotiated SHARECNV; 0 before the hello).",
        get: |c| count(c.max_conversations),
    },
    StatusField {
        keyword: "HBINT",
        kind: FieldKind::Int,
        doc: "Negotiated heartbeat interval, seconds.",
        get: |c| count(c.heartbeat_interval),
    },
    StatusField {
        keyword: "MAXMSGL",
        kind: FieldKind::Int,
        doc: "Negotiated maximum message length.",
        get: |c| count(c.max_msg_length),
    },
    StatusField {
        keyword: "RAPPLTAG",
        kind: FieldKind::Text,
        doc: "Application name the client sent in its hello.",
        get: |c| FieldValue::Text(c.remote_application.clone()),
    },
    StatusField {
        keyword: "MSGS",
        kind: FieldKind::Int,
        doc: "MQI calls handled.",
        get: |c| count(c.calls),
    },
    StatusField {
        keyword: "BYTSSENT",
        kind: FieldKind::Int,
        doc: "Bytes sent to the client.",
        get: |c| count(c.bytes_sent),
    },
    StatusField {
        keyword: "BYTSRCVD",
        kind: FieldKind::Int,
        doc: "Bytes received from the client.",
        get: |c| count(c.bytes_received),
    },
    StatusField {
        keyword: "LSTMSGDA",
        kind: FieldKind::Text,
        doc: "Date of the last MQI call.",
        get: |c| opt_date(c.last_call_ms),
    },
    StatusField {
        keyword: "LSTMSGTI",
        kind: FieldKind::Text,
        doc: "Time of the last MQI call.",
        get: |c| opt_time(c.last_call_ms),
    },
    StatusField {
        keyword: "CHSTADA",
        kind: FieldKind::Text,
        doc: "Date the socket was accepted.",
        get: |c| opt_date(Some(c.started_ms)),
    },
    StatusField {
        keyword: "CHSTATI",
        kind: FieldKind::Text,
        doc: "Time the socket was accepted.",
        get: |c| opt_time(Some(c.started_ms)),
    },
];

/// DISPLAY CHSTATUS CLIENTID(...) fields: one record per connected client.
pub static CHSTATUS_CLIENT_FIELDS: &[StatusField<ChannelClientStatus>] = &with_tls_fields![
    StatusField {
        keyword: "CLIENTID",
        kind: FieldKind::Text,
        doc: "The client's AMQP container id.",
        get: |c| FieldValue::Text(c.client_id.clone()),
    },
    StatusField {
        keyword: "STATUS",
        kind: FieldKind::Keyword(RUNNING_STOPPED),
        doc: "RUNNING: a listed client is connected.",
        get: |_| running(true),
    },
    StatusField {
        keyword: "CONNAME",
        kind: FieldKind::Text,
        doc: "Client address.",
        get: |c| FieldValue::Text(c.connection_name.clone()),
    },
    StatusField {
        keyword: "MCAUSER",
        kind: FieldKind::Text,
        doc: "User id the connection is authorized as.",
        get: |c| FieldValue::Text(c.user_id.clone()),
    },
    StatusField {
        keyword: "MSGSNT",
        kind: FieldKind::Int,
        doc: "Messages sent to the client.",
        get: |c| count(c.messages_sent),
    },
    StatusField {
        keyword: "MSGRCVD",
        kind: FieldKind::Int,
        doc: "Messages received from the client.",
        get: |c| count(c.messages_received),
    },
    StatusField {
        keyword: "BYTSSENT",
        kind: FieldKind::Int,
        doc: "Bytes sent to the client.",
        get: |c| count(c.bytes_sent),
    },
    StatusField {
        keyword: "BYTSRCVD",
        kind: FieldKind::Int,
        doc: "Bytes received from the client.",
        get: |c| count(c.bytes_received),
    },
    StatusField {
        keyword: "LSTMSGDA",
        kind: FieldKind::Text,
        doc: "Date of the client's last message.",
        get: |c| opt_date(c.last_message_ms),
    },
    StatusField {
        keyword: "LSTMSGTI",
        kind: FieldKind::Text,
        doc: "Time of the client's last message.",
        get: |c| opt_time(c.last_message_ms),
    },
    StatusField {
        keyword: "CHSTADA",
        kind: FieldKind::Text,
        doc: "Date the client connected.",
        get: |c| opt_date(Some(c.connected_ms)),
    },
    StatusField {
        keyword: "CHSTATI",
        kind: FieldKind::Text,
        doc: "Time the client connected.",
        get: |c| opt_time(Some(c.connected_ms)),
    },
];

/// The SUBTYPE values a status record shows.
const SUB_TYPES: &[&str] = &["API", "ADMIN", "PROXY"];

/// The fields of a subscription's status DISPLAY SBSTATUS and TPSTATUS TYPE(SUB) share,
/// after SUBID.
macro_rules! subscription_status_fields {
    ($($field:expr),* $(,)?) => {
        [
            $($field,)*
            StatusField {
                keyword: "SUBUSER",
                kind: FieldKind::Text,
                doc: "The user the subscription belongs to.",
                get: |s| FieldValue::Text(s.user_id.clone()),
            },
            StatusField {
                keyword: "SUBTYPE",
                kind: FieldKind::Keyword(SUB_TYPES),
                doc: "API (MQSUB, AMQP, JMS) or ADMIN (DEFINE SUB).",
                get: |s| FieldValue::Text(s.sub_type.clone()),
            },
            StatusField {
                keyword: "DURABLE",
                kind: FieldKind::Keyword(YES_NO),
                doc: "Whether it outlives its application and a restart.",
                get: |s| yes_no(s.durable),
            },
            StatusField {
                keyword: "ACTCONN",
                kind: FieldKind::Text,
                doc: "The connection that has it open, as DISPLAY CONN shows it (blank: none).",
                get: |s| FieldValue::Text(s.active_connection.clone()),
            },
            StatusField {
                keyword: "RESMDATE",
                kind: FieldKind::Text,
                doc: "Date an MQSUB last made or resumed it (the queue manager's start for a durable one nobody resumed since).",
                get: |s| opt_date(Some(s.resumed_ms)),
            },
            StatusField {
                keyword: "RESMTIME",
                kind: FieldKind::Text,
                doc: "Time of RESMDATE.",
                get: |s| opt_time(Some(s.resumed_ms)),
            },
            StatusField {
                keyword: "LMSGDATE",
                kind: FieldKind::Text,
                doc: "Date it last received a copy (blank: none since the start).",
                get: |s| opt_date(s.last_message_ms),
            },
            StatusField {
                keyword: "LMSGTIME",
                kind: FieldKind::Text,
                doc: "Time of LMSGDATE.",
                get: |s| opt_time(s.last_message_ms),
            },
            StatusField {
                keyword: "NUMMSGS",
                kind: FieldKind::Int,
                doc: "Copies it received since the queue manager started.",
                get: |s| count(s.messages),
            },
        ]
    };
}

/// DISPLAY SBSTATUS fields (after SUB and SUBID).
pub static SBSTATUS_FIELDS: &[StatusField<SubscriptionStatusRecord>] =
    &subscription_status_fields![StatusField {
        keyword: "TOPICSTR",
        kind: FieldKind::Text,
        doc: "The subscription's topic string.",
        get: |s| FieldValue::Text(s.topic_string.clone()),
    },];

/// DISPLAY TPSTATUS TYPE(SUB) fields (after TOPICSTR).
pub static TPSTATUS_SUB_FIELDS: &[StatusField<SubscriptionStatusRecord>] =
    &subscription_status_fields![StatusField {
        keyword: "SUBID",
        kind: FieldKind::Text,
        doc: "The subscription's identifier (48 hex digits).",
        get: |s| FieldValue::Text(s.sub_id.clone()),
    },];

const ENABLED_DISABLED: &[&str] = &["ENABLED", "DISABLED"];
const DELIVERY: &[&str] = &["ALL", "ALLDUR", "ALLAVAIL"];
const SCOPES: &[&str] = &["ALL", "QMGR"];

fn enabled(b: bool) -> FieldValue {
    FieldValue::Keyword(if b { "ENABLED" } else { "DISABLED" })
}

/// DISPLAY TPSTATUS TYPE(TOPIC) fields (after TOPICSTR): the attributes in force at the
/// node, every ASPARENT resolved.
pub static TPSTATUS_TOPIC_FIELDS: &[StatusField<TopicNodeStatus>] = &[
    StatusField {
        keyword: "ADMIN",
        kind: FieldKind::Text,
        doc: "The topic object of exactly this node (blank: none; the node's attributes come from its ancestors').",
        get: |t| FieldValue::Text(t.admin.clone()),
    },
    StatusField {
        keyword: "PUB",
        kind: FieldKind::Keyword(ENABLED_DISABLED),
        doc: "Whether publishing is allowed.",
        get: |t| enabled(t.resolved.publish),
    },
    StatusField {
        keyword: "SUB",
        kind: FieldKind::Keyword(ENABLED_DISABLED),
        doc: "Whether subscribing is allowed.",
        get: |t| enabled(t.resolved.subscribe),
    },
    StatusField {
        keyword: "DURSUB",
        kind: FieldKind::Keyword(YES_NO),
        doc: "Whether durable subscriptions may be made.",
        get: |t| yes_no(t.resolved.durable_subscriptions),
    },
    StatusField {
        keyword: "DEFPSIST",
        kind: FieldKind::Keyword(YES_NO),
        doc: "Persistence of publications put as the topic's default.",
        get: |t| yes_no(t.resolved.default_persistent),
    },
    StatusField {
        keyword: "DEFPRTY",
        kind: FieldKind::Int,
        doc: "Priority of publications put as the topic's default.",
        get: |t| count(t.resolved.default_priority),
    },
    StatusField {
        keyword: "DEFPRESP",
        kind: FieldKind::Keyword(&["SYNC", "ASYNC"]),
        doc: "Put response of publications put as the topic's default.",
        get: |t| FieldValue::Keyword(t.resolved.default_put_response.keyword()),
    },
    StatusField {
        keyword: "PMSGDLV",
        kind: FieldKind::Keyword(DELIVERY),
        doc: "Persistent publications when a copy cannot be delivered.",
        get: |t| FieldValue::Keyword(t.resolved.persistent_delivery.keyword_value().keyword()),
    },
    StatusField {
        keyword: "NPMSGDLV",
        kind: FieldKind::Keyword(DELIVERY),
        doc: "Non-persistent publications when a copy cannot be delivered.",
        get: |t| {
            FieldValue::Keyword(t.resolved.non_persistent_delivery.keyword_value().keyword())
        },
    },
    StatusField {
        keyword: "USEDLQ",
        kind: FieldKind::Keyword(YES_NO),
        doc: "Whether an undeliverable copy may go to the dead-letter queue.",
        get: |t| yes_no(t.resolved.use_dlq),
    },
    StatusField {
        keyword: "MDURMDL",
        kind: FieldKind::Text,
        doc: "Model queue of managed durable subscriptions.",
        get: |t| FieldValue::Text(t.resolved.durable_model_q.clone()),
    },
    StatusField {
        keyword: "MNDURMDL",
        kind: FieldKind::Text,
        doc: "Model queue of managed non-durable subscriptions.",
        get: |t| FieldValue::Text(t.resolved.non_durable_model_q.clone()),
    },
    StatusField {
        keyword: "PUBSCOPE",
        kind: FieldKind::Keyword(SCOPES),
        doc: "Whether publications go to connected queue managers (none yet).",
        get: |t| FieldValue::Keyword(t.pub_scope),
    },
    StatusField {
        keyword: "SUBSCOPE",
        kind: FieldKind::Keyword(SCOPES),
        doc: "Whether subscriptions go to connected queue managers (none yet).",
        get: |t| FieldValue::Keyword(t.sub_scope),
    },
    StatusField {
        keyword: "PUBCOUNT",
        kind: FieldKind::Int,
        doc: "Handles open for publishing on the node.",
        get: |t| count(t.pub_count),
    },
    StatusField {
        keyword: "SUBCOUNT",
        kind: FieldKind::Int,
        doc: "Subscriptions on the node (durable ones nobody has open included).",
        get: |t| count(t.sub_count),
    },
    StatusField {
        keyword: "RETAINED",
        kind: FieldKind::Keyword(YES_NO),
        doc: "Whether the node has a retained publication.",
        get: |t| yes_no(t.retained),
    },
];

/// DISPLAY TPSTATUS TYPE(PUB) fields (after TOPICSTR): one record per handle open for
/// publishing. Ferry does not count publications per handle yet: LPUBDATE and LPUBTIME
/// are blank and NUMPUBS 0.
pub static TPSTATUS_PUB_FIELDS: &[StatusField<PublisherStatus>] = &[
    StatusField {
        keyword: "ACTCONN",
        kind: FieldKind::Text,
        doc: "The connection that has the topic open for publishing.",
        get: |p| FieldValue::Text(p.active_connection.clone()),
    },
    StatusField {
        keyword: "LPUBDATE",
        kind: FieldKind::Text,
        doc: "Date of the handle's last publication (not tracked yet: blank).",
        get: |p| opt_date(p.last_publish_ms),
    },
    StatusField {
        keyword: "LPUBTIME",
        kind: FieldKind::Text,
        doc: "Time of the handle's last publication (not tracked yet: blank).",
        get: |p| opt_time(p.last_publish_ms),
    },
    StatusField {
        keyword: "NUMPUBS",
        kind: FieldKind::Int,
        doc: "Publications through the handle (not tracked yet: 0).",
        get: |p| count(p.publishes),
    },
];

/// DISPLAY PUBSUB fields (after QMNAME).
pub static PUBSUB_FIELDS: &[StatusField<PubSubStatus>] = &[
    StatusField {
        keyword: "TYPE",
        kind: FieldKind::Keyword(&["LOCAL"]),
        doc: "LOCAL: this queue manager (Ferry has no hierarchies: no PARENT or CHILD).",
        get: |_| FieldValue::Keyword("LOCAL"),
    },
    StatusField {
        keyword: "STATUS",
        kind: FieldKind::Keyword(&["ACTIVE"]),
        doc: "ACTIVE: the publish/subscribe engine runs (it always does, PSMODE(ENABLED)).",
        get: |_| FieldValue::Keyword("ACTIVE"),
    },
    StatusField {
        keyword: "SUBCOUNT",
        kind: FieldKind::Int,
        doc: "Subscriptions.",
        get: |p| count(p.sub_count),
    },
    StatusField {
        keyword: "TPCOUNT",
        kind: FieldKind::Int,
        doc: "Nodes of the topic tree (topic objects, subscriptions, retained publications and topics open for publishing).",
        get: |p| count(p.topic_count),
    },
];

/// What DISPLAY CLUSQMGR shows of each cluster queue manager (CLUSQMGR and CLUSTER
/// always).
pub static CLUSQMGR_FIELDS: &[StatusField<ferry_objects::status::ClusterQmgrStatus>] = &[
    StatusField {
        keyword: "CHANNEL",
        kind: FieldKind::Text,
        doc: "Its CLUSRCVR's name: the cluster-sender channel to it.",
        get: |c| FieldValue::Text(c.channel.clone()),
    },
    StatusField {
        keyword: "QMTYPE",
        kind: FieldKind::Keyword(&["REPOS", "NORMAL"]),
        doc: "REPOS for a full repository of the cluster, else NORMAL.",
        get: |c| FieldValue::Keyword(if c.full_repository { "REPOS" } else { "NORMAL" }),
    },
    StatusField {
        keyword: "STATUS",
        kind: FieldKind::Text,
        doc: "State of the cluster channel to it (INACTIVE until a message needs it).",
        get: |c| FieldValue::Text(c.status.clone()),
    },
    StatusField {
        keyword: "DEFTYPE",
        kind: FieldKind::Keyword(&["CLUSRCVR", "CLUSSDR", "CLUSSDRA", "CLUSSDRB"]),
        doc: "CLUSRCVR: this queue manager; CLUSSDR: a manual cluster-sender whose partner has not answered; CLUSSDRA: auto-defined; CLUSSDRB: manual, and the partner's record arrived.",
        get: |c| FieldValue::Keyword(c.definition_type),
    },
    StatusField {
        keyword: "CONNAME",
        kind: FieldKind::Text,
        doc: "Where it listens, as its CLUSRCVR says.",
        get: |c| FieldValue::Text(c.connection_name.clone()),
    },
    StatusField {
        keyword: "XMITQ",
        kind: FieldKind::Text,
        doc: "The transmission queue of the cluster-sender to it: SYSTEM.CLUSTER.TRANSMIT.QUEUE, or SYSTEM.CLUSTER.TRANSMIT.<channel> with QMGR DEFCLXQ(CHANNEL) once the channel switched (blank for this queue manager).",
        get: |c| FieldValue::Text(c.xmit_q.clone()),
    },
    StatusField {
        keyword: "QMID",
        kind: FieldKind::Text,
        doc: "Its queue manager identifier.",
        get: |c| FieldValue::Text(c.qmid.clone()),
    },
    StatusField {
        keyword: "SUSPEND",
        kind: FieldKind::Keyword(&["YES", "NO"]),
        doc: "Whether it is suspended from the cluster.",
        get: |c| FieldValue::Keyword(if c.suspended { "YES" } else { "NO" }),
    },
    StatusField {
        keyword: "CLWLRANK",
        kind: FieldKind::Int,
        doc: "Workload rank of its channel.",
        get: |c| FieldValue::Int(i64::from(c.rank)),
    },
    StatusField {
        keyword: "CLWLPRTY",
        kind: FieldKind::Int,
        doc: "Workload priority of its channel.",
        get: |c| FieldValue::Int(i64::from(c.priority)),
    },
    StatusField {
        keyword: "CLWLWGHT",
        kind: FieldKind::Int,
        doc: "Workload weight of its channel.",
        get: |c| FieldValue::Int(i64::from(c.weight)),
    },
    StatusField {
        keyword: "NETPRTY",
        kind: FieldKind::Int,
        doc: "Network priority of its channel.",
        get: |c| FieldValue::Int(i64::from(c.network_priority)),
    },
];

/// What DISPLAY QCLUSTER shows of each cluster queue instance (QUEUE always).
pub static QCLUSTER_FIELDS: &[StatusField<ferry_objects::status::ClusterQueueStatus>] = &[
    StatusField {
        keyword: "CLUSQMGR",
        kind: FieldKind::Text,
        doc: "The queue manager hosting the instance.",
        get: |q| FieldValue::Text(q.qmgr.clone()),
    },
    StatusField {
        keyword: "CLUSTER",
        kind: FieldKind::Text,
        doc: "The cluster it is advertised in.",
        get: |q| FieldValue::Text(q.cluster.clone()),
    },
    StatusField {
        keyword: "QMID",
        kind: FieldKind::Text,
        doc: "The hosting queue manager's identifier.",
        get: |q| FieldValue::Text(q.qmid.clone()),
    },
    StatusField {
        keyword: "DEFBIND",
        kind: FieldKind::Keyword(&["OPEN", "NOTFIXED", "GROUP"]),
        doc: "Its DEFBIND.",
        get: |q| FieldValue::Keyword(q.default_bind),
    },
    StatusField {
        keyword: "PUT",
        kind: FieldKind::Keyword(&["ENABLED", "DISABLED"]),
        doc: "Whether it takes puts.",
        get: |q| FieldValue::Keyword(if q.put_enabled { "ENABLED" } else { "DISABLED" }),
    },
    StatusField {
        keyword: "CLWLRANK",
        kind: FieldKind::Int,
        doc: "Its workload rank.",
        get: |q| FieldValue::Int(i64::from(q.rank)),
    },
    StatusField {
        keyword: "CLWLPRTY",
        kind: FieldKind::Int,
        doc: "Its workload priority.",
        get: |q| FieldValue::Int(i64::from(q.priority)),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_column_layout_matches_mq() {
        let fields = [
            Field::new("QUEUE", FieldValue::Text("APP.Q".into())),
            Field::new("TYPE", FieldValue::Keyword("QLOCAL")),
            Field::new("CURDEPTH", FieldValue::Int(0)),
            Field::new("MAXDEPTH", FieldValue::Int(5000)),
            Field::new(
                "SHARE",
                FieldValue::Flag {
                    shown: "NOSHARE",
                    on: false,
                },
            ),
        ];
        assert_eq!(
            render_block(&ferry_messages::DISPLAY_QUEUE, &fields),
            vec![
                "FRY8409I: Display Queue details.",
                "   QUEUE(APP.Q)                            TYPE(QLOCAL)",
                "   CURDEPTH(0)                             MAXDEPTH(5000)",
                "   NOSHARE",
            ]
        );
    }

    #[test]
    fn wide_cells_take_their_own_line() {
        let long = "D".repeat(45);
        let lines = two_columns([
            format!("DESCR({long})"),
            "PUT(ENABLED)".into(),
            "GET(ENABLED)".into(),
        ]);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0], format!("   DESCR({long})"));
        assert!(lines[1].starts_with("   PUT(ENABLED)"));
    }

    #[test]
    fn blank_text_shows_as_a_blank() {
        assert_eq!(
            Field::new("DESCR", FieldValue::Text(String::new())).cell(),
            "DESCR( )"
        );
        assert_eq!(
            Field::new("UNCOM", FieldValue::NoOrCount(0)).cell(),
            "UNCOM(NO)"
        );
        assert_eq!(
            Field::new("UNCOM", FieldValue::NoOrCount(3)).cell(),
            "UNCOM(3)"
        );
    }

    #[test]
    fn dates_are_utc_in_mq_form() {
        assert_eq!(date_time(0), ("1970-01-01".into(), "00.00.00".into()));
        // 2024-02-29T13:14:15Z
        assert_eq!(
            date_time(1_709_212_455_000),
            ("2024-02-29".into(), "13.14.15".into())
        );
    }
}
