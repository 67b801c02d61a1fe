//! The simulation loop: one seed drives applications, faults, crashes and restarts; the
//! model ([`crate::model`]) is checked after every step and every restart.

use crate::durability::{Durability, HeldReply, MayRun};
use crate::model::{Model, Msg, QUEUES, REPLY, REQUEST};
use crate::node::{Disk, Node, Stop};
use crate::rng::Rng;
use bytes::Bytes;
use ferry_engine::{
    ConnId, ConnectionInfo, Effects, GetOutcome, Hobj, QueueManager, Timestamp, Young,
};
use ferry_mqi::descriptor::{persistence, NONE_ID};
use ferry_mqi::{
    GetOptionFlags, GetOptions, MessageDescriptor, ObjectDescriptor, OpenOptions, PutOptionFlags,
    PutOptions, ReasonCode,
};
use ferry_objects::{QmgrAttributes, QueueDefinition, QueueType};
use ferry_store::{CrashModel, FaultPlan, LogConfig, WriteIntegrity};
use std::collections::{BTreeSet, VecDeque};
use std::fmt;
use std::time::Duration;

/// The simulated clock starts here (ms since the epoch).
const T0: u64 = 1_704_067_200_000;
/// Steps kept for a failure's report.
const TRACE: usize = 40;
/// The largest message body the applications put (a message's id, 8 bytes), for the log
/// room a call must find before it runs.
const LARGEST_PUT: usize = 8;

/// What one seed's run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Steps run.
    pub steps: u64,
    /// MQI calls made.
    pub calls: u64,
    /// Replies released only once the log was durable past their records.
    pub held_replies: u64,
    /// Crashes (power loss, or the log or a queue file failing) and restarts.
    pub restarts: u64,
    /// Faults armed on a device.
    pub faults: u64,
    /// Checkpoints taken.
    pub checkpoints: u64,
    /// Replies found by CorrelId.
    pub replies_found: u64,
    /// Calls refused for want of log room.
    pub refused: u64,
}

/// A failed run: the seed replays it exactly.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The seed.
    pub seed: u64,
    /// The step it failed at.
    pub step: u64,
    /// The steps the run was to take.
    pub steps: u64,
    /// What was wrong.
    pub message: String,
    /// The last steps before it.
    pub trace: Vec<String>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "simulation seed {} failed at step {}: {}",
            self.seed, self.step, self.message
        )?;
        writeln!(f, "last steps:")?;
        for t in &self.trace {
            writeln!(f, "  {t}")?;
        }
        write!(
            f,
            "replay: FERRY_SIM_SEED={} FERRY_SIM_STEPS={} cargo test -p ferry-simulation --test simulation -- --nocapture",
            self.seed, self.steps
        )
    }
}

/// Why a step ended early.
#[derive(Debug)]
enum Halt {
    /// The queue manager must stop (power lost, the log or a queue file failed): the
    /// simulation restarts it.
    Stop(Stop),
    /// Ferry broke a promise: the run fails.
    Broken(String),
}

impl From<Stop> for Halt {
    fn from(s: Stop) -> Self {
        Halt::Stop(s)
    }
}

/// The topic the applications publish on: two durable subscriptions, made before the
/// queue manager first starts, put its copies on SIM.REQUEST and SIM.DATA.
const TOPIC: &str = "sim/publications";

/// One application: a connection with a handle on every queue, and one publishing on
/// [`TOPIC`].
#[derive(Debug)]
struct App {
    conn: ConnId,
    handles: [Hobj; 3],
    topic: Hobj,
    /// Waiting for a reply the log must make durable first.
    blocked: bool,
    /// The MsgId of its request whose reply it has not got yet.
    awaiting: Option<u64>,
}

