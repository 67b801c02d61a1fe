//! Crash audit of assured delivery across two queue managers: persistent messages put on
//! QMA to a remote queue on QMB cross a sender/receiver channel exactly once, whatever
//! kills either queue manager (SIGKILL) or cuts the channel, round after round.
//!
//! # The set-up
//!
//! QMB has the receiver channel `QMA.TO.QMB` and the local queue `AUDIT.IN`. QMA has the
//! transmission queue `QMB` (TRIGGER, so the sender channel starts again by itself when
//! QMA restarts: `start_all` arms it and the first message on the queue starts it), the
//! remote queue `AUDIT.REMOTE` (RNAME AUDIT.IN, RQMNAME QMB), and the sender channel,
//! whose CONNAME is **a TCP proxy run by this test** in front of QMB's listener. The
//! proxy can cut every live connection at once (closing them, or resetting them),
//! refuse new ones for a while, and delay what it forwards (half the rounds, 0.2-3 ms a
//! chunk, so kills and cuts find batches in flight and in doubt more often). In a third
//! of the rounds, when the sender's side of a connection goes, the proxy keeps QMB's side
//! open and silent for a few seconds, so the sender's next conversation must adopt the
//! channel from a receiving conversation that still holds its batch. SHORTTMR(1),
//! LONGTMR(1) and HBINT(1) bring a cut channel back within a second or two.
//!
//! # A round
//!
//! [`PUTTERS`] putters on QMA put persistent messages to `AUDIT.REMOTE` (or to
//! `AUDIT.IN` at queue manager QMB, through name resolution) outside syncpoint and in
//! units of work of 1-5 puts that they commit or back out. [`GETTERS`] getters on QMB get
//! from `AUDIT.IN` with WAIT, outside syncpoint and in units of work of 1-4 gets that
//! they commit or back out. Sometimes the proxy cuts the channel part-way through; then,
//! after a random 100-700 ms, one fault: QMA killed, QMB killed, both killed, the
//! channel cut, or the channel cut and refused for 0.3-1.5 s. The clients of a killed
//! queue manager fail; the others end at the next clean boundary. What was killed is
//! restarted, and once the channel has drained QMA's transmission queue the round is
//! audited.
//!
//! # The ledger
//!
//! As in `crash_torture.rs`: every message has a unique key (in the CorrelId with a
//! checksum over key, body and descriptor fields; the body is regenerated from the key),
//! and clients record, before each call, what it may do, and after its answer what it
//! did: a put outside syncpoint is in doubt until MQPUT answers; a put under syncpoint is
//! invisible until its MQCMIT is sent, in doubt while the commit is unanswered,
//! acknowledged when it returns OK, backed out after MQBACK or when QMA's kill finds its
//! unit of work open. Gets likewise on QMB. A message a getter receives on QMB proves
//! its put (and its whole unit of work) happened: it only crosses once committed and
//! durable on QMA. Every received message is checked at once: checksum, body,
//! descriptor (Persistence, Priority, Format, MsgId, length, BackoutCount), not from a
//! backed-out or uncommitted unit of work, not got before (a duplicate), not unknown.
//!
//! # The audit (each round, once QMA's transmission queue is empty)
//!
//! With the transmission queue empty (CURDEPTH counts messages got under syncpoint, so
//! no batch is in flight) and the sender not in doubt, `AUDIT.IN` is browsed:
//! - every acknowledged put is found exactly once across (acknowledged as got by a
//!   getter) ∪ (still on `AUDIT.IN`); the one allowance is a get outside syncpoint in
//!   flight at QMB's kill, which may have taken one message nobody knows;
//! - nothing is found twice or after an acknowledged get; nothing unknown; nothing from a
//!   backed-out unit of work; bodies, checksums and descriptors are intact; no two
//!   messages share a MsgId;
//! - a put in doubt at QMA's kill may or may not be there, never twice, and the audit
//!   then fixes its outcome; a unit of work whose commit was in doubt crossed whole or
//!   not at all;
//! - per putter and priority, messages are on `AUDIT.IN` in put order.
//!
//! Every [`DRAIN_EVERY`] rounds, when the backlog grows large, and after the last round,
//! `AUDIT.IN` is also drained destructively and the gets must return exactly what the
//! browse showed; both dead-letter queues must then be empty.
//!
//! A second test, `a_batch_whose_confirmation_is_lost_is_resolved_as_committed`, uses
//! the proxy's one-way mode (QMB's answers discarded) to lose the confirmation of a
//! batch the receiver committed, and checks its resolution by commit. A third,
//! `a_receiver_answers_a_reconnecting_sender_only_with_what_is_durable`, slows QMB's log
//! flushes (FERRY_LOG_GATHER_US) so the sender reconnects while the receiver's commit is
//! applied but not durable, and kills QMB before the flush.
//!
//! # Running
//!
//! `FERRY_CHANNEL_AUDIT_ROUNDS` (default 20, for CI) sets the rounds and
//! `FERRY_CHANNEL_AUDIT_SEED` replays a run's random choices (printed at the start and in
//! every failure; thread timing is not replayed). `scripts/channel-crash-audit.sh` runs
//! a long version against the release build.

mod common;

use bytes::Bytes;
use common::audited::*;
use common::*;
use ferry_client::{ConnectOptions, Connection, Queue};
use ferry_mqi::descriptor::{format, persistence};
use ferry_mqi::{
    FixedStr, GetOptionFlags, MessageDescriptor, MqError, ObjectDescriptor, OpenOptions,
    PutOptionFlags, PutOptions, ReasonCode,
};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};

/// The destination queue on QMB.
const QUEUE: &str = "AUDIT.IN";
/// The remote queue definition on QMA.
const REMOTE: &str = "AUDIT.REMOTE";
/// QMA's transmission queue (named like the partner queue manager).
const XMITQ: &str = "QMB";
/// The channel.
const CHANNEL: &str = "QMA.TO.QMB";
/// Concurrent putters on QMA per round.
const PUTTERS: usize = 3;
/// Concurrent getters on QMB per round.
const GETTERS: usize = 2;
/// Get buffer: larger than any message put.
const MAX_BODY: usize = 256 * 1024;
/// Size of the largest messages (~100 KiB).
const BIG_BODY: usize = 100 * 1024;
/// The audit drains QMB's queue destructively every this many rounds...
const DRAIN_EVERY: u32 = 10;
/// ...or when more messages than this are carried over.
const BACKLOG_MSGS: usize = 3000;
/// How long an orphaned receiving side stays open (`Proxy::orphan`).
const ORPHAN_HOLD: Duration = Duration::from_secs(4);
/// How long the channel may take to drain the transmission queue after a round.
const DRAIN_DEADLINE: Duration = Duration::from_secs(60);
/// The formats put.
const FORMATS: [FixedStr<8>; 3] = [
    format::STRING,
    format::NONE,
    FixedStr::from_bytes(*b"FERRYBIN"),
];

/// One message as put.
#[derive(Clone, Debug)]
struct Msg {
    priority: i32,
    format: FixedStr<8>,
    /// Known when chosen by the putter or returned by MQPUT.
    msg_id: Option<[u8; 24]>,
    len: usize,
    put: PutState,
    get: GetState,
    /// Backouts this message may have had on QMB (acknowledged or at a kill).
    bo_max: u32,
    /// The unknown-backout counter when the message was put.
    unknown_base: u64,
}

