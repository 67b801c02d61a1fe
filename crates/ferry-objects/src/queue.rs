//! Queue definitions: QLOCAL, QMODEL, QALIAS and QREMOTE share one attribute table.
//!
//! Each row says which queue types it applies to; DEFINE refuses an attribute that does
//! not apply, DISPLAY shows only those that do. Defaults are those of MQ's
//! SYSTEM.DEFAULT.* objects (mqsc.md §3).

use crate::attribute::AttrKind::{Flag, Int, IntOrWord, Keyword, Name, Text};
use crate::{attribute_table, keyword_enum};
use ferry_mqi::inquire::selector as sel;

/// Applies to local queues.
pub const LOCAL: u32 = 1;
/// Applies to model queues.
pub const MODEL: u32 = 2;
/// Applies to alias queues.
pub const ALIAS: u32 = 4;
/// Applies to remote queue definitions.
pub const REMOTE: u32 = 8;
const LM: u32 = LOCAL | MODEL;
/// The types that can be cluster queues: local, alias and remote definitions.
const CLUSTERED: u32 = LOCAL | ALIAS | REMOTE;
const LAM: u32 = LOCAL | ALIAS | MODEL;
const ALL: u32 = LOCAL | MODEL | ALIAS | REMOTE;

keyword_enum! {
    /// The kind of queue a definition describes (MQQT).
    QueueType {
        /// QLOCAL: holds messages.
        Local = "QLOCAL",
        /// QMODEL: a template for dynamic queues.
        Model = "QMODEL",
        /// QALIAS: another name for a queue.
        Alias = "QALIAS",
        /// QREMOTE: a queue on another queue manager.
        Remote = "QREMOTE",
    }
}

impl QueueType {
    /// The bit used in the attribute table's `applies` masks.
    pub fn mask(self) -> u32 {
        match self {
            QueueType::Local => LOCAL,
            QueueType::Model => MODEL,
            QueueType::Alias => ALIAS,
            QueueType::Remote => REMOTE,
        }
    }

    /// MQQT number, as MQINQ(Q_TYPE) returns.
    pub fn mqqt(self) -> i32 {
        match self {
            QueueType::Local => 1,
            QueueType::Model => 2,
            QueueType::Alias => 3,
            QueueType::Remote => 6,
        }
    }
}

keyword_enum! {
    /// PUT / GET: whether the operation is allowed.
    Enablement { Enabled = "ENABLED", Disabled = "DISABLED" }
}

keyword_enum! {
    /// A YES/NO attribute value such as DEFPSIST.
    YesNo { No = "NO", Yes = "YES" }
}

keyword_enum! {
    /// MSGDLVSQ: order in which messages are got.
    MsgDeliverySequence { Priority = "PRIORITY", Fifo = "FIFO" }
}

keyword_enum! {
    /// DEFSOPT: meaning of MQOO_INPUT_AS_Q_DEF.
    DefaultShareOption { Shared = "SHARED", Exclusive = "EXCL" }
}

keyword_enum! {
    /// DEFTYPE: how the queue came to be (read-only PREDEFINED for defined queues).
    DefinitionType { Predefined = "PREDEFINED", PermanentDynamic = "PERMDYN", TemporaryDynamic = "TEMPDYN" }
}

keyword_enum! {
    /// USAGE: normal or transmission queue.
    Usage { Normal = "NORMAL", TransmissionQueue = "XMITQ" }
}

keyword_enum! {
    /// DEFPRESP: put response type when MQPMO_RESPONSE_AS_Q_DEF.
    PutResponse { Sync = "SYNC", Async = "ASYNC" }
}

keyword_enum! {
    /// DEFREADA: client read-ahead of non-persistent messages.
    ReadAhead { No = "NO", Yes = "YES", Disabled = "DISABLED" }
}

keyword_enum! {
    /// A queue's MONQ: its online monitoring data (DISPLAY QSTATUS MSGAGE, LPUTDATE,
    /// LPUTTIME, LGETDATE, LGETTIME).
    MonitoringLevel { QMgr = "QMGR", Off = "OFF", Low = "LOW", Medium = "MEDIUM", High = "HIGH" }
}

