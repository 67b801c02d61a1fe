//! The one table of what Ferry monitors: MQ's resource-monitoring classes, their types
//! and their elements, with MQ's names, ids, descriptions and datatypes, the value each
//! element is read from ([`Stat`]) and the Prometheus metric name mq-metric-samples
//! derives from the description. The METADATA publications, `ferry monitor`'s output
//! and the Prometheus exposition are all made from [`CLASSES`].
//!
//! Class, type and element ids are MQ's (as MQ 9.x queue managers advertise them in
//! their METADATA). Only elements whose values Ferry really measures are listed, so some
//! of MQ's ids are missing; a monitor reads the ids from the METADATA, as amqsrua does.
//! The element "open input count"/"open output count" ids of STATQ GENERAL (4, 5) are
//! Ferry's: MQ added those elements late and its ids for them were not checked.

use crate::counters::{MqiCounters, QueueCounters};

/// How an element's integer value reads (MQIAMO_MONITOR_* datatypes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Datatype {
    /// MQIAMO_MONITOR_UNIT (1): a plain value (a gauge).
    Unit,
    /// MQIAMO_MONITOR_DELTA (2): the change over the interval (a counter).
    Delta,
    /// MQIAMO_MONITOR_HUNDREDTHS (100): hundredths.
    Hundredths,
    /// MQIAMO_MONITOR_KB (1024): kilobytes.
    Kb,
    /// MQIAMO_MONITOR_PERCENT (10000): hundredths of a percent.
    Percent,
    /// MQIAMO_MONITOR_MICROSEC (1000000): microseconds.
    Microsec,
    /// MQIAMO_MONITOR_MB (1048576): megabytes.
    Mb,
    /// MQIAMO_MONITOR_GB (100000000): gigabytes.
    Gb,
}

impl Datatype {
    /// MQ's number for the datatype (MQIAMO_MONITOR_DATATYPE's value).
    pub fn code(self) -> i32 {
        match self {
            Datatype::Unit => 1,
            Datatype::Delta => 2,
            Datatype::Hundredths => 100,
            Datatype::Kb => 1024,
            Datatype::Percent => 10000,
            Datatype::Microsec => 1_000_000,
            Datatype::Mb => 1_048_576,
            Datatype::Gb => 100_000_000,
        }
    }

    /// The datatype of MQ's number `code`.
    pub fn from_code(code: i32) -> Option<Self> {
        [
            Datatype::Unit,
            Datatype::Delta,
            Datatype::Hundredths,
            Datatype::Kb,
            Datatype::Percent,
            Datatype::Microsec,
            Datatype::Mb,
            Datatype::Gb,
        ]
        .into_iter()
        .find(|d| d.code() == code)
    }

    /// The factor from a published integer to the Prometheus unit (bytes, seconds,
    /// percent 0-100), as mq-metric-samples normalises.
    pub fn prometheus_scale(self) -> f64 {
        match self {
            Datatype::Unit | Datatype::Delta => 1.0,
            Datatype::Hundredths | Datatype::Percent => 0.01,
            Datatype::Kb => 1024.0,
            Datatype::Microsec => 1e-6,
            Datatype::Mb => 1_048_576.0,
            Datatype::Gb => 1_073_741_824.0,
        }
    }
}

/// Where an element's value comes from.
#[derive(Clone, Copy, Debug)]
pub enum Stat {
    /// A queue-manager-wide MQI counter (cumulative; its interval change is published).
    Mqi(fn(&MqiCounters) -> u64),
    /// A per-queue counter (cumulative).
    Queue(fn(&QueueCounters) -> u64),
    /// A measured value of the host or queue manager ([`ResourceSample`]).
    Resource(fn(&ResourceSample) -> Option<i64>),
    /// A per-queue value read from the queue's state ([`QueueSample`]).
    QueueState(fn(&QueueSample) -> Option<i64>),
    /// STATQ's average queue time: microseconds per destructive get over the interval.
    AverageQueueTime,
}