/// Counters for the report.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    puts_attempted: u64,
    puts_acked: u64,
    puts_backed_out: u64,
    gets_acked: u64,
    gets_backed_out: u64,
    found: u64,
    in_doubt_puts: u64,
    in_doubt_crossed: u64,
    in_doubt_gone: u64,
    in_doubt_gets: u64,
    inflight_unknown_gets: u64,
    taken_by_inflight_gets: u64,
    kills_a: u64,
    kills_b: u64,
    cuts: u64,
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        self.puts_attempted += o.puts_attempted;
        self.puts_acked += o.puts_acked;
        self.puts_backed_out += o.puts_backed_out;
        self.gets_acked += o.gets_acked;
        self.gets_backed_out += o.gets_backed_out;
        self.found += o.found;
        self.in_doubt_puts += o.in_doubt_puts;
        self.in_doubt_crossed += o.in_doubt_crossed;
        self.in_doubt_gone += o.in_doubt_gone;
        self.in_doubt_gets += o.in_doubt_gets;
        self.inflight_unknown_gets += o.inflight_unknown_gets;
        self.taken_by_inflight_gets += o.taken_by_inflight_gets;
        self.kills_a += o.kills_a;
        self.kills_b += o.kills_b;
        self.cuts += o.cuts;
    }
}

/// Everything the clients did, as they know it.
#[derive(Default)]
struct Ledger {
    msgs: HashMap<Key, Msg>,
    next_uow: u64,
    /// Gets outside syncpoint sent to QMB and not answered.
    nosync_inflight: u64,
    /// Gets under syncpoint sent to QMB and not answered.
    sync_inflight: u64,
    /// Cumulative unanswered syncpoint gets at QMB's kills: each may have raised the
    /// BackoutCount of any message on the queue.
    sync_unknown: u64,
    /// Gets outside syncpoint in flight at QMB's kills since the last audit: each may
    /// have taken one message nobody knows.
    allowance: u64,
    violations: Vec<String>,
    counts: Counts,
}

impl Ledger {
    fn uow(&mut self) -> u64 {
        self.next_uow += 1;
        self.next_uow
    }

    fn violation(&mut self, v: String) {
        self.violations.push(v);
    }

    /// Checks a descriptor got on QMB against the message as put; the problems found.
    fn check_md(&self, key: Key, m: &Msg, md: &MessageDescriptor, len: usize) -> Vec<String> {
        let mut bad = Vec::new();
        if md.persistence != persistence::PERSISTENT {
            bad.push(format!("{key}: Persistence {}", md.persistence));
        }
        if md.priority != m.priority {
            bad.push(format!(
                "{key}: Priority {} (put {})",
                md.priority, m.priority
            ));
        }
        if md.format != m.format {
            bad.push(format!(
                "{key}: Format {:?} (put {:?})",
                md.format, m.format
            ));
        }
        if let Some(id) = m.msg_id {
            if md.msg_id != id {
                bad.push(format!("{key}: MsgId {:02x?} (put {id:02x?})", md.msg_id));
            }
        }
        if len != m.len {
            bad.push(format!("{key}: length {len} (put {})", m.len));
        }
        let bo_max = u64::from(m.bo_max) + (self.sync_unknown - m.unknown_base);
        if md.backout_count < 0 || md.backout_count as u64 > bo_max {
            bad.push(format!(
                "{key}: BackoutCount {} (at most {bo_max} backouts could have happened on QMB)",
                md.backout_count
            ));
        }
        bad
    }

    /// The put of `key` is proven (its message reached QMB): so is its whole unit of work.
    fn prove(&mut self, key: Key) {
        let Some(m) = self.msgs.get_mut(&key) else {
            return;
        };
        match m.put {
            PutState::Sending => m.put = PutState::Present,
            PutState::Committing(u) => {
                for m in self.msgs.values_mut() {
                    if m.put == PutState::Committing(u) {
                        m.put = PutState::Present;
                    }
                }
            }
            _ => {}
        }
    }

    /// A getter on QMB received a message, under syncpoint in `uow` or outside (`None`).
    /// Checks it and records it; its key when it is a known message.
    fn got(
        &mut self,
        who: &str,
        md: &MessageDescriptor,
        got: &Bytes,
        len: usize,
        uow: Option<u64>,
    ) -> Option<Key> {
        if got.len() != len {
            self.violation(format!(
                "{who}: message truncated ({} of {len} bytes)",
                got.len()
            ));
            return None;
        }
        let key = match verify(md, got) {
            Ok(k) => k,
            Err(e) => {
                self.violation(format!("{who}: got a corrupt message: {e}"));
                return None;
            }
        };
        let Some(m) = self.msgs.get_mut(&key) else {
            self.violation(format!("{who}: got unknown message {key}"));
            return None;
        };
        if let GetState::Held(_, Hold::BackingOut) = m.get {
            // The MQBACK took effect; its caller has not heard the answer yet.
            m.get = GetState::Free;
            m.bo_max += 1;
        }
        let m = &self.msgs[&key];
        let mut bad = self.check_md(key, m, md, got.len());
        match m.put {
            PutState::InUow(u) => bad.push(format!(
                "{key}: got on QMB while its put unit of work {u} was uncommitted on QMA"
            )),
            PutState::BackedOut => bad.push(format!("{key}: got, but its put was backed out")),
            PutState::Gone => bad.push(format!(
                "{key}: got, but an earlier audit found it had not crossed"
            )),
            PutState::Sending | PutState::Committing(_) | PutState::Present => {}
        }
        match m.get {
            GetState::Free => {}
            GetState::Held(u, h) => bad.push(format!(
                "{key}: got while held by get unit of work {u} ({h:?})"
            )),
            GetState::Consumed => bad.push(format!(
                "{key}: got again after an acknowledged get: delivered twice"
            )),
        }
        for b in bad {
            self.violation(format!("{who}: {b}"));
        }
        self.prove(key);
        if let Some(m) = self.msgs.get_mut(&key) {
            m.get = match uow {
                Some(u) => GetState::Held(u, Hold::Open),
                None => GetState::Consumed,
            };
        }
        Some(key)
    }

    /// Sets the get state of `keys`.
    fn set_get(&mut self, keys: &[Key], state: GetState) {
        for k in keys {
            if let Some(m) = self.msgs.get_mut(k) {
                m.get = state;
            }
        }
    }

    /// MQBACK of get unit of work `uow` answered OK: its messages are back (unless
    /// another getter already took one, which then recorded the backout).
    fn gets_backed_out(&mut self, uow: u64, keys: &[Key]) {
        for k in keys {
            if let Some(m) = self.msgs.get_mut(k) {
                if m.get == GetState::Held(uow, Hold::BackingOut) {
                    m.get = GetState::Free;
                    m.bo_max += 1;
                }
            }
        }
        self.counts.gets_backed_out += keys.len() as u64;
    }

    /// Sets the put state of `keys` (a proven put stays proven).
    fn set_put(&mut self, keys: &[Key], state: PutState) {
        for k in keys {
            if let Some(m) = self.msgs.get_mut(k) {
                if m.put != PutState::Present {
                    m.put = state;
                }
            }
        }
    }

