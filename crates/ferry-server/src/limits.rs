//! Every limit on what a client can make the queue manager hold, do or wait for, in one
//! table.
//!
//! A client that is slow, silent, greedy or hostile must not take the service away from
//! the others: each thing it can make the server keep (sockets, buffered bytes, links,
//! unsettled deliveries, selectors) and each stage it can stall in (handshake, a frame half
//! sent) has a bound here, with a default that protects a small machine. As TigerBeetle
//! keeps its limits in one constants file, Ferry keeps them in this one table:
//!
//! - [`Limits`] holds the values a queue manager runs with. The tunable ones are the
//!   `Limits:` stanza's rows of the qm.ini table ([`KEYS`], part of
//!   [`crate::qm_ini::keys::STANZAS`]): read, checked against their range at start and
//!   written by `ferry create` as every other key is.
//! - [`FIXED`] lists the bounds that are part of a protocol or of MQ's own definitions
//!   (AMQP's 512-byte frames before open, MQ_SELECTOR_LENGTH): not tunable, but
//!   documented with the rest.
//! - [`MQ_KNOBS`] names the limits MQ administrators already set elsewhere (MaxChannels,
//!   MAXINST, HBINT, MAXHANDS...), so the operations guide lists them all in one place.
//!
//! [`render_doc_table`] renders the whole list for docs/operations.md; a test keeps that
//! section current (`FERRY_BLESS=1 cargo test -p ferry-server limits` rewrites it).

use crate::qm_ini::keys::{DefaultValue, Key, Value, ValueKind};
use ferry_objects::{ChannelAttributes, QmgrAttributes};
use std::fmt::Write as _;
use std::time::Duration;

/// The qm.ini stanza holding the tunable limits.
pub const STANZA: &str = "Limits";

