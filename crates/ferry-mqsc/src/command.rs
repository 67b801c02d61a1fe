//! The command model: what a parsed MQSC command asks for.
//!
//! Attribute values in a [`Command`] are already checked against the ferry-objects
//! attribute tables; a [`Setting`] names its row by the row's canonical keyword. Names
//! are validated; DISPLAY names may be generic ([`NamePattern`]).

use ferry_objects::channel::{ChannelOperation, ChannelType, StopMode};
use ferry_objects::queue::QueueType;
use ferry_objects::AttrValue;

/// One attribute to set: the table row's keyword and a value that passed the row's check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    /// The row's canonical keyword (for flags, the "on" keyword, e.g. SHARE).
    pub keyword: &'static str,
    /// The checked value.
    pub value: AttrValue,
}

/// A name, or on DISPLAY a generic name ending in `*`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NamePattern {
    /// An exact name.
    Exact(String),
    /// Every name starting with the prefix (`*` alone: the empty prefix).
    Prefix(String),
}

impl NamePattern {
    /// Whether `name` matches.
    pub fn matches(&self, name: &str) -> bool {
        match self {
            NamePattern::Exact(n) => n == name,
            NamePattern::Prefix(p) => name.starts_with(p.as_str()),
        }
    }

    /// The pattern as typed (`APP.*`).
    pub fn text(&self) -> String {
        match self {
            NamePattern::Exact(n) => n.clone(),
            NamePattern::Prefix(p) => format!("{p}*"),
        }
    }

    /// True for generic patterns.
    pub fn is_generic(&self) -> bool {
        matches!(self, NamePattern::Prefix(_))
    }
}

/// Which attributes a DISPLAY asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// ALL was given (or implied).
    pub all: bool,
    /// Canonical keywords asked for by name.
    pub keywords: Vec<&'static str>,
}

impl Request {
    /// Whether the attribute with canonical keyword `kw` is to be shown.
    pub fn wants(&self, kw: &str) -> bool {
        self.all || self.keywords.contains(&kw)
    }
}

/// A WHERE operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// LT
    Lt,
    /// GT
    Gt,
    /// EQ
    Eq,
    /// NE
    Ne,
    /// LE
    Le,
    /// GE
    Ge,
    /// LK: matches a generic value ending in `*`.
    Lk,
    /// NL: does not match a generic value.
    Nl,
    /// CT: contains (text: substring).
    Ct,
    /// EX: excludes (text: no substring).
    Ex,
}

impl Op {
    /// All operators with their keywords.
    pub const ALL: &'static [(&'static str, Op)] = &[
        ("LT", Op::Lt),
        ("GT", Op::Gt),
        ("EQ", Op::Eq),
        ("NE", Op::Ne),
        ("LE", Op::Le),
        ("GE", Op::Ge),
        ("LK", Op::Lk),
        ("NL", Op::Nl),
        ("CT", Op::Ct),
        ("EX", Op::Ex),
    ];

    /// The operator for a keyword.
    pub fn from_keyword(kw: &str) -> Option<Op> {
        Op::ALL.iter().find(|(k, _)| *k == kw).map(|(_, op)| *op)
    }

    /// The operator's keyword.
    pub fn keyword(self) -> &'static str {
        Op::ALL
            .iter()
            .find(|(_, op)| *op == self)
            .map(|(k, _)| *k)
            .unwrap_or("EQ")
    }
}

/// The value a WHERE compares with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FilterValue {
    /// A number, for numeric attributes.
    Int(i64),
    /// Text or a keyword (keywords upper case); for LK/NL a trailing `*` is generic.
    Text(String),
    /// For flag attributes: the on (true) or off keyword.
    Flag(bool),
}

/// `WHERE(keyword op value)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    /// The canonical keyword filtered on.
    pub keyword: &'static str,
    /// The operator.
    pub op: Op,
    /// The value.
    pub value: FilterValue,
}

/// DISPLAY QSTATUS TYPE(...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueStatusType {
    /// TYPE(QUEUE), the default: one record per queue.
    Queue,
    /// TYPE(HANDLE): one record per open handle.
    Handle,
}

