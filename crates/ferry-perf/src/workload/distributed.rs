//! RR-DQ-BB (seed 000 section 3.2): request/reply across two queue managers linked by
//! message channels. Requesters connect to the requesters' queue manager, responders to
//! the responders'; each request crosses a sender/receiver channel pair one way, each
//! reply the other pair back, so a round trip is four puts and four gets on two queue
//! managers plus two channel hops (the report's RR-BB has two and two on one).
//!
//! The setup, all MQSC, is the one an MQ administrator writes:
//!
//! ```text
//! * requesters' queue manager (A)             * responders' queue manager (B)
//! DEFINE QLOCAL(B) USAGE(XMITQ)               DEFINE QLOCAL(A) USAGE(XMITQ)
//! DEFINE CHANNEL(PERF.A.TO.B) CHLTYPE(SDR)    DEFINE CHANNEL(PERF.A.TO.B) CHLTYPE(RCVR)
//!        CONNAME(B's listener) XMITQ(B)       DEFINE CHANNEL(PERF.B.TO.A) CHLTYPE(SDR)
//! DEFINE CHANNEL(PERF.B.TO.A) CHLTYPE(RCVR)          CONNAME(A's listener) XMITQ(A)
//! DEFINE QREMOTE(REQUEST.n) RNAME(REQUEST.n)  DEFINE QLOCAL(REQUEST.n)
//!        RQMNAME(B) XMITQ(B)
//! DEFINE QLOCAL(REPLY)
//! ```
//!
//! Replies find their way back by the requests' ReplyToQMgr, which A fills with its own
//! name, and B resolves to its transmission queue named A. Both sender channels run
//! NPMSPEED(FAST) (MQ's default) and BATCHSZ 50.
//!
//! With several channel pairs (`--channel-pairs N`, as the report spreads its remote
//! queues over several sender/receiver pairs), pair k > 0 has its own transmission queues
//! (`B.k` on A, `A.k` on B) and channels (`…TO.B.k`); request queue i goes over pair
//! i mod N, and its requesters name `A.Pk` as ReplyToQMgr, a queue-manager alias on B
//! (`DEFINE QREMOTE(A.Pk) RNAME(' ') RQMNAME(A) XMITQ(A.k)`), so its replies come back
//! over the same pair.

use ferry_client::Connection;

use super::rr::{request_queue_name, RrConfig, REPLY_QUEUE};
use crate::target::{ensure_queue, run_mqsc, QueueManager};
use crate::PerfError;

/// The requesters' queue manager of an embedded RR-DQ-BB run.
pub const REQUESTERS_QMGR: &str = "PERFQMA";
/// The responders' queue manager of an embedded RR-DQ-BB run.
pub const RESPONDERS_QMGR: &str = "PERFQMB";

/// The most channel pairs a run links the queue managers with.
pub const MAX_CHANNEL_PAIRS: usize = 9;

/// The sender channel from queue manager `from` to `to` (the same name at both ends).
pub fn channel_name(from: &str, to: &str) -> String {
    pair_channel(from, to, 0)
}

/// The sender channel of pair `k` from `from` to `to`: [`channel_name`] for pair 0,
/// with `.k` after it for the others.
pub fn pair_channel(from: &str, to: &str, k: usize) -> String {
    debug_assert!(k < MAX_CHANNEL_PAIRS);
    let suffix = if k == 0 {
        String::new()
    } else {
        format!(".{k}")
    };
    // MQ channel names are at most 20 characters.
    let name = format!("{from}.TO.{to}{suffix}");
    if name.len() <= 20 {
        name
    } else {
        let base = format!("{from}.TO.{to}");
        let keep = 15 - suffix.len();
        format!("PERF.{}{suffix}", &base[base.len() - keep..])
    }
}

/// The transmission queue on the way to `to` of pair `k`: named after `to` for pair 0
/// (what name resolution picks by default), `to.k` for the others.
pub fn pair_xmit_q(to: &str, k: usize) -> String {
    if k == 0 {
        to.to_string()
    } else {
        format!("{to}.{k}")
    }
}

