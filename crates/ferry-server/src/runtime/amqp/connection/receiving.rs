//! Messages the client sends: each transfer is an MQPUT (under the transaction's unit
//! of work when it carries one), answered `accepted` at once, once logged (persistent), or
//! with the next frame to the client (AmqpAcceptDelay); one that cannot be put is
//! rejected, or dead-lettered when it came pre-settled.

use super::*;

impl Session {
    /// A message from the client: put it, and answer (after the log, when persistent).
    /// False when it must wait for log space (nothing done yet: it is tried again).
    pub(super) fn on_message(
        &mut self,
        link: LinkId,
        delivery_id: u32,
        settled: bool,
        transfer_state: Option<&DeliveryState>,
        message: &Bytes,
    ) -> bool {
        if self.coordinators.contains_key(&link) {
            self.on_control(link, delivery_id, settled, message);
            return true;
        }
        let now = self.now_ms;
        self.note_transfer_after_overdue();
        // A transactional transfer is put in its transaction's unit of work, answered
        // at once with the provisional outcome: what waits for the log is the commit.
        let txn = match transfer_state {
            Some(DeliveryState::Transactional { txn_id, .. }) => {
                match self.coordinator_of(txn_id) {
                    Some(c) => Some((c, txn_id.clone())),
                    None => {
                        let state = rejected(unknown_id(txn_id));
                        if !settled {
                            let action = Action::Settle {
                                session: link.session(),
                                delivery_id,
                                state,
                            };
                            self.shared.push(&self.server, 0, action);
                        }
                        return true;
                    }
                }
            }
            _ => None,
        };
        let put = self.put(link, message, now, txn.as_ref().map(|(c, _)| *c));
        let (state, hold, sent_persistent) = match put {
            Ok(Put::Done {
                hold,
                sent_persistent,
            }) => (DeliveryState::Accepted, hold, sent_persistent),
            Ok(Put::WaitForLog) => return false,
            Err(failure) => {
                if settled && txn.is_none() {
                    // Nobody can be told: it must not vanish without a trace.
                    self.not_put(&failure, message, now);
                }
                (rejected(failure.error), ReplyHold::Now, true)
            }
        };
        let (state, hold) = match txn {
            Some((_, txn_id)) => (
                DeliveryState::Transactional {
                    txn_id,
                    outcome: Some(Box::new(state)),
                },
                ReplyHold::Now,
            ),
            None => (state, hold),
        };
        for c in [&self.shared.counters, &*self.shared.channel_counters] {
            Counters::add(&c.messages_received, 1);
            c.last_message_ms.set(Some(now));
        }
        if !settled {
            if !sent_persistent
                && matches!((&state, &hold), (DeliveryState::Accepted, ReplyHold::Now))
                && self.accepts_may_wait()
            {
                let action = Action::AcceptLater {
                    session: link.session(),
                    delivery_id,
                };
                self.shared.push(&self.server, 0, action);
            } else {
                self.settle_received(
                    link,
                    delivery_id,
                    state,
                    hold,
                    "the message could not be logged",
                );
            }
        }
        self.top_up_credit(link);
        true
    }

    /// Whether the acceptance of a transfer the client sent non-durable (JMS
    /// NON_PERSISTENT, which Qpid JMS sends without waiting) may wait for the next frame
    /// to the client: only on a connection that consumes too, or did (so a frame will come:
    /// the next message, as for a requester its reply and for a responder its next
    /// request; a JMS requester that attaches a consumer per reply hears of its request
    /// with that attach's answer), unless AmqpAcceptDelay is 0 or the client was seen to
    /// wait for its acceptances. A connection that never consumed, a durable message
    /// (answered once logged, even when a temporary queue keeps it non-persistent: the JMS
    /// send waits) and a transaction's work (answered by the discharge) are answered at once.
    pub(super) fn accepts_may_wait(&self) -> bool {
        self.limits.amqp_accept_delay_ms > 0 && !self.accepts_at_once && self.has_consumed
    }

