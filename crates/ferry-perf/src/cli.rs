//! `ferry perf ...`: the command-line face of the harness. One subcommand per workload
//! of the reports (`rr-cc`, `rr-bb`, `rr-cb`, `sr-cc`, `ps-cc`, `connect`, `rr-dq-bb`
//! and its client-mode variant `rr-dq-cc`), `recovery` (deep queues and restart time),
//! plus `report` (re-render and overlay runs' JSON) and `suite` (a defined set of runs,
//! see [`crate::suite`]). Options shared by
//! every workload (steps, target) are separate structs flattened into each.
//!
//! Exit codes: 0 all steps valid, 1 setup failed or interrupted, 2 bad usage or a
//! workload that is not available yet, 3 some step invalid.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use tokio::signal::unix::{signal, SignalKind};

use crate::args::{self, Protocol, ReplyQueues, Responders};
use crate::compression;
use crate::output::{self, Document};
use crate::progress::Progress;
use crate::report::{self, RunReport, StepReport};
use crate::target::{self, QueueManager};
use crate::workload::connect::{self, ConnectConfig};
use crate::workload::native::{Native, NativeStreams};
use crate::workload::native_ps::NativeTopics;
use crate::workload::ps::{self, PsConfig};
use crate::workload::recovery::{self, RecoveryConfig};
use crate::workload::recovery_report::{self, RecoveryReport};
use crate::workload::rr::{self, Fault, RrConfig};
use crate::workload::sr::{self, SrConfig};
use crate::workload::Kind;
use crate::workload::{cluster, distributed};
use crate::{measure, relay, suite, PerfError};

/// `ferry perf`: run one of the reports' workloads against Ferry.
#[derive(Args, Debug)]
pub struct PerfArgs {
    /// The workload.
    #[command(subcommand)]
    pub workload: Workload,
}

/// The workloads and the commands around them.
#[derive(Subcommand, Debug)]
pub enum Workload {
    /// RR-CC: client-mode requesters and responders over 10 request queues and a reply
    /// queue, reply matched by CorrelId; one step per --clients value.
    #[command(name = "rr-cc")]
    RrCc(Box<RrArgs>),
    /// RR-BB: requesters and responders both in bindings mode (the queue manager's
    /// Unix socket).
    #[command(name = "rr-bb")]
    RrBb(Box<RrArgs>),
    /// RR-CB: client-mode requesters, bindings-mode responders.
    #[command(name = "rr-cb")]
    RrCb(Box<RrArgs>),
    /// SR-CC: each sender puts to its own queue, two receivers per queue; reports any
    /// queue build-up (CURDEPTH at the end of each step).
    #[command(name = "sr-cc")]
    SrCc(Box<RrArgs>),
    /// The connection test: N clients connect as fast as possible, then each does one
    /// round trip every 100 s; reports connections/s and the time to connect all.
    Connect(Box<ConnectArgs>),
    /// Recovery time and deep queues: fill queues with persistent messages (rate per
    /// tenth as they deepen), restart after kill -9 and after a controlled stop (each
    /// timed from spawn to the first MQGET), drain (rate per tenth) and account for every
    /// message. Runs to completion.
    Recovery(Box<RecoveryArgs>),
    /// PS-CC (publish/subscribe): publishers each on its own topic (PS.1...), the
    /// subscribers (--clients per step, non-durable managed subscriptions) spread over
    /// the topics; the rate is copies delivered per second.
    #[command(name = "ps-cc")]
    PsCc(Box<PsArgs>),
    /// RR-DQ-BB (distributed queuing): bindings requesters on one embedded queue manager,
    /// bindings responders on another; requests and replies cross sender/receiver
    /// channels (--channel-pairs each way). Server CPU is both queue managers'.
    #[command(name = "rr-dq-bb")]
    RrDqBb(Box<RrArgs>),
    /// RR-DQ-CC: RR-DQ-BB with client-mode requesters and responders.
    #[command(name = "rr-dq-cc")]
    RrDqCc(Box<RrArgs>),
    /// RR-CLUSTER-BB: a cluster of three embedded queue managers; bindings requesters on
    /// a partial repository put to cluster queues hosted, with bindings responders, on
    /// the two full repositories (--bind open or not-fixed); replies come back over the
    /// cluster. Shows how the requests were shared between the instances.
    #[command(name = "rr-cluster-bb")]
    RrClusterBb(Box<RrArgs>),
    /// Re-render and overlay runs' JSON files: tables, CSV, Markdown, charts.
    Report(Box<ReportArgs>),
    /// Run a defined set of runs (`standard`: about 15 minutes on a 2-CPU machine).
    Suite(Box<SuiteArgs>),
}

/// The line that opens a run: workload, sizes, clients (`who`: `clients`,
/// `subscribers`), timing, how connections are shared, and the target.
pub fn plan_line(title: &str, who: &str, steps: &StepArgs, sharing: &str, target: &str) -> String {
    let sizes: Vec<String> = steps
        .sizes
        .0
        .iter()
        .map(|z| args::format_size(*z))
        .collect();
    let clients: Vec<String> = steps.clients.0.iter().map(|c| c.to_string()).collect();
    format!(
        "{title}: sizes {}, {who} {}, {} s warm-up + {} s per step, {sharing}; {target}",
        sizes.join(","),
        clients.join(","),
        steps.warmup,
        steps.secs,
    )
}

/// The steps of a run: how many clients, how big, how long, where results go.
#[derive(Args, Debug, Clone)]
pub struct StepArgs {
    /// Requesters (senders, clients) per step, comma-separated (one step each, in order).
    #[arg(long, default_value = "1,4,16,64", value_parser = args::parse_client_list)]
    pub clients: args::ClientList,
    /// Message sizes, comma-separated, one series each: 256B, 2KB, 20KB, 200KB, 2MB
    /// (KB = 1024 bytes).
    #[arg(long, visible_alias = "size", default_value = "2KB", value_parser = args::parse_sizes)]
    pub sizes: args::SizeList,
    /// Persistent messages (default non-persistent).
    #[arg(long)]
    pub persistent: bool,
    /// Put and get in syncpoint, committing each at once.
    #[arg(long)]
    pub syncpoint: bool,
    /// Rated mode: messages per second per requester (default: unrated, as fast as
    /// replies come). Use for latency at a given load.
    #[arg(long, value_name = "N", value_parser = args::parse_rate)]
    pub rate: Option<f64>,
    /// Measured seconds per step.
    #[arg(long, default_value = "10", value_parser = args::parse_secs)]
    pub secs: f64,
    /// Warm-up seconds per step before measuring.
    #[arg(long, default_value = "3", value_parser = args::parse_warmup)]
    pub warmup: f64,
    /// Request queues (REQUEST.1..N), used round-robin (RR workloads).
    #[arg(long, default_value = "10", value_parser = args::parse_queues)]
    pub queues: usize,
    /// RR-DQ: sender/receiver channel pairs per direction (1 to 9); request queue i
    /// and its replies go over pair i mod N.
    #[arg(long, default_value = "1", value_parser = args::parse_channel_pairs)]
    pub channel_pairs: usize,
    /// RR-CLUSTER-BB: how requesters bind their request queue to an instance.
    #[arg(long, value_enum, default_value_t = args::Bind::Open)]
    pub bind: args::Bind,
    /// RR: responders, 'auto' (one per requester, at least one per request queue) or a
    /// number (at least --queues). SR-CC: receivers per queue, 'auto' = 2.
    #[arg(long, default_value = "auto", value_parser = args::parse_responders)]
    pub responders: Responders,
    /// Conversations per socket the connections ask for (SHARECNV; default 10, the
    /// connection test 1).
    #[arg(long, value_parser = args::parse_sharecnv)]
    pub sharecnv: Option<u32>,
    /// Channel compression: the COMPMSG list the applications ask for, in order of
    /// preference (RLE, ZLIBFAST, ZLIBHIGH, LZ4FAST, LZ4HIGH, NONE), e.g. LZ4FAST. The
    /// embedded queue manager's applications connect through PERF.COMP.SVRCONN with
    /// COMPMSG(ANY); with --connect, --channel must list the technique. Bodies are then
    /// JSON-like (see --body) and each step reports the channel's COMPRATE.
    #[arg(long, value_name = "LIST", value_parser = compression::parse_compress)]
    pub compress: Option<compression::CompressList>,
    /// What message bodies hold: fill (one byte repeated; the default without
    /// --compress) or json (JSON-like text; the default with --compress).
    #[arg(long, value_name = "KIND", value_parser = compression::parse_body)]
    pub body: Option<compression::BodyKind>,
    /// Directory for the JSON, CSV, Markdown and chart files (default
    /// ./perf-results/<UTC timestamp>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also write the run's JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Test only: make responders misbehave (none, wrong-correl-id, corrupt-body,
    /// missing-reply-queue) to see a step marked invalid.
    #[arg(long, hide = true, default_value = "none", value_parser = rr::parse_fault)]
    pub fault: Fault,
    /// Seconds a requester waits for its reply before it counts an error.
    #[arg(long, default_value = "60", value_parser = args::parse_secs)]
    pub reply_timeout: f64,
}

