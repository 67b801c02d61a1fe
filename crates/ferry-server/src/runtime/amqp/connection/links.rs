//! Links: the client's open, attaching and detaching its links, and its flow. A link the
//! client sends on is an output handle (or ANONYMOUS-RELAY's handles by address); a link
//! it receives on is an input or browse handle with an engine consumer fed by the link's
//! credit.

use super::*;
use crate::amqp_mapping::destination::NodeKind;

impl Session {
    /// The client's open: the user id it runs as, then the engine connection. False when
    /// the user's groups are read from an LDAP directory first (AUTHINFO AUTHORMD other
    /// than OS): the answer waits for [`Session::groups_read`], and so does everything the
    /// client sent after its open.
    pub(super) fn on_open(&mut self, open: &Open) -> bool {
        let server = self.server.clone();
        if server.state.get() != QmgrState::Running {
            self.refuse_open(
                condition::CONNECTION_FORCED,
                "the queue manager is stopping".into(),
            );
            return true;
        }
        if let Some((cond, why)) = self.refused.take() {
            self.refuse_open(cond, why);
            return true;
        }
        let Some(user_id) = self.admit_user(open) else {
            self.refuse_open(
                condition::UNAUTHORIZED_ACCESS,
                "not authorized: the queue manager's error log says why".into(),
            );
            return true;
        };
        *self.shared.user_id.borrow_mut() = user_id.clone();
        let info = ConnectionInfo {
            application_name: app_name(open),
            channel: self.shared.settings.name.clone(),
            connection_name: self.shared.peer_ip.clone(),
            user_id,
            // The process serving the channel, as for a native client.
            pid: Some(std::process::id()),
        };
        let container_id = open.container_id.as_str().to_string();
        let Some(directory) = connauth::groups_to_read(&server, &info.user_id) else {
            self.connect_engine(info, container_id);
            return true;
        };
        // Read aside (the connection's timer keeps HandshakeTimeout meanwhile); the task
        // hands the outcome to the connection task through `groups_decision`.
        let (shared, user) = (self.shared.clone(), info.user_id.clone());
        tokio::task::spawn_local(async move {
            let read = connauth::read_groups(
                &server,
                directory,
                &user,
                &shared.settings.name,
                &shared.peer_ip,
            )
            .await;
            shared.groups_decided(read);
        });
        self.opening = Some((info, container_id));
        false
    }

    /// The user's groups were read from the directory (`read`), or could not be: the open
    /// waiting for them is answered.
    pub(super) fn groups_read(&mut self, read: bool) {
        let Some((info, container_id)) = self.opening.take() else {
            return;
        };
        if !read {
            self.refuse_open(
                condition::UNAUTHORIZED_ACCESS,
                "not authorized: the queue manager's error log says why".into(),
            );
        } else if self.server.state.get() != QmgrState::Running {
            self.refuse_open(
                condition::CONNECTION_FORCED,
                "the queue manager is stopping".into(),
            );
        } else {
            self.connect_engine(info, container_id);
        }
    }

    /// A refusal still answers with our open (the spec's order), then closes.
    fn refuse_open(&mut self, cond: &'static str, why: String) {
        let _ = self.amqp.open(Open::new(self.server.name.as_str()));
        let _ = self.amqp.close(Some(ErrorCondition::new(cond, why)));
    }

    /// The engine connection for the client's open, and our open.
    fn connect_engine(&mut self, info: ConnectionInfo, container_id: String) {
        let server = self.server.clone();
        self.conn_info = Some(info.clone());
        match server.with_engine(|e, now, fx| e.connect(info, now, fx)) {
            Ok(conn) => {
                self.conn = Some(conn);
                server.begin_conversation(conn, self.shared.clone());
                *self.shared.client_id.borrow_mut() = Some(container_id);
                let mut reply = Open::new(server.name.as_str());
                // SHARED-SUBS: JMS 2.0 shared subscriptions (Qpid JMS asks before using one).
                reply.offered_capabilities = vec![
                    Symbol::from_static(condition::CAPABILITY_ANONYMOUS_RELAY),
                    Symbol::from_static("SHARED-SUBS"),
                ];
                let _ = self.amqp.open(reply);
            }
            Err(e) => {
                let _ = self
                    .amqp
                    .close(Some(error_of(e.reason, "connection refused")));
            }
        }
    }

