//! A whole AMQP run (`ferry perf rr-cc|sr-cc|ps-cc --protocol amqp`): checks the options,
//! sets up the broker ([`super::target`]), runs every size and step on one
//! current-thread runtime, and returns the same series native runs do, named with the
//! protocol (`RR-CC AMQP (2KB Non-persistent)`) so their reports overlay.

use std::cell::RefCell;
use std::time::Duration;

use super::pool::DEFAULT_SESSIONS_PER_CONNECTION;
use super::settings::Settings;
use super::target::AmqpTarget;
use super::url::AmqpUrl;
use crate::args::{self, ReplyQueues, Responders};
use crate::cli::{shutdown_signal, Measured, PsArgs, RrArgs, StepArgs};
use crate::progress::Progress;
use crate::report::{RunReport, StepReport};
use crate::workload::ps;
use crate::workload::rr::{self, Fault, RrConfig};
use crate::workload::sr::{self, queue_name, SrConfig};
use crate::workload::{Kind, Mode};
use crate::{measure, target, PerfError};

/// The title of an AMQP run, e.g. `RR-CC AMQP` (also the files' stem, slugged).
pub fn title(kind: Kind) -> String {
    format!("{} AMQP", kind.name())
}

/// The test name of an AMQP series, e.g. `RR-CC AMQP (2KB Persistent, presettled)`.
pub fn test_name(kind: Kind, size: usize, s: &StepArgs, a: &RrArgs) -> String {
    let mut parts = vec![format!(
        "{} {}",
        args::format_size(size),
        if s.persistent {
            "Persistent"
        } else {
            "Non-persistent"
        }
    )];
    if let Some(r) = s.rate {
        parts.push(format!("{r} msg/s per {}", crate::cli::rate_per(kind)));
    }
    if a.protocol.presettled {
        parts.push("presettled".into());
    }
    if a.protocol.sync_send && !s.persistent && kind == Kind::RrCc {
        parts.push("sync send".into());
    }
    if kind == Kind::RrCc && a.protocol.reply_queues == ReplyQueues::PerRequester {
        parts.push("reply queue per requester".into());
    }
    if a.protocol.prefetch != 1 {
        parts.push(format!("prefetch {}", a.protocol.prefetch));
    }
    match sessions_per_connection(a) {
        DEFAULT_SESSIONS_PER_CONNECTION => {}
        1 => parts.push("1 session per connection".into()),
        n => parts.push(format!("{n} sessions per connection")),
    }
    format!("{} ({})", title(kind), parts.join(", "))
}

/// Applications (sessions) per connection: `--sessions-per-connection`, else the
/// native default SHARECNV.
pub fn sessions_per_connection(a: &RrArgs) -> u32 {
    a.protocol
        .sessions_per_connection
        .unwrap_or(DEFAULT_SESSIONS_PER_CONNECTION)
}

/// Refuses what the AMQP workloads do not do.
pub fn check(kind: Kind, a: &RrArgs) -> Result<(), PerfError> {
    let usage = |m: String| Err(PerfError::Usage(m));
    if !matches!(kind, Kind::RrCc | Kind::SrCc | Kind::PsCc) {
        return usage(format!(
            "--protocol amqp runs rr-cc, sr-cc and ps-cc (AMQP has no bindings mode), not {}",
            kind.name().to_ascii_lowercase()
        ));
    }
    let s = &a.steps;
    if s.syncpoint {
        return usage("--syncpoint: AMQP transactions are not in the harness yet".into());
    }
    if s.sharecnv.is_some() {
        return usage(
            "--sharecnv is an MQ channel setting; with --protocol amqp use \
             --sessions-per-connection"
                .into(),
        );
    }
    if a.relay_baseline.is_some() {
        return usage("--relay-baseline works with --protocol native only".into());
    }
    if a.target.connect.is_some() {
        return usage("--connect names an MQ listener; with --protocol amqp use --url".into());
    }
    if s.fault == Fault::PutInhibited && a.protocol.url.is_some() {
        return usage("--fault put-inhibited alters the embedded queue manager's queues".into());
    }
    if a.target.cipherspec.is_some() {
        return usage(
            "--cipherspec is the native client's; for AMQPS measure with the JMS load generator \
             (bench/jms-load) and an amqps:// URL"
                .into(),
        );
    }
    if s.compress.is_some() {
        return usage("--compress is an MQ channel setting, not AMQP's".into());
    }
    if kind == Kind::RrCc {
        if let Responders::Fixed(n) = s.responders {
            if n < s.queues {
                return usage(format!(
                    "--responders {n} is fewer than --queues {}: every request queue needs a \
                     responder (use 'auto' or at least {})",
                    s.queues, s.queues
                ));
            }
        }
    }
    Ok(())
}

