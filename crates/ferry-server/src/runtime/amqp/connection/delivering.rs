//! Messages to the client: the engine consumers' credit kept in step with the links'
//! credit and Ferry's bounds, the inbox of deliveries and outcomes, the client's
//! dispositions and the batches of accepted deliveries removed (BATCHSZ / BATCHINT).

use super::*;

impl Session {
    /// Gives each link's engine consumer the credit it may have: the link's credit less
    /// what is on its way to the client, within AmqpMaxUnsettledPerLink (with what the
    /// client has not settled) and AmqpMaxUnsettledPerConnection, and no more at all
    /// while AmqpOutputBuffer bytes wait to go out. A client that grants 2^32-1 credit and
    /// never settles or never reads thus holds a bounded number of messages; settling
    /// and reading top the credit up. Takes credit back when the client lowered the
    /// link's. One engine call for all links.
    pub(super) fn sync_credits(&mut self) {
        if !self.credit_check && !self.credit_blocked {
            return;
        }
        self.credit_check = false;
        self.credit_blocked = false;
        let Some(conn) = self.conn else { return };
        let per_link = self.limits.amqp_max_unsettled_per_link;
        let per_conn = self.limits.amqp_max_unsettled_per_connection;
        let pending_output = self.amqp.pending_output_bytes() as u64;
        let blocked = pending_output >= self.limits.amqp_output_buffer;
        // Each outbound link: its consumer, the link credit, deliveries held unsettled
        // and deliveries on their way.
        // Buffers kept from pass to pass: this runs for most messages.
        let mut links = std::mem::take(&mut self.scratch_links);
        let mut plan = std::mem::take(&mut self.scratch_plan);
        links.clear();
        plan.clear();
        links.extend(self.links.iter().filter_map(|(link, l)| match l {
            Link::Outbound { consumer, held, .. } => Some((
                *consumer,
                u64::from(self.amqp.credit(*link)),
                u64::from(*held),
                u64::from(self.shared.in_flight(*consumer)),
            )),
            Link::Inbound { .. } | Link::SubscriptionLookup { .. } => None,
        }));
        if links.is_empty() {
            self.scratch_links = links;
            self.scratch_plan = plan;
            return;
        }
        // The byte bounds, shared by the links as their consumers' windows: credit given
        // on a deep queue is delivered at once, so the bytes it may bring in must fit
        // what is left of AmqpOutputBuffer and AmqpMaxUnsettledBytes.
        let byte_room = if blocked {
            0
        } else {
            (self.limits.amqp_output_buffer - pending_output).min(
                self.limits
                    .amqp_max_unsettled_bytes
                    .saturating_sub(self.held_bytes),
            )
        };
        let share = byte_room / links.len() as u64;
        // Decided on a look at the engine: most passes change nothing and make no engine
        // call (a settlement rarely frees credit the link's own credit does not bind).
        let as_u32 = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        let mut wants_more = false;
        let mut capped = false;
        {
            let engine = self.server.engine.borrow();
            let credit = |c| u64::from(engine.credit(conn, c).unwrap_or(0));
            let mut committed: u64 = links
                .iter()
                .map(|(c, _, held, on_way)| credit(*c) + held + on_way)
                .sum();
            // Nothing held, nothing on its way: one message may always go, however large,
            // or a message bigger than the bounds would never be delivered.
            let window = if committed == 0 && !blocked {
                share.max(1)
            } else {
                share
            };
            self.window_given = window;
            self.sent_since_window = 0;
            // Windows move only by a step of some size (or from zero): deliveries and
            // settlements move them a message at a time, and an engine call for each
            // would cost more than the bound saves. Stale by a step at most.
            let step = self.limits.amqp_output_buffer / 8;
            for (consumer, link_credit, held, on_way) in &links {
                let current = engine.window(conn, *consumer).unwrap_or(u64::MAX);
                if (current == 0 && window > 0) || current.abs_diff(window) > step {
                    plan.push((*consumer, CreditChange::Window(window)));
                }
                let current = credit(*consumer);
                let wanted = link_credit
                    .saturating_sub(*on_way)
                    .min(per_link.saturating_sub(held + on_way));
                // A bound of ours, not the client's credit, keeps the engine's credit down:
                // settlements and deliveries sent may then let more go.
                capped |= wanted < link_credit.saturating_sub(*on_way);
                if current + on_way > *link_credit {
                    // The client lowered the link's credit: the engine keeps no more.
                    let keep = wanted.min(current);
                    plan.push((*consumer, CreditChange::Lower(as_u32(keep))));
                    committed -= current - keep;
                } else if wanted > current {
                    let add = (wanted - current).min(per_conn.saturating_sub(committed));
                    capped |= add < wanted - current;
                    if blocked {
                        wants_more = true;
                    } else if add > 0 {
                        plan.push((*consumer, CreditChange::Add(as_u32(add))));
                        committed += add;
                        debug_assert!(committed <= per_conn);
                    }
                }
            }
            // A window spent while output waits or unsettled bytes are at their bound is
            // opened again once output drains (the client settling checks anyway).
            wants_more |= blocked;
            // Byte room below half its bound: settlements widen the windows.
            capped |= byte_room < self.limits.amqp_output_buffer / 2;
        }
        self.credit_blocked = wants_more;
        self.credit_capped = capped;
        self.scratch_links = links;
        if plan.is_empty() {
            self.scratch_plan = plan;
            return;
        }
        self.server.with_engine(|e, now, fx| {
            for (consumer, change) in plan.drain(..) {
                match change {
                    CreditChange::Window(bytes) => {
                        let _ = e.set_window(conn, consumer, bytes, now, fx);
                    }
                    CreditChange::Lower(keep) => {
                        let _ = e.drain(conn, consumer);
                        if keep > 0 {
                            let _ = e.add_credit(conn, consumer, keep, now, fx);
                        }
                    }
                    CreditChange::Add(n) => {
                        let _ = e.add_credit(conn, consumer, n, now, fx);
                    }
                }
            }
        });
        self.scratch_plan = plan;
    }