impl MonitoringLevel {
    /// Whether a queue with this MONQ shows its monitoring data while the queue
    /// manager's MONQ is `qmgr`: the queue manager's NONE turns it off everywhere, its
    /// OFF for queues that say QMGR; a queue's OFF turns off its own.
    pub fn collects(self, qmgr: crate::qmgr::QmgrMonitoring) -> bool {
        use crate::qmgr::QmgrMonitoring as Q;
        !matches!(
            (qmgr, self),
            (Q::None, _) | (_, MonitoringLevel::Off) | (Q::Off, MonitoringLevel::QMgr)
        )
    }
}

keyword_enum! {
    /// A queue's STATQ: whether its statistics messages are collected.
    QueueStatistics { QMgr = "QMGR", On = "ON", Off = "OFF" }
}

keyword_enum! {
    /// NPMCLASS: whether non-persistent messages survive a clean restart.
    NonPersistentClass { Normal = "NORMAL", High = "HIGH" }
}

keyword_enum! {
    /// DEFBIND: how a cluster queue opened with MQOO_BIND_AS_Q_DEF binds to an instance.
    DefaultBind {
        /// One instance for the handle, chosen at MQOPEN (MQ's default).
        Open = "OPEN",
        /// An instance chosen for each put.
        NotFixed = "NOTFIXED",
        /// One instance for each message group (Ferry: as OPEN for now).
        Group = "GROUP",
    }
}

keyword_enum! {
    /// Queue CLWLUSEQ: whether a put uses the local instance of a cluster queue.
    QueueClusterUseQueue {
        /// As the queue manager's CLWLUSEQ says (MQ's default).
        QMgr = "QMGR",
        /// Every instance, local or remote, takes its share.
        Any = "ANY",
        /// The local instance when there is one.
        Local = "LOCAL",
    }
}

keyword_enum! {
    /// TARGTYPE: what an alias resolves to.
    TargetType { Queue = "QUEUE", Topic = "TOPIC" }
}

keyword_enum! {
    /// TRIGTYPE: when a trigger message is made.
    TriggerType { First = "FIRST", Every = "EVERY", Depth = "DEPTH", None = "NONE" }
}

keyword_enum! {
    /// PROPCTL: how message properties reach applications.
    PropertyControl { Compat = "COMPAT", None = "NONE", All = "ALL", Force = "FORCE", V6Compat = "V6COMPAT" }
}

