//! What MQSC commands act on: the queue manager's objects and status, behind a trait.
//!
//! The executor works out the complete definition a DEFINE or ALTER asks for (defaults,
//! LIKE, REPLACE, the changed attributes, CRDATE/ALTDATE) and hands it over whole; the
//! target (the running queue manager) only stores, checks in-use rules and reports status.

use crate::command::{NamePattern, SecurityRefresh};
use ferry_objects::channel::ChannelOperation;
use ferry_objects::status::{
    ChannelStatus, ConnectionStatus, HandleStatus, ListenerStatus, PubSubStatus, PublisherStatus,
    QmgrStatus, QueueStatus, SubscriptionStatusRecord, TopicNodeStatus,
};
use ferry_objects::{
    AdminError, ChannelDefinition, ListenerDefinition, QmgrAttributes, QueueDefinition, StopMode,
};
use ferry_objects::{
    AuthInfoDefinition, NamelistDefinition, SubscriptionDefinition, TopicDefinition,
};
use ferry_security::chlauth::{ChlauthRecord, ChlauthRules, SetAction};
use ferry_security::oam::{Authorities, AuthorityRecords, Principal, ProfileObjectType, RecordKey};

/// The queue manager as MQSC sees it.
pub trait AdminTarget {
    /// The queue manager's name.
    fn qmgr_name(&self) -> String;
    /// REFRESH SECURITY: reads again what `what` names; says what it loaded.
    fn refresh_security(&mut self, what: SecurityRefresh) -> Result<String, AdminError>;
    /// An authentication information object by exact name.
    fn authinfo(&self, name: &str) -> Option<AuthInfoDefinition>;
    /// Every authentication information object, sorted by name.
    fn authinfos(&self) -> Vec<AuthInfoDefinition>;
    /// Stores a new AUTHINFO object (or replaces one of the same AUTHTYPE).
    fn define_authinfo(&mut self, def: AuthInfoDefinition, replace: bool)
        -> Result<(), AdminError>;
    /// Replaces an AUTHINFO object's attributes.
    fn alter_authinfo(&mut self, def: AuthInfoDefinition) -> Result<(), AdminError>;
    /// Deletes an AUTHINFO object (refused while QMGR CONNAUTH names it).
    fn delete_authinfo(&mut self, name: &str) -> Result<(), AdminError>;
    /// A process definition by exact name.
    fn process(&self, name: &str) -> Option<ferry_objects::ProcessDefinition>;
    /// Every process definition, sorted by name.
    fn processes(&self) -> Vec<ferry_objects::ProcessDefinition>;
    /// Stores a new process definition (or with `replace` replaces one).
    fn define_process(
        &mut self,
        def: ferry_objects::ProcessDefinition,
        replace: bool,
    ) -> Result<(), AdminError>;
    /// Replaces a process definition's attributes.
    fn alter_process(&mut self, def: ferry_objects::ProcessDefinition) -> Result<(), AdminError>;
    /// Deletes a process definition.
    fn delete_process(&mut self, name: &str) -> Result<(), AdminError>;
    /// A namelist by exact name.
    fn namelist(&self, name: &str) -> Option<NamelistDefinition>;
    /// Every namelist, sorted by name.
    fn namelists(&self) -> Vec<NamelistDefinition>;
    /// Stores a new namelist (or with `replace` replaces one).
    fn define_namelist(&mut self, def: NamelistDefinition, replace: bool)
        -> Result<(), AdminError>;
    /// Replaces a namelist's attributes.
    fn alter_namelist(&mut self, def: NamelistDefinition) -> Result<(), AdminError>;
    /// Deletes a namelist.
    fn delete_namelist(&mut self, name: &str) -> Result<(), AdminError>;
    /// A topic object by exact name.
    fn topic(&self, name: &str) -> Option<TopicDefinition>;
    /// Every topic object, sorted by name.
    fn topics(&self) -> Vec<TopicDefinition>;
    /// Stores a new topic object (or with `replace` replaces one, its TOPICSTR unchanged);
    /// refuses a blank TOPICSTR (but for the shipped objects) and one another topic
    /// object has.
    fn define_topic(&mut self, def: TopicDefinition, replace: bool) -> Result<(), AdminError>;
    /// Replaces a topic object's attributes (its TOPICSTR unchanged).
    fn alter_topic(&mut self, def: TopicDefinition) -> Result<(), AdminError>;
    /// Deletes a topic object (SYSTEM.BASE.TOPIC included).
    fn delete_topic(&mut self, name: &str) -> Result<(), AdminError>;
    /// A subscription by exact name (every attribute of the SUB table).
    fn subscription(&self, name: &str) -> Option<SubscriptionDefinition>;
    /// Every subscription, sorted by name (unnamed non-durable ones first), then SUBID.
    fn subscriptions(&self) -> Vec<SubscriptionDefinition>;
    /// DEFINE SUB: makes the administrative durable subscription `def` (with `replace`,
    /// alters the existing one of that name to it). The target compiles SELECTOR
    /// (2459 when it does not compile), resolves TOPICOBJ and TOPICSTR, checks DEST, and
    /// fills a blank SUBUSER with the user who issued the command.
    fn define_subscription(
        &mut self,
        def: SubscriptionDefinition,
        replace: bool,
    ) -> Result<(), AdminError>;
    /// ALTER SUB: gives the subscription `def.name` the attributes of `def` (only those
    /// ALTER may change may differ).
    fn alter_subscription(&mut self, def: SubscriptionDefinition) -> Result<(), AdminError>;
    /// DELETE SUB: removes the subscription with SUBID `sub_id` (48 hex digits) and its
    /// managed queue (InUse while a handle has it open).
    fn delete_subscription(&mut self, sub_id: &str) -> Result<(), AdminError>;
    /// Every subscription's status (SBSTATUS, TPSTATUS TYPE(SUB)), sorted as
    /// `subscriptions`.
    fn subscription_statuses(&self) -> Vec<SubscriptionStatusRecord>;
    /// The nodes of the topic tree `pattern` selects (`#` and `+`; `#`: every node),
    /// sorted by topic string.
    fn topic_statuses(&self, pattern: &str) -> Vec<TopicNodeStatus>;
    /// The handles open for publishing on the nodes `pattern` selects.
    fn publisher_statuses(&self, pattern: &str) -> Vec<PublisherStatus>;
    /// DISPLAY PUBSUB: subscriptions and nodes.
    fn pubsub_status(&self) -> PubSubStatus;
    /// CLEAR TOPICSTR CLRTYPE(RETAINED): forgets `topic`'s retained publication; whether
    /// there was one.
    fn clear_retained(&mut self, topic: &str) -> Result<bool, AdminError>;
    /// The channel authentication records.
    fn chlauth(&self) -> ChlauthRules;
    /// SET CHLAUTH: adds, replaces or removes records (the target stamps ALTDATE).
    fn set_chlauth(&mut self, record: ChlauthRecord, action: SetAction) -> Result<(), AdminError>;
    /// The authority records.
    fn authority_records(&self) -> AuthorityRecords;
    /// SET AUTHREC: adds, then removes, authorities on a record (made when missing);
    /// refused 2292 MQRC_UNKNOWN_ENTITY for a user or group the queue manager does not
    /// know. Returns what the record now holds.
    fn set_authority_record(
        &mut self,
        key: RecordKey,
        add: Authorities,
        remove: Authorities,
    ) -> Result<Authorities, AdminError>;
    /// DELETE AUTHREC (2085 when there is no such record).
    fn delete_authority_record(&mut self, key: RecordKey) -> Result<(), AdminError>;
    /// Who `user` is for authority checks: its groups, whether it administers.
    fn principal(&self, user: &str) -> Principal;
    /// What `principal` may do to object `name` of `object_type`.
    fn authority_of(
        &self,
        object_type: ProfileObjectType,
        name: &str,
        principal: &Principal,
    ) -> Authorities;
    /// Whether `user` is an administrator of the queue manager (BLOCKUSER's `*MQADMIN`).
    fn is_privileged(&self, user: &str) -> bool;
    /// Now, in ms since the Unix epoch (for CRDATE/ALTDATE and ages).
    fn now_ms(&self) -> u64;