/// Host and queue manager measurements at one moment (None: not measured here).
/// Percentages are in hundredths of a percent, loads in hundredths, as MQ publishes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResourceSample {
    /// Host user CPU time over the interval, hundredths of a percent of all CPUs.
    pub system_user_cpu: Option<i64>,
    /// Host system CPU time over the interval.
    pub system_system_cpu: Option<i64>,
    /// Load average, one minute, hundredths.
    pub load_1: Option<i64>,
    /// Load average, five minutes.
    pub load_5: Option<i64>,
    /// Load average, fifteen minutes.
    pub load_15: Option<i64>,
    /// Host RAM free, hundredths of a percent.
    pub ram_free: Option<i64>,
    /// Host RAM, MB.
    pub ram_total_mb: Option<i64>,
    /// The queue manager process's user CPU time over the interval, hundredths of a
    /// percent of all CPUs.
    pub qmgr_user_cpu: Option<i64>,
    /// The queue manager's system CPU time over the interval.
    pub qmgr_system_cpu: Option<i64>,
    /// The queue manager process's resident memory, MB.
    pub qmgr_ram_mb: Option<i64>,
    /// The queue manager's data file system: bytes in use, MB.
    pub data_fs_in_use_mb: Option<i64>,
    /// The data file system's free space, hundredths of a percent.
    pub data_fs_free: Option<i64>,
    /// Bytes written to the recovery log since the start (cumulative).
    pub log_written_bytes: Option<i64>,
    /// The recovery log's share in use, hundredths of a percent (LOGINUSE).
    pub log_in_use: Option<i64>,
    /// Bytes of the recovery log in use (between the restart point and the head).
    pub log_in_use_bytes: Option<i64>,
    /// Bytes of the recovery log (its extents).
    pub log_max_bytes: Option<i64>,
    /// The log's file system: bytes in use.
    pub log_fs_in_use_bytes: Option<i64>,
    /// The log's file system: size in bytes.
    pub log_fs_max_bytes: Option<i64>,
}

/// CPU times as the host reports them (Linux's /proc, read by the server), from which
/// the CPU percentages of an interval are worked out.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuTimes {
    /// The process's user CPU, clock ticks.
    pub proc_user: u64,
    /// The process's system CPU, clock ticks.
    pub proc_system: u64,
    /// The host's user (and nice) ticks, all CPUs.
    pub host_user: u64,
    /// The host's system (and irq, softirq) ticks.
    pub host_system: u64,
    /// The host's total ticks.
    pub host_total: u64,
    /// When they were read.
    pub at: Option<std::time::Instant>,
}

/// One queue's state and counters at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueSample {
    /// Its counters.
    pub counters: QueueCounters,
    /// CURDEPTH.
    pub depth: u64,
    /// IPPROCS.
    pub open_input: u32,
    /// OPPROCS.
    pub open_output: u32,
}

/// One element of a type: one value in each of its publications.
#[derive(Clone, Copy, Debug)]
pub struct Element {
    /// MQIAMO_MONITOR_ELEMENT: the element's id, also its parameter id in the data.
    pub id: i32,
    /// MQIAMO_MONITOR_DATATYPE.
    pub datatype: Datatype,
    /// MQCAMO_MONITOR_DESC: MQ's description.
    pub description: &'static str,
    /// The Prometheus metric name after `ibmmq_qmgr_` or `ibmmq_queue_`, as
    /// mq-metric-samples derives it from the description.
    pub metric: &'static str,
    /// Where the value comes from.
    pub stat: Stat,
}

/// One type of a class: one publication per interval (per object for STATQ).
#[derive(Clone, Copy, Debug)]
pub struct MonitorType {
    /// MQIAMO_MONITOR_TYPE.
    pub id: i32,
    /// MQCAMO_MONITOR_TYPE: its name in topic strings.
    pub name: &'static str,
    /// MQCAMO_MONITOR_DESC.
    pub description: &'static str,
    /// Its elements.
    pub elements: &'static [Element],
}

/// One class.
#[derive(Clone, Copy, Debug)]
pub struct MonitorClass {
    /// MQIAMO_MONITOR_CLASS.
    pub id: i32,
    /// MQCAMO_MONITOR_CLASS: its name in topic strings.
    pub name: &'static str,
    /// MQCAMO_MONITOR_DESC.
    pub description: &'static str,
    /// MQIAMO_MONITOR_FLAGS_OBJNAME: its publications are per object (a queue).
    pub per_object: bool,
    /// Its types.
    pub types: &'static [MonitorType],
}

impl MonitorClass {
    /// The type named `name` (as MQ names them: case matters).
    pub fn find_type(&self, name: &str) -> Option<&'static MonitorType> {
        self.types.iter().find(|t| t.name == name)
    }
}

/// The class named `name`.
pub fn find_class(name: &str) -> Option<&'static MonitorClass> {
    CLASSES.iter().find(|c| c.name == name)
}