/// Runs `steps` steps under `seed`; a panic in the engine or the store (a debug
/// assertion) is a failure too.
pub fn run(seed: u64, steps: u64) -> Result<Summary, Failure> {
    let trace = std::sync::Arc::new(std::sync::Mutex::new(VecDeque::new()));
    let t = trace.clone();
    let step = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let s = step.clone();
    let r = std::panic::catch_unwind(move || Sim::new(seed, t, s)?.run(steps));
    let trace: Vec<String> = trace
        .lock()
        .map(|t| t.iter().cloned().collect())
        .unwrap_or_default();
    let step = step.load(std::sync::atomic::Ordering::Relaxed);
    match r {
        Ok(Ok(summary)) => Ok(summary),
        Ok(Err(message)) => Err(Failure {
            seed,
            step,
            steps,
            message,
            trace,
        }),
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".into());
            Err(Failure {
                seed,
                step,
                steps,
                message: format!("panicked: {message}"),
                trace,
            })
        }
    }
}

type Trace = std::sync::Arc<std::sync::Mutex<VecDeque<String>>>;

struct Sim {
    rng: Rng,
    now: u64,
    disk: Disk,
    node: Node,
    apps: Vec<App>,
    checker: App,
    model: Model,
    durability: Durability,
    /// Records between checkpoints, as the seed picked.
    checkpoint_every: u64,
    /// The log position of the last checkpoint record made durable.
    last_checkpoint: u64,
    call: u64,
    /// Calls whose reply is held and which changed the durable state.
    changed: BTreeSet<u64>,
    summary: Summary,
    trace: Trace,
    step: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

fn id_bytes(id: u64) -> [u8; 24] {
    if id == 0 {
        return NONE_ID;
    }
    let mut b = [0u8; 24];
    b[..3].copy_from_slice(b"SIM");
    b[16..].copy_from_slice(&id.to_be_bytes());
    b
}

fn id_of(b: &[u8; 24]) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[16..]);
    u64::from_be_bytes(x)
}

fn msg_of(md: &MessageDescriptor) -> Msg {
    Msg {
        id: id_of(&md.msg_id),
        persistent: md.is_persistent(),
        correl: if md.correl_id == NONE_ID {
            0
        } else {
            id_of(&md.correl_id)
        },
    }
}

fn connect(qm: &mut QueueManager, now: Timestamp, fx: &mut Effects) -> Result<App, String> {
    let info = ConnectionInfo {
        application_name: "ferry-simulation".into(),
        channel: String::new(),
        connection_name: "simulated".into(),
        user_id: "sim".into(),
        pid: None,
    };
    let conn = qm
        .connect(info, now, fx)
        .map_err(|e| format!("connect: {e}"))?;
    let mut handles = [Hobj(0); 3];
    for (i, q) in QUEUES.iter().enumerate() {
        let od = ObjectDescriptor::queue(q).map_err(|e| e.to_string())?;
        let o = OpenOptions::INPUT_SHARED | OpenOptions::OUTPUT | OpenOptions::BROWSE;
        handles[i] = qm
            .open(conn, &od, o, now, fx)
            .map_err(|e| format!("open {q}: {e}"))?
            .hobj;
    }
    let topic = qm
        .open_topic(conn, "", TOPIC, OpenOptions::OUTPUT, fx)
        .map_err(|e| format!("open topic {TOPIC}: {e}"))?
        .hobj;
    fx.clear();
    Ok(App {
        conn,
        handles,
        topic,
        blocked: false,
        awaiting: None,
    })
}