/// The queue-manager alias, on the responders' queue manager, that sends replies to
/// `requesters_qmgr` over pair `k` > 0.
pub fn pair_qmgr_alias(requesters_qmgr: &str, k: usize) -> String {
    format!("{requesters_qmgr}.P{k}")
}

/// The ReplyToQMgr requesters on request queue `queue` name: blank for pair 0 (MQPUT
/// fills in the requesters' queue manager), the alias of pair k for the others.
pub fn reply_to_qmgr(requesters_qmgr: &str, queue: usize, pairs: usize) -> String {
    match queue % pairs.max(1) {
        0 => String::new(),
        k => pair_qmgr_alias(requesters_qmgr, k),
    }
}

/// Links `a` and `b` both ways with `pairs` sender/receiver pairs per direction: a
/// transmission queue per pair ([`pair_xmit_q`]), the channels ([`pair_channel`]) and,
/// on `b`, the queue-manager aliases the replies of pairs past the first take; then
/// starts every sender and waits (at most 30 s) until they run.
pub async fn link(
    a: &QueueManager,
    admin_a: &Connection,
    b: &QueueManager,
    admin_b: &Connection,
    pairs: usize,
) -> Result<(), PerfError> {
    for (from, admin_from, to, admin_to) in [(a, admin_a, b, admin_b), (b, admin_b, a, admin_a)] {
        for k in 0..pairs {
            let channel = pair_channel(from.name(), to.name(), k);
            let xmitq = pair_xmit_q(to.name(), k);
            run_mqsc(
                admin_from,
                &format!("DEFINE QLOCAL({xmitq}) USAGE(XMITQ) MAXDEPTH(999999999) REPLACE"),
            )
            .await?;
            run_mqsc(
                admin_from,
                &format!(
                    "DEFINE CHANNEL({channel}) CHLTYPE(SDR) CONNAME('{}') XMITQ({xmitq}) \
                     DISCINT(0) SHORTTMR(1) REPLACE",
                    to.conn_name(),
                ),
            )
            .await?;
            run_mqsc(
                admin_to,
                &format!("DEFINE CHANNEL({channel}) CHLTYPE(RCVR) REPLACE"),
            )
            .await?;
            if k > 0 && std::ptr::eq(from, b) {
                // Replies to ReplyToQMgr `A.Pk` go over pair k.
                run_mqsc(
                    admin_from,
                    &format!(
                        "DEFINE QREMOTE({}) RNAME(' ') RQMNAME({}) XMITQ({xmitq}) REPLACE",
                        pair_qmgr_alias(to.name(), k),
                        to.name()
                    ),
                )
                .await?;
            }
            run_mqsc(admin_from, &format!("START CHANNEL({channel})")).await?;
        }
    }
    for (from, admin_from, to) in [(a, admin_a, b), (b, admin_b, a)] {
        for k in 0..pairs {
            let channel = pair_channel(from.name(), to.name(), k);
            let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
            loop {
                let (status, _) = channel_figures(admin_from, &channel).await?;
                if status == "RUNNING" {
                    break;
                }
                if tokio::time::Instant::now() > deadline {
                    return Err(PerfError::Setup(format!(
                        "channel {channel} from {} to {} is {status}, not RUNNING, after 30 s",
                        from.name(),
                        to.name()
                    )));
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
    }
    Ok(())
}

/// MSGS and BATCHES of every sending channel of both directions (see [`link`]).
pub async fn batch_counts(
    a: &QueueManager,
    admin_a: &Connection,
    b: &QueueManager,
    admin_b: &Connection,
    pairs: usize,
) -> Result<Vec<Option<(u64, u64)>>, PerfError> {
    let mut counts = Vec::with_capacity(2 * pairs);
    for (from, admin_from, to) in [(a, admin_a, b), (b, admin_b, a)] {
        for k in 0..pairs {
            let channel = pair_channel(from.name(), to.name(), k);
            counts.push(channel_figures(admin_from, &channel).await?.1);
        }
    }
    Ok(counts)
}

/// Defines the workload's queues: the request queues on the responders' queue manager
/// and remote definitions of them on the requesters', the reply queue on the
/// requesters'.
pub async fn prepare_queues(
    admin_a: &Connection,
    b: &QueueManager,
    admin_b: &Connection,
    cfg: &RrConfig,
) -> Result<(), PerfError> {
    for i in 0..cfg.queues {
        let name = request_queue_name(i);
        ensure_queue(admin_b, &name).await?;
        run_mqsc(
            admin_a,
            &format!(
                "DEFINE QREMOTE({name}) RNAME({name}) RQMNAME({b}) XMITQ({xmitq}) REPLACE",
                b = b.name(),
                xmitq = pair_xmit_q(b.name(), i % cfg.channel_pairs.max(1)),
            ),
        )
        .await?;
    }
    ensure_queue(admin_a, REPLY_QUEUE).await
}

/// A channel's STATUS and its (MSGS, BATCHES) at the sending end, from DISPLAY CHSTATUS.
pub async fn channel_figures(
    admin: &Connection,
    channel: &str,
) -> Result<(String, Option<(u64, u64)>), PerfError> {
    let out = admin
        .mqsc(&format!("DISPLAY CHSTATUS({channel}) STATUS MSGS BATCHES"))
        .await
        .map_err(|e| PerfError::Mq(format!("DISPLAY CHSTATUS({channel})"), e))?;
    let text = out.lines.join(" ");
    let field = |key: &str| -> Option<String> {
        let start = text.find(&format!("{key}("))? + key.len() + 1;
        let end = start + text[start..].find(')')?;
        Some(text[start..end].trim().to_string())
    };
    let status = field("STATUS").unwrap_or_else(|| "INACTIVE".to_string());
    let counts = field("MSGS")
        .and_then(|m| m.parse().ok())
        .zip(field("BATCHES").and_then(|b| b.parse().ok()));
    Ok((status, counts))
}

/// Messages per batch over both sending channels between two readings of
/// [`channel_figures`] (`None` when a reading is missing or no batch ended).
pub fn messages_per_batch(
    before: &[Option<(u64, u64)>],
    after: &[Option<(u64, u64)>],
) -> Option<f64> {
    let mut messages = 0u64;
    let mut batches = 0u64;
    for (b, a) in before.iter().zip(after) {
        let ((m0, b0), (m1, b1)) = ((*b)?, (*a)?);
        messages += m1.saturating_sub(m0);
        batches += b1.saturating_sub(b0);
    }
    (batches > 0).then(|| messages as f64 / batches as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channel_names_fit_mqs_twenty_characters() {
        assert_eq!(channel_name("PERFQMA", "PERFQMB"), "PERFQMA.TO.PERFQMB");
        assert_eq!(
            pair_channel("PERFQMA", "PERFQMB", 3),
            "PERFQMA.TO.PERFQMB.3"
        );
        let long = channel_name("AVERYLONGQMGRNAME", "ANOTHERLONGNAME");
        assert!(long.len() <= 20, "{long}");
        let names: Vec<String> = (0..MAX_CHANNEL_PAIRS)
            .map(|k| pair_channel("AVERYLONGQMGRNAME", "ANOTHERLONGNAME", k))
            .collect();
        assert!(names.iter().all(|n| n.len() <= 20), "{names:?}");
        let mut unique = names.clone();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
    }

    #[test]
    fn pairs_spread_the_queues_and_their_replies() {
        assert_eq!(pair_xmit_q("PERFQMB", 0), "PERFQMB");
        assert_eq!(pair_xmit_q("PERFQMB", 2), "PERFQMB.2");
        assert_eq!(reply_to_qmgr("PERFQMA", 0, 3), "");
        assert_eq!(reply_to_qmgr("PERFQMA", 4, 3), "PERFQMA.P1");
        assert_eq!(reply_to_qmgr("PERFQMA", 4, 1), "");
    }

    #[test]
    fn batches_average_over_both_directions() {
        let before = [Some((100, 10)), Some((50, 5))];
        let after = [Some((300, 20)), Some((250, 15))];
        assert_eq!(messages_per_batch(&before, &after), Some(20.0));
        assert_eq!(messages_per_batch(&[None], &[Some((1, 1))]), None);
        assert_eq!(messages_per_batch(&[Some((1, 1))], &[Some((1, 1))]), None);
    }
}
