//! The [`QueueManager`]: one owner of every object, connection and message, called
//! synchronously by the server. This file holds the state, connect/disconnect, the run
//! state (quiesce, stop) and wait bookkeeping; the hand-off of messages to waiters and
//! consumers is in `handoff`, the verbs in their own modules (open, put, get, syncpoint,
//! inquire, admin, consumer, settle).

use crate::body::BufferSizes;
use crate::clock::{PutStamp, Timestamp};
use crate::connection::{ConnId, Connection, ConnectionInfo, Hobj, PendingGet};
use crate::consumer::ConsumerTable;
use crate::effects::{Effect, Effects};
use crate::get::GetError;
use crate::msgid::IdGenerator;
use crate::objects::{Catalogue, QueueId, QueueTable};
use crate::redelivery_delay::RedeliverySchedule;
use crate::settle::Settlement;
use ferry_mqi::{GetOptionFlags, MqError, ReasonCode};
use ferry_objects::{ChannelDefinition, ListenerDefinition, QmgrAttributes};
use std::collections::{BTreeMap, BTreeSet};

/// Whether the queue manager accepts work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunState {
    /// Normal operation.
    Running,
    /// Controlled stop: new connections fail 2161, calls with FAIL_IF_QUIESCING fail 2161.
    Quiescing,
    /// Immediate stop: every call fails 2162.
    Stopping,
}

/// The queue manager core. Pure and single-owner: no locks, threads, clocks or I/O.
#[derive(Debug)]
pub struct QueueManager {
    pub(crate) name: String,
    pub(crate) qmgr: QmgrAttributes,
    pub(crate) queues: QueueTable,
    pub(crate) channels: BTreeMap<String, ChannelDefinition>,
    pub(crate) listeners: BTreeMap<String, ListenerDefinition>,
    /// Channel authentication records: kept with the definitions, decided on by the
    /// server when a connection arrives.
    pub(crate) chlauth: ferry_security::chlauth::ChlauthRules,
    /// Authentication information objects by name (CONNAUTH names one).
    pub(crate) authinfos: BTreeMap<String, ferry_objects::AuthInfoDefinition>,
    /// Process definitions by name (DEFINE PROCESS), SYSTEM.DEFAULT.PROCESS included.
    pub(crate) processes: BTreeMap<String, ferry_objects::ProcessDefinition>,
    /// Triggering state: when each queue last made a trigger message (`crate::trigger`).
    pub(crate) triggers: crate::trigger::TriggerState,
    /// Namelists by name (DEFINE NAMELIST): cluster objects' CLUSNL and REPOSNL name them.
    pub(crate) namelists: BTreeMap<String, ferry_objects::NamelistDefinition>,
    /// Topic objects by name (DEFINE TOPIC), SYSTEM.DEFAULT.TOPIC included.
    pub(crate) topics: BTreeMap<String, ferry_objects::TopicDefinition>,
    /// The topic objects of the topic tree by topic string (every one but
    /// SYSTEM.DEFAULT.TOPIC, the template): kept with `topics` by `insert_topic` and
    /// `remove_topic`, so pub/sub finds a node's object in O(log n).
    pub(crate) topic_strings: BTreeMap<String, String>,
    /// What each topic string published on resolves to (attributes, blocking node), so a
    /// publication pays one lookup; emptied whenever a topic object changes.
    pub(crate) topic_paths: std::cell::RefCell<
        std::collections::HashMap<String, std::rc::Rc<crate::pubsub::topic_attributes::TopicPath>>,
    >,
    /// Authority records (SET AUTHREC): kept with the definitions.
    pub(crate) authority_records: ferry_security::oam::AuthorityRecords,
    /// Who users are, for authority checks (`None`: nothing is checked).
    pub(crate) principals: Option<std::rc::Rc<dyn crate::authorization::PrincipalDirectory>>,
    /// The creators of temporary dynamic queues, who hold every authority on them.
    pub(crate) dynamic_creators: BTreeMap<String, String>,
    pub(crate) conns: BTreeMap<ConnId, Connection>,
    /// Subscriptions (MQSUB, durable ones restored from the catalogue).
    pub(crate) subscriptions: crate::pubsub::subscription::SubscriptionTable,
    next_conn: u64,
    pub(crate) ids: IdGenerator,
    pub(crate) next_token: u64,
    /// Wait deadlines: (deadline ms, token, connection).
    pub(crate) deadlines: BTreeSet<(u64, u64, ConnId)>,
    pub(crate) state: RunState,
    pub(crate) dyn_seed: u64,
    /// True when persistent work produces recovery-log records.
    pub(crate) logging: bool,
    /// The next unit-of-work id for log records (unique across restarts: seeded from
    /// the start time like message ids, and above every id recovered).
    pub(crate) next_uow: u64,
    /// Async consumers and their held deliveries.
    pub(crate) consumers: ConsumerTable,
    /// Per-queue memory for message bodies (qm.ini TuningParameters; `crate::body`).
    pub(crate) buffers: BufferSizes,
    /// A queue may hold more non-persistent bodies than its buffer: time for a spill.
    pub(crate) spill_hint: bool,
    /// PutDate/PutTime of the last put, reused within its hundredth of a second.
    pub(crate) put_stamp: PutStamp,
    /// Queues whose backed-out message could be moved neither to BOQNAME nor to
    /// DEADQ, already reported ([`Effect::BackoutRequeueFailed`], once per queue).
    pub(crate) backout_requeue_reported: BTreeSet<QueueId>,
    /// Queues whose store holds expired messages, met by a get or consumer during the
    /// current call, that ask for an expiration report (`crate::report`).
    pub(crate) expired_to_report: Vec<QueueId>,
    /// Backed-out messages waiting out their queue's BODELAY.
    pub(crate) redelivery: RedeliverySchedule,
    /// What this queue manager knows of its clusters (`crate::cluster`).
    pub(crate) cluster: crate::cluster::repository::ClusterRepository,
    /// The states of the cluster-sender channels, by queue manager, as the server
    /// reports them (for the workload algorithm).
    pub(crate) cluster_channel_states: crate::cluster::ChannelStates,
    /// BIND_ON_GROUP handles in a logical message group: the instance the group goes to.
    pub(crate) cluster_groups: BTreeMap<(ConnId, Hobj), crate::cluster::ClusterChoice>,
    /// The transmission queue each cluster-sender switched to (`crate::cluster::xmit_queue`).
    pub(crate) cluster_xmit_qs: BTreeMap<String, String>,
    /// Statistics (STATMQI): MQI calls counted as they happen (`crate::statistics`).
    pub(crate) mqi_stats: ferry_monitoring::MqiCounters,
    /// MQINQ's counts (succeeded, failed): MQINQ takes `&self`.
    pub(crate) inq_stats: std::cell::Cell<(u64, u64)>,
    /// The put being counted: (to a topic, persistent, data bytes), set by
    /// `put_uncounted` for the STATMQI counts its caller makes.
    pub(crate) last_put: (bool, bool, usize),
}

