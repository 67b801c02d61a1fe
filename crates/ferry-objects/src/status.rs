//! Status records: what DISPLAY QSTATUS, CONN, LSSTATUS, CHSTATUS and QMSTATUS answer.
//!
//! The engine fills these from counters it keeps as it works (never by scanning on
//! request); MQSC prints them. Times are milliseconds since the Unix epoch, UTC.

use crate::channel::ChannelType;

/// Date and time of a moment (ms since the Unix epoch) as MQ shows them: `yyyy-mm-dd`,
/// `hh.mm.ss` (UTC).
pub fn date_time(ms: u64) -> (String, String) {
    let secs = ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        format!("{year:04}-{month:02}-{day:02}"),
        format!("{:02}.{:02}.{:02}", rem / 3600, (rem % 3600) / 60, rem % 60),
    )
}

/// DISPLAY QMSTATUS: the running queue manager and its recovery log.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct QmgrStatus {
    /// CONNS: connected applications.
    pub connections: u64,
    /// STARTDA/STARTTI: when the queue manager started, ms since epoch.
    pub started_ms: u64,
    /// The recovery log (absent when the queue manager runs without one).
    pub log: Option<RecoveryLogStatus>,
}

/// The recovery-log part of DISPLAY QMSTATUS: MQ's LOGTYPE, LOGPATH, CURRLOG, RECLOG and
/// LOGINUSE, and Ferry's own checkpoint position, counters and last slow write.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RecoveryLogStatus {
    /// LOGTYPE: CIRCULAR.
    pub log_type: String,
    /// LOGPATH: the log's directory.
    pub path: String,
    /// CURRLOG: the extent being written.
    pub current_extent: String,
    /// RECLOG: the oldest extent restart recovery needs.
    pub restart_extent: String,
    /// LOGINUSE: percentage of the ring between the restart point and the head.
    pub in_use_percent: u64,
    /// CHKPTLSN: the last checkpoint's LSN.
    pub checkpoint_lsn: u64,
    /// RESTLSN: where restart recovery starts reading.
    pub restart_lsn: u64,
    /// DURLSN: everything below it is on stable storage.
    pub durable_lsn: u64,
    /// LOGBYTES: bytes written to the log files since the start.
    pub bytes_written: u64,
    /// LOGRECS: records made durable since the start.
    pub records: u64,
    /// LOGFLUSH: flushes (write + fdatasync rounds) since the start.
    pub flushes: u64,
    /// LOGCHKPT: checkpoints since the start.
    pub checkpoints: u64,
    /// SLOWWRT: log writes slower than AMQ_IODELAY since the start.
    pub slow_writes: u64,
    /// LASTSLOW: the last slow write (operation, bytes, file, time, threshold).
    pub last_slow_write: String,
}

/// DISPLAY QSTATUS TYPE(QUEUE): one queue's live state.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct QueueStatus {
    /// Queue name.
    pub name: String,
    /// CURDEPTH: messages on the queue, including uncommitted puts and gets.
    pub current_depth: u64,
    /// IPPROCS: handles open for input.
    pub open_input_count: u32,
    /// OPPROCS: handles open for output.
    pub open_output_count: u32,
    /// UNCOM: uncommitted puts and gets on the queue.
    pub uncommitted: u64,
    /// LPUTDATE/LPUTTIME: last put, ms since epoch.
    pub last_put_ms: Option<u64>,
    /// LGETDATE/LGETTIME: last destructive get, ms since epoch.
    pub last_get_ms: Option<u64>,
    /// MSGAGE: age in seconds of the oldest message.
    pub oldest_msg_age_secs: Option<u64>,
    /// CURFSIZE: bytes on disk of the queue's queue file (0 when it has none; shown in
    /// MB, rounded up, as MQ does).
    #[serde(default)]
    pub queue_file_bytes: u64,
    /// CURMAXFS: the queue's MAXFSIZE in MB (DEFAULT resolved).
    #[serde(default)]
    pub max_file_size_mb: u64,
}