impl StepArgs {
    /// What the bodies hold: `--body`, else JSON-like text with `--compress`.
    pub fn body_kind(&self) -> compression::BodyKind {
        self.body.unwrap_or(if self.compress.is_some() {
            compression::BodyKind::Json
        } else {
            compression::BodyKind::Fill
        })
    }
}

/// The queue manager to measure: embedded (default) or an existing one.
#[derive(Args, Debug, Clone)]
pub struct TargetArgs {
    /// Use an existing queue manager at this CONNAME, e.g. 'localhost(1414)', instead of
    /// an embedded one (missing queues are defined through its command server).
    #[arg(long, value_name = "CONNAME")]
    pub connect: Option<String>,
    /// SVRCONN channel of --connect.
    #[arg(long, default_value = target::DEFAULT_CHANNEL, requires = "connect")]
    pub channel: String,
    /// Queue manager name of --connect (default: whichever owns the listener). When it is
    /// local, its pid comes from `ferry status` and its bindings socket from FERRY_HOME.
    #[arg(long, requires = "connect")]
    pub qmgr: Option<String>,
    /// Process id of the --connect queue manager (or the --url broker), to measure its
    /// CPU.
    #[arg(long, value_name = "PID")]
    pub server_pid: Option<u32>,
    /// Bindings socket (qm.sock) of the --connect queue manager, for RR-BB and RR-CB.
    #[arg(long, value_name = "PATH", requires = "connect")]
    pub bindings: Option<PathBuf>,
    /// Client connections use TLS with this CipherSpec (an SSLCIPH name or alias, e.g.
    /// TLS_AES_128_GCM_SHA256). The embedded queue manager gets a throwaway CA and
    /// certificates and a channel PERF.TLS.SVRCONN with this SSLCIPH; with --connect,
    /// --channel must have a matching SSLCIPH and --key-repository trust its certificate.
    #[arg(long, value_name = "NAME", value_parser = args::parse_cipherspec)]
    pub cipherspec: Option<String>,
    /// The client key repository for --cipherspec with --connect: trust.pem (the CAs of
    /// the queue manager's certificate) and, for SSLCAUTH(REQUIRED), <label>.crt/.key.
    #[arg(long, value_name = "DIR", requires = "cipherspec")]
    pub key_repository: Option<PathBuf>,
    /// Label of the client certificate in --key-repository.
    #[arg(long, value_name = "LABEL", requires = "key_repository")]
    pub cert_label: Option<String>,
}

/// The protocol the applications speak: Ferry's MQI client (default) or AMQP 1.0, to
/// measure Ferry's AMQP channel or any AMQP 1.0 broker with the same workloads.
#[derive(Args, Debug, Clone, Default)]
pub struct ProtocolArgs {
    /// native (the MQI client) or amqp (AMQP 1.0; rr-cc, sr-cc and ps-cc).
    #[arg(long, default_value = "native", value_parser = args::parse_protocol)]
    pub protocol: Protocol,
    /// AMQP broker, amqp://[user[:password]@]host[:port] (default: the embedded queue
    /// manager's AMQP channel). Its queues must exist: REQUEST.1..N and REPLY (or
    /// REPLY.1..N) for rr-cc, SR.1..N for sr-cc; ps-cc's topics PS.1..N are addresses
    /// with the `topic` capability.
    #[arg(long, value_name = "URL", conflicts_with = "connect")]
    pub url: Option<String>,
    /// AMQP: prefix of every queue's address (RabbitMQ: /amq/queue/).
    #[arg(long, value_name = "PREFIX", default_value = "")]
    pub queue_prefix: String,
    /// AMQP rr-cc: 'shared' (one REPLY queue, replies selected by JMSCorrelationID) or
    /// 'per-requester' (REPLY.1..N, no selector; for brokers that ignore selectors).
    #[arg(long, default_value = "shared", value_parser = args::parse_reply_queues)]
    pub reply_queues: ReplyQueues,
    /// AMQP: send presettled, with no outcome from the broker (non-persistent only;
    /// default: unsettled, see --sync-send).
    #[arg(long, conflicts_with = "sync_send")]
    pub presettled: bool,
    /// AMQP rr-cc: every send waits for the broker's accepted, as Qpid JMS with
    /// jms.forceSyncSend=true (default, as Qpid JMS: persistent sends wait for it,
    /// non-persistent ones are sent asynchronously and their outcome checked later;
    /// sr-cc senders and ps-cc publishers always wait, or they would only fill their
    /// queues).
    #[arg(long)]
    pub sync_send: bool,
    /// AMQP: credit each responder/receiver/subscriber keeps open (1: one message at a
    /// time).
    #[arg(long, default_value = "1", value_parser = args::parse_prefetch)]
    pub prefetch: u32,
    /// AMQP: applications (requesters, responders, senders, receivers) per connection,
    /// each with its own session, like SHARECNV (default 10; 1: a connection each).
    #[arg(long, value_name = "N", value_parser = args::parse_sessions_per_connection)]
    pub sessions_per_connection: Option<u32>,
    /// AMQP: SASL PLAIN user (default SASL ANONYMOUS, or the --url's user).
    #[arg(long)]
    pub user: Option<String>,
    /// AMQP: SASL PLAIN password.
    #[arg(long, requires = "user")]
    pub password: Option<String>,
}

/// `ferry perf rr-cc`, `rr-bb`, `rr-cb`, `sr-cc`, `rr-dq-bb`, `rr-dq-cc`.
#[derive(Args, Debug, Clone)]
pub struct RrArgs {
    /// Steps and output.
    #[command(flatten)]
    pub steps: StepArgs,
    /// Target queue manager.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Protocol (native or AMQP) and the AMQP options.
    #[command(flatten)]
    pub protocol: ProtocolArgs,
    /// Path of the relay yardstick's load generator (`target/release/relay-load`, from
    /// bench/yardsticks): run it for every step in the same run (RR-CC only).
    #[arg(long, value_name = "RR_LOAD")]
    pub relay_baseline: Option<PathBuf>,
}

/// `ferry perf ps-cc`.
#[derive(Args, Debug, Clone)]
pub struct PsArgs {
    /// Steps and output (--clients: subscribers in total, spread over the topics;
    /// --rate: publications per second per publisher).
    #[command(flatten)]
    pub steps: StepArgs,
    /// Target queue manager.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Protocol (native or AMQP) and the AMQP options.
    #[command(flatten)]
    pub protocol: ProtocolArgs,
    /// Publishers; publisher i (from 0) publishes on topic i mod T (PS.1 first).
    #[arg(long, default_value = "1", value_parser = parse_apps)]
    pub publishers: usize,
    /// Topics (PS.1..PS.T; default: one per publisher, at most --publishers).
    #[arg(long, value_parser = parse_apps)]
    pub topics: Option<usize>,
    /// AMQP: subscribers attach pre-settled: the broker settles every copy as it sends
    /// it and nothing is acknowledged (Qpid JMS's NoAck; the report's "AMQP JMS
    /// NoAck"). Publishers are unaffected (see --presettled).
    #[arg(long)]
    pub no_ack: bool,
    /// Native: durable subscriptions (managed, named PERF.PS.<n>, removed at the end of
    /// each step), so persistent copies are logged: with --persistent, the log bytes
    /// per publication show the body logged once for all subscribers.
    #[arg(long)]
    pub durable: bool,
}

impl PsArgs {
    /// The topics: `--topics`, else one per publisher.
    pub fn topics(&self) -> usize {
        self.topics.unwrap_or(self.publishers)
    }

    /// The options the workloads share, as the request/reply ones hold them (for the
    /// checks and the AMQP settings they have in common).
    pub fn common(&self) -> RrArgs {
        RrArgs {
            steps: self.steps.clone(),
            target: self.target.clone(),
            protocol: self.protocol.clone(),
            relay_baseline: None,
        }
    }

    /// Refuses shapes where a topic has no publisher or no subscriber, and the
    /// request/reply options PS-CC has no use for.
    pub fn check(&self) -> Result<(), PerfError> {
        let topics = self.topics();
        if topics > self.publishers {
            return Err(PerfError::Usage(format!(
                "--topics {topics} is more than --publishers {}: every topic needs a publisher",
                self.publishers
            )));
        }
        if let Some(&few) = self.steps.clients.0.iter().find(|&&c| c < topics) {
            return Err(PerfError::Usage(format!(
                "--clients {few} is fewer than the {topics} topics: every topic needs a \
                 subscriber (subscriber j is on topic j mod {topics})"
            )));
        }
        if self.steps.responders != Responders::Auto {
            return Err(PerfError::Usage(
                "--responders: PS-CC's subscribers are --clients (spread over the topics)".into(),
            ));
        }
        if self.steps.fault != Fault::None {
            return Err(PerfError::Usage(
                "--fault is for the request/reply workloads".into(),
            ));
        }
        if self.durable && self.protocol.protocol != Protocol::Native {
            return Err(PerfError::Usage(
                "--durable is a native option (AMQP durable subscriptions need client ids)".into(),
            ));
        }
        if self.no_ack && self.protocol.protocol != Protocol::Amqp {
            return Err(PerfError::Usage(
                "--no-ack is an AMQP option: add --protocol amqp".into(),
            ));
        }
        Ok(())
    }

