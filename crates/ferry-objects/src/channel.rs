//! Channel definitions: client connections (SVRCONN), AMQP 1.0 channels (AMQP) and the
//! message channels between queue managers (SDR, RCVR, SVR, RQSTR).
//!
//! Every type shares one attribute table; each row's `applies` mask says which types
//! take it, so an attribute of another type is refused by MQSC (`SHARECNV` on an AMQP
//! channel, `PORT` on a SVRCONN, `XMITQ` on a receiver). Where MQ's default differs by
//! type (BATCHINT, DISCINT), [`ChannelDefinition::new`] sets the type's own. Cluster
//! channels (CLUSSDR, CLUSRCVR) share the table: a CLUSRCVR is also the template its
//! partners' auto-defined cluster-senders are made from, so it takes the sending
//! attributes too, as in MQ.

use crate::attribute::AttrKind::{Checked, Int, Keyword, KeywordList, Name, Text};
use crate::attribute::TextRule;
use crate::{attribute_table, keyword_enum, AttrType, AttrValue};
use ferry_mqi::compression::{
    list_text, parse_list, MAX_HEADER_COMPRESSION_LIST, MAX_MESSAGE_COMPRESSION_LIST,
};
use ferry_mqi::{HeaderCompression, MessageCompression, Technique};

/// Applies to server-connection channels.
pub const SVRCONN: u32 = 1;
/// Applies to AMQP channels.
pub const AMQP: u32 = 2;
/// Applies to sender channels (SDR).
pub const SDR: u32 = 4;
/// Applies to receiver channels (RCVR).
pub const RCVR: u32 = 8;
/// Applies to server channels (SVR).
pub const SVR: u32 = 16;
/// Applies to requester channels (RQSTR).
pub const RQSTR: u32 = 32;
/// Applies to cluster-sender channels (CLUSSDR).
pub const CLUSSDR: u32 = 64;
/// Applies to cluster-receiver channels (CLUSRCVR).
pub const CLUSRCVR: u32 = 128;
/// The cluster channel types.
pub const CLUSTER_CHANNELS: u32 = CLUSSDR | CLUSRCVR;
/// The message channel types: those that move messages between queue managers.
pub const MESSAGE: u32 = SDR | RCVR | SVR | RQSTR | CLUSTER_CHANNELS;
/// The types that send messages from a transmission queue (a CLUSRCVR's values are
/// those of the cluster-senders made from it).
const SENDING: u32 = SDR | SVR | CLUSTER_CHANNELS;
/// The types whose transmission queue is named by XMITQ (cluster-senders use the
/// cluster transmission queue).
const XMITQ_NAMED: u32 = SDR | SVR;
/// The types that put the messages they receive.
const RECEIVING: u32 = RCVR | RQSTR | CLUSRCVR;
/// The types that name their partner's address (SVR: optional; CLUSRCVR: its own
/// address, as the cluster's other members are to call it).
const CALLING: u32 = SDR | SVR | RQSTR | CLUSTER_CHANNELS;
/// Every type.
const ALL_TYPES: u32 = SVRCONN | AMQP | MESSAGE;

/// The port an AMQP channel listens on unless PORT says otherwise (AMQP's IANA port).
pub const AMQP_DEFAULT_PORT: u16 = 5672;

keyword_enum! {
    /// CHLTYPE: the role of a channel.
    ChannelType {
        /// Server end of client connections.
        Svrconn = "SVRCONN",
        /// AMQP 1.0 listener for AMQP and JMS (Qpid) clients.
        Amqp = "AMQP",
        /// Sends the messages of a transmission queue to a receiver (or requester).
        Sender = "SDR",
        /// Receives messages from a sender (or server) and puts them.
        Receiver = "RCVR",
        /// Sends a transmission queue's messages: started here (with CONNAME) or by a
        /// requester calling in.
        Server = "SVR",
        /// Receives messages: calls a server (or a sender) and asks it to send.
        Requester = "RQSTR",
        /// Sends messages from the cluster transmission queue to another member of a
        /// cluster (defined by hand to a full repository, or auto-defined).
        ClusterSender = "CLUSSDR",
        /// Receives messages from the cluster's other members; its CONNAME and workload
        /// attributes are advertised to them.
        ClusterReceiver = "CLUSRCVR",
    }
}

