//! Queue name resolution for MQOPEN and MQPUT1, in IBM MQ's order: where a message put
//! to (ObjectQMgrName, ObjectName) goes, a queue here or a transmission queue towards
//! another queue manager. Pure: it reads definitions through a lookup and does nothing.
//!
//! ```text
//! resolve(qm, q):
//!   qm blank or this queue manager:
//!     QLOCAL, QALIAS, QMODEL q       -> here (open.rs opens them as before)
//!     QREMOTE q, RNAME set           -> (RQMNAME, RNAME) through XMITQ if set, else
//!                                       the route to RQMNAME below; RQMNAME blank 2087;
//!                                       RQMNAME this queue manager: RNAME here
//!     QREMOTE q, RNAME blank         -> 2085 (a queue-manager alias is not a queue)
//!     nothing                        -> 2085
//!   another qm: the route to qm, then q there (or here, when the route comes back)
//!
//! route(qm):
//!   QREMOTE qm with blank RNAME (queue-manager alias) -> qm := RQMNAME (this queue
//!       manager: deliver here); xmitq := its XMITQ | route(RQMNAME)'s xmitq
//!   local queue qm: USAGE(XMITQ) -> it; else 2092 MQRC_XMIT_Q_USAGE_ERROR
//!   another object named qm                           -> 2091 MQRC_XMIT_Q_TYPE_ERROR
//!   DEFXMITQ set -> it (missing 2197, not local 2198, not USAGE(XMITQ) 2199)
//!   else 2087 MQRC_UNKNOWN_REMOTE_Q_MGR
//!
//! An XMITQ attribute naming a queue that does not exist: 2196 MQRC_UNKNOWN_XMIT_Q; a
//! queue that is not local 2091; a local queue without USAGE(XMITQ) 2092.
//! ```
//!
//! The queue-manager alias is tried before a transmission queue of the same name (MQ's
//! documented order does not say; an alias is the more specific definition). Chains of
//! definitions (an alias pointing at an alias, a remote definition naming this queue
//! manager and another remote definition) are followed up to [`MAX_HOPS`] definitions;
//! a longer chain is a loop and resolves to 2087 MQRC_UNKNOWN_REMOTE_Q_MGR.
//!
//! Clusters: a queue manager with no definition of its own (alias or transmission
//! queue) that a cluster knows is reached through SYSTEM.CLUSTER.TRANSMIT.QUEUE and its
//! cluster-sender channel, before DEFXMITQ, as in MQ. Cluster queues themselves are
//! resolved by `crate::cluster` before this table is consulted.

use ferry_mqi::ReasonCode;
use ferry_objects::queue::Usage;
use ferry_objects::{QueueDefinition, QueueType};

/// Definitions a resolution may follow before it counts as a loop.
pub(crate) const MAX_HOPS: usize = 16;

/// Where a name resolved to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Resolved {
    /// A queue of this queue manager, to open by `name` as a local, alias or model queue.
    Local {
        /// The queue to open here.
        name: String,
        /// The remote definition whose RQMNAME is this queue manager, when the name went
        /// through one: its PUT, DEFPSIST and DEFPRTY apply, as the first definition in
        /// the resolution path.
        via: Option<String>,
    },
    /// A queue on another queue manager, reached through a transmission queue.
    Remote(RemoteRoute),
}

/// A remote destination: what goes into the transmission queue header and which
/// transmission queue the message waits on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RemoteRoute {
    /// RemoteQName of the header.
    pub remote_q_name: String,
    /// RemoteQMgrName of the header.
    pub remote_qmgr_name: String,
    /// The local queue, USAGE(XMITQ), the message is put on.
    pub xmit_q: String,
    /// The first definition in the resolution path (a QREMOTE named by ObjectName, or
    /// the queue-manager alias named by ObjectQMgrName): its PUT, DEFPSIST and DEFPRTY
    /// apply. `None` when the route is a transmission queue or DEFXMITQ alone.
    pub definition: Option<String>,
    /// True when ObjectQMgrName named another queue manager (rather than ObjectName a
    /// remote definition): authority is then checked on the transmission queue.
    pub qmgr_named: bool,
    /// The cluster-sender channel, when the route is through a cluster.
    pub cluster_channel: Option<String>,
}