attribute_table! {
    /// The attributes of a queue of any type (those not applying to its type keep defaults).
    pub struct QueueAttributes;
    pub static QUEUE_ATTRIBUTES;
    descr: String = "DESCR", Text { max_len: 64 }, default String::new(),
        applies ALL, inq Some(sel::Q_DESC), rw, "Description for operators.";
    put: Enablement = "PUT", Keyword { values: Enablement::KEYWORDS }, default Enablement::Enabled,
        applies ALL, inq Some(sel::INHIBIT_PUT), rw, "Whether puts are allowed (DISABLED: 2051 MQRC_PUT_INHIBITED).";
    get: Enablement = "GET", Keyword { values: Enablement::KEYWORDS }, default Enablement::Enabled,
        applies LAM, inq Some(sel::INHIBIT_GET), rw, "Whether gets are allowed (DISABLED: 2016 MQRC_GET_INHIBITED).";
    def_priority: i32 = "DEFPRTY", Int { min: 0, max: 9 }, default 0,
        applies ALL, inq Some(sel::DEF_PRIORITY), rw, "Priority of messages put with MQPRI_PRIORITY_AS_Q_DEF.";
    def_persistence: YesNo = "DEFPSIST", Keyword { values: YesNo::KEYWORDS }, default YesNo::No,
        applies ALL, inq Some(sel::DEF_PERSISTENCE), rw, "Persistence of messages put with MQPER_PERSISTENCE_AS_Q_DEF.";
    def_put_response: PutResponse = "DEFPRESP", Keyword { values: PutResponse::KEYWORDS }, default PutResponse::Sync,
        applies ALL, inq None, rw, "Put response type for MQPMO_RESPONSE_AS_Q_DEF.";
    def_read_ahead: ReadAhead = "DEFREADA", Keyword { values: ReadAhead::KEYWORDS }, default ReadAhead::No,
        applies LAM, inq None, rw, "Client read-ahead of non-persistent messages.";
    max_depth: i32 = "MAXDEPTH", Int { min: 0, max: 999_999_999 }, default 5000,
        applies LM, inq Some(sel::MAX_Q_DEPTH), rw, "Most messages the queue holds (then 2053 MQRC_Q_FULL).";
    max_file_size: i32 = "MAXFSIZE", IntOrWord { min: 20, max: 267_386_880, word: "DEFAULT" }, default crate::attribute::WORD_VALUE,
        applies LM, inq None, rw, "Most MB of messages the queue holds (DEFAULT: 2,088,960 MB), as MQ bounds its queue file; then 2056 MQRC_Q_SPACE_NOT_AVAILABLE.";
    max_msg_length: i32 = "MAXMSGL", Int { min: 0, max: 104_857_600 }, default 4_194_304,
        applies LM, inq Some(sel::MAX_MSG_LENGTH), rw, "Longest message the queue accepts (then 2030 MQRC_MSG_TOO_BIG_FOR_Q).";
    shareable: bool = "SHARE", Flag { on: "SHARE", off: "NOSHARE" }, default true,
        applies LM, inq Some(sel::SHAREABILITY), rw, "Whether several handles may open the queue for input.";
    def_share_option: DefaultShareOption = "DEFSOPT", Keyword { values: DefaultShareOption::KEYWORDS }, default DefaultShareOption::Shared,
        applies LM, inq Some(sel::DEF_INPUT_OPEN_OPTION), rw, "What MQOO_INPUT_AS_Q_DEF means.";
    msg_delivery_sequence: MsgDeliverySequence = "MSGDLVSQ", Keyword { values: MsgDeliverySequence::KEYWORDS }, default MsgDeliverySequence::Priority,
        applies LM, inq Some(sel::MSG_DELIVERY_SEQUENCE), rw, "Get order: by priority then FIFO, or FIFO only.";
    backout_threshold: i32 = "BOTHRESH", Int { min: 0, max: 999_999_999 }, default 0,
        applies LM, inq Some(sel::BACKOUT_THRESHOLD), rw, "BackoutCount at which the queue manager moves a backed-out message to BOQNAME or DEADQ (0: never).";
    backout_requeue_q: String = "BOQNAME", Name { max_len: 48 }, default String::new(),
        applies LM, inq Some(sel::BACKOUT_REQ_Q_NAME), rw, "Where the queue manager moves messages backed out BOTHRESH times (blank: DEADQ).";
    backout_delay: i32 = "BODELAY", Int { min: 0, max: 999_999_999 }, default 0,
        applies LM, inq None, rw, "Milliseconds a backed-out message stays invisible before it is offered again (0: offered at once; not kept across a restart).";
    harden_get_backout: bool = "HARDENBO", Flag { on: "HARDENBO", off: "NOHARDENBO" }, default false,
        applies LM, inq Some(sel::HARDEN_GET_BACKOUT), rw, "Whether BackoutCount is logged before a get returns.";
    usage: Usage = "USAGE", Keyword { values: Usage::KEYWORDS }, default Usage::Normal,
        applies LM, inq Some(sel::USAGE), rw, "NORMAL, or XMITQ for a transmission queue.";
    definition_type: DefinitionType = "DEFTYPE", Keyword { values: DefinitionType::KEYWORDS }, default DefinitionType::TemporaryDynamic,
        applies LM, inq Some(sel::DEFINITION_TYPE), rw, "Model: kind of dynamic queue made (TEMPDYN, PERMDYN); local: how it was made.";
    target: String = "TARGET", Name { max_len: 48 }, default String::new(),
        applies ALIAS, inq Some(sel::BASE_Q_NAME), rw, "The queue (or topic) an alias resolves to.";
    target_type: TargetType = "TARGTYPE", Keyword { values: TargetType::KEYWORDS }, default TargetType::Queue,
        applies ALIAS, inq None, rw, "Whether TARGET names a queue or a topic.";
    remote_name: String = "RNAME", Name { max_len: 48 }, default String::new(),
        applies REMOTE, inq Some(sel::REMOTE_Q_NAME), rw, "Name of the queue on the remote queue manager.";
    remote_qmgr_name: String = "RQMNAME", Name { max_len: 48 }, default String::new(),
        applies REMOTE, inq Some(sel::REMOTE_Q_MGR_NAME), rw, "Name of the remote queue manager.";
    xmit_q: String = "XMITQ", Name { max_len: 48 }, default String::new(),
        applies REMOTE, inq Some(sel::XMIT_Q_NAME), rw, "Transmission queue to use (blank: the one named like RQMNAME).";
    monitoring: MonitoringLevel = "MONQ", Keyword { values: MonitoringLevel::KEYWORDS }, default MonitoringLevel::QMgr,
        applies LM, inq None, rw, "Online monitoring of the queue (DISPLAY QSTATUS MSGAGE, LPUTDATE/LPUTTIME, LGETDATE/LGETTIME): QMGR follows the queue manager's MONQ, OFF leaves them blank, LOW, MEDIUM or HIGH show them unless the queue manager's MONQ is NONE.";
    statistics: QueueStatistics = "STATQ", Keyword { values: QueueStatistics::KEYWORDS }, default QueueStatistics::QMgr,
        applies LM, inq None, rw, "Statistics messages for the queue (QMGR: as the queue manager's STATQ): its group in the MQCMD_STATISTICS_Q message on SYSTEM.ADMIN.STATISTICS.QUEUE. The queue's STATQ publications on $SYS topics do not depend on it, as in MQ.";
    np_msg_class: NonPersistentClass = "NPMCLASS", Keyword { values: NonPersistentClass::KEYWORDS }, default NonPersistentClass::Normal,
        applies LM, inq None, rw, "HIGH keeps non-persistent messages over a clean restart.";
    depth_high: i32 = "QDEPTHHI", Int { min: 0, max: 100 }, default 80,
        applies LM, inq None, rw, "Queue depth high event threshold, percent of MAXDEPTH.";
    depth_low: i32 = "QDEPTHLO", Int { min: 0, max: 100 }, default 20,
        applies LM, inq None, rw, "Queue depth low event threshold, percent of MAXDEPTH.";
    trigger: bool = "TRIGGER", Flag { on: "TRIGGER", off: "NOTRIGGER" }, default false,
        applies LM, inq Some(sel::TRIGGER_CONTROL), rw, "Whether trigger messages are made (TRIGTYPE(DEPTH) turns it off when it triggers).";
    trigger_type: TriggerType = "TRIGTYPE", Keyword { values: TriggerType::KEYWORDS }, default TriggerType::First,
        applies LM, inq Some(sel::TRIGGER_TYPE), rw, "When a trigger message is made.";
    trigger_depth: i32 = "TRIGDPTH", Int { min: 1, max: 999_999_999 }, default 1,
        applies LM, inq Some(sel::TRIGGER_DEPTH), rw, "Depth that triggers with TRIGTYPE(DEPTH).";
    trigger_msg_priority: i32 = "TRIGMPRI", Int { min: 0, max: 9 }, default 0,
        applies LM, inq Some(sel::TRIGGER_MSG_PRIORITY), rw, "Lowest priority that counts for triggering.";
    initiation_q: String = "INITQ", Name { max_len: 48 }, default String::new(),
        applies LM, inq Some(sel::INITIATION_Q_NAME), rw, "Initiation queue trigger messages for this queue go to (a local queue a trigger monitor or the channel initiator reads).";
    process: String = "PROCESS", Name { max_len: 48 }, default String::new(),
        applies LM, inq Some(sel::PROCESS_NAME), rw, "Process definition trigger messages name (may be blank on a transmission queue).";
    trigger_data: String = "TRIGDATA", Text { max_len: 64 }, default String::new(),
        applies LM, inq Some(sel::TRIGGER_DATA), rw, "Data passed in trigger messages (a transmission queue's: the channel the channel initiator starts).";
    property_control: PropertyControl = "PROPCTL", Keyword { values: PropertyControl::KEYWORDS }, default PropertyControl::Compat,
        applies ALL, inq None, rw, "How message properties reach applications.";
    retention_interval: i32 = "RETINTVL", Int { min: 0, max: 999_999_999 }, default 999_999_999,
        applies LM, inq None, rw, "Hours the queue is needed (informational).";
    cluster: String = "CLUSTER", Name { max_len: 48 }, default String::new(),
        applies CLUSTERED, inq Some(sel::CLUSTER_NAME), rw, "The cluster the queue is advertised in (blank: none, or the clusters CLUSNL names).";
    cluster_namelist: String = "CLUSNL", Name { max_len: 48 }, default String::new(),
        applies CLUSTERED, inq Some(sel::CLUSTER_NAMELIST), rw, "A namelist of the clusters the queue is advertised in (CLUSTER must then be blank).";
    default_bind: DefaultBind = "DEFBIND", Keyword { values: DefaultBind::KEYWORDS }, default DefaultBind::Open,
        applies ALL, inq Some(sel::DEF_BIND), rw, "Binding of MQOO_BIND_AS_Q_DEF opens of a cluster queue: OPEN one instance per handle, NOTFIXED one per put, GROUP one per message group.";
    cluster_workload_rank: i32 = "CLWLRANK", Int { min: 0, max: 9 }, default 0,
        applies CLUSTERED, inq Some(sel::CLWL_Q_RANK), rw, "Cluster workload rank: instances of higher rank are chosen first.";
    cluster_workload_priority: i32 = "CLWLPRTY", Int { min: 0, max: 9 }, default 0,
        applies CLUSTERED, inq Some(sel::CLWL_Q_PRIORITY), rw, "Cluster workload priority: among reachable instances, the highest is chosen.";
    cluster_workload_use_q: QueueClusterUseQueue = "CLWLUSEQ", Keyword { values: QueueClusterUseQueue::KEYWORDS }, default QueueClusterUseQueue::QMgr,
        applies LOCAL, inq Some(sel::CLWL_USEQ), rw, "Whether puts here use this local instance of the cluster queue (QMGR: the queue manager's CLWLUSEQ).";
    custom: String = "CUSTOM", Text { max_len: 128 }, default String::new(),
        applies ALL, inq None, rw, "Attributes for features to come, as NAME(value) pairs.";
    creation_date: String = "CRDATE", Text { max_len: 10 }, default String::new(),
        applies ALL, inq None, ro, "Date the queue was defined (yyyy-mm-dd).";
    creation_time: String = "CRTIME", Text { max_len: 8 }, default String::new(),
        applies ALL, inq None, ro, "Time the queue was defined (hh.mm.ss).";
    alteration_date: String = "ALTDATE", Text { max_len: 10 }, default String::new(),
        applies ALL, inq None, ro, "Date of the last change (yyyy-mm-dd).";
    alteration_time: String = "ALTTIME", Text { max_len: 8 }, default String::new(),
        applies ALL, inq None, ro, "Time of the last change (hh.mm.ss).";
}

