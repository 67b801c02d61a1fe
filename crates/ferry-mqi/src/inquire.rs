//! MQINQ selectors: integer (MQIA) and character (MQCA) attribute selectors.

/// An MQIA_* or MQCA_* selector number.
pub type Selector = i32;

/// The most selectors one MQINQ may name (MQ's limit for SelectorCount); more fail with
/// 2066 MQRC_SELECTOR_LIMIT_EXCEEDED.
pub const MAX_SELECTORS: usize = 256;

/// Selectors MQINQ answers.
pub mod selector {
    use super::Selector;
    /// MQIA_CODED_CHAR_SET_ID.
    pub const CODED_CHAR_SET_ID: Selector = 2;
    /// MQIA_CURRENT_Q_DEPTH.
    pub const CURRENT_Q_DEPTH: Selector = 3;
    /// MQIA_DEF_INPUT_OPEN_OPTION.
    pub const DEF_INPUT_OPEN_OPTION: Selector = 4;
    /// MQIA_DEF_PERSISTENCE.
    pub const DEF_PERSISTENCE: Selector = 5;
    /// MQIA_DEF_PRIORITY.
    pub const DEF_PRIORITY: Selector = 6;
    /// MQIA_DEFINITION_TYPE.
    pub const DEFINITION_TYPE: Selector = 7;
    /// MQIA_HARDEN_GET_BACKOUT.
    pub const HARDEN_GET_BACKOUT: Selector = 8;
    /// MQIA_INHIBIT_GET.
    pub const INHIBIT_GET: Selector = 9;
    /// MQIA_INHIBIT_PUT.
    pub const INHIBIT_PUT: Selector = 10;
    /// MQIA_USAGE.
    pub const USAGE: Selector = 12;
    /// MQIA_MAX_MSG_LENGTH.
    pub const MAX_MSG_LENGTH: Selector = 13;
    /// MQIA_MAX_PRIORITY.
    pub const MAX_PRIORITY: Selector = 14;
    /// MQIA_MAX_Q_DEPTH.
    pub const MAX_Q_DEPTH: Selector = 15;
    /// MQIA_MSG_DELIVERY_SEQUENCE.
    pub const MSG_DELIVERY_SEQUENCE: Selector = 16;
    /// MQIA_OPEN_INPUT_COUNT.
    pub const OPEN_INPUT_COUNT: Selector = 17;
    /// MQIA_OPEN_OUTPUT_COUNT.
    pub const OPEN_OUTPUT_COUNT: Selector = 18;
    /// MQIA_Q_TYPE.
    pub const Q_TYPE: Selector = 20;
    /// MQIA_BACKOUT_THRESHOLD.
    pub const BACKOUT_THRESHOLD: Selector = 22;
    /// MQIA_SHAREABILITY.
    pub const SHAREABILITY: Selector = 23;
    /// MQIA_COMMAND_LEVEL.
    pub const COMMAND_LEVEL: Selector = 31;
    /// MQIA_PLATFORM.
    pub const PLATFORM: Selector = 32;
    /// MQIA_MAX_UNCOMMITTED_MSGS.
    pub const MAX_UNCOMMITTED_MSGS: Selector = 33;
    /// MQIA_MSG_MARK_BROWSE_INTERVAL.
    pub const MSG_MARK_BROWSE_INTERVAL: Selector = 68;
    /// MQIA_TRIGGER_CONTROL (MQTC_OFF 0, MQTC_ON 1).
    pub const TRIGGER_CONTROL: Selector = 24;
    /// MQIA_TRIGGER_MSG_PRIORITY.
    pub const TRIGGER_MSG_PRIORITY: Selector = 26;
    /// MQIA_TRIGGER_TYPE (MQTT_NONE 0, FIRST 1, EVERY 2, DEPTH 3).
    pub const TRIGGER_TYPE: Selector = 28;
    /// MQIA_TRIGGER_DEPTH.
    pub const TRIGGER_DEPTH: Selector = 29;
    /// MQIA_DIST_LISTS (Ferry has no distribution lists: MQSET refuses it, 2067).
    pub const DIST_LISTS: Selector = 34;
    /// MQIA_APPL_TYPE (a process's APPLTYPE, MQAT_*).
    pub const APPL_TYPE: Selector = 1;
    /// MQCA_APPL_ID (a process's APPLICID).
    pub const APPL_ID: Selector = 2001;
    /// MQCA_ENV_DATA (a process's ENVRDATA).
    pub const ENV_DATA: Selector = 2007;
    /// MQCA_PROCESS_DESC (a process's DESCR).
    pub const PROCESS_DESC: Selector = 2011;
    /// MQCA_USER_DATA (a process's USERDATA).
    pub const USER_DATA: Selector = 2021;
    /// MQIA_TRIGGER_INTERVAL (the queue manager's TRIGINT, ms).
    pub const TRIGGER_INTERVAL: Selector = 25;
    /// MQCA_INITIATION_Q_NAME.
    pub const INITIATION_Q_NAME: Selector = 2008;
    /// MQCA_PROCESS_NAME.
    pub const PROCESS_NAME: Selector = 2012;
    /// MQCA_TRIGGER_DATA.
    pub const TRIGGER_DATA: Selector = 2023;
    /// MQIA_MAX_HANDLES.
    pub const MAX_HANDLES: Selector = 11;
    /// MQIA_NAME_COUNT: how many names a namelist holds.
    pub const NAME_COUNT: Selector = 19;
    /// MQIA_DEF_BIND (MQBND_BIND_ON_OPEN 0, NOT_FIXED 1, ON_GROUP 2).
    pub const DEF_BIND: Selector = 61;
    /// MQIA_CLWL_Q_RANK.
    pub const CLWL_Q_RANK: Selector = 95;
    /// MQIA_CLWL_Q_PRIORITY.
    pub const CLWL_Q_PRIORITY: Selector = 96;
    /// MQIA_CLWL_MRU_CHANNELS.
    pub const CLWL_MRU_CHANNELS: Selector = 97;
    /// MQIA_CLWL_USEQ (MQCLWL_USEQ_LOCAL 0, ANY 1, AS_Q_MGR -3).
    pub const CLWL_USEQ: Selector = 98;
    /// MQIA_DEF_CLUSTER_XMIT_Q_TYPE (MQCLXQ_SCTQ 0, MQCLXQ_CHANNEL 1).
    pub const DEF_CLUSTER_XMIT_Q_TYPE: Selector = 250;
    /// MQCA_NAMELIST_DESC.
    pub const NAMELIST_DESC: Selector = 2009;
    /// MQCA_NAMELIST_NAME.
    pub const NAMELIST_NAME: Selector = 2010;
    /// MQCA_NAMES: a namelist's names, 48 characters each.
    pub const NAMES: Selector = 2020;
    /// MQCA_ALTERATION_DATE.
    pub const ALTERATION_DATE: Selector = 2027;
    /// MQCA_ALTERATION_TIME.
    pub const ALTERATION_TIME: Selector = 2028;
    /// MQCA_CLUSTER_NAME.
    pub const CLUSTER_NAME: Selector = 2029;
    /// MQCA_CLUSTER_NAMELIST.
    pub const CLUSTER_NAMELIST: Selector = 2030;
    /// MQCA_REPOSITORY_NAME.
    pub const REPOSITORY_NAME: Selector = 2035;
    /// MQCA_REPOSITORY_NAMELIST.
    pub const REPOSITORY_NAMELIST: Selector = 2036;
    /// MQCA_BASE_Q_NAME.
    pub const BASE_Q_NAME: Selector = 2002;
    /// MQCA_DEAD_LETTER_Q_NAME.
    pub const DEAD_LETTER_Q_NAME: Selector = 2006;
    /// MQCA_Q_DESC.
    pub const Q_DESC: Selector = 2013;
    /// MQCA_Q_MGR_NAME.
    pub const Q_MGR_NAME: Selector = 2015;
    /// MQCA_Q_NAME.
    pub const Q_NAME: Selector = 2016;
    /// MQCA_BACKOUT_REQ_Q_NAME.
    pub const BACKOUT_REQ_Q_NAME: Selector = 2019;
    /// MQCA_Q_MGR_DESC.
    pub const Q_MGR_DESC: Selector = 2014;
    /// MQCA_REMOTE_Q_MGR_NAME: a remote definition's RQMNAME.
    pub const REMOTE_Q_MGR_NAME: Selector = 2017;
    /// MQCA_REMOTE_Q_NAME: a remote definition's RNAME.
    pub const REMOTE_Q_NAME: Selector = 2018;
    /// MQCA_XMIT_Q_NAME: a remote definition's XMITQ.
    pub const XMIT_Q_NAME: Selector = 2024;
}

/// One answer of MQINQ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InquireValue {
    /// An MQIA_* attribute.
    Int(i32),
    /// An MQCA_* attribute (trailing blanks trimmed).
    Str(String),
}