    /// SASL-INIT: ANONYMOUS, or PLAIN with a user id and password, judged by connection
    /// authentication. True when the outcome was given now; false when a password check
    /// (or a refusal's FAILDLAY) runs and the outcome comes later.
    pub(super) fn on_sasl_init(&mut self, mechanism: &str, response: Option<&[u8]>) -> bool {
        let plain = match mechanism {
            "PLAIN" => match response.and_then(ferry_amqp::connection::parse_plain) {
                Some((_, user, password)) => Some((user.to_string(), password.to_string())),
                None => {
                    let _ = self.amqp.sasl_outcome(false);
                    return true;
                }
            },
            _ => None,
        };
        let user = plain.as_ref().map(|(u, _)| u.clone()).unwrap_or_default();
        *self.shared.user_id.borrow_mut() = user.clone();
        let name = self.shared.settings.name.clone();
        let mca_user = self
            .server
            .engine
            .borrow()
            .channel(&name)
            .map(|c| c.attributes.mca_user)
            .unwrap_or_default();
        let tls = self.shared.tls.borrow().clone();
        let arrival = channel_auth::Arrival {
            channel: &name,
            channel_mca_user: &mca_user,
            address: &self.shared.peer_ip,
            client_user: &user,
            certificate: tls.as_deref().and_then(TlsSession::peer_names),
        };
        let claimant = connauth::Claimant {
            local: false,
            record: channel_auth::check_client(&self.server, &arrival),
            asserted: &user,
            credentials: plain.as_ref().map(|(u, p)| (u.as_str(), p.as_str())),
            channel: &name,
            address: &self.shared.peer_ip,
            application: "AMQP client",
        };
        match connauth::plan(&self.server, &claimant) {
            connauth::Plan::Skip => {
                let _ = self.amqp.sasl_outcome(true);
                true
            }
            connauth::Plan::Refuse { fail_delay } => {
                let shared = self.shared.clone();
                tokio::task::spawn_local(async move {
                    connauth::refuse_later(fail_delay).await;
                    shared.sasl_decided(false);
                });
                false
            }
            connauth::Plan::Verify {
                user,
                password,
                adopt,
                fail_delay,
            } => {
                let (server, shared) = (self.server.clone(), self.shared.clone());
                tokio::task::spawn_local(async move {
                    let proved = connauth::verify(
                        &server,
                        &shared.settings.name,
                        &shared.peer_ip,
                        user,
                        password,
                        fail_delay,
                    )
                    .await;
                    let ok = proved.is_some();
                    if adopt {
                        *shared.adopted_user.borrow_mut() = proved;
                    }
                    shared.sasl_decided(ok);
                });
                false
            }
        }
    }

    /// The user id the connection runs as, decided by the channel authentication
    /// records from the SASL user (or, with USECLTID(YES), the container id), the
    /// channel's MCAUSER, the address and the client certificate; `None`: refused.
    fn admit_user(&self, open: &Open) -> Option<String> {
        let name = &self.shared.settings.name;
        let (mca_user, use_client_id) = match self.server.engine.borrow().channel(name) {
            Some(c) => (
                c.attributes.mca_user,
                c.attributes.use_client_id == ferry_objects::channel::UseClientId::Yes,
            ),
            None => (String::new(), false),
        };
        let client_user = if use_client_id {
            open.container_id.as_str().to_string()
        } else {
            self.shared.user_id.borrow().clone()
        };
        let tls = self.shared.tls.borrow().clone();
        let certificate = tls.as_deref().and_then(TlsSession::peer_names);
        let arrival = channel_auth::Arrival {
            channel: name,
            channel_mca_user: &mca_user,
            address: &self.shared.peer_ip,
            client_user: &client_user,
            certificate,
        };
        let admitted = channel_auth::map(&self.server, &arrival)?;
        let adopted = self.shared.adopted_user.borrow().clone();
        channel_auth::finish(&self.server, &arrival, &admitted, adopted.as_deref())
    }

    pub(super) fn refuse(&mut self, link: LinkId, error: ErrorCondition) {
        let _ = self.amqp.refuse_attach(link, error);
    }