macro_rules! limits {
    ($(
        $(#[doc = $doc:literal])*
        $field:ident = $key:literal, $default:expr, $min:expr, $max:expr, $unit:literal,
            $what:literal, $when_hit:literal;
    )*) => {
        /// The limits a queue manager runs with (qm.ini `Limits:` stanza).
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct Limits {
            $(
                $(#[doc = $doc])*
                pub $field: u64,
            )*
        }

        impl Default for Limits {
            fn default() -> Self {
                Limits { $( $field: $default, )* }
            }
        }

        /// Every tunable limit: the `Limits:` stanza's rows of the qm.ini table, in the
        /// order qm.ini and the docs list them.
        pub const KEYS: &[Key] = &[ $(
            Key {
                key: $key,
                kind: ValueKind::Number { min: $min, max: $max },
                default: DefaultValue::Number($default),
                unit: $unit,
                meaning: $what,
                when_reached: $when_hit,
                get: |ini| Value::Number(ini.limits.$field),
                set: |ini, v| ini.limits.$field = v.number(),
            },
        )* ];
    };
}

limits! {
    // ---- Connections and file descriptors -------------------------------------------
    /// Sockets open at once on every listener and AMQP channel, from accept on.
    max_connections = "MaxConnections", 5_000, 1, 1_000_000, "sockets",
        "TCP sockets open at once on all listeners and AMQP channels together, counted from accept (handshakes included). Lowered at start to what the process's file-descriptor limit allows after ReservedFileDescriptors.",
        "The socket is closed as soon as it is accepted and FRY9780W written. At start, FRY9781I says when the open-file limit lowered it.";
    /// File descriptors kept back from clients for the queue manager's own work.
    reserved_file_descriptors = "ReservedFileDescriptors", 128, 16, 100_000, "descriptors",
        "File descriptors kept for the queue manager itself (the bindings socket used by `ferry mqsc` and local applications, log and queue files) when clients use all the others.",
        "Clients are refused as for MaxConnections; the administrator keeps working.";

    // ---- Time limits -----------------------------------------------------------------
    /// Seconds from accept until the client is connected.
    handshake_timeout_secs = "HandshakeTimeout", 10, 1, 3_600, "seconds",
        "Time from accept until the client is connected: native clients must send their hello and first MQCONN, AMQP clients their protocol headers, SASL and open.",
        "The socket is closed (native: a refused hello or a close notice with 2009 MQRC_CONNECTION_BROKEN, and FRY9271E; AMQP: close with amqp:resource-limit-exceeded).";
    /// Seconds a connection may go silent in the middle of a frame.
    partial_frame_timeout_secs = "PartialFrameTimeout", 30, 1, 3_600, "seconds",
        "Time a client may send nothing while a frame it started is incomplete (a slowloris that sends a header and stops).",
        "The socket is closed (native: close notice 2009 and FRY9271E; AMQP: close with amqp:resource-limit-exceeded and FRY9505E); the error log suppresses repeats per SuppressInterval.";

    // ---- Native protocol (MQ clients) -------------------------------------------------
    /// Bytes of replies a native socket may have waiting to be sent before its requests
    /// are no longer read.
    max_unsent_bytes = "MaxUnsentBytes", 1_048_576, 65_536, 1_073_741_824, "bytes",
        "Replies to one native client socket not yet sent, because the client does not read them, before the queue manager stops reading that socket's requests. A single larger reply still goes out whole, and replies to gets that other applications' puts complete are added, so a socket holds at most this plus one reply per conversation.",
        "Back-pressure, nothing fails: the socket's next requests wait in the network until the client reads its replies (its sends then block). A client that never reads is ended by heartbeats (FRY9259W).";

    // ---- AMQP 1.0 ---------------------------------------------------------------------
    /// Largest AMQP frame a client may send (announced as max-frame-size).
    amqp_max_frame_size = "AmqpMaxFrameSize", 1_048_576, 4_096, 16_777_216, "bytes",
        "Largest frame an AMQP client may send, announced in the open as max-frame-size; larger messages travel as several frames. A partial frame is buffered as its bytes arrive, never reserved from its header. Before the open is exchanged frames are 512 bytes at most (AMQP 1.0 section 2.7.1).",
        "The connection is closed with amqp:connection:framing-error; FRY9505E.";
    /// Sessions one AMQP connection may begin (announced as channel-max + 1).
    amqp_max_sessions = "AmqpMaxSessions", 256, 1, 65_536, "sessions",
        "Sessions one AMQP connection may have begun, announced in the open as channel-max (this less one).",
        "A frame on a channel above channel-max closes the connection with amqp:connection:framing-error (AMQP 1.0 section 2.7.2).";
    /// Links attached at once on one AMQP connection.
    amqp_max_links = "AmqpMaxLinks", 512, 1, 65_536, "links",
        "Links attached at once on one AMQP connection, across its sessions; announced as each session's handle-max (this less one). A link to a queue also holds one of the connection's MAXHANDS handles.",
        "The attach is refused (null terminus, then a detach) with amqp:resource-limit-exceeded; a client that leaves as many refused links undetached has its session ended with that condition; a handle above handle-max closes the connection with amqp:connection:framing-error.";
    /// Deliveries one receiving link may hold unsettled (and on their way).
    amqp_max_unsettled_per_link = "AmqpMaxUnsettledPerLink", 1_000, 1, 1_000_000, "deliveries",
        "Messages sent (or on their way) on one receiving link that the client has not settled; on a pre-settled link, those on their way. The queue's consumer gets at most this much credit, topped up as the client settles, whatever link credit the client grants (Qpid JMS prefetches 1,000).",
        "Nothing more is sent on the link until the client settles; the messages stay on the queue for other consumers.";
    /// The same, for all receiving links of one AMQP connection.
    amqp_max_unsettled_per_connection = "AmqpMaxUnsettledPerConnection", 5_000, 1, 10_000_000, "deliveries",
        "As AmqpMaxUnsettledPerLink, for all receiving links of one AMQP connection together.",
        "As AmqpMaxUnsettledPerLink, for each link of the connection.";
    /// Bytes of message bodies held unsettled for one AMQP connection.
    amqp_max_unsettled_bytes = "AmqpMaxUnsettledBytes", 8_388_608, 65_536, 1_073_741_824, "bytes",
        "Bytes of the messages one AMQP connection holds unsettled (sent, or on their way): a held message's body stays in memory until the client settles it, so a client that never settles must not pull a deep queue of large messages into memory. The queues' consumers get credit for what fits, at least one message at a time.",
        "Nothing more is sent to the connection until the client settles; the messages stay on their queues.";
    /// Bytes of incomplete multi-frame messages on one AMQP connection.
    amqp_max_incomplete_bytes = "AmqpMaxIncompleteBytes", 8_388_608, 65_536, 1_073_741_824, "bytes",
        "Bytes of multi-frame messages being received on one AMQP connection, on all its links together; one message alone may still reach the channel's MAXMSGL. Also the most a connection reads ahead while its transfers wait for log space.",
        "The link whose frame would pass it is detached with amqp:resource-limit-exceeded and its partial message dropped; the connection carries on.";
    /// Bytes waiting to go out to one AMQP connection above which deliveries pause.
    amqp_output_buffer = "AmqpOutputBuffer", 1_048_576, 65_536, 67_108_864, "bytes",
        "Bytes waiting to be written to one AMQP connection (frames, and transfers held back by the client's session window) above which no more messages are taken from queues for it.",
        "Deliveries pause until the client reads; the messages stay on their queues.";
    /// Milliseconds the acceptance of a client's transfer may wait for the next frame.
    amqp_accept_delay_ms = "AmqpAcceptDelay", 50, 0, 1_000, "milliseconds",
        "Time the acceptance of a non-persistent message an AMQP client sent unsettled may wait to go out with the next frame to that client, on a connection that also receives messages (a requester's reply, a responder's next request): one write instead of two. Persistent messages are accepted once logged, transactional work by its discharge, producer-only connections at once. A client seen waiting for its acceptances (twice in a row, its next message came right after acceptances that went alone at this delay, with nothing else sent to it between) is answered at once from then on. One task per AMQP channel looks for overdue acceptances five times per delay while any wait, so they wait at most a fifth longer. 0: always at once.",
        "The acceptances go out alone.";
    /// Seconds an AMQP client may leave the server's frames unread.
    amqp_send_timeout_secs = "AmqpSendTimeout", 60, 1, 3_600, "seconds",
        "Time an AMQP client may read nothing while the queue manager has frames for it (its socket buffer full).",
        "The connection is ended; its unsettled messages go back to their queues (the link's default outcome); FRY9505E.";

    // ---- Administration (MQSC, object definitions) ------------------------------------

    // ---- Error log -------------------------------------------------------------------------
    /// Causes of suppressed error-log messages counted at once.
    error_log_causes = "ErrorLogCauses", 64, 1, 100_000, "causes",
        "Distinct causes (message id and the fixed words of its inserts, peer addresses and values left out) whose repeats the error log counts at once within QMErrorLog/SuppressInterval; each costs about 200 bytes.",
        "A further new cause of that message shares one count per message id with the others past the bound: its first occurrence is written, the rest counted, and FRY7185W says \"various causes\". Nothing goes uncounted.";
}

/// A bound fixed by a protocol or by MQ's definitions: documented, not tunable.
#[derive(Debug, Clone, Copy)]
pub struct FixedLimit {
    /// Its name.
    pub name: &'static str,
    /// The value.
    pub value: u64,
    /// What the number counts.
    pub unit: &'static str,
    /// What it bounds.
    pub what: &'static str,
    /// What a client that reaches it sees.
    pub when_hit: &'static str,
}

/// The largest JMS/MQ selection string, in bytes (MQ's MQ_SELECTOR_LENGTH).
pub const MAX_SELECTOR_LENGTH: usize = 10_240;

/// Bounds fixed by a protocol or by MQ.
pub const FIXED: &[FixedLimit] = &[
    FixedLimit {
        name: "Selection string length (MQ_SELECTOR_LENGTH)",
        value: MAX_SELECTOR_LENGTH as u64,
        unit: "bytes",
        what: "A JMS message selector in an AMQP source filter (the native protocol carries no selection string yet).",
        when_hit: "The attach is refused with amqp:invalid-field before the selector is parsed.",
    },
    FixedLimit {
        name: "MQINQ selectors (SelectorCount)",
        value: ferry_mqi::inquire::MAX_SELECTORS as u64,
        unit: "selectors",
        what: "Attribute selectors one MQINQ names (MQ's limit).",
        when_hit: "MQINQ fails with 2066 MQRC_SELECTOR_LIMIT_EXCEEDED before any is looked at.",
    },
    FixedLimit {
        name: "Native hello (MAX_HELLO_LEN)",
        value: ferry_wire::handshake::MAX_HELLO_LEN as u64,
        unit: "bytes",
        what: "A native client's hello, the only thing read before the channel is known (docs/protocol.md §2).",
        when_hit: "A refused ServerHello (2218) and the socket is closed; FRY9504E.",
    },
    FixedLimit {
        name: "Compressed frame, expanded (MAXMSGL + FRAME_OVERHEAD)",
        value: ferry_wire::FRAME_OVERHEAD as u64,
        unit: "bytes above the negotiated MAXMSGL",
        what: "What one compressed PUT or PUT1 (COMPMSG, COMPHDR) may expand to, checked against the length the frame announces before anything is allocated for it (docs/protocol.md §7a).",
        when_hit: "A close notice with 2218 MQRC_MSG_TOO_BIG_FOR_CHANNEL and the socket is closed; FRY9504E names the peer and the sizes. Other connections carry on.",
    },
    FixedLimit {
        name: "AMQP frames before the open (MIN-MAX-FRAME-SIZE)",
        value: ferry_amqp::frame::MIN_MAX_FRAME_SIZE as u64,
        unit: "bytes",
        what: "Frames an AMQP client sends before the open is exchanged (SASL frames and the open itself), AMQP 1.0 section 2.7.1.",
        when_hit: "The connection is closed with amqp:connection:framing-error (during SASL: the socket is closed).",
    },
    // ---- Administration (MQSC, object definitions) ------------------------------------
    FixedLimit {
        name: "MQSC command length",
        value: ferry_mqsc::MAX_COMMAND_LENGTH as u64,
        unit: "bytes",
        what: "One MQSC command, continuation lines joined, where commands are read: by `ferry mqsc` (a longer input line is read to its end, only its beginning kept) and by the command server (from any connection, the bindings socket or TCP).",
        when_hit: "A syntax error: FRY8405I with the command's beginning, then FRY9405E \"the command is longer than 32762 bytes, the most an MQSC command may have (MQRCCF_COMMAND_LENGTH_ERROR)\"; the commands after it run.",
    },
    FixedLimit {
        name: "MQSC answer length",
        value: ferry_mqsc::MAX_COMMAND_OUTPUT as u64,
        unit: "bytes",
        what: "The output of one MQSC command (a DISPLAY of every queue of a queue manager with 100,000), rendered on the queue manager's thread and answered in one frame.",
        when_hit: "The DISPLAY stops there and ends with FRY9006E, saying how many objects it showed; the command counts as failed.",
    },
];

/// A limit MQ administrators already set, with the object or stanza that holds it.
#[derive(Debug, Clone, Copy)]
pub struct MqKnob {
    /// Where it is set: a qm.ini key or an MQSC attribute.
    pub knob: &'static str,
    /// Its default, read from where it is defined (the attribute tables, qm.ini defaults).
    pub default: fn() -> String,
    /// What it bounds.
    pub what: &'static str,
    /// What a client that reaches it sees.
    pub when_hit: &'static str,
}

/// Limits set where MQ sets them.
pub const MQ_KNOBS: &[MqKnob] = &[
    MqKnob {
        knob: "qm.ini `Channels/MaxChannels`",
        default: || crate::qm_ini::QmIni::defaults("", std::path::Path::new("")).channels.max_channels.to_string(),
        what: "Native client sockets (channel instances) at once; each carries up to SHARECNV conversations.",
        when_hit: "The client's connect fails with 2537 MQRC_CHANNEL_NOT_AVAILABLE; FRY9513E.",
    },
    MqKnob {
        knob: "channel `MAXINST`",
        default: || ChannelAttributes::default().max_instances.to_string(),
        what: "Instances of one channel at once: native client sockets whose hello named the SVRCONN channel (handshaking or running), or connections to an AMQP channel.",
        when_hit: "Native: the hello is refused with 2537 MQRC_CHANNEL_NOT_AVAILABLE naming MAXINST, FRY9489E; AMQP: close with amqp:resource-limit-exceeded.",
    },
    MqKnob {
        knob: "channel `MAXINSTC`",
        default: || ChannelAttributes::default().max_instances_per_client.to_string(),
        what: "Instances of one channel at once from one client address.",
        when_hit: "Native: the hello is refused with 2537 naming MAXINSTC, FRY9490E; AMQP: close with amqp:resource-limit-exceeded.",
    },
    MqKnob {
        knob: "channel `HBINT`",
        default: || ChannelAttributes::default().heartbeat_interval.to_string(),
        what: "Heartbeat interval the server insists on: a native client that proposes 0 or more still gets the channel's interval (a shorter proposal is kept); an AMQP channel announces it as its idle-time-out. Silent for twice the interval (plus 5 s) ends the connection.",
        when_hit: "FRY9259W (native) or close with amqp:resource-limit-exceeded \"idle timeout\" (AMQP).",
    },
    MqKnob {
        knob: "channel `MAXMSGL`",
        default: || ChannelAttributes::default().max_msg_length.to_string(),
        what: "Largest message, and so largest frame a native client may send and bytes a partial AMQP message may buffer.",
        when_hit: "2010 MQRC_DATA_LENGTH_ERROR (native); amqp:link:message-size-exceeded (AMQP).",
    },
    MqKnob {
        knob: "qmgr `MAXHANDS`",
        default: || QmgrAttributes::default().max_handles.to_string(),
        what: "Open handles per connection (an AMQP link holds one).",
        when_hit: "2017 MQRC_HANDLE_NOT_AVAILABLE; an AMQP attach is refused with amqp:resource-limit-exceeded.",
    },
    MqKnob {
        knob: "qm.ini `QMErrorLog/ErrorLogSize`",
        default: || crate::qm_ini::QmIni::defaults("", std::path::Path::new("")).error_log.error_log_size.to_string(),
        what: "Bytes of errors/FRYERR01.LOG before it becomes FRYERR02.LOG; three files are kept, so the error log takes at most three times this on disk.",
        when_hit: "The oldest file, FRYERR03.LOG, is dropped. Suppression (SuppressInterval) keeps a flood from getting there.",
    },
    MqKnob {
        knob: "qm.ini `QMErrorLog/SuppressInterval`",
        default: || crate::qm_ini::QmIni::defaults("", std::path::Path::new("")).error_log.suppress_interval.to_string(),
        what: "Seconds during which repeats of a suppressed message (FRY9xxx, and SuppressMessage) with the same cause are counted, not written to the error log or the console log: a flooding client costs two entries per interval and cause.",
        when_hit: "FRY7185W gives the count when the interval ends (or at shutdown).",
    },
    MqKnob {
        knob: "qm.ini `QMErrorLog/ConsoleLogSize` (Ferry's)",
        default: || crate::qm_ini::QmIni::defaults("", std::path::Path::new("")).error_log.console_log_size.to_string(),
        what: "Bytes of run/console.log (a background queue manager's stdout and stderr) before it becomes console.log.1; three files are kept.",
        when_hit: "The oldest file, console.log.2, is dropped.",
    },
    MqKnob {
        knob: "qmgr `MAXUMSGS`",
        default: || QmgrAttributes::default().max_uncommitted_msgs.to_string(),
        what: "Uncommitted messages per unit of work.",
        when_hit: "2024 MQRC_SYNCPOINT_LIMIT_REACHED.",
    },
];

impl Limits {
    /// HandshakeTimeout as a duration.
    pub fn handshake_timeout(&self) -> Duration {
        Duration::from_secs(self.handshake_timeout_secs)
    }

    /// MaxUnsentBytes as a byte count.
    pub fn max_unsent(&self) -> usize {
        usize::try_from(self.max_unsent_bytes).unwrap_or(usize::MAX)
    }

    /// PartialFrameTimeout as a duration.
    pub fn partial_frame_timeout(&self) -> Duration {
        Duration::from_secs(self.partial_frame_timeout_secs)
    }

    /// AmqpSendTimeout as a duration.
    pub fn amqp_send_timeout(&self) -> Duration {
        Duration::from_secs(self.amqp_send_timeout_secs)
    }
}

/// Line opening the generated section of docs/operations.md.
pub const BEGIN_MARKER: &str =
    "<!-- BEGIN GENERATED LIMITS: do not edit; FERRY_BLESS=1 cargo test -p ferry-server limits rewrites it -->";
/// Line closing it.
pub const END_MARKER: &str = "<!-- END GENERATED LIMITS -->";

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The limits as Markdown tables: tunable ones, MQ's own knobs, fixed bounds.
pub fn render_doc_table() -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{BEGIN_MARKER}");
    let _ = writeln!(
        out,
        "Tunable in qm.ini's `{STANZA}:` stanza (read at start):\n\n| Key | Default | Range | What it bounds | When it is reached |\n|---|---|---|---|---|"
    );
    for r in KEYS {
        let (ValueKind::Number { min, max }, DefaultValue::Number(default)) = (r.kind, r.default)
        else {
            continue;
        };
        let _ = writeln!(
            out,
            "| `{}` | {default} {} | {min}-{max} | {} | {} |",
            r.key,
            r.unit,
            cell(r.meaning),
            cell(r.when_reached)
        );
    }
    let _ = writeln!(
        out,
        "\nSet where MQ sets them:\n\n| Knob | Default | What it bounds | When it is reached |\n|---|---|---|---|"
    );
    for k in MQ_KNOBS {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            k.knob,
            (k.default)(),
            cell(k.what),
            cell(k.when_hit)
        );
    }
    let _ = writeln!(
        out,
        "\nFixed by the protocols and by MQ:\n\n| Bound | Value | What it bounds | When it is reached |\n|---|---|---|---|"
    );
    for f in FIXED {
        let _ = writeln!(
            out,
            "| {} | {} {} | {} | {} |",
            f.name,
            f.value,
            f.unit,
            cell(f.what),
            cell(f.when_hit)
        );
    }
    let _ = writeln!(out, "{END_MARKER}");
    out
}

