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

use ferry_client::Connection;

use super::rr::{request_queue_name, RrConfig, REPLY_QUEUE};
use crate::target::{ensure_queue, run_mqsc, QueueManager};
use crate::PerfError;

/// The requesters' queue manager of an embedded RR-DQ-BB run.
pub const REQUESTERS_QMGR: &str = "PERFQMA";
/// The responders' queue manager of an embedded RR-DQ-BB run.
pub const RESPONDERS_QMGR: &str = "PERFQMB";

/// The sender channel from queue manager `from` to `to` (the same name at both ends).
pub fn channel_name(from: &str, to: &str) -> String {
    // MQ channel names are at most 20 characters.
    let name = format!("{from}.TO.{to}");
    if name.len() <= 20 {
        name
    } else {
        format!("PERF.{}", &name[name.len() - 15..])
    }
}

/// Links `a` and `b` both ways: a transmission queue named after each partner and a
/// sender/receiver pair per direction, then starts both senders and waits (at most
/// 30 s) until they run.
pub async fn link(
    a: &QueueManager,
    admin_a: &Connection,
    b: &QueueManager,
    admin_b: &Connection,
) -> Result<(), PerfError> {
    for (from, admin_from, to, admin_to) in [(a, admin_a, b, admin_b), (b, admin_b, a, admin_a)] {
        let channel = channel_name(from.name(), to.name());
        run_mqsc(
            admin_from,
            &format!(
                "DEFINE QLOCAL({}) USAGE(XMITQ) MAXDEPTH(999999999) REPLACE",
                to.name()
            ),
        )
        .await?;
        run_mqsc(
            admin_from,
            &format!(
                "DEFINE CHANNEL({channel}) CHLTYPE(SDR) CONNAME('{}') XMITQ({}) \
                 DISCINT(0) SHORTTMR(1) REPLACE",
                to.conn_name(),
                to.name()
            ),
        )
        .await?;
        run_mqsc(
            admin_to,
            &format!("DEFINE CHANNEL({channel}) CHLTYPE(RCVR) REPLACE"),
        )
        .await?;
        run_mqsc(admin_from, &format!("START CHANNEL({channel})")).await?;
    }
    for (from, admin_from, to) in [(a, admin_a, b), (b, admin_b, a)] {
        let channel = channel_name(from.name(), to.name());
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
    Ok(())
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
                "DEFINE QREMOTE({name}) RNAME({name}) RQMNAME({b}) XMITQ({b}) REPLACE",
                b = b.name()
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
        let long = channel_name("AVERYLONGQMGRNAME", "ANOTHERLONGNAME");
        assert!(long.len() <= 20, "{long}");
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