/// MAXFSIZE(DEFAULT) in MB: MQ's largest queue file.
pub const DEFAULT_MAX_FILE_SIZE_MB: u64 = 2_088_960;

impl QueueAttributes {
    /// MAXFSIZE in bytes, DEFAULT resolved ([`DEFAULT_MAX_FILE_SIZE_MB`]).
    pub fn max_file_bytes(&self) -> u64 {
        self.max_file_size_mb() << 20
    }

    /// MAXFSIZE in MB, DEFAULT resolved: what DISPLAY QSTATUS shows as CURMAXFS.
    pub fn max_file_size_mb(&self) -> u64 {
        u64::try_from(self.max_file_size).unwrap_or(DEFAULT_MAX_FILE_SIZE_MB)
    }
}

/// A queue: its name, type and attributes. What DEFINE creates and restart restores.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct QueueDefinition {
    /// Queue name (MQ name rules, up to 48 characters).
    pub name: String,
    /// Local, model, alias or remote.
    pub queue_type: QueueType,
    /// Every attribute of the table.
    pub attributes: QueueAttributes,
}

impl QueueDefinition {
    /// A definition with MQ's default attributes (local queues show DEFTYPE(PREDEFINED)).
    pub fn new(name: impl Into<String>, queue_type: QueueType) -> Self {
        let mut attributes = QueueAttributes::default();
        if queue_type != QueueType::Model {
            attributes.definition_type = DefinitionType::Predefined;
        }
        QueueDefinition {
            name: name.into(),
            queue_type,
            attributes,
        }
    }
}

