//! How the AMQP workloads talk to the broker, the same for every step: where it is,
//! how its queues are addressed (`--queue-prefix`, RabbitMQ: `/amq/queue/`), where
//! replies go (`--reply-queues`), whether sends wait for the broker's outcome
//! (`--presettled`, `--sync-send`), how much credit receivers keep open (`--prefetch`) and how many
//! applications share a connection (`--sessions-per-connection`). Queue names
//! are the native workloads' own: `REQUEST.1..N`, `REPLY` or `REPLY.1..N`, `SR.1..N`.

use super::link::SendMode;
use super::url::AmqpUrl;
use crate::args::ReplyQueues;
use crate::workload::rr::{request_queue_name, REPLY_QUEUE};

/// The AMQP side of a run.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The broker.
    pub url: AmqpUrl,
    /// Prepended to every queue name to make its address.
    pub queue_prefix: String,
    /// One shared reply queue or one per requester.
    pub reply_queues: ReplyQueues,
    /// Send presettled (no outcome at all).
    pub presettled: bool,
    /// Every unsettled send waits for its outcome (Qpid JMS `jms.forceSyncSend=true`),
    /// not only persistent ones.
    pub sync_send: bool,
    /// Credit each receiver keeps open.
    pub prefetch: u32,
    /// Applications (sessions) per connection.
    pub sessions_per_connection: u32,
}

impl Settings {
    /// How a message is sent: presettled with `--presettled`; otherwise unsettled, and
    /// the send waits for the broker's outcome when the message is persistent or with
    /// `--sync-send` ([`SendMode::Sync`]), else it is checked later ([`SendMode::Async`]):
    /// Qpid JMS's rules.
    pub fn send_mode(&self, persistent: bool) -> SendMode {
        if self.presettled {
            SendMode::Presettled
        } else if persistent || self.sync_send {
            SendMode::Sync
        } else {
            SendMode::Async
        }
    }

    /// The address of queue `name`.
    pub fn address(&self, name: &str) -> String {
        format!("{}{name}", self.queue_prefix)
    }

    /// The reply queue of requester `i` (0-based).
    pub fn reply_queue(&self, i: usize) -> String {
        match self.reply_queues {
            ReplyQueues::Shared => REPLY_QUEUE.to_string(),
            ReplyQueues::PerRequester => format!("{REPLY_QUEUE}.{}", i + 1),
        }
    }

    /// Every queue an RR run of up to `clients` requesters over `queues` request
    /// queues uses.
    pub fn rr_queues(&self, queues: usize, clients: usize) -> Vec<String> {
        let mut names: Vec<String> = (0..queues).map(request_queue_name).collect();
        match self.reply_queues {
            ReplyQueues::Shared => names.push(REPLY_QUEUE.to_string()),
            ReplyQueues::PerRequester => names.extend((0..clients).map(|i| self.reply_queue(i))),
        }
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(reply_queues: ReplyQueues, prefix: &str) -> Settings {
        Settings {
            url: AmqpUrl::parse("amqp://localhost").expect("url"),
            queue_prefix: prefix.into(),
            reply_queues,
            presettled: false,
            sync_send: false,
            prefetch: 1,
            sessions_per_connection: 10,
        }
    }

    #[test]
    fn queues_and_addresses_follow_the_options() {
        let s = settings(ReplyQueues::Shared, "");
        assert_eq!(s.rr_queues(2, 16), ["REQUEST.1", "REQUEST.2", "REPLY"]);
        assert_eq!(s.reply_queue(7), "REPLY");
        let r = settings(ReplyQueues::PerRequester, "/amq/queue/");
        assert_eq!(r.rr_queues(1, 2), ["REQUEST.1", "REPLY.1", "REPLY.2"]);
        assert_eq!(r.address(&r.reply_queue(0)), "/amq/queue/REPLY.1");
    }

    #[test]
    fn sends_wait_as_qpid_jms_does() {
        let mut s = settings(ReplyQueues::Shared, "");
        assert_eq!(s.send_mode(false), SendMode::Async);
        assert_eq!(s.send_mode(true), SendMode::Sync);
        s.sync_send = true;
        assert_eq!(s.send_mode(false), SendMode::Sync);
        s.sync_send = false;
        s.presettled = true;
        assert_eq!(s.send_mode(false), SendMode::Presettled);
    }
}
