//! The reports' workloads. Each runs its applications as tasks on the harness's one
//! current-thread runtime (inside a `LocalSet`), so the client side costs little CPU
//! and the server is what gets measured.
//!
//! - [`rr`]: request/reply (RR-CC, RR-BB, RR-CB), over ten request queues, written
//!   once over the client abstraction [`app`], with its native implementation in
//!   [`native`] (the AMQP one is [`crate::amqp::rr`]).
//! - [`sr`]: SR-CC, senders each to its own queue, two receivers per queue.
//! - [`ps`]: PS-CC, publishers each on its topic, subscribers spread over the topics
//!   (native: [`native_ps`]; AMQP: [`crate::amqp::ps`]).
//! - [`distributed`]: RR-DQ-BB and RR-DQ-CC, request/reply across two queue managers
//!   linked by message channels (seed 000 section 3.2).
//! - [`cluster`]: RR-CLUSTER-BB, request/reply to cluster queues hosted on two queue
//!   managers, with the requests' share per instance.
//! - [`connect`]: the connection test (seed 002 section 6).
//! - [`recovery`]: recovery time and deep queues (fill, restart, drain; issue 3), its
//!   results and tables in [`recovery_report`].
//! - [`verify`]: request tags and reply checks; [`tally`]: the counters a step shares;
//!   [`step`]: what a step measured and the helpers steps share.

pub mod app;
pub mod cluster;
pub mod connect;
pub mod distributed;
pub mod native;
pub mod native_ps;
pub mod ps;
pub mod recovery;
pub mod recovery_report;
pub mod rr;
pub mod sr;
pub mod step;
pub mod tally;
pub mod verify;

use std::fmt;

/// How an application connects: as a client over TCP or over the bindings socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Mode {
    /// Client mode: TCP to the listener, through a SVRCONN channel.
    Client,
    /// Bindings mode: the queue manager's Unix socket (`qm.sock`).
    Bindings,
}

/// The workloads `ferry perf` runs, named as in the reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Client requesters, client responders.
    RrCc,
    /// Bindings requesters, bindings responders.
    RrBb,
    /// Client requesters, bindings responders.
    RrCb,
    /// Client senders, each to its own queue, two client receivers per queue.
    SrCc,
    /// The connection test: N clients connect as fast as possible.
    Connect,
    /// Client publishers, each on its topic, and client subscribers spread over the
    /// topics.
    PsCc,
    /// Bindings requesters on one queue manager, bindings responders on another; requests
    /// and replies cross message channels.
    RrDqBb,
    /// RR-DQ-BB with client-mode requesters and responders.
    RrDqCc,
    /// Bindings requesters on a partial repository, cluster request queues hosted with
    /// bindings responders on two full repositories.
    RrClusterBb,
}

impl Kind {
    /// The reports' name: `RR-CC`, `RR-BB`, `RR-CB`, `SR-CC`, `CONN`, `PS-CC`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::RrCc => "RR-CC",
            Kind::RrBb => "RR-BB",
            Kind::RrCb => "RR-CB",
            Kind::SrCc => "SR-CC",
            Kind::Connect => "CONN",
            Kind::PsCc => "PS-CC",
            Kind::RrDqBb => "RR-DQ-BB",
            Kind::RrDqCc => "RR-DQ-CC",
            Kind::RrClusterBb => "RR-CLUSTER-BB",
        }
    }

    /// True for the workloads across two queue managers linked by channel pairs.
    pub fn is_distributed(self) -> bool {
        matches!(self, Kind::RrDqBb | Kind::RrDqCc)
    }

    /// True for the workload across a cluster of queue managers.
    pub fn is_cluster(self) -> bool {
        self == Kind::RrClusterBb
    }

    /// True for the workloads that run their own embedded queue managers (more than
    /// one).
    pub fn is_multi_qmgr(self) -> bool {
        self.is_distributed() || self.is_cluster()
    }

    /// How requesters (senders, clients) and responders (receivers) connect.
    pub fn modes(self) -> (Mode, Mode) {
        match self {
            Kind::RrCc | Kind::SrCc | Kind::Connect | Kind::PsCc | Kind::RrDqCc => {
                (Mode::Client, Mode::Client)
            }
            Kind::RrBb | Kind::RrDqBb | Kind::RrClusterBb => (Mode::Bindings, Mode::Bindings),
            Kind::RrCb => (Mode::Client, Mode::Bindings),
        }
    }

    /// What the steps' client counts are: `clients`, or `subscribers` for PS-CC.
    pub fn clients_are(self) -> &'static str {
        match self {
            Kind::PsCc => "subscribers",
            _ => "clients",
        }
    }

    /// What the rate counts: `Round trips/s`, `Messages/s`, `Connections/s` or
    /// `Deliveries/s` (copies subscribers received).
    pub fn rate_unit(self) -> &'static str {
        match self {
            Kind::RrCc
            | Kind::RrBb
            | Kind::RrCb
            | Kind::RrDqBb
            | Kind::RrDqCc
            | Kind::RrClusterBb => "Round trips/s",
            Kind::SrCc => "Messages/s",
            Kind::Connect => "Connections/s",
            Kind::PsCc => "Deliveries/s",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_modes_and_units() {
        assert_eq!(Kind::RrCb.name(), "RR-CB");
        assert_eq!(Kind::RrCb.modes(), (Mode::Client, Mode::Bindings));
        assert_eq!(Kind::RrBb.modes(), (Mode::Bindings, Mode::Bindings));
        assert_eq!(Kind::SrCc.rate_unit(), "Messages/s");
        assert_eq!(Kind::Connect.to_string(), "CONN");
        assert_eq!(Kind::PsCc.rate_unit(), "Deliveries/s");
    }
}