/// DISPLAY CONN TYPE(...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnType {
    /// TYPE(CONN), the default: connection records.
    Conn,
    /// TYPE(HANDLE): one record per object a connection has open.
    Handle,
    /// TYPE(ALL): both.
    All,
}

/// A DISPLAY's selection: which objects, which attributes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    /// Name or generic name.
    pub name: NamePattern,
    /// Attributes to show.
    pub request: Request,
    /// WHERE clause.
    pub filter: Option<Filter>,
}

impl Selection {
    /// Whether attribute `kw` is shown: asked for, or the one WHERE filters on (MQ shows
    /// the filtered attribute, so the answer says why each object was chosen).
    pub fn shows(&self, kw: &str) -> bool {
        self.request.wants(kw) || self.filter.as_ref().is_some_and(|f| f.keyword == kw)
    }
}

/// Which subscription ALTER and DELETE SUB name: SUB(name), SUBID(hex), or both (then
/// they must be the same subscription).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubscriptionRef {
    /// SUB(name).
    pub name: Option<String>,
    /// SUBID: 48 hex digits, upper case.
    pub id: Option<String>,
}

impl SubscriptionRef {
    /// The reference as messages show it.
    pub fn text(&self) -> String {
        match (&self.name, &self.id) {
            (Some(n), _) => n.clone(),
            (None, Some(id)) => id.clone(),
            (None, None) => String::new(),
        }
    }
}

/// DISPLAY SUB and SBSTATUS's SUBTYPE.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SubTypeFilter {
    /// USER (the default): API and ADMIN.
    #[default]
    User,
    /// API: made by MQSUB (and AMQP, JMS).
    Api,
    /// ADMIN: made by DEFINE SUB.
    Admin,
    /// PROXY: sent by other queue managers (Ferry has none).
    Proxy,
    /// ALL.
    All,
}

impl SubTypeFilter {
    /// The keywords, in MQ's order.
    pub const KEYWORDS: &'static [&'static str] = &["USER", "PROXY", "ADMIN", "API", "ALL"];

    /// The filter for a keyword.
    pub fn from_keyword(kw: &str) -> Option<Self> {
        Some(match kw {
            "USER" => SubTypeFilter::User,
            "PROXY" => SubTypeFilter::Proxy,
            "ADMIN" => SubTypeFilter::Admin,
            "API" => SubTypeFilter::Api,
            "ALL" => SubTypeFilter::All,
            _ => return None,
        })
    }

    /// Whether a subscription of SUBTYPE `kind` (API, ADMIN, PROXY) is selected.
    pub fn selects(self, kind: &str) -> bool {
        match self {
            SubTypeFilter::User => kind == "API" || kind == "ADMIN",
            SubTypeFilter::Api => kind == "API",
            SubTypeFilter::Admin => kind == "ADMIN",
            SubTypeFilter::Proxy => kind == "PROXY",
            SubTypeFilter::All => true,
        }
    }
}

/// What DISPLAY SUB and SBSTATUS select besides the name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubscriptionFilter {
    /// SUBID(hex): only that subscription.
    pub id: Option<String>,
    /// DURABLE(YES|NO); None for ALL (the default).
    pub durable: Option<bool>,
    /// SUBTYPE.
    pub sub_type: SubTypeFilter,
}

/// DISPLAY TPSTATUS TYPE(...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopicStatusType {
    /// TYPE(TOPIC), the default: one record per node.
    Topic,
    /// TYPE(SUB): one record per subscription on a node.
    Sub,
    /// TYPE(PUB): one record per handle open for publishing on a node.
    Pub,
}