/// The two durable subscriptions to [`TOPIC`], on SIM.REQUEST and SIM.DATA, with a
/// blank SubCorrelId so copies carry no CorrelId (the model's plain messages).
fn subscribe_durably(
    qm: &mut QueueManager,
    now: Timestamp,
    fx: &mut Effects,
) -> Result<(), String> {
    use ferry_mqi::subscription::{SubscribeOptions, SubscriptionDescriptor};
    let info = ConnectionInfo {
        user_id: "sim".into(),
        ..ConnectionInfo::default()
    };
    let conn = qm
        .connect(info, now, fx)
        .map_err(|e| format!("connect: {e}"))?;
    for (n, q) in [QUEUES[REQUEST], QUEUES[2]].into_iter().enumerate() {
        let od = ObjectDescriptor::queue(q).map_err(|e| e.to_string())?;
        let hobj = qm
            .open(conn, &od, OpenOptions::OUTPUT, now, fx)
            .map_err(|e| format!("open {q}: {e}"))?
            .hobj;
        let sd = SubscriptionDescriptor {
            options: SubscribeOptions::CREATE
                | SubscribeOptions::DURABLE
                | SubscribeOptions::SET_CORREL_ID,
            object_string: TOPIC.into(),
            sub_name: format!("SIM.SUB.{n}"),
            sub_correl_id: NONE_ID,
            ..SubscriptionDescriptor::default()
        };
        let s = qm
            .subscribe(conn, &sd, Some(hobj), None, now, fx)
            .map_err(|e| format!("subscribe: {e}"))?;
        qm.close(conn, s.hsub, ferry_mqi::CloseOptions::KEEP_SUB, now, fx)
            .map_err(|e| format!("close: {e}"))?;
    }
    qm.disconnect(conn, true, now, fx);
    fx.clear();
    Ok(())
}

impl Sim {
    fn new(
        seed: u64,
        trace: Trace,
        step: std::sync::Arc<std::sync::atomic::AtomicU64>,
    ) -> Result<Sim, String> {
        let mut rng = Rng::new(seed);
        let atomic = rng.chance(25);
        let extents = 3 + rng.below(3) as u32;
        let config = LogConfig {
            file_pages: 8 + rng.below(9) as u32,
            extents,
            primary_extents: extents - 1,
            buffer_pages: 4 + rng.below(12) as u32,
            write_integrity: if atomic {
                WriteIntegrity::SingleWrite
            } else {
                WriteIntegrity::TripleWrite
            },
            slow_io_threshold: Duration::from_secs(3600),
        };
        let model = CrashModel {
            atomic_pages: atomic,
            survive_percent: rng.below(101) as u32,
        };
        let now = Timestamp(T0);
        let mut qm = QueueManager::new(crate::node::QM_NAME, QmgrAttributes::default(), now);
        let mut fx = Effects::new();
        for q in QUEUES {
            qm.define_queue(
                QueueDefinition::new(q, QueueType::Local),
                false,
                now,
                &mut fx,
            )
            .map_err(|e| format!("define {q}: {e}"))?;
        }
        subscribe_durably(&mut qm, now, &mut fx)?;
        let mut disk = Disk::new(seed, config, model, qm.catalogue());
        let mut node = Node::create(&mut disk, now)?;
        let apps_n = 2 + rng.below(5) as usize;
        let mut apps = Vec::new();
        for _ in 0..apps_n {
            apps.push(connect(&mut node.qm, now, &mut node.fx)?);
        }
        let checker = connect(&mut node.qm, now, &mut node.fx)?;
        let checkpoint_every = 10 + rng.below(60);
        let durability = Durability::new(
            node.ring_bytes(),
            node.log.durable_lsn().0,
            checkpoint_every,
            LARGEST_PUT,
        );
        Ok(Sim {
            rng,
            now: T0,
            disk,
            node,
            apps,
            checker,
            model: Model::new(apps_n),
            durability,
            checkpoint_every,
            last_checkpoint: 0,
            call: 0,
            changed: BTreeSet::new(),
            summary: Summary::default(),
            trace,
            step,
        })
    }

    fn note(&self, s: String) {
        if let Ok(mut t) = self.trace.lock() {
            if t.len() == TRACE {
                t.pop_front();
            }
            t.push_back(s);
        }
    }

    fn t(&self) -> Timestamp {
        Timestamp(self.now)
    }