/// The AMQP settings of a run (`--url` parsed, credentials applied).
pub fn settings(a: &RrArgs, url: AmqpUrl) -> Settings {
    let p = &a.protocol;
    Settings {
        url: url.with_credentials(p.user.as_deref(), p.password.as_deref()),
        queue_prefix: p.queue_prefix.clone(),
        reply_queues: p.reply_queues,
        presettled: p.presettled,
        sync_send: p.sync_send,
        prefetch: p.prefetch,
        sessions_per_connection: sessions_per_connection(a),
    }
}

/// Runs an AMQP plan: sets the broker up, runs every size and step, stops an embedded
/// queue manager.
pub fn measure_run(
    kind: Kind,
    a: &RrArgs,
    pubsub: Option<&PsArgs>,
    progress: &Progress,
) -> Result<Measured, PerfError> {
    check(kind, a)?;
    let steps = &a.steps;
    let most = steps.clients.0.iter().copied().max().unwrap_or(1);
    let max_size = steps.sizes.0.iter().copied().max().unwrap_or(2048);
    let per_queue = match steps.responders {
        Responders::Auto => 2,
        Responders::Fixed(n) => n,
    };
    let mut tgt = match &a.protocol.url {
        Some(u) => AmqpTarget::external(
            AmqpUrl::parse(u).map_err(|e| PerfError::Usage(e.to_string()))?,
            a.target.server_pid,
        ),
        None => {
            let channels = match (kind, pubsub) {
                (Kind::SrCc, _) => most * (1 + per_queue),
                (Kind::PsCc, Some(p)) => most + p.publishers,
                _ => most + steps.responders.count(most, steps.queues),
            };
            let channels = u32::try_from(channels + 16).unwrap_or(u32::MAX);
            AmqpTarget::embedded(&target::reports_tuning(max_size, channels))?
        }
    };
    let s = settings(a, tgt.url.clone());
    let queues: Vec<String> = match kind {
        Kind::SrCc => (0..most).map(queue_name).collect(),
        // Topics need no definition.
        Kind::PsCc => Vec::new(),
        _ => s.rr_queues(steps.queues, most),
    };
    let sharing = format!(
        "AMQP sessions per connection: {}",
        s.sessions_per_connection
    );
    progress.line(&crate::cli::plan_line(
        &title(kind),
        kind.clients_are(),
        steps,
        &match pubsub {
            Some(p) => format!("{}, {sharing}", p.shape()),
            None => sharing,
        },
        tgt.description(),
    ));
    if tgt.server_pid().is_none() {
        progress.line("note: server CPU is not measured (give --server-pid with --url)");
    }
    let series: RefCell<Vec<RunReport>> = RefCell::new(Vec::new());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| PerfError::Setup(format!("cannot build the runtime: {e}")))?;
    let local = tokio::task::LocalSet::new();
    let outcome = local.block_on(&rt, async {
        let work = async {
            let admin = tgt.prepare(&queues).await?;
            let pid = tgt.server_pid();
            for &size in &steps.sizes.0 {
                let test = match pubsub {
                    Some(p) => crate::cli::with_parts(test_name(kind, size, steps, a), ps_parts(p)),
                    None => test_name(kind, size, steps, a),
                };
                series.borrow_mut().push(RunReport {
                    workload: kind.name().into(),
                    test: test.clone(),
                    rate_unit: kind.rate_unit().into(),
                    size,
                    persistent: steps.persistent,
                    syncpoint: false,
                    rate_per_requester: steps.rate,
                    tuning: tgt.tuning(),
                    secs: steps.secs,
                    warmup: steps.warmup,
                    queues: pubsub.map_or(steps.queues, PsArgs::topics),
                    sharecnv: 0,
                    amqp_sessions: s.sessions_per_connection,
                    responders: match (kind, pubsub) {
                        (Kind::SrCc, _) => format!("{per_queue} per queue"),
                        (_, Some(p)) => p.shape(),
                        _ => steps.responders.to_string(),
                    },
                    target: tgt.description().to_string(),
                    cpus: measure::online_cpus(),
                    ticks_per_sec: measure::clock_ticks_per_sec(),
                    steps: Vec::new(),
                    summary: None,
                });
                for &clients in &steps.clients.0 {
                    let who = kind.clients_are();
                    progress.step_start(&format!("{test}, {clients} {who}"));
                    let outcome = match (kind, pubsub) {
                        (Kind::PsCc, Some(p)) => {
                            let cfg = p.config(size, 0);
                            let mut amqp = super::ps::AmqpTopics::new(&s, &cfg, p.no_ack);
                            let admin = admin.as_ref();
                            ps::run_step(&mut amqp, pid, admin, &cfg, clients, progress).await
                        }
                        (Kind::SrCc, _) => {
                            let cfg = sr_config(size, steps, per_queue);
                            let mut amqp = super::sr::AmqpStreams::new(&s, &cfg, clients);
                            let admin = admin.as_ref();
                            sr::run_step(&mut amqp, pid, admin, &cfg, clients, progress).await
                        }
                        _ => {
                            let cfg = rr_config(size, steps);
                            let mut amqp = super::rr::Amqp::new(&s, &cfg, clients);
                            let admin = admin.as_ref();
                            rr::run_step(&mut amqp, pid.as_slice(), admin, &cfg, clients, progress)
                                .await
                        }
                    };
                    let outcome = match outcome {
                        Ok(o) => o,
                        Err(e) => {
                            progress.step_done(&format!("{test}, {clients} {who}: failed"));
                            return Err(e);
                        }
                    };
                    let step = StepReport::new(outcome, Ok(None));
                    progress.step_done(&crate::cli::step_line(&test, kind, &step));
                    if let Some(sr) = series.borrow_mut().last_mut() {
                        sr.steps.push(step);
                    }
                }
            }
            if let Some(a) = admin {
                let _ = a.disconnect().await;
            }
            Ok(())
        };
        tokio::select! {
            r = work => r,
            sig = shutdown_signal() => Err(PerfError::Interrupted(sig)),
        }
    });
    drop(local);
    drop(rt);
    tgt.shutdown();
    Ok(Measured {
        series: crate::cli::finished_series(series.into_inner()),
        outcome,
    })
}

