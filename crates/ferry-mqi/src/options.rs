//! MQOO, MQCO, MQPMO, MQGMO and MQMO: the options of open, close, put and get.
//!
//! Bit values are MQ's (mqi.md §8-§10) so scripts and habits carry over; unknown bits
//! are kept, and the engine rejects combinations MQ rejects.

use bitflags::bitflags;

bitflags! {
    /// MQOO: how a handle opens an object.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct OpenOptions: u32 {
        /// Input, shared or exclusive as the queue's DEFSOPT says.
        const INPUT_AS_Q_DEF = 1;
        /// Input, shared with other input handles.
        const INPUT_SHARED = 2;
        /// Input, no other input handle allowed.
        const INPUT_EXCLUSIVE = 4;
        /// Browse (non-destructive get).
        const BROWSE = 8;
        /// Output (put).
        const OUTPUT = 16;
        /// Inquire attributes.
        const INQUIRE = 32;
        /// Set attributes.
        const SET = 64;
        /// Keep context for passing on put.
        const SAVE_ALL_CONTEXT = 128;
        /// Pass identity context.
        const PASS_IDENTITY_CONTEXT = 256;
        /// Pass all context.
        const PASS_ALL_CONTEXT = 512;
        /// Set identity context.
        const SET_IDENTITY_CONTEXT = 1024;
        /// Set all context.
        const SET_ALL_CONTEXT = 2048;
        /// Use an alternate user's authority.
        const ALTERNATE_USER_AUTHORITY = 4096;
        /// Fail with 2161 when the queue manager quiesces.
        const FAIL_IF_QUIESCING = 8192;
        /// Cluster binding fixed at open.
        const BIND_ON_OPEN = 16384;
        /// Cluster binding not fixed.
        const BIND_NOT_FIXED = 32768;
        /// Fill resolved names.
        const RESOLVE_NAMES = 65536;
        /// Cooperative browse.
        const CO_OP = 131072;
        /// Resolve to a local queue.
        const RESOLVE_LOCAL_Q = 262144;
        /// No read-ahead.
        const NO_READ_AHEAD = 524288;
        /// Read-ahead.
        const READ_AHEAD = 1048576;
        /// Cluster binding fixed for each logical message group (MQOO_BIND_ON_GROUP).
        const BIND_ON_GROUP = 0x0040_0000;
        const _ = !0;
    }
}

impl OpenOptions {
    /// Any of the input options.
    pub fn wants_input(self) -> bool {
        self.intersects(Self::INPUT_AS_Q_DEF | Self::INPUT_SHARED | Self::INPUT_EXCLUSIVE)
    }
}

bitflags! {
    /// MQCO: what closing a handle does to the object.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct CloseOptions: u32 {
        /// Delete a permanent dynamic queue (only if empty).
        const DELETE = 1;
        /// Delete a permanent dynamic queue and its messages.
        const DELETE_PURGE = 2;
        /// Keep the subscription.
        const KEEP_SUB = 4;
        /// Remove the subscription.
        const REMOVE_SUB = 8;
        /// Quiesce read-ahead.
        const QUIESCE = 32;
        const _ = !0;
    }
}

bitflags! {
    /// MQPMO options.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct PutOptionFlags: u32 {
        /// Put within the connection's unit of work.
        const SYNCPOINT = 2;
        /// Put outside any unit of work.
        const NO_SYNCPOINT = 4;
        /// The queue manager sets the context.
        const DEFAULT_CONTEXT = 32;
        /// Generate a new MsgId even if one is given.
        const NEW_MSG_ID = 64;
        /// Generate a new CorrelId.
        const NEW_CORREL_ID = 128;
        /// Pass identity context from an input handle.
        const PASS_IDENTITY_CONTEXT = 256;
        /// Pass all context from an input handle.
        const PASS_ALL_CONTEXT = 512;
        /// The application sets identity context.
        const SET_IDENTITY_CONTEXT = 1024;
        /// The application sets all context.
        const SET_ALL_CONTEXT = 2048;
        /// Use an alternate user's authority.
        const ALTERNATE_USER_AUTHORITY = 4096;
        /// Fail with 2161 when the queue manager quiesces.
        const FAIL_IF_QUIESCING = 8192;
        /// No context at all.
        const NO_CONTEXT = 16384;
        /// Logical order in groups.
        const LOGICAL_ORDER = 32768;
        /// Do not wait for the put's reply (reserved for a later issue).
        const ASYNC_RESPONSE = 65536;
        /// Wait for the put's reply.
        const SYNC_RESPONSE = 131072;
        /// Resolve to a local queue.
        const RESOLVE_LOCAL_Q = 262144;
        /// MQCC_WARNING 2550 when the publication reached no subscription.
        const WARN_IF_NO_SUBS_MATCHED = 524288;
        /// Keep the publication as retained.
        const RETAIN = 2097152;
        /// Publish to this queue manager's subscribers only.
        const SCOPE_QMGR = 67108864;
        /// Blank ReplyToQ and ReplyToQMgr in the copies.
        const SUPPRESS_REPLYTO = 134217728;
        /// Do not deliver to the publishing connection's own subscriptions.
        const NOT_OWN_SUBS = 268435456;
        /// The MD is output only.
        const MD_FOR_OUTPUT_ONLY = 8388608;
        const _ = !0;
    }
}

/// MQPMO: put-message options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PutOptions {
    /// MQPMO_* bits.
    pub options: PutOptionFlags,
    /// MQPMO.Context: for PASS_IDENTITY_CONTEXT and PASS_ALL_CONTEXT, the input handle
    /// (opened with MQOO_SAVE_ALL_CONTEXT) whose last got message's context the put
    /// copies; ignored otherwise. 0 (MQ's initial value) names no handle.
    pub context: i32,
}

