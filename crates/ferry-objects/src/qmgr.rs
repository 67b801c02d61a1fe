//! Queue manager attributes (ALTER QMGR / DISPLAY QMGR).

use crate::attribute::AttrKind::{Int, IntOrWord, Keyword, Name, Text};
use crate::queue::Enablement;
use crate::{attribute_table, keyword_enum};
use ferry_mqi::inquire::selector as sel;

/// The queue manager is one object; its rows all apply.
pub const QMGR: u32 = 1;

keyword_enum! {
    /// QMGR STATMQI and STATQ: whether statistics messages are written (MQ's
    /// SYSTEM.ADMIN.STATISTICS.QUEUE messages, every STATINT seconds; see
    /// docs/operations.md, Statistics messages).
    StatisticsSwitch {
        /// Collected.
        On = "ON",
        /// Not collected (queues with STATQ(ON) still are, for STATQ).
        Off = "OFF",
        /// Not collected, whatever the queues say (STATQ only).
        None = "NONE",
    }
}

keyword_enum! {
    /// QMGR MONQ and MONCHL: online monitoring data of queues (DISPLAY QSTATUS MSGAGE,
    /// LPUTDATE/LPUTTIME, LGETDATE/LGETTIME) and of channels (CHSTATUS NETTIME, XQTIME).
    QmgrMonitoring {
        /// Off for the objects whose own attribute says QMGR (MQ's default).
        #[serde(alias = "QMgr")]
        Off = "OFF",
        /// Off for every object, whatever its own attribute says.
        None = "NONE",
        /// Collected at a low rate.
        Low = "LOW",
        /// Collected at a medium rate.
        Medium = "MEDIUM",
        /// Collected at a high rate.
        High = "HIGH",
    }
}

keyword_enum! {
    /// PLATFORM: what DISPLAY QMGR reports.
    Platform { Unix = "UNIX" }
}

keyword_enum! {
    /// QMGR CLWLUSEQ: whether a put to a cluster queue with a local instance uses it.
    ClusterUseQueue {
        /// The local instance, when there is one (MQ's default).
        Local = "LOCAL",
        /// Every instance, local or remote, takes its share.
        Any = "ANY",
    }
}

keyword_enum! {
    /// DEFCLXQ: which transmission queue auto-defined cluster-sender channels use.
    DefaultClusterXmitQueue {
        /// SYSTEM.CLUSTER.TRANSMIT.QUEUE, shared by every cluster-sender (MQ's default).
        Sctq = "SCTQ",
        /// A SYSTEM.CLUSTER.TRANSMIT.<channel> queue each, made from
        /// SYSTEM.CLUSTER.TRANSMIT.MODEL.QUEUE when the channel starts.
        Channel = "CHANNEL",
    }
}

