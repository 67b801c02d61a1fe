//! The queue manager's subscriptions: what each wants, where its copies go, who has it
//! open, and the index a publication finds them by.
//!
//! A subscription has three names: its key (the engine's number, for handles and the
//! index), its SubId (24 bytes, unique in the queue manager and across restarts, what
//! MQ shows as SUBID and puts in copies' CorrelId by default) and its SubName (given by
//! the application; durable subscriptions need one, and are found by it on RESUME).

use crate::clock::Timestamp;
use crate::connection::{ConnId, Hobj};
use crate::qmgr::QueueManager;
use crate::selection::SharedFilter;
use ferry_objects::DurableSubscription;
use ferry_pubsub::{SubscriptionIndex, TopicFilter, WildcardScheme};
use std::collections::{BTreeMap, HashMap};

/// A subscription's number inside the engine: handles and the index refer to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct SubKey(pub u64);

/// MQ's SubId: 24 bytes, shown as 48 hex digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SubscriptionId(pub [u8; 24]);

impl std::fmt::Display for SubscriptionId {
    /// As DISPLAY SUB shows SUBID: 48 upper-case hex digits.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02X}"))
    }
}

/// Who made the subscription (MQSUBTYPE).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubscriptionType {
    /// MQSUB (MQSUBTYPE_API).
    Api,
    /// DEFINE SUB (MQSUBTYPE_ADMIN).
    Admin,
}

/// One subscription.
#[derive(Clone, Debug)]
pub(crate) struct Subscription {
    /// SubId.
    pub id: SubscriptionId,
    /// SubName (blank for an unnamed non-durable subscription).
    pub name: String,
    /// The resolved topic string, wildcards included (what the filter matches).
    pub topic_string: String,
    /// The wildcard scheme the topic string is read with.
    pub scheme: WildcardScheme,
    /// The subscription outlives its connection.
    pub durable: bool,
    /// The queue its copies go to.
    pub destination: String,
    /// The queue manager made the destination (from MDURMDL/MNDURMDL) and deletes it
    /// with the subscription.
    pub managed: bool,
    /// The selector's text and compiled form, when there is one.
    pub selector: Option<(String, SharedFilter)>,
    /// SubUserData, given to copies as MQSubUserData.
    pub user_data: String,
    /// MQSO_SET_CORREL_ID's SubCorrelId (otherwise copies carry the SubId).
    pub correl_id: Option<[u8; 24]>,
    /// PubPriority.
    pub pub_priority: i32,
    /// SubLevel.
    pub sub_level: i32,
    /// MQSO_PUBLICATIONS_ON_REQUEST: copies only on MQSUBRQ.
    pub on_request: bool,
    /// MQSO_ANY_USERID: another user may resume it.
    pub any_user: bool,
    /// The user it belongs to (SUBUSER); copies carry it as UserIdentifier.
    pub user_id: String,
    /// Who made it.
    pub kind: SubscriptionType,
    /// The handles that have it open: at most one, but for a shared subscription (JMS
    /// 2.0's), which every consumer has open at once and which shares its copies.
    pub open_by: Vec<(ConnId, Hobj)>,
    /// A shared subscription (JMS 2.0 createSharedConsumer / createSharedDurableConsumer).
    pub shared: bool,
    /// JMS noLocal: copies of publications made on a connection that has the
    /// subscription open are not sent.
    pub no_local: bool,
    /// When it was made.
    pub created: Timestamp,
    /// When an MQSUB last made or resumed it.
    pub resumed: Timestamp,
    /// When it last received a copy.
    pub last_message: Option<Timestamp>,
    /// Copies it has received since the queue manager started.
    pub messages: u64,
    /// The rest of the SUB attributes (TOPICOBJ, EXPIRY, PSPROP...: kept and shown).
    pub details: ferry_objects::SubscriptionDetails,
}

impl Subscription {
    /// True once its SubExpiry (EXPIRY, tenths of a second from its creation) has
    /// passed: it receives no more copies, and goes when no handle has it open.
    pub fn expired(&self, now: Timestamp) -> bool {
        self.expires_at().is_some_and(|at| now.0 >= at)
    }

    /// When it expires (ms), if it does.
    pub fn expires_at(&self) -> Option<u64> {
        (self.details.expiry > 0).then(|| {
            self.created
                .0
                .saturating_add(self.details.expiry as u64 * 100)
        })
    }