    /// A queue definition of any type, by exact name.
    fn queue(&self, name: &str) -> Option<QueueDefinition>;
    /// All queue definitions, sorted by name (temporary dynamic queues included).
    fn queues(&self) -> Vec<QueueDefinition>;
    /// Creates a queue, or replaces one of the same type when `replace`.
    fn define_queue(&mut self, def: QueueDefinition, replace: bool) -> Result<(), AdminError>;
    /// Replaces an existing queue's attributes (`force`: even while open).
    fn alter_queue(&mut self, def: QueueDefinition, force: bool) -> Result<(), AdminError>;
    /// Deletes a queue; a local queue with messages needs `purge`.
    fn delete_queue(&mut self, name: &str, purge: bool) -> Result<(), AdminError>;
    /// Removes every committed message of a local queue; returns how many.
    fn clear_queue(&mut self, name: &str) -> Result<u64, AdminError>;
    /// Live state of a local queue.
    fn queue_status(&self, name: &str) -> Option<QueueStatus>;
    /// Open handles on a queue.
    fn handle_status(&self, name: &str) -> Vec<HandleStatus>;

    /// A channel by exact name.
    fn channel(&self, name: &str) -> Option<ChannelDefinition>;
    /// All channels, sorted by name.
    fn channels(&self) -> Vec<ChannelDefinition>;
    /// Creates a channel, or replaces one when `replace`.
    fn define_channel(&mut self, def: ChannelDefinition, replace: bool) -> Result<(), AdminError>;
    /// Replaces an existing channel's attributes.
    fn alter_channel(&mut self, def: ChannelDefinition) -> Result<(), AdminError>;
    /// Deletes a channel (refused with `InUse` while it runs or has connections).
    fn delete_channel(&mut self, name: &str) -> Result<(), AdminError>;
    /// Starts an AMQP channel: binds LOCLADDR/PORT and accepts AMQP connections. The
    /// executor has already checked that the channel exists, is of a type that starts
    /// ([`ferry_objects::ChannelType::can_start`]) and asks for no TLS.
    fn start_channel(&mut self, name: &str) -> Result<(), AdminError>;
    /// Stops a running AMQP channel: stops listening and ends its connections as `mode`
    /// says; its status record stays, STOPPED, until the channel starts again.
    fn stop_channel(&mut self, name: &str, mode: StopMode) -> Result<(), AdminError>;
    /// PING, RESET or RESOLVE CHANNEL `name` (a sending channel: the executor has
    /// checked, [`crate::check_channel_operation`]), done before it returns. The queue
    /// manager's command server does this work asynchronously, answering once it is done,
    /// so it takes these commands before they reach the executor; the default refuses.
    fn operate_channel(
        &mut self,
        name: &str,
        operation: ChannelOperation,
    ) -> Result<(), AdminError> {
        let _ = name;
        Err(AdminError::Invalid(format!(
            "{} CHANNEL needs a running queue manager",
            operation.verb()
        )))
    }
    /// Status records of the channels whose names match `name` (started channels only:
    /// a channel never started has none), sorted by name.
    fn channel_status(&self, name: &NamePattern) -> Vec<ChannelStatus>;