    /// Sets when acceptances that wait for the next frame are due to go alone
    /// (AmqpAcceptDelay from now), and clears it once they went with a frame.
    pub(super) fn watch_deferred_accepts(&mut self) {
        let due = &self.shared.accepts_due_ms;
        if self.amqp.has_deferred_accepts() {
            if due.get() == 0 {
                due.set(self.now_ms + self.limits.amqp_accept_delay_ms);
                self.shared.accepts_waiting.notify_one();
            }
        } else if due.replace(0) != 0 {
            // They rode on a frame: the client is not waiting for them.
            self.client_waited = 0;
        }
    }

    /// AmqpAcceptDelay passed with no frame to the client: the acceptances go alone.
    /// A client whose next transfer then comes before anything else was sent to it was
    /// waiting for them (a synchronous send on a connection that also consumes); seen
    /// twice in a row, it is answered at once from then on. A responder, whose next
    /// message comes only after its next request, is not counted.
    pub(super) fn send_overdue_accepts(&mut self) {
        self.shared.accepts_due_ms.set(0);
        self.amqp.send_deferred_accepts();
        self.overdue_sent = true;
        debug_assert!(!self.amqp.has_deferred_accepts());
    }

    /// A transfer from the client arrived: right after acceptances that went alone, it
    /// says the client waited for them (see `send_overdue_accepts`).
    fn note_transfer_after_overdue(&mut self) {
        if std::mem::take(&mut self.overdue_sent) {
            self.client_waited += 1;
            if self.client_waited >= 2 {
                self.accepts_at_once = true;
            }
        }
    }

    /// Answers the client's transfer `delivery_id` on `link` with `state`, once the log
    /// is durable as `hold` says; when its records could not be logged, rejected with
    /// 2102 and `unlogged`.
    pub(super) fn settle_received(
        &self,
        link: LinkId,
        delivery_id: u32,
        state: DeliveryState,
        hold: ReplyHold,
        unlogged: &str,
    ) {
        let (lsn, state) = match hold {
            ReplyHold::Now => (0, state),
            ReplyHold::Until(lsn) => (lsn, state),
            ReplyHold::Fail => (0, rejected(error_of(ReasonCode::ResourceProblem, unlogged))),
        };
        let action = Action::Settle {
            session: link.session(),
            delivery_id,
            state,
        };
        self.shared.push(&self.server, lsn, action);
    }

    /// Grants the sender on `link` credit again once half of it is used.
    pub(super) fn top_up_credit(&mut self, link: LinkId) {
        if self.amqp.credit_outstanding(link) < SENDER_CREDIT / 2 {
            let top_up = SENDER_CREDIT - self.amqp.credit_outstanding(link);
            let _ = self.amqp.grant_credit(link, top_up);
        }
    }

    /// Whether a persistent put of `bytes` may run now (see `Server::log_room`): a transfer
    /// that must wait is tried again when the server wakes this task (after flushes,
    /// checkpoints, and once a second), and refused after the same patience as an MQI
    /// call. Once one has been refused, those after it are refused at once while the log
    /// stays full, so a batch of transfers cannot hold the connection for a wait each.
    pub(super) fn log_room_for_put(&mut self, bytes: usize) -> Result<Put, ErrorCondition> {
        let usage = LogUse::Put(bytes);
        let refused = || error_of(ReasonCode::ResourceProblem, "the recovery log is full");
        let room = match self.log_wait {
            None if self.server.has_put_waiters() => LogRoom::Wait,
            None => self.server.log_room(usage, 0),
            Some((_, base)) => {
                let waited = self.server.checkpoints_completed().saturating_sub(base);
                self.server.log_room(usage, waited)
            }
        };
        if room != LogRoom::Wait && self.log_wait.take().is_some() {
            self.server.stop_waiting_for_log_room(&*self.shared, 0);
        }
        match room {
            LogRoom::Ready => Ok(Put::Done {
                hold: ReplyHold::Now,
                sent_persistent: true,
            }),
            LogRoom::Refused => Err(refused()),
            LogRoom::Wait => {
                let server = &self.server;
                let (since, _) = *self.log_wait.get_or_insert_with(|| {
                    (std::time::Instant::now(), server.checkpoints_completed())
                });
                if self.server.waited_too_long_for_log_room(since) {
                    self.server.refuse_log_room(usage);
                    return Err(refused());
                }
                // One call at a time waits: the connection's next transfer (tag 0).
                self.server.wait_for_log_room(self.shared.clone(), 0, usage);
                Ok(Put::WaitForLog)
            }
        }
    }