    /// What DISPLAY SBSTATUS shows of it.
    pub fn status(&self) -> SubscriptionStatus {
        SubscriptionStatus {
            id: self.id,
            name: self.name.clone(),
            topic_string: self.topic_string.clone(),
            destination: self.destination.clone(),
            durable: self.durable,
            kind: self.kind,
            user_id: self.user_id.clone(),
            active_connection: self.open_by.first().map(|(c, _)| *c),
            messages: self.messages,
            last_message: self.last_message,
            resumed: self.resumed,
            created: self.created,
            shared: self.shared,
            selector: self
                .selector
                .as_ref()
                .map(|(text, _)| text.clone())
                .unwrap_or_default(),
        }
    }

    /// The subscription as the catalogue keeps it.
    pub fn record(&self) -> DurableSubscription {
        DurableSubscription {
            name: self.name.clone(),
            id: self.id.0,
            topic_string: self.topic_string.clone(),
            character_wildcards: self.scheme == WildcardScheme::Character,
            destination: self.destination.clone(),
            managed: self.managed,
            selector: self
                .selector
                .as_ref()
                .map(|(text, _)| text.clone())
                .unwrap_or_default(),
            user_data: self.user_data.clone(),
            correl_id: self.correl_id,
            pub_priority: self.pub_priority,
            sub_level: self.sub_level,
            on_request: self.on_request,
            any_user: self.any_user,
            user_id: self.user_id.clone(),
            administrative: self.kind == SubscriptionType::Admin,
            shared: self.shared,
            no_local: self.no_local,
            created_ms: self.created.0,
            details: self.details.clone(),
        }
    }

    /// The CorrelId its copies of a publication with CorrelId `published` carry: the
    /// SubId, or with MQSO_SET_CORREL_ID the SubCorrelId, or (SubCorrelId MQCI_NONE) the
    /// publication's own, as MQ documents.
    pub fn copy_correl_id(&self, published: &[u8; 24]) -> [u8; 24] {
        match self.correl_id {
            None => self.id.0,
            Some(c) if c == ferry_mqi::descriptor::NONE_ID => *published,
            Some(c) => c,
        }
    }
}

/// What DISPLAY SBSTATUS and TPSTATUS TYPE(SUB) show of one subscription.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubscriptionStatus {
    /// SUBID.
    pub id: SubscriptionId,
    /// SUB (blank when unnamed).
    pub name: String,
    /// TOPICSTR.
    pub topic_string: String,
    /// DEST.
    pub destination: String,
    /// DURABLE.
    pub durable: bool,
    /// SUBTYPE.
    pub kind: SubscriptionType,
    /// SUBUSER.
    pub user_id: String,
    /// ACTCONN: the connection that has it open.
    pub active_connection: Option<ConnId>,
    /// NUMMSGS.
    pub messages: u64,
    /// LMSGDATE/LMSGTIME.
    pub last_message: Option<Timestamp>,
    /// RESMDATE/RESMTIME.
    pub resumed: Timestamp,
    /// CRDATE/CRTIME.
    pub created: Timestamp,
    /// Shared by several consumers (JMS 2.0).
    pub shared: bool,
    /// SELECTOR (empty: none).
    pub selector: String,
}

/// Every subscription, by key, by SubName and by what it matches.
#[derive(Debug, Default)]
pub(crate) struct SubscriptionTable {
    subs: BTreeMap<SubKey, Subscription>,
    by_name: HashMap<String, SubKey>,
    pub index: SubscriptionIndex<SubKey>,
    next_key: u64,
    /// How many subscriptions have an expiry.
    expiring: usize,
}

impl SubscriptionTable {
    /// Adds `sub`; the caller has checked its name is free.
    pub fn insert(&mut self, sub: Subscription) -> SubKey {
        debug_assert!(sub.name.is_empty() || !self.by_name.contains_key(&sub.name));
        self.next_key += 1;
        let key = SubKey(self.next_key);
        if !sub.name.is_empty() {
            self.by_name.insert(sub.name.clone(), key);
        }
        let filter = TopicFilter::new(&sub.topic_string, sub.scheme);
        let filed = self.index.insert(key, filter);
        debug_assert!(filed, "a fresh key is not in the index");
        self.expiring += usize::from(sub.expires_at().is_some());
        self.subs.insert(key, sub);
        debug_assert_eq!(self.subs.len(), self.index.len());
        key
    }

    /// Removes subscription `key`.
    pub fn remove(&mut self, key: SubKey) -> Option<Subscription> {
        let sub = self.subs.remove(&key)?;
        self.expiring -= usize::from(sub.expires_at().is_some());
        if self.by_name.get(&sub.name) == Some(&key) {
            self.by_name.remove(&sub.name);
        }
        self.index.remove(key);
        debug_assert_eq!(self.subs.len(), self.index.len());
        Some(sub)
    }