/// DISPLAY QSTATUS TYPE(HANDLE): one open handle on a queue.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HandleStatus {
    /// Queue name.
    pub queue: String,
    /// CONN: the connection id (hex, as MQ prints it).
    pub connection_id: String,
    /// APPLTAG: the application's name.
    pub application_tag: String,
    /// CHANNEL: channel the connection came in on (blank for bindings).
    pub channel: String,
    /// CONNAME: the client's address.
    pub connection_name: String,
    /// USERID.
    pub user_id: String,
    /// PID of a bindings application, when known.
    pub pid: Option<u32>,
    /// OPENOPTS: the MQOO value.
    pub open_options: u32,
    /// INPUT: SHARED, EXCL or NO.
    pub input: String,
    /// OUTPUT: opened for output.
    pub output: bool,
    /// BROWSE: opened for browse.
    pub browse: bool,
    /// INQUIRE: opened for inquire.
    pub inquire: bool,
    /// SET: opened for set.
    pub set: bool,
}

/// DISPLAY CONN: one application connection.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ConnectionStatus {
    /// CONN: the connection id (hex).
    pub connection_id: String,
    /// APPLTAG.
    pub application_tag: String,
    /// CHANNEL (blank for bindings).
    pub channel: String,
    /// CONNAME.
    pub connection_name: String,
    /// USERID.
    pub user_id: String,
    /// PID of a bindings application, when known.
    pub pid: Option<u32>,
    /// UOWSTATE: NONE or ACTIVE.
    pub uow_active: bool,
    /// Messages in the current unit of work.
    pub uow_messages: u64,
    /// Names of the objects it has open.
    pub open_objects: Vec<String>,
    /// When it connected, ms since epoch.
    pub connected_ms: u64,
}

/// DISPLAY LSSTATUS: one running listener.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ListenerStatus {
    /// Listener name.
    pub name: String,
    /// STATUS: RUNNING, STOPPED.
    pub running: bool,
    /// PORT actually bound.
    pub port: u16,
    /// IPADDR bound.
    pub ip_address: String,
    /// STARTDA/STARTTI, ms since epoch.
    pub started_ms: Option<u64>,
}

/// DISPLAY CHSTATUS: one started channel (an AMQP channel that was started, running or
/// stopped since), or a SVRCONN channel with client sockets (its [`instances`], one
/// record each, as MQ shows server-connection channels). A channel never started, or a
/// SVRCONN channel without sockets, has no status record, as in MQ (INACTIVE).
///
/// [`instances`]: ChannelStatus::instances
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChannelStatus {
    /// CHANNEL: the channel's name.
    pub name: String,
    /// CHLTYPE.
    pub channel_type: ChannelType,
    /// STATUS: RUNNING (listening) or STOPPED (after STOP CHANNEL).
    pub running: bool,
    /// PORT the channel listens on (or listened on, when stopped).
    pub port: u16,
    /// CHSTADA/CHSTATI: when it started, ms since epoch.
    pub started_ms: Option<u64>,
    /// MSGSNT: messages sent to clients since the channel started (all connections,
    /// closed ones included).
    pub messages_sent: u64,
    /// MSGRCVD: messages received from clients since the channel started.
    pub messages_received: u64,
    /// BYTSSENT: bytes sent since the channel started.
    pub bytes_sent: u64,
    /// BYTSRCVD: bytes received since the channel started.
    pub bytes_received: u64,
    /// LSTMSGDA/LSTMSGTI: last message sent or received, ms since epoch.
    pub last_message_ms: Option<u64>,
    /// The connected clients (CONNS counts them; CLIENTID(x) shows each).
    pub clients: Vec<ChannelClientStatus>,
    /// SVRCONN: one record per channel instance (client socket); empty for AMQP.
    #[serde(default)]
    pub instances: Vec<ChannelInstanceStatus>,
    /// A message channel's agent (SDR, RCVR, SVR, RQSTR); `None` for other types.
    #[serde(default)]
    pub message: Option<MessageChannelStatus>,
}