macro_rules! e {
    ($id:expr, $dt:ident, $desc:expr, $metric:expr, $stat:expr) => {
        Element {
            id: $id,
            datatype: Datatype::$dt,
            description: $desc,
            metric: $metric,
            stat: $stat,
        }
    };
}

macro_rules! mqi {
    ($f:expr) => {
        Stat::Mqi($f)
    };
}

macro_rules! res {
    ($field:ident) => {
        Stat::Resource(|r| r.$field)
    };
}

/// Every class Ferry publishes, in MQ's order and with MQ's ids.
pub static CLASSES: &[MonitorClass] = &[
    MonitorClass {
        id: 0,
        name: "CPU",
        description: "Platform central processing units",
        per_object: false,
        types: &[
            MonitorType {
                id: 0,
                name: "SystemSummary",
                description: "CPU performance - platform wide",
                elements: &[
                    e!(
                        0,
                        Percent,
                        "User CPU time percentage",
                        "user_cpu_time_percentage",
                        res!(system_user_cpu)
                    ),
                    e!(
                        1,
                        Percent,
                        "System CPU time percentage",
                        "system_cpu_time_percentage",
                        res!(system_system_cpu)
                    ),
                    e!(
                        2,
                        Hundredths,
                        "CPU load - one minute average",
                        "cpu_load_one_minute_average_percentage",
                        res!(load_1)
                    ),
                    e!(
                        3,
                        Hundredths,
                        "CPU load - five minute average",
                        "cpu_load_five_minute_average_percentage",
                        res!(load_5)
                    ),
                    e!(
                        4,
                        Hundredths,
                        "CPU load - fifteen minute average",
                        "cpu_load_fifteen_minute_average_percentage",
                        res!(load_15)
                    ),
                    e!(
                        5,
                        Percent,
                        "RAM free percentage",
                        "ram_free_percentage",
                        res!(ram_free)
                    ),
                    e!(
                        6,
                        Mb,
                        "RAM total bytes",
                        "ram_total_bytes",
                        res!(ram_total_mb)
                    ),
                ],
            },
            MonitorType {
                id: 1,
                name: "QMgrSummary",
                description: "CPU performance - running queue manager",
                elements: &[
                    e!(
                        0,
                        Percent,
                        "User CPU time - percentage estimate for queue manager",
                        "user_cpu_time_estimate_for_queue_manager_percentage",
                        res!(qmgr_user_cpu)
                    ),
                    e!(
                        1,
                        Percent,
                        "System CPU time - percentage estimate for queue manager",
                        "system_cpu_time_estimate_for_queue_manager_percentage",
                        res!(qmgr_system_cpu)
                    ),
                    e!(
                        2,
                        Mb,
                        "RAM total bytes - estimate for queue manager",
                        "ram_total_estimate_for_queue_manager_bytes",
                        res!(qmgr_ram_mb)
                    ),
                ],
            },
        ],
    },
    MonitorClass {
        id: 1,
        name: "DISK",
        description: "Platform persistent data stores",
        per_object: false,
        types: &[
            MonitorType {
                id: 1,
                name: "QMgrSummary",
                description: "Disk usage - running queue managers",
                elements: &[
                    e!(
                        0,
                        Mb,
                        "Queue Manager file system - bytes in use",
                        "queue_manager_file_system_in_use_bytes",
                        res!(data_fs_in_use_mb)
                    ),
                    e!(
                        1,
                        Percent,
                        "Queue Manager file system - free space",
                        "queue_manager_file_system_free_space_percentage",
                        res!(data_fs_free)
                    ),
                ],
            },
            MonitorType {
                id: 2,
                name: "Log",
                description: "Disk usage - queue manager recovery log",
                elements: &[
                    e!(
                        0,
                        Unit,
                        "Log - bytes in use",
                        "log_in_use_bytes",
                        res!(log_in_use_bytes)
                    ),
                    e!(
                        1,
                        Unit,
                        "Log - bytes max",
                        "log_max_bytes",
                        res!(log_max_bytes)
                    ),
                    e!(
                        2,
                        Unit,
                        "Log file system - bytes in use",
                        "log_file_system_in_use_bytes",
                        res!(log_fs_in_use_bytes)
                    ),
                    e!(
                        3,
                        Unit,
                        "Log file system - bytes max",
                        "log_file_system_max_bytes",
                        res!(log_fs_max_bytes)
                    ),
                    e!(
                        4,
                        Delta,
                        "Log - physical bytes written",
                        "log_physical_written_bytes",
                        res!(log_written_bytes)
                    ),
                    e!(
                        7,
                        Percent,
                        "Log - current primary space in use",
                        "log_current_primary_space_in_use_percentage",
                        res!(log_in_use)
                    ),
                ],
            },
        ],
    },
    MonitorClass {
        id: 2,
        name: "STATMQI",
        description: "API usage statistics",
        per_object: false,
        types: &[
            MonitorType {
                id: 0,
                name: "CONNDISC",
                description: "MQCONN and MQDISC",
                elements: &[
                    e!(
                        0,
                        Delta,
                        "MQCONN/MQCONNX count",
                        "mqconn_mqconnx_count",
                        mqi!(|m| m.conns)
                    ),
                    e!(
                        1,
                        Delta,
                        "Failed MQCONN/MQCONNX count",
                        "failed_mqconn_mqconnx_count",
                        mqi!(|m| m.conns_failed)
                    ),
                    e!(3, Delta, "MQDISC count", "mqdisc_count", mqi!(|m| m.discs)),
                ],
            },
            MonitorType {
                id: 1,
                name: "OPENCLOSE",
                description: "MQOPEN and MQCLOSE",
                elements: &[
                    e!(0, Delta, "MQOPEN count", "mqopen_count", mqi!(|m| m.opens)),
                    e!(
                        1,
                        Delta,
                        "Failed MQOPEN count",
                        "failed_mqopen_count",
                        mqi!(|m| m.opens_failed)
                    ),
                    e!(
                        2,
                        Delta,
                        "MQCLOSE count",
                        "mqclose_count",
                        mqi!(|m| m.closes)
                    ),
                    e!(
                        3,
                        Delta,
                        "Failed MQCLOSE count",
                        "failed_mqclose_count",
                        mqi!(|m| m.closes_failed)
                    ),
                ],
            },
            MonitorType {
                id: 2,
                name: "INQSET",
                description: "MQINQ and MQSET",
                elements: &[
                    e!(0, Delta, "MQINQ count", "mqinq_count", mqi!(|m| m.inqs)),
                    e!(
                        1,
                        Delta,
                        "Failed MQINQ count",
                        "failed_mqinq_count",
                        mqi!(|m| m.inqs_failed)
                    ),
                    e!(2, Delta, "MQSET count", "mqset_count", mqi!(|m| m.sets)),
                    e!(
                        3,
                        Delta,
                        "Failed MQSET count",
                        "failed_mqset_count",
                        mqi!(|m| m.sets_failed)
                    ),
                ],
            },
            MonitorType {
                id: 3,
                name: "PUT",
                description: "MQPUT",
                elements: &[
                    e!(
                        0,
                        Delta,
                        "Interval total MQPUT/MQPUT1 count",
                        "interval_mqput_mqput1_total_count",
                        mqi!(MqiCounters::put_count)
                    ),
                    e!(
                        1,
                        Delta,
                        "Interval total MQPUT/MQPUT1 byte count",
                        "interval_mqput_mqput1_total_bytes",
                        mqi!(MqiCounters::put_bytes)
                    ),
                    e!(
                        2,
                        Delta,
                        "Non-persistent message MQPUT count",
                        "non_persistent_message_mqput_count",
                        mqi!(|m| m.puts_non_persistent)
                    ),
                    e!(
                        3,
                        Delta,
                        "Persistent message MQPUT count",
                        "persistent_message_mqput_count",
                        mqi!(|m| m.puts_persistent)
                    ),
                    e!(
                        4,
                        Delta,
                        "Failed MQPUT count",
                        "failed_mqput_count",
                        mqi!(|m| m.puts_failed)
                    ),
                    e!(
                        5,
                        Delta,
                        "Non-persistent message MQPUT1 count",
                        "non_persistent_message_mqput1_count",
                        mqi!(|m| m.put1s_non_persistent)
                    ),
                    e!(
                        6,
                        Delta,
                        "Persistent message MQPUT1 count",
                        "persistent_message_mqput1_count",
                        mqi!(|m| m.put1s_persistent)
                    ),
                    e!(
                        7,
                        Delta,
                        "Failed MQPUT1 count",
                        "failed_mqput1_count",
                        mqi!(|m| m.put1s_failed)
                    ),
                    e!(
                        8,
                        Delta,
                        "Put non-persistent messages - byte count",
                        "put_non_persistent_messages_bytes",
                        mqi!(|m| m.put_bytes_non_persistent)
                    ),
                    e!(
                        9,
                        Delta,
                        "Put persistent messages - byte count",
                        "put_persistent_messages_bytes",
                        mqi!(|m| m.put_bytes_persistent)
                    ),
                ],
            },
            MonitorType {
                id: 4,
                name: "GET",
                description: "MQGET",
                elements: &[
                    e!(
                        0,
                        Delta,
                        "Interval total destructive get- count",
                        "interval_destructive_get_total_count",
                        mqi!(MqiCounters::get_count)
                    ),
                    e!(
                        1,
                        Delta,
                        "Interval total destructive get - byte count",
                        "interval_destructive_get_total_bytes",
                        mqi!(MqiCounters::get_bytes)
                    ),
                    e!(
                        2,
                        Delta,
                        "Non-persistent message destructive get - count",
                        "non_persistent_message_destructive_get_count",
                        mqi!(|m| m.gets_non_persistent)
                    ),
                    e!(
                        3,
                        Delta,
                        "Persistent message destructive get - count",
                        "persistent_message_destructive_get_count",
                        mqi!(|m| m.gets_persistent)
                    ),
                    e!(
                        4,
                        Delta,
                        "Failed MQGET - count",
                        "failed_mqget_count",
                        mqi!(|m| m.gets_failed)
                    ),
                    e!(
                        5,
                        Delta,
                        "Got non-persistent messages - byte count",
                        "got_non_persistent_messages_bytes",
                        mqi!(|m| m.get_bytes_non_persistent)
                    ),
                    e!(
                        6,
                        Delta,
                        "Got persistent messages - byte count",
                        "got_persistent_messages_bytes",
                        mqi!(|m| m.get_bytes_persistent)
                    ),
                    e!(
                        7,
                        Delta,
                        "Non-persistent message browse - count",
                        "non_persistent_message_browse_count",
                        mqi!(|m| m.browses_non_persistent)
                    ),
                    e!(
                        8,
                        Delta,
                        "Persistent message browse - count",
                        "persistent_message_browse_count",
                        mqi!(|m| m.browses_persistent)
                    ),
                    e!(
                        9,
                        Delta,
                        "Failed browse count",
                        "failed_browse_count",
                        mqi!(|m| m.browses_failed)
                    ),
                    e!(
                        10,
                        Delta,
                        "Non-persistent message browse - byte count",
                        "non_persistent_message_browse_bytes",
                        mqi!(|m| m.browse_bytes_non_persistent)
                    ),
                    e!(
                        11,
                        Delta,
                        "Persistent message browse - byte count",
                        "persistent_message_browse_bytes",
                        mqi!(|m| m.browse_bytes_persistent)
                    ),
                ],
            },
            MonitorType {
                id: 5,
                name: "SYNCPOINT",
                description: "Commit and rollback",
                elements: &[
                    e!(
                        0,
                        Delta,
                        "Commit count",
                        "commit_count",
                        mqi!(|m| m.commits)
                    ),
                    e!(
                        2,
                        Delta,
                        "Rollback count",
                        "rollback_count",
                        mqi!(|m| m.backouts)
                    ),
                ],
            },
            MonitorType {
                id: 6,
                name: "SUBSCRIBE",
                description: "Subscribe",
                elements: &[
                    e!(
                        0,
                        Delta,
                        "Create durable subscription count",
                        "create_durable_subscription_count",
                        mqi!(|m| m.subs_created_durable)
                    ),
                    e!(
                        1,
                        Delta,
                        "Alter durable subscription count",
                        "alter_durable_subscription_count",
                        mqi!(|m| m.subs_altered_durable)
                    ),
                    e!(
                        2,
                        Delta,
                        "Resume durable subscription count",
                        "resume_durable_subscription_count",
                        mqi!(|m| m.subs_resumed_durable)
                    ),
                    e!(
                        3,
                        Delta,
                        "Create non-durable subscription count",
                        "create_non_durable_subscription_count",
                        mqi!(|m| m.subs_created_non_durable)
                    ),
                    e!(
                        6,
                        Delta,
                        "Failed create/alter/resume subscription count",
                        "failed_create_alter_resume_subscription_count",
                        mqi!(|m| m.subs_failed)
                    ),
                ],
            },
            MonitorType {
                id: 7,
                name: "PUBLISH",
                description: "Publish",
                elements: &[
                    e!(
                        0,
                        Delta,
                        "Topic MQPUT/MQPUT1 interval total",
                        "topic_mqput_mqput1_interval_total",
                        mqi!(MqiCounters::topic_put_count)
                    ),
                    e!(
                        1,
                        Delta,
                        "Interval total topic bytes put",
                        "interval_topic_put_total",
                        mqi!(|m| m.topic_put_bytes)
                    ),
                    e!(
                        2,
                        Delta,
                        "Published to subscribers - message count",
                        "published_to_subscribers_message_count",
                        mqi!(|m| m.published_messages)
                    ),
                    e!(
                        3,
                        Delta,
                        "Published to subscribers - byte count",
                        "published_to_subscribers_bytes",
                        mqi!(|m| m.published_bytes)
                    ),
                    e!(
                        4,
                        Delta,
                        "Non-persistent - topic MQPUT/MQPUT1 count",
                        "non_persistent_topic_mqput_mqput1_count",
                        mqi!(|m| m.topic_puts_non_persistent)
                    ),
                    e!(
                        5,
                        Delta,
                        "Persistent - topic MQPUT/MQPUT1 count",
                        "persistent_topic_mqput_mqput1_count",
                        mqi!(|m| m.topic_puts_persistent)
                    ),
                    e!(
                        6,
                        Delta,
                        "Failed topic MQPUT/MQPUT1 count",
                        "failed_topic_mqput_mqput1_count",
                        mqi!(|m| m.topic_puts_failed)
                    ),
                ],
            },
        ],
    },
    MonitorClass {
        id: 3,
        name: "STATQ",
        description: "API per-queue usage statistics",
        per_object: true,
        types: &[
            MonitorType {
                id: 0,
                name: "OPENCLOSE",
                description: "MQOPEN and MQCLOSE",
                elements: &[
                    e!(
                        0,
                        Delta,
                        "MQOPEN count",
                        "mqopen_count",
                        Stat::Queue(|q| q.opens)
                    ),
                    e!(
                        1,
                        Delta,
                        "MQCLOSE count",
                        "mqclose_count",
                        Stat::Queue(|q| q.closes)
                    ),
                ],
            },
            MonitorType {
                id: 2,
                name: "PUT",
                description: "MQPUT and MQPUT1",
                elements: &[
                    e!(
                        0,
                        Delta,
                        "MQPUT/MQPUT1 count",
                        "mqput_mqput1_count",
                        Stat::Queue(QueueCounters::put_count)
                    ),
                    e!(
                        1,
                        Delta,
                        "MQPUT byte count",
                        "mqput_bytes",
                        Stat::Queue(QueueCounters::put_bytes)
                    ),
                    e!(
                        2,
                        Delta,
                        "MQPUT non-persistent message count",
                        "mqput_non_persistent_message_count",
                        Stat::Queue(|q| q.puts_non_persistent)
                    ),
                    e!(
                        3,
                        Delta,
                        "MQPUT persistent message count",
                        "mqput_persistent_message_count",
                        Stat::Queue(|q| q.puts_persistent)
                    ),
                    e!(
                        4,
                        Delta,
                        "MQPUT1 non-persistent message count",
                        "mqput1_non_persistent_message_count",
                        Stat::Queue(|q| q.put1s_non_persistent)
                    ),
                    e!(
                        5,
                        Delta,
                        "MQPUT1 persistent message count",
                        "mqput1_persistent_message_count",
                        Stat::Queue(|q| q.put1s_persistent)
                    ),
                    e!(
                        6,
                        Delta,
                        "non-persistent byte count",
                        "non_persistent_bytes",
                        Stat::Queue(|q| q.put_bytes_non_persistent)
                    ),
                    e!(
                        7,
                        Delta,
                        "persistent byte count",
                        "persistent_bytes",
                        Stat::Queue(|q| q.put_bytes_persistent)
                    ),
                ],
            },
            MonitorType {
                id: 3,
                name: "GET",
                description: "MQGET",
                elements: &[
                    e!(
                        0,
                        Delta,
                        "MQGET count",
                        "mqget_count",
                        Stat::Queue(QueueCounters::get_count)
                    ),
                    e!(
                        1,
                        Delta,
                        "MQGET byte count",
                        "mqget_bytes",
                        Stat::Queue(QueueCounters::get_bytes)
                    ),
                    e!(
                        2,
                        Delta,
                        "destructive MQGET non-persistent message count",
                        "destructive_mqget_non_persistent_message_count",
                        Stat::Queue(|q| q.gets_non_persistent)
                    ),
                    e!(
                        3,
                        Delta,
                        "destructive MQGET persistent message count",
                        "destructive_mqget_persistent_message_count",
                        Stat::Queue(|q| q.gets_persistent)
                    ),
                    e!(
                        4,
                        Delta,
                        "destructive MQGET non-persistent byte count",
                        "destructive_mqget_non_persistent_bytes",
                        Stat::Queue(|q| q.get_bytes_non_persistent)
                    ),
                    e!(
                        5,
                        Delta,
                        "destructive MQGET persistent byte count",
                        "destructive_mqget_persistent_bytes",
                        Stat::Queue(|q| q.get_bytes_persistent)
                    ),
                ],
            },
            MonitorType {
                id: 4,
                name: "GENERAL",
                description: "General queue metrics",
                elements: &[
                    e!(
                        2,
                        Microsec,
                        "average queue time",
                        "average_queue_time_seconds",
                        Stat::AverageQueueTime
                    ),
                    e!(
                        3,
                        Unit,
                        "Queue depth",
                        "queue_depth",
                        Stat::QueueState(|q| i64::try_from(q.depth).ok())
                    ),
                    e!(
                        4,
                        Unit,
                        "open input count",
                        "input_handles",
                        Stat::QueueState(|q| Some(i64::from(q.open_input)))
                    ),
                    e!(
                        5,
                        Unit,
                        "open output count",
                        "output_handles",
                        Stat::QueueState(|q| Some(i64::from(q.open_output)))
                    ),
                ],
            },
        ],
    },
];

