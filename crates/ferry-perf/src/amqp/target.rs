//! The broker an AMQP run measures: an external one at `--url` (any AMQP 1.0 broker;
//! server CPU only with `--server-pid`; its queues must exist), or, without `--url`,
//! the embedded Ferry queue manager native runs use, with its AMQP channel moved to a
//! free port through the command server (`ALTER CHANNEL(SYSTEM.DEF.AMQP) CHLTYPE(AMQP)
//! PORT(n)`, `STOP CHANNEL`, `START CHANNEL`) and the run's queues defined the native
//! way (its command server also answers the recovery log's counters).

use std::time::Duration;

use ferry_client::Connection;

use super::url::AmqpUrl;
use crate::target::{self, QueueManager};
use crate::PerfError;

/// The AMQP channel every Ferry queue manager has.
pub const AMQP_CHANNEL: &str = "SYSTEM.DEF.AMQP";

/// The MQSC that moves the AMQP channel to `port` and (re)starts it; the STOP may
/// fail (channel not running) and is ignored.
pub fn channel_commands(port: u16) -> [(String, bool); 3] {
    [
        (
            format!("ALTER CHANNEL({AMQP_CHANNEL}) CHLTYPE(AMQP) PORT({port})"),
            true,
        ),
        (format!("STOP CHANNEL({AMQP_CHANNEL})"), false),
        (format!("START CHANNEL({AMQP_CHANNEL})"), true),
    ]
}

/// The broker of an AMQP run.
pub struct AmqpTarget {
    /// Where the applications connect.
    pub url: AmqpUrl,
    server_pid: Option<u32>,
    description: String,
    embedded: Option<QueueManager>,
}

impl AmqpTarget {
    /// An external broker at `url`; its CPU is measured when `server_pid` is given.
    pub fn external(url: AmqpUrl, server_pid: Option<u32>) -> AmqpTarget {
        AmqpTarget {
            description: format!("AMQP broker at {url}"),
            url,
            server_pid,
            embedded: None,
        }
    }

    /// Starts the embedded Ferry queue manager (as native runs do); call
    /// [`AmqpTarget::prepare`] before use.
    pub fn embedded(tuning: &[(&'static str, u32)]) -> Result<AmqpTarget, PerfError> {
        let qm = QueueManager::embedded(&target::ferry_binary()?, tuning)?;
        let port = target::free_port()?;
        let url = AmqpUrl::parse(&format!("amqp://127.0.0.1:{port}"))
            .map_err(|e| PerfError::Setup(e.to_string()))?;
        Ok(AmqpTarget {
            description: format!("{}, AMQP channel at {url}", qm.description()),
            server_pid: qm.server_pid(),
            url,
            embedded: Some(qm),
        })
    }

    /// Embedded: waits for the queue manager, starts its AMQP channel on the chosen
    /// port, defines `queues` and returns the MQ connection to its command server (for
    /// the recovery log's counters). External: nothing (the broker's queues are its own).
    pub async fn prepare(&mut self, queues: &[String]) -> Result<Option<Connection>, PerfError> {
        let Some(qm) = self.embedded.as_mut() else {
            return Ok(None);
        };
        let admin = qm.wait_ready().await?;
        for (cmd, must) in channel_commands(self.url.port) {
            let out = admin
                .mqsc(&cmd)
                .await
                .map_err(|e| PerfError::Mq(cmd.clone(), e))?;
            if out.failed && must {
                return Err(PerfError::Setup(format!(
                    "{cmd} failed: {}",
                    out.lines.join(" / ")
                )));
            }
        }
        for q in queues {
            target::ensure_queue(&admin, q).await?;
        }
        // The channel's listener may take a moment to bind.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while tokio::net::TcpStream::connect(self.url.authority())
            .await
            .is_err()
        {
            if tokio::time::Instant::now() > deadline {
                return Err(PerfError::Setup(format!(
                    "the embedded queue manager's AMQP channel does not listen on {} after \
                     START CHANNEL({AMQP_CHANNEL})",
                    self.url
                )));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(Some(admin))
    }

    /// The broker's pid, when known (embedded, or `--server-pid`).
    pub fn server_pid(&self) -> Option<u32> {
        self.server_pid
    }

    /// One line saying what is measured.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// qm.ini values of the embedded queue manager (empty for an external broker).
    pub fn tuning(&self) -> Vec<String> {
        self.embedded
            .as_ref()
            .map_or_else(Vec::new, |q| q.tuning().to_vec())
    }

    /// Stops the embedded queue manager, if any.
    pub fn shutdown(&mut self) {
        if let Some(mut qm) = self.embedded.take() {
            qm.shutdown();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_channel_is_moved_then_restarted() {
        let cmds = channel_commands(5999);
        assert_eq!(
            cmds[0].0,
            "ALTER CHANNEL(SYSTEM.DEF.AMQP) CHLTYPE(AMQP) PORT(5999)"
        );
        assert_eq!(
            cmds[1],
            ("STOP CHANNEL(SYSTEM.DEF.AMQP)".to_string(), false)
        );
        assert_eq!(cmds[2].0, "START CHANNEL(SYSTEM.DEF.AMQP)");
        let t = AmqpTarget::external(AmqpUrl::parse("amqp://h:5673").expect("url"), None);
        assert_eq!(t.description(), "AMQP broker at amqp://h:5673");
        assert!(t.server_pid().is_none() && t.tuning().is_empty());
    }
}