    /// Puts a transfer's message: outside syncpoint, or under `txn` (a coordinator link)
    /// in its unit of work.
    pub(super) fn put(
        &mut self,
        link: LinkId,
        message: &Bytes,
        now: u64,
        txn: Option<LinkId>,
    ) -> Result<Put, PutFailure> {
        let conn = self.conn.ok_or_else(not_open)?;
        // A small body is copied out of the read buffer, so a message that stays queued
        // does not pin the whole read chunk it arrived in (as the native path does); the
        // copy shares one allocation with the properties.
        let mq = amqp_to_mq_compact(message, now, COPY_BODY_BELOW)
            .map_err(|e| ErrorCondition::new(e.condition(), e.to_string()))?;
        let to_topic = mq.to_kind.is_some_and(|k| k.is_topic());
        let (conn, hobj) = match txn {
            Some(coordinator) => {
                self.transaction_output(coordinator, link, mq.to.as_ref(), to_topic)?
            }
            None => (conn, self.output_of(link, mq.to.as_ref(), to_topic)?),
        };
        let mut md = mq.md;
        let sent_persistent = md.persistence != persistence::NOT_PERSISTENT;
        if sent_persistent {
            match self.log_room_for_put(mq.body.len() + mq.properties.len()) {
                Ok(Put::WaitForLog) => return Ok(Put::WaitForLog),
                Ok(Put::Done { .. }) => {}
                Err(error) => {
                    return Err(PutFailure {
                        reason: Some(ReasonCode::ResourceProblem),
                        error,
                        queue: self.queue_of(link, mq.to.as_ref()),
                    })
                }
            }
        }
        let syncpoint = if txn.is_some() {
            PutOptionFlags::SYNCPOINT
        } else {
            PutOptionFlags::NO_SYNCPOINT
        };
        let pmo = PutOptions::new(syncpoint | PutOptionFlags::FAIL_IF_QUIESCING);
        let body = mq.body;
        let mut props = mq.properties;
        let to = mq.to;
        let span = if self.server.telemetry.is_on() {
            self.server
                .telemetry
                .start_send("transfer", Protocol::Amqp, &mut props)
        } else {
            None
        };
        let body_len = body.len();
        let mut wait = ReplyWait::default();
        let mut put = |md: &mut ferry_mqi::MessageDescriptor, body: Bytes, props: Bytes| {
            self.server.call(&mut wait, |e, now, fx| {
                e.put_with_properties(conn, hobj, md, &pmo, body, props, now, fx)
            })
        };
        let r = if md.persistence == persistence::NOT_PERSISTENT {
            // Nothing to retry: body and properties move in (a clone of the properties,
            // which own their buffer, would allocate).
            put(&mut md, body, props)
        } else {
            let r = put(&mut md, body.clone(), props.clone());
            if matches!(&r, Err(e) if e.reason == ReasonCode::PersistentNotAllowed) {
                // A temporary queue (JMS TemporaryQueue) holds no persistent messages
                // (MQ's 2048); it ends with its connection anyway, so a durable message
                // sent to one is kept as a non-persistent one instead of failing the JMS
                // send.
                md.persistence = persistence::NOT_PERSISTENT;
                put(&mut md, body, props)
            } else {
                r
            }
        };
        if let Some(span) = span {
            let queue = self.queue_of(link, to.as_ref());
            let facts = MessageFacts {
                destination: &queue,
                md: &md,
                body_len,
                conn: Some(conn),
                channel: None,
            };
            let outcome = r.as_ref().map(drop).map_err(|e| e.reason);
            span.end(&self.server.telemetry, &facts, outcome, txn.is_some());
        }
        r.map(|_| Put::Done {
            hold: wait.log,
            sent_persistent,
        })
        .map_err(|e| {
            // The queue's name, only for the error (no copy per message put).
            let queue = self.queue_of(link, to.as_ref());
            PutFailure {
                reason: Some(e.reason),
                error: error_of(e.reason, &format!("the message was not put on '{queue}'")),
                queue,
            }
        })
    }