impl QueueManager {
    /// A queue manager named `name` with no objects (see
    /// [`QueueManager::define_system_objects`]).
    pub fn new(name: &str, qmgr: QmgrAttributes, now: Timestamp) -> Self {
        QueueManager {
            name: name.to_string(),
            qmgr,
            queues: QueueTable::default(),
            channels: BTreeMap::new(),
            listeners: BTreeMap::new(),
            chlauth: Default::default(),
            authinfos: BTreeMap::new(),
            processes: BTreeMap::new(),
            triggers: Default::default(),
            namelists: BTreeMap::new(),
            topics: BTreeMap::new(),
            topic_strings: BTreeMap::new(),
            topic_paths: Default::default(),
            authority_records: Default::default(),
            principals: None,
            dynamic_creators: BTreeMap::new(),
            conns: BTreeMap::new(),
            subscriptions: Default::default(),
            next_conn: 1,
            ids: IdGenerator::new(name, now),
            next_token: 1,
            deadlines: BTreeSet::new(),
            state: RunState::Running,
            dyn_seed: now.0.saturating_mul(1000),
            logging: false,
            next_uow: now.0.saturating_mul(1000),
            consumers: ConsumerTable::default(),
            buffers: BufferSizes::default(),
            spill_hint: false,
            put_stamp: PutStamp::default(),
            backout_requeue_reported: BTreeSet::new(),
            expired_to_report: Vec::new(),
            redelivery: RedeliverySchedule::default(),
            cluster: Default::default(),
            cluster_channel_states: Default::default(),
            cluster_groups: BTreeMap::new(),
            cluster_xmit_qs: BTreeMap::new(),
            mqi_stats: Default::default(),
            inq_stats: Default::default(),
            last_put: (false, false, 0),
        }
    }

    /// Sets the per-queue memory buffers (DefaultQBufferSize, DefaultPQBufferSize).
    pub fn set_buffer_sizes(&mut self, buffers: BufferSizes) {
        self.buffers = buffers;
    }

    /// The per-queue memory buffers in force.
    pub fn buffer_sizes(&self) -> BufferSizes {
        self.buffers
    }