/// SYSTEM.CHANNEL.SYNCQ: where message channels keep their synchronization data
/// (sequence numbers, in-doubt batches), on every queue manager.
pub const CHANNEL_SYNC_QUEUE: &str = "SYSTEM.CHANNEL.SYNCQ";
/// SYSTEM.CHANNEL.INITQ: the channel initiation queue, where trigger messages that
/// start sender channels arrive, on every queue manager.
pub const CHANNEL_INITIATION_QUEUE: &str = "SYSTEM.CHANNEL.INITQ";

/// SYSTEM.DEFAULT.INITIATION.QUEUE: the initiation queue a trigger monitor reads when
/// it is given none, on every queue manager.
pub const DEFAULT_INITIATION_QUEUE: &str = "SYSTEM.DEFAULT.INITIATION.QUEUE";

/// The triggering queue every queue manager has, as MQ ships it:
/// SYSTEM.DEFAULT.INITIATION.QUEUE (a plain local queue).
pub fn shipped_trigger_queues() -> [QueueDefinition; 1] {
    let mut init = QueueDefinition::new(DEFAULT_INITIATION_QUEUE, QueueType::Local);
    init.attributes.descr = "Default initiation queue".into();
    [init]
}

/// SYSTEM.CLUSTER.TRANSMIT.QUEUE: where messages for other members of a cluster wait,
/// each with its cluster-sender channel's name in its CorrelId.
pub const CLUSTER_TRANSMIT_QUEUE: &str = "SYSTEM.CLUSTER.TRANSMIT.QUEUE";
/// SYSTEM.CLUSTER.COMMAND.QUEUE: where repository records from other members arrive.
pub const CLUSTER_COMMAND_QUEUE: &str = "SYSTEM.CLUSTER.COMMAND.QUEUE";
/// SYSTEM.CLUSTER.REPOSITORY.QUEUE: the queue manager's cluster repository, one
/// message per record.
pub const CLUSTER_REPOSITORY_QUEUE: &str = "SYSTEM.CLUSTER.REPOSITORY.QUEUE";
/// SYSTEM.CLUSTER.TRANSMIT.MODEL.QUEUE: the model of the per-channel cluster
/// transmission queues of QMGR DEFCLXQ(CHANNEL).
pub const CLUSTER_TRANSMIT_MODEL_QUEUE: &str = "SYSTEM.CLUSTER.TRANSMIT.MODEL.QUEUE";
/// The start of a per-channel cluster transmission queue's name: the channel follows.
pub const CLUSTER_TRANSMIT_PREFIX: &str = "SYSTEM.CLUSTER.TRANSMIT.";