    /// The output handle of inbound `link` (ANONYMOUS-RELAY: of the message's `to`, a
    /// topic when `to_topic`).
    pub(super) fn output_of(
        &mut self,
        link: LinkId,
        to: Option<&ferry_amqp::Str>,
        to_topic: bool,
    ) -> Result<Hobj, PutFailure> {
        let hobj = match self.links.get(&link) {
            Some(Link::Inbound { hobj: Some(h), .. }) => *h,
            Some(Link::Inbound { hobj: None, .. }) => {
                let Some(to) = to.map(|t| t.as_str()) else {
                    return Err(PutFailure {
                        reason: Some(ReasonCode::UnknownObjectName),
                        error: ErrorCondition::new(
                            condition::NOT_FOUND,
                            "a message on an anonymous link needs a 'to' address",
                        ),
                        queue: String::new(),
                    });
                };
                let (kind, bare) = Self::node(&[], to);
                let topic = to_topic || kind.is_topic();
                let key = if topic {
                    format!("topic://{bare}")
                } else {
                    bare.clone()
                };
                match self.relay.get(&key) {
                    Some(h) => *h,
                    None => {
                        let conn = self.conn.ok_or_else(not_open)?;
                        let (h, _) = self.open_output_on(conn, &bare, topic).map_err(
                            |(reason, error)| PutFailure {
                                reason,
                                error,
                                queue: bare.clone(),
                            },
                        )?;
                        self.relay.insert(key, h);
                        h
                    }
                }
            }
            _ => {
                return Err(ErrorCondition::new(
                    condition::ILLEGAL_STATE,
                    "the link does not receive messages",
                )
                .into())
            }
        };
        Ok(hobj)
    }

    /// The queue a transfer on `link` is for: the link's target, else the message's `to`.
    pub(super) fn queue_of(&self, link: LinkId, to: Option<&ferry_amqp::Str>) -> String {
        match self.links.get(&link) {
            Some(Link::Inbound { address, .. }) if !address.is_empty() => address.clone(),
            _ => to.map_or_else(String::new, |t| t.as_str().to_string()),
        }
    }

    /// Opens `name` for output, for ANONYMOUS-RELAY: the MQ reason too when it fails.
    pub(super) fn open_queue_for_put(
        &mut self,
        name: &str,
    ) -> Result<(Hobj, String), (Option<ReasonCode>, ErrorCondition)> {
        let conn = self.conn.ok_or_else(|| (None, not_open()))?;
        self.open_queue_for_put_on(conn, name)
    }

    /// Opens queue or topic `name` for output on engine connection `conn`.
    pub(super) fn open_output_on(
        &mut self,
        conn: ConnId,
        name: &str,
        topic: bool,
    ) -> Result<(Hobj, String), (Option<ReasonCode>, ErrorCondition)> {
        if !topic {
            return self.open_queue_for_put_on(conn, name);
        }
        let options = OpenOptions::OUTPUT | OpenOptions::FAIL_IF_QUIESCING;
        self.server
            .with_engine(|e, _now, _fx| e.open_topic(conn, "", name, options, _fx))
            .map(|o| (o.hobj, o.object_name))
            .map_err(|e| {
                let what = format!("topic '{name}' cannot be published to");
                (Some(e.reason), error_of(e.reason, &what))
            })
    }

    /// Opens queue `name` for output on engine connection `conn`.
    pub(super) fn open_queue_for_put_on(
        &mut self,
        conn: ConnId,
        name: &str,
    ) -> Result<(Hobj, String), (Option<ReasonCode>, ErrorCondition)> {
        let od = ObjectDescriptor::queue(name).map_err(|e| {
            let error = ErrorCondition::new(
                condition::NOT_FOUND,
                format!("'{name}' is not a valid queue name: {e}"),
            );
            (Some(ReasonCode::UnknownObjectName), error)
        })?;
        let options = OpenOptions::OUTPUT | OpenOptions::FAIL_IF_QUIESCING;
        self.server
            .with_engine(|e, now, fx| e.open(conn, &od, options, now, fx))
            .map(|o| (o.hobj, o.object_name.trim().to_string()))
            .map_err(|e| {
                let what = format!("queue '{name}' cannot be opened");
                (Some(e.reason), error_of(e.reason, &what))
            })
    }