    /// Tops up the consumers' credit (first, so a drain sees what it delivers), then
    /// does what the inbox holds; again while that frees credit (a pre-settled link's,
    /// as it sends), until the output bound stops it.
    pub(super) fn pump_deliveries(&mut self) {
        // Bounded: each round sends at most the credit one round gives.
        for _ in 0..16 {
            self.sync_credits();
            self.process_inbox();
            if self.inbox_paused || !self.credit_check {
                break;
            }
        }
    }

    /// The client's outcome for deliveries `first..=last` we sent.
    pub(super) fn on_disposition(
        &mut self,
        session: SessionId,
        first: u32,
        last: u32,
        settled: bool,
        state: Option<DeliveryState>,
    ) {
        let Some(conn) = self.conn else { return };
        // A transactional acceptance acquires the deliveries for the transaction: they
        // stay held until it is discharged. Other transactional outcomes apply at once.
        let mut acquire_for = None;
        let provisional = match &state {
            Some(DeliveryState::Transactional { txn_id, outcome }) => {
                match self.coordinator_of(txn_id) {
                    Some(c) => {
                        if matches!(outcome.as_deref(), Some(DeliveryState::Accepted)) {
                            acquire_for = Some(c);
                        }
                        outcome.as_deref()
                    }
                    // Unknown: nothing is settled (the deliveries stay held).
                    None => None,
                }
            }
            other => other.as_ref(),
        };
        let outcome = match provisional {
            Some(DeliveryState::Accepted) => Some(Settlement::Accepted),
            Some(DeliveryState::Released) => Some(Settlement::Released),
            Some(DeliveryState::Modified {
                delivery_failed,
                undeliverable_here,
                ..
            }) => Some(Settlement::Modified {
                delivery_failed: *delivery_failed,
                undeliverable_here: *undeliverable_here,
            }),
            Some(DeliveryState::Rejected { .. }) => Some(Settlement::Rejected),
            _ => None,
        };
        let Some(outcome) = outcome else { return };
        // The range is the client's to choose (0..=0xFFFFFFFF, or wrapping around): the
        // work is bounded by what the connection holds, not by the range.
        let span = last.wrapping_sub(first);
        let mut ids: Vec<u32> = if u64::from(span) < self.deliveries.len() as u64 {
            (0..=span)
                .map(|i| first.wrapping_add(i))
                .filter(|id| self.deliveries.contains_key(&(session.0, *id)))
                .collect()
        } else {
            self.deliveries
                .keys()
                .filter(|(channel, id)| *channel == session.0 && id.wrapping_sub(first) <= span)
                .map(|(_, id)| *id)
                .collect()
        };
        // In the order the client named them (serial order from `first`).
        ids.sort_unstable_by_key(|id| id.wrapping_sub(first));
        let mut others = Vec::new();
        for id in ids {
            if let Some((link, token, size)) = self.deliveries.remove(&(session.0, id)) {
                self.held_bytes -= u64::from(size);
                if let Some(Link::Outbound { held, .. }) = self.links.get_mut(&link) {
                    *held -= 1;
                }
                if let Some(t) = acquire_for
                    .and_then(|c| self.coordinators.get_mut(&c))
                    .and_then(|c| c.open.as_mut())
                {
                    t.acquired.push(token);
                } else if outcome == Settlement::Accepted {
                    self.accepted.push(token);
                } else {
                    others.push(token);
                }
            }
        }
        // Settled deliveries make room for more, if a bound of ours held credit back
        // (most clients' own credit binds first: their next flow brings more).
        self.credit_check |= self.credit_capped;
        if !others.is_empty() {
            let _ = self
                .server
                .with_engine(|e, now, fx| e.settle_many(conn, &others, outcome, now, fx));
        }
        if !settled {
            let _ = self
                .amqp
                .disposition(session, Role::Sender, first, last, true, state);
        }
        let settings = &self.shared.settings;
        if self.accepted.len() >= settings.batch_size || settings.batch_interval_ms == 0 {
            self.flush_accepts();
        } else if !self.accepted.is_empty() && self.batch_due.is_none() {
            self.batch_due = Some(
                tokio::time::Instant::now() + Duration::from_millis(settings.batch_interval_ms),
            );
        }
    }

