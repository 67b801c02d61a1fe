//! MQ completion and reason codes: the one table every layer reports failures with.
//!
//! The table below is the single source of truth: the enum, the numbers, the MQRC_ names
//! and the lookup from a number are all generated from it. Protocol adapters (AMQP error
//! conditions, CLI messages) map from these, never invent their own.

use std::fmt;

/// MQCC: how a call completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[repr(i32)]
pub enum CompCode {
    /// MQCC_OK: the call did everything asked.
    Ok = 0,
    /// MQCC_WARNING: the call completed partially (e.g. 2079 truncated message accepted).
    Warning = 1,
    /// MQCC_FAILED: the call did nothing.
    Failed = 2,
}

impl CompCode {
    /// The MQCC number.
    pub fn number(self) -> i32 {
        self as i32
    }

    /// The completion code for an MQCC number; unknown numbers count as failed.
    pub fn from_number(n: i32) -> Self {
        match n {
            0 => Self::Ok,
            1 => Self::Warning,
            _ => Self::Failed,
        }
    }
}

macro_rules! reason_codes {
    ($( $(#[$doc:meta])* $variant:ident = $num:literal, $name:literal, $warn:literal; )*) => {
        /// MQRC: why a call failed or warned. `None` (0) means success.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(i32)]
        #[non_exhaustive]
        pub enum ReasonCode {
            $( $(#[$doc])* $variant = $num, )*
        }

        impl ReasonCode {
            /// Every reason code Ferry knows, in table order.
            pub const ALL: &'static [ReasonCode] = &[ $( ReasonCode::$variant, )* ];

            /// The MQRC number, e.g. 2053.
            pub fn number(self) -> i32 {
                self as i32
            }

            /// The MQ constant name, e.g. `MQRC_Q_FULL`.
            pub fn name(self) -> &'static str {
                match self { $( ReasonCode::$variant => $name, )* }
            }

            /// The reason code for a number, if Ferry knows it.
            pub fn from_number(n: i32) -> Option<Self> {
                match n { $( $num => Some(ReasonCode::$variant), )* _ => None }
            }

            /// The completion code MQ pairs with this reason (warning or failed).
            pub fn comp_code(self) -> CompCode {
                if self == ReasonCode::None {
                    return CompCode::Ok;
                }
                let warning = match self { $( ReasonCode::$variant => $warn, )* };
                if warning { CompCode::Warning } else { CompCode::Failed }
            }
        }
    };
}

reason_codes! {
    /// MQRC_NONE: success.
    None = 0, "MQRC_NONE", false;
    /// The alias queue's base is not a queue or topic.
    AliasBaseQTypeError = 2001, "MQRC_ALIAS_BASE_Q_TYPE_ERROR", false;
    /// The connection is already connected (warning).
    AlreadyConnected = 2002, "MQRC_ALREADY_CONNECTED", true;
    /// The unit of work was backed out.
    BackedOut = 2003, "MQRC_BACKED_OUT", false;
    /// A buffer parameter is not valid.
    BufferError = 2004, "MQRC_BUFFER_ERROR", false;
    /// A buffer length parameter is not valid.
    BufferLengthError = 2005, "MQRC_BUFFER_LENGTH_ERROR", false;
    /// The connection to the queue manager was lost.
    ConnectionBroken = 2009, "MQRC_CONNECTION_BROKEN", false;
    /// The data length is not valid.
    DataLengthError = 2010, "MQRC_DATA_LENGTH_ERROR", false;
    /// The call is not valid in this environment.
    EnvironmentError = 2012, "MQRC_ENVIRONMENT_ERROR", false;
    /// The expiry time is not valid (0 or below -1).
    ExpiryError = 2013, "MQRC_EXPIRY_ERROR", false;
    /// Gets are inhibited for the queue.
    GetInhibited = 2016, "MQRC_GET_INHIBITED", false;
    /// No more handles are available (MAXHANDS).
    HandleNotAvailable = 2017, "MQRC_HANDLE_NOT_AVAILABLE", false;
    /// The connection handle is not valid.
    HconnError = 2018, "MQRC_HCONN_ERROR", false;
    /// The object handle is not valid.
    HobjError = 2019, "MQRC_HOBJ_ERROR", false;
    /// The unit of work holds MAXUMSGS messages already.
    SyncpointLimitReached = 2024, "MQRC_SYNCPOINT_LIMIT_REACHED", false;
    /// The queue manager's connection limit is reached.
    MaxConnsLimitReached = 2025, "MQRC_MAX_CONNS_LIMIT_REACHED", false;
    /// The message descriptor is not valid.
    MdError = 2026, "MQRC_MD_ERROR", false;
    /// A reply-to queue is missing for a request.
    MissingReplyToQ = 2027, "MQRC_MISSING_REPLY_TO_Q", false;
    /// The message is longer than the queue's MAXMSGL.
    MsgTooBigForQ = 2030, "MQRC_MSG_TOO_BIG_FOR_Q", false;
    /// The message is longer than the queue manager's MAXMSGL.
    MsgTooBigForQMgr = 2031, "MQRC_MSG_TOO_BIG_FOR_Q_MGR", false;
    /// No message matched (empty queue or wait interval over).
    NoMsgAvailable = 2033, "MQRC_NO_MSG_AVAILABLE", false;
    /// The browse cursor is not on a message.
    NoMsgUnderCursor = 2034, "MQRC_NO_MSG_UNDER_CURSOR", false;
    /// The user is not authorized.
    NotAuthorized = 2035, "MQRC_NOT_AUTHORIZED", false;
    /// The handle was not opened for browse.
    NotOpenForBrowse = 2036, "MQRC_NOT_OPEN_FOR_BROWSE", false;
    /// The handle was not opened for input.
    NotOpenForInput = 2037, "MQRC_NOT_OPEN_FOR_INPUT", false;
    /// The handle was not opened for inquire.
    NotOpenForInquire = 2038, "MQRC_NOT_OPEN_FOR_INQUIRE", false;
    /// The handle was not opened for output.
    NotOpenForOutput = 2039, "MQRC_NOT_OPEN_FOR_OUTPUT", false;
    /// The handle was not opened for set.
    NotOpenForSet = 2040, "MQRC_NOT_OPEN_FOR_SET", false;
    /// The object definition changed since it was opened.
    ObjectChanged = 2041, "MQRC_OBJECT_CHANGED", false;
    /// The object is open exclusively elsewhere, or cannot be opened exclusively.
    ObjectInUse = 2042, "MQRC_OBJECT_IN_USE", false;
    /// The object type is not valid.
    ObjectTypeError = 2043, "MQRC_OBJECT_TYPE_ERROR", false;
    /// The object descriptor is not valid.
    OdError = 2044, "MQRC_OD_ERROR", false;
    /// An option is not valid for the object type.
    OptionNotValidForType = 2045, "MQRC_OPTION_NOT_VALID_FOR_TYPE", false;
    /// The options are not valid or not consistent.
    OptionsError = 2046, "MQRC_OPTIONS_ERROR", false;
    /// The persistence value is not valid.
    PersistenceError = 2047, "MQRC_PERSISTENCE_ERROR", false;
    /// Persistent messages are not allowed here.
    PersistentNotAllowed = 2048, "MQRC_PERSISTENT_NOT_ALLOWED", false;
    /// The priority exceeds MAXPRTY; the maximum was used (warning).
    PriorityExceedsMaximum = 2049, "MQRC_PRIORITY_EXCEEDS_MAXIMUM", true;
    /// The priority is not valid.
    PriorityError = 2050, "MQRC_PRIORITY_ERROR", false;
    /// Puts are inhibited for the queue.
    PutInhibited = 2051, "MQRC_PUT_INHIBITED", false;
    /// The queue was deleted while open.
    QDeleted = 2052, "MQRC_Q_DELETED", false;
    /// The queue holds MAXDEPTH messages already.
    QFull = 2053, "MQRC_Q_FULL", false;
    /// The queue is not empty.
    QNotEmpty = 2055, "MQRC_Q_NOT_EMPTY", false;
    /// No space is left for the queue on disk.
    QSpaceNotAvailable = 2056, "MQRC_Q_SPACE_NOT_AVAILABLE", false;
    /// The queue type is not valid for the call.
    QTypeError = 2057, "MQRC_Q_TYPE_ERROR", false;
    /// The queue manager name is not valid or not known.
    QMgrNameError = 2058, "MQRC_Q_MGR_NAME_ERROR", false;
    /// The queue manager is not available.
    QMgrNotAvailable = 2059, "MQRC_Q_MGR_NOT_AVAILABLE", false;
    /// A report option is not valid.
    ReportOptionsError = 2061, "MQRC_REPORT_OPTIONS_ERROR", false;
    /// A security error occurred.
    SecurityError = 2063, "MQRC_SECURITY_ERROR", false;
    /// Not enough storage is available.
    StorageNotAvailable = 2071, "MQRC_STORAGE_NOT_AVAILABLE", false;
    /// Syncpoint is not available.
    SyncpointNotAvailable = 2072, "MQRC_SYNCPOINT_NOT_AVAILABLE", false;
    /// The message was truncated and removed (warning).
    TruncatedMsgAccepted = 2079, "MQRC_TRUNCATED_MSG_ACCEPTED", true;
    /// The buffer is too small; the message stays on the queue.
    TruncatedMsgFailed = 2080, "MQRC_TRUNCATED_MSG_FAILED", false;
    /// The alias queue's base queue does not exist.
    UnknownAliasBaseQ = 2082, "MQRC_UNKNOWN_ALIAS_BASE_Q", false;
    /// The object does not exist.
    UnknownObjectName = 2085, "MQRC_UNKNOWN_OBJECT_NAME", false;
    /// The object's queue manager is not known.
    UnknownObjectQMgr = 2086, "MQRC_UNKNOWN_OBJECT_Q_MGR", false;
    /// The remote queue manager is not known: no queue-manager alias, transmission
    /// queue or DEFXMITQ leads to it (MQOPEN/MQPUT1, or a report to another queue
    /// manager).
    UnknownRemoteQMgr = 2087, "MQRC_UNKNOWN_REMOTE_Q_MGR", false;
    /// The wait interval is not valid.
    WaitIntervalError = 2090, "MQRC_WAIT_INTERVAL_ERROR", false;
    /// MQOPEN/MQPUT1 to a remote queue manager: the transmission queue chosen (a
    /// QREMOTE's XMITQ, or the queue named like the remote queue manager) is not a
    /// local queue.
    XmitQTypeError = 2091, "MQRC_XMIT_Q_TYPE_ERROR", false;
    /// MQOPEN/MQPUT1 to a remote queue manager: the transmission queue chosen is a
    /// local queue without USAGE(XMITQ).
    XmitQUsageError = 2092, "MQRC_XMIT_Q_USAGE_ERROR", false;
    /// The object already exists.
    ObjectAlreadyExists = 2100, "MQRC_OBJECT_ALREADY_EXISTS", false;
    /// The object is damaged.
    ObjectDamaged = 2101, "MQRC_OBJECT_DAMAGED", false;
    /// The queue manager lacks a system resource (e.g. log space).
    ResourceProblem = 2102, "MQRC_RESOURCE_PROBLEM", false;
    /// The message format is not valid.
    FormatError = 2110, "MQRC_FORMAT_ERROR", false;
    /// The object name is not valid.
    ObjectNameError = 2152, "MQRC_OBJECT_NAME_ERROR", false;
    /// The queue manager is quiescing (with FAIL_IF_QUIESCING).
    QMgrQuiescing = 2161, "MQRC_Q_MGR_QUIESCING", false;
    /// The queue manager is stopping.
    QMgrStopping = 2162, "MQRC_Q_MGR_STOPPING", false;
    /// A selector is not valid.
    SelectorError = 2067, "MQRC_SELECTOR_ERROR", false;
    /// MQINQ was given more selectors than MQ allows ([`crate::inquire::MAX_SELECTORS`]).
    SelectorLimitExceeded = 2066, "MQRC_SELECTOR_LIMIT_EXCEEDED", false;
    /// MQSET: a selector is valid but not for this object's type (e.g. a trigger
    /// attribute of an alias queue).
    SelectorNotForType = 2068, "MQRC_SELECTOR_NOT_FOR_TYPE", false;
    /// MQSET: the InhibitGet or InhibitPut value is neither MQQA_*_INHIBITED nor _ALLOWED.
    InhibitValueError = 2074, "MQRC_INHIBIT_VALUE_ERROR", false;
    /// MQSET: the TriggerControl value is neither MQTC_OFF nor MQTC_ON.
    TriggerControlError = 2075, "MQRC_TRIGGER_CONTROL_ERROR", false;
    /// MQSET: the TriggerType value is not an MQTT_ value.
    TriggerTypeError = 2076, "MQRC_TRIGGER_TYPE_ERROR", false;
    /// MQSET: the TriggerMsgPriority value is outside 0..=9.
    TriggerMsgPriorityErr = 2077, "MQRC_TRIGGER_MSG_PRIORITY_ERR", false;
    /// MQSET: the TriggerDepth value is not positive.
    TriggerDepthError = 2078, "MQRC_TRIGGER_DEPTH_ERROR", false;
    /// MQSET: a character attribute is longer than the attribute (TriggerData: 64).
    CharAttrLengthError = 2006, "MQRC_CHAR_ATTR_LENGTH_ERROR", false;
    /// The put-message options are not valid.
    PmoError = 2173, "MQRC_PMO_ERROR", false;
    /// The get-message options are not valid.
    GmoError = 2186, "MQRC_GMO_ERROR", false;
    /// MQPUT with MQPMO_PASS_ALL_CONTEXT on a handle not opened with
    /// MQOO_PASS_ALL_CONTEXT (or SET_ALL_CONTEXT).
    NotOpenForPassAll = 2093, "MQRC_NOT_OPEN_FOR_PASS_ALL", false;
    /// MQPUT with MQPMO_PASS_IDENTITY_CONTEXT on a handle opened with no context option.
    NotOpenForPassIdent = 2094, "MQRC_NOT_OPEN_FOR_PASS_IDENT", false;
    /// MQPUT with MQPMO_SET_ALL_CONTEXT on a handle not opened with MQOO_SET_ALL_CONTEXT.
    NotOpenForSetAll = 2095, "MQRC_NOT_OPEN_FOR_SET_ALL", false;
    /// MQPUT with MQPMO_SET_IDENTITY_CONTEXT on a handle not opened with
    /// MQOO_SET_IDENTITY_CONTEXT (or SET_ALL_CONTEXT).
    NotOpenForSetIdent = 2096, "MQRC_NOT_OPEN_FOR_SET_IDENT", false;
    /// MQPMO.Context does not name a queue handle of the connection opened with
    /// MQOO_SAVE_ALL_CONTEXT (or the server speaks protocol minor 1 or older, which
    /// cannot carry it).
    ContextHandleError = 2097, "MQRC_CONTEXT_HANDLE_ERROR", false;
    /// The handle in MQPMO.Context has no saved context: nothing was got with it yet,
    /// or its last successful get was a browse.
    ContextNotAvailable = 2098, "MQRC_CONTEXT_NOT_AVAILABLE", false;
    /// The call is not supported by the other side (e.g. MQSET to a server that speaks
    /// protocol minor 0).
    FunctionNotSupported = 2298, "MQRC_FUNCTION_NOT_SUPPORTED", false;
    /// An authority record names a user or group the queue manager does not know.
    UnknownEntity = 2292, "MQRC_UNKNOWN_ENTITY", false;
    /// An unexpected error occurred inside the queue manager.
    UnexpectedError = 2195, "MQRC_UNEXPECTED_ERROR", false;
    /// A cluster queue could not be resolved: no full repository could be asked about
    /// a cluster queue this queue manager does not know.
    ClusterResolutionError = 2189, "MQRC_CLUSTER_RESOLUTION_ERROR", false;
    /// Every instance of the cluster queue is PUT(DISABLED).
    ClusterPutInhibited = 2268, "MQRC_CLUSTER_PUT_INHIBITED", false;
    /// No instance of the cluster queue is left to put to.
    NoDestinationsAvailable = 2270, "MQRC_NO_DESTINATIONS_AVAILABLE", false;
    /// A QREMOTE's XMITQ names a queue that does not exist.
    UnknownXmitQ = 2196, "MQRC_UNKNOWN_XMIT_Q", false;
    /// The queue manager's DEFXMITQ names a queue that does not exist.
    UnknownDefXmitQ = 2197, "MQRC_UNKNOWN_DEF_XMIT_Q", false;
    /// The queue manager's DEFXMITQ names a queue that is not a local queue.
    DefXmitQTypeError = 2198, "MQRC_DEF_XMIT_Q_TYPE_ERROR", false;
    /// The queue manager's DEFXMITQ names a local queue without USAGE(XMITQ).
    DefXmitQUsageError = 2199, "MQRC_DEF_XMIT_Q_USAGE_ERROR", false;
    /// The connection is quiescing.
    ConnectionQuiescing = 2202, "MQRC_CONNECTION_QUIESCING", false;
    /// The connection is stopping.
    ConnectionStopping = 2203, "MQRC_CONNECTION_STOPPING", false;
    /// The message id is not valid.
    MsgIdError = 2206, "MQRC_MSG_ID_ERROR", false;
    /// The correlation id is not valid.
    CorrelIdError = 2207, "MQRC_CORREL_ID_ERROR", false;
    /// MQGMO_UNLOCK, but the handle has no locked message (warning).
    NoMsgLocked = 2209, "MQRC_NO_MSG_LOCKED", true;
    /// The message is longer than the channel's MAXMSGL.
    MsgTooBigForChannel = 2218, "MQRC_MSG_TOO_BIG_FOR_CHANNEL", false;
    /// Another call is in progress on the connection.
    CallInProgress = 2219, "MQRC_CALL_IN_PROGRESS", false;
    /// A handle has a message group in progress (MQPUT/MQGET in logical order): failed
    /// when a logical-order put is not in the group, a warning when a call leaves
    /// logical order mid-group.
    IncompleteGroup = 2241, "MQRC_INCOMPLETE_GROUP", true;
    /// A handle has a segmented logical message in progress (as 2241, for segments).
    IncompleteMsg = 2242, "MQRC_INCOMPLETE_MSG", true;
    /// The syncpoint option differs from the one the group or logical message began
    /// with (failed in logical order).
    InconsistentUow = 2245, "MQRC_INCONSISTENT_UOW", true;
    /// The match options are not valid.
    MatchOptionsError = 2247, "MQRC_MATCH_OPTIONS_ERROR", false;
    /// MQMD MsgFlags holds bits MQ does not define.
    MsgFlagsError = 2249, "MQRC_MSG_FLAGS_ERROR", false;
    /// MQMD MsgSeqNumber is outside 1..=999 999 999 (or would go past it).
    MsgSeqNumberError = 2250, "MQRC_MSG_SEQ_NUMBER_ERROR", false;
    /// MQMD Offset is negative, or not 0 for a message that is not a segment.
    OffsetError = 2251, "MQRC_OFFSET_ERROR", false;
    /// A first or middle segment has no data.
    SegmentLengthZero = 2253, "MQRC_SEGMENT_LENGTH_ZERO", false;
    /// A message was backed out BOTHRESH times (the reason in its dead-letter header).
    BackoutThresholdReached = 2362, "MQRC_BACKOUT_THRESHOLD_REACHED", false;
    /// The key repository cannot be used (missing, unreadable, or no certificate with the
    /// label).
    KeyRepositoryError = 2381, "MQRC_KEY_REPOSITORY_ERROR", false;
    /// TLS could not be set up: the handshake failed, or the ends disagree on using TLS.
    SslInitializationError = 2393, "MQRC_SSL_INITIALIZATION_ERROR", false;
    /// The partner's certificate does not match SSLPEER.
    SslPeerNameMismatch = 2398, "MQRC_SSL_PEER_NAME_MISMATCH", false;
    /// An SSLPEER value is not a valid distinguished-name filter.
    SslPeerNameError = 2399, "MQRC_SSL_PEER_NAME_ERROR", false;
    /// The MQSD is not valid (structure, version, or options that do not go together).
    SdError = 2424, "MQRC_SD_ERROR", false;
    /// The topic string is not valid (too long, or made of nothing).
    TopicStringError = 2425, "MQRC_TOPIC_STRING_ERROR", false;
    /// MQSO_RESUME or MQSO_ALTER named a subscription that does not exist.
    NoSubscription = 2428, "MQRC_NO_SUBSCRIPTION", false;
    /// The subscription is in use by another handle.
    SubscriptionInUse = 2429, "MQRC_SUBSCRIPTION_IN_USE", false;
    /// SubUserData is not valid.
    SubUserDataError = 2431, "MQRC_SUB_USER_DATA_ERROR", false;
    /// MQSO_CREATE named a subscription that already exists.
    SubAlreadyExists = 2432, "MQRC_SUB_ALREADY_EXISTS", false;
    /// Another user owns the subscription (MQSO_FIXED_USERID).
    IdentityMismatch = 2434, "MQRC_IDENTITY_MISMATCH", false;
    /// MQSO_ALTER asked for a change that cannot be made.
    AlterSubError = 2435, "MQRC_ALTER_SUB_ERROR", false;
    /// The topic does not allow durable subscriptions (DURSUB(NO)).
    DurabilityNotAllowed = 2436, "MQRC_DURABILITY_NOT_ALLOWED", false;
    /// MQSUBRQ found no retained publication.
    NoRetainedMsg = 2437, "MQRC_NO_RETAINED_MSG", false;
    /// The MQSRO is not valid.
    SroError = 2438, "MQRC_SRO_ERROR", false;
    /// SubName is missing (a durable subscription needs one) or not valid.
    SubNameError = 2440, "MQRC_SUB_NAME_ERROR", false;
    /// ObjectString is not valid.
    ObjectStringError = 2441, "MQRC_OBJECT_STRING_ERROR", false;
    /// A message property name is not valid (MQSETMP/MQINQMP).
    PropertyNameError = 2442, "MQRC_PROPERTY_NAME_ERROR", false;
    /// The selection string is not a valid selector.
    SelectorSyntaxError = 2459, "MQRC_SELECTOR_SYNTAX_ERROR", false;
    /// A message property value is too long to store.
    PropertyValueTooBig = 2469, "MQRC_PROPERTY_VALUE_TOO_BIG", false;
    /// A message property's value is not a number of its type (as text: the messaging
    /// REST API's `ibm-mq-usr-*` headers).
    PropNumberFormatError = 2472, "MQRC_PROP_NUMBER_FORMAT_ERROR", false;
    /// A message property's type is not one MQ has.
    PropertyTypeError = 2473, "MQRC_PROPERTY_TYPE_ERROR", false;
    /// MQPMO_RETAIN: the publication could not be kept as retained (nothing was published).
    PutNotRetained = 2479, "MQRC_PUT_NOT_RETAINED", false;
    /// A copy of the publication could not be delivered and the topic's PMSGDLV or
    /// NPMSGDLV says no subscriber gets it then.
    PublicationFailure = 2502, "MQRC_PUBLICATION_FAILURE", false;
    /// The topic does not allow subscriptions (SUB(DISABLED)).
    SubInhibited = 2503, "MQRC_SUB_INHIBITED", false;
    /// The selection string can never select a message.
    SelectorAlwaysFalse = 2504, "MQRC_SELECTOR_ALWAYS_FALSE", false;
    /// MQSO_ALTER cannot change a subscription's durability.
    DurabilityNotAlterable = 2509, "MQRC_DURABILITY_NOT_ALTERABLE", false;
    /// MQSO_ALTER cannot change a subscription's topic.
    TopicNotAlterable = 2510, "MQRC_TOPIC_NOT_ALTERABLE", false;
    /// MQSO_ALTER cannot change a subscription's SubLevel.
    SublevelNotAlterable = 2512, "MQRC_SUBLEVEL_NOT_ALTERABLE", false;
    /// MQSO_ALTER cannot change MQSO_GROUP_SUB.
    GroupingNotAlterable = 2515, "MQRC_GROUPING_NOT_ALTERABLE", false;
    /// The selection string field is not valid.
    SelectionStringError = 2519, "MQRC_SELECTION_STRING_ERROR", false;
    /// The ResObjectString field is not valid.
    ResObjectStringError = 2520, "MQRC_RES_OBJECT_STRING_ERROR", false;
    /// The subscription's destination cannot be used (no model queue, or a durable
    /// subscription on a temporary dynamic queue).
    InvalidDestination = 2522, "MQRC_INVALID_DESTINATION", false;
    /// The subscription cannot be resumed or altered this way.
    InvalidSubscription = 2523, "MQRC_INVALID_SUBSCRIPTION", false;
    /// MQSO_ALTER cannot change a subscription's selector.
    SelectorNotAlterable = 2524, "MQRC_SELECTOR_NOT_ALTERABLE", false;
    /// The retained publications cannot be read.
    RetainedMsgQError = 2525, "MQRC_RETAINED_MSG_Q_ERROR", false;
    /// The retained publication could not be delivered to the new subscription.
    RetainedNotDelivered = 2526, "MQRC_RETAINED_NOT_DELIVERED", false;
    /// Publish/subscribe is not available (PSMODE(DISABLED), or starting).
    PubsubInhibited = 2531, "MQRC_PUBSUB_INHIBITED", false;
    /// MQSO_ALTER cannot change between a managed and a provided destination.
    DestClassNotAlterable = 2533, "MQRC_DEST_CLASS_NOT_ALTERABLE", false;
    /// The MQSUBRQ action is not MQSR_ACTION_PUBLICATION.
    ActionError = 2535, "MQRC_ACTION_ERROR", false;
    /// The channel is not available (stopped, or too many instances).
    ChannelNotAvailable = 2537, "MQRC_CHANNEL_NOT_AVAILABLE", false;
    /// The host is not available (nothing listens at the connection name).
    HostNotAvailable = 2538, "MQRC_HOST_NOT_AVAILABLE", false;
    /// The channel definition is not usable.
    ChannelConfigError = 2539, "MQRC_CHANNEL_CONFIG_ERROR", false;
    /// No channel of that name exists.
    UnknownChannelName = 2540, "MQRC_UNKNOWN_CHANNEL_NAME", false;
    /// MQPMO_WARN_IF_NO_SUBS_MATCHED: no subscription received the publication.
    NoSubsMatched = 2550, "MQRC_NO_SUBS_MATCHED", true;
    /// Applications may not publish on the administrative topics (`$SYS/MQ/...`).
    AdminTopicStringError = 2598, "MQRC_ADMIN_TOPIC_STRING_ERROR", false;
}

impl ReasonCode {
    /// True when the code is MQRC_NONE.
    pub fn is_ok(self) -> bool {
        self == ReasonCode::None
    }
}

impl fmt::Display for ReasonCode {
    /// `2053 MQRC_Q_FULL`: the number first, as MQ administrators search for it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.number(), self.name())
    }
}

/// A failed or warned MQI call: completion code plus reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{comp:?} {reason}")]
pub struct MqError {
    /// MQCC_FAILED or MQCC_WARNING.
    pub comp: CompCode,
    /// Why.
    pub reason: ReasonCode,
}

impl From<ReasonCode> for MqError {
    fn from(reason: ReasonCode) -> Self {
        MqError {
            comp: reason.comp_code(),
            reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_names_round_trip() {
        for &rc in ReasonCode::ALL {
            assert_eq!(ReasonCode::from_number(rc.number()), Some(rc));
            assert!(rc.name().starts_with("MQRC_"));
        }
        assert_eq!(ReasonCode::QFull.to_string(), "2053 MQRC_Q_FULL");
        assert_eq!(ReasonCode::from_number(424242), None);
    }

    #[test]
    fn warnings_are_warnings() {
        assert_eq!(
            ReasonCode::TruncatedMsgAccepted.comp_code(),
            CompCode::Warning
        );
        assert_eq!(ReasonCode::QFull.comp_code(), CompCode::Failed);
        assert_eq!(ReasonCode::None.comp_code(), CompCode::Ok);
    }

    #[test]
    fn numbers_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for &rc in ReasonCode::ALL {
            assert!(seen.insert(rc.number()), "duplicate {}", rc.number());
        }
    }
}