    /// Turns recovery-log records on or off (off by default, so a server without a log
    /// is unaffected). With logging on, every change to persistent state pushes a
    /// [`crate::LogRecord`] into the call's [`Effects`]; see the crate documentation.
    pub fn set_logging(&mut self, on: bool) {
        self.logging = on;
    }

    /// True when persistent work produces log records.
    pub fn logging(&self) -> bool {
        self.logging
    }

    /// A queue manager restarted with the definitions saved in `catalogue`.
    pub fn from_catalogue(name: &str, catalogue: Catalogue, now: Timestamp) -> Self {
        let mut qm = Self::new(name, catalogue.qmgr, now);
        for q in catalogue.queues {
            if qm.queues.lookup(&q.name).is_none() {
                qm.queues.insert(q);
            }
        }
        for c in catalogue.channels {
            qm.channels.insert(c.name.clone(), c);
        }
        for l in catalogue.listeners {
            qm.listeners.insert(l.name.clone(), l);
        }
        qm.chlauth = catalogue.chlauth;
        qm.authority_records = catalogue.authority_records;
        for a in catalogue.authinfos {
            qm.authinfos.insert(a.name.clone(), a);
        }
        for p in catalogue.processes {
            qm.processes.insert(p.name.clone(), p);
        }
        for n in catalogue.namelists {
            qm.namelists.insert(n.name.clone(), n);
        }
        for t in catalogue.topics {
            qm.insert_topic(t);
        }
        qm
    }

    /// The definitions to save: queues (not temporary dynamic ones), channels,
    /// listeners, security records, authentication information, process definitions and
    /// topic objects, and
    /// the queue manager's attributes.
    pub fn catalogue(&self) -> Catalogue {
        Catalogue {
            qmgr: self.qmgr.clone(),
            queues: self
                .queues
                .iter()
                .filter(|(_, e)| !e.is_temporary())
                .map(|(_, e)| e.def.clone())
                .collect(),
            channels: self.channels.values().cloned().collect(),
            listeners: self.listeners.values().cloned().collect(),
            chlauth: self.chlauth.clone(),
            authinfos: self.authinfos.values().cloned().collect(),
            processes: self.processes.values().cloned().collect(),
            namelists: self.namelists.values().cloned().collect(),
            topics: self.topics.values().cloned().collect(),
            authority_records: self.authority_records.clone(),
            subscriptions: self.durable_subscriptions(),
        }
    }

    /// The queue manager's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Running, quiescing or stopping.
    pub fn run_state(&self) -> RunState {
        self.state
    }

    /// Fails with 2162 when stopping, 2161 when quiescing and `fail_if_quiescing`.
    pub(crate) fn check_running(&self, fail_if_quiescing: bool) -> Result<(), MqError> {
        match self.state {
            RunState::Stopping => Err(ReasonCode::QMgrStopping.into()),
            RunState::Quiescing if fail_if_quiescing => Err(ReasonCode::QMgrQuiescing.into()),
            _ => Ok(()),
        }
    }

    /// MQCONN: a new connection (2161 while quiescing, 2162 while stopping; 2035 when
    /// authorities are checked and the user lacks CONNECT on the queue manager).
    pub fn connect(
        &mut self,
        info: ConnectionInfo,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<ConnId, MqError> {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> Result<ConnId, MqError> {
            self.check_running(true)?;
            let principal = self.connect_principal(&info.user_id, fx)?;
            let id = ConnId(self.next_conn);
            self.next_conn += 1;
            let mut connection = Connection::new(info, now.0);
            connection.principal = principal;
            self.conns.insert(id, connection);
            Ok(id)
        })();
        self.mqi_stats
            .note_result(&result, |m| &mut m.conns, |m| &mut m.conns_failed);
        self.debug_check();
        result
    }

    /// MQDISC, or the end of a broken connection (`normal == false`): a pending wait is
    /// cancelled silently, every consumer ends (its held messages return with
    /// BackoutCount + 1, [`Settlement::DEFAULT_OUTCOME`]), the unit of work is committed
    /// (normal) or backed out (broken), every handle is closed (temporary dynamic queues
    /// it created are deleted).
    pub fn disconnect(&mut self, conn: ConnId, normal: bool, now: Timestamp, fx: &mut Effects) {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        (|| {
            if !self.conns.contains_key(&conn) {
                return;
            }
            self.cancel_wait(conn);
            let consumers = self.consumers_of(conn, None);
            self.end_consumers(&consumers, Settlement::DEFAULT_OUTCOME, now, fx);
            // A unit of work the queue manager backed out is not committed by MQDISC.
            let backed_out = self.conns.get(&conn).is_some_and(|c| c.uow.backed_out);
            if normal && !backed_out {
                self.commit_uow(conn, now, fx);
            } else {
                self.backout_uow(conn, now, fx);
            }
            let hobjs: Vec<Hobj> = self
                .conns
                .get(&conn)
                .map(|c| {
                    c.handles
                        .iter()
                        .enumerate()
                        .filter(|(_, h)| h.is_some())
                        .map(|(i, _)| Hobj(i as i32 + 1))
                        .collect()
                })
                .unwrap_or_default();
            for h in hobjs {
                self.close_handle(conn, h, now, fx);
            }
            self.conns.remove(&conn);
            self.mqi_stats.discs += 1;
        })();
        self.debug_check();
    }

