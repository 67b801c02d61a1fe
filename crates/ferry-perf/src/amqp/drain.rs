//! Empties a workload's queues before a step over AMQP, so a reply or message left by
//! an earlier step (a timed-out requester, SR-CC's build-up) cannot be taken for this
//! step's. One connection, a receiver per queue, every message accepted until the
//! queues stay quiet. No `drain` flow is used: some brokers (RabbitMQ 3.10) break on it.

use std::time::{Duration, Instant};

use super::client::Client;
use super::error::AmqpError;
use super::link::ReceiverLink;
use super::settings::Settings;

/// Queues count as empty after this long without a message.
const QUIET: Duration = Duration::from_millis(300);
/// Draining gives up (and says so) after this long.
const MAX_DRAIN: Duration = Duration::from_secs(120);
/// Credit per queue while draining.
const DRAIN_CREDIT: u32 = 500;

/// Removes what is on `queues`; returns how many messages were removed.
pub async fn drain(settings: &Settings, queues: &[String]) -> Result<u64, AmqpError> {
    let client = Client::connect(&settings.url, "ferry-perf-drain").await?;
    let mut receivers = Vec::with_capacity(queues.len());
    for q in queues {
        receivers
            .push(ReceiverLink::attach(&client, &settings.address(q), None, DRAIN_CREDIT).await?);
    }
    let started = Instant::now();
    let mut last = Instant::now();
    let mut removed = 0u64;
    while last.elapsed() < QUIET && started.elapsed() < MAX_DRAIN {
        let mut any = false;
        for r in &mut receivers {
            while let Some(d) = r.recv_within(Duration::ZERO).await? {
                r.accept(&d)?;
                removed += 1;
                any = true;
            }
        }
        if any {
            last = Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    client.close().await;
    Ok(removed)
}
