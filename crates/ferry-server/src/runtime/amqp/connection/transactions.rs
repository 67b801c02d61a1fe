//! The session side of AMQP local transactions: coordinator links, their control
//! messages (declare, discharge) and the output handles of a transaction's puts. The
//! transaction's own state is [`super::super::transaction`].

use super::*;

impl Session {
    /// The client attaches a transaction controller: the link gets its own engine
    /// connection, whose unit of work carries its transactions (see `transaction`).
    pub(super) fn attach_coordinator(&mut self, link: LinkId, attach: &Attach) {
        let Some(info) = self.conn_info.clone().filter(|_| self.conn.is_some()) else {
            return self.refuse(link, not_open());
        };
        let conn = match self
            .server
            .with_engine(|e, now, fx| e.connect(info, now, fx))
        {
            Ok(c) => c,
            Err(e) => return self.refuse(link, error_of(e.reason, "no transaction can start")),
        };
        self.server.begin_conversation(conn, self.shared.clone());
        let old = self.coordinators.insert(
            link,
            Coordinator {
                conn,
                open: None,
                outputs: HashMap::new(),
            },
        );
        debug_assert!(old.is_none(), "{link:?} attached twice");
        let target = ferry_amqp::Coordinator {
            capabilities: vec![Symbol::from_static(
                condition::CAPABILITY_LOCAL_TRANSACTIONS,
            )],
        };
        let _ = self.amqp.attach_reply(
            link,
            attach.source.clone(),
            Some(LinkTarget::Coordinator(target)),
        );
        let _ = self.amqp.grant_credit(link, SENDER_CREDIT);
    }

    /// A declare or discharge sent to coordinator `link`: answered with `declared`, or
    /// `accepted` once a commit is durable, or `rejected` with the reason.
    pub(super) fn on_control(
        &mut self,
        link: LinkId,
        delivery_id: u32,
        settled: bool,
        message: &Bytes,
    ) {
        let (state, hold) = match control_of(message) {
            Err(error) => (rejected(error), ReplyHold::Now),
            Ok(Control::Declare) => match self.coordinators.get_mut(&link) {
                Some(c) if c.open.is_none() => {
                    let id = Bytes::copy_from_slice(&self.next_txn.to_be_bytes());
                    self.next_txn += 1;
                    c.open = Some(Transaction {
                        id: id.clone(),
                        acquired: Vec::new(),
                    });
                    (DeliveryState::Declared { txn_id: id }, ReplyHold::Now)
                }
                _ => (
                    rejected(ErrorCondition::new(
                        condition::NOT_ALLOWED,
                        "one transaction at a time per coordinator: discharge the open one first",
                    )),
                    ReplyHold::Now,
                ),
            },
            Ok(Control::Discharge { txn_id, fail }) => match self.coordinator_of(&txn_id) {
                None => (rejected(unknown_id(&txn_id)), ReplyHold::Now),
                Some(owner) => self.discharge(owner, fail),
            },
        };
        // A pre-settled control message is done: nobody waits for an answer.
        if !settled {
            self.settle_received(
                link,
                delivery_id,
                state,
                hold,
                "the commit could not be logged",
            );
        }
        self.top_up_credit(link);
    }

    /// The coordinator link whose open transaction is `txn_id`.
    pub(super) fn coordinator_of(&self, txn_id: &Bytes) -> Option<LinkId> {
        self.coordinators
            .iter()
            .find(|(_, c)| c.open.as_ref().is_some_and(|t| t.id == *txn_id))
            .map(|(l, _)| *l)
    }