    /// Controlled stop: waits with FAIL_IF_QUIESCING end 2161; new connections fail
    /// 2161; calls with FAIL_IF_QUIESCING fail 2161; everything else goes on.
    pub fn quiesce(&mut self, _now: Timestamp, fx: &mut Effects) {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        (|| {
            if self.state == RunState::Running {
                self.state = RunState::Quiescing;
            }
            let victims: Vec<ConnId> = self
                .conns
                .iter()
                .filter(|(_, c)| {
                    c.pending
                        .is_some_and(|p| p.gmo.options.contains(GetOptionFlags::FAIL_IF_QUIESCING))
                })
                .map(|(id, _)| *id)
                .collect();
            for c in victims {
                self.fail_wait(c, ReasonCode::QMgrQuiescing, fx);
            }
        })();
        self.debug_check();
    }

    /// Immediate stop: every pending wait ends 2162 and every later call fails 2162
    /// (disconnect still cleans up).
    pub fn stop(&mut self, _now: Timestamp, fx: &mut Effects) {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        (|| {
            self.state = RunState::Stopping;
            let victims: Vec<ConnId> = self
                .conns
                .iter()
                .filter(|(_, c)| c.pending.is_some())
                .map(|(id, _)| *id)
                .collect();
            for c in victims {
                self.fail_wait(c, ReasonCode::QMgrStopping, fx);
            }
        })();
        self.debug_check();
    }

    /// The earliest wait expiry or end of a redelivery delay: the server arms one timer
    /// for it and then calls [`QueueManager::expire_waits`].
    pub fn next_deadline(&self) -> Option<Timestamp> {
        let wait = self.deadlines.first().map(|(d, _, _)| *d);
        let redelivery = self.redelivery.next_due();
        match (wait, redelivery) {
            (Some(w), Some(r)) => Some(Timestamp(w.min(r))),
            (w, r) => w.or(r).map(Timestamp),
        }
    }

    /// Completes every wait whose interval is over at `now` with 2033, after offering
    /// the backed-out messages whose redelivery delay is over (which may satisfy some).
    pub fn expire_waits(&mut self, now: Timestamp, fx: &mut Effects) {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        (|| {
            self.release_due_redeliveries(now, fx);
            while let Some(&(d, token, conn)) = self.deadlines.first() {
                if d > now.0 {
                    break;
                }
                self.deadlines.remove(&(d, token, conn));
                let matches = self
                    .conns
                    .get(&conn)
                    .and_then(|c| c.pending)
                    .is_some_and(|p| p.token == token);
                if matches {
                    self.fail_wait(conn, ReasonCode::NoMsgAvailable, fx);
                }
            }
        })();
        self.debug_check();
    }

    /// Number of GETs waiting, over all queues.
    pub fn waiting_gets(&self) -> usize {
        self.conns.values().filter(|c| c.pending.is_some()).count()
    }

    /// Removes `conn`'s pending wait from its queue and the deadlines; returns it.
    pub(crate) fn cancel_wait(&mut self, conn: ConnId) -> Option<PendingGet> {
        let p = self.conns.get_mut(&conn)?.pending.take()?;
        if let Some(d) = p.deadline {
            self.deadlines.remove(&(d, p.token, conn));
        }
        if let Some(lq) = self.queues.local_mut(p.queue) {
            if p.group.is_some() {
                lq.group_waiters.remove(p.token);
            } else {
                lq.waiters.remove(p.token, &p.criteria);
            }
        }
        Some(p)
    }

    /// Ends `conn`'s pending wait with `reason`.
    pub(crate) fn fail_wait(&mut self, conn: ConnId, reason: ReasonCode, fx: &mut Effects) {
        if let Some(p) = self.cancel_wait(conn) {
            fx.push(Effect::GetCompleted {
                conn,
                hobj: p.hobj,
                result: Err(GetError::from(MqError::from(reason))),
                needs_durable: false,
            });
        }
    }
}
