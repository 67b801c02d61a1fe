//! `Connection`: an hconn, the handle every MQI call starts from.

use std::sync::Arc;

use bytes::Bytes;
use ferry_mqi::{
    FixedStr, MessageDescriptor, MessageProperties, MqError, ObjectDescriptor, OpenOptions,
    PutOptions, ReasonCode, SubscriptionDescriptor,
};
use ferry_wire::{ConnRequest, MqscOutput, Reply, Request};

use crate::conversation::Conversation;
use crate::options::ConnectOptions;
use crate::pubsub::{self, Subscription, Topic};
use crate::queue::Queue;
use crate::transport::reserve_conversation;

/// A connection to a queue manager (an MQ hconn).
///
/// Calls on one connection run one at a time, as MQI calls on an hconn do; use one
/// connection per task for parallelism (they share sockets as SHARECNV allows).
/// Dropping a connection without [`Connection::disconnect`] ends it as an abnormal end
/// would: the queue manager backs out its unit of work.
///
/// ```no_run
/// # async fn demo() -> Result<(), ferry_mqi::MqError> {
/// use ferry_client::{Connection, ConnectOptions};
/// use ferry_mqi::{MessageDescriptor, ObjectDescriptor, OpenOptions, PutOptions};
///
/// let opts = ConnectOptions::client("localhost(1414)", "SYSTEM.DEF.SVRCONN").queue_manager("QM1");
/// let conn = Connection::connect(&opts).await?;
/// let od = ObjectDescriptor::queue("APP.QUEUE").unwrap();
/// let queue = conn.open(&od, OpenOptions::OUTPUT).await?;
/// let mut md = MessageDescriptor::default();
/// queue.put(&mut md, &PutOptions::default(), "hello").await?;
/// println!("put message {:02x?}", md.msg_id);
/// queue.close(Default::default()).await?;
/// conn.disconnect().await?;
/// # Ok(()) }
/// ```
pub struct Connection {
    conv: Arc<Conversation>,
    qmgr_name: FixedStr<48>,
    ended: bool,
}

impl Connection {
    /// Connects (MQCONNX): joins a shared socket with room or opens a new one, then
    /// opens a conversation on it.
    ///
    /// Fails with 2538 MQRC_HOST_NOT_AVAILABLE when nothing listens at the CONNAME,
    /// 2059 MQRC_Q_MGR_NOT_AVAILABLE when the bindings socket is missing, 2540
    /// MQRC_UNKNOWN_CHANNEL_NAME or 2058 MQRC_Q_MGR_NAME_ERROR when the server refuses.
    pub async fn connect(opts: &ConnectOptions) -> Result<Connection, MqError> {
        let (socket, id, generation) = reserve_conversation(opts).await?;
        let conv = Arc::new(Conversation::new(socket, id, generation));
        if opts.credentials.is_some()
            && conv.socket.negotiated.minor < ferry_wire::MINOR_WITH_CREDENTIALS
        {
            conv.release();
            return Err(MqError::from(ReasonCode::ChannelConfigError));
        }
        let req = Request::Conn(ConnRequest {
            qmgr_name: FixedStr::new(&opts.qmgr)
                .map_err(|_| MqError::from(ReasonCode::QMgrNameError))?,
            appl_name: FixedStr::truncating(&opts.appl_name),
            user_id: FixedStr::truncating(&opts.user_id),
            options: 0,
            credentials: opts.credentials.clone(),
        });
        match conv.call(&req).await {
            Ok(Reply::Conn { status, qmgr_name }) => match status.into_result() {
                Ok(_) => Ok(Connection {
                    qmgr_name: if qmgr_name.is_blank() {
                        conv.socket.qmgr_name
                    } else {
                        qmgr_name
                    },
                    conv,
                    ended: false,
                }),
                Err(e) => {
                    conv.release();
                    Err(e)
                }
            },
            Ok(_) => {
                conv.release();
                Err(MqError::from(ReasonCode::UnexpectedError))
            }
            Err(e) => {
                conv.release();
                Err(e)
            }
        }
    }

    /// The name of the queue manager this connection reached.
    pub fn queue_manager_name(&self) -> &str {
        self.qmgr_name.as_str()
    }