    fn run(&mut self, steps: u64) -> Result<Summary, String> {
        for step in 0..steps {
            self.step.store(step, std::sync::atomic::Ordering::Relaxed);
            self.now += self.rng.below(5);
            match self.step_once() {
                Ok(()) => {}
                Err(Halt::Stop(Stop(why))) => {
                    self.note(format!("queue manager stops: {why}"));
                    self.restart()?;
                }
                Err(Halt::Broken(why)) => return Err(why),
            }
            if self.durability.checkpoint_due() {
                match self.checkpoint() {
                    Ok(()) => {}
                    Err(Halt::Stop(Stop(why))) => {
                        self.note(format!("queue manager stops in a checkpoint: {why}"));
                        self.restart()?;
                    }
                    Err(Halt::Broken(why)) => return Err(why),
                }
            }
            self.check_live(step % 16 == 0)?;
            self.summary.steps += 1;
        }
        Ok(self.summary.clone())
    }

    /// Takes the checkpoint the durability decisions asked for, in line.
    fn checkpoint(&mut self) -> Result<(), Halt> {
        if !self.durability.checkpoint_starting() {
            return Ok(());
        }
        self.note("checkpoint".into());
        self.summary.checkpoints += 1;
        let young = if self.rng.chance(20) {
            Young::InQueueFiles
        } else {
            Young::InImage
        };
        let taken = self.node.checkpoint(&mut self.disk, young)?;
        if let Some((_, record)) = taken {
            // The checkpoint flushed its record: it is the log's last durable one.
            self.last_checkpoint = record.0;
        }
        self.durability.checkpoint_taken(
            Duration::from_millis(self.now - T0),
            taken.map(|(restart, record)| (restart.0, record.0)),
        );
        self.released();
        Ok(())
    }

    /// Releases the replies the log's durable position now covers.
    fn released(&mut self) {
        let durable = self.node.log.durable_lsn().0;
        for h in self.durability.flushed(durable, self.last_checkpoint) {
            self.apps[h.app].blocked = false;
            if self.changed.remove(&h.call) {
                self.model.acknowledged(h.call);
            }
        }
    }

    fn step_once(&mut self) -> Result<(), Halt> {
        let roll = self.rng.below(100);
        let free: Vec<usize> = (0..self.apps.len())
            .filter(|a| !self.apps[*a].blocked)
            .collect();
        if roll < 2 {
            self.note("power lost".into());
            return Err(Stop("power lost".into()).into());
        }
        if roll < 4 {
            self.arm_fault();
            return Ok(());
        }
        if roll < 14 || free.is_empty() {
            self.note("flush".into());
            self.node.flush()?;
            self.released();
            return Ok(());
        }
        let app = *self.rng.pick(&free);
        let may_run = match self.durability.room(self.node.log.room()) {
            MayRun::Yes => true,
            MayRun::AfterCheckpoint => {
                self.checkpoint()?;
                self.durability.room_after_checkpoint(self.node.log.room())
            }
            MayRun::No => false,
        };
        if !may_run {
            self.summary.refused += 1;
            self.note(format!("app {app}: refused, log full"));
            return Ok(());
        }
        self.mqi(app)
    }

    fn arm_fault(&mut self) {
        self.summary.faults += 1;
        let mut plan = FaultPlan::default();
        match self.rng.below(5) {
            0 => plan.short_writes = true,
            1 => plan.fail_sync_after = Some(self.rng.below(4)),
            2 => plan.enospc_write_after = Some(self.rng.below(4)),
            3 => plan.power_cut_after = Some(self.rng.below(8)),
            _ => {
                // ENOSPC in a queue file instead of the log.
                plan.enospc_write_after = Some(self.rng.below(4));
                let devs: Vec<_> = self.disk.queue_files.values().cloned().collect();
                if !devs.is_empty() {
                    let d = self.rng.pick(&devs).clone();
                    self.note(format!("fault armed on a queue file: {plan:?}"));
                    d.set_faults(plan);
                }
                return;
            }
        }
        self.note(format!("fault armed on the log: {plan:?}"));
        self.disk.log.set_faults(plan);
    }