    /// Removes the accepted deliveries (one engine call for the batch).
    pub(super) fn flush_accepts(&mut self) {
        self.batch_due = None;
        let Some(conn) = self.conn else {
            self.accepted.clear();
            return;
        };
        if self.accepted.is_empty() {
            return;
        }
        let tokens = std::mem::take(&mut self.accepted);
        let _ = self
            .server
            .with_engine(|e, now, fx| e.settle_many(conn, &tokens, Settlement::Accepted, now, fx));
    }

    /// Does what the inbox holds: deliveries to links, outcomes of the client's
    /// transfers (consecutive acceptances as one disposition), cancelled consumers, and
    /// completes drains.
    pub(super) fn process_inbox(&mut self) {
        let now = self.now_ms;
        let mut accept_run: Option<(SessionId, u32, u32)> = None;
        let bound = usize::try_from(self.limits.amqp_output_buffer).unwrap_or(usize::MAX);
        self.inbox_paused = false;
        loop {
            let Some(action) = self.shared.inbox.borrow_mut().pop_front() else {
                break;
            };
            if matches!(action, Action::Deliver { .. }) && self.amqp.pending_output_bytes() >= bound
            {
                // The client has not read what it was sent: the rest waits for the output
                // to drain (the engine gives no more credit meanwhile).
                self.shared.inbox.borrow_mut().push_front(action);
                self.inbox_paused = true;
                break;
            }
            match action {
                Action::Settle {
                    session,
                    delivery_id,
                    state: DeliveryState::Accepted,
                } => {
                    accept_run = match accept_run {
                        Some((s, first, last))
                            if s == session && last.wrapping_add(1) == delivery_id =>
                        {
                            Some((s, first, delivery_id))
                        }
                        other => {
                            self.send_accepts(other);
                            Some((session, delivery_id, delivery_id))
                        }
                    };
                }
                Action::Settle {
                    session,
                    delivery_id,
                    state,
                } => {
                    self.send_accepts(accept_run.take());
                    let _ = self.amqp.disposition(
                        session,
                        Role::Receiver,
                        delivery_id,
                        delivery_id,
                        true,
                        Some(state),
                    );
                }
                Action::AcceptLater {
                    session,
                    delivery_id,
                } => {
                    let _ = self.amqp.accept_with_next_frame(session, delivery_id);
                }
                Action::Deliver {
                    consumer,
                    token,
                    message,
                } => {
                    self.shared.delivered(consumer);
                    self.overdue_sent = false;
                    self.send_delivery(consumer, token, message, now);
                }
                Action::Cancelled { consumer, reason } => {
                    self.shared.forget_consumer(consumer);
                    if let Some(link) = self.consumers.remove(&consumer) {
                        if let Some(Link::Outbound { hobj, .. }) = self.links.remove(&link) {
                            self.close_handle(hobj);
                        }
                        self.forget_deliveries(link);
                        let _ = self.amqp.detach(
                            link,
                            true,
                            Some(error_of(reason, "the queue is gone")),
                        );
                    }
                }
            }
        }
        self.send_accepts(accept_run);
        self.complete_drains();
    }

    pub(super) fn send_accepts(&mut self, run: Option<(SessionId, u32, u32)>) {
        if let Some((session, first, last)) = run {
            let _ = self.amqp.disposition(
                session,
                Role::Receiver,
                first,
                last,
                true,
                Some(DeliveryState::Accepted),
            );
        }
    }

    /// Drops the unsettled deliveries of `link` (its consumer ended: the engine settles
    /// them) from the connection's accounts.
    pub(super) fn forget_deliveries(&mut self, link: LinkId) {
        let mut freed = 0u64;
        self.deliveries.retain(|_, (l, _, size)| {
            let keep = *l != link;
            if !keep {
                freed += u64::from(*size);
            }
            keep
        });
        self.held_bytes -= freed;
    }

