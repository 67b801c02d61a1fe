//! `ferry monitor QM1 [CLASS TYPE [QUEUE]]`: MQ's amqsrua, the resource-monitoring
//! sample. An application like any other: it connects (over the bindings socket, or as
//! a client with `--connname`), subscribes to the queue manager's `$SYS` monitoring
//! topics and prints what arrives.
//!
//! Without CLASS and TYPE it reads the METADATA publications (retained, so they arrive
//! at once) and lists the classes and their types. With them it reads that type's
//! element descriptions, subscribes to its data topic (for a per-queue class, the
//! queue's) and prints each publication as amqsrua does: a "Publication received
//! PutDate:... PutTime:... Interval:..." line, then one line per element with its
//! description and value. `-n` ends it after that many publications; `--timeout`
//! when one does not come in time (exit 3); otherwise it runs until interrupted.

use crate::sample_connection;
use ferry_client::{Connection, Subscription};
use ferry_monitoring::publication::{
    classes_topic, publication_lines, read_classes, read_elements, read_types, topic_object,
    TypeElements, MQIAMO_MONITOR_FLAGS_OBJNAME,
};
use ferry_mqi::pcf::{Encoding, PcfMessage};
use ferry_mqi::SubscriptionDescriptor;
use ferry_server::home::FerryHome;
use std::io::Write;
use std::process::ExitCode;

/// What `ferry monitor` was asked.
#[derive(Clone, Debug)]
pub struct MonitorArgs {
    /// Queue manager name.
    pub qmgr: String,
    /// Class (CPU, DISK, STATMQI, STATQ); none: list the classes.
    pub class: Option<String>,
    /// Type within the class.
    pub ty: Option<String>,
    /// The object (queue) of a per-object class.
    pub object: Option<String>,
    /// Publications to print before ending (none: until interrupted).
    pub count: Option<u64>,
    /// Seconds to wait for each publication (none: without limit).
    pub timeout_secs: Option<u64>,
    /// Connect as a client to this CONNAME (`host(port)`) rather than over bindings.
    pub connname: Option<String>,
    /// The SVRCONN channel for `connname`.
    pub channel: String,
}

/// Runs the monitor. Exit 0 when done, 3 when a publication did not come in time, 20
/// when it cannot connect or the class, type or object is not known.
pub fn run(home: &FerryHome, args: &MonitorArgs) -> ExitCode {
    sample_connection::run_to_exit(async {
        match monitor(home, args).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(Failure::Ended(reason)) => {
                eprintln!("ferry monitor: the queue manager is ending ({reason})");
                ExitCode::SUCCESS
            }
            Err(Failure::TimedOut(what)) => {
                eprintln!("ferry monitor: no {what} within the timeout");
                ExitCode::from(3)
            }
            Err(Failure::Other(e)) => {
                eprintln!("ferry monitor: {e}");
                ExitCode::from(20)
            }
        }
    })
}

/// Why the monitor ended early.
enum Failure {
    /// The queue manager is quiescing or stopping (as MQ's samples, the monitor ends).
    Ended(ferry_mqi::ReasonCode),
    /// A publication did not come in time.
    TimedOut(String),
    /// Anything else, said.
    Other(String),
}

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure::Other(e.to_string())
    }
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Subscribes to `topic` (non-durable, managed).
async fn subscribe(conn: &Connection, topic: &str) -> Result<Subscription, Failure> {
    conn.subscribe(&SubscriptionDescriptor::managed(topic))
        .await
        .map_err(|e| Failure::Other(format!("cannot subscribe to {topic}: {}", e.reason)))
}