/// The cluster queues every queue manager has, as MQ ships them:
/// SYSTEM.CLUSTER.TRANSMIT.QUEUE (USAGE(XMITQ), persistent by default, deep),
/// SYSTEM.CLUSTER.COMMAND.QUEUE and SYSTEM.CLUSTER.REPOSITORY.QUEUE (persistent by
/// default, deep), and SYSTEM.CLUSTER.TRANSMIT.MODEL.QUEUE (a permanent-dynamic,
/// USAGE(XMITQ) model, for DEFCLXQ(CHANNEL)).
pub fn shipped_cluster_queues() -> [QueueDefinition; 4] {
    let mut xmit = QueueDefinition::new(CLUSTER_TRANSMIT_QUEUE, QueueType::Local);
    xmit.attributes.usage = Usage::TransmissionQueue;
    xmit.attributes.def_persistence = YesNo::Yes;
    xmit.attributes.max_depth = 999_999_999;
    xmit.attributes.descr = "Cluster transmission queue".into();
    let mut command = QueueDefinition::new(CLUSTER_COMMAND_QUEUE, QueueType::Local);
    command.attributes.def_persistence = YesNo::Yes;
    command.attributes.max_depth = 999_999_999;
    command.attributes.descr = "Cluster command queue".into();
    let mut repository = QueueDefinition::new(CLUSTER_REPOSITORY_QUEUE, QueueType::Local);
    repository.attributes.def_persistence = YesNo::Yes;
    repository.attributes.max_depth = 999_999_999;
    repository.attributes.descr = "Cluster repository".into();
    let mut model = QueueDefinition::new(CLUSTER_TRANSMIT_MODEL_QUEUE, QueueType::Model);
    model.attributes.definition_type = DefinitionType::PermanentDynamic;
    model.attributes.usage = Usage::TransmissionQueue;
    model.attributes.def_persistence = YesNo::Yes;
    model.attributes.max_depth = 999_999_999;
    model.attributes.descr = "Model of the per-channel cluster transmission queues".into();
    [xmit, command, repository, model]
}