attribute_table! {
    /// The attributes of the queue manager.
    pub struct QmgrAttributes;
    pub static QMGR_ATTRIBUTES;
    descr: String = "DESCR", Text { max_len: 64 }, default String::new(),
        applies QMGR, inq Some(sel::Q_MGR_DESC), rw, "Description for operators.";
    dead_letter_q: String = "DEADQ", Name { max_len: 48 }, default String::new(),
        applies QMGR, inq Some(sel::DEAD_LETTER_Q_NAME), rw, "Dead-letter queue.";
    default_xmit_q: String = "DEFXMITQ", Name { max_len: 48 }, default String::new(),
        applies QMGR, inq None, rw, "Transmission queue used when no route is found.";
    max_msg_length: i32 = "MAXMSGL", Int { min: 32_768, max: 104_857_600 }, default 4_194_304,
        applies QMGR, inq Some(sel::MAX_MSG_LENGTH), rw, "Longest message the queue manager accepts (then 2031).";
    max_handles: i32 = "MAXHANDS", Int { min: 0, max: 999_999_999 }, default 256,
        applies QMGR, inq Some(sel::MAX_HANDLES), rw, "Open handles per connection (then 2017).";
    max_uncommitted_msgs: i32 = "MAXUMSGS", Int { min: 1, max: 999_999_999 }, default 10_000,
        applies QMGR, inq Some(sel::MAX_UNCOMMITTED_MSGS), rw, "Messages in one unit of work (then 2024).";
    msg_mark_browse_interval: i32 = "MARKINT", IntOrWord { min: 0, max: 999_999_999, word: "NOLIMIT" }, default 5_000,
        applies QMGR, inq Some(sel::MSG_MARK_BROWSE_INTERVAL), rw, "Milliseconds a cooperative browse mark (MQGMO_MARK_BROWSE_CO_OP) lasts unless its message is got.";
    trigger_interval: i32 = "TRIGINT", Int { min: 0, max: 999_999_999 }, default 999_999_999,
        applies QMGR, inq Some(sel::TRIGGER_INTERVAL), rw, "Milliseconds: TRIGTYPE(FIRST) queues that hold messages and that no application has open for input get another trigger message at most this often.";
    max_priority: i32 = "MAXPRTY", Int { min: 9, max: 9 }, default 9,
        applies QMGR, inq Some(sel::MAX_PRIORITY), ro, "Highest message priority.";
    ccsid: i32 = "CCSID", Int { min: 1, max: 65535 }, default 1208,
        applies QMGR, inq Some(sel::CODED_CHAR_SET_ID), rw, "Character set of the queue manager.";
    command_level: i32 = "CMDLEVEL", Int { min: 0, max: 999_999_999 }, default 940,
        applies QMGR, inq Some(sel::COMMAND_LEVEL), ro, "Command level (MQ 9.4 equivalent).";
    platform: Platform = "PLATFORM", Keyword { values: Platform::KEYWORDS }, default Platform::Unix,
        applies QMGR, inq None, ro, "Platform.";
    monitoring_q: QmgrMonitoring = "MONQ", Keyword { values: QmgrMonitoring::KEYWORDS }, default QmgrMonitoring::Off,
        applies QMGR, inq None, rw, "Online monitoring of queues: OFF (the default) leaves DISPLAY QSTATUS MSGAGE, LPUTDATE/LPUTTIME and LGETDATE/LGETTIME blank (and Prometheus' oldest_message_age, time_since_put and time_since_get out) for queues with MONQ(QMGR); NONE for every queue; LOW, MEDIUM or HIGH show them.";
    monitoring_chl: QmgrMonitoring = "MONCHL", Keyword { values: QmgrMonitoring::KEYWORDS }, default QmgrMonitoring::Off,
        applies QMGR, inq None, rw, "Online monitoring of message channels: OFF (the default) leaves DISPLAY CHSTATUS NETTIME and XQTIME blank for channels with MONCHL(QMGR); NONE for every channel; LOW, MEDIUM or HIGH show them. (COMPRATE and COMPTIME show whatever it says.)";
    statistics_mqi: StatisticsSwitch = "STATMQI", Keyword { values: StatisticsSwitch::KEYWORDS }, default StatisticsSwitch::Off,
        applies QMGR, inq None, rw, "MQI statistics messages (ON or OFF): an MQCMD_STATISTICS_MQI message on SYSTEM.ADMIN.STATISTICS.QUEUE every STATINT seconds. The STATMQI resource-monitoring publications on $SYS topics do not depend on it, as in MQ.";
    statistics_q: StatisticsSwitch = "STATQ", Keyword { values: StatisticsSwitch::KEYWORDS }, default StatisticsSwitch::Off,
        applies QMGR, inq None, rw, "Queue statistics messages for queues with STATQ(QMGR) (ON, OFF or NONE: none for any queue): an MQCMD_STATISTICS_Q message on SYSTEM.ADMIN.STATISTICS.QUEUE every STATINT seconds. The STATQ publications on $SYS topics do not depend on it, as in MQ.";
    statistics_interval: i32 = "STATINT", Int { min: 1, max: 604_800 }, default 1800,
        applies QMGR, inq None, rw, "Seconds between statistics messages (the $SYS publications come every qm.ini Monitoring:PublicationInterval seconds).";
    channel_auth: Enablement = "CHLAUTH", Keyword { values: Enablement::KEYWORDS }, default Enablement::Enabled,
        applies QMGR, inq None, rw, "Whether channel authentication records apply.";
    connection_auth: String = "CONNAUTH", Name { max_len: 48 }, default crate::authinfo::DEFAULT_IDPWOS.to_string(),
        applies QMGR, inq None, rw, "AUTHINFO object that checks user ids and passwords (blank: none are checked); REFRESH SECURITY TYPE(CONNAUTH) after changing it.";
    ssl_key_repository: String = "SSLKEYR", Text { max_len: 256 }, default String::new(),
        applies QMGR, inq None, rw, "Directory of the TLS key repository: <CERTLABL>.crt and <CERTLABL>.key (PEM) and trust.pem, the CA bundle client certificates are checked against (blank: the ssl directory in the queue manager's directory). REFRESH SECURITY TYPE(SSL) reloads it.";
    cert_label: String = "CERTLABL", Text { max_len: 64 }, default String::new(),
        applies QMGR, inq None, rw, "Label of the queue manager's certificate in the key repository (blank: ibmwebspheremq followed by the queue manager's name in lower case, as MQ).";
    ssl_reset_count: i32 = "SSLRKEYC", Int { min: 0, max: 999_999_999 }, default 0,
        applies QMGR, inq None, rw, "Bytes sent and received on a TLS conversation between secret-key resets (TLS 1.3 key updates; 0: never; 1 to 32767 mean 32 KB).";
    repository: String = "REPOS", Name { max_len: 48 }, default String::new(),
        applies QMGR, inq Some(sel::REPOSITORY_NAME), rw, "The cluster this queue manager is a full repository for (blank: none, or the clusters REPOSNL names).";
    repository_namelist: String = "REPOSNL", Name { max_len: 48 }, default String::new(),
        applies QMGR, inq Some(sel::REPOSITORY_NAMELIST), rw, "A namelist of the clusters this queue manager is a full repository for (with REPOS, both count).";
    cluster_workload_use_q: ClusterUseQueue = "CLWLUSEQ", Keyword { values: ClusterUseQueue::KEYWORDS }, default ClusterUseQueue::Local,
        applies QMGR, inq Some(sel::CLWL_USEQ), rw, "For cluster queues with CLWLUSEQ(QMGR): LOCAL puts to the local instance when there is one, ANY shares puts among every instance.";
    cluster_workload_mruc: i32 = "CLWLMRUC", Int { min: 1, max: 999_999_999 }, default 999_999_999,
        applies QMGR, inq Some(sel::CLWL_MRU_CHANNELS), rw, "Most recently used cluster channels the workload algorithm chooses among.";
    default_cluster_xmit_q: DefaultClusterXmitQueue = "DEFCLXQ", Keyword { values: DefaultClusterXmitQueue::KEYWORDS }, default DefaultClusterXmitQueue::Sctq,
        applies QMGR, inq Some(sel::DEF_CLUSTER_XMIT_Q_TYPE), rw, "Transmission queue of cluster-sender channels: SCTQ (SYSTEM.CLUSTER.TRANSMIT.QUEUE, shared), CHANNEL (SYSTEM.CLUSTER.TRANSMIT.<channel> each, made from SYSTEM.CLUSTER.TRANSMIT.MODEL.QUEUE). A channel switches when it next starts, moving its waiting messages.";
    creation_date: String = "CRDATE", Text { max_len: 10 }, default String::new(),
        applies QMGR, inq None, ro, "Date the queue manager was created.";
    creation_time: String = "CRTIME", Text { max_len: 8 }, default String::new(),
        applies QMGR, inq None, ro, "Time the queue manager was created.";
    alteration_date: String = "ALTDATE", Text { max_len: 10 }, default String::new(),
        applies QMGR, inq None, ro, "Date of the last change.";
    alteration_time: String = "ALTTIME", Text { max_len: 8 }, default String::new(),
        applies QMGR, inq None, ro, "Time of the last change.";
}

impl QmgrAttributes {
    /// The key repository's directory: SSLKEYR, or `ssl` in the queue manager's
    /// directory `qm_dir` when it is blank.
    pub fn key_repository_dir(&self, qm_dir: &std::path::Path) -> std::path::PathBuf {
        match self.ssl_key_repository.trim() {
            "" => qm_dir.join("ssl"),
            dir => std::path::PathBuf::from(dir),
        }
    }

    /// The queue manager's certificate label: CERTLABL, or MQ's default,
    /// `ibmwebspheremq` and the queue manager's name `qmgr` in lower case.
    pub fn certificate_label(&self, qmgr: &str) -> String {
        match self.cert_label.trim() {
            "" => ferry_security::default_certificate_label(qmgr),
            label => label.to_string(),
        }
    }
}