impl ChannelType {
    /// The bit used in the attribute table's `applies` masks.
    pub fn mask(self) -> u32 {
        match self {
            ChannelType::Svrconn => SVRCONN,
            ChannelType::Amqp => AMQP,
            ChannelType::Sender => SDR,
            ChannelType::Receiver => RCVR,
            ChannelType::Server => SVR,
            ChannelType::Requester => RQSTR,
            ChannelType::ClusterSender => CLUSSDR,
            ChannelType::ClusterReceiver => CLUSRCVR,
        }
    }

    /// MQCHT number, as MQ's PCF and the channel protocol carry it.
    pub fn mqcht(self) -> i32 {
        match self {
            ChannelType::Sender => 1,
            ChannelType::Server => 2,
            ChannelType::Receiver => 3,
            ChannelType::Requester => 4,
            ChannelType::ClusterSender => 5,
            ChannelType::ClusterReceiver => 6,
            ChannelType::Svrconn => 7,
            ChannelType::Amqp => 11,
        }
    }

    /// True for the message channel types (between queue managers).
    pub fn is_message_channel(self) -> bool {
        self.mask() & MESSAGE != 0
    }

    /// True for the types that send a transmission queue's messages (SDR, SVR,
    /// CLUSSDR).
    pub fn sends_messages(self) -> bool {
        self.mask() & (SDR | SVR | CLUSSDR) != 0
    }

    /// True for the cluster channel types (CLUSSDR, CLUSRCVR).
    pub fn is_cluster_channel(self) -> bool {
        self.mask() & CLUSTER_CHANNELS != 0
    }

    /// The object as MQSC messages name it, e.g. `CHANNEL CHLTYPE(AMQP)`.
    pub fn object(self) -> &'static str {
        match self {
            ChannelType::Svrconn => "CHANNEL CHLTYPE(SVRCONN)",
            ChannelType::Amqp => "CHANNEL CHLTYPE(AMQP)",
            ChannelType::Sender => "CHANNEL CHLTYPE(SDR)",
            ChannelType::Receiver => "CHANNEL CHLTYPE(RCVR)",
            ChannelType::Server => "CHANNEL CHLTYPE(SVR)",
            ChannelType::Requester => "CHANNEL CHLTYPE(RQSTR)",
            ChannelType::ClusterSender => "CHANNEL CHLTYPE(CLUSSDR)",
            ChannelType::ClusterReceiver => "CHANNEL CHLTYPE(CLUSRCVR)",
        }
    }

    /// Whether START/STOP CHANNEL apply: an AMQP channel listens once started; a message
    /// channel is started (a receiver's START only lets its partner in again after a
    /// STOP, as in MQ); a SVRCONN channel runs only when a client connects through a
    /// listener, so it cannot be started.
    pub fn can_start(self) -> bool {
        match self {
            ChannelType::Svrconn => false,
            ChannelType::Amqp
            | ChannelType::Sender
            | ChannelType::Receiver
            | ChannelType::Server
            | ChannelType::Requester
            | ChannelType::ClusterSender
            | ChannelType::ClusterReceiver => true,
        }
    }
}

keyword_enum! {
    /// TRPTYPE: transport.
    TransportType { Tcp = "TCP" }
}

keyword_enum! {
    /// NPMSPEED: whether non-persistent messages travel outside the batch's unit of work.
    NonPersistentSpeed {
        /// Outside the unit of work, put at once at the receiver: lost only if the
        /// channel fails while they are in flight. MQ's default.
        Fast = "FAST",
        /// Inside the batch, as persistent messages travel.
        Normal = "NORMAL",
    }
}

keyword_enum! {
    /// PUTAUT: whose authority the receiving end puts messages with.
    PutAuthority {
        /// The channel's MCAUSER (or the queue manager's own identity when blank).
        Default = "DEF",
        /// The UserIdentifier in each message's context.
        Context = "CTX",
    }
}

keyword_enum! {
    /// USEDLQ: whether a message the receiving end cannot put goes to the dead-letter queue.
    UseDeadLetterQueue { No = "NO", Yes = "YES" }
}

keyword_enum! {
    /// USECLTID: whether an AMQP client's container id is used as its MQ user id.
    UseClientId { No = "NO", Yes = "YES" }
}

keyword_enum! {
    /// SSLCAUTH: whether a TLS client must present a certificate.
    SslClientAuth { Required = "REQUIRED", Optional = "OPTIONAL" }
}