    /// A crash and a restart from the disk, then the recovered state checked.
    fn restart(&mut self) -> Result<(), String> {
        self.summary.restarts += 1;
        self.disk.crash();
        self.changed.clear();
        self.now += 1000;
        let now = self.t();
        self.node = Node::start(&mut self.disk, now).map_err(|e| format!("restart failed: {e}"))?;
        // A new process: its decisions start afresh from the recovered log.
        self.last_checkpoint = 0;
        self.durability = Durability::new(
            self.node.ring_bytes(),
            self.node.log.durable_lsn().0,
            self.checkpoint_every,
            LARGEST_PUT,
        );
        let mut apps = Vec::new();
        for _ in 0..self.apps.len() {
            apps.push(connect(&mut self.node.qm, now, &mut self.node.fx)?);
        }
        self.apps = apps;
        self.checker = connect(&mut self.node.qm, now, &mut self.node.fx)?;
        let recovered = [self.browse(0)?, self.browse(1)?, self.browse(2)?];
        self.note(format!(
            "restarted: {} {} {} messages",
            recovered[0].len(),
            recovered[1].len(),
            recovered[2].len()
        ));
        self.model.recovered(recovered, self.call)?;
        self.node.qm.check_invariants();
        Ok(())
    }

    /// Every available message on queue `q`, in get order, as a browse sees them.
    fn browse(&mut self, q: usize) -> Result<Vec<Msg>, String> {
        let mut out = Vec::new();
        let mut opts = GetOptionFlags::BROWSE_FIRST;
        loop {
            let gmo = GetOptions {
                options: opts | GetOptionFlags::NO_SYNCPOINT,
                wait_interval: 0,
                ..GetOptions::default()
            };
            let (c, h) = (self.checker.conn, self.checker.handles[q]);
            let md = MessageDescriptor::default();
            let now = self.t();
            let r = self
                .node
                .qm
                .get(c, h, &md, &gmo, 1 << 20, now, &mut self.node.fx);
            if !self.node.fx.log_records().is_empty() {
                return Err("a browse logged something".into());
            }
            self.node.fx.clear();
            match r {
                GetOutcome::Done(Ok(m)) => out.push(msg_of(&m.md)),
                GetOutcome::Done(Err(e)) if e.reason() == ReasonCode::NoMsgAvailable => break,
                other => return Err(format!("browse of {}: {other:?}", QUEUES[q])),
            }
            opts = GetOptionFlags::BROWSE_NEXT;
        }
        Ok(out)
    }

    /// After every step: the engine's own invariants, CURDEPTH and UNCOM against the
    /// model, and (with `full`) every queue's visible messages against the model's.
    fn check_live(&mut self, full: bool) -> Result<(), String> {
        self.node.qm.check_invariants();
        let now = self.t();
        for (q, name) in QUEUES.iter().enumerate() {
            let st = self.node.qm.queue_status(name, now).ok_or("queue gone")?;
            if (st.current_depth, st.uncommitted)
                != (self.model.depth(q), self.model.uncommitted(q))
            {
                return Err(format!(
                    "{name}: CURDEPTH {} UNCOM {}, model {} {}",
                    st.current_depth,
                    st.uncommitted,
                    self.model.depth(q),
                    self.model.uncommitted(q)
                ));
            }
            if full {
                let seen: Vec<u64> = self.browse(q)?.iter().map(|m| m.id).collect();
                let want: Vec<u64> = self.model.available[q].values().map(|m| m.id).collect();
                if seen != want {
                    return Err(format!("{name}: visible {seen:?}, model {want:?}"));
                }
            }
        }
        Ok(())
    }

    /// Starts call number `call` for `app`.
    fn begin(&mut self) {
        self.call += 1;
        self.summary.calls += 1;
    }

    /// Ends the call just made by `app` as the server does: its records appended, its
    /// reply held until they are durable when the engine says so.
    fn end(&mut self, app: usize) -> Result<(), Halt> {
        let needs = self.node.fx.reply_needs_durable();
        let records = self.node.fx.log_records().len() as u64;
        let changed = self.model.call_done(self.call);
        let end = self.node.log_effects()?;
        self.durability.appended(records);
        let held = match end {
            Some(until) if needs => self.durability.hold(HeldReply {
                app,
                call: self.call,
                until: until.0,
            }),
            _ => false,
        };
        if held {
            self.summary.held_replies += 1;
            self.apps[app].blocked = true;
            if changed {
                self.changed.insert(self.call);
            }
        } else if changed {
            // The application has its answer now: the change is acknowledged.
            self.model.acknowledged(self.call);
        }
        Ok(())
    }

