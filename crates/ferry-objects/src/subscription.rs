//! Durable subscriptions as the catalogue keeps them: everything a subscription needs to
//! go on receiving copies after a restart (its topic, destination, selector text and how
//! its copies are marked). Non-durable subscriptions are never saved.

/// One durable subscription, saved in the catalogue.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DurableSubscription {
    /// SUB: the subscription's name, unique in the queue manager.
    pub name: String,
    /// SUBID: 24 bytes, fixed for the subscription's life.
    pub id: [u8; 24],
    /// TOPICSTR: the resolved topic string, wildcards included.
    pub topic_string: String,
    /// WSCHEMA(CHAR): character-based wildcards (else topic-based).
    pub character_wildcards: bool,
    /// DEST: the queue copies go to.
    pub destination: String,
    /// DESTCLAS(MANAGED): the queue manager made DEST and deletes it with the
    /// subscription.
    pub managed: bool,
    /// SELECTOR: the selector's text (empty: none).
    pub selector: String,
    /// USERDATA: given to copies as the MQSubUserData property.
    pub user_data: String,
    /// DESTCORL: the copies' CorrelId when set (otherwise the SUBID).
    pub correl_id: Option<[u8; 24]>,
    /// PUBPRTY: -3 as published, -1 as the queue's default, or 0-9.
    pub pub_priority: i32,
    /// SUBLEVEL.
    pub sub_level: i32,
    /// REQONLY(YES): copies only on MQSUBRQ.
    pub on_request: bool,
    /// VARUSER(ANY): another user may resume it.
    pub any_user: bool,
    /// SUBUSER.
    pub user_id: String,
    /// SUBTYPE(ADMIN): made by DEFINE SUB (else by MQSUB).
    pub administrative: bool,
    /// CRDATE/CRTIME, ms since the epoch.
    pub created_ms: u64,
    /// Shared by several consumers at once (JMS 2.0's shared durable subscriptions).
    #[serde(default)]
    pub shared: bool,
    /// JMS noLocal: no copies of publications from a connection that has it open.
    #[serde(default)]
    pub no_local: bool,
}
