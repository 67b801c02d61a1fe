//! JMS topics over AMQP: a link sending to a topic publishes (an output handle on the
//! topic); a link receiving from one is an MQ subscription whose managed queue an engine
//! consumer reads. Which subscription, from the link's name and source: see
//! [`crate::amqp_mapping::destination`].
//!
//! - A non-durable consumer makes an unnamed managed subscription, gone with its link.
//! - A durable one (source durable, expiry policy never) makes or resumes a durable
//!   subscription; detaching the link keeps it, closing the link removes it (Qpid JMS
//!   detaches durable consumers and closes only to unsubscribe).
//! - A shared one (JMS 2.0) is resumed by every consumer at once; each copy goes to one.
//! - A JMS subscription whose topic or selector changed is a new one: the old one, when
//!   no consumer has it open, is removed and made again (JMS 2.0 §8.1).
//! - JMS unsubscribe attaches a link with the subscription's name and no source: the reply
//!   has the subscription's source when it exists, and closing the link removes it; when
//!   it does not, the attach is refused (Qpid JMS raises InvalidDestinationException).

use super::*;
use crate::amqp_mapping::destination::{JmsSubscription, NodeKind};
use ferry_engine::SubscribeExtras;
use ferry_mqi::subscription::{SubscribeOptions, SubscriptionDescriptor};

/// Source filter key Qpid JMS sends for noLocal.
const NO_LOCAL_FILTER: &str = "no-local";

impl Session {
    /// Opens topic `topic` for publishing.
    pub(super) fn open_topic(&mut self, topic: &str) -> Result<Hobj, ErrorCondition> {
        let conn = self.conn.ok_or_else(not_open)?;
        let options = OpenOptions::OUTPUT | OpenOptions::FAIL_IF_QUIESCING;
        self.server
            .with_engine(|e, _now, _fx| e.open_topic(conn, "", topic, options, _fx))
            .map(|o| o.hobj)
            .map_err(|e| error_of(e.reason, &format!("topic '{topic}' cannot be published to")))
    }

    /// A fresh temporary topic's name (JMS TemporaryTopic): a topic string of its own.
    pub(super) fn new_temporary_topic(&mut self) -> String {
        self.temporary_topics += 1;
        let client = self.shared.client_id.borrow().clone().unwrap_or_default();
        crate::amqp_mapping::destination::temporary_topic(&client, self.temporary_topics)
            .as_str()
            .to_string()
    }

    /// The client will receive from topic `topic` on `link`: the subscription, then an
    /// engine consumer on its queue. Returns the handles (queue, subscription) or why not.
    pub(super) fn subscribe_link(
        &mut self,
        attach: &Attach,
        source: &Source,
        topic: &str,
        selection: Option<Rc<dyn MessageFilter>>,
        selector_text: &str,
    ) -> Result<(Hobj, Hobj), ErrorCondition> {
        let conn = self.conn.ok_or_else(not_open)?;
        let durable = source.durable != TerminusDurability::None
            && source.expiry_policy == ExpiryPolicy::Never;
        let client = self.shared.client_id.borrow().clone().unwrap_or_default();
        let jms = JmsSubscription::of(attach.name.as_str(), &client, durable, &source.capabilities);
        let no_local = source.filter.iter().any(|(k, _)| {
            k.as_str() == NO_LOCAL_FILTER || k.as_str().ends_with(":no-local-filter:list")
        });
        let mut options = SubscribeOptions::CREATE | SubscribeOptions::MANAGED;
        if jms.name.is_some() {
            options |= SubscribeOptions::RESUME;
        }
        if jms.durable {
            options |= SubscribeOptions::DURABLE;
        }
        let name = jms.name.clone().unwrap_or_default();
        if !name.is_empty() {
            self.replace_if_changed(conn, &name, topic, selector_text);
        }
        let sd = SubscriptionDescriptor {
            options,
            object_string: topic.to_string(),
            sub_name: name,
            selection_string: selector_text.to_string(),
            ..SubscriptionDescriptor::default()
        };
        let extras = SubscribeExtras {
            shared: jms.shared,
            no_local,
        };
        let subscribed = self
            .server
            .with_engine(|e, now, fx| e.subscribe_with(conn, &sd, None, selection, extras, now, fx))
            .map_err(|e| {
                error_of(
                    e.reason,
                    &format!("topic '{topic}' cannot be subscribed to"),
                )
            })?;
        let Some(queue) = subscribed.hobj else {
            self.close_subscription(subscribed.hsub, true);
            return Err(ErrorCondition::new(
                condition::INTERNAL_ERROR,
                "a managed subscription came without its queue",
            ));
        };
        Ok((queue, subscribed.hsub))
    }