    /// After the round's fault, with every client stopped: the calls left unanswered on
    /// the queue managers killed (`a`: QMA, `b`: QMB).
    fn resolve_kills(&mut self, a: bool, b: bool) {
        if b {
            self.allowance += self.nosync_inflight;
            self.sync_unknown += self.sync_inflight;
            self.counts.inflight_unknown_gets += self.nosync_inflight;
        } else if self.nosync_inflight + self.sync_inflight > 0 {
            self.violation(format!(
                "test bug: {} gets left unanswered on QMB, which was not killed",
                self.nosync_inflight + self.sync_inflight
            ));
        }
        self.nosync_inflight = 0;
        self.sync_inflight = 0;
        let mut in_doubt_puts = 0;
        let mut in_doubt_gets = 0;
        let mut stray = Vec::new();
        for (k, m) in self.msgs.iter_mut() {
            match m.put {
                PutState::InUow(_) if a => m.put = PutState::BackedOut,
                PutState::Sending | PutState::Committing(_) if a => in_doubt_puts += 1,
                PutState::InUow(_) | PutState::Sending | PutState::Committing(_) => {
                    stray.push(format!("{k}: put {:?} after QMA's clients ended", m.put))
                }
                _ => {}
            }
            match m.get {
                GetState::Held(_, Hold::Open | Hold::BackingOut) if b => {
                    m.get = GetState::Free;
                    m.bo_max += 1;
                }
                GetState::Held(_, Hold::Committing) if b => {
                    // Backed out by the restart unless the commit made it.
                    m.bo_max += 1;
                    in_doubt_gets += 1;
                }
                GetState::Held(..) => {
                    stray.push(format!("{k}: get {:?} after QMB's clients ended", m.get))
                }
                _ => {}
            }
        }
        for s in stray {
            self.violation(format!("test bug: {s}"));
        }
        self.counts.in_doubt_puts += in_doubt_puts;
        self.counts.in_doubt_gets += in_doubt_gets;
    }

    /// Audits the browsed contents of QMB's queue with QMA's transmission queue empty;
    /// afterwards the ledger says exactly what is on the queue.
    fn audit(&mut self, found: &Found) {
        let mut seen: HashSet<Key> = HashSet::new();
        let mut msg_ids: HashSet<[u8; 24]> = HashSet::new();
        let mut order: HashMap<(u32, u16, i32), u64> = HashMap::new();
        let mut bad = Vec::new();
        for (md, body, len) in found {
            if body.len() != *len {
                bad.push(format!(
                    "{QUEUE}: a message was truncated ({} of {len} bytes)",
                    body.len()
                ));
                continue;
            }
            let key = match verify(md, body) {
                Ok(k) => k,
                Err(e) => {
                    bad.push(format!("corrupt message on {QUEUE}: {e}"));
                    continue;
                }
            };
            if !seen.insert(key) {
                bad.push(format!("{key}: found twice on {QUEUE}: delivered twice"));
                continue;
            }
            if !msg_ids.insert(md.msg_id) {
                bad.push(format!(
                    "{key}: MsgId {:02x?} found on two messages",
                    md.msg_id
                ));
            }
            let Some(m) = self.msgs.get(&key) else {
                bad.push(format!("{key}: unknown message found on {QUEUE}"));
                continue;
            };
            bad.extend(self.check_md(key, m, md, body.len()));
            match m.put {
                PutState::BackedOut => bad.push(format!(
                    "{key}: found, but its put was backed out or never committed"
                )),
                PutState::Gone => bad.push(format!(
                    "{key}: found, but an earlier audit found it had not crossed"
                )),
                PutState::InUow(_) => {
                    bad.push(format!("{key}: found in unresolved state (test bug)"))
                }
                PutState::Sending | PutState::Committing(_) | PutState::Present => {}
            }
            match m.get {
                GetState::Consumed => bad.push(format!(
                    "{key}: found, but it was acknowledged as got: delivered twice"
                )),
                GetState::Held(u, h) if h != Hold::Committing => {
                    bad.push(format!("{key}: found while held by {u} {h:?} (test bug)"))
                }
                _ => {}
            }
            let slot = order
                .entry((key.round, key.putter, md.priority))
                .or_insert(0);
            if key.seq < *slot {
                bad.push(format!(
                    "{key}: out of put order on {QUEUE} (after seq {} of the same putter and \
                     priority {})",
                    *slot, md.priority
                ));
            }
            *slot = (*slot).max(key.seq);
        }

        // Units of work whose commit was in doubt at a kill.
        let mut put_groups: BTreeMap<u64, Vec<Key>> = BTreeMap::new();
        let mut get_groups: BTreeMap<u64, Vec<Key>> = BTreeMap::new();
        for (k, m) in &self.msgs {
            if let PutState::Committing(u) = m.put {
                put_groups.entry(u).or_default().push(*k);
            }
            if let GetState::Held(u, Hold::Committing) = m.get {
                get_groups.entry(u).or_default().push(*k);
            }
        }
        // Messages that must be found but are not.
        let mut missing: Vec<Key> = self
            .msgs
            .iter()
            .filter(|(k, m)| {
                !seen.contains(k) && m.put == PutState::Present && m.get == GetState::Free
            })
            .map(|(k, _)| *k)
            .collect();
        let mut proven_groups = HashSet::new();
        for (u, keys) in &put_groups {
            // A member got by a getter proved the group already (`prove`).
            if keys.iter().any(|k| seen.contains(k)) {
                proven_groups.insert(*u);
                for k in keys {
                    if let Some(m) = self.msgs.get(k) {
                        if !seen.contains(k) && m.get == GetState::Free {
                            missing.push(*k);
                        }
                    }
                }
            }
        }
        for (u, keys) in &get_groups {
            let back: Vec<_> = keys.iter().filter(|k| seen.contains(k)).collect();
            if back.is_empty() {
                continue;
            }
            for k in keys {
                if !seen.contains(k) {
                    bad.push(format!(
                        "{k}: get unit of work {u} half committed: {back:?} came back, {k} did not"
                    ));
                }
            }
        }
        let n = missing.len() as u64;
        if n > self.allowance {
            missing.sort();
            bad.push(format!(
                "acknowledged puts lost: {n} neither got nor on {QUEUE} with QMA's transmission \
                 queue empty ({} gets outside syncpoint were in flight at QMB's kills): {:?}",
                self.allowance,
                missing
                    .iter()
                    .take(20)
                    .map(|k| k.to_string())
                    .collect::<Vec<_>>()
            ));
        }
        self.counts.taken_by_inflight_gets += n.min(self.allowance);
        self.allowance = 0;

        // The audit settles everything in doubt.
        let (mut crossed, mut gone) = (0, 0);
        for (k, m) in self.msgs.iter_mut() {
            let was_in_doubt = matches!(m.put, PutState::Sending | PutState::Committing(_));
            if seen.contains(k) {
                m.put = PutState::Present;
                m.get = GetState::Free;
                crossed += u64::from(was_in_doubt);
                continue;
            }
            match m.put {
                PutState::Sending => m.put = PutState::Gone,
                PutState::Committing(u) if !proven_groups.contains(&u) => m.put = PutState::Gone,
                PutState::Committing(_) => m.put = PutState::Present,
                _ => {}
            }
            if m.put == PutState::Gone && was_in_doubt {
                gone += 1;
            } else if was_in_doubt {
                crossed += 1;
            }
            if m.put == PutState::Present && m.get != GetState::Consumed {
                // Held in a committing unit of work, or taken by an in-flight get.
                m.get = GetState::Consumed;
            }
        }
        self.counts.in_doubt_crossed += crossed;
        self.counts.in_doubt_gone += gone;
        self.counts.found += seen.len() as u64;
        self.violations.extend(bad);
    }