    /// The channel compression agreed for this connection's socket (COMPHDR, COMPMSG):
    /// NONE unless both ends list a technique.
    pub fn compression(&self) -> (ferry_mqi::HeaderCompression, ferry_mqi::MessageCompression) {
        let t = self.conv.socket.negotiated.compression;
        (t.header, t.message)
    }

    /// The largest message length negotiated for this connection's socket.
    pub fn max_message_length(&self) -> u32 {
        self.conv.max_msg_length()
    }

    /// Opens an object (MQOPEN). For a model queue the returned queue's
    /// [`Queue::resolved_name`] is the generated dynamic queue name.
    pub async fn open(
        &self,
        od: &ObjectDescriptor,
        options: OpenOptions,
    ) -> Result<Queue, MqError> {
        let reply = self.conv.call(&Request::Open { od: *od, options }).await?;
        match reply {
            Reply::Open {
                status,
                hobj,
                resolved_q_name,
                resolved_qmgr_name,
            } => {
                status.into_result()?;
                Ok(Queue::new(
                    self.conv.clone(),
                    hobj,
                    od.object_name,
                    resolved_q_name,
                    resolved_qmgr_name,
                ))
            }
            _ => Err(MqError::from(ReasonCode::UnexpectedError)),
        }
    }

    /// Opens the topic `topic_string` for publishing (MQOPEN of an MQOT_TOPIC object with
    /// that ObjectString, MQOO_OUTPUT | MQOO_FAIL_IF_QUIESCING). The topic need not be
    /// defined: the topic objects above it in the tree give its attributes. Fails with
    /// 2425 MQRC_TOPIC_STRING_ERROR for a string the queue manager refuses, 2441
    /// MQRC_OBJECT_STRING_ERROR beyond 10,240 bytes, and 2298
    /// MQRC_FUNCTION_NOT_SUPPORTED against a queue manager older than protocol minor 5.
    pub async fn open_topic(&self, topic_string: &str) -> Result<Topic, MqError> {
        let options = OpenOptions::OUTPUT | OpenOptions::FAIL_IF_QUIESCING;
        pubsub::open_topic(&self.conv, "", topic_string, options).await
    }

    /// Opens a topic for publishing as MQOPEN names one: `object_name` a topic object
    /// (blank: none) and `object_string` a topic string appended to the object's
    /// TOPICSTR, with `options` (MQOO_OUTPUT and its context and quiescing companions;
    /// 2045 MQRC_OPTION_NOT_VALID_FOR_TYPE otherwise). 2085 MQRC_UNKNOWN_OBJECT_NAME
    /// when the object is not defined.
    pub async fn open_topic_with(
        &self,
        object_name: &str,
        object_string: &str,
        options: OpenOptions,
    ) -> Result<Topic, MqError> {
        pubsub::open_topic(&self.conv, object_name, object_string, options).await
    }

    /// Subscribes (MQSUB) as `sd` says, the copies going to a queue the queue manager
    /// manages (MQSO_MANAGED) or, for a RESUME or ALTER without MANAGED, to the queue the
    /// subscription already has. For a managed subscription the returned handle holds
    /// that queue ([`Subscription::next`]).
    ///
    /// MQ's reasons: 2440 MQRC_SUB_NAME_ERROR for a durable subscription without SubName,
    /// 2432 MQRC_SUB_ALREADY_EXISTS for a CREATE of a name in use, 2428
    /// MQRC_NO_SUBSCRIPTION for a RESUME of one that does not exist, 2429
    /// MQRC_SUBSCRIPTION_IN_USE when another handle has it, 2459
    /// MQRC_SELECTOR_SYNTAX_ERROR for a SelectionString that does not compile, 2019
    /// MQRC_HOBJ_ERROR for a CREATE that is neither MANAGED nor given a queue; 2298
    /// against a queue manager older than protocol minor 5.
    pub async fn subscribe(&self, sd: &SubscriptionDescriptor) -> Result<Subscription, MqError> {
        pubsub::subscribe(&self.conv, sd, 0).await
    }

    /// Subscribes (MQSUB) with the copies going to `queue`, a local queue this
    /// connection opened (for output is enough): `sd` must not have MQSO_MANAGED. A
    /// durable subscription needs a queue that outlives the connection (2522
    /// MQRC_INVALID_DESTINATION for a temporary dynamic queue). Get the copies from
    /// `queue`. 2019 MQRC_HOBJ_ERROR when `queue` belongs to another connection.
    pub async fn subscribe_to(
        &self,
        sd: &SubscriptionDescriptor,
        queue: &Queue,
    ) -> Result<Subscription, MqError> {
        if !Arc::ptr_eq(queue.conversation(), &self.conv) {
            return Err(ReasonCode::HobjError.into());
        }
        pubsub::subscribe(&self.conv, sd, queue.hobj()).await
    }