/// Replaces the generated section of docs/operations.md (or appends one) with `generated`.
pub fn splice(doc: &str, generated: &str) -> String {
    ferry_mqsc::docs::splice_section(doc, BEGIN_MARKER, END_MARKER, generated)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::qm_ini::QmIni;
    use std::path::Path;

    fn parse(text: &str) -> Result<QmIni, crate::qm_ini::IniError> {
        QmIni::parse(text, Path::new("/l"))
    }

    #[test]
    fn defaults_are_within_their_ranges() {
        for r in KEYS {
            let (ValueKind::Number { min, max }, DefaultValue::Number(d)) = (r.kind, r.default)
            else {
                panic!("{} is not a number with a number default", r.key);
            };
            assert!(min <= d && d <= max, "{}", r.key);
        }
        let keys: std::collections::BTreeSet<_> = KEYS.iter().map(|r| r.key).collect();
        assert_eq!(keys.len(), KEYS.len(), "a key is listed twice");
        assert_eq!(
            QmIni::defaults("QM1", Path::new("/l")).limits,
            Limits::default()
        );
    }

    #[test]
    fn the_stanza_round_trips_and_is_checked() {
        let text = QmIni::defaults("QM1", Path::new("/l")).render();
        assert!(
            text.contains("\nLimits:\n   MaxConnections=5000\n"),
            "{text}"
        );
        let l = parse("Limits:\n   MaxConnections=200\n   handshaketimeout=3\n")
            .unwrap()
            .limits;
        assert_eq!(l.max_connections, 200);
        assert_eq!(l.handshake_timeout(), Duration::from_secs(3));
        assert_eq!(l.partial_frame_timeout_secs, 30);
        let err = parse("Limits:\n   MaxConnections=0\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "qm.ini Limits/MaxConnections=\"0\": a number from 1 to 1000000"
        );
        let err = parse("Limits:\n   MaxConections=9\n").unwrap_err();
        assert!(err.to_string().contains("one of MaxConnections"), "{err}");
        assert!(err.to_string().contains("MaxConections"), "{err}");
    }

    #[test]
    fn docs_are_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/operations.md");
        let doc = std::fs::read_to_string(path).unwrap_or_default();
        let wanted = splice(&doc, &render_doc_table());
        if std::env::var("FERRY_BLESS").is_ok_and(|v| v == "1") {
            std::fs::write(path, &wanted).expect("docs/operations.md is writable");
            return;
        }
        assert!(
            doc == wanted,
            "docs/operations.md's limits section is out of date: run FERRY_BLESS=1 cargo test -p ferry-server limits"
        );
    }
}