    fn put(&mut self, app: usize, q: usize, msg: Msg, sync: bool) -> Result<(), Halt> {
        self.begin();
        let mut md = MessageDescriptor {
            msg_id: id_bytes(msg.id),
            correl_id: id_bytes(msg.correl),
            persistence: if msg.persistent {
                persistence::PERSISTENT
            } else {
                persistence::NOT_PERSISTENT
            },
            ..MessageDescriptor::default()
        };
        let flags = if sync {
            PutOptionFlags::SYNCPOINT
        } else {
            PutOptionFlags::NO_SYNCPOINT
        };
        let (c, h, now) = (self.apps[app].conn, self.apps[app].handles[q], self.t());
        let body = Bytes::copy_from_slice(&msg.id.to_be_bytes());
        let r = self.node.qm.put(
            c,
            h,
            &mut md,
            &PutOptions::new(flags),
            body,
            now,
            &mut self.node.fx,
        );
        self.note(format!(
            "app {app}: put {msg:?} on {} sync {sync}: {r:?}",
            QUEUES[q]
        ));
        if let Err(e) = r {
            return Err(Halt::Broken(format!("put failed: {e}")));
        }
        self.model.put(app, q, msg, sync);
        self.end(app)
    }

    /// A publication on [`TOPIC`]: one copy on each subscription's queue, in the model
    /// two puts of the same message.
    fn publish(&mut self, app: usize, msg: Msg, sync: bool) -> Result<(), Halt> {
        self.begin();
        let mut md = MessageDescriptor {
            msg_id: id_bytes(msg.id),
            persistence: if msg.persistent {
                persistence::PERSISTENT
            } else {
                persistence::NOT_PERSISTENT
            },
            ..MessageDescriptor::default()
        };
        let flags = if sync {
            PutOptionFlags::SYNCPOINT
        } else {
            PutOptionFlags::NO_SYNCPOINT
        };
        let (c, h, now) = (self.apps[app].conn, self.apps[app].topic, self.t());
        let body = Bytes::copy_from_slice(&msg.id.to_be_bytes());
        let r = self.node.qm.put(
            c,
            h,
            &mut md,
            &PutOptions::new(flags),
            body,
            now,
            &mut self.node.fx,
        );
        self.note(format!("app {app}: publish {msg:?} sync {sync}: {r:?}"));
        if let Err(e) = r {
            return Err(Halt::Broken(format!("publish failed: {e}")));
        }
        self.model.put(app, REQUEST, msg, sync);
        self.model.put(app, 2, msg, sync);
        self.end(app)
    }

    /// A get from `q` (by CorrelId when `correl` is not 0): the model predicts it.
    fn get(&mut self, app: usize, q: usize, correl: u64, sync: bool) -> Result<Option<Msg>, Halt> {
        self.begin();
        let md = MessageDescriptor {
            correl_id: id_bytes(correl),
            ..MessageDescriptor::default()
        };
        let gmo = GetOptions {
            options: if sync {
                GetOptionFlags::SYNCPOINT
            } else {
                GetOptionFlags::NO_SYNCPOINT
            },
            wait_interval: 0,
            ..GetOptions::default()
        };
        let (c, h, now) = (self.apps[app].conn, self.apps[app].handles[q], self.t());
        let r = self
            .node
            .qm
            .get(c, h, &md, &gmo, 1 << 20, now, &mut self.node.fx);
        let want = self.model.expect_get(q, correl);
        let got = match r {
            GetOutcome::Done(Ok(m)) => Some(msg_of(&m.md)),
            GetOutcome::Done(Err(e)) if e.reason() == ReasonCode::NoMsgAvailable => None,
            other => return Err(Halt::Broken(format!("get answered {other:?}"))),
        };
        self.note(format!(
            "app {app}: get from {} correl {correl} sync {sync}: {got:?}",
            QUEUES[q]
        ));
        if got != want.map(|(_, m)| m) {
            return Err(Halt::Broken(format!(
                "get returned {got:?}, model expects {want:?}"
            )));
        }
        if let Some((order, _)) = want {
            self.model.got(app, q, order, sync);
        }
        self.end(app)?;
        Ok(got)
    }