/// The channel queues every queue manager has, as MQ ships them on distributed
/// platforms: SYSTEM.CHANNEL.SYNCQ (persistent by default, deep, since it holds a
/// record per channel) and SYSTEM.CHANNEL.INITQ (a plain local queue). MQ's INDXTYPE of
/// the sync queue is z/OS only.
pub fn shipped_channel_queues() -> [QueueDefinition; 2] {
    let mut sync = QueueDefinition::new(CHANNEL_SYNC_QUEUE, QueueType::Local);
    sync.attributes.def_persistence = YesNo::Yes;
    sync.attributes.max_depth = 999_999_999;
    sync.attributes.descr = "Channel synchronization data".into();
    let mut init = QueueDefinition::new(CHANNEL_INITIATION_QUEUE, QueueType::Local);
    init.attributes.descr = "Channel initiation queue".into();
    [sync, init]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AttrValue, AttributeSet};

    #[test]
    fn defaults_come_from_the_table() {
        let d = QueueAttributes::default();
        assert_eq!(d.max_depth, 5000);
        assert_eq!(d.max_msg_length, 4_194_304);
        for row in QUEUE_ATTRIBUTES {
            assert_eq!((row.get)(&d), (row.default)(), "{}", row.keyword);
        }
    }

    #[test]
    fn lookup_finds_flags_and_keywords() {
        let (row, flag) = QueueAttributes::lookup("noshare").unwrap();
        assert_eq!(row.keyword, "SHARE");
        assert_eq!(flag, Some(false));
        let (row, flag) = QueueAttributes::lookup("MAXDEPTH").unwrap();
        assert_eq!(row.keyword, "MAXDEPTH");
        assert_eq!(flag, None);
        assert!(QueueAttributes::lookup("NOSUCH").is_none());
    }

    #[test]
    fn check_enforces_ranges_and_keywords() {
        let (row, _) = QueueAttributes::lookup("DEFPRTY").unwrap();
        assert!(row.check(AttrValue::Int(10)).is_err());
        assert_eq!(row.check(AttrValue::Int(9)), Ok(AttrValue::Int(9)));
        let (row, _) = QueueAttributes::lookup("PUT").unwrap();
        assert_eq!(
            row.check(AttrValue::Text("disabled".into())),
            Ok(AttrValue::Keyword("DISABLED"))
        );
        assert!(row.check(AttrValue::Text("MAYBE".into())).is_err());
        let (row, _) = QueueAttributes::lookup("BOQNAME").unwrap();
        assert!(row.check(AttrValue::Text("BAD NAME".into())).is_err());
    }

    #[test]
    fn set_writes_the_typed_field() {
        let mut d = QueueAttributes::default();
        let (row, _) = QueueAttributes::lookup("MSGDLVSQ").unwrap();
        let v = row.check(AttrValue::Text("FIFO".into())).unwrap();
        (row.set)(&mut d, v);
        assert_eq!(d.msg_delivery_sequence, MsgDeliverySequence::Fifo);
    }

    #[test]
    fn keywords_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for row in QUEUE_ATTRIBUTES {
            assert!(seen.insert(row.keyword), "{}", row.keyword);
        }
    }

    #[test]
    fn definitions_round_trip_through_json() {
        let d = QueueDefinition::new("APP.Q", QueueType::Local);
        let s = serde_json::to_string(&d).unwrap();
        assert_eq!(serde_json::from_str::<QueueDefinition>(&s).unwrap(), d);
    }
}