    /// A listener by exact name.
    fn listener(&self, name: &str) -> Option<ListenerDefinition>;
    /// All listeners, sorted by name.
    fn listeners(&self) -> Vec<ListenerDefinition>;
    /// Creates a listener, or replaces one when `replace`.
    fn define_listener(&mut self, def: ListenerDefinition, replace: bool)
        -> Result<(), AdminError>;
    /// Replaces an existing listener's attributes.
    fn alter_listener(&mut self, def: ListenerDefinition) -> Result<(), AdminError>;
    /// Deletes a stopped listener.
    fn delete_listener(&mut self, name: &str) -> Result<(), AdminError>;
    /// Starts a listener (binds its port).
    fn start_listener(&mut self, name: &str) -> Result<(), AdminError>;
    /// Stops a listener (existing connections stay).
    fn stop_listener(&mut self, name: &str) -> Result<(), AdminError>;
    /// Whether and where a listener runs.
    fn listener_status(&self, name: &str) -> Option<ListenerStatus>;

    /// DISPLAY CLUSQMGR: the cluster queue managers this queue manager knows (none by
    /// default: a target without clusters).
    fn cluster_qmgrs(&self) -> Vec<ferry_objects::status::ClusterQmgrStatus> {
        Vec::new()
    }
    /// DISPLAY QCLUSTER: the cluster queue instances this queue manager knows.
    fn cluster_queues(&self) -> Vec<ferry_objects::status::ClusterQueueStatus> {
        Vec::new()
    }
    /// REFRESH CLUSTER(`cluster`) REPOS(NO).
    fn refresh_cluster(&mut self, cluster: &str) -> Result<(), AdminError> {
        Err(AdminError::Invalid(format!(
            "this queue manager does not belong to cluster {cluster}"
        )))
    }
    /// RESET CLUSTER(`cluster`) ACTION(FORCEREMOVE) QMNAME(`qmgr`).
    /// RESET QMGR TYPE(STATISTICS): ends the statistics interval now, its statistics
    /// messages written.
    fn reset_statistics(&mut self) -> Result<(), AdminError> {
        Err(AdminError::Invalid(
            "this queue manager writes no statistics messages".into(),
        ))
    }
    fn reset_cluster(&mut self, cluster: &str, qmgr: &str) -> Result<(), AdminError> {
        let _ = qmgr;
        Err(AdminError::Invalid(format!(
            "this queue manager is not a full repository of cluster {cluster}"
        )))
    }
    /// SUSPEND (`suspend`) or RESUME QMGR CLUSTER(`cluster`).
    fn suspend_cluster(&mut self, cluster: &str, suspend: bool) -> Result<(), AdminError> {
        let _ = suspend;
        Err(AdminError::Invalid(format!(
            "this queue manager has no cluster-receiver channel in cluster {cluster}"
        )))
    }

    /// The queue manager's attributes.
    fn qmgr(&self) -> QmgrAttributes;
    /// Replaces the queue manager's attributes.
    fn alter_qmgr(&mut self, attrs: QmgrAttributes) -> Result<(), AdminError>;
    /// Connected applications.
    fn connections(&self) -> Vec<ConnectionStatus>;
    /// DISPLAY QMSTATUS: the running queue manager and its recovery log.
    fn qmgr_status(&self) -> QmgrStatus;
}