    /// What a step does, for messages of `size` bytes.
    pub fn config(&self, size: usize, sharecnv: u32) -> PsConfig {
        let s = &self.steps;
        PsConfig {
            size,
            persistent: s.persistent,
            syncpoint: s.syncpoint,
            rate: s.rate,
            publishers: self.publishers,
            topics: self.topics(),
            durable: self.durable,
            sharecnv,
            warmup: s.warmup,
            secs: s.secs,
            body: s.body_kind(),
        }
    }

    /// The series' `responders` description: `1 publisher on 1 topic`.
    pub fn shape(&self) -> String {
        let plural = |n: usize, what: &str| {
            if n == 1 {
                format!("1 {what}")
            } else {
                format!("{n} {what}s")
            }
        };
        format!(
            "{} on {}",
            plural(self.publishers, "publisher"),
            plural(self.topics(), "topic")
        )
    }
}

/// The parts of a PS-CC test name beyond size and persistence: the publishers and
/// topics when not the report's one on one.
pub fn ps_name_parts(a: &PsArgs) -> Vec<String> {
    let mut parts = Vec::new();
    if a.publishers != 1 || a.topics() != 1 {
        parts.push(a.shape());
    }
    parts
}

/// `ferry perf connect`.
#[derive(Args, Debug, Clone)]
pub struct ConnectArgs {
    /// Steps and output (--clients: how many connect; --secs: how long they stay).
    #[command(flatten)]
    pub steps: StepArgs,
    /// Target queue manager.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Seconds between each client's round trips (the report: one every 100 s).
    #[arg(long, default_value = "100", value_parser = args::parse_secs)]
    pub interval: f64,
}

/// `ferry perf recovery`.
#[derive(Args, Debug, Clone)]
pub struct RecoveryArgs {
    /// Persistent messages to put (spread over the queues).
    #[arg(long, default_value = "1000000", value_parser = parse_messages)]
    pub messages: u64,
    /// Message body size: 256B, 2KB, 20KB... (at least 16B: the body carries its
    /// sequence number at both ends).
    #[arg(long, default_value = "2KB", value_parser = args::parse_size)]
    pub size: usize,
    /// Queues, RECOVERY.1..N (defined with MAXDEPTH 999999999).
    #[arg(long, default_value = "4", value_parser = args::parse_queues)]
    pub queues: usize,
    /// Concurrent putters of the fill (at least --queues; putter i uses queue i mod N).
    #[arg(long, default_value = "16", value_parser = parse_apps)]
    pub putters: usize,
    /// Concurrent getters of the drain (default: as many as putters).
    #[arg(long, value_parser = parse_apps)]
    pub getters: Option<usize>,
    /// Conversations per socket the putters' and getters' connections ask for.
    #[arg(long, default_value = "10", value_parser = args::parse_sharecnv)]
    pub sharecnv: u32,
    /// kill-first: kill -9 right after the fill, then a controlled stop; stop-first:
    /// the other way round.
    #[arg(long, default_value = "kill-first", value_parser = recovery::parse_order)]
    pub order: recovery::Order,
    /// Evict the queue manager's files (queue files, log) from the page cache before
    /// each restart, as after a reboot (only its own files: posix_fadvise DONTNEED).
    #[arg(long)]
    pub cold: bool,
    /// Directory for recovery.json and recovery.md (default
    /// ./perf-results/<UTC timestamp>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also write the run's JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// Parses `--messages`: 1 to 100,000,000.
pub fn parse_messages(text: &str) -> Result<u64, String> {
    match text.trim().replace(['_', ','], "").parse::<u64>() {
        Ok(n) if (1..=100_000_000).contains(&n) => Ok(n),
        _ => Err(format!(
            "invalid message count '{text}': give a whole number from 1 to 100000000 \
             (default 1000000)"
        )),
    }
}

/// Parses `--putters` and `--getters`: 1 to 1000.
pub fn parse_apps(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=1000).contains(&n) => Ok(n),
        _ => Err(format!(
            "invalid application count '{text}': give a whole number from 1 to 1000"
        )),
    }
}

/// `ferry perf report`.
#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// JSON files written by runs (`<dir>/<name>.json`); their series are overlaid.
    #[arg(required = true, value_name = "FILES")]
    pub files: Vec<PathBuf>,
    /// Directory for the re-rendered files (default ./perf-results/report-<timestamp>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Title of the report and chart.
    #[arg(long)]
    pub title: Option<String>,
}

/// `ferry perf suite`.
#[derive(Args, Debug, Clone)]
pub struct SuiteArgs {
    /// The suite: `standard`.
    pub name: String,
    /// Directory for the results (default ./perf-results/suite-<timestamp>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the suite's runs and exit.
    #[arg(long)]
    pub list: bool,
    /// Override every run's measured seconds (a shortened suite).
    #[arg(long, value_parser = args::parse_secs)]
    pub secs: Option<f64>,
    /// Override every run's warm-up seconds.
    #[arg(long, value_parser = args::parse_warmup)]
    pub warmup: Option<f64>,
}