keyword_enum! {
    /// STOP CHANNEL MODE: how a running channel's connections end.
    StopMode {
        /// Stop accepting connections; end each after the work in flight (the current
        /// acknowledgement batch) completes. MQ's default.
        Quiesce = "QUIESCE",
        /// Stop accepting connections and close every connection at once (a message
        /// channel's batch in progress is backed out).
        Force = "FORCE",
        /// As FORCE: on distributed platforms MQ ends the agent at once either way.
        Terminate = "TERMINATE",
    }
}

keyword_enum! {
    /// RESOLVE CHANNEL ACTION: what becomes of the sending end's in-doubt batch.
    ResolveAction {
        /// The partner committed the batch: its messages leave the transmission queue.
        Commit = "COMMIT",
        /// The partner did not commit it: its messages stay to be sent again.
        Backout = "BACKOUT",
    }
}

/// The least data PING CHANNEL sends (DATALEN's minimum, and its default).
pub const PING_DATA_LEN_MIN: u32 = 16;
/// The most data PING CHANNEL sends (DATALEN's maximum).
pub const PING_DATA_LEN_MAX: u32 = 32_768;
/// The largest RESET CHANNEL SEQNUM, as in MQ.
pub const RESET_SEQNUM_MAX: u32 = 999_999_999;

/// PING, RESET and RESOLVE CHANNEL: the operations on a message channel that take a
/// network exchange or a durable change of its synchronisation record, so the command
/// server answers them once they are done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelOperation {
    /// PING CHANNEL DATALEN(n): a short conversation that exchanges `data_length` bytes
    /// with the partner and checks the echo; no message moves.
    Ping {
        /// DATALEN, 16 to 32768.
        data_length: u32,
    },
    /// RESET CHANNEL SEQNUM(n): the next start tells the partner to take `seqnum` as
    /// the last committed sequence number, as this end does.
    Reset {
        /// SEQNUM, 1 to 999999999.
        seqnum: u32,
    },
    /// RESOLVE CHANNEL ACTION(..): settles the sending end's in-doubt batch by hand.
    Resolve {
        /// COMMIT or BACKOUT.
        action: ResolveAction,
    },
}

impl ChannelOperation {
    /// The command's verb, as MQSC spells it.
    pub fn verb(&self) -> &'static str {
        match self {
            ChannelOperation::Ping { .. } => "PING",
            ChannelOperation::Reset { .. } => "RESET",
            ChannelOperation::Resolve { .. } => "RESOLVE",
        }
    }
}