/// A parsed MQSC command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// DEFINE QLOCAL/QALIAS/QMODEL.
    DefineQueue {
        /// The type defined.
        queue_type: QueueType,
        /// Queue name.
        name: String,
        /// LIKE(name): copy attributes from this queue.
        like: Option<String>,
        /// REPLACE given.
        replace: bool,
        /// Attributes named in the command.
        settings: Vec<Setting>,
    },
    /// ALTER QLOCAL/QALIAS/QMODEL.
    AlterQueue {
        /// The type the queue must have.
        queue_type: QueueType,
        /// Queue name.
        name: String,
        /// FORCE given.
        force: bool,
        /// Attributes to change.
        settings: Vec<Setting>,
    },
    /// DELETE QLOCAL/QALIAS/QMODEL.
    DeleteQueue {
        /// The type the queue must have.
        queue_type: QueueType,
        /// Queue name.
        name: String,
        /// PURGE given (default NOPURGE).
        purge: bool,
    },
    /// DISPLAY QUEUE / QLOCAL / QALIAS / QMODEL.
    DisplayQueue {
        /// The type named in the command (None for QUEUE).
        queue_type: Option<QueueType>,
        /// TYPE(...) filter on DISPLAY QUEUE.
        type_filter: Option<QueueType>,
        /// Objects and attributes.
        selection: Selection,
    },
    /// CLEAR QLOCAL.
    ClearQueue {
        /// Queue name.
        name: String,
    },
    /// DISPLAY QSTATUS.
    DisplayQueueStatus {
        /// TYPE(QUEUE) or TYPE(HANDLE).
        status_type: QueueStatusType,
        /// Queues and fields.
        selection: Selection,
    },
    /// DEFINE CHANNEL.
    DefineChannel {
        /// CHLTYPE.
        channel_type: ChannelType,
        /// Channel name.
        name: String,
        /// LIKE(name).
        like: Option<String>,
        /// REPLACE given.
        replace: bool,
        /// Attributes named.
        settings: Vec<Setting>,
    },
    /// ALTER CHANNEL.
    AlterChannel {
        /// CHLTYPE, if given (must match the channel's).
        channel_type: Option<ChannelType>,
        /// Channel name.
        name: String,
        /// Attributes to change.
        settings: Vec<Setting>,
    },
    /// DELETE CHANNEL.
    DeleteChannel {
        /// Channel name.
        name: String,
    },
    /// DISPLAY CHANNEL.
    DisplayChannel {
        /// CHLTYPE filter.
        channel_type: Option<ChannelType>,
        /// Channels and attributes.
        selection: Selection,
    },
    /// START CHANNEL (AMQP channels: start listening).
    StartChannel {
        /// Channel name.
        name: String,
    },
    /// STOP CHANNEL (AMQP channels: stop listening and end the connections).
    StopChannel {
        /// Channel name.
        name: String,
        /// MODE(QUIESCE), the default, or MODE(FORCE).
        mode: StopMode,
    },
    /// PING, RESET or RESOLVE CHANNEL: work on a message channel that the command server
    /// answers once it is done (a network exchange, a durable change of the channel's
    /// synchronisation record).
    OperateChannel {
        /// Channel name.
        name: String,
        /// What to do.
        operation: ChannelOperation,
    },
    /// DISPLAY CHSTATUS: a summary per channel, or with CLIENTID one record per client.
    DisplayChannelStatus {
        /// CHLTYPE filter.
        channel_type: Option<ChannelType>,
        /// CLIENTID(generic): show the matching clients instead of the summary.
        client_id: Option<NamePattern>,
        /// Channels and fields.
        selection: Selection,
    },
    /// DEFINE LISTENER.
    DefineListener {
        /// Listener name.
        name: String,
        /// LIKE(name).
        like: Option<String>,
        /// REPLACE given.
        replace: bool,
        /// Attributes named.
        settings: Vec<Setting>,
    },
    /// ALTER LISTENER.
    AlterListener {
        /// Listener name.
        name: String,
        /// Attributes to change.
        settings: Vec<Setting>,
    },
    /// DELETE LISTENER.
    DeleteListener {
        /// Listener name.
        name: String,
    },
    /// DISPLAY LISTENER.
    DisplayListener {
        /// Listeners and attributes.
        selection: Selection,
    },
    /// START LISTENER.
    StartListener {
        /// Listener name.
        name: String,
    },
    /// STOP LISTENER.
    StopListener {
        /// Listener name.
        name: String,
    },
    /// DISPLAY QMSTATUS.
    DisplayQmgrStatus {
        /// Fields to show.
        request: Request,
    },
    /// DISPLAY CLUSQMGR.
    DisplayClusterQmgr {
        /// Cluster queue managers and fields.
        selection: Selection,
        /// CLUSTER(name): only that cluster's.
        cluster: Option<String>,
    },
    /// DISPLAY QCLUSTER.
    DisplayQueueCluster {
        /// Cluster queues and fields.
        selection: Selection,
    },
    /// SUSPEND QMGR CLUSTER(c) (`suspend`) or RESUME QMGR CLUSTER(c), or CLUSNL(nl).
    SuspendQmgr {
        /// The cluster, or the namelist of clusters when `namelist`.
        cluster: String,
        /// True for CLUSNL: `cluster` names a namelist.
        namelist: bool,
        /// SUSPEND (true) or RESUME.
        suspend: bool,
    },
    /// REFRESH CLUSTER(c) REPOS(NO).
    RefreshCluster {
        /// The cluster.
        cluster: String,
    },
    /// RESET QMGR TYPE(STATISTICS): end the statistics interval now.
    ResetQmgrStatistics,
    /// RESET CLUSTER(c) ACTION(FORCEREMOVE) QMNAME(q).
    ResetCluster {
        /// The cluster.
        cluster: String,
        /// The queue manager to remove.
        qmgr: String,
    },
    /// DISPLAY LSSTATUS.
    DisplayListenerStatus {
        /// Listeners and fields.
        selection: Selection,
    },
    /// ALTER QMGR.
    AlterQmgr {
        /// FORCE given.
        force: bool,
        /// Attributes to change.
        settings: Vec<Setting>,
    },
    /// DISPLAY QMGR.
    DisplayQmgr {
        /// Attributes to show.
        request: Request,
    },
    /// DISPLAY CONN.
    DisplayConnection {
        /// TYPE(CONN|HANDLE|ALL).
        conn_type: ConnType,
        /// Connections and fields.
        selection: Selection,
    },
    /// Valid MQSC that Ferry does not implement yet (FRY9002E).
    Unsupported {
        /// The command as a short phrase, e.g. `DEFINE TOPIC`.
        what: String,
    },
    /// PING QMGR: the command server answers, so the queue manager is there.
    PingQmgr,
    /// REFRESH SECURITY: read again what TYPE names.
    RefreshSecurity(SecurityRefresh),
    /// DEFINE AUTHINFO.
    DefineAuthInfo {
        /// AUTHTYPE.
        auth_type: ferry_objects::AuthInfoType,
        /// Its name.
        name: String,
        /// LIKE(name).
        like: Option<String>,
        /// REPLACE given.
        replace: bool,
        /// Attributes named.
        settings: Vec<Setting>,
    },
    /// ALTER AUTHINFO.
    AlterAuthInfo {
        /// AUTHTYPE, when given (it must match the object's).
        auth_type: Option<ferry_objects::AuthInfoType>,
        /// Its name.
        name: String,
        /// Attributes to change.
        settings: Vec<Setting>,
    },
    /// DELETE AUTHINFO.
    DeleteAuthInfo {
        /// Its name.
        name: String,
    },
    /// DISPLAY AUTHINFO.
    DisplayAuthInfo {
        /// AUTHTYPE filter.
        auth_type: Option<ferry_objects::AuthInfoType>,
        /// Objects and attributes.
        selection: Selection,
    },
    /// DEFINE PROCESS.
    DefineProcess {
        /// Its name.
        name: String,
        /// LIKE(name).
        like: Option<String>,
        /// REPLACE given.
        replace: bool,
        /// Attributes named.
        settings: Vec<Setting>,
    },
    /// ALTER PROCESS.
    AlterProcess {
        /// Its name.
        name: String,
        /// Attributes to change.
        settings: Vec<Setting>,
    },
    /// DELETE PROCESS.
    DeleteProcess {
        /// Its name.
        name: String,
    },
    /// DISPLAY PROCESS.
    DisplayProcess {
        /// Process definitions and attributes.
        selection: Selection,
    },
    /// DEFINE NAMELIST.
    DefineNamelist {
        /// Its name.
        name: String,
        /// LIKE(name).
        like: Option<String>,
        /// REPLACE given.
        replace: bool,
        /// Attributes named.
        settings: Vec<Setting>,
    },
    /// ALTER NAMELIST.
    AlterNamelist {
        /// Its name.
        name: String,
        /// Attributes to change.
        settings: Vec<Setting>,
    },
    /// DELETE NAMELIST.
    DeleteNamelist {
        /// Its name.
        name: String,
    },
    /// DISPLAY NAMELIST.
    DisplayNamelist {
        /// Namelists and attributes.
        selection: Selection,
    },
    /// DEFINE TOPIC (TYPE(LOCAL)).
    DefineTopic {
        /// Its name.
        name: String,
        /// LIKE(name).
        like: Option<String>,
        /// REPLACE given.
        replace: bool,
        /// Attributes named (TOPICSTR always among them).
        settings: Vec<Setting>,
    },
    /// ALTER TOPIC (never TOPICSTR).
    AlterTopic {
        /// Its name.
        name: String,
        /// Attributes to change.
        settings: Vec<Setting>,
    },
    /// DELETE TOPIC.
    DeleteTopic {
        /// Its name.
        name: String,
    },
    /// DISPLAY TOPIC (TYPE(LOCAL) and TYPE(ALL) select the same objects: all are local).
    DisplayTopic {
        /// Objects and attributes.
        selection: Selection,
    },
    /// DEFINE SUB: an administrative durable subscription.
    DefineSubscription {
        /// SUB(name).
        name: String,
        /// LIKE(name): copy another subscription's attributes (SYSTEM.DEFAULT.SUB: the
        /// defaults).
        like: Option<String>,
        /// REPLACE given.
        replace: bool,
        /// Attributes named.
        settings: Vec<Setting>,
    },
    /// ALTER SUB (only the attributes ALTER may change).
    AlterSubscription {
        /// The subscription.
        sub: SubscriptionRef,
        /// Attributes to change.
        settings: Vec<Setting>,
    },
    /// DELETE SUB.
    DeleteSubscription {
        /// The subscription.
        sub: SubscriptionRef,
    },
    /// DISPLAY SUB.
    DisplaySubscription {
        /// Names and attributes (the summary attributes are always shown).
        selection: Selection,
        /// SUBID, DURABLE and SUBTYPE.
        filter: SubscriptionFilter,
    },
    /// DISPLAY SBSTATUS.
    DisplaySubscriptionStatus {
        /// Names and fields.
        selection: Selection,
        /// SUBID, DURABLE and SUBTYPE.
        filter: SubscriptionFilter,
    },
    /// DISPLAY TPSTATUS.
    DisplayTopicStatus {
        /// The topic string, `#` and `+` allowed (`#`: the whole tree).
        topic: String,
        /// TYPE.
        status_type: TopicStatusType,
        /// Fields (the selection's name is the topic string).
        selection: Selection,
    },
    /// DISPLAY PUBSUB (TYPE(LOCAL) or TYPE(ALL): the same, Ferry has no hierarchies).
    DisplayPubSub {
        /// Fields.
        request: Request,
    },
    /// CLEAR TOPICSTR CLRTYPE(RETAINED) [SCOPE(LOCAL)].
    ClearTopicString {
        /// The topic string (no wildcards: one retained publication).
        topic: String,
    },
    /// SET CHLAUTH: add, replace or remove a channel authentication record.
    SetChlauth {
        /// The record (for REMOVE and REMOVEALL, what identifies it).
        record: Box<ferry_security::chlauth::ChlauthRecord>,
        /// ACTION.
        action: ferry_security::chlauth::SetAction,
    },
    /// DISPLAY CHLAUTH.
    DisplayChlauth {
        /// The profile or channel name given.
        profile: String,
        /// TYPE filter (None: every type).
        kind: Option<ferry_security::chlauth::ChlauthType>,
        /// MATCH.
        matching: ChlauthMatch,
        /// The partner MATCH(RUNCHECK) asks about.
        query: Box<ChlauthQuery>,
        /// ALL: every field.
        all: bool,
        /// Fields named besides the ones always shown.
        fields: Vec<&'static str>,
    },
    /// SET AUTHREC: grant and revoke authorities on one authority record.
    SetAuthRec {
        /// The record.
        key: AuthRecKey,
        /// AUTHADD.
        add: Vec<ferry_security::oam::AuthorityName>,
        /// AUTHRMV.
        remove: Vec<ferry_security::oam::AuthorityName>,
    },
    /// DELETE AUTHREC.
    DeleteAuthRec {
        /// The record.
        key: AuthRecKey,
    },
    /// DISPLAY AUTHREC.
    DisplayAuthRec {
        /// PROFILE (None: every profile).
        profile: Option<String>,
        /// OBJTYPE (None: every type).
        object_type: Option<ferry_security::oam::ProfileObjectType>,
        /// PRINCIPAL or GROUP (None: every entity).
        entity: Option<(ferry_security::oam::EntityType, String)>,
        /// MATCH.
        matching: AuthRecMatch,
    },
    /// DISPLAY ENTAUTH: what an entity may do to one object.
    DisplayEntAuth {
        /// PRINCIPAL or GROUP.
        entity: (ferry_security::oam::EntityType, String),
        /// OBJNAME (the queue manager's name for OBJTYPE(QMGR)).
        object_name: String,
        /// OBJTYPE.
        object_type: ferry_security::oam::ProfileObjectType,
    },
    /// END: stop reading commands.
    End,
}