crate::keyword_enum! {
    /// STATUS of a message channel (MQCHS), as MQ names the states.
    MessageChannelState {
        /// No agent: never started, or ended normally (DISCINT).
        Inactive = "INACTIVE",
        /// Connecting to the partner and agreeing on the channel's values.
        Binding = "BINDING",
        /// Waiting to start.
        Starting = "STARTING",
        /// Moving messages, or waiting for them.
        Running = "RUNNING",
        /// Ending after STOP CHANNEL.
        Stopping = "STOPPING",
        /// A start or the conversation failed; it starts again after SHORTTMR or LONGTMR.
        Retrying = "RETRYING",
        /// Stopped by STOP CHANNEL or after the retries ran out: START CHANNEL to resume.
        Stopped = "STOPPED",
        /// A requester asking its server to start.
        Requesting = "REQUESTING",
        /// A receiver waiting to retry a put (MRRTY, MRTMR).
        Paused = "PAUSED",
    }
}

impl MessageChannelState {
    /// True while the channel has an agent STOP CHANNEL can end.
    pub fn is_active(self) -> bool {
        !matches!(
            self,
            MessageChannelState::Inactive | MessageChannelState::Stopped
        )
    }
}

/// DISPLAY CHSTATUS of a message channel: the agent's state, counters and
/// synchronisation, as MQ shows them.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MessageChannelStatus {
    /// STATUS.
    pub state: MessageChannelState,
    /// SUBSTATE: what the agent does now (MQGET, SEND, RECEIVE, ENDBATCH, HEARTBEAT,
    /// NETCONNECT, RESYNCH, MQPUT, or blank).
    pub substate: String,
    /// CONNAME: the partner's address.
    pub connection_name: String,
    /// XMITQ: the transmission queue (sending ends).
    pub xmit_q: String,
    /// RQMNAME: the partner queue manager.
    pub remote_qmgr: String,
    /// MSGS: messages sent or received since the channel started.
    pub messages: u64,
    /// BATCHES: batches completed.
    pub batches: u64,
    /// BYTSSENT.
    pub bytes_sent: u64,
    /// BYTSRCVD.
    pub bytes_received: u64,
    /// CURSEQNO: the last sequence number sent or received.
    pub current_seq: u32,
    /// LSTSEQNO: the last sequence number of the last committed batch.
    pub last_seq: u32,
    /// CURLUWID: the batch in progress.
    pub current_luwid: u64,
    /// LSTLUWID: the last committed batch.
    pub last_luwid: u64,
    /// INDOUBT: the sending end waits for the partner to confirm a batch.
    pub in_doubt: bool,
    /// CURMSGS: messages in the current batch.
    pub current_messages: u32,
    /// SHORTRTS: short retries left.
    pub short_retries_left: u64,
    /// LONGRTS: long retries left.
    pub long_retries_left: u64,
    /// BATCHSZ agreed with the partner.
    pub batch_size: u32,
    /// HBINT agreed with the partner, seconds.
    pub heartbeat_interval: u32,
    /// MAXMSGL agreed with the partner.
    pub max_msg_length: u32,
    /// NPMSPEED agreed with the partner: true for FAST.
    pub np_speed_fast: bool,
    /// CHSTADA/CHSTATI: when the conversation started, ms since epoch.
    pub started_ms: Option<u64>,
    /// LSTMSGDA/LSTMSGTI: last message sent or received, ms since epoch.
    pub last_message_ms: Option<u64>,
    /// NETTIME: microseconds of the last batch's confirmation round trip.
    pub network_time_us: Option<u64>,
    /// XQTIME: microseconds the last message sent spent on the transmission queue.
    pub xmitq_time_us: Option<u64>,
    /// STOPREQ: a STOP CHANNEL is waiting to take effect.
    pub stop_requested: bool,
    /// SSLCIPH, SSLPEER, SSLCERTI and SSLRKEYS of the conversation (blank without TLS).
    #[serde(default)]
    pub tls: TlsStatus,
    /// BUFSSENT: transmission buffers (channel frames) sent.
    #[serde(default)]
    pub buffers_sent: u64,
    /// BUFSRCVD: transmission buffers (channel frames) received.
    #[serde(default)]
    pub buffers_received: u64,
    /// COMPHDR, COMPMSG, COMPRATE, COMPTIME: compression of the messages sent (the
    /// sending end) or received (the receiving end).
    #[serde(default)]
    pub compression: CompressionStatus,
}