/// The route to another queue manager: deliver here after all (an alias of this queue
/// manager), or the queue manager's name as the header says it and the transmission queue.
enum Route {
    Here,
    Via {
        qmgr: String,
        xmit_q: String,
        alias: Option<String>,
        channel: Option<String>,
    },
}

/// Resolves names against the definitions `lookup` finds.
pub(crate) struct NameResolver<'a, F: Fn(&str) -> Option<&'a QueueDefinition>> {
    /// This queue manager's name.
    pub local_qmgr: &'a str,
    /// QMGR DEFXMITQ (blank: none).
    pub default_xmit_q: &'a str,
    /// Finds a queue definition by name.
    pub lookup: F,
    /// The cluster-sender channel to a queue manager a cluster knows.
    pub cluster_channel: &'a dyn Fn(&str) -> Option<String>,
}

impl<'a, F: Fn(&str) -> Option<&'a QueueDefinition>> NameResolver<'a, F> {
    /// Where a message for queue `q` on queue manager `qm` (blank: this one) goes.
    pub fn resolve(&self, qm: &str, q: &str) -> Result<Resolved, ReasonCode> {
        self.resolve_hops(qm.trim(), q.trim(), 0)
    }

    fn is_local(&self, qm: &str) -> bool {
        qm.is_empty() || qm == self.local_qmgr
    }

    fn resolve_hops(&self, qm: &str, q: &str, hops: usize) -> Result<Resolved, ReasonCode> {
        if hops > MAX_HOPS {
            return Err(ReasonCode::UnknownRemoteQMgr);
        }
        if !self.is_local(qm) {
            return match self.route(qm, hops + 1)? {
                Route::Here => self.resolve_hops("", q, hops + 1),
                Route::Via {
                    qmgr,
                    xmit_q,
                    alias,
                    channel,
                } => Ok(Resolved::Remote(RemoteRoute {
                    remote_q_name: q.to_string(),
                    remote_qmgr_name: qmgr,
                    xmit_q,
                    definition: alias,
                    qmgr_named: true,
                    cluster_channel: channel,
                })),
            };
        }
        let def = (self.lookup)(q).ok_or(ReasonCode::UnknownObjectName)?;
        if def.queue_type != QueueType::Remote {
            return Ok(Resolved::Local {
                name: q.to_string(),
                via: None,
            });
        }
        let a = &def.attributes;
        let rname = a.remote_name.trim();
        let rqm = a.remote_qmgr_name.trim();
        if rname.is_empty() {
            // A queue-manager (or reply-to) alias: not a queue one can open.
            return Err(ReasonCode::UnknownObjectName);
        }
        if rqm.is_empty() {
            return Err(ReasonCode::UnknownRemoteQMgr);
        }
        if rqm == self.local_qmgr {
            return match self.resolve_hops("", rname, hops + 1)? {
                Resolved::Local { name, via } => Ok(Resolved::Local {
                    name,
                    via: via.or_else(|| Some(def.name.clone())),
                }),
                Resolved::Remote(mut r) => {
                    r.definition = Some(def.name.clone());
                    r.qmgr_named = false;
                    Ok(Resolved::Remote(r))
                }
            };
        }
        let (qmgr, xmit_q, channel) = if a.xmit_q.trim().is_empty() {
            match self.route(rqm, hops + 1)? {
                // RQMNAME is an alias of this queue manager: RNAME is here.
                Route::Here => {
                    return match self.resolve_hops("", rname, hops + 1)? {
                        Resolved::Local { name, .. } => Ok(Resolved::Local {
                            name,
                            via: Some(def.name.clone()),
                        }),
                        Resolved::Remote(mut r) => {
                            r.definition = Some(def.name.clone());
                            r.qmgr_named = false;
                            Ok(Resolved::Remote(r))
                        }
                    };
                }
                Route::Via {
                    qmgr,
                    xmit_q,
                    channel,
                    ..
                } => (qmgr, xmit_q, channel),
            }
        } else {
            (
                rqm.to_string(),
                self.xmit_q_attribute(a.xmit_q.trim())?,
                None,
            )
        };
        Ok(Resolved::Remote(RemoteRoute {
            remote_q_name: rname.to_string(),
            remote_qmgr_name: qmgr,
            xmit_q,
            definition: Some(def.name.clone()),
            qmgr_named: false,
            cluster_channel: channel,
        }))
    }

    /// The route to queue manager `qm` (not this one by name).
    fn route(&self, qm: &str, hops: usize) -> Result<Route, ReasonCode> {
        if hops > MAX_HOPS {
            return Err(ReasonCode::UnknownRemoteQMgr);
        }
        match (self.lookup)(qm) {
            Some(def)
                if def.queue_type == QueueType::Remote
                    && def.attributes.remote_name.trim().is_empty() =>
            {
                // A queue-manager alias: renames the target and may choose the route.
                let a = &def.attributes;
                let target = a.remote_qmgr_name.trim();
                if self.is_local(target) {
                    return Ok(Route::Here);
                }
                let (xmit_q, channel) = if a.xmit_q.trim().is_empty() {
                    match self.route(target, hops + 1)? {
                        Route::Here => return Ok(Route::Here),
                        Route::Via {
                            xmit_q, channel, ..
                        } => (xmit_q, channel),
                    }
                } else {
                    (self.xmit_q_attribute(a.xmit_q.trim())?, None)
                };
                Ok(Route::Via {
                    qmgr: target.to_string(),
                    xmit_q,
                    alias: Some(def.name.clone()),
                    channel,
                })
            }
            Some(def) if def.queue_type == QueueType::Local => {
                if def.attributes.usage != Usage::TransmissionQueue {
                    return Err(ReasonCode::XmitQUsageError);
                }
                Ok(Route::Via {
                    qmgr: qm.to_string(),
                    xmit_q: def.name.clone(),
                    alias: None,
                    channel: None,
                })
            }
            Some(_) => Err(ReasonCode::XmitQTypeError),
            None => {
                if let Some(channel) = (self.cluster_channel)(qm) {
                    return Ok(Route::Via {
                        qmgr: qm.to_string(),
                        xmit_q: ferry_objects::queue::CLUSTER_TRANSMIT_QUEUE.to_string(),
                        alias: None,
                        channel: Some(channel),
                    });
                }
                let dx = self.default_xmit_q.trim();
                if dx.is_empty() {
                    return Err(ReasonCode::UnknownRemoteQMgr);
                }
                let def = (self.lookup)(dx).ok_or(ReasonCode::UnknownDefXmitQ)?;
                if def.queue_type != QueueType::Local {
                    return Err(ReasonCode::DefXmitQTypeError);
                }
                if def.attributes.usage != Usage::TransmissionQueue {
                    return Err(ReasonCode::DefXmitQUsageError);
                }
                Ok(Route::Via {
                    qmgr: qm.to_string(),
                    xmit_q: def.name.clone(),
                    alias: None,
                    channel: None,
                })
            }
        }
    }

    /// The transmission queue an XMITQ attribute names, checked: 2196 when there is no
    /// such queue, 2091 when it is not local, 2092 when it is not USAGE(XMITQ).
    fn xmit_q_attribute(&self, name: &str) -> Result<String, ReasonCode> {
        let def = (self.lookup)(name).ok_or(ReasonCode::UnknownXmitQ)?;
        if def.queue_type != QueueType::Local {
            return Err(ReasonCode::XmitQTypeError);
        }
        if def.attributes.usage != Usage::TransmissionQueue {
            return Err(ReasonCode::XmitQUsageError);
        }
        Ok(def.name.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    struct Defs(BTreeMap<String, QueueDefinition>);

    impl Defs {
        fn new() -> Self {
            Defs(BTreeMap::new())
        }
        fn local(mut self, name: &str, xmitq: bool) -> Self {
            let mut d = QueueDefinition::new(name, QueueType::Local);
            if xmitq {
                d.attributes.usage = Usage::TransmissionQueue;
            }
            self.0.insert(name.into(), d);
            self
        }
        fn remote(mut self, name: &str, rname: &str, rqm: &str, xmitq: &str) -> Self {
            let mut d = QueueDefinition::new(name, QueueType::Remote);
            d.attributes.remote_name = rname.into();
            d.attributes.remote_qmgr_name = rqm.into();
            d.attributes.xmit_q = xmitq.into();
            self.0.insert(name.into(), d);
            self
        }
        fn alias(mut self, name: &str) -> Self {
            self.0
                .insert(name.into(), QueueDefinition::new(name, QueueType::Alias));
            self
        }
        fn resolve(&self, dx: &str, qm: &str, q: &str) -> Result<Resolved, ReasonCode> {
            NameResolver {
                local_qmgr: "QM1",
                default_xmit_q: dx,
                lookup: |n: &str| self.0.get(n),
                cluster_channel: &|n: &str| (n == "CLUSQM").then(|| "TO.CLUSQM".to_string()),
            }
            .resolve(qm, q)
        }
    }

    fn remote(q: &str, qm: &str, x: &str) -> RemoteRoute {
        RemoteRoute {
            remote_q_name: q.into(),
            remote_qmgr_name: qm.into(),
            xmit_q: x.into(),
            definition: None,
            qmgr_named: true,
            cluster_channel: None,
        }
    }

    #[test]
    fn each_row_of_the_table() {
        let d = Defs::new()
            .local("QM2", true)
            .local("PLAIN", false)
            .alias("AL")
            .remote("R", "APP", "QM2", "")
            .remote("R.LOOP", "L", "QM1", "")
            .local("L", false)
            .remote("QM3", "", "QM2", "")
            .remote("QM1.OLD", "", "QM1", "")
            .remote("BLANK.RQM", "X", "", "");
        // Here.
        assert_eq!(
            d.resolve("", "", "L"),
            Ok(Resolved::Local {
                name: "L".into(),
                via: None
            })
        );
        assert_eq!(
            d.resolve("", "QM1", "L"),
            Ok(Resolved::Local {
                name: "L".into(),
                via: None
            })
        );
        assert_eq!(
            d.resolve("", "", "NONE"),
            Err(ReasonCode::UnknownObjectName)
        );
        // A remote definition.
        let mut want = remote("APP", "QM2", "QM2");
        want.definition = Some("R".into());
        want.qmgr_named = false;
        assert_eq!(d.resolve("", "", "R"), Ok(Resolved::Remote(want)));
        assert_eq!(
            d.resolve("", "", "R.LOOP"),
            Ok(Resolved::Local {
                name: "L".into(),
                via: Some("R.LOOP".into())
            })
        );
        assert_eq!(
            d.resolve("", "", "BLANK.RQM"),
            Err(ReasonCode::UnknownRemoteQMgr)
        );
        assert_eq!(d.resolve("", "", "QM3"), Err(ReasonCode::UnknownObjectName));
        // Another queue manager.
        assert_eq!(
            d.resolve("", "QM2", "APP"),
            Ok(Resolved::Remote(remote("APP", "QM2", "QM2")))
        );
        let mut via_alias = remote("APP", "QM2", "QM2");
        via_alias.definition = Some("QM3".into());
        assert_eq!(d.resolve("", "QM3", "APP"), Ok(Resolved::Remote(via_alias)));
        assert_eq!(
            d.resolve("", "QM1.OLD", "L"),
            Ok(Resolved::Local {
                name: "L".into(),
                via: None
            })
        );
        assert_eq!(
            d.resolve("", "PLAIN", "APP"),
            Err(ReasonCode::XmitQUsageError)
        );
        assert_eq!(d.resolve("", "AL", "APP"), Err(ReasonCode::XmitQTypeError));
        assert_eq!(
            d.resolve("", "QM9", "APP"),
            Err(ReasonCode::UnknownRemoteQMgr)
        );
        assert_eq!(
            d.resolve("QM2", "QM9", "APP"),
            Ok(Resolved::Remote(remote("APP", "QM9", "QM2")))
        );
        assert_eq!(
            d.resolve("NOPE", "QM9", "APP"),
            Err(ReasonCode::UnknownDefXmitQ)
        );
        assert_eq!(
            d.resolve("AL", "QM9", "APP"),
            Err(ReasonCode::DefXmitQTypeError)
        );
        assert_eq!(
            d.resolve("PLAIN", "QM9", "APP"),
            Err(ReasonCode::DefXmitQUsageError)
        );
    }

    #[test]
    fn xmitq_attributes_are_checked() {
        let d = Defs::new()
            .local("PLAIN", false)
            .alias("AL")
            .local("X", true)
            .remote("R.X", "APP", "QM2", "X")
            .remote("R.MISSING", "APP", "QM2", "NOPE")
            .remote("R.ALIAS", "APP", "QM2", "AL")
            .remote("R.PLAIN", "APP", "QM2", "PLAIN")
            .remote("R.NOROUTE", "APP", "QM2", "");
        let mut want = remote("APP", "QM2", "X");
        want.definition = Some("R.X".into());
        want.qmgr_named = false;
        assert_eq!(d.resolve("", "", "R.X"), Ok(Resolved::Remote(want)));
        assert_eq!(
            d.resolve("", "", "R.MISSING"),
            Err(ReasonCode::UnknownXmitQ)
        );
        assert_eq!(
            d.resolve("", "", "R.ALIAS"),
            Err(ReasonCode::XmitQTypeError)
        );
        assert_eq!(
            d.resolve("", "", "R.PLAIN"),
            Err(ReasonCode::XmitQUsageError)
        );
        assert_eq!(
            d.resolve("", "", "R.NOROUTE"),
            Err(ReasonCode::UnknownRemoteQMgr)
        );
        let mut via_default = remote("APP", "QM2", "X");
        via_default.definition = Some("R.NOROUTE".into());
        via_default.qmgr_named = false;
        assert_eq!(
            d.resolve("X", "", "R.NOROUTE"),
            Ok(Resolved::Remote(via_default))
        );
    }

    #[test]
    fn a_queue_manager_the_cluster_knows_is_reached_through_the_cluster() {
        let d = Defs::new().local("X", true);
        let mut want = remote("APP", "CLUSQM", "SYSTEM.CLUSTER.TRANSMIT.QUEUE");
        want.cluster_channel = Some("TO.CLUSQM".into());
        assert_eq!(d.resolve("X", "CLUSQM", "APP"), Ok(Resolved::Remote(want)));
        let d = d.local("CLUSQM", true);
        assert_eq!(
            d.resolve("", "CLUSQM", "APP"),
            Ok(Resolved::Remote(remote("APP", "CLUSQM", "CLUSQM"))),
            "a transmission queue of the queue manager's name comes first"
        );
    }

    #[test]
    fn loops_end() {
        let d = Defs::new()
            .remote("A", "", "B", "")
            .remote("B", "", "A", "")
            .remote("R1", "R2", "QM1", "")
            .remote("R2", "R1", "QM1", "");
        assert_eq!(d.resolve("", "A", "Q"), Err(ReasonCode::UnknownRemoteQMgr));
        assert_eq!(d.resolve("", "", "R1"), Err(ReasonCode::UnknownRemoteQMgr));
    }
}