    /// Opens `name` (or, for a dynamic node, a new temporary queue) with `options`.
    pub(super) fn open_queue(
        &mut self,
        name: Option<&str>,
        dynamic: bool,
        options: OpenOptions,
    ) -> Result<(Hobj, String), ErrorCondition> {
        let conn = self.conn.ok_or_else(not_open)?;
        let od = if dynamic {
            let mut od = ObjectDescriptor::queue(TEMPORARY_MODEL)
                .map_err(|e| ErrorCondition::new(condition::INTERNAL_ERROR, e.to_string()))?;
            od.dynamic_q_name = FixedStr::truncating(TEMPORARY_NAME);
            od
        } else {
            let name = name.unwrap_or_default();
            ObjectDescriptor::queue(name).map_err(|e| {
                ErrorCondition::new(
                    condition::NOT_FOUND,
                    format!("'{name}' is not a valid queue name: {e}"),
                )
            })?
        };
        let what = if dynamic {
            "a temporary queue cannot be made".to_string()
        } else {
            format!("queue '{}' cannot be opened", name.unwrap_or_default())
        };
        self.server
            .with_engine(|e, now, fx| {
                e.open(conn, &od, options | OpenOptions::FAIL_IF_QUIESCING, now, fx)
            })
            .map(|o| (o.hobj, o.object_name.trim().to_string()))
            .map_err(|e| error_of(e.reason, &what))
    }

    pub(super) fn close_handle(&mut self, hobj: Hobj) {
        if let Some(conn) = self.conn {
            let _ = self
                .server
                .with_engine(|e, now, fx| e.close(conn, hobj, CloseOptions::empty(), now, fx));
        }
    }

    pub(super) fn on_attach(&mut self, link: LinkId, attach: &Attach) {
        match attach.role {
            Role::Sender => self.attach_inbound(link, attach),
            Role::Receiver => self.attach_outbound(link, attach),
        }
    }

    /// The client will send on `link`.
    pub(super) fn attach_inbound(&mut self, link: LinkId, attach: &Attach) {
        let target = match &attach.target {
            Some(LinkTarget::Node(t)) => t.clone(),
            Some(LinkTarget::Coordinator(_)) => return self.attach_coordinator(link, attach),
            None => {
                return self.refuse(
                    link,
                    ErrorCondition::new(condition::INVALID_FIELD, "the attach has no target"),
                )
            }
        };
        let address = target.address.as_ref().map_or("", |a| a.as_str());
        let (kind, bare) = Self::node(&target.capabilities, address);
        let topic = kind.is_topic();
        let opened = if target.dynamic && kind == NodeKind::TemporaryTopic {
            let name = self.new_temporary_topic();
            self.open_topic(&name).map(|h| (Some(h), name))
        } else if target.dynamic {
            self.open_queue(None, true, OpenOptions::OUTPUT)
                .map(|(h, name)| (Some(h), name))
        } else if target.address.is_none() {
            Ok((None, String::new()))
        } else if topic {
            self.open_topic(&bare).map(|h| (Some(h), bare))
        } else {
            self.open_queue(Some(&bare), false, OpenOptions::OUTPUT)
                .map(|(h, _)| (Some(h), bare))
        };
        let (hobj, address) = match opened {
            Ok(x) => x,
            Err(e) => return self.refuse(link, e),
        };
        let mut reply_target = target;
        if reply_target.dynamic {
            reply_target.address = Some(address.as_str().into());
        }
        self.links.insert(
            link,
            Link::Inbound {
                hobj,
                address,
                topic,
            },
        );
        let _ = self.amqp.attach_reply(
            link,
            attach.source.clone(),
            Some(LinkTarget::Node(reply_target)),
        );
        let _ = self.amqp.grant_credit(link, SENDER_CREDIT);
    }

