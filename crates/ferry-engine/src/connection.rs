//! Connections and their handles: who is connected, what they have open, what they wait
//! for, which async consumers they run.

use crate::consumer::ConsumerId;
use crate::context::SavedContext;
use crate::group::{GroupWait, HandleGroups};
use crate::objects::QueueId;
use crate::queue::{Criteria, MsgKey};
use crate::selection::SharedFilter;
use crate::uow::UnitOfWork;
use ferry_mqi::{FixedStr, GetOptions, OpenOptions};
use std::fmt;

/// A connection (MQ's Hconn), unique for the life of the queue manager.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConnId(pub u64);

impl fmt::Display for ConnId {
    /// As DISPLAY CONN shows it: 16 hex digits.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016X}", self.0)
    }
}

/// An object handle (MQ's Hobj), valid within its connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Hobj(pub i32);

/// Who connected: what DISPLAY CONN and the message context report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConnectionInfo {
    /// Application name (APPLTAG; PutApplName of its messages).
    pub application_name: String,
    /// Channel it came in on (blank for bindings).
    pub channel: String,
    /// Client address.
    pub connection_name: String,
    /// User id (UserIdentifier of its messages).
    pub user_id: String,
    /// Process id: a bindings application's own, or for a client the queue manager's
    /// (the process serving its channel, as MQ shows its channel process).
    pub pid: Option<u32>,
}

/// How a handle opened a queue for input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum InputMode {
    None,
    Shared,
    Exclusive,
}

/// What a handle refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HandleTarget {
    /// The queue manager object (inquire only).
    QMgr,
    /// A process definition (inquire only): the handle's `name` names it.
    Process,
    /// A namelist (inquire only): the handle's `name` is the namelist's.
    Namelist,
    /// A queue: `opened` is the definition named (alias or local), `local` the local
    /// queue it resolves to.
    Queue { opened: QueueId, local: QueueId },
    /// A topic opened for publishing: the handle's `name` is the resolved topic string.
    Topic,
    /// A subscription (MQ's Hsub).
    Subscription(crate::pubsub::subscription::SubKey),
    /// A queue on another queue manager (`crate::name_resolution`): puts go onto a
    /// transmission queue with a transmission queue header naming it.
    Remote(RemoteTarget),
}

/// Where a handle to a remote destination sends its messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RemoteTarget {
    /// The first definition in the resolution path (the QREMOTE opened, or the
    /// queue-manager alias ObjectQMgrName named): its PUT, DEFPSIST and DEFPRTY apply.
    pub definition: Option<QueueId>,
    /// The transmission queue (a local queue, USAGE(XMITQ)) the messages wait on.
    pub xmit_q: QueueId,
    /// RemoteQName of the transmission queue header.
    pub remote_q_name: FixedStr<48>,
    /// RemoteQMgrName of the transmission queue header.
    pub remote_qmgr_name: FixedStr<48>,
    /// For a cluster queue (or a queue manager reached through a cluster): the
    /// cluster-sender channel, named in each message's CorrelId, and whether each put
    /// chooses the instance again.
    pub cluster: Option<crate::cluster::ClusterBinding>,
}

/// One open handle.
#[derive(Clone, Debug)]
pub(crate) struct Handle {
    pub target: HandleTarget,
    pub options: OpenOptions,
    pub input: InputMode,
    /// The name opened (after model resolution).
    pub name: String,
    /// The browse cursor.
    pub cursor: Option<MsgKey>,
    /// The message this handle locked with MQGMO_LOCK (always the one under its cursor:
    /// `crate::browse_lock`).
    pub lock: Option<MsgKey>,
    /// True when this handle created a temporary dynamic queue (deleted on close).
    pub owns_temp_queue: bool,
    /// The selector given at open (MQOD SelectionString): gets, waits and consumers on
    /// the handle only see messages it selects.
    pub selection: Option<SharedFilter>,
    /// With MQOO_SAVE_ALL_CONTEXT, the context of the last message got destructively
    /// (None before one, or after a browse): what a put passing context copies.
    pub saved_context: Option<Box<SavedContext>>,
    /// Where the handle is in the groups it puts, gets and browses in logical order.
    pub groups: HandleGroups,
}

/// A GET waiting for a message.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PendingGet {
    pub hobj: Hobj,
    pub queue: QueueId,
    pub token: u64,
    pub gmo: GetOptions,
    pub criteria: Criteria,
    pub max_len: usize,
    pub deadline: Option<u64>,
    /// A group get: it waits among the queue's group waiters and is run again from
    /// these match fields (`crate::group`).
    pub group: Option<GroupWait>,
}

/// A connected application.
#[derive(Debug)]
pub(crate) struct Connection {
    pub info: ConnectionInfo,
    pub connected_ms: u64,
    /// Handles by `Hobj - 1`; closed slots are reused.
    pub handles: Vec<Option<Handle>>,
    pub open_count: usize,
    pub uow: UnitOfWork,
    pub pending: Option<PendingGet>,
    /// The async consumers it runs (on any of its handles).
    pub consumers: Vec<ConsumerId>,
    /// Who its opens are checked for (`None`: authorities are not checked).
    pub principal: Option<std::rc::Rc<ferry_security::oam::Principal>>,
    /// The queue manager's own connection (its resource monitor): it alone may publish
    /// on the administrative topics (`$SYS/MQ/...`).
    pub system: bool,
}

impl Connection {
    pub fn new(info: ConnectionInfo, connected_ms: u64) -> Self {
        Connection {
            info,
            connected_ms,
            handles: Vec::new(),
            open_count: 0,
            uow: UnitOfWork::default(),
            pending: None,
            consumers: Vec::new(),
            principal: None,
            system: false,
        }
    }

    /// The handle for `hobj`.
    pub fn handle(&self, hobj: Hobj) -> Option<&Handle> {
        let i = usize::try_from(hobj.0).ok()?.checked_sub(1)?;
        self.handles.get(i)?.as_ref()
    }

    /// The handle for `hobj`, mutable.
    pub fn handle_mut(&mut self, hobj: Hobj) -> Option<&mut Handle> {
        let i = usize::try_from(hobj.0).ok()?.checked_sub(1)?;
        self.handles.get_mut(i)?.as_mut()
    }

    /// Stores a new handle in the first free slot.
    pub fn add_handle(&mut self, h: Handle) -> Hobj {
        self.open_count += 1;
        let i = match self.handles.iter().position(Option::is_none) {
            Some(i) => {
                self.handles[i] = Some(h);
                i
            }
            None => {
                self.handles.push(Some(h));
                self.handles.len() - 1
            }
        };
        Hobj(i as i32 + 1)
    }

    /// Removes a handle.
    pub fn take_handle(&mut self, hobj: Hobj) -> Option<Handle> {
        let i = usize::try_from(hobj.0).ok()?.checked_sub(1)?;
        let h = self.handles.get_mut(i)?.take();
        if h.is_some() {
            self.open_count -= 1;
        }
        h
    }
}