attribute_table! {
    /// The attributes of a channel.
    pub struct ChannelAttributes;
    pub static CHANNEL_ATTRIBUTES;
    descr: String = "DESCR", Text { max_len: 64 }, default String::new(),
        applies ALL_TYPES, inq None, rw, "Description for operators.";
    transport_type: TransportType = "TRPTYPE", Keyword { values: TransportType::KEYWORDS }, default TransportType::Tcp,
        applies SVRCONN | MESSAGE, inq None, rw, "Transport the channel uses.";
    connection_name: String = "CONNAME", Checked { max_len: 264, rule: TextRule::ConnectionName }, default String::new(),
        applies CALLING, inq None, rw, "Where the partner listens: host(port), a bare host meaning port 1414, or a comma-separated list tried in turn (a SVR with none waits for its requester to call).";
    xmit_q: String = "XMITQ", Name { max_len: 48 }, default String::new(),
        applies XMITQ_NAMED, inq None, rw, "Transmission queue whose messages the channel sends (cluster-senders send from SYSTEM.CLUSTER.TRANSMIT.QUEUE).";
    cluster: String = "CLUSTER", Name { max_len: 48 }, default String::new(),
        applies CLUSTER_CHANNELS, inq None, rw, "The cluster the channel belongs to (blank: none, or the clusters CLUSNL names).";
    cluster_namelist: String = "CLUSNL", Name { max_len: 48 }, default String::new(),
        applies CLUSTER_CHANNELS, inq None, rw, "A namelist of the clusters the channel belongs to (CLUSTER must then be blank).";
    cluster_workload_rank: i32 = "CLWLRANK", Int { min: 0, max: 9 }, default 0,
        applies CLUSTER_CHANNELS, inq None, rw, "Cluster workload rank: messages go to the highest-ranked queue managers' channels first, whatever their state.";
    cluster_workload_priority: i32 = "CLWLPRTY", Int { min: 0, max: 9 }, default 0,
        applies CLUSTER_CHANNELS, inq None, rw, "Cluster workload priority: among channels in the best state, the highest priority is chosen (failover).";
    cluster_workload_weight: i32 = "CLWLWGHT", Int { min: 1, max: 99 }, default 50,
        applies CLUSTER_CHANNELS, inq None, rw, "Cluster workload weight: the share of messages, relative to the other channels, this channel gets.";
    network_priority: i32 = "NETPRTY", Int { min: 0, max: 9 }, default 0,
        applies CLUSRCVR, inq None, rw, "Priority of this network connection among several to the same queue manager (highest first).";
    port: i32 = "PORT", Int { min: 1, max: 65535 }, default i32::from(AMQP_DEFAULT_PORT),
        applies AMQP, inq None, rw, "TCP port the AMQP channel listens on.";
    local_address: String = "LOCLADDR", Text { max_len: 48 }, default String::new(),
        applies AMQP, inq None, rw, "Local address the AMQP channel listens on (blank: all interfaces).";
    max_msg_length: i32 = "MAXMSGL", Int { min: 0, max: 104_857_600 }, default 4_194_304,
        applies ALL_TYPES, inq None, rw, "Longest message on the channel; the lower of both ends is used (2218).";
    heartbeat_interval: i32 = "HBINT", Int { min: 0, max: 999_999 }, default 300,
        applies ALL_TYPES, inq None, rw, "Seconds of silence before a heartbeat (SVRCONN: the longest a client gets; a client proposing 0 or more gets HBINT); AMQP: the idle-time-out advertised (HBINT x 1000 ms), a client silent longer is disconnected; message channels: the larger of both ends, heartbeats flow while the transmission queue is empty; 0 off.";
    share_conversations: i32 = "SHARECNV", Int { min: 0, max: 999_999_999 }, default 10,
        applies SVRCONN, inq None, rw, "Conversations one TCP connection may carry (0 and 1: no sharing).";
    max_instances: i32 = "MAXINST", Int { min: 0, max: 999_999_999 }, default 1_000,
        applies SVRCONN | AMQP, inq None, rw, "Most simultaneous instances (AMQP: connections) of the channel (MQ's default is 999999999; Ferry's protects the machine, and qm.ini Limits/MaxConnections bounds all channels together).";
    max_instances_per_client: i32 = "MAXINSTC", Int { min: 0, max: 999_999_999 }, default 1_000,
        applies SVRCONN | AMQP, inq None, rw, "Most simultaneous instances from one client address (MQ's default is 999999999; lower it to keep one host from taking the whole channel).";
    disconnect_interval: i32 = "DISCINT", Int { min: 0, max: 999_999 }, default 0,
        applies SVRCONN | SENDING, inq None, rw, "Seconds an idle client may stay connected (0: forever); sending channels end normally after this many seconds with nothing to send (MQ's default 6000), and a message on the transmission queue starts them again.";
    mca_user: String = "MCAUSER", Name { max_len: 12 }, default String::new(),
        applies ALL_TYPES, inq None, rw, "User id for authorization (blank: the flowed user; on a receiving message channel, the queue manager's own identity).";
    put_authority: PutAuthority = "PUTAUT", Keyword { values: PutAuthority::KEYWORDS }, default PutAuthority::Default,
        applies RECEIVING, inq None, rw, "Whose authority puts the arriving messages: DEF the channel's MCAUSER, CTX each message's UserIdentifier.";
    batch_limit: i32 = "BATCHLIM", Int { min: 0, max: 999_999 }, default 5000,
        applies SENDING, inq None, rw, "KB after which a batch ends even below BATCHSZ messages (0: no limit).";
    batch_heartbeat: i32 = "BATCHHB", Int { min: 0, max: 999_999 }, default 0,
        applies SENDING, inq None, rw, "Milliseconds of receiver silence after which the sender checks the receiver is alive before ending a batch (0: never).";
    monitoring: crate::queue::MonitoringLevel = "MONCHL", Keyword { values: crate::queue::MonitoringLevel::KEYWORDS }, default crate::queue::MonitoringLevel::QMgr,
        applies MESSAGE, inq None, rw, "Online monitoring of the channel (DISPLAY CHSTATUS NETTIME, XQTIME): QMGR follows the queue manager's MONCHL, OFF leaves them blank, LOW, MEDIUM or HIGH show them unless the queue manager's MONCHL is NONE. (COMPRATE and COMPTIME show whatever it says.)";
    np_speed: NonPersistentSpeed = "NPMSPEED", Keyword { values: NonPersistentSpeed::KEYWORDS }, default NonPersistentSpeed::Fast,
        applies MESSAGE, inq None, rw, "FAST: non-persistent messages travel outside the batch's unit of work (FAST only when both ends say FAST).";
    sequence_wrap: i32 = "SEQWRAP", Int { min: 100, max: 999_999_999 }, default 999_999_999,
        applies MESSAGE, inq None, rw, "Highest message sequence number before it wraps to 1; both ends must agree.";
    short_retry_count: i32 = "SHORTRTY", Int { min: 0, max: 999_999_999 }, default 10,
        applies CALLING, inq None, rw, "Attempts, SHORTTMR seconds apart, to start the channel after a failure before the long retries.";
    short_retry_interval: i32 = "SHORTTMR", Int { min: 0, max: 999_999 }, default 60,
        applies CALLING, inq None, rw, "Seconds between short retries.";
    long_retry_count: i32 = "LONGRTY", Int { min: 0, max: 999_999_999 }, default 999_999_999,
        applies CALLING, inq None, rw, "Attempts, LONGTMR seconds apart, after the short retries; then the channel is STOPPED.";
    long_retry_interval: i32 = "LONGTMR", Int { min: 0, max: 999_999 }, default 1200,
        applies CALLING, inq None, rw, "Seconds between long retries.";
    message_retry_count: i32 = "MRRTY", Int { min: 0, max: 999_999_999 }, default 10,
        applies RECEIVING, inq None, rw, "Times the receiving end retries a put that failed for a reason that may pass (2053 full, 2051 put-inhibited) before the dead-letter queue.";
    message_retry_interval: i32 = "MRTMR", Int { min: 0, max: 999_999_999 }, default 1000,
        applies RECEIVING, inq None, rw, "Milliseconds between message retries.";
    use_dlq: UseDeadLetterQueue = "USEDLQ", Keyword { values: UseDeadLetterQueue::KEYWORDS }, default UseDeadLetterQueue::Yes,
        applies MESSAGE, inq None, rw, "YES: a message the receiving end cannot put goes to the dead-letter queue with an MQDLH; NO: the channel stops instead.";
    use_client_id: UseClientId = "USECLTID", Keyword { values: UseClientId::KEYWORDS }, default UseClientId::No,
        applies AMQP, inq None, rw, "YES: the AMQP client's container id is its user id for authorization.";
    topic_root: String = "TPROOT", Name { max_len: 48 }, default "SYSTEM.BASE.TOPIC".to_string(),
        applies AMQP, inq None, rw, "Topic object under which AMQP topic addresses are published and subscribed.";
    ssl_cipher: String = "SSLCIPH", Checked { max_len: 32, rule: TextRule::CipherSpec }, default String::new(),
        applies ALL_TYPES, inq None, rw, "TLS CipherSpec (blank: no TLS): a name from docs/security.md or an alias such as ANY_TLS12_OR_HIGHER; every conversation must then use TLS with a suite it allows.";
    ssl_client_auth: SslClientAuth = "SSLCAUTH", Keyword { values: SslClientAuth::KEYWORDS }, default SslClientAuth::Required,
        applies ALL_TYPES, inq None, rw, "Whether a TLS client must present a certificate the key repository's CAs signed.";
    ssl_peer: String = "SSLPEER", Checked { max_len: 1024, rule: TextRule::PeerName }, default String::new(),
        applies ALL_TYPES, inq None, rw, "Filter on the client certificate's subject, e.g. 'CN=app*,O=Example' (blank: any).";
    cert_label: String = "CERTLABL", Text { max_len: 64 }, default String::new(),
        applies ALL_TYPES, inq None, rw, "Certificate the channel presents (blank: the queue manager's CERTLABL).";
    header_compression: Vec<HeaderCompression> = "COMPHDR", KeywordList { values: HeaderCompression::KEYWORDS, max: MAX_HEADER_COMPRESSION_LIST }, default vec![HeaderCompression::None],
        applies SVRCONN | MESSAGE, inq None, rw, "Header compression the channel accepts (SYSTEM: the descriptors of message flows, on a message channel the transmission headers, are run-length encoded); the first choice of the initiating end (the client, or the calling end of a message channel) that the other end's list has is used.";
    message_compression: Vec<MessageCompression> = "COMPMSG", KeywordList { values: MessageCompression::KEYWORDS, max: MAX_MESSAGE_COMPRESSION_LIST }, default vec![MessageCompression::None],
        applies SVRCONN | MESSAGE, inq None, rw, "Message data compression the channel accepts (ANY: all); the first technique of the initiating end's list (the client, or the calling end of a message channel) that the other end's list has is used, NONE when there is none. A message channel compresses the messages it sends.";
    batch_size: i32 = "BATCHSZ", Int { min: 1, max: 9999 }, default 50,
        applies AMQP | MESSAGE, inq None, rw, "Accepted AMQP deliveries are removed from their queues in batches of up to this many; message channels: most messages between confirmations (the lower of both ends).";
    batch_interval: i32 = "BATCHINT", Int { min: 0, max: 999_999_999 }, default 50,
        applies AMQP | SENDING, inq None, rw, "Milliseconds a batch of accepted deliveries waits to fill before it is removed (0: at once); sending channels: how long a batch stays open for more messages once the transmission queue is empty (MQ's default 0).";
    alteration_date: String = "ALTDATE", Text { max_len: 10 }, default String::new(),
        applies ALL_TYPES, inq None, ro, "Date of the last change (yyyy-mm-dd).";
    alteration_time: String = "ALTTIME", Text { max_len: 8 }, default String::new(),
        applies ALL_TYPES, inq None, ro, "Time of the last change (hh.mm.ss).";
}