    /// After a destructive drain that matched the browse: nothing is on the queue.
    fn drained(&mut self) {
        for m in self.msgs.values_mut() {
            if m.put == PutState::Present && m.get == GetState::Free {
                m.get = GetState::Consumed;
            }
        }
    }

    /// Messages on QMB's queue (valid right after an audit).
    fn backlog(&self) -> usize {
        self.msgs
            .values()
            .filter(|m| m.put == PutState::Present && m.get == GetState::Free)
            .count()
    }
}

/// What the clients share.
struct Shared {
    ledger: Mutex<Ledger>,
    /// The round is over: clients of a queue manager still running end at the next
    /// clean boundary (no call in flight, no unit of work open).
    stop: AtomicBool,
    /// QMA is being killed: its clients' errors are expected.
    a_killed: AtomicBool,
    /// QMB is being killed.
    b_killed: AtomicBool,
    round: u32,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Ledger> {
        self.ledger.lock().expect("ledger lock (a client panicked)")
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// A call to QMA (`on_b` false) or QMB failed: expected after that queue manager's
    /// kill, a violation otherwise.
    fn failed(&self, who: &str, what: &str, e: &MqError, on_b: bool) {
        let killed = if on_b { &self.b_killed } else { &self.a_killed };
        if !killed.load(Ordering::SeqCst) {
            self.lock().violation(format!(
                "{who}: {what} failed with {e} while {} was running",
                if on_b { "QMB" } else { "QMA" }
            ));
        }
    }
}

/// The faults a round ends with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    KillA,
    KillB,
    KillBoth,
    Cut,
    CutAndRefuse,
}

impl Fault {
    fn pick(rng: &mut Rng) -> Fault {
        match rng.below(100) {
            0..=24 => Fault::KillA,
            25..=49 => Fault::KillB,
            50..=69 => Fault::KillBoth,
            70..=84 => Fault::Cut,
            _ => Fault::CutAndRefuse,
        }
    }
}

/// A TCP proxy between the sender channel and QMB's listener that can cut every live
/// connection at once and refuse new ones.
struct Proxy {
    port: u16,
    /// Bumped to cut every live connection.
    cut: tokio::sync::watch::Sender<u64>,
    /// Cut connections with a reset (SO_LINGER 0) rather than a close.
    reset: Arc<AtomicBool>,
    /// New connections are accepted and dropped at once.
    refusing: Arc<AtomicBool>,
    /// Connections forwarded so far.
    forwarded: Arc<AtomicU64>,
    /// Microseconds each chunk waits before it is forwarded (0: none): a slow network
    /// widens the window in which a batch is in flight or in doubt.
    latency_us: Arc<AtomicU64>,
    /// When the sender's side of a connection ends or is cut, keep the receiver's side
    /// open, silent, for [`ORPHAN_HOLD`]: the receiving conversation does not learn its
    /// partner is gone (a lost FIN, a partition), so the sender's next conversation must
    /// adopt the channel while the old one still holds its batch.
    orphan: Arc<AtomicBool>,
    /// What QMB sends is discarded instead of forwarded (a one-way failure).
    drop_replies: Arc<AtomicBool>,
}

impl Proxy {
    /// Listens on a free loopback port and forwards to `upstream` on loopback.
    async fn start(upstream: u16) -> Proxy {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("bind the proxy");
        let port = listener.local_addr().expect("proxy address").port();
        let (cut, _) = tokio::sync::watch::channel(0u64);
        let proxy = Proxy {
            port,
            cut,
            reset: Arc::new(AtomicBool::new(false)),
            refusing: Arc::new(AtomicBool::new(false)),
            forwarded: Arc::new(AtomicU64::new(0)),
            latency_us: Arc::new(AtomicU64::new(0)),
            orphan: Arc::new(AtomicBool::new(false)),
            drop_replies: Arc::new(AtomicBool::new(false)),
        };
        let orphan = proxy.orphan.clone();
        let drop_replies = proxy.drop_replies.clone();
        let (cut_rx, reset, refusing, forwarded, latency) = (
            proxy.cut.subscribe(),
            proxy.reset.clone(),
            proxy.refusing.clone(),
            proxy.forwarded.clone(),
            proxy.latency_us.clone(),
        );
        tokio::spawn(async move {
            loop {
                let Ok((down, _)) = listener.accept().await else {
                    continue;
                };
                if refusing.load(Ordering::SeqCst) {
                    let _ = down.set_zero_linger();
                    drop(down);
                    continue;
                }
                forwarded.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(forward(
                    down,
                    upstream,
                    cut_rx.clone(),
                    reset.clone(),
                    latency.clone(),
                    orphan.clone(),
                    drop_replies.clone(),
                ));
            }
        });
        proxy
    }

    /// Cuts every live connection (reset or closed).
    fn cut(&self, reset: bool) {
        self.reset.store(reset, Ordering::SeqCst);
        self.cut.send_modify(|g| *g += 1);
    }

    fn refuse(&self, on: bool) {
        self.refusing.store(on, Ordering::SeqCst);
    }

    /// Whether receiving sides are left open when the sending side goes (see `orphan`).
    fn set_orphan(&self, on: bool) {
        self.orphan.store(on, Ordering::SeqCst);
    }

    /// Whether what QMB sends is discarded (see `drop_replies`).
    fn set_drop_replies(&self, on: bool) {
        self.drop_replies.store(on, Ordering::SeqCst);
    }

    /// Delays every forwarded chunk by `us` microseconds from now on.
    fn set_latency(&self, us: u64) {
        self.latency_us.store(us, Ordering::SeqCst);
    }
}