    /// The client will receive on `link`.
    pub(super) fn attach_outbound(&mut self, link: LinkId, attach: &Attach) {
        let Some(conn) = self.conn else {
            return self.refuse(link, not_open());
        };
        let Some(source) = attach.source.clone() else {
            // JMS unsubscribe names a durable subscription by a link without a source.
            return self.attach_subscription_lookup(link, attach);
        };
        let browse = source
            .distribution_mode
            .as_ref()
            .is_some_and(|m| m.as_str() == "copy");
        let (mut selection, selector_entry) = match selector_of(&source) {
            Ok(s) => s,
            Err(e) => return self.refuse(link, e),
        };
        let address = source.address.as_ref().map_or("", |a| a.as_str());
        let (kind, bare) = Self::node(&source.capabilities, address);
        // A durable topic subscription's source asks for copies (Qpid JMS sets
        // distribution-mode copy): that is what a subscription gives, not a browse.
        let browse = browse && !kind.is_topic();
        let options = if browse {
            OpenOptions::BROWSE
        } else {
            OpenOptions::INPUT_SHARED
        };
        let mut subscription = None;
        let opened = if kind.is_topic() && !source.dynamic {
            let text = selector_entry
                .as_ref()
                .and_then(|(_, v)| match v {
                    Value::Described(d) => d.value.as_str().map(str::to_string),
                    _ => None,
                })
                .unwrap_or_default();
            // The subscription applies the selector as copies are made: the consumer on
            // its queue takes every message.
            let filter = selection
                .take()
                .map(|s| Rc::new(s) as Rc<dyn MessageFilter>);
            self.subscribe_link(attach, &source, &bare, filter, &text)
                .map(|(queue, hsub)| {
                    subscription = Some(hsub);
                    (queue, bare.clone())
                })
        } else {
            let name = (source.address.is_some()).then_some(bare.as_str());
            self.open_queue(name, source.dynamic, options)
        };
        let (hobj, name) = match opened {
            Ok(x) => x,
            Err(e) => return self.refuse(link, e),
        };
        let mode = if browse {
            ConsumeMode::Browse
        } else if attach.snd_settle_mode == SenderSettleMode::Settled {
            ConsumeMode::Settled
        } else {
            ConsumeMode::Unsettled
        };
        let mut spec = ConsumeSpec::new(mode);
        if let Some(sel) = &selection {
            spec.correl_id = sel.correlation_lookup();
            spec.msg_id = sel.message_lookup();
        }
        spec.filter = selection.map(|s| Rc::new(s) as Rc<dyn MessageFilter>);
        let consumer = match self
            .server
            .with_engine(|e, _now, _fx| e.consume(conn, hobj, spec))
        {
            Ok(c) => c,
            Err(e) => {
                self.close_handle(hobj);
                if let Some(hsub) = subscription {
                    self.close_subscription(hsub, false);
                }
                return self.refuse(link, error_of(e.reason, "the consumer cannot start"));
            }
        };
        let mut reply_source = source;
        if reply_source.dynamic {
            reply_source.address = Some(name.as_str().into());
        }
        // Echo only the filters applied (a client fails a consumer whose filter is
        // missing from the reply, rather than receive unfiltered messages): the selector,
        // and noLocal for a subscription.
        let no_local = subscription.and_then(|_| {
            reply_source
                .filter
                .iter()
                .find(|(k, _)| k.as_str() == "no-local")
                .cloned()
        });
        reply_source.filter = selector_entry.into_iter().chain(no_local).collect();
        let unsettled = default_outcome(reply_source.default_outcome.as_ref());
        self.links.insert(
            link,
            Link::Outbound {
                hobj,
                consumer,
                drain_requested: false,
                held: 0,
                unsettled,
                subscription,
            },
        );
        self.consumers.insert(consumer, link);
        self.has_consumed = true;
        let target = attach
            .target
            .clone()
            .or_else(|| Some(LinkTarget::Node(Target::default())));
        let _ = self.amqp.attach_reply(link, Some(reply_source), target);
    }

    /// The client's credit for a link we send on becomes the consumer's credit (at the
    /// end of the pass, see `sync_credits`).
    pub(super) fn on_flow(&mut self, link: LinkId, drain: bool) {
        let Some(Link::Outbound {
            drain_requested, ..
        }) = self.links.get_mut(&link)
        else {
            return;
        };
        if drain {
            *drain_requested = true;
            self.drains_pending = true;
        }
        self.credit_check = true;
    }

    /// The client detached `link` (`closed`: closed it), or the connection ends.
    pub(super) fn on_detach(&mut self, link: LinkId, closed: bool) {
        if self.coordinators.contains_key(&link) {
            return self.detach_coordinator(link);
        }
        let Some(l) = self.links.remove(&link) else {
            return;
        };
        match l {
            Link::Inbound { hobj, .. } => {
                if let Some(h) = hobj {
                    self.close_handle(h);
                }
            }
            Link::SubscriptionLookup { name } => self.subscription_lookup_ended(&name, closed),
            Link::Outbound {
                hobj,
                consumer,
                unsettled,
                subscription,
                ..
            } => {
                // Accepted deliveries of this link are applied first, so they are not
                // returned with the unsettled ones.
                self.flush_accepts();
                self.consumers.remove(&consumer);
                self.shared.forget_consumer(consumer);
                self.forget_deliveries(link);
                if let Some(conn) = self.conn {
                    let _ = self.server.with_engine(|e, now, fx| {
                        e.cancel_consumer(conn, consumer, unsettled, now, fx)
                    });
                }
                self.close_handle(hobj);
                if let Some(hsub) = subscription {
                    self.close_subscription(hsub, closed);
                }
            }
        }
    }
}