impl AttrType for Vec<MessageCompression> {
    fn to_value(&self) -> AttrValue {
        AttrValue::Text(list_text(self))
    }
    fn from_value(v: AttrValue) -> Option<Self> {
        match v {
            AttrValue::Text(s) => parse_list(&s, MAX_MESSAGE_COMPRESSION_LIST).ok(),
            _ => None,
        }
    }
}

impl AttrType for Vec<HeaderCompression> {
    fn to_value(&self) -> AttrValue {
        AttrValue::Text(list_text(self))
    }
    fn from_value(v: AttrValue) -> Option<Self> {
        match v {
            AttrValue::Text(s) => parse_list(&s, MAX_HEADER_COMPRESSION_LIST).ok(),
            _ => None,
        }
    }
}

impl ChannelAttributes {
    /// The CipherSpec SSLCIPH asks for; `None` when the channel does not use TLS. A
    /// stored value that no longer parses (it passed the check when set) counts as none.
    pub fn cipher_spec(&self) -> Option<ferry_security::CipherSpecChoice> {
        ferry_security::CipherSpecChoice::parse(&self.ssl_cipher)
            .ok()
            .flatten()
    }

    /// True when SSLCIPH asks for TLS.
    pub fn tls_requested(&self) -> bool {
        !self.ssl_cipher.trim().is_empty()
    }