/// Microseconds per get of `ms` milliseconds over `gets` gets (0 without gets).
fn per_get_us(ms: u64, gets: u64) -> i64 {
    ms.saturating_mul(1000)
        .checked_div(gets)
        .map_or(0, |us| i64::try_from(us).unwrap_or(i64::MAX))
}

/// The value element `e` publishes for an interval that ended with `cur` and began with
/// `prev`: the change for [`Datatype::Delta`] elements, the value at its end otherwise.
/// `None` when it is not measured here.
pub fn interval_value(
    e: &Element,
    cur: (&MqiCounters, &ResourceSample, Option<&QueueSample>),
    prev: (&MqiCounters, &ResourceSample, Option<&QueueSample>),
) -> Option<i64> {
    let read = |s: (&MqiCounters, &ResourceSample, Option<&QueueSample>)| -> Option<i64> {
        match e.stat {
            Stat::Mqi(f) => i64::try_from(f(s.0)).ok(),
            Stat::Resource(f) => f(s.1),
            Stat::Queue(f) => s.2.and_then(|q| i64::try_from(f(&q.counters)).ok()),
            Stat::QueueState(f) => s.2.and_then(f),
            Stat::AverageQueueTime => None,
        }
    };
    if let Stat::AverageQueueTime = e.stat {
        let (c, p) = (cur.2?, prev.2.copied().unwrap_or_default());
        let gets = c
            .counters
            .get_count()
            .saturating_sub(p.counters.get_count());
        let ms = c
            .counters
            .queue_time_ms
            .saturating_sub(p.counters.queue_time_ms);
        return Some(per_get_us(ms, gets));
    }
    let now = read(cur)?;
    if e.datatype == Datatype::Delta {
        Some(now.saturating_sub(read(prev).unwrap_or(0)).max(0))
    } else {
        Some(now)
    }
}

