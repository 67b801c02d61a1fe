//! RR-CLUSTER-BB (seed 003, "Moving messages across cluster channels"): request/reply
//! across a cluster of three queue managers. Requesters connect to a partial repository
//! (A); every request queue is a cluster queue with an instance on each of two full
//! repositories (B and C), each instance with its own responders. A requester opens its
//! request queue with BIND_ON_OPEN (each handle sends to one instance, chosen at MQOPEN)
//! or BIND_NOT_FIXED (an instance chosen for every put); the replies go back to A's
//! reply queue by the requests' ReplyToQMgr, over the cluster too. The run shows how
//! the requests were shared between the instances (MSGS of A's cluster-sender channels
//! to B and C).
//!
//! The setup, all MQSC, is the one an MQ administrator writes:
//!
//! ```text
//! * B (and C, the other way round)            * A
//! ALTER QMGR REPOS(PERF)                      DEFINE CHANNEL(TO.A) CHLTYPE(CLUSRCVR)
//! DEFINE CHANNEL(TO.B) CHLTYPE(CLUSRCVR)             CONNAME(A) CLUSTER(PERF)
//!        CONNAME(B) CLUSTER(PERF)             DEFINE CHANNEL(TO.B) CHLTYPE(CLUSSDR)
//! DEFINE CHANNEL(TO.C) CHLTYPE(CLUSSDR)              CONNAME(B) CLUSTER(PERF)
//!        CONNAME(C) CLUSTER(PERF)             DEFINE QLOCAL(REPLY)
//! DEFINE QLOCAL(REQUEST.n) CLUSTER(PERF)
//! ```

use ferry_client::Connection;
use ferry_mqi::{ObjectDescriptor, OpenOptions};

use super::distributed::channel_figures;
use super::rr::{request_queue_name, RrConfig, REPLY_QUEUE};
use crate::target::{run_mqsc, QueueManager};
use crate::PerfError;

/// The cluster's name.
pub const CLUSTER: &str = "PERF";
/// The requesters' queue manager (a partial repository), RR-DQ's.
pub use super::distributed::REQUESTERS_QMGR;
/// The queue managers hosting the request queues (the full repositories).
pub const HOST_QMGRS: [&str; 2] = ["PERFQMB", "PERFQMC"];
/// How long the cluster may take to form and to share the queues.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(60);

/// A queue manager's cluster-receiver channel, named as MQ's examples name them (the
/// cluster-senders to it have the same name).
pub fn receiver_channel(qmgr: &str) -> String {
    format!("TO.{qmgr}")
}

/// The share of a step's requests one instance got.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InstanceShare {
    /// The hosting queue manager.
    pub qmgr: String,
    /// Requests sent to it in the step (the cluster-sender's MSGS, which also counts the
    /// few repository messages).
    pub requests: u64,
}

/// Forms the cluster: `hosts` are full repositories joined to each other, `a` a partial
/// repository joined to the first host; waits until each full repository knows every
/// member.
pub async fn join(
    a: &QueueManager,
    admin_a: &Connection,
    hosts: &[QueueManager],
    host_admins: &[Connection],
) -> Result<(), PerfError> {
    debug_assert_eq!(hosts.len(), host_admins.len());
    let receiver = |qm: &QueueManager| {
        format!(
            "DEFINE CHANNEL({}) CHLTYPE(CLUSRCVR) CONNAME('{}') CLUSTER({CLUSTER}) \
             SHORTTMR(1) REPLACE",
            receiver_channel(qm.name()),
            qm.conn_name()
        )
    };
    let sender_to = |qm: &QueueManager| {
        format!(
            "DEFINE CHANNEL({}) CHLTYPE(CLUSSDR) CONNAME('{}') CLUSTER({CLUSTER}) \
             SHORTTMR(1) REPLACE",
            receiver_channel(qm.name()),
            qm.conn_name()
        )
    };
    for (i, (host, admin)) in hosts.iter().zip(host_admins).enumerate() {
        run_mqsc(admin, &format!("ALTER QMGR REPOS({CLUSTER})")).await?;
        run_mqsc(admin, &receiver(host)).await?;
        for (j, other) in hosts.iter().enumerate() {
            if i != j {
                run_mqsc(admin, &sender_to(other)).await?;
            }
        }
    }
    run_mqsc(admin_a, &receiver(a)).await?;
    run_mqsc(admin_a, &sender_to(&hosts[0])).await?;
    let members: Vec<&str> = std::iter::once(a.name())
        .chain(hosts.iter().map(|h| h.name()))
        .collect();
    for (host, admin) in hosts.iter().zip(host_admins) {
        settle(&format!("{} to know every member", host.name()), || async {
            let known = cluster_qmgrs(admin).await?;
            Ok(members.iter().all(|m| known.iter().any(|k| k == m)))
        })
        .await?;
    }
    Ok(())
}