    /// Ends the open transaction of coordinator `link`: commit (the deliveries it
    /// acquired removed, then MQCMIT, so the commit's log position covers both) or,
    /// when `fail`, backout (the acquired deliveries returned with BackoutCount + 1).
    pub(super) fn discharge(&mut self, link: LinkId, fail: bool) -> (DeliveryState, ReplyHold) {
        let (Some(consumer_conn), Some(c)) = (self.conn, self.coordinators.get_mut(&link)) else {
            return (rejected(not_open()), ReplyHold::Now);
        };
        let Some(txn) = c.open.take() else {
            return (rejected(not_open()), ReplyHold::Now);
        };
        let conn = c.conn;
        debug_assert!(c.open.is_none());
        let mut wait = ReplyWait::default();
        let committed = self.server.call(&mut wait, |e, now, fx| {
            if fail {
                let _ = e.backout(conn, now, fx);
                let _ = e.settle_many(
                    consumer_conn,
                    &txn.acquired,
                    Settlement::DEFAULT_OUTCOME,
                    now,
                    fx,
                );
                Ok(())
            } else {
                // Deliveries whose consumer ended meanwhile were returned already: an
                // unknown token is not an error of the commit.
                let _ = e.settle_for_commit(consumer_conn, &txn.acquired, now, fx);
                e.commit(conn, now, fx)
            }
        });
        self.credit_check = true;
        if self.server.telemetry.is_on() {
            let outcome = committed.as_ref().map(drop).map_err(|e| e.reason);
            let operation = if fail { "MQBACK" } else { "MQCMIT" };
            self.server.telemetry.settled(operation, conn, outcome);
        }
        match committed {
            Ok(()) => (DeliveryState::Accepted, wait.log),
            Err(e) => (
                rejected(ErrorCondition::new(
                    condition::TRANSACTION_ROLLBACK,
                    format!("the transaction was backed out ({})", e.reason),
                )),
                ReplyHold::Now,
            ),
        }
    }

    /// A coordinator link ends (or its connection): its open transaction is backed out,
    /// its handles closed and its engine connection ended.
    pub(super) fn detach_coordinator(&mut self, link: LinkId) {
        let Some(c) = self.coordinators.get(&link) else {
            return;
        };
        if c.open.is_some() {
            let _ = self.discharge(link, true);
        }
        let Some(c) = self.coordinators.remove(&link) else {
            return;
        };
        for (_, hobj) in c.outputs {
            let _ = self
                .server
                .with_engine(|e, now, fx| e.close(c.conn, hobj, CloseOptions::empty(), now, fx));
        }
        // Backed out above: nothing is left for the end to commit.
        let _ = self.server.end_conversation(c.conn, false);
    }

    /// The output handle, on coordinator `coordinator`'s engine connection, of the queue
    /// a transactional transfer on `link` is for (opened at its first use).
    pub(super) fn transaction_output(
        &mut self,
        coordinator: LinkId,
        link: LinkId,
        to: Option<&ferry_amqp::Str>,
        to_topic: bool,
    ) -> Result<(ConnId, Hobj), PutFailure> {
        let Some(Link::Inbound { topic, .. }) = self.links.get(&link) else {
            return Err(ErrorCondition::new(
                condition::ILLEGAL_STATE,
                "the link does not receive messages",
            )
            .into());
        };
        let (kind, queue) = Self::node(&[], &self.queue_of(link, to));
        let topic = *topic || to_topic || kind.is_topic();
        if queue.is_empty() {
            return Err(PutFailure {
                reason: Some(ReasonCode::UnknownObjectName),
                error: ErrorCondition::new(
                    condition::NOT_FOUND,
                    "a message on an anonymous link needs a 'to' address",
                ),
                queue,
            });
        }
        let Some(c) = self.coordinators.get(&coordinator) else {
            return Err(not_open().into());
        };
        let conn = c.conn;
        let key = if topic {
            format!("topic://{queue}")
        } else {
            queue.clone()
        };
        if let Some(h) = c.outputs.get(&key) {
            return Ok((conn, *h));
        }
        let (h, _) = self
            .open_output_on(conn, &queue, topic)
            .map_err(|(reason, error)| PutFailure {
                reason,
                error,
                queue: queue.clone(),
            })?;
        if let Some(c) = self.coordinators.get_mut(&coordinator) {
            c.outputs.insert(key, h);
        }
        Ok((conn, h))
    }
}