impl MessageChannelStatus {
    /// An agent in `state` with no conversation yet.
    pub fn new(state: MessageChannelState) -> Self {
        MessageChannelStatus {
            state,
            substate: String::new(),
            connection_name: String::new(),
            xmit_q: String::new(),
            remote_qmgr: String::new(),
            messages: 0,
            batches: 0,
            bytes_sent: 0,
            bytes_received: 0,
            current_seq: 0,
            last_seq: 0,
            current_luwid: 0,
            last_luwid: 0,
            in_doubt: false,
            current_messages: 0,
            short_retries_left: 0,
            long_retries_left: 0,
            batch_size: 0,
            heartbeat_interval: 0,
            max_msg_length: 0,
            np_speed_fast: true,
            started_ms: None,
            last_message_ms: None,
            network_time_us: None,
            xmitq_time_us: None,
            stop_requested: false,
            tls: TlsStatus::default(),
            buffers_sent: 0,
            buffers_received: 0,
            compression: CompressionStatus::default(),
        }
    }
}

impl ChannelStatus {
    /// A status record with no traffic and no clients.
    pub fn new(
        name: impl Into<String>,
        channel_type: ChannelType,
        running: bool,
        port: u16,
    ) -> Self {
        ChannelStatus {
            name: name.into(),
            channel_type,
            running,
            port,
            started_ms: None,
            messages_sent: 0,
            messages_received: 0,
            bytes_sent: 0,
            bytes_received: 0,
            last_message_ms: None,
            clients: Vec::new(),
            instances: Vec::new(),
            message: None,
        }
    }
}

/// DISPLAY CHSTATUS of a SVRCONN channel: one channel instance, i.e. one client socket,
/// from its accept (handshaking) to its close.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChannelInstanceStatus {
    /// STATUS: false (BINDING) while the client handshakes (its hello or its first MQCONN
    /// not done yet), true (RUNNING) once a conversation connected.
    pub running: bool,
    /// CONNAME: the client's address.
    pub connection_name: String,
    /// CURSHCNV: conversations on the socket now.
    pub current_conversations: u32,
    /// MAXSHCNV: conversations the socket may carry (the negotiated SHARECNV; 0 before
    /// the hello).
    pub max_conversations: u32,
    /// HBINT: the negotiated heartbeat interval in seconds.
    pub heartbeat_interval: u32,
    /// MAXMSGL: the negotiated maximum message length.
    pub max_msg_length: u32,
    /// RAPPLTAG: the application name the client sent in its hello.
    pub remote_application: String,
    /// MSGS: MQI calls handled (MQ counts MQI calls for server-connection channels).
    pub calls: u64,
    /// BYTSSENT: bytes sent to the client.
    pub bytes_sent: u64,
    /// BYTSRCVD: bytes received from the client.
    pub bytes_received: u64,
    /// LSTMSGDA/LSTMSGTI: the last MQI call, ms since epoch.
    pub last_call_ms: Option<u64>,
    /// CHSTADA/CHSTATI: when the socket was accepted, ms since epoch.
    pub started_ms: u64,
    /// SSLCIPH, SSLPEER, SSLCERTI, SSLRKEYS: what TLS agreed (blank without TLS).
    pub tls: TlsStatus,
    /// COMPHDR, COMPMSG, COMPRATE, COMPTIME: channel compression.
    #[serde(default)]
    pub compression: CompressionStatus,
}