    /// Opens, puts one message and closes (MQPUT1), as reply-sending servers do.
    /// `md` is updated with the generated MsgId, PutDate/PutTime and context.
    pub async fn put1(
        &self,
        od: &ObjectDescriptor,
        md: &mut MessageDescriptor,
        pmo: &PutOptions,
        body: impl Into<Bytes>,
    ) -> Result<(), MqError> {
        self.put1_encoded(od, md, pmo, Bytes::new(), body.into())
            .await
    }

    /// [`Connection::put1`] of a message with properties (e.g. a W3C `traceparent`);
    /// 2298 MQRC_FUNCTION_NOT_SUPPORTED from a queue manager below protocol minor 6.
    pub async fn put1_with_properties(
        &self,
        od: &ObjectDescriptor,
        md: &mut MessageDescriptor,
        pmo: &PutOptions,
        properties: &MessageProperties,
        body: impl Into<Bytes>,
    ) -> Result<(), MqError> {
        self.put1_encoded(od, md, pmo, properties.encode(), body.into())
            .await
    }

    /// MQPUT1 with `properties` in their `MessageProperties` encoding (empty: none).
    async fn put1_encoded(
        &self,
        od: &ObjectDescriptor,
        md: &mut MessageDescriptor,
        pmo: &PutOptions,
        properties: Bytes,
        body: Bytes,
    ) -> Result<(), MqError> {
        crate::queue::check_put_properties(&self.conv, &properties)?;
        if body.len() + properties.len() > self.conv.max_msg_length() as usize {
            return Err(MqError::from(ReasonCode::DataLengthError));
        }
        let reply = self
            .conv
            .call(&Request::Put1 {
                od: *od,
                md: *md,
                pmo: *pmo,
                properties,
                body,
            })
            .await?;
        match reply {
            Reply::Put1 { status, md: out } => {
                status.into_result()?;
                *md = out;
                Ok(())
            }
            _ => Err(MqError::from(ReasonCode::UnexpectedError)),
        }
    }

    /// Commits the unit of work (MQCMIT).
    pub async fn commit(&self) -> Result<(), MqError> {
        match self.conv.call(&Request::Cmit).await? {
            Reply::Cmit { status } => status.into_result().map(drop),
            _ => Err(MqError::from(ReasonCode::UnexpectedError)),
        }
    }

    /// Backs out the unit of work (MQBACK): gotten messages return with BackoutCount+1,
    /// puts disappear.
    pub async fn backout(&self) -> Result<(), MqError> {
        match self.conv.call(&Request::Back).await? {
            Reply::Back { status } => status.into_result().map(drop),
            _ => Err(MqError::from(ReasonCode::UnexpectedError)),
        }
    }

    /// Runs an MQSC command on the queue manager's command server and returns its
    /// output lines. A command that fails is not an `Err`: check [`MqscOutput::failed`].
    pub async fn mqsc(&self, command: &str) -> Result<MqscOutput, MqError> {
        let reply = self
            .conv
            .call(&Request::Mqsc {
                command: command.to_owned(),
            })
            .await?;
        match reply {
            Reply::Mqsc { status, output } => {
                status.into_result()?;
                Ok(output)
            }
            _ => Err(MqError::from(ReasonCode::UnexpectedError)),
        }
    }

    /// Disconnects (MQDISC): closes the connection's handles and commits its unit of
    /// work. The socket closes when its last conversation ends.
    pub async fn disconnect(mut self) -> Result<(), MqError> {
        self.ended = true;
        let result = self.conv.call(&Request::Disc { backout: false }).await;
        self.conv.release();
        match result? {
            Reply::Disc { status } => status.into_result().map(drop),
            _ => Err(MqError::from(ReasonCode::UnexpectedError)),
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let conv = self.conv.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn(async move {
                    let _ = conv.call(&Request::Disc { backout: true }).await;
                    conv.release();
                });
            }
            Err(_) => conv.release(),
        }
    }
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("queue_manager", &self.qmgr_name.as_str())
            .finish_non_exhaustive()
    }
}