/// Runs `ferry perf` and returns the process exit code.
pub fn run(args: PerfArgs) -> ExitCode {
    let result = match args.workload {
        Workload::RrCc(a) => run_and_write(Kind::RrCc, *a),
        Workload::RrBb(a) => run_and_write(Kind::RrBb, *a),
        Workload::RrCb(a) => run_and_write(Kind::RrCb, *a),
        Workload::SrCc(a) => run_and_write(Kind::SrCc, *a),
        Workload::Connect(a) => run_connect(*a),
        Workload::Recovery(a) => run_recovery(*a),
        Workload::PsCc(a) => run_ps(*a),
        Workload::RrDqBb(a) => run_and_write(Kind::RrDqBb, *a),
        Workload::RrDqCc(a) => run_and_write(Kind::RrDqCc, *a),
        Workload::RrClusterBb(a) => run_and_write(Kind::RrClusterBb, *a),
        Workload::Report(a) => run_report(*a),
        Workload::Suite(a) => suite::run(*a),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(3),
        Err(PerfError::Usage(m)) => {
            eprintln!("ferry perf: {m}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("ferry perf: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Resolves after SIGINT (Ctrl-C), SIGTERM or SIGHUP; names the signal.
pub(crate) async fn shutdown_signal() -> &'static str {
    let wait = |kind: SignalKind, name: &'static str| async move {
        match signal(kind) {
            Ok(mut s) => {
                s.recv().await;
                name
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        n = wait(SignalKind::interrupt(), "Ctrl-C") => n,
        n = wait(SignalKind::terminate(), "SIGTERM") => n,
        n = wait(SignalKind::hangup(), "SIGHUP") => n,
    }
}

/// Refuses impossible mixes of options.
pub fn check_args(kind: Kind, s: &StepArgs, relay: Option<&Path>) -> Result<(), PerfError> {
    if let (Some(c), Kind::RrBb) = (&s.compress, kind) {
        return Err(PerfError::Usage(format!(
            "--compress {}: RR-BB's applications connect in bindings mode, where nothing is \
             compressed (compression is a client channel's: use rr-cc, rr-cb or sr-cc)",
            compression::describe(&c.0)
        )));
    }
    if kind.is_multi_qmgr() && s.compress.is_some() {
        return Err(PerfError::Usage(
            "--compress: RR-DQ and RR-CLUSTER runs measure the channels between queue \
             managers, not a client channel's compression"
                .into(),
        ));
    }
    if matches!(
        kind,
        Kind::RrCc
            | Kind::RrBb
            | Kind::RrCb
            | Kind::Connect
            | Kind::RrDqBb
            | Kind::RrDqCc
            | Kind::RrClusterBb
    ) {
        if let Responders::Fixed(n) = s.responders {
            if n < s.queues {
                return Err(PerfError::Usage(format!(
                    "--responders {n} is fewer than --queues {}: every request queue needs a \
                     responder (use 'auto' or at least {})",
                    s.queues, s.queues
                )));
            }
        }
    }
    if let Some(p) = relay {
        if kind != Kind::RrCc {
            return Err(PerfError::Usage(format!(
                "--relay-baseline works with rr-cc only (the relay is a client/server yardstick), \
                 not with {}",
                kind.name().to_ascii_lowercase()
            )));
        }
        if !p.is_file() {
            return Err(PerfError::Usage(format!(
                "--relay-baseline {}: no such file (build it with: cargo build --release \
                 -p ferry-yardsticks, then pass target/release/relay-load)",
                p.display()
            )));
        }
    }
    Ok(())
}

/// Refuses AMQP options without `--protocol amqp`, so a forgotten `--protocol` does not
/// silently measure the native protocol.
pub fn check_protocol(a: &RrArgs) -> Result<(), PerfError> {
    let p = &a.protocol;
    if p.protocol == Protocol::Amqp {
        return Ok(());
    }
    let amqp_only = [
        ("--url", p.url.is_some()),
        ("--queue-prefix", !p.queue_prefix.is_empty()),
        ("--reply-queues", p.reply_queues != ReplyQueues::Shared),
        ("--presettled", p.presettled),
        ("--sync-send", p.sync_send),
        ("--prefetch", p.prefetch != 1),
        (
            "--sessions-per-connection",
            p.sessions_per_connection.is_some(),
        ),
        ("--user", p.user.is_some()),
    ];
    match amqp_only.iter().find(|(_, set)| *set) {
        Some((name, _)) => Err(PerfError::Usage(format!(
            "{name} is an AMQP option: add --protocol amqp"
        ))),
        None => Ok(()),
    }
}

/// The reports' test name of a series, e.g. `RR-CC (2KB Persistent, syncpoint)`.
pub fn test_name(kind: Kind, size: usize, s: &StepArgs, sharecnv: u32) -> String {
    let mut parts = vec![format!(
        "{} {}",
        args::format_size(size),
        if s.persistent {
            "Persistent"
        } else {
            "Non-persistent"
        }
    )];
    if s.syncpoint {
        parts.push("syncpoint".into());
    }
    if let Some(r) = s.rate {
        parts.push(format!("{r} msg/s per {}", rate_per(kind)));
    }
    if kind == Kind::Connect || sharecnv != 10 {
        parts.push(format!("SHARECNV {sharecnv}"));
    }
    if let Some(c) = &s.compress {
        parts.push(format!("COMPMSG({})", compression::describe(&c.0)));
    }
    if s.body_kind() == compression::BodyKind::Json {
        parts.push("JSON".into());
    }
    let name = if kind == Kind::Connect {
        "Connection test"
    } else {
        kind.name()
    };
    format!("{name} ({})", parts.join(", "))
}

/// Who `--rate` paces: `requester`, or `publisher` for PS-CC.
pub fn rate_per(kind: Kind) -> &'static str {
    if kind == Kind::PsCc {
        "publisher"
    } else {
        "requester"
    }
}

/// The queue manager a run measures (embedded with the reports' tuning, or --connect).
fn make_target(
    t: &TargetArgs,
    max_size: usize,
    channels: usize,
) -> Result<QueueManager, PerfError> {
    match &t.connect {
        Some(conn_name) => {
            let mut qm = QueueManager::existing(
                conn_name,
                &t.channel,
                t.qmgr.as_deref().unwrap_or(""),
                t.server_pid,
                t.bindings.clone(),
            );
            if let Some(spec) = &t.cipherspec {
                let repository = t.key_repository.clone().ok_or_else(|| {
                    PerfError::Usage(
                        "--cipherspec with --connect needs --key-repository (the client's trust.pem)"
                            .into(),
                    )
                })?;
                let mut tls = ferry_client::TlsOptions::new(spec, repository);
                if let Some(label) = &t.cert_label {
                    tls = tls.certificate_label(label);
                }
                qm.use_tls(tls, spec);
            }
            Ok(qm)
        }
        None => {
            let channels = u32::try_from(channels + 16).unwrap_or(u32::MAX);
            QueueManager::embedded(
                &target::ferry_binary()?,
                &target::reports_tuning(max_size, channels),
            )
        }
    }
}

/// The series one invocation measured, and how it ended.
pub struct Measured {
    /// Every series, with the steps that ran.
    pub series: Vec<RunReport>,
    /// `Err` when the run stopped early (setup failure, signal).
    pub outcome: Result<(), PerfError>,
}

/// Which workload a [`measure_run`] runs, with its own settings.
#[derive(Clone, Debug)]
pub enum Plan {
    /// RR-CC, RR-BB, RR-CB or SR-CC.
    Workload(Kind, RrArgs),
    /// The connection test.
    Connect(ConnectArgs),
    /// PS-CC.
    PubSub(PsArgs),
}

/// Runs a plan: starts the target, runs every size and step, stops the target.
pub fn measure_run(plan: &Plan, progress: &Progress) -> Result<Measured, PerfError> {
    if let Plan::Workload(kind, a) = plan {
        check_protocol(a)?;
        if a.protocol.protocol == Protocol::Amqp {
            return crate::amqp::run::measure_run(*kind, a, None, progress);
        }
    }
    let pubsub = match plan {
        Plan::PubSub(p) => {
            p.check()?;
            let common = p.common();
            check_protocol(&common)?;
            if common.protocol.protocol == Protocol::Amqp {
                return crate::amqp::run::measure_run(Kind::PsCc, &common, Some(p), progress);
            }
            Some(p)
        }
        _ => None,
    };
    let (kind, steps, target_args, relay_path, interval) = match plan {
        Plan::Workload(k, a) => (*k, &a.steps, &a.target, a.relay_baseline.clone(), 100.0),
        Plan::Connect(a) => (Kind::Connect, &a.steps, &a.target, None, a.interval),
        Plan::PubSub(a) => (Kind::PsCc, &a.steps, &a.target, None, 100.0),
    };
    check_args(kind, steps, relay_path.as_deref())?;
    if steps.fault == Fault::PutInhibited && target_args.connect.is_some() {
        return Err(PerfError::Usage(
            "--fault put-inhibited alters the embedded queue manager's queues".into(),
        ));
    }
    if target_args.server_pid.is_some() && target_args.connect.is_none() {
        return Err(PerfError::Usage(
            "--server-pid names the CPU to measure of an existing queue manager: use it with \
             --connect (or --url with --protocol amqp); the embedded one is measured anyway"
                .into(),
        ));
    }
    let sharecnv = steps
        .sharecnv
        .unwrap_or(if kind == Kind::Connect { 1 } else { 10 });
    let most = steps.clients.0.iter().copied().max().unwrap_or(1);
    let max_size = steps.sizes.0.iter().copied().max().unwrap_or(2048);
    let per_queue = match steps.responders {
        Responders::Auto => 2,
        Responders::Fixed(n) => n,
    };
    let channels = match (kind, pubsub) {
        (Kind::SrCc, _) => most * (1 + per_queue),
        (Kind::PsCc, Some(p)) => most + p.publishers,
        (Kind::Connect, _) => most + steps.queues,
        _ => most + steps.responders.count(most, steps.queues),
    };
    if kind.is_multi_qmgr() && (target_args.connect.is_some() || target_args.cipherspec.is_some()) {
        return Err(PerfError::Usage(format!(
            "{kind} runs embedded queue managers linked by channels: --connect and \
             --cipherspec are not available for it"
        )));
    }
    // The responders' queue managers, for the workloads that run several.
    let hosts: &[&str] = if kind.is_cluster() {
        &cluster::HOST_QMGRS
    } else if kind.is_distributed() {
        &[distributed::RESPONDERS_QMGR]
    } else {
        &[]
    };
    let (mut qm, mut partners) = if kind.is_multi_qmgr() {
        let tuning =
            target::reports_tuning(max_size, u32::try_from(channels + 16).unwrap_or(u32::MAX));
        let bin = target::ferry_binary()?;
        let partners = hosts
            .iter()
            .map(|name| QueueManager::embedded_named(&bin, name, &tuning))
            .collect::<Result<Vec<_>, _>>()?;
        (
            QueueManager::embedded_named(&bin, distributed::REQUESTERS_QMGR, &tuning)?,
            partners,
        )
    } else {
        (make_target(target_args, max_size, channels)?, Vec::new())
    };
    let (req_mode, resp_mode) = kind.modes();
    qm.options_for(req_mode)?;
    qm.options_for(resp_mode)?;
    let sharing = match pubsub {
        Some(p) => format!("{}, SHARECNV {sharecnv}", p.shape()),
        None => format!("SHARECNV {sharecnv}"),
    };
    let target_text = if partners.is_empty() {
        qm.description().to_string()
    } else {
        let on: Vec<&str> = partners.iter().map(|p| p.description()).collect();
        format!(
            "requesters on {}, responders on {}",
            qm.description(),
            on.join(" and ")
        )
    };
    progress.line(&plan_line(
        &kind.to_string(),
        kind.clients_are(),
        steps,
        &sharing,
        &target_text,
    ));
    if qm.server_pid().is_none() {
        progress.line("note: server CPU is not measured (give --server-pid with --connect)");
    }

    let series: RefCell<Vec<RunReport>> = RefCell::new(Vec::new());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| PerfError::Setup(format!("cannot build the runtime: {e}")))?;
    let local = tokio::task::LocalSet::new();
    let outcome = local.block_on(&rt, async {
        let work = async {
            let admin = qm.wait_ready().await?;
            let mut partner_admins = Vec::with_capacity(partners.len());
            for p in partners.iter_mut() {
                partner_admins.push(p.wait_ready().await?);
            }
            if kind.is_distributed() {
                progress.status("linking the queue managers with channels");
                distributed::link(
                    &qm,
                    &admin,
                    &partners[0],
                    &partner_admins[0],
                    steps.channel_pairs,
                )
                .await?;
            } else if kind.is_cluster() {
                progress.status("forming the cluster");
                cluster::join(&qm, &admin, &partners, &partner_admins).await?;
            }
            if let (Some(spec), None) = (&target_args.cipherspec, &target_args.connect) {
                qm.embedded_tls(&admin, spec).await?;
                progress.line(&format!(
                    "TLS: the applications connect through channel {} with SSLCIPH({spec}) \
                     (a throwaway CA signed the queue manager's certificate)",
                    target::TLS_CHANNEL
                ));
            }
            let compression_channel = match &steps.compress {
                Some(list) => Some(qm.use_compression(&admin, &list.0).await?),
                None => None,
            };
            if let (Some(list), Some(channel)) = (&steps.compress, &compression_channel) {
                // What the channel agrees to: a run that asks for compression and gets
                // none would measure plain traffic under a compression label.
                let probe =
                    crate::workload::step::connect(&qm.connect_options().sharecnv(1)).await?;
                let (_, agreed) = probe.compression();
                let _ = probe.disconnect().await;
                if agreed == ferry_mqi::MessageCompression::None
                    && list
                        .0
                        .iter()
                        .any(|t| *t != ferry_mqi::MessageCompression::None)
                {
                    return Err(PerfError::Setup(format!(
                        "channel {channel} agreed to no compression for COMPMSG({}): list \
                         the technique in its COMPMSG",
                        compression::describe(&list.0)
                    )));
                }
                progress.line(&format!(
                    "compression: the applications ask COMPMSG({}) on channel {channel}, which \
                     agrees to {agreed}; bodies are {}",
                    compression::describe(&list.0),
                    match steps.body_kind() {
                        compression::BodyKind::Json => "JSON-like text",
                        compression::BodyKind::Fill => "one byte repeated",
                    }
                ));
            }
            let max = admin.max_message_length() as usize;
            if max != 0 && max_size > max {
                return Err(PerfError::Usage(format!(
                    "--sizes {}: larger than the channel's MAXMSGL {max}",
                    args::format_size(max_size)
                )));
            }
            for &size in &steps.sizes.0 {
                let test = match pubsub {
                    Some(p) => with_parts(test_name(kind, size, steps, sharecnv), ps_name_parts(p)),
                    None => test_name(kind, size, steps, sharecnv),
                };
                let rr_cfg = RrConfig {
                    size,
                    persistent: steps.persistent,
                    queues: steps.queues,
                    responders: steps.responders,
                    sharecnv,
                    warmup: steps.warmup,
                    secs: steps.secs,
                    requester_mode: req_mode,
                    responder_mode: resp_mode,
                    syncpoint: steps.syncpoint,
                    rate: steps.rate,
                    reply_timeout: Duration::from_secs_f64(steps.reply_timeout),
                    fault: steps.fault,
                    body: steps.body_kind(),
                    compression_channel: compression_channel.clone(),
                    channel_pairs: steps.channel_pairs,
                    responder_hosts: if kind == Kind::RrClusterBb { 2 } else { 1 },
                    bind: steps.bind.open_option(),
                };
                let sr_cfg = SrConfig {
                    size,
                    persistent: steps.persistent,
                    syncpoint: steps.syncpoint,
                    rate: steps.rate,
                    receivers_per_queue: per_queue,
                    sharecnv,
                    warmup: steps.warmup,
                    secs: steps.secs,
                    body: steps.body_kind(),
                };
                let conn_cfg = ConnectConfig {
                    rr: rr_cfg.clone(),
                    interval_secs: interval,
                    connect_timeout: Duration::from_secs(60 + most as u64 / 100),
                };
                let ps_cfg = pubsub.map(|p| p.config(size, sharecnv));
                match kind {
                    Kind::SrCc => sr::prepare_queues(&admin, most).await?,
                    Kind::Connect => connect::prepare_queues(&admin, &conn_cfg).await?,
                    // Topics need no definition; managed subscriptions make their queues.
                    Kind::PsCc => {}
                    Kind::RrDqBb | Kind::RrDqCc => {
                        distributed::prepare_queues(
                            &admin,
                            &partners[0],
                            &partner_admins[0],
                            &rr_cfg,
                        )
                        .await?
                    }
                    Kind::RrClusterBb => {
                        progress.status("sharing the cluster queues");
                        cluster::prepare_queues(&admin, &partner_admins, &rr_cfg).await?
                    }
                    _ => rr::prepare_queues(&admin, &rr_cfg).await?,
                }
                series.borrow_mut().push(RunReport {
                    workload: kind.name().into(),
                    test: test.clone(),
                    rate_unit: kind.rate_unit().into(),
                    size,
                    persistent: steps.persistent,
                    syncpoint: steps.syncpoint,
                    rate_per_requester: steps.rate,
                    tuning: qm.tuning().to_vec(),
                    secs: steps.secs,
                    warmup: steps.warmup,
                    queues: match pubsub {
                        Some(p) => p.topics(),
                        None => steps.queues,
                    },
                    sharecnv,
                    amqp_sessions: 0,
                    responders: match (kind, pubsub) {
                        (Kind::SrCc, _) => format!("{per_queue} per queue"),
                        (_, Some(p)) => p.shape(),
                        _ => steps.responders.to_string(),
                    },
                    target: target_text.clone(),
                    cpus: measure::online_cpus(),
                    ticks_per_sec: measure::clock_ticks_per_sec(),
                    steps: Vec::new(),
                    summary: None,
                });
                for &clients in &steps.clients.0 {
                    progress.step_start(&format!("{test}, {clients} {}", kind.clients_are()));
                    let ferry = match kind {
                        Kind::SrCc => {
                            let mut native = NativeStreams::new(&qm, &admin, &sr_cfg, clients);
                            let pid = qm.server_pid();
                            sr::run_step(&mut native, pid, Some(&admin), &sr_cfg, clients, progress)
                                .await
                        }
                        Kind::Connect => {
                            connect::run_step(&qm, &admin, &conn_cfg, clients, progress).await
                        }
                        Kind::PsCc => {
                            let cfg = ps_cfg.clone().ok_or_else(|| {
                                PerfError::Setup("PS-CC without its publishers and topics".into())
                            })?;
                            let mut native = NativeTopics::new(&qm, &admin, &cfg);
                            let pid = qm.server_pid();
                            ps::run_step(&mut native, pid, Some(&admin), &cfg, clients, progress)
                                .await
                        }
                        Kind::RrDqBb | Kind::RrDqCc | Kind::RrClusterBb => {
                            multi_qmgr_step(
                                kind,
                                &qm,
                                &partners,
                                &admin,
                                &partner_admins,
                                &rr_cfg,
                                clients,
                                progress,
                            )
                            .await
                        }
                        _ => {
                            let mut native = Native::new(&qm, &admin, &rr_cfg)?;
                            let pid = qm.server_pid();
                            rr::run_step(
                                &mut native,
                                pid.as_slice(),
                                Some(&admin),
                                &rr_cfg,
                                clients,
                                progress,
                            )
                            .await
                        }
                    };
                    let ferry = match ferry {
                        Ok(f) => f,
                        Err(e) => {
                            progress.step_done(&format!(
                                "{test}, {clients} {}: failed",
                                kind.clients_are()
                            ));
                            return Err(e);
                        }
                    };
                    let relay = match &relay_path {
                        Some(path) => {
                            progress.status("relay yardstick");
                            relay::run(path, clients, size, steps.secs, steps.warmup)
                                .await
                                .map(Some)
                                .map_err(|e| e.to_string())
                        }
                        None => Ok(None),
                    };
                    let step = StepReport::new(ferry, relay);
                    progress.step_done(&step_line(&test, kind, &step));
                    if let Some(s) = series.borrow_mut().last_mut() {
                        s.steps.push(step);
                    }
                }
            }
            let _ = admin.disconnect().await;
            for admin_b in partner_admins {
                let _ = admin_b.disconnect().await;
            }
            Ok(())
        };
        tokio::select! {
            r = work => r,
            s = shutdown_signal() => Err(PerfError::Interrupted(s)),
        }
    });
    drop(local);
    drop(rt);
    qm.shutdown();
    for p in partners.iter_mut() {
        p.shutdown();
    }
    Ok(Measured {
        series: finished_series(series.into_inner()),
        outcome,
    })
}

/// One RR-DQ step: the requesters on `a`, the responders on `b`, both queue managers'
/// CPU measured, and the channels' messages per batch read around the step.
/// One step of a workload across several queue managers: requesters on `a`, responders
/// on `hosts`; server CPU is all of theirs. RR-DQ adds the messages per batch of its
/// channels, RR-CLUSTER-BB each instance's share of the requests.
#[allow(clippy::too_many_arguments)]
async fn multi_qmgr_step(
    kind: Kind,
    a: &QueueManager,
    hosts: &[QueueManager],
    admin_a: &ferry_client::Connection,
    host_admins: &[ferry_client::Connection],
    cfg: &RrConfig,
    clients: usize,
    progress: &Progress,
) -> Result<crate::workload::step::StepOutcome, PerfError> {
    let pairs = cfg.channel_pairs;
    let before = if kind.is_distributed() {
        distributed::batch_counts(a, admin_a, &hosts[0], &host_admins[0], pairs).await?
    } else {
        Vec::new()
    };
    let sent_before = if kind.is_cluster() {
        cluster::requests_sent(admin_a, hosts).await?
    } else {
        Vec::new()
    };
    let mut native = Native::distributed(a, hosts, admin_a, host_admins, cfg)?;
    let servers: Vec<u32> = std::iter::once(a.server_pid())
        .chain(hosts.iter().map(|h| h.server_pid()))
        .flatten()
        .collect();
    let mut outcome =
        rr::run_step(&mut native, &servers, Some(admin_a), cfg, clients, progress).await?;
    if kind.is_distributed() {
        let after =
            distributed::batch_counts(a, admin_a, &hosts[0], &host_admins[0], pairs).await?;
        outcome.messages_per_batch = distributed::messages_per_batch(&before, &after);
    }
    if kind.is_cluster() {
        let sent_after = cluster::requests_sent(admin_a, hosts).await?;
        outcome.instances = Some(cluster::shares(hosts, &sent_before, &sent_after));
    }
    Ok(outcome)
}

/// The series of a run as reported: those that measured at least one step, each with
/// its summary row (native and AMQP runs alike).
pub fn finished_series(mut series: Vec<RunReport>) -> Vec<RunReport> {
    series.retain(|s| !s.steps.is_empty());
    for s in &mut series {
        s.summary = report::summarize(&s.test, &s.steps);
    }
    series
}

/// Prints every series' per-step table and the summary table to stdout.
pub fn print_tables(series: &[RunReport]) {
    for s in series {
        println!("{}", s.test);
        println!("{}", report::render_table(s));
    }
    if !series.is_empty() {
        print!("{}", report::render_summary_all(series));
    }
}

/// Writes a document's files into `out` (default ./perf-results/<stamp>) and `json`.
pub fn write_files(
    doc: &Document,
    out: Option<&Path>,
    default_dir: &str,
    stem: &str,
    json: Option<&Path>,
) -> Result<(), PerfError> {
    let dir = out.map_or_else(|| output::default_dir(default_dir), Path::to_path_buf);
    let files = output::write_all(doc, &dir, stem).map_err(PerfError::Setup)?;
    print_written(&files);
    if let Some(path) = json {
        output::json::write(doc, path).map_err(PerfError::Setup)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

fn finish(m: Measured, title: &str, steps: &StepArgs, stem: &str) -> Result<bool, PerfError> {
    print_tables(&m.series);
    let all_valid = !m.series.is_empty()
        && m.series
            .iter()
            .all(|s| s.steps.iter().all(|st| st.ferry.valid));
    if !m.series.is_empty() {
        let doc = Document::new(title, m.series);
        write_files(
            &doc,
            steps.out.as_deref(),
            &output::now_stamp(),
            stem,
            steps.json.as_deref(),
        )?;
    }
    m.outcome.map(|()| all_valid)
}

fn run_and_write(kind: Kind, a: RrArgs) -> Result<bool, PerfError> {
    let progress = Progress::new();
    let steps = a.steps.clone();
    let title = match a.protocol.protocol {
        Protocol::Amqp => crate::amqp::run::title(kind),
        Protocol::Native => kind.name().to_string(),
    };
    let m = measure_run(&Plan::Workload(kind, a), &progress)?;
    drop(progress);
    finish(m, &title, &steps, &output::slug(&title))
}

fn run_ps(a: PsArgs) -> Result<bool, PerfError> {
    let progress = Progress::new();
    let steps = a.steps.clone();
    let title = match a.protocol.protocol {
        Protocol::Amqp => crate::amqp::run::title(Kind::PsCc),
        Protocol::Native => Kind::PsCc.name().to_string(),
    };
    let m = measure_run(&Plan::PubSub(a), &progress)?;
    drop(progress);
    finish(m, &title, &steps, &output::slug(&title))
}

/// `name` with `parts` added inside its closing parenthesis:
/// `PS-CC (2KB Non-persistent)` + `4 publishers` -> `PS-CC (2KB Non-persistent, 4 publishers)`.
pub fn with_parts(name: String, parts: Vec<String>) -> String {
    match name.strip_suffix(')') {
        Some(head) if !parts.is_empty() => format!("{head}, {})", parts.join(", ")),
        _ => name,
    }
}

fn run_connect(a: ConnectArgs) -> Result<bool, PerfError> {
    let progress = Progress::new();
    let steps = a.steps.clone();
    let m = measure_run(&Plan::Connect(a), &progress)?;
    drop(progress);
    finish(m, "Connection test", &steps, "connect")
}

/// Checks a recovery run's options against each other.
pub fn recovery_config(a: &RecoveryArgs) -> Result<RecoveryConfig, PerfError> {
    let getters = a.getters.unwrap_or(a.putters);
    if a.size < recovery::MIN_SIZE {
        return Err(PerfError::Usage(format!(
            "--size {}: a recovery message needs at least {} bytes (its sequence number at \
             both ends)",
            args::format_size(a.size),
            recovery::MIN_SIZE
        )));
    }
    if a.putters < a.queues || getters < a.queues {
        return Err(PerfError::Usage(format!(
            "--putters {} and --getters {getters} must each be at least --queues {}: every \
             queue needs a putter and a getter",
            a.putters, a.queues
        )));
    }
    Ok(RecoveryConfig {
        messages: a.messages,
        size: a.size,
        queues: a.queues,
        putters: a.putters,
        getters,
        sharecnv: a.sharecnv,
        order: a.order,
        cold: a.cold,
    })
}

fn run_recovery(a: RecoveryArgs) -> Result<bool, PerfError> {
    let cfg = recovery_config(&a)?;
    let created = output::now_rfc3339();
    let stamp = output::now_stamp();
    let channels = u32::try_from(cfg.putters.max(cfg.getters) + 16).unwrap_or(u32::MAX);
    let tuning = target::reports_tuning(cfg.size, channels);
    let mut qm = QueueManager::embedded(&target::ferry_binary()?, &tuning)?;
    let progress = Progress::new();
    let mut report = RecoveryReport {
        format: recovery_report::FORMAT,
        title: recovery_report::title(cfg.messages, cfg.size, cfg.queues),
        created,
        command: output::recorded_command(),
        machine: crate::machine::Machine::current(),
        messages: cfg.messages,
        size: cfg.size,
        queues: cfg.queues,
        putters: cfg.putters,
        getters: cfg.getters,
        sharecnv: cfg.sharecnv,
        order: cfg.order.name().into(),
        tuning: qm.tuning().to_vec(),
        target: qm.description().to_string(),
        fill: Default::default(),
        fill_log: None,
        fill_memory: None,
        restarts: Vec::new(),
        drain: Default::default(),
        verification: Default::default(),
        problems: Vec::new(),
        valid: false,
    };
    progress.line(&recovery_report::plan_line(&report));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| PerfError::Setup(format!("cannot build the runtime: {e}")))?;
    let local = tokio::task::LocalSet::new();
    let outcome = local.block_on(&rt, async {
        tokio::select! {
            r = recovery::run(&mut qm, &cfg, &progress) => r,
            s = shutdown_signal() => Err(PerfError::Interrupted(s)),
        }
    });
    drop(local);
    drop(rt);
    qm.shutdown();
    drop(progress);
    let o = outcome?;
    report.valid = o.valid();
    report.problems = o.problems.clone();
    for p in o.fill.problems.iter().chain(&o.drain.problems) {
        report.problems.push(p.clone());
    }
    report.fill = o.fill;
    report.fill_log = o.fill_log;
    report.fill_memory = o.fill_memory;
    report.restarts = o.restarts;
    report.drain = o.drain;
    report.verification = o.verification;
    print!("{}", recovery_report::render_text(&report));
    let dir = a.out.clone().unwrap_or_else(|| output::default_dir(&stamp));
    let files =
        recovery_report::write_files(&report, &dir, a.json.as_deref()).map_err(PerfError::Setup)?;
    print_written(&files);
    Ok(report.valid)
}

/// Overlays several runs' JSON: series whose test names collide get the file's name.
pub fn merge(docs: Vec<(String, Document)>, title: Option<&str>) -> Result<Document, PerfError> {
    let mut series: Vec<RunReport> = Vec::new();
    let mut machine = None;
    let mut names = Vec::new();
    let all: Vec<(String, RunReport)> = docs
        .into_iter()
        .flat_map(|(name, d)| {
            if machine.is_none() {
                machine = Some(d.machine.clone());
            }
            names.push(name.clone());
            d.series.into_iter().map(move |s| (name.clone(), s))
        })
        .collect();
    for (name, mut s) in all.clone() {
        let dup = all.iter().filter(|(_, o)| o.test == s.test).count() > 1;
        if dup {
            s.test = format!("{} [{name}]", s.test);
            if let Some(sum) = s.summary.as_mut() {
                sum.test = s.test.clone();
            }
        }
        series.push(s);
    }
    if series.is_empty() {
        return Err(PerfError::Usage("the files hold no series".into()));
    }
    let mut doc = Document::new(
        title.unwrap_or(&format!("overlay of {}", names.join(", "))),
        series,
    );
    if let Some(m) = machine.filter(|m| m.nproc > 0) {
        doc.machine = m;
    }
    Ok(doc)
}

fn run_report(a: ReportArgs) -> Result<bool, PerfError> {
    let mut docs = Vec::new();
    for f in &a.files {
        let d = output::json::read(f).map_err(PerfError::Usage)?;
        let name = f
            .file_stem()
            .map_or("run".to_string(), |s| s.to_string_lossy().into_owned());
        let parent = f
            .parent()
            .and_then(|p| p.file_name())
            .map(|p| p.to_string_lossy().into_owned());
        docs.push((parent.map_or(name.clone(), |p| format!("{p}/{name}")), d));
    }
    // One file re-renders under its own name (suite.json -> suite.*); several: report.*.
    let stem = match a.files.as_slice() {
        [one] => one
            .file_stem()
            .map_or("report".to_string(), |s| s.to_string_lossy().into_owned()),
        _ => "report".to_string(),
    };
    let doc = if docs.len() == 1 {
        // One run: re-rendered as it was (its own charts), retitled if asked.
        let (_, mut d) = docs.remove(0);
        if let Some(t) = &a.title {
            d.title = t.clone();
        }
        d
    } else {
        merge(docs, a.title.as_deref())?
    };
    print_tables(&doc.series);
    write_files(
        &doc,
        a.out.as_deref(),
        &format!("report-{}", output::now_stamp()),
        &stem,
        None,
    )?;
    Ok(true)
}

/// One line for the progress display after a step.
pub(crate) fn step_line(test: &str, kind: Kind, s: &StepReport) -> String {
    let f = &s.ferry;
    let op = report::op_name(kind.rate_unit());
    let relay = s.relay.as_ref().map_or(String::new(), |r| {
        format!(
            ", relay {} RT/s ({})",
            report::group_thousands(r.rate),
            s.ferry_vs_relay_pct
                .map_or("-".into(), |p| format!("Ferry {p:.0}%"))
        )
    });
    let depth = match (kind, f.queue_depth_end) {
        (Kind::PsCc, _) => String::new(),
        (_, Some(d)) => format!(", depth at end {d}"),
        (_, None) => String::new(),
    };
    let depth = match &f.compression {
        Some(c) => format!(
            "{depth}, {} COMPRATE {:.0}% COMPTIME {:.0} µs",
            c.technique, c.rate_long_pct, c.time_long_us
        ),
        None => depth,
    };
    let depth = match (kind, f.sent) {
        (Kind::PsCc, Some(publications)) => format!(
            "{depth}, {} publications/s, {}/s per subscriber, {} copies due at end{}",
            report::group_thousands(measure::rate(publications, f.window.elapsed_secs)),
            report::group_thousands(report::per_subscriber(f)),
            f.queue_depth_end.unwrap_or(0),
            f.lost
                .filter(|&n| n > 0)
                .map_or(String::new(), |n| format!(", {n} copies lost"))
        ),
        _ => depth,
    };
    let depth = match (
        f.window.requesters_qmgr_us_per_rt,
        f.window.responders_qmgr_us_per_rt,
    ) {
        (Some(a), Some(b)) => match &f.instances {
            Some(shares) => format!(
                "{depth} (requesters' QM {a:.1}, responders' QMs {b:.1}), requests {}",
                cluster::describe_shares(shares)
            ),
            None => format!(
                "{depth} (requesters' QM {a:.1}, responders' QM {b:.1}), {} messages per batch",
                f.messages_per_batch
                    .map_or("-".into(), |m| format!("{m:.1}"))
            ),
        },
        _ => depth,
    };
    format!(
        "{test}, {} {}: {} {}, server {}% CPU, {} µs/{op}, p99 {:.0} µs{depth}{relay}{}",
        f.clients,
        kind.clients_are(),
        report::group_thousands(f.window.rate),
        kind.rate_unit(),
        f.window
            .server_cpu_pct
            .map_or("-".into(), |v| format!("{v:.1}")),
        f.window
            .server_us_per_rt
            .map_or("-".into(), |v| format!("{v:.1}")),
        f.latency.p99_us,
        if f.valid {
            String::new()
        } else {
            format!(" INVALID: {}", f.problems.join("; "))
        }
    )
}

/// Says on stderr which result files a run wrote.
fn print_written(files: &[PathBuf]) {
    let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    eprintln!("wrote {}", names.join(", "));
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Top {
        #[command(subcommand)]
        cmd: Cmd,
    }

    #[derive(clap::Subcommand)]
    enum Cmd {
        Perf(PerfArgs),
    }

    fn parse_any(args: &[&str]) -> Result<Workload, String> {
        let mut v = vec!["ferry", "perf"];
        v.extend_from_slice(args);
        match Top::try_parse_from(v).map_err(|e| e.to_string())?.cmd {
            Cmd::Perf(p) => Ok(p.workload),
        }
    }

    fn parse(args: &[&str]) -> Result<RrArgs, String> {
        let mut v = vec!["rr-cc"];
        v.extend_from_slice(args);
        match parse_any(&v)? {
            Workload::RrCc(a) => Ok(*a),
            other => Err(format!("not rr-cc: {other:?}")),
        }
    }

    #[test]
    fn defaults_are_the_reports() {
        let a = parse(&[]).expect("defaults parse");
        assert_eq!(a.steps.clients.0, vec![1, 4, 16, 64]);
        assert_eq!(a.steps.sizes.0, vec![2048]);
        assert_eq!(a.steps.secs, 10.0);
        assert_eq!(a.steps.warmup, 3.0);
        assert_eq!(a.steps.queues, 10);
        assert_eq!(a.steps.responders, Responders::Auto);
        assert_eq!(a.steps.sharecnv, None);
        assert_eq!(a.steps.rate, None);
        assert!(!a.steps.persistent && !a.steps.syncpoint);
        assert_eq!(a.steps.fault, Fault::None);
        assert!(a.target.connect.is_none());
    }

    #[test]
    fn flags_parse() {
        let a = parse(&[
            "--clients",
            "2,8",
            "--size",
            "20KB",
            "--secs",
            "1",
            "--warmup",
            "0",
            "--responders",
            "12",
            "--persistent",
            "--syncpoint",
            "--rate",
            "50",
            "--sharecnv",
            "1",
            "--connect",
            "host(1414)",
            "--channel",
            "APP.SVRCONN",
            "--qmgr",
            "QM1",
            "--out",
            "/tmp/x",
        ])
        .expect("parses");
        assert_eq!(a.steps.clients.0, vec![2, 8]);
        assert_eq!(a.steps.sizes.0, vec![20 * 1024]);
        assert_eq!(a.steps.responders, Responders::Fixed(12));
        assert!(a.steps.persistent && a.steps.syncpoint);
        assert_eq!(a.steps.rate, Some(50.0));
        assert_eq!(a.steps.sharecnv, Some(1));
        assert_eq!(a.target.channel, "APP.SVRCONN");
        assert_eq!(a.target.qmgr.as_deref(), Some("QM1"));
        let a = parse(&["--sizes", "256B,2MB"]).expect("list");
        assert_eq!(a.steps.sizes.0, vec![256, 2 << 20]);
    }

    #[test]
    fn every_subcommand_parses() {
        assert!(matches!(parse_any(&["rr-bb"]), Ok(Workload::RrBb(_))));
        assert!(matches!(parse_any(&["rr-cb"]), Ok(Workload::RrCb(_))));
        assert!(matches!(parse_any(&["sr-cc"]), Ok(Workload::SrCc(_))));
        match parse_any(&["connect", "--clients", "500", "--interval", "10"]) {
            Ok(Workload::Connect(c)) => {
                assert_eq!(c.steps.clients.0, vec![500]);
                assert_eq!(c.interval, 10.0);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse_any(&["ps-cc", "--clients", "4"]),
            Ok(Workload::PsCc(_))
        ));
        assert!(
            matches!(parse_any(&["report", "a.json", "b.json"]), Ok(Workload::Report(r)) if r.files.len() == 2)
        );
        assert!(parse_any(&["report"]).is_err(), "report needs files");
        assert!(
            matches!(parse_any(&["suite", "standard", "--list"]), Ok(Workload::Suite(s)) if s.list)
        );
    }

    #[test]
    fn bad_flags_say_what_is_accepted() {
        let e = parse(&["--clients", "0"]).expect_err("0 clients");
        assert!(e.contains("1,4,16,64"), "{e}");
        let e = parse(&["--size", "3XB"]).expect_err("3XB");
        assert!(e.contains("256B, 2KB"), "{e}");
        let e = parse(&["--sizes", "2KB,3XB"]).expect_err("3XB in a list");
        assert!(e.contains("invalid size '3XB'"), "{e}");
        let e = parse(&["--rate", "0"]).expect_err("rate 0");
        assert!(e.contains("per requester"), "{e}");
        let e = parse(&["--sharecnv", "5000"]).expect_err("sharecnv");
        assert!(e.contains("0 to 999"), "{e}");
        assert!(
            parse(&["--channel", "X"]).is_err(),
            "--channel needs --connect"
        );
        assert!(
            parse(&["--bindings", "/x"]).is_err(),
            "--bindings needs --connect"
        );
    }

    #[test]
    fn placeholders_and_mixes_are_refused_clearly() {
        let t = parse(&["--cipherspec", "tls_aes_128_gcm_sha256"])
            .expect("parses")
            .target;
        assert_eq!(t.cipherspec.as_deref(), Some("TLS_AES_128_GCM_SHA256"));
        let e = parse(&["--cipherspec", "NULL_SHA"]).expect_err("not offered");
        assert!(e.contains("deprecated"), "{e}");
        let e = parse(&["--compress", "LZ4"]).expect_err("no bare LZ4");
        assert!(e.contains("LZ4FAST"), "{e}");
        let e = parse(&["--compress", "ANY"]).expect_err("the receiving end's");
        assert!(e.contains("receiving end"), "{e}");
        let s = parse(&["--compress", "lz4fast"]).expect("parses").steps;
        assert!(check_args(Kind::RrCc, &s, None).is_ok());
        assert_eq!(
            s.body_kind(),
            compression::BodyKind::Json,
            "JSON with --compress"
        );
        assert_eq!(
            test_name(Kind::RrCc, 2048, &s, 10),
            "RR-CC (2KB Non-persistent, COMPMSG(LZ4FAST), JSON)"
        );
        let e = check_args(Kind::RrBb, &s, None).expect_err("bindings");
        assert!(e.to_string().contains("bindings mode"), "{e}");
        let s = parse(&["--body", "json"]).expect("parses").steps;
        assert_eq!(s.body_kind(), compression::BodyKind::Json);
        let s = parse(&["--responders", "3"]).expect("parses").steps;
        let e = check_args(Kind::RrBb, &s, None).expect_err("responders");
        assert!(
            e.to_string()
                .contains("every request queue needs a responder"),
            "{e}"
        );
        assert!(
            check_args(Kind::SrCc, &s, None).is_ok(),
            "SR: receivers per queue"
        );
        let s = parse(&[]).expect("parses").steps;
        let e = check_args(Kind::SrCc, &s, Some(Path::new("/bin/sh"))).expect_err("relay");
        assert!(e.to_string().contains("rr-cc only"), "{e}");
    }

    #[test]
    fn test_names_follow_the_reports() {
        let s = parse(&["--persistent", "--syncpoint"])
            .expect("parses")
            .steps;
        assert_eq!(
            test_name(Kind::RrCc, 2048, &s, 10),
            "RR-CC (2KB Persistent, syncpoint)"
        );
        let s = parse(&["--rate", "100"]).expect("parses").steps;
        assert_eq!(
            test_name(Kind::SrCc, 20 * 1024, &s, 10),
            "SR-CC (20KB Non-persistent, 100 msg/s per requester)"
        );
        let s = parse(&[]).expect("parses").steps;
        assert_eq!(
            test_name(Kind::RrCc, 2048, &s, 1),
            "RR-CC (2KB Non-persistent, SHARECNV 1)"
        );
        assert_eq!(
            test_name(Kind::Connect, 2048, &s, 1),
            "Connection test (2KB Non-persistent, SHARECNV 1)"
        );
    }

    #[test]
    fn amqp_options_parse_and_need_the_protocol() {
        let a = parse(&[
            "--protocol",
            "amqp",
            "--url",
            "amqp://localhost:5673",
            "--queue-prefix",
            "/amq/queue/",
            "--reply-queues",
            "per-requester",
            "--presettled",
            "--prefetch",
            "10",
            "--sessions-per-connection",
            "1",
            "--user",
            "guest",
            "--password",
            "guest",
            "--server-pid",
            "42",
        ])
        .expect("parses");
        assert_eq!(a.protocol.protocol, Protocol::Amqp);
        assert_eq!(a.protocol.url.as_deref(), Some("amqp://localhost:5673"));
        assert_eq!(a.protocol.reply_queues, ReplyQueues::PerRequester);
        assert!(a.protocol.presettled);
        assert_eq!(a.protocol.prefetch, 10);
        assert_eq!(a.protocol.sessions_per_connection, Some(1));
        assert_eq!(a.target.server_pid, Some(42));
        assert!(check_protocol(&a).is_ok());
        let d = parse(&[]).expect("defaults");
        assert_eq!(d.protocol.protocol, Protocol::Native);
        assert!(check_protocol(&d).is_ok());
        let n = parse(&["--url", "amqp://h"]).expect("parses");
        let e = check_protocol(&n).expect_err("--url without amqp");
        assert!(e.to_string().contains("--protocol amqp"), "{e}");
        assert!(
            parse(&["--url", "amqp://h", "--connect", "h(1414)"]).is_err(),
            "--url and --connect conflict"
        );
        let sync = parse(&["--protocol", "amqp", "--sync-send"]).expect("parses");
        assert!(sync.protocol.sync_send);
        assert!(
            parse(&["--protocol", "amqp", "--sync-send", "--presettled"]).is_err(),
            "a send waits for its outcome or has none"
        );
        let e = check_protocol(&parse(&["--sync-send"]).expect("parses")).expect_err("native");
        assert!(e.to_string().contains("--sync-send"), "{e}");
        let s = parse(&["--protocol", "amqp", "--persistent"]).expect("parses");
        assert_eq!(
            crate::amqp::run::test_name(Kind::RrCc, 2048, &s.steps, &s),
            "RR-CC AMQP (2KB Persistent)"
        );
        assert_eq!(
            crate::amqp::run::test_name(Kind::SrCc, 2048, &a.steps, &a),
            "SR-CC AMQP (2KB Non-persistent, presettled, prefetch 10, 1 session per \
             connection)"
        );
        assert_eq!(
            crate::output::slug(&crate::amqp::run::title(Kind::RrCc)),
            "rr-cc-amqp"
        );
        let e = crate::amqp::run::check(Kind::RrBb, &s).expect_err("no bindings");
        assert!(e.to_string().contains("rr-cc, sr-cc and ps-cc"), "{e}");
        let e = crate::amqp::run::check(
            Kind::RrCc,
            &parse(&["--protocol", "amqp", "--syncpoint"]).expect("p"),
        )
        .expect_err("no transactions");
        assert!(e.to_string().contains("transactions"), "{e}");
    }

    fn parse_ps(args: &[&str]) -> Result<PsArgs, String> {
        let mut v = vec!["ps-cc"];
        v.extend_from_slice(args);
        match parse_any(&v)? {
            Workload::PsCc(a) => Ok(*a),
            other => Err(format!("not ps-cc: {other:?}")),
        }
    }

    #[test]
    fn ps_cc_shapes_are_checked_and_named() {
        let a = parse_ps(&[]).expect("defaults");
        assert_eq!((a.publishers, a.topics()), (1, 1));
        assert_eq!(a.steps.clients.0, vec![1, 4, 16, 64]);
        assert!(a.check().is_ok());
        assert_eq!(a.shape(), "1 publisher on 1 topic");
        assert!(ps_name_parts(&a).is_empty(), "the report's one on one");
        let c = a.config(2048, 10);
        assert_eq!((c.publishers, c.topics, c.size), (1, 1, 2048));
        assert!(!c.persistent);

        let a =
            parse_ps(&["--publishers", "4", "--clients", "4,8", "--rate", "1000"]).expect("parses");
        assert_eq!(a.topics(), 4, "one topic per publisher");
        assert!(a.check().is_ok());
        let name = with_parts(test_name(Kind::PsCc, 2048, &a.steps, 10), ps_name_parts(&a));
        assert_eq!(
            name,
            "PS-CC (2KB Non-persistent, 1000 msg/s per publisher, 4 publishers on 4 topics)"
        );
        let a = parse_ps(&["--publishers", "2", "--topics", "1"]).expect("parses");
        assert_eq!(a.shape(), "2 publishers on 1 topic");
        assert!(a.check().is_ok());

        let e = parse_ps(&["--publishers", "2", "--topics", "3"])
            .expect("parses")
            .check()
            .expect_err("a topic without a publisher");
        assert!(
            e.to_string().contains("every topic needs a publisher"),
            "{e}"
        );
        let e = parse_ps(&["--publishers", "4", "--clients", "2,8"])
            .expect("parses")
            .check()
            .expect_err("a topic without a subscriber");
        assert!(
            e.to_string()
                .contains("--clients 2 is fewer than the 4 topics"),
            "{e}"
        );
        let e = parse_ps(&["--responders", "3"])
            .expect("parses")
            .check()
            .expect_err("subscribers are --clients");
        assert!(e.to_string().contains("--clients"), "{e}");
        assert!(parse_ps(&["--publishers", "0"]).is_err());
        assert!(
            parse_ps(&["--relay-baseline", "/bin/sh"]).is_err(),
            "the relay yardstick is request/reply's"
        );
        let e = parse_ps(&["--no-ack"])
            .expect("parses")
            .check()
            .expect_err("NoAck is AMQP's");
        assert!(e.to_string().contains("--protocol amqp"), "{e}");
        let amqp = parse_ps(&[
            "--protocol",
            "amqp",
            "--no-ack",
            "--publishers",
            "2",
            "--clients",
            "2,8",
        ])
        .expect("parses");
        assert!(amqp.check().is_ok());
        assert_eq!(
            crate::amqp::run::ps_parts(&amqp),
            ["2 publishers on 2 topics", "NoAck"]
        );
        assert!(crate::amqp::run::check(Kind::PsCc, &amqp.common()).is_ok());
        let common = parse_ps(&["--persistent"]).expect("parses").common();
        assert!(common.steps.persistent && common.relay_baseline.is_none());
        assert_eq!(with_parts("X (a)".into(), vec![]), "X (a)");
    }

    #[test]
    fn overlays_rename_colliding_series() {
        let d = crate::output::testdata::document();
        let merged =
            merge(vec![("a/run".into(), d.clone()), ("b/run".into(), d)], None).expect("merged");
        assert_eq!(merged.series.len(), 4);
        assert_eq!(merged.series[0].test, "RR-CC (2KB Non-persistent) [a/run]");
        assert_eq!(merged.series[2].test, "RR-CC (2KB Non-persistent) [b/run]");
        assert_eq!(merged.title, "overlay of a/run, b/run");
    }
}