/// Channel compression on one channel instance, as DISPLAY CHSTATUS shows it. Each field
/// holds two values, as MQ's do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CompressionStatus {
    /// COMPHDR: the header technique agreed, and the one the last message sent used.
    pub header: (ferry_mqi::HeaderCompression, ferry_mqi::HeaderCompression),
    /// COMPMSG: the message technique agreed, and the one the last message sent used
    /// (NONE when its data did not shrink).
    pub message: (ferry_mqi::MessageCompression, ferry_mqi::MessageCompression),
    /// COMPRATE: percent of the compressible bytes saved, short term and long term.
    pub rate: (u32, u32),
    /// COMPTIME: microseconds spent compressing or expanding one message, short term and
    /// long term.
    pub time: (u32, u32),
}

/// What TLS agreed on one conversation, as DISPLAY CHSTATUS shows it; blank and zero
/// when the conversation does not use TLS.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TlsStatus {
    /// SSLCIPH: the CipherSpec negotiated.
    pub cipher_spec: String,
    /// SSLPEER: the partner certificate's subject DN.
    pub peer: String,
    /// SSLCERTI: the partner certificate's issuer DN.
    pub cert_issuer: String,
    /// SSLRKEYS: secret-key resets so far.
    pub key_resets: u64,
}

/// DISPLAY CHSTATUS(x) CLIENTID(id): one client connected to an AMQP channel.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChannelClientStatus {
    /// CLIENTID: the AMQP container id the client sent in its open frame.
    pub client_id: String,
    /// CONNAME: the client's address.
    pub connection_name: String,
    /// MCAUSER: the user id the connection is authorized as.
    pub user_id: String,
    /// MSGSNT: messages sent to this client.
    pub messages_sent: u64,
    /// MSGRCVD: messages received from this client.
    pub messages_received: u64,
    /// BYTSSENT: bytes sent to this client.
    pub bytes_sent: u64,
    /// BYTSRCVD: bytes received from this client.
    pub bytes_received: u64,
    /// LSTMSGDA/LSTMSGTI: last message sent or received, ms since epoch.
    pub last_message_ms: Option<u64>,
    /// CHSTADA/CHSTATI: when it connected, ms since epoch.
    pub connected_ms: u64,
    /// SSLCIPH, SSLPEER, SSLCERTI, SSLRKEYS: what TLS agreed (blank without TLS).
    #[serde(default)]
    pub tls: TlsStatus,
}

/// One subscription as DISPLAY SBSTATUS and DISPLAY TPSTATUS TYPE(SUB) show it.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SubscriptionStatusRecord {
    /// SUB (blank for an unnamed non-durable subscription).
    pub name: String,
    /// SUBID, 48 hex digits.
    pub sub_id: String,
    /// TOPICSTR: the subscription's topic string (its node of the topic tree).
    pub topic_string: String,
    /// SUBTYPE: API or ADMIN.
    pub sub_type: String,
    /// DURABLE.
    pub durable: bool,
    /// SUBUSER.
    pub user_id: String,
    /// ACTCONN: the connection that has it open, as DISPLAY CONN shows it; blank when none.
    pub active_connection: String,
    /// RESMDATE/RESMTIME: when an MQSUB last made or resumed it (the queue manager's
    /// start for a durable subscription nobody resumed since).
    pub resumed_ms: u64,
    /// LMSGDATE/LMSGTIME: when it last received a copy.
    pub last_message_ms: Option<u64>,
    /// NUMMSGS: copies received since the queue manager started.
    pub messages: u64,
}