impl PutOptions {
    /// Options with these bits (and no context handle).
    pub fn new(options: PutOptionFlags) -> Self {
        PutOptions {
            options,
            context: 0,
        }
    }

    /// These options with MQPMO.Context set to `hobj`, the input handle to pass context
    /// from.
    pub fn with_context(self, hobj: i32) -> Self {
        PutOptions {
            context: hobj,
            ..self
        }
    }
}

bitflags! {
    /// MQGMO options.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct GetOptionFlags: u32 {
        /// Wait up to WaitInterval for a message.
        const WAIT = 1;
        /// Get within the connection's unit of work.
        const SYNCPOINT = 2;
        /// Get outside any unit of work.
        const NO_SYNCPOINT = 4;
        /// Signal (z/OS only; refused).
        const SET_SIGNAL = 8;
        /// Browse from the start; sets the cursor.
        const BROWSE_FIRST = 16;
        /// Browse after the cursor.
        const BROWSE_NEXT = 32;
        /// Remove the message even if the buffer is too small (2079).
        const ACCEPT_TRUNCATED_MSG = 64;
        /// Do not back this get out.
        const MARK_SKIP_BACKOUT = 128;
        /// Destructively get the message under the browse cursor.
        const MSG_UNDER_CURSOR = 256;
        /// Lock the browsed message.
        const LOCK = 512;
        /// Unlock the browsed message.
        const UNLOCK = 1024;
        /// Browse the message under the cursor again.
        const BROWSE_MSG_UNDER_CURSOR = 2048;
        /// Syncpoint for persistent messages only.
        const SYNCPOINT_IF_PERSISTENT = 4096;
        /// Fail with 2161 when the queue manager quiesces.
        const FAIL_IF_QUIESCING = 8192;
        /// Convert data.
        const CONVERT = 16384;
        /// Logical order in groups.
        const LOGICAL_ORDER = 32768;
        /// Reassemble segments.
        const COMPLETE_MSG = 65536;
        /// A message of a group is got only once every message of its group is on
        /// the queue (committed).
        const ALL_MSGS_AVAILABLE = 131072;
        /// A segment is got only once every segment of its logical message is on the
        /// queue (committed).
        const ALL_SEGMENTS_AVAILABLE = 262144;
        /// Mark the browsed message as browsed by this handle.
        const MARK_BROWSE_HANDLE = 1048576;
        /// Mark the browsed message for the cooperating handles (MQOO_CO_OP).
        const MARK_BROWSE_CO_OP = 2097152;
        /// Remove the cooperating handles' mark from the message.
        const UNMARK_BROWSE_CO_OP = 4194304;
        /// Remove this handle's mark from the browsed message.
        const UNMARK_BROWSE_HANDLE = 8388608;
        /// Browse only messages this handle has not marked (nor, on an MQOO_CO_OP
        /// handle, the cooperating handles).
        const UNMARKED_BROWSE_MSG = 16777216;
        const _ = !0;
    }
}

impl GetOptionFlags {
    /// MQGMO_BROWSE_HANDLE: BROWSE_FIRST | UNMARKED_BROWSE_MSG | MARK_BROWSE_HANDLE, the
    /// usual way to browse each message of a queue once without a cursor.
    pub const BROWSE_HANDLE: Self = Self::BROWSE_FIRST
        .union(Self::UNMARKED_BROWSE_MSG)
        .union(Self::MARK_BROWSE_HANDLE);

    /// MQGMO_BROWSE_CO_OP: BROWSE_FIRST | UNMARKED_BROWSE_MSG | MARK_BROWSE_CO_OP, how one
    /// of a set of cooperating dispatchers (MQOO_CO_OP) claims the next message none of
    /// them has claimed.
    pub const BROWSE_CO_OP: Self = Self::BROWSE_FIRST
        .union(Self::UNMARKED_BROWSE_MSG)
        .union(Self::MARK_BROWSE_CO_OP);

    /// Any browse option.
    pub fn is_browse(self) -> bool {
        self.intersects(Self::BROWSE_FIRST | Self::BROWSE_NEXT | Self::BROWSE_MSG_UNDER_CURSOR)
    }
}

bitflags! {
    /// MQMO: which descriptor fields a get matches on.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub struct MatchOptions: u32 {
        /// Match MsgId (when not MQMI_NONE).
        const MSG_ID = 1;
        /// Match CorrelId (when not MQCI_NONE).
        const CORREL_ID = 2;
        /// Match GroupId.
        const GROUP_ID = 4;
        /// Match MsgSeqNumber.
        const MSG_SEQ_NUMBER = 8;
        /// Match Offset.
        const OFFSET = 16;
        /// Match MsgToken.
        const MSG_TOKEN = 32;
        const _ = !0;
    }
}

impl Default for MatchOptions {
    /// MQMO_MATCH_MSG_ID | MQMO_MATCH_CORREL_ID, as MQGMO_DEFAULT.
    fn default() -> Self {
        MatchOptions::MSG_ID | MatchOptions::CORREL_ID
    }
}

/// MQWI_UNLIMITED: wait forever.
pub const WAIT_UNLIMITED: i32 = -1;

/// MQGMO: get-message options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GetOptions {
    /// MQGMO_* bits.
    pub options: GetOptionFlags,
    /// Milliseconds to wait with WAIT; -1 forever.
    pub wait_interval: i32,
    /// Which fields of the caller's descriptor to match.
    pub match_options: MatchOptions,
}

impl Default for GetOptions {
    /// MQGMO_DEFAULT: no wait, match MsgId and CorrelId.
    fn default() -> Self {
        GetOptions {
            options: GetOptionFlags::empty(),
            wait_interval: WAIT_UNLIMITED,
            match_options: MatchOptions::default(),
        }
    }
}