    /// A pre-settled transfer that could not be put: to the dead-letter queue with an
    /// MQDLH giving the reason, as MQ's channel agents do, or discarded when there is no
    /// dead-letter queue (DEADQ blank), it cannot take the message, or the message does
    /// not map to an MQ message. Either way counted (DISPLAY CHSTATUS) and reported by
    /// FRY9544W, which the error log suppresses to a line and a count per interval.
    pub(super) fn not_put(&mut self, failure: &PutFailure, message: &Bytes, now: u64) {
        let dead_letter_q = self
            .server
            .engine
            .borrow()
            .qmgr()
            .dead_letter_q
            .trim()
            .to_string();
        let put = match failure.reason {
            Some(reason) if !dead_letter_q.is_empty() => {
                self.dead_letter(&dead_letter_q, reason, &failure.queue, message, now)
            }
            _ => false,
        };
        for c in [&self.shared.counters, &*self.shared.channel_counters] {
            Counters::add(if put { &c.dead_lettered } else { &c.discarded }, 1);
        }
        // One line per message: the error log writes the first of each cause per
        // SuppressInterval and counts the rest, so a flood costs a line per interval.
        let what = failure
            .error
            .description
            .as_ref()
            .map_or(failure.error.condition.as_str(), |d| d.as_str());
        let fate = if put {
            format!("put to the dead-letter queue '{dead_letter_q}'")
        } else {
            "discarded".to_string()
        };
        self.server.error_log.borrow_mut().write(
            &messages::AMQP_NOT_PUT,
            &[
                &self.shared.peer_ip,
                &self.shared.settings.name,
                &failure.queue,
                &what,
                &fate,
            ],
        );
    }

    /// Puts `message` (an AMQP message that could not go to `dest_q` for `reason`) to
    /// the dead-letter queue, headed by an MQDLH; true when it is there.
    pub(super) fn dead_letter(
        &mut self,
        dead_letter_q: &str,
        reason: ReasonCode,
        dest_q: &str,
        message: &Bytes,
        now: u64,
    ) -> bool {
        let Some(conn) = self.conn else { return false };
        let Ok(mq) = amqp_to_mq_compact(message, now, 0) else {
            return false;
        };
        let hobj = match &self.dead_letter_hobj {
            Some((name, h)) if name == dead_letter_q => *h,
            _ => match self.open_queue_for_put(dead_letter_q) {
                Ok((h, _)) => {
                    if let Some((_, old)) = self
                        .dead_letter_hobj
                        .replace((dead_letter_q.to_string(), h))
                    {
                        self.close_handle(old);
                    }
                    h
                }
                Err(_) => return false,
            },
        };
        let mut md = mq.md;
        let header = DeadLetterHeader::for_message(
            &md,
            reason,
            dest_q,
            self.server.name.as_str(),
            (APPL_TYPE_AMQP, &self.shared.settings.name),
            ferry_engine::clock::put_date_time(ferry_engine::Timestamp(now)),
        );
        let mut body = Vec::with_capacity(DEAD_LETTER_HEADER_LEN + mq.body.len());
        header.encode(md.encoding, &mut body);
        body.extend_from_slice(&mq.body);
        md.format = FORMAT_DEAD_LETTER_HEADER;
        let usage = LogUse::Put(body.len() + mq.properties.len());
        if md.persistence != persistence::NOT_PERSISTENT
            && self.server.log_room(usage, 0) != LogRoom::Ready
        {
            return false;
        }
        let pmo = PutOptions::new(PutOptionFlags::NO_SYNCPOINT | PutOptionFlags::FAIL_IF_QUIESCING);
        let props = mq.properties;
        self.server
            .with_engine(|e, now, fx| {
                e.put_with_properties(conn, hobj, &mut md, &pmo, Bytes::from(body), props, now, fx)
            })
            .is_ok()
    }
}