/// Copies `from` to `to`, each chunk after the proxy's latency (or discards it while
/// `discard` is set), until `from` ends or either side fails.
async fn pump(
    mut from: tokio::net::tcp::ReadHalf<'_>,
    mut to: tokio::net::tcp::WriteHalf<'_>,
    latency_us: &AtomicU64,
    discard: Option<&AtomicBool>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let us = latency_us.load(Ordering::Relaxed);
        if us > 0 {
            tokio::time::sleep(Duration::from_micros(us)).await;
        }
        if discard.is_some_and(|d| d.load(Ordering::SeqCst)) {
            continue;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

/// Forwards one connection until either side ends (then both are closed) or the proxy
/// cuts it.
async fn forward(
    mut down: TcpStream,
    upstream: u16,
    mut cut: tokio::sync::watch::Receiver<u64>,
    reset: Arc<AtomicBool>,
    latency_us: Arc<AtomicU64>,
    orphan: Arc<AtomicBool>,
    drop_replies: Arc<AtomicBool>,
) {
    cut.borrow_and_update();
    let Ok(mut up) = TcpStream::connect(("127.0.0.1", upstream)).await else {
        return;
    };
    let _ = down.set_nodelay(true);
    let _ = up.set_nodelay(true);
    let (down_r, down_w) = down.split();
    let (up_r, up_w) = up.split();
    let sender_gone = tokio::select! {
        _ = pump(down_r, up_w, &latency_us, None) => true,
        _ = pump(up_r, down_w, &latency_us, Some(&drop_replies)) => false,
        _ = cut.changed() => {
            if reset.load(Ordering::SeqCst) {
                let _ = down.set_zero_linger();
                let _ = up.set_zero_linger();
            }
            true
        }
    };
    if sender_gone && orphan.load(Ordering::SeqCst) {
        drop(down);
        tokio::time::sleep(ORPHAN_HOLD).await;
    }
}

/// Picks the next message of putter `p`, records it as `state`, and returns the put's
/// descriptor and body.
fn next_message(
    shared: &Shared,
    rng: &mut Rng,
    p: u16,
    seq: &mut u64,
    state: PutState,
) -> (Key, MessageDescriptor, Vec<u8>) {
    let key = Key {
        round: shared.round,
        putter: p,
        seq: *seq,
    };
    *seq += 1;
    let len = match rng.below(100) {
        0..=9 => 0,
        10..=74 => 1 + rng.below(512),
        75..=98 => 4097 + rng.below(16 * 1024),
        _ => BIG_BODY - 512 + rng.below(1024),
    };
    let body = make_body(key, len);
    let priority = rng.below(10) as i32;
    let fmt = FORMATS[rng.below(FORMATS.len())];
    let chosen_id = (rng.below(2) == 0).then(|| {
        let mut id = [0u8; 24];
        id.copy_from_slice(&rng.bytes(24));
        id
    });
    let md = MessageDescriptor {
        persistence: persistence::PERSISTENT,
        priority,
        format: fmt,
        msg_id: chosen_id.unwrap_or([0; 24]),
        correl_id: correl(
            key,
            checksum(key, &body, priority, persistence::PERSISTENT, &fmt),
        ),
        ..Default::default()
    };
    let mut ledger = shared.lock();
    let unknown_base = ledger.sync_unknown;
    ledger.msgs.insert(
        key,
        Msg {
            priority,
            format: fmt,
            msg_id: chosen_id,
            len: body.len(),
            put: state,
            get: GetState::Free,
            bo_max: 0,
            unknown_base,
        },
    );
    ledger.counts.puts_attempted += 1;
    (key, md, body)
}

/// Records the MsgId MQPUT returned.
fn put_answered(shared: &Shared, who: &str, key: Key, out: &MessageDescriptor) {
    let mut ledger = shared.lock();
    let mut bad = None;
    if let Some(m) = ledger.msgs.get_mut(&key) {
        match m.msg_id {
            Some(id) if id != out.msg_id => {
                bad = Some(format!(
                    "{who}: {key}: MQPUT returned MsgId {:02x?}, not the chosen one",
                    out.msg_id
                ));
            }
            Some(_) => {}
            None => m.msg_id = Some(out.msg_id),
        }
    }
    if let Some(b) = bad {
        ledger.violation(b);
    }
}

/// Opens the two ways to reach QMB's queue from QMA: the remote queue definition, and
/// the queue name at queue manager QMB (resolved to the transmission queue QMB).
async fn open_remote(conn: &Connection) -> Result<Vec<Queue>, (String, MqError)> {
    let remote = ObjectDescriptor::queue(REMOTE).expect("valid queue name");
    let qualified = ObjectDescriptor {
        object_name: FixedStr::truncating(QUEUE),
        object_qmgr_name: FixedStr::truncating("QMB"),
        ..ObjectDescriptor::default()
    };
    let mut out = Vec::new();
    for (what, od) in [(REMOTE, remote), ("AUDIT.IN at QMB", qualified)] {
        match conn.open(&od, OpenOptions::OUTPUT).await {
            Ok(q) => out.push(q),
            Err(e) => return Err((format!("open {what}"), e)),
        }
    }
    Ok(out)
}

/// One putter on QMA: persistent puts outside syncpoint and in committed or backed-out
/// units of work, until the round ends or QMA is killed.
async fn putter(shared: Arc<Shared>, opts: ConnectOptions, p: u16, seed: u64) {
    let who = format!("round {} putter {p}", shared.round);
    let mut rng = Rng::new(seed);
    let conn = match Connection::connect(&opts).await {
        Ok(c) => c,
        Err(e) => return shared.failed(&who, "connect", &e, false),
    };
    let queues = match open_remote(&conn).await {
        Ok(q) => q,
        Err((what, e)) => return shared.failed(&who, &what, &e, false),
    };
    let mut seq = 0;
    while !shared.stopping() {
        let mode = rng.below(100);
        if mode < 40 {
            let (key, mut md, body) =
                next_message(&shared, &mut rng, p, &mut seq, PutState::Sending);
            let pmo = PutOptions::new(PutOptionFlags::NO_SYNCPOINT);
            match queues[rng.below(2)].put(&mut md, &pmo, body).await {
                Ok(()) => {
                    put_answered(&shared, &who, key, &md);
                    let mut ledger = shared.lock();
                    ledger.set_put(&[key], PutState::Present);
                    ledger.counts.puts_acked += 1;
                }
                Err(e) => return shared.failed(&who, &format!("put {key}"), &e, false),
            }
            continue;
        }
        let uow = shared.lock().uow();
        let mut keys = Vec::new();
        for _ in 0..1 + rng.below(5) {
            let (key, mut md, body) =
                next_message(&shared, &mut rng, p, &mut seq, PutState::InUow(uow));
            keys.push(key);
            let pmo = PutOptions::new(PutOptionFlags::SYNCPOINT);
            match queues[rng.below(2)].put(&mut md, &pmo, body).await {
                Ok(()) => put_answered(&shared, &who, key, &md),
                Err(e) => {
                    return shared.failed(&who, &format!("put {key} under syncpoint"), &e, false)
                }
            }
            maybe_pause(&mut rng).await;
        }
        if mode < 85 {
            shared.lock().set_put(&keys, PutState::Committing(uow));
            match conn.commit().await {
                Ok(()) => {
                    let mut ledger = shared.lock();
                    ledger.set_put(&keys, PutState::Present);
                    ledger.counts.puts_acked += keys.len() as u64;
                }
                Err(e) => return shared.failed(&who, "commit", &e, false),
            }
        } else {
            match conn.backout().await {
                Ok(()) => {
                    let mut ledger = shared.lock();
                    ledger.set_put(&keys, PutState::BackedOut);
                    ledger.counts.puts_backed_out += keys.len() as u64;
                }
                Err(e) => return shared.failed(&who, "backout", &e, false),
            }
        }
    }
    let _ = conn.disconnect().await;
}

/// One getter on QMB: gets with wait outside syncpoint and in committed or backed-out
/// units of work, until the round ends or QMB is killed.
async fn getter(shared: Arc<Shared>, opts: ConnectOptions, g: usize, seed: u64) {
    let who = format!("round {} getter {g}", shared.round);
    let mut rng = Rng::new(seed);
    let conn = match Connection::connect(&opts).await {
        Ok(c) => c,
        Err(e) => return shared.failed(&who, "connect", &e, true),
    };
    let od = ObjectDescriptor::queue(QUEUE).expect("valid queue name");
    let queue = match conn.open(&od, OpenOptions::INPUT_SHARED).await {
        Ok(q) => q,
        Err(e) => return shared.failed(&who, "open", &e, true),
    };
    while !shared.stopping() {
        let mode = rng.below(100);
        let wait = 50 + rng.below(250) as i32;
        if mode < 45 {
            shared.lock().nosync_inflight += 1;
            let mut md = MessageDescriptor::default();
            match queue.get(&mut md, &wait_gmo(false, wait), MAX_BODY).await {
                Ok(got) => {
                    let mut ledger = shared.lock();
                    ledger.nosync_inflight -= 1;
                    if ledger
                        .got(&who, &md, &got.data, got.data_length, None)
                        .is_some()
                    {
                        ledger.counts.gets_acked += 1;
                    }
                }
                Err(e) if e.reason == ReasonCode::NoMsgAvailable => {
                    shared.lock().nosync_inflight -= 1;
                }
                Err(e) => return shared.failed(&who, "get", &e, true),
            }
            continue;
        }
        let uow = shared.lock().uow();
        let mut keys = Vec::new();
        for _ in 0..1 + rng.below(4) {
            shared.lock().sync_inflight += 1;
            let mut md = MessageDescriptor::default();
            match queue.get(&mut md, &wait_gmo(true, wait), MAX_BODY).await {
                Ok(got) => {
                    let mut ledger = shared.lock();
                    ledger.sync_inflight -= 1;
                    if let Some(k) = ledger.got(&who, &md, &got.data, got.data_length, Some(uow)) {
                        keys.push(k);
                    }
                }
                Err(e) if e.reason == ReasonCode::NoMsgAvailable => {
                    shared.lock().sync_inflight -= 1;
                    break;
                }
                Err(e) => return shared.failed(&who, "get under syncpoint", &e, true),
            }
            maybe_pause(&mut rng).await;
        }
        if mode < 85 {
            shared
                .lock()
                .set_get(&keys, GetState::Held(uow, Hold::Committing));
            match conn.commit().await {
                Ok(()) => {
                    let mut ledger = shared.lock();
                    ledger.set_get(&keys, GetState::Consumed);
                    ledger.counts.gets_acked += keys.len() as u64;
                }
                Err(e) => return shared.failed(&who, "commit", &e, true),
            }
        } else {
            shared
                .lock()
                .set_get(&keys, GetState::Held(uow, Hold::BackingOut));
            match conn.backout().await {
                Ok(()) => shared.lock().gets_backed_out(uow, &keys),
                Err(e) => return shared.failed(&who, "backout", &e, true),
            }
        }
    }
    let _ = conn.disconnect().await;
}

/// An environment variable as a number, or `default`.
fn env_number(name: &str, default: impl FnOnce() -> u64) -> u64 {
    match std::env::var(name) {
        Ok(s) => s
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("{name}={s:?} is not a number: {e}")),
        Err(_) => default(),
    }
}

/// The end of a queue manager's error log.
fn log_tail(qm: &TestQueueManager, bytes: usize) -> String {
    let log = qm.error_log();
    let from = (log.len().saturating_sub(bytes)..log.len())
        .find(|&i| log.is_char_boundary(i))
        .unwrap_or(log.len());
    log[from..].to_string()
}

/// Panics with the violations, the seed and the round, if there are any.
fn check(ledger: &Ledger, seed: u64, round: u32, qma: &TestQueueManager, qmb: &TestQueueManager) {
    if ledger.violations.is_empty() {
        return;
    }
    let n = ledger.violations.len();
    let shown: Vec<_> = ledger.violations.iter().take(40).cloned().collect();
    panic!(
        "channel crash audit FAILED in round {round} (seed {seed}; replay with \
         FERRY_CHANNEL_AUDIT_SEED={seed}): {n} violations:\n  {}\n--- end of QMA's error log:\n{}\n\
         --- end of QMB's error log:\n{}",
        shown.join("\n  "),
        log_tail(qma, 4000),
        log_tail(qmb, 4000)
    );
}

/// What DISPLAY shows of the transmission queue and the sender channel.
struct SenderView {
    depth: i64,
    status: String,
    in_doubt: String,
}

/// CURDEPTH of the transmission queue, and the sender's STATUS and INDOUBT.
fn sender_view(qma: &TestQueueManager) -> SenderView {
    let out = qma.mqsc(&format!(
        "DISPLAY QLOCAL({XMITQ}) CURDEPTH\nDISPLAY CHSTATUS({CHANNEL}) STATUS INDOUBT\n"
    ));
    let text = stdout(&out);
    SenderView {
        depth: attr(&text, "CURDEPTH")
            .and_then(|d| d.parse().ok())
            .unwrap_or(-1),
        status: attr(&text, "STATUS").unwrap_or_else(|| "(none)".into()),
        in_doubt: attr(&text, "INDOUBT").unwrap_or_else(|| "(none)".into()),
    }
}

/// Waits until the channel has drained the transmission queue and is not in doubt;
/// `Err` says what it showed at the deadline.
fn wait_drained(qma: &TestQueueManager) -> Result<Duration, String> {
    let started = Instant::now();
    loop {
        let v = sender_view(qma);
        if v.depth == 0 && v.in_doubt != "YES" {
            return Ok(started.elapsed());
        }
        if v.status == "STOPPED" {
            return Err(format!(
                "the sender channel STOPPED with {} messages on the transmission queue",
                v.depth
            ));
        }
        if started.elapsed() > DRAIN_DEADLINE {
            return Err(format!(
                "the channel did not drain the transmission queue within {DRAIN_DEADLINE:?}: \
                 CURDEPTH {}, STATUS {}, INDOUBT {}",
                v.depth, v.status, v.in_doubt
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Defines the pair and starts the channel: on QMB the destination queue and the
/// receiver; on QMA the triggered transmission queue, the remote queue and the sender,
/// whose CONNAME is the proxy on `proxy_port`.
fn define_pair(qma: &TestQueueManager, qmb: &TestQueueManager, proxy_port: u16) {
    mqsc_ok(
        qmb,
        &format!(
            "DEFINE QLOCAL({QUEUE}) MAXDEPTH(999999999)\n\
             DEFINE CHANNEL({CHANNEL}) CHLTYPE(RCVR) HBINT(1)\n"
        ),
    );
    mqsc_ok(
        qma,
        &format!(
            "DEFINE QLOCAL({XMITQ}) USAGE(XMITQ) MAXDEPTH(999999999) TRIGGER \
             INITQ(SYSTEM.CHANNEL.INITQ) TRIGDATA({CHANNEL})\n\
             DEFINE QREMOTE({REMOTE}) RNAME({QUEUE}) RQMNAME(QMB) XMITQ({XMITQ})\n\
             DEFINE CHANNEL({CHANNEL}) CHLTYPE(SDR) CONNAME('127.0.0.1({proxy_port})') \
             XMITQ({XMITQ}) SHORTTMR(1) SHORTRTY(999999999) LONGTMR(1) HBINT(1)\n\
             START CHANNEL({CHANNEL})\n"
        ),
    );
}

/// A batch whose confirmation is lost after the receiver committed it: when the channel
/// comes back the sender resolves it as committed (nothing is sent again), and DISPLAY
/// CHSTATUS stops saying INDOUBT(YES) once the channel runs again, as an administrator
/// deciding whether to RESOLVE CHANNEL relies on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_whose_confirmation_is_lost_is_resolved_as_committed() {
    let qma = start("QMA");
    let qmb = start("QMB");
    let proxy = Proxy::start(qmb.port()).await;
    define_pair(&qma, &qmb, proxy.port);
    tokio::task::block_in_place(|| {
        wait_until("the sender RUNNING", || {
            sender_view(&qma).status == "RUNNING"
        })
    });
    // QMB's answers are lost from now on: the receiver commits, its CONFIRM never arrives.
    proxy.set_drop_replies(true);
    let a = connect(&qma.client()).await;
    let q = open(&a, REMOTE, OpenOptions::OUTPUT).await;
    let mut md = MessageDescriptor {
        persistence: persistence::PERSISTENT,
        ..MessageDescriptor::default()
    };
    put_md(
        &q,
        &mut md,
        PutOptions::new(PutOptionFlags::NO_SYNCPOINT),
        "confirm-lost",
    )
    .await
    .expect("put to the remote queue");
    tokio::task::block_in_place(|| {
        wait_until("the batch committed on QMB", || curdepth(&qmb, QUEUE) == 1);
        wait_until("the sender in doubt", || {
            sender_view(&qma).in_doubt == "YES"
        });
    });
    proxy.set_drop_replies(false);
    proxy.cut(false);
    tokio::task::block_in_place(|| {
        wait_until("the batch resolved as committed", || {
            qma.error_log().contains(") by commit:")
        });
        wait_until("the sender RUNNING again", || {
            sender_view(&qma).status == "RUNNING"
        });
    });
    let view = tokio::task::block_in_place(|| sender_view(&qma));
    assert_eq!(view.depth, 0, "the batch left the transmission queue");
    assert_eq!(
        view.in_doubt, "NO",
        "the in-doubt batch was resolved: DISPLAY CHSTATUS must not show INDOUBT(YES)"
    );
    // Nothing was sent twice.
    let b = connect(&qmb.client()).await;
    let inq = open(&b, QUEUE, OpenOptions::INPUT_SHARED).await;
    assert_eq!(get_text(&inq).await, "confirm-lost");
    let again = get_with(
        &inq,
        gmo(GetOptionFlags::WAIT | GetOptionFlags::NO_SYNCPOINT, 1500),
    )
    .await;
    assert!(
        matches!(&again, Err(e) if e.reason == ReasonCode::NoMsgAvailable),
        "the message arrived twice: {again:?}"
    );
}

/// A sender that reconnects while its partner's commit of the last batch is applied but
/// not yet durable must not be told that batch is committed: it would remove the batch
/// from its transmission queue, and a crash of the receiving queue manager before the
/// log write would lose it on both sides. QMB's log writer gathers records for 4 s
/// before each flush (FERRY_LOG_GATHER_US), the batch's CONFIRM is lost, the sender
/// reconnects, and QMB is killed before the commit can be durable: the message must
/// still arrive, exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_answers_a_reconnecting_sender_only_with_what_is_durable() {
    let qma = start("QMA");
    let mut qmb = TestQueueManager::create_with(bin(), "QMB", &[]);
    qmb.set_env("FERRY_LOG_GATHER_US", "4000000");
    qmb.launch();
    let proxy = Proxy::start(qmb.port()).await;
    define_pair(&qma, &qmb, proxy.port);
    tokio::task::block_in_place(|| {
        wait_until("the sender RUNNING", || {
            sender_view(&qma).status == "RUNNING"
        })
    });
    proxy.set_drop_replies(true);
    let a = connect(&qma.client()).await;
    let q = open(&a, REMOTE, OpenOptions::OUTPUT).await;
    let mut md = MessageDescriptor {
        persistence: persistence::PERSISTENT,
        ..MessageDescriptor::default()
    };
    put_md(
        &q,
        &mut md,
        PutOptions::new(PutOptionFlags::NO_SYNCPOINT),
        "durable-answer",
    )
    .await
    .expect("put to the remote queue");
    // Committed in QMB's engine; its log flush comes about 4 s after the batch began.
    tokio::task::block_in_place(|| {
        wait_until("the batch committed in QMB's engine", || {
            curdepth(&qmb, QUEUE) == 1
        })
    });
    let committed = Instant::now();
    proxy.set_drop_replies(false);
    proxy.cut(false);
    // The sender reconnects after SHORTTMR(1); give it until 2.5 s to hear an answer,
    // then kill QMB before its log flush.
    tokio::task::block_in_place(|| {
        while committed.elapsed() < Duration::from_millis(2500)
            && !qma.error_log().contains(") by commit:")
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        qmb.kill9();
        qmb.launch();
        wait_until("the transmission queue drained", || {
            let v = sender_view(&qma);
            v.depth == 0 && v.in_doubt != "YES"
        });
    });
    let b = connect(&qmb.client()).await;
    let inq = open(&b, QUEUE, OpenOptions::INPUT_SHARED).await;
    let first = get_with(
        &inq,
        gmo(GetOptionFlags::WAIT | GetOptionFlags::NO_SYNCPOINT, 10_000),
    )
    .await;
    let (_, got) = first.unwrap_or_else(|e| {
        panic!(
            "the message was lost on both queue managers ({e}); QMA's log:\n{}",
            log_tail(&qma, 3000)
        )
    });
    assert_eq!(String::from_utf8_lossy(&got.data), "durable-answer");
    let again = get_with(
        &inq,
        gmo(GetOptionFlags::WAIT | GetOptionFlags::NO_SYNCPOINT, 1500),
    )
    .await;
    assert!(
        matches!(&again, Err(e) if e.reason == ReasonCode::NoMsgAvailable),
        "the message arrived twice: {again:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn channel_crash_audit_persistent_messages_cross_exactly_once() {
    let seed = env_number("FERRY_CHANNEL_AUDIT_SEED", || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let rounds = env_number("FERRY_CHANNEL_AUDIT_ROUNDS", || 20) as u32;
    eprintln!(
        "channel crash audit: seed {seed}, {rounds} rounds (FERRY_CHANNEL_AUDIT_SEED={seed} \
         replays)"
    );
    let started = Instant::now();
    let mut rng = Rng::new(seed);
    let mut qma = start("QMA");
    let mut qmb = start("QMB");
    let proxy = Proxy::start(qmb.port()).await;
    define_pair(&qma, &qmb, proxy.port);
    let mut ledger = Ledger::default();
    let mut total = Counts::default();
    for round in 0..rounds {
        let round_started = Instant::now();
        let shared = Arc::new(Shared {
            ledger: Mutex::new(std::mem::take(&mut ledger)),
            stop: AtomicBool::new(false),
            a_killed: AtomicBool::new(false),
            b_killed: AtomicBool::new(false),
            round,
        });
        let mut tasks = Vec::new();
        for p in 0..PUTTERS {
            let opts = client_opts(&qma, p);
            let s = rng.next_u64();
            tasks.push(tokio::spawn(putter(shared.clone(), opts, p as u16, s)));
        }
        for g in 0..GETTERS {
            let opts = client_opts(&qmb, PUTTERS + g);
            let s = rng.next_u64();
            tasks.push(tokio::spawn(getter(shared.clone(), opts, g, s)));
        }
        // Half the rounds run over a slow network (0.2-3 ms per forwarded chunk).
        let latency_us = if rng.below(2) == 0 {
            0
        } else {
            200 + rng.below(2801) as u64
        };
        proxy.set_latency(latency_us);
        let orphan = rng.below(3) == 0;
        proxy.set_orphan(orphan);
        let delay = 100 + rng.below(601) as u64;
        let mut cuts = 0;
        if rng.below(3) == 0 {
            // A cut part-way: the channel comes back while the clients carry on.
            let first = delay * (1 + rng.below(3) as u64) / 4;
            tokio::time::sleep(Duration::from_millis(first)).await;
            proxy.cut(rng.below(2) == 0);
            cuts += 1;
            tokio::time::sleep(Duration::from_millis(delay - first)).await;
        } else {
            tokio::time::sleep(Duration::from_millis(delay)).await;
        }
        let fault = Fault::pick(&mut rng);
        let (kill_a, kill_b) = match fault {
            Fault::KillA => (true, false),
            Fault::KillB => (false, true),
            Fault::KillBoth => (true, true),
            Fault::Cut | Fault::CutAndRefuse => (false, false),
        };
        shared.a_killed.store(kill_a, Ordering::SeqCst);
        shared.b_killed.store(kill_b, Ordering::SeqCst);
        let b_first = rng.below(2) == 0;
        tokio::task::block_in_place(|| {
            if kill_b && b_first {
                qmb.kill9();
            }
            if kill_a {
                qma.kill9();
            }
            if kill_b && !b_first {
                qmb.kill9();
            }
        });
        match fault {
            Fault::Cut => {
                proxy.cut(rng.below(2) == 0);
                cuts += 1;
            }
            Fault::CutAndRefuse => {
                proxy.refuse(true);
                proxy.cut(rng.below(2) == 0);
                cuts += 1;
            }
            _ => {}
        }
        shared.stop.store(true, Ordering::SeqCst);
        for mut t in tasks {
            match tokio::time::timeout(DEADLINE, &mut t).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => panic!("round {round} (seed {seed}): a client task failed: {e}"),
                Err(_) => {
                    t.abort();
                    let _ = t.await;
                    shared.lock().violation(format!(
                        "round {round}: a client did not end within {DEADLINE:?} of the fault"
                    ));
                }
            }
        }
        let shared = Arc::try_unwrap(shared)
            .unwrap_or_else(|_| panic!("round {round}: client tasks still hold the ledger"));
        ledger = shared
            .ledger
            .into_inner()
            .expect("ledger lock (a client panicked)");
        ledger.resolve_kills(kill_a, kill_b);
        ledger.counts.kills_a += u64::from(kill_a);
        ledger.counts.kills_b += u64::from(kill_b);
        ledger.counts.cuts += cuts;
        if fault == Fault::CutAndRefuse {
            tokio::time::sleep(Duration::from_millis(300 + rng.below(1201) as u64)).await;
            proxy.refuse(false);
        }
        tokio::task::block_in_place(|| {
            if kill_b {
                qmb.launch();
            }
            if kill_a {
                // The transmission queue is triggered: the sender starts by itself.
                qma.launch();
            }
        });

        // The audit, once the channel has drained the transmission queue.
        let drained = tokio::task::block_in_place(|| wait_drained(&qma));
        let drain_time = match drained {
            Ok(t) => t,
            Err(why) => {
                ledger.violation(format!("round {round} ({fault:?}): {why}"));
                check(&ledger, seed, round, &qma, &qmb);
                unreachable!("check panics on a violation");
            }
        };
        let conn = connect(&qmb.bindings()).await;
        let queue = open(
            &conn,
            QUEUE,
            OpenOptions::INPUT_SHARED | OpenOptions::BROWSE,
        )
        .await;
        let found = read_all(&queue, true).await;
        ledger.audit(&found);
        let last = round + 1 == rounds;
        let drain =
            last || round % DRAIN_EVERY == DRAIN_EVERY - 1 || ledger.backlog() > BACKLOG_MSGS;
        if drain && ledger.violations.is_empty() {
            let got = read_all(&queue, false).await;
            let (want, have) = (keys_of(&found), keys_of(&got));
            if want != have {
                ledger.violation(format!(
                    "{QUEUE}: destructive gets returned {} messages {:?}, the browse showed {} {:?}",
                    have.len(),
                    have.iter().take(20).collect::<Vec<_>>(),
                    want.len(),
                    want.iter().take(20).collect::<Vec<_>>()
                ));
            }
            for (md, body, len) in &got {
                if body.len() != *len {
                    ledger.violation(format!("{QUEUE}: drained message truncated"));
                } else if let Err(e) = verify(md, body) {
                    ledger.violation(format!("{QUEUE}: drained corrupt message: {e}"));
                }
            }
            ledger.drained();
            for (qm, name) in [(&qma, "QMA"), (&qmb, "QMB")] {
                let dead = tokio::task::block_in_place(|| curdepth(qm, "SYSTEM.DEAD.LETTER.QUEUE"));
                if dead != 0 {
                    ledger.violation(format!("{dead} messages on {name}'s dead-letter queue"));
                }
            }
        }
        drop(queue);
        let _ = conn.disconnect().await;
        let backlog = ledger.backlog();
        let c = std::mem::take(&mut ledger.counts);
        total.add(&c);
        eprintln!(
            "round {round}: {fault:?} after {delay} ms ({cuts} cuts, latency {latency_us} us{}); puts acked {} (attempted \
             {}, backed out {}), gets acked {} (backed out {}), found {} ({backlog} carried{}); \
             in doubt: puts {} (crossed {}, gone {}), gets {}, unknown gets {} (took {}); \
             drained in {:.1}s; {:.1}s",
            if orphan { ", orphaning" } else { "" },
            c.puts_acked,
            c.puts_attempted,
            c.puts_backed_out,
            c.gets_acked,
            c.gets_backed_out,
            c.found,
            if drain { ", drained" } else { "" },
            c.in_doubt_puts,
            c.in_doubt_crossed,
            c.in_doubt_gone,
            c.in_doubt_gets,
            c.inflight_unknown_gets,
            c.taken_by_inflight_gets,
            drain_time.as_secs_f64(),
            round_started.elapsed().as_secs_f64()
        );
        check(&ledger, seed, round, &qma, &qmb);
    }
    // In-doubt batches the sender resolved at a restart (FRY9548), as its log says.
    let log = qma.error_log();
    let resolved_commit = log.matches(") by commit:").count();
    let resolved_backout = log.matches(") by back out:").count();
    eprintln!(
        "channel crash audit summary: seed {seed}, {rounds} rounds in {:.0}s, 0 violations; \
         kills: QMA {}, QMB {}; channel cuts {} ({} proxied connections); puts attempted {}, \
         acked {}, backed out {}; gets acked {}, backed out {}; found by audits {}; in doubt \
         at kills: puts {} (crossed {}, gone {}), gets {}, unknown gets {} (took {}); in-doubt batches \
         resolved by the sender: {resolved_commit} committed, {resolved_backout} backed out",
        started.elapsed().as_secs_f64(),
        total.kills_a,
        total.kills_b,
        total.cuts,
        proxy.forwarded.load(Ordering::SeqCst),
        total.puts_attempted,
        total.puts_acked,
        total.puts_backed_out,
        total.gets_acked,
        total.gets_backed_out,
        total.found,
        total.in_doubt_puts,
        total.in_doubt_crossed,
        total.in_doubt_gone,
        total.in_doubt_gets,
        total.inflight_unknown_gets,
        total.taken_by_inflight_gets,
    );
    assert!(
        rounds == 0 || (total.puts_acked > 0 && total.gets_acked > 0),
        "seed {seed}: no put or no get was acknowledged in {rounds} rounds: the audit tested \
         nothing"
    );
}