/// What names an authority record in SET and DELETE AUTHREC, as written (the target
/// checks the profile and the entity).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthRecKey {
    /// PROFILE (for OBJTYPE(QMGR), `self`).
    pub profile: String,
    /// OBJTYPE.
    pub object_type: ferry_security::oam::ProfileObjectType,
    /// PRINCIPAL or GROUP.
    pub entity_type: ferry_security::oam::EntityType,
    /// The user or group.
    pub entity: String,
}

/// DISPLAY AUTHREC's MATCH.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthRecMatch {
    /// PROFILE (the default): the records whose profile is the one given or covers it.
    Profile,
    /// EXACT: only the records of exactly that profile.
    Exact,
    /// MEMBERSHIP: with PRINCIPAL, the records of the principal and of its groups.
    Membership,
}

/// What REFRESH SECURITY's TYPE reads again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecurityRefresh {
    /// AUTHSERV (the default): group memberships remembered for authority decisions.
    AuthServ,
    /// CONNAUTH: the AUTHINFO object QMGR CONNAUTH names, and the user repository.
    ConnAuth,
    /// SSL: the key repository, for new TLS handshakes.
    Ssl,
    /// ALL: each of them.
    All,
}

/// DISPLAY CHLAUTH's MATCH: how the name in CHLAUTH(..) selects records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChlauthMatch {
    /// GENERIC (default): profiles the name matches as a generic name (`*` ends it).
    Generic,
    /// EXACT: the profile that is exactly the name.
    Exact,
    /// ALL: every profile that matches the channel named.
    All,
    /// RUNCHECK: the one record a connection with the given details would meet.
    RunCheck,
}

/// The partner details DISPLAY CHLAUTH MATCH(RUNCHECK) takes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChlauthQuery {
    /// ADDRESS: the partner's IP address.
    pub address: String,
    /// CLNTUSER: the user id a client asserts.
    pub client_user: String,
    /// SSLPEER: the certificate subject.
    pub ssl_peer: String,
    /// SSLCERTI: the certificate issuer.
    pub ssl_cert_issuer: String,
    /// QMNAME: the partner queue manager.
    pub qmgr_name: String,
}

impl ChlauthQuery {
    /// The first partner detail given, if any (they only make sense with RUNCHECK).
    pub fn given(&self) -> Option<&'static str> {
        [
            ("ADDRESS", &self.address),
            ("CLNTUSER", &self.client_user),
            ("SSLPEER", &self.ssl_peer),
            ("SSLCERTI", &self.ssl_cert_issuer),
            ("QMNAME", &self.qmgr_name),
        ]
        .into_iter()
        .find(|(_, v)| !v.is_empty())
        .map(|(k, _)| k)
    }
}