    /// The subscription `key`.
    pub fn get(&self, key: SubKey) -> Option<&Subscription> {
        self.subs.get(&key)
    }

    /// The subscription `key`, to change.
    pub fn get_mut(&mut self, key: SubKey) -> Option<&mut Subscription> {
        self.subs.get_mut(&key)
    }

    /// The subscription named `name`.
    pub fn by_name(&self, name: &str) -> Option<SubKey> {
        self.by_name.get(name).copied()
    }

    /// Every subscription, in the order they were made.
    pub fn iter(&self) -> impl Iterator<Item = (SubKey, &Subscription)> {
        self.subs.iter().map(|(k, s)| (*k, s))
    }

    /// The subscriptions past their expiry that no handle has open.
    pub fn expired(&self, now: Timestamp) -> Vec<SubKey> {
        self.subs
            .iter()
            .filter(|(_, s)| s.open_by.is_empty() && s.expired(now))
            .map(|(k, _)| *k)
            .collect()
    }

    /// True when some subscription has an expiry (the sweep is not needed otherwise).
    pub fn any_expire(&self) -> bool {
        self.expiring > 0
    }

    /// Counts again the subscriptions with an expiry, after one's EXPIRY changed.
    pub fn recount_expiring(&mut self) {
        self.expiring = self
            .subs
            .values()
            .filter(|s| s.expires_at().is_some())
            .count();
    }

    /// Counts copies delivered to `key` at `now`.
    pub fn delivered(&mut self, key: SubKey, now: Timestamp) {
        if let Some(s) = self.subs.get_mut(&key) {
            s.messages += 1;
            s.last_message = Some(now);
        }
    }
}

impl QueueManager {
    /// The durable subscription named `name` as the catalogue keeps it.
    pub fn durable_subscription(&self, name: &str) -> Option<DurableSubscription> {
        let sub = self.subscriptions.get(self.subscriptions.by_name(name)?)?;
        sub.durable.then(|| sub.record())
    }

    /// Every durable subscription as the catalogue keeps them, sorted by name.
    pub fn durable_subscriptions(&self) -> Vec<DurableSubscription> {
        let mut saved: Vec<DurableSubscription> = self
            .subscriptions
            .iter()
            .filter(|(_, s)| s.durable)
            .map(|(_, s)| s.record())
            .collect();
        saved.sort_by(|a, b| a.name.cmp(&b.name));
        saved
    }

    /// Restores durable subscriptions saved in the catalogue, after `from_catalogue` and
    /// before any connection. `compile` turns a selector's text into its filter; a
    /// subscription whose selector no longer compiles, or whose name is taken, is
    /// skipped and returned, for the server to report.
    pub fn restore_subscriptions(
        &mut self,
        saved: Vec<DurableSubscription>,
        compile: &dyn Fn(&str) -> Option<std::rc::Rc<dyn crate::MessageFilter>>,
        now: Timestamp,
    ) -> Vec<DurableSubscription> {
        self.debug_check();
        let mut skipped = Vec::new();
        for d in saved {
            let selector = if d.selector.is_empty() {
                None
            } else {
                match compile(&d.selector) {
                    Some(f) => Some((d.selector.clone(), SharedFilter(f))),
                    None => {
                        skipped.push(d);
                        continue;
                    }
                }
            };
            if self.subscriptions.by_name(&d.name).is_some() {
                skipped.push(d);
                continue;
            }
            self.subscriptions.insert(Subscription {
                id: SubscriptionId(d.id),
                name: d.name,
                topic_string: d.topic_string,
                scheme: if d.character_wildcards {
                    WildcardScheme::Character
                } else {
                    WildcardScheme::Topic
                },
                durable: true,
                destination: d.destination,
                managed: d.managed,
                selector,
                user_data: d.user_data,
                correl_id: d.correl_id,
                pub_priority: d.pub_priority,
                sub_level: d.sub_level,
                on_request: d.on_request,
                any_user: d.any_user,
                user_id: d.user_id,
                kind: if d.administrative {
                    SubscriptionType::Admin
                } else {
                    SubscriptionType::Api
                },
                open_by: Vec::new(),
                shared: d.shared,
                no_local: d.no_local,
                created: Timestamp(d.created_ms),
                resumed: now,
                last_message: None,
                messages: 0,
                details: d.details,
            });
        }
        self.debug_check();
        skipped
    }

    /// Every subscription's status (DISPLAY SBSTATUS, DISPLAY SUB), in the order they
    /// were made.
    pub fn subscription_statuses(&self) -> Vec<SubscriptionStatus> {
        self.subscriptions.iter().map(|(_, s)| s.status()).collect()
    }
}