    /// PORT as a port number (the table keeps it within 1..=65535).
    pub fn listen_port(&self) -> u16 {
        u16::try_from(self.port).unwrap_or(AMQP_DEFAULT_PORT)
    }
}

/// A channel: name (up to 20 characters), type and attributes.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ChannelDefinition {
    /// Channel name.
    pub name: String,
    /// Role.
    pub channel_type: ChannelType,
    /// Every attribute of the table.
    pub attributes: ChannelAttributes,
}

impl ChannelDefinition {
    /// A definition with MQ's defaults for its type: the table's, with BATCHINT(0) and,
    /// on sending channels, DISCINT(6000) where MQ's defaults for message channels differ.
    pub fn new(name: impl Into<String>, channel_type: ChannelType) -> Self {
        let mut attributes = ChannelAttributes::default();
        if channel_type.is_message_channel() {
            attributes.batch_interval = 0;
        }
        if channel_type.sends_messages() || channel_type == ChannelType::ClusterReceiver {
            attributes.disconnect_interval = 6000;
        }
        ChannelDefinition {
            name: name.into(),
            channel_type,
            attributes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AttrValue, AttributeSet};

    fn applies(keyword: &str, ct: ChannelType) -> bool {
        ChannelAttributes::lookup(keyword)
            .map(|(row, _)| row.applies_to(ct.mask()))
            .unwrap_or(false)
    }

    #[test]
    fn amqp_channels_take_mq_amqp_attributes_and_not_svrconn_ones() {
        for kw in [
            "DESCR", "PORT", "LOCLADDR", "MAXMSGL", "HBINT", "MAXINST", "MAXINSTC", "MCAUSER",
            "USECLTID", "TPROOT", "SSLCIPH", "SSLCAUTH", "BATCHSZ", "BATCHINT", "ALTDATE",
        ] {
            assert!(applies(kw, ChannelType::Amqp), "{kw} on AMQP");
        }
        for kw in ["SHARECNV", "DISCINT", "TRPTYPE"] {
            assert!(!applies(kw, ChannelType::Amqp), "{kw} refused on AMQP");
        }
        for kw in [
            "PORT", "LOCLADDR", "USECLTID", "TPROOT", "BATCHSZ", "BATCHINT",
        ] {
            assert!(
                !applies(kw, ChannelType::Svrconn),
                "{kw} refused on SVRCONN"
            );
        }
        for kw in [
            "SHARECNV", "DISCINT", "TRPTYPE", "HBINT", "MAXMSGL", "MCAUSER", "SSLCIPH", "SSLCAUTH",
            "SSLPEER", "CERTLABL",
        ] {
            assert!(applies(kw, ChannelType::Svrconn), "{kw} on SVRCONN");
        }
    }

    #[test]
    fn amqp_defaults_are_mqs() {
        let a = ChannelDefinition::new("SYSTEM.DEF.AMQP", ChannelType::Amqp).attributes;
        assert_eq!(a.port, 5672);
        assert_eq!(a.listen_port(), 5672);
        assert_eq!(a.local_address, "");
        assert_eq!(a.max_msg_length, 4_194_304);
        assert_eq!(a.max_instances, 1_000);
        assert_eq!(a.max_instances_per_client, 1_000);
        assert_eq!(a.use_client_id, UseClientId::No);
        assert_eq!(a.topic_root, "SYSTEM.BASE.TOPIC");
        assert_eq!(a.ssl_client_auth, SslClientAuth::Required);
        assert_eq!(a.batch_size, 50);
        assert_eq!(a.batch_interval, 50);
        assert_eq!(a.heartbeat_interval, 300);
        assert!(!a.tls_requested());
    }

    #[test]
    fn ranges_refuse_out_of_range_values() {
        let check = |kw: &str, n: i32| {
            let (row, _) = ChannelAttributes::lookup(kw).expect("row");
            row.check(AttrValue::Int(n)).is_ok()
        };
        assert!(check("PORT", 1) && check("PORT", 65535));
        assert!(!check("PORT", 0) && !check("PORT", 65536));
        assert!(check("BATCHSZ", 1) && check("BATCHSZ", 9999));
        assert!(!check("BATCHSZ", 0) && !check("BATCHSZ", 10_000));
        assert!(check("BATCHINT", 0) && check("BATCHINT", 999_999_999));
        assert!(!check("BATCHINT", -1));
    }

    #[test]
    fn sslciph_and_sslpeer_are_checked_when_set() {
        let check = |kw: &str, text: &str| {
            let (row, _) = ChannelAttributes::lookup(kw).expect("row");
            row.check(AttrValue::Text(text.into()))
        };
        assert!(check("SSLCIPH", "TLS_AES_128_GCM_SHA256").is_ok());
        assert!(check("SSLCIPH", "ANY_TLS12_OR_HIGHER").is_ok());
        assert!(check("SSLCIPH", "").is_ok());
        let e = check("SSLCIPH", "ECDHE_RSA_AES_256_CBC_SHA384").expect_err("CBC");
        assert!(e.to_string().contains("CBC"), "{e}");
        assert!(check("SSLPEER", "CN=app*,O=Example").is_ok());
        assert!(check("SSLPEER", "CN=a*b").is_err());
    }

    #[test]
    fn compression_lists_are_checked_and_kept_in_order() {
        let (row, _) = ChannelAttributes::lookup("COMPMSG").expect("row");
        assert!(row.applies_to(SVRCONN) && !row.applies_to(AMQP));
        let v = row
            .check(AttrValue::Text("lz4fast,ZLIBFAST".into()))
            .expect("a list");
        assert_eq!(v, AttrValue::Text("LZ4FAST,ZLIBFAST".into()));
        let mut a = ChannelAttributes::default();
        assert_eq!(a.message_compression, vec![MessageCompression::None]);
        (row.set)(&mut a, v);
        assert_eq!(
            a.message_compression,
            vec![MessageCompression::Lz4Fast, MessageCompression::ZlibFast]
        );
        assert_eq!((row.get)(&a), AttrValue::Text("LZ4FAST,ZLIBFAST".into()));
        assert!(row.check(AttrValue::Text("LZ4".into())).is_err());
        assert!(row.check(AttrValue::Text("RLE,RLE".into())).is_err());
        let (hdr, _) = ChannelAttributes::lookup("COMPHDR").expect("row");
        assert!(hdr.check(AttrValue::Text("SYSTEM,NONE".into())).is_ok());
        assert!(hdr
            .check(AttrValue::Text("SYSTEM,NONE,SYSTEM".into()))
            .is_err());
        assert!(hdr.check(AttrValue::Text("ZLIBFAST".into())).is_err());
    }

    #[test]
    fn cluster_channels_take_mqs_cluster_attributes_and_defaults() {
        for kw in [
            "CLUSTER", "CONNAME", "CLWLRANK", "CLWLPRTY", "CLWLWGHT", "NETPRTY", "BATCHSZ",
            "DISCINT", "SHORTRTY", "LONGTMR", "PUTAUT", "MRRTY", "BATCHINT",
        ] {
            assert!(
                applies(kw, ChannelType::ClusterReceiver),
                "{kw} on CLUSRCVR"
            );
        }
        for kw in [
            "CLUSTER", "CONNAME", "CLWLRANK", "CLWLPRTY", "CLWLWGHT", "DISCINT",
        ] {
            assert!(applies(kw, ChannelType::ClusterSender), "{kw} on CLUSSDR");
        }
        assert!(!applies("XMITQ", ChannelType::ClusterSender));
        assert!(!applies("XMITQ", ChannelType::ClusterReceiver));
        assert!(!applies("NETPRTY", ChannelType::ClusterSender));
        assert!(!applies("PUTAUT", ChannelType::ClusterSender));
        assert!(!applies("CLUSTER", ChannelType::Sender));
        let a = ChannelDefinition::new("TO.QM1", ChannelType::ClusterReceiver).attributes;
        assert_eq!(
            (
                a.cluster_workload_rank,
                a.cluster_workload_priority,
                a.cluster_workload_weight,
                a.network_priority
            ),
            (0, 0, 50, 0)
        );
        assert_eq!((a.disconnect_interval, a.batch_interval), (6000, 0));
        let check = |kw: &str, n: i32| {
            let (row, _) = ChannelAttributes::lookup(kw).expect("row");
            row.check(AttrValue::Int(n)).is_ok()
        };
        assert!(check("CLWLWGHT", 1) && check("CLWLWGHT", 99));
        assert!(!check("CLWLWGHT", 0) && !check("CLWLWGHT", 100));
        assert!(check("NETPRTY", 9) && !check("NETPRTY", 10));
        assert!(ChannelType::ClusterSender.sends_messages());
        assert!(!ChannelType::ClusterReceiver.sends_messages());
        assert_eq!(ChannelType::ClusterSender.mqcht(), 5);
        assert_eq!(ChannelType::ClusterReceiver.mqcht(), 6);
    }

    #[test]
    fn only_amqp_channels_start_and_tls_is_detected() {
        assert!(ChannelType::Amqp.can_start());
        assert!(!ChannelType::Svrconn.can_start());
        let a = ChannelAttributes {
            ssl_cipher: "ANY_TLS12_OR_HIGHER".into(),
            ..ChannelAttributes::default()
        };
        assert!(a.tls_requested());
    }

    #[test]
    fn old_definitions_load_with_amqp_defaults() {
        let json =
            r#"{"name":"OLD","channel_type":"Svrconn","attributes":{"share_conversations":3}}"#;
        let def: ChannelDefinition = serde_json::from_str(json).expect("loads");
        assert_eq!(def.attributes.share_conversations, 3);
        assert_eq!(def.attributes.port, 5672);
    }
}