/// The value element `e` has over the queue manager's life (counters as they stand,
/// other values as they are now), in the element's own unit; for Prometheus.
pub fn lifetime_value(
    e: &Element,
    mqi: &MqiCounters,
    res: &ResourceSample,
    queue: Option<&QueueSample>,
) -> Option<i64> {
    match e.stat {
        Stat::Mqi(f) => i64::try_from(f(mqi)).ok(),
        Stat::Resource(f) => f(res),
        Stat::Queue(f) => queue.and_then(|q| i64::try_from(f(&q.counters)).ok()),
        Stat::QueueState(f) => queue.and_then(f),
        Stat::AverageQueueTime => {
            queue.map(|q| per_get_us(q.counters.queue_time_ms, q.counters.get_count()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn ids_and_names_are_unique_and_metrics_well_formed() {
        let mut classes = BTreeSet::new();
        for c in CLASSES {
            assert!(classes.insert(c.id), "class id {}", c.id);
            let mut types = BTreeSet::new();
            for t in c.types {
                assert!(types.insert(t.id), "{} type id {}", c.name, t.id);
                let mut ids = BTreeSet::new();
                let mut metrics = BTreeSet::new();
                for e in t.elements {
                    assert!(ids.insert(e.id), "{}/{} element {}", c.name, t.name, e.id);
                    assert!(
                        metrics.insert(e.metric),
                        "{}/{} {}",
                        c.name,
                        t.name,
                        e.metric
                    );
                    assert!(e
                        .metric
                        .chars()
                        .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_'));
                    assert!(Datatype::from_code(e.datatype.code()) == Some(e.datatype));
                }
            }
        }
        assert_eq!(find_class("STATQ").map(|c| c.per_object), Some(true));
        assert!(find_class("STATMQI")
            .and_then(|c| c.find_type("PUT"))
            .is_some());
    }

    #[test]
    fn delta_elements_publish_the_change() {
        let put = find_class("STATMQI")
            .and_then(|c| c.find_type("PUT"))
            .map(|t| &t.elements[0])
            .expect("STATMQI PUT");
        let mut before = MqiCounters::default();
        before.note_put(false, false, 10);
        let mut after = before;
        after.note_put(false, true, 10);
        after.note_put(true, false, 10);
        let r = ResourceSample::default();
        assert_eq!(
            interval_value(put, (&after, &r, None), (&before, &r, None)),
            Some(2)
        );
        assert_eq!(lifetime_value(put, &after, &r, None), Some(3));
        let cpu = &CLASSES[0].types[0].elements[0];
        assert_eq!(
            interval_value(cpu, (&after, &r, None), (&before, &r, None)),
            None
        );
    }

    #[test]
    fn average_queue_time_is_per_get_over_the_interval() {
        let general = find_class("STATQ")
            .and_then(|c| c.find_type("GENERAL"))
            .expect("GENERAL");
        let avg = &general.elements[0];
        let mut q0 = QueueSample::default();
        q0.counters.note_get(false, 1, 100);
        let mut q1 = q0;
        q1.counters.note_get(false, 1, 300);
        q1.counters.note_get(false, 1, 500);
        let (m, r) = (MqiCounters::default(), ResourceSample::default());
        assert_eq!(
            interval_value(avg, (&m, &r, Some(&q1)), (&m, &r, Some(&q0))),
            Some(400_000)
        );
    }
}

/// Line opening the generated table of docs/operations.md's Monitoring section.
pub const BEGIN_MARKER: &str = "<!-- BEGIN GENERATED MONITORING: do not edit; FERRY_BLESS=1 cargo test -p ferry-monitoring docs rewrites it -->";
/// Line closing it.
pub const END_MARKER: &str = "<!-- END GENERATED MONITORING -->";

/// The docs' table of every element: class, type, id, MQ's description, datatype and
/// the Prometheus metric it becomes (counter for DELTA elements, gauge otherwise).
pub fn render_doc_table() -> String {
    use std::fmt::Write;
    let mut s = String::from(
        "| class / type | id | description (MQCAMO_MONITOR_DESC) | datatype | Prometheus metric |\n|---|---|---|---|---|\n",
    );
    for c in CLASSES {
        for t in c.types {
            for e in t.elements {
                let name = if c.per_object {
                    crate::prometheus::queue_metric_name(e.metric)
                } else {
                    format!("ibmmq_qmgr_{}", e.metric)
                };
                let kind = if e.datatype == Datatype::Delta {
                    "counter"
                } else {
                    "gauge"
                };
                let _ = writeln!(
                    s,
                    "| {}/{} | {} | {} | {:?} | `{name}` ({kind}) |",
                    c.name, t.name, e.id, e.description, e.datatype
                );
            }
        }
    }
    s
}

#[cfg(test)]
mod docs {
    use super::*;

    /// `doc` with the text between the markers replaced by `table`.
    fn splice(doc: &str, table: &str) -> String {
        match (doc.find(BEGIN_MARKER), doc.find(END_MARKER)) {
            (Some(b), Some(e)) if b < e => {
                format!("{}{BEGIN_MARKER}\n{table}{}", &doc[..b], &doc[e..])
            }
            _ => doc.to_string(),
        }
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
            doc.contains(BEGIN_MARKER),
            "docs/operations.md lacks the monitoring table"
        );
        assert!(
            doc == wanted,
            "docs/operations.md's monitoring table is out of date: run FERRY_BLESS=1 cargo test -p ferry-monitoring docs"
        );
    }
}