    fn end_uow(&mut self, app: usize, commit: bool) -> Result<(), Halt> {
        self.begin();
        let (c, now) = (self.apps[app].conn, self.t());
        let r = if commit {
            self.node.qm.commit(c, now, &mut self.node.fx)
        } else {
            self.node.qm.backout(c, now, &mut self.node.fx)
        };
        self.note(format!(
            "app {app}: {} {r:?}",
            if commit { "commit" } else { "backout" }
        ));
        if let Err(e) = r {
            return Err(Halt::Broken(format!("MQCMIT/MQBACK failed: {e}")));
        }
        self.model.end_uow(app, commit);
        self.end(app)
    }

    fn reconnect(&mut self, app: usize, normal: bool) -> Result<(), Halt> {
        self.begin();
        let (c, now) = (self.apps[app].conn, self.t());
        self.node.qm.disconnect(c, normal, now, &mut self.node.fx);
        self.note(format!("app {app}: disconnect normal {normal}"));
        self.model.end_uow(app, normal);
        if normal {
            self.end(app)?;
        } else {
            // Nobody hears the answer of a broken connection.
            self.model.call_done(self.call);
            let records = self.node.fx.log_records().len() as u64;
            self.node.log_effects()?;
            self.durability.appended(records);
        }
        let blocked = self.apps[app].blocked;
        let mut fresh = connect(&mut self.node.qm, now, &mut self.node.fx).map_err(Halt::Broken)?;
        fresh.blocked = blocked;
        self.apps[app] = fresh;
        Ok(())
    }

    fn mqi(&mut self, app: usize) -> Result<(), Halt> {
        let sync = self.rng.chance(50);
        let persistent = self.rng.chance(70);
        match self.rng.below(100) {
            0..=14 => {
                let msg = Msg {
                    id: self.model.new_id(),
                    persistent,
                    correl: 0,
                };
                self.put(app, 2, msg, sync)
            }
            15..=24 => {
                let msg = Msg {
                    id: self.model.new_id(),
                    persistent,
                    correl: 0,
                };
                self.publish(app, msg, sync)
            }
            25..=39 => {
                let msg = Msg {
                    id: self.model.new_id(),
                    persistent,
                    correl: 0,
                };
                self.put(app, REQUEST, msg, sync)?;
                if self.apps[app].awaiting.is_none() {
                    self.apps[app].awaiting = Some(msg.id);
                }
                Ok(())
            }
            40..=54 => {
                // Serve a request: get it, put the reply with CorrelId = its MsgId.
                if let Some(req) = self.get(app, REQUEST, 0, sync)? {
                    if self.apps[app].blocked {
                        return Ok(());
                    }
                    let reply = Msg {
                        id: self.model.new_id(),
                        persistent: req.persistent,
                        correl: req.id,
                    };
                    self.put(app, REPLY, reply, sync)?;
                    if sync && self.rng.chance(70) && !self.apps[app].blocked {
                        self.end_uow(app, true)?;
                    }
                }
                Ok(())
            }
            55..=66 => {
                let correl = self.apps[app].awaiting.unwrap_or(0);
                if correl == 0 {
                    return self.get(app, 2, 0, sync).map(drop);
                }
                if self.get(app, REPLY, correl, sync)?.is_some() {
                    self.summary.replies_found += 1;
                    self.apps[app].awaiting = None;
                }
                Ok(())
            }
            67..=78 => self.get(app, 2, 0, sync).map(drop),
            79..=88 => self.end_uow(app, true),
            89..=95 => self.end_uow(app, false),
            _ => {
                let normal = self.rng.chance(60);
                self.reconnect(app, normal)
            }
        }
    }
}