    /// A JMS durable (or shared) subscription resumed with another topic or selector is
    /// a new subscription: the old one goes first, when no consumer has it open (when
    /// one does, the resume that follows fails as JMS wants).
    fn replace_if_changed(&mut self, conn: ConnId, name: &str, topic: &str, selector: &str) {
        let _ = conn;
        self.server.with_engine(|e, now, fx| {
            let Some(status) = e.subscription_status(name) else {
                return;
            };
            let changed = status.topic_string != topic || status.selector != selector;
            if changed && status.active_connection.is_none() {
                let _ = e.delete_subscription(name, now, fx);
            }
        });
    }

    /// Ends a topic receiver link's subscription handle: `remove` (the link was closed)
    /// removes a durable subscription; a non-durable one ends either way.
    pub(super) fn close_subscription(&mut self, hsub: Hobj, remove: bool) {
        let Some(conn) = self.conn else {
            return;
        };
        let durable = self
            .server
            .with_engine(|e, _now, _fx| e.subscription_is_durable(conn, hsub));
        let options = match (durable, remove) {
            (true, true) => CloseOptions::REMOVE_SUB,
            (true, false) => CloseOptions::KEEP_SUB,
            (false, _) => CloseOptions::empty(),
        };
        let _ = self
            .server
            .with_engine(|e, now, fx| e.close(conn, hsub, options, now, fx));
    }

    /// JMS unsubscribe: a receiver link with no source names a durable subscription.
    /// The reply carries its source when it exists (closing the link then removes it);
    /// otherwise the attach is refused.
    pub(super) fn attach_subscription_lookup(&mut self, link: LinkId, attach: &Attach) {
        let client = self.shared.client_id.borrow().clone().unwrap_or_default();
        let candidates = JmsSubscription::unsubscribe_candidates(
            attach.name.as_str(),
            &client,
            &attach.desired_capabilities,
        );
        let found = self.server.with_engine(|e, _now, _fx| {
            candidates
                .iter()
                .find_map(|name| e.subscription_status(name).map(|s| (name.clone(), s)))
        });
        let Some((name, status)) = found else {
            return self.refuse(
                link,
                ErrorCondition::new(
                    condition::NOT_FOUND,
                    format!("no durable subscription '{}'", attach.name.as_str()),
                ),
            );
        };
        if status.active_connection.is_some() {
            return self.refuse(
                link,
                ErrorCondition::new(
                    condition::RESOURCE_LOCKED,
                    format!(
                        "durable subscription '{}' has an active consumer",
                        attach.name.as_str()
                    ),
                ),
            );
        }
        let mut capabilities = vec![Symbol::from_static("topic")];
        if status.shared {
            capabilities.push(Symbol::from_static("shared"));
        }
        let source = Source {
            address: Some(status.topic_string.as_str().into()),
            durable: TerminusDurability::UnsettledState,
            expiry_policy: ExpiryPolicy::Never,
            capabilities,
            ..Source::default()
        };
        self.links.insert(link, Link::SubscriptionLookup { name });
        let target = attach
            .target
            .clone()
            .or_else(|| Some(LinkTarget::Node(Target::default())));
        let _ = self.amqp.attach_reply(link, Some(source), target);
    }

    /// The unsubscribe link closed: the subscription goes.
    pub(super) fn subscription_lookup_ended(&mut self, name: &str, closed: bool) {
        if !closed {
            return;
        }
        let _ = self
            .server
            .with_engine(|e, now, fx| e.delete_subscription(name, now, fx));
    }

    /// The kind and bare address a terminus names.
    pub(super) fn node(capabilities: &[Symbol], address: &str) -> (NodeKind, String) {
        let (kind, bare) = crate::amqp_mapping::destination::node_of(capabilities, address);
        (kind, bare.to_string())
    }
}