/// The parts of an AMQP PS-CC test name beyond the common ones: the publishers and
/// topics when not one on one, and `NoAck` for presettled subscribers.
pub fn ps_parts(p: &PsArgs) -> Vec<String> {
    let mut parts = crate::cli::ps_name_parts(p);
    if p.no_ack {
        parts.push("NoAck".into());
    }
    parts
}

fn rr_config(size: usize, s: &StepArgs) -> RrConfig {
    RrConfig {
        size,
        persistent: s.persistent,
        queues: s.queues,
        responders: s.responders,
        sharecnv: 0,
        warmup: s.warmup,
        secs: s.secs,
        requester_mode: Mode::Client,
        responder_mode: Mode::Client,
        syncpoint: false,
        rate: s.rate,
        reply_timeout: Duration::from_secs_f64(s.reply_timeout),
        fault: s.fault,
        body: s.body_kind(),
        compression_channel: None,
        channel_pairs: 1,
        responder_hosts: 1,
        bind: ferry_mqi::OpenOptions::empty(),
    }
}

fn sr_config(size: usize, s: &StepArgs, per_queue: usize) -> SrConfig {
    SrConfig {
        size,
        persistent: s.persistent,
        syncpoint: false,
        rate: s.rate,
        receivers_per_queue: per_queue,
        sharecnv: 0,
        warmup: s.warmup,
        secs: s.secs,
        body: s.body_kind(),
    }
}