/// Defines the workload's queues: an instance of every request queue on each host
/// (CLUSTER(PERF), DEFBIND(OPEN)), the reply queue on `a`; then waits until `a` knows
/// every instance (a partial repository learns a cluster queue when it is first
/// opened, so each is opened once).
pub async fn prepare_queues(
    admin_a: &Connection,
    host_admins: &[Connection],
    cfg: &RrConfig,
) -> Result<(), PerfError> {
    let names: Vec<String> = (0..cfg.queues).map(request_queue_name).collect();
    for admin in host_admins {
        for name in &names {
            run_mqsc(
                admin,
                &format!(
                    "DEFINE QLOCAL({name}) CLUSTER({CLUSTER}) DEFBIND(OPEN) \
                     MAXDEPTH(999999999) REPLACE"
                ),
            )
            .await?;
        }
    }
    // Defined rather than looked up: on a cluster member an unknown name is first asked
    // of the full repositories.
    run_mqsc(admin_a, &format!("DEFINE QLOCAL({REPLY_QUEUE}) REPLACE")).await?;
    let wanted = names.len() * host_admins.len();
    settle(
        &format!("{} to know every request queue instance", REQUESTERS_QMGR),
        || async {
            for name in &names {
                // Opening asks the full repositories about the queue; until they
                // answer it may be unknown here (2085), which is what waiting is for.
                let od = ObjectDescriptor::queue(name)
                    .map_err(|e| PerfError::Setup(format!("queue name {name}: {e}")))?;
                if let Ok(q) = admin_a
                    .open(&od, OpenOptions::OUTPUT | OpenOptions::BIND_NOT_FIXED)
                    .await
                {
                    let _ = q.close(Default::default()).await;
                }
            }
            Ok(queue_instances(admin_a).await? >= wanted)
        },
    )
    .await
}

/// Requests sent so far from `admin_a`'s queue manager to each host (MSGS of its
/// cluster-sender channel to it; `None` when it has no status yet).
pub async fn requests_sent(
    admin_a: &Connection,
    hosts: &[QueueManager],
) -> Result<Vec<Option<u64>>, PerfError> {
    let mut sent = Vec::with_capacity(hosts.len());
    for host in hosts {
        let (_, counts) = channel_figures(admin_a, &receiver_channel(host.name())).await?;
        sent.push(counts.map(|(messages, _)| messages));
    }
    Ok(sent)
}

/// Each host's requests between two readings of [`requests_sent`] (a channel with no
/// status before counts from 0).
pub fn shares(
    hosts: &[QueueManager],
    before: &[Option<u64>],
    after: &[Option<u64>],
) -> Vec<InstanceShare> {
    hosts
        .iter()
        .zip(before.iter().zip(after))
        .map(|(host, (b, a))| InstanceShare {
            qmgr: host.name().to_string(),
            requests: a.unwrap_or(0).saturating_sub(b.unwrap_or(0)),
        })
        .collect()
}

/// The shares as a step line shows them: `PERFQMB 51%, PERFQMC 49%`.
pub fn describe_shares(shares: &[InstanceShare]) -> String {
    let total: u64 = shares.iter().map(|s| s.requests).sum();
    let parts: Vec<String> = shares
        .iter()
        .map(|s| {
            let pct = if total == 0 {
                0.0
            } else {
                100.0 * s.requests as f64 / total as f64
            };
            format!("{} {pct:.0}%", s.qmgr)
        })
        .collect();
    parts.join(", ")
}

/// The queue managers DISPLAY CLUSQMGR lists.
async fn cluster_qmgrs(admin: &Connection) -> Result<Vec<String>, PerfError> {
    let out = admin
        .mqsc("DISPLAY CLUSQMGR(*)")
        .await
        .map_err(|e| PerfError::Mq("DISPLAY CLUSQMGR(*)".into(), e))?;
    Ok(values(&out.lines.join(" "), "CLUSQMGR"))
}

/// How many instances of the request queues DISPLAY QCLUSTER lists.
async fn queue_instances(admin: &Connection) -> Result<usize, PerfError> {
    let out = admin
        .mqsc("DISPLAY QCLUSTER(REQUEST.*) CLUSQMGR")
        .await
        .map_err(|e| PerfError::Mq("DISPLAY QCLUSTER".into(), e))?;
    Ok(values(&out.lines.join(" "), "CLUSQMGR").len())
}

/// Every value of `key(...)` in an MQSC answer.
fn values(text: &str, key: &str) -> Vec<String> {
    let pattern = format!("{key}(");
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(&pattern) {
        // Not the tail of a longer keyword.
        let whole = at == 0 || !rest.as_bytes()[at - 1].is_ascii_alphanumeric();
        let start = at + pattern.len();
        let Some(len) = rest[start..].find(')') else {
            break;
        };
        if whole {
            found.push(rest[start..start + len].trim().to_string());
        }
        rest = &rest[start + len..];
    }
    found
}

/// Polls `done` every 100 ms until it holds, for at most [`SETTLE`]; then fails naming
/// `what` was waited for.
async fn settle<F, Fut>(what: &str, mut done: F) -> Result<(), PerfError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<bool, PerfError>>,
{
    let deadline = tokio::time::Instant::now() + SETTLE;
    loop {
        if done().await? {
            return Ok(());
        }
        if tokio::time::Instant::now() > deadline {
            return Err(PerfError::Setup(format!(
                "the cluster did not settle: waited {} s for {what}",
                SETTLE.as_secs()
            )));
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_read_as_percentages() {
        let shares = [
            InstanceShare {
                qmgr: "PERFQMB".into(),
                requests: 300,
            },
            InstanceShare {
                qmgr: "PERFQMC".into(),
                requests: 100,
            },
        ];
        assert_eq!(describe_shares(&shares), "PERFQMB 75%, PERFQMC 25%");
    }

    #[test]
    fn mqsc_values_are_read_whole() {
        let text = "AMQ8441I: CLUSQMGR(PERFQMA) CHANNEL(TO.PERFQMA) \
                    AMQ8441I: CLUSQMGR(PERFQMB) XCLUSQMGR(NOT)";
        assert_eq!(values(text, "CLUSQMGR"), vec!["PERFQMA", "PERFQMB"]);
        assert!(values(text, "QUEUE").is_empty());
    }
}