/// One node of the topic tree as DISPLAY TPSTATUS TYPE(TOPIC) shows it: every ASPARENT
/// resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicNodeStatus {
    /// TOPICSTR.
    pub topic_string: String,
    /// ADMIN: the topic object of exactly this node (blank: none).
    pub admin: String,
    /// The attributes in force at the node.
    pub resolved: crate::ResolvedTopicAttributes,
    /// PUBSCOPE in force (QMGR or ALL).
    pub pub_scope: &'static str,
    /// SUBSCOPE in force (QMGR or ALL).
    pub sub_scope: &'static str,
    /// PUBCOUNT: handles open for publishing on it.
    pub pub_count: u64,
    /// SUBCOUNT: subscriptions on it (durable ones nobody has open included).
    pub sub_count: u64,
    /// RETAINED: it has a retained publication.
    pub retained: bool,
}

/// One handle open for publishing, as DISPLAY TPSTATUS TYPE(PUB) shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PublisherStatus {
    /// TOPICSTR of its node.
    pub topic_string: String,
    /// ACTCONN: the connection, as DISPLAY CONN shows it.
    pub active_connection: String,
    /// LPUBDATE/LPUBTIME: not tracked yet (always None).
    pub last_publish_ms: Option<u64>,
    /// NUMPUBS: not tracked yet (always 0).
    pub publishes: u64,
}

/// DISPLAY PUBSUB TYPE(LOCAL): this queue manager's publish/subscribe engine.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PubSubStatus {
    /// SUBCOUNT: subscriptions (durable ones nobody has open included).
    pub sub_count: u64,
    /// TPCOUNT: nodes of the topic tree.
    pub topic_count: u64,
}

/// DISPLAY CLUSQMGR: one queue manager of a cluster as this queue manager knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterQmgrStatus {
    /// CLUSQMGR: its name (for a manual CLUSSDR that has not reached its full
    /// repository yet, MQ's SYSTEM.TEMPQMGR.<conname>).
    pub name: String,
    /// CLUSTER.
    pub cluster: String,
    /// CHANNEL: its CLUSRCVR's name (the cluster-sender to it).
    pub channel: String,
    /// QMTYPE: REPOS (a full repository) or NORMAL.
    pub full_repository: bool,
    /// STATUS of the cluster channel to it (this queue manager's own entry: its
    /// CLUSRCVR, RUNNING).
    pub status: String,
    /// DEFTYPE: CLUSRCVR (this queue manager), CLUSSDR (manual, not confirmed yet),
    /// CLUSSDRA (auto-defined), CLUSSDRB (manual and confirmed by the member's record).
    pub definition_type: &'static str,
    /// CONNAME.
    pub connection_name: String,
    /// QMID.
    pub qmid: String,
    /// SUSPEND.
    pub suspended: bool,
    /// CLWLRANK.
    pub rank: i32,
    /// CLWLPRTY.
    pub priority: i32,
    /// CLWLWGHT.
    pub weight: i32,
    /// NETPRTY.
    pub network_priority: i32,
    /// XMITQ: the transmission queue of the cluster-sender to it
    /// (SYSTEM.CLUSTER.TRANSMIT.QUEUE, or its own with DEFCLXQ(CHANNEL)); blank for this
    /// queue manager's own entry.
    pub xmit_q: String,
}

/// DISPLAY QCLUSTER: one instance of a cluster queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterQueueStatus {
    /// QUEUE.
    pub queue: String,
    /// CLUSQMGR: the queue manager hosting it.
    pub qmgr: String,
    /// CLUSTER.
    pub cluster: String,
    /// QMID of the hosting queue manager.
    pub qmid: String,
    /// DEFBIND keyword.
    pub default_bind: &'static str,
    /// PUT(ENABLED).
    pub put_enabled: bool,
    /// CLWLRANK.
    pub rank: i32,
    /// CLWLPRTY.
    pub priority: i32,
}