/// The next publication on `sub` as PCF, with its PutDate and PutTime.
async fn next_pcf(
    sub: &Subscription,
    wait_ms: i32,
    what: &str,
) -> Result<(PcfMessage, String, String), Failure> {
    use ferry_mqi::ReasonCode;
    let next = sub.next(wait_ms).await.map_err(|e| match e.reason {
        r @ (ReasonCode::QMgrQuiescing
        | ReasonCode::QMgrStopping
        | ReasonCode::ConnectionBroken) => Failure::Ended(r),
        r => Failure::Other(r.to_string()),
    })?;
    let Some(p) = next else {
        return Err(Failure::TimedOut(what.to_string()));
    };
    let enc = Encoding::from_mqmd(p.md.encoding);
    let m = PcfMessage::decode(&p.message.data, enc)
        .map_err(|e| Failure::Other(format!("{what}: not a PCF message: {e}")))?;
    Ok((
        m,
        p.md.put_date.as_str().to_string(),
        p.md.put_time.as_str().to_string(),
    ))
}

/// The retained METADATA publication on `topic`.
async fn metadata(conn: &Connection, topic: &str, wait_ms: i32) -> Result<PcfMessage, Failure> {
    let sub = subscribe(conn, topic).await?;
    let (m, _, _) = next_pcf(&sub, wait_ms, topic).await?;
    let _ = sub.close(false).await;
    Ok(m)
}

async fn monitor(home: &FerryHome, args: &MonitorArgs) -> Result<(), Failure> {
    let conn = sample_connection::connect(
        home,
        &args.qmgr,
        args.connname.as_deref(),
        &args.channel,
        "ferry monitor",
    )
    .await?;
    // METADATA is retained: it is there at once, or the queue manager is not ready.
    let meta_wait = args.timeout_secs.map_or(10_000, |s| {
        (s.saturating_mul(1000)).min(i32::MAX as u64) as i32
    });
    let classes = read_classes(&metadata(&conn, &classes_topic(&args.qmgr), meta_wait).await?);
    let Some(class_name) = &args.class else {
        for c in &classes {
            let per = if c.flags & MQIAMO_MONITOR_FLAGS_OBJNAME != 0 {
                " (per queue)"
            } else {
                ""
            };
            say(&format!("{} : {}{per}", c.name, c.description));
            for t in read_types(&metadata(&conn, &c.topic, meta_wait).await?) {
                say(&format!("  {} : {}", t.name, t.description));
            }
        }
        let _ = conn.disconnect().await;
        return Ok(());
    };
    let class = classes
        .iter()
        .find(|c| c.name.eq_ignore_ascii_case(class_name))
        .ok_or_else(|| {
            format!(
                "no class {class_name} (ferry monitor {} lists them)",
                args.qmgr
            )
        })?;
    let types = read_types(&metadata(&conn, &class.topic, meta_wait).await?);
    let ty_name = args.ty.as_deref().unwrap_or_default();
    let ty = types
        .iter()
        .find(|t| t.name.eq_ignore_ascii_case(ty_name))
        .ok_or_else(|| format!("class {} has no type {ty_name}", class.name))?;
    let meta: TypeElements = read_elements(&metadata(&conn, &ty.topic, meta_wait).await?)
        .ok_or_else(|| format!("{}: no element descriptions", ty.topic))?;
    let topic = if class.flags & MQIAMO_MONITOR_FLAGS_OBJNAME != 0 {
        let object = args
            .object
            .as_deref()
            .ok_or_else(|| format!("class {} needs a queue name", class.name))?;
        meta.topic.replace("%s", &topic_object(object))
    } else {
        meta.topic.clone()
    };
    let sub = subscribe(&conn, &topic).await?;
    let wait_ms = args
        .timeout_secs
        .map_or(-1, |s| (s.saturating_mul(1000)).min(i32::MAX as u64) as i32);
    let mut printed = 0u64;
    while args.count.is_none_or(|n| printed < n) {
        let (m, date, time) = next_pcf(&sub, wait_ms, &format!("publication on {topic}")).await?;
        match publication_lines(&m, &meta, &date, &time) {
            Ok(lines) => lines.iter().for_each(|l| say(l)),
            Err(e) => say(&format!("{e}")),
        }
        printed += 1;
    }
    let _ = sub.close(false).await;
    let _ = conn.disconnect().await;
    Ok(())
}