    pub(super) fn send_delivery(
        &mut self,
        consumer: ConsumerId,
        token: Option<DeliveryToken>,
        message: Box<GotMessage>,
        now: u64,
    ) {
        let Some(&link) = self.consumers.get(&consumer) else {
            // The link is gone; its held messages went back when the consumer ended.
            return;
        };
        if self.amqp.credit(link) == 0 {
            // The engine never has more credit than the link: this is a bug guard. An
            // unsettled message goes back; a settled one is already consumed.
            if let (Some(t), Some(conn)) = (token, self.conn) {
                let _ = self
                    .server
                    .with_engine(|e, now, fx| e.settle(conn, t, Settlement::Released, now, fx));
            }
            tracing::warn!("AMQP delivery without link credit on {link:?}");
            return;
        }
        self.next_tag += 1;
        if self.tags.capacity() < 8 {
            self.tags.reserve(8 * 1024);
        }
        self.tags.extend_from_slice(&self.next_tag.to_be_bytes());
        let tag = self.tags.split_to(8).freeze();
        let m = &*message;
        let sent = self.amqp.send(link, tag, token.is_none(), 0, |out| {
            mq_to_amqp(&m.md, &m.properties, &m.data, out, now)
        });
        match sent {
            Ok(delivery_id) => {
                if self.server.telemetry.is_on() {
                    self.trace_delivery(link, m);
                }
                self.sent_since_window += (m.data.len() + m.properties.len()) as u64;
                // This delivery spent its consumer's byte window: the next pass opens it
                // again. Nothing else may: a connection that falls quiet (a requester
                // waiting for its one reply, with a large prefetch) sends no flow,
                // settles nothing a bound of ours held back, and sends too few bytes
                // for the check after half a window.
                if let Some(conn) = self.conn {
                    let spent = self.server.engine.borrow().window(conn, consumer);
                    self.credit_check |= matches!(spent, Ok(0));
                }
                if let Some(t) = token {
                    let size = u32::try_from(m.data.len() + m.properties.len()).unwrap_or(u32::MAX);
                    self.held_bytes += u64::from(size);
                    self.deliveries
                        .insert((link.channel, delivery_id), (link, t, size));
                    if let Some(Link::Outbound { held, .. }) = self.links.get_mut(&link) {
                        *held += 1;
                    }
                } else {
                    // A pre-settled delivery sent frees its place for the next, if a
                    // bound of ours held credit back.
                    self.credit_check |= self.credit_capped;
                }
                for c in [&self.shared.counters, &*self.shared.channel_counters] {
                    Counters::add(&c.messages_sent, 1);
                    c.last_message_ms.set(Some(now));
                }
            }
            Err(e) => tracing::warn!("AMQP send on {link:?} failed: {e}"),
        }
    }

    /// Records the `receive` span of message `m` delivered on `link` (tracing is on).
    #[inline(never)]
    fn trace_delivery(&self, link: LinkId, m: &GotMessage) {
        let Some(conn) = self.conn else { return };
        let Some(Link::Outbound { hobj, .. }) = self.links.get(&link) else {
            return;
        };
        let Some(span) =
            self.server
                .telemetry
                .start_receive("transfer", Protocol::Amqp, &m.properties)
        else {
            return;
        };
        let engine = self.server.engine.borrow();
        let facts = MessageFacts {
            destination: engine.handle_name(conn, *hobj).unwrap_or(""),
            md: &m.md,
            body_len: m.data_length,
            conn: Some(conn),
            channel: None,
        };
        span.end(&self.server.telemetry, &facts, Ok(()), false);
    }

    /// Ends the drains the client asked for once what was available has been sent.
    pub(super) fn complete_drains(&mut self) {
        if !self.drains_pending {
            return;
        }
        let Some(conn) = self.conn else { return };
        let waiting: Vec<(LinkId, ConsumerId)> = self
            .links
            .iter()
            .filter_map(|(l, k)| match k {
                Link::Outbound {
                    consumer,
                    drain_requested: true,
                    ..
                } => Some((*l, *consumer)),
                _ => None,
            })
            .collect();
        let mut still_waiting = false;
        for (link, consumer) in waiting {
            if self.shared.in_flight(consumer) > 0 {
                still_waiting = true;
                continue;
            }
            let _ = self
                .server
                .with_engine(|e, _now, _fx| e.drain(conn, consumer));
            // Draining may have left deliveries in the inbox only if the engine had
            // delivered in between; the inbox is empty here (we run after it).
            let _ = self.amqp.drained(link);
            if let Some(Link::Outbound {
                drain_requested, ..
            }) = self.links.get_mut(&link)
            {
                *drain_requested = false;
            }
        }
        self.drains_pending = still_waiting;
    }
}
