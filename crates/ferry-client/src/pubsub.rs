//! Publish/subscribe: [`Topic`], a topic opened for publishing, and [`Subscription`], an
//! MQSUB's handle with the queue its copies arrive on.
//!
//! Both need a queue manager of protocol minor 5 or later; against an older one the
//! calls fail with 2298 MQRC_FUNCTION_NOT_SUPPORTED without being sent.
//!
//! ```no_run
//! # async fn demo() -> Result<(), ferry_mqi::MqError> {
//! use ferry_client::{Connection, ConnectOptions};
//! use ferry_mqi::SubscriptionDescriptor;
//!
//! let opts = ConnectOptions::client("localhost(1414)", "SYSTEM.DEF.SVRCONN");
//! let conn = Connection::connect(&opts).await?;
//! let sub = conn.subscribe(&SubscriptionDescriptor::managed("Price/Fruit/#")).await?;
//! let topic = conn.open_topic("Price/Fruit/Apple").await?;
//! topic.publish("1.20").await?;
//! if let Some(copy) = sub.next(5_000).await? {
//!     println!("{:?} on {:?}", copy.message.data, copy.message.property("MQTopicString"));
//! }
//! sub.close(false).await?;
//! # Ok(()) }
//! ```

use std::sync::Arc;

use bytes::Bytes;
use ferry_mqi::subscription::MAX_SUB_STRING_LENGTH;
use ferry_mqi::{
    CloseOptions, FixedStr, GetOptionFlags, GetOptions, MessageDescriptor, MqError, OpenOptions,
    PutOptionFlags, PutOptions, ReasonCode, SubscriptionDescriptor,
};
use ferry_wire::{Reply, Request, MINOR_WITH_PUBSUB};

use crate::conversation::Conversation;
use crate::queue::{GotMessage, Queue};

fn unexpected() -> MqError {
    MqError::from(ReasonCode::UnexpectedError)
}

/// 2298 unless the socket agreed a protocol minor with publish/subscribe.
pub(crate) fn check_pubsub(conv: &Conversation) -> Result<(), MqError> {
    if conv.socket.negotiated.minor < MINOR_WITH_PUBSUB {
        return Err(ReasonCode::FunctionNotSupported.into());
    }
    Ok(())
}

/// The MQSD bounds the wire enforces, checked with the reasons the queue manager would
/// give, so a descriptor that is too long fails its call instead of breaking the
/// connection.
pub(crate) fn check_sd(sd: &SubscriptionDescriptor) -> Result<(), MqError> {
    let checks = [
        (sd.object_name.len() > 48, ReasonCode::ObjectNameError),
        (
            sd.object_string.len() > MAX_SUB_STRING_LENGTH,
            ReasonCode::ObjectStringError,
        ),
        (sd.alternate_user_id.len() > 12, ReasonCode::SdError),
        (
            sd.sub_name.len() > MAX_SUB_STRING_LENGTH,
            ReasonCode::SubNameError,
        ),
        (
            sd.sub_user_data.len() > MAX_SUB_STRING_LENGTH,
            ReasonCode::SubUserDataError,
        ),
        (
            sd.selection_string.len() > MAX_SUB_STRING_LENGTH,
            ReasonCode::SelectionStringError,
        ),
    ];
    match checks.iter().find(|(bad, _)| *bad) {
        Some((_, reason)) => Err((*reason).into()),
        None => Ok(()),
    }
}

/// MQOPEN of a topic (OPENTOPIC).
pub(crate) async fn open_topic(
    conv: &Arc<Conversation>,
    object_name: &str,
    object_string: &str,
    options: OpenOptions,
) -> Result<Topic, MqError> {
    check_pubsub(conv)?;
    let object_name =
        FixedStr::new(object_name).map_err(|_| MqError::from(ReasonCode::ObjectNameError))?;
    if object_string.len() > ferry_wire::MAX_OBJECT_STRING_LEN {
        return Err(ReasonCode::ObjectStringError.into());
    }
    let req = Request::OpenTopic {
        object_name,
        object_string: object_string.to_owned(),
        options,
    };
    match conv.call(&req).await? {
        Reply::OpenTopic {
            status,
            hobj,
            topic_string,
        } => {
            status.into_result()?;
            let handle = Queue::new(
                conv.clone(),
                hobj,
                object_name,
                FixedStr::BLANK,
                FixedStr::BLANK,
            );
            Ok(Topic {
                handle,
                topic_string,
            })
        }
        _ => Err(unexpected()),
    }
}

/// MQSUB, the copies going to the queue of `provided` (its handle number, 0 for none).
pub(crate) async fn subscribe(
    conv: &Arc<Conversation>,
    sd: &SubscriptionDescriptor,
    provided: i32,
) -> Result<Subscription, MqError> {
    check_pubsub(conv)?;
    check_sd(sd)?;
    let req = Request::Sub {
        sd: sd.clone(),
        hobj: provided,
    };
    match conv.call(&req).await? {
        Reply::Sub {
            status,
            hsub,
            hobj,
            sub_id,
            topic_string,
            destination,
        } => {
            status.into_result()?;
            let queue = (hobj != 0).then(|| {
                Queue::new(
                    conv.clone(),
                    hobj,
                    destination,
                    destination,
                    FixedStr::BLANK,
                )
            });
            Ok(Subscription {
                conv: conv.clone(),
                hsub,
                queue,
                sub_id,
                topic_string,
                destination: destination.as_str().to_string(),
                closed: false,
            })
        }
        _ => Err(unexpected()),
    }
}

/// A topic opened for publishing (MQOPEN of an MQOT_TOPIC object for output), from
/// [`crate::Connection::open_topic`].
///
/// Each put is a publication: the queue manager puts a copy on the queue of every
/// subscription whose topic filter matches [`Topic::topic_string`]. Dropping a topic
/// without [`Topic::close`] closes it in the background, as a [`Queue`] does.
pub struct Topic {
    handle: Queue,
    topic_string: String,
}

impl Topic {
    /// The resolved topic string the publications go to (MQOD ResObjectString).
    pub fn topic_string(&self) -> &str {
        &self.topic_string
    }

    /// The object handle number.
    pub fn hobj(&self) -> i32 {
        self.handle.hobj()
    }

    /// Publishes `body` with a default descriptor outside any unit of work
    /// (MQPMO_NO_SYNCPOINT): the copies are on the subscribers' queues when it returns.
    /// Returns the output descriptor (MsgId, PutDate/PutTime), or the failure.
    pub async fn publish(&self, body: impl Into<Bytes>) -> Result<MessageDescriptor, MqError> {
        let mut md = MessageDescriptor::default();
        let pmo = PutOptions::new(PutOptionFlags::NO_SYNCPOINT);
        self.put(&mut md, &pmo, body).await?;
        Ok(md)
    }

    /// Publishes (MQPUT on the topic handle). On return `md` holds the output
    /// descriptor. `Ok(Some(warning))` is MQCC_WARNING: 2550 MQRC_NO_SUBS_MATCHED when
    /// `pmo` has `WARN_IF_NO_SUBS_MATCHED` and no subscription received a copy; 2049
    /// when the priority was above 9. Under `SYNCPOINT` the copies appear when the
    /// connection commits.
    pub async fn put(
        &self,
        md: &mut MessageDescriptor,
        pmo: &PutOptions,
        body: impl Into<Bytes>,
    ) -> Result<Option<ReasonCode>, MqError> {
        self.handle
            .put_with_warning(md, pmo, Bytes::new(), body.into())
            .await
    }

    /// Closes the topic handle (MQCLOSE).
    pub async fn close(self) -> Result<(), MqError> {
        self.handle.close(CloseOptions::empty()).await.map(drop)
    }
}

impl std::fmt::Debug for Topic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Topic")
            .field("topic_string", &self.topic_string)
            .field("hobj", &self.handle.hobj())
            .finish()
    }
}

/// One copy of a publication received by [`Subscription::next`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Publication {
    /// The copy's descriptor: its CorrelId is the SubId (or the subscription's
    /// SubCorrelId with MQSO_SET_CORREL_ID).
    pub md: MessageDescriptor,
    /// The body and properties (MQTopicString: the topic it was published on;
    /// MQSubUserData when the subscription has SubUserData).
    pub message: GotMessage,
}

impl Publication {
    /// The topic string the publication was made on (its MQTopicString property).
    pub fn topic_string(&self) -> Option<String> {
        match self.message.property("MQTopicString") {
            Some(ferry_mqi::PropertyValue::String(s)) => Some(s),
            _ => None,
        }
    }
}

/// A subscription made or resumed by [`crate::Connection::subscribe`] or
/// [`crate::Connection::subscribe_to`] (MQSUB): its handle (Hsub), SubId, resolved topic
/// string and, for a managed subscription, the queue the queue manager made for its
/// copies, opened for input, browse and inquire.
///
/// Receive copies with [`Subscription::next`] or [`Subscription::get`] (or any call on
/// [`Subscription::queue`]); with a queue of your own, get from that queue.
///
/// End it with [`Subscription::close`]. Dropping a subscription without closing it
/// closes it in the background with MQCO_NONE, as MQ does when a handle is left: a
/// non-durable subscription ends, a durable one is kept for a later RESUME; the managed
/// queue's handle is closed after it.
pub struct Subscription {
    conv: Arc<Conversation>,
    hsub: i32,
    queue: Option<Queue>,
    sub_id: [u8; 24],
    topic_string: String,
    destination: String,
    closed: bool,
}

impl Subscription {
    /// The subscription handle (MQ's Hsub).
    pub fn hsub(&self) -> i32 {
        self.hsub
    }

    /// SubId: the CorrelId of every copy unless MQSO_SET_CORREL_ID gave another.
    pub fn sub_id(&self) -> [u8; 24] {
        self.sub_id
    }

    /// The resolved topic string (MQSD ResObjectString), wildcards included.
    pub fn topic_string(&self) -> &str {
        &self.topic_string
    }

    /// The name of the queue the copies go to (a managed queue's generated name).
    pub fn destination(&self) -> &str {
        &self.destination
    }

    /// The managed queue, opened for input, browse and inquire; `None` when the copies
    /// go to a queue the application gave ([`crate::Connection::subscribe_to`], or a
    /// RESUME that kept it).
    pub fn queue(&self) -> Option<&Queue> {
        self.queue.as_ref()
    }

    /// MQGET on the managed queue ([`Queue::get`]); 2019 MQRC_HOBJ_ERROR when there is
    /// none.
    pub async fn get(
        &self,
        md: &mut MessageDescriptor,
        gmo: &GetOptions,
        max_len: usize,
    ) -> Result<GotMessage, MqError> {
        let queue = self.queue.as_ref().ok_or(ReasonCode::HobjError)?;
        queue.get(md, gmo, max_len).await
    }

    /// The copies on the managed queue as a stream: each item is the next copy, waiting
    /// up to `wait_ms` for it (-1: without limit); the stream ends when none came in time,
    /// and after an error, which it yields first.
    pub fn publications(
        &self,
        wait_ms: i32,
    ) -> impl futures_util::Stream<Item = Result<Publication, MqError>> + '_ {
        futures_util::stream::unfold(false, move |ended| async move {
            if ended {
                return None;
            }
            match self.next(wait_ms).await {
                Ok(Some(p)) => Some((Ok(p), false)),
                Ok(None) => None,
                Err(e) => Some((Err(e), true)),
            }
        })
    }

    /// MQSUBRQ: the retained publications this subscription matches are put on its queue
    /// again (a subscription made with MQSO_PUBLICATIONS_ON_REQUEST gets them only this
    /// way). Returns how many (MQSRO NumPubs); 2437 MQRC_NO_RETAINED_MSG when none.
    pub async fn request_publications(&self) -> Result<i32, MqError> {
        check_pubsub(&self.conv)?;
        let req = Request::SubRq {
            hsub: self.hsub,
            action: ferry_mqi::subscription::ACTION_PUBLICATION,
        };
        match self.conv.call(&req).await? {
            Reply::SubRq { status, num_pubs } => {
                status.into_result()?;
                Ok(num_pubs)
            }
            _ => Err(unexpected()),
        }
    }

    /// The next copy on the managed queue, waiting up to `wait_ms` milliseconds (-1:
    /// without limit), removed outside any unit of work; `Ok(None)` when none came in
    /// time. Copies up to the connection's maximum message length are returned whole.
    pub async fn next(&self, wait_ms: i32) -> Result<Option<Publication>, MqError> {
        let gmo = GetOptions {
            options: GetOptionFlags::WAIT
                | GetOptionFlags::NO_SYNCPOINT
                | GetOptionFlags::FAIL_IF_QUIESCING,
            wait_interval: wait_ms,
            ..GetOptions::default()
        };
        let mut md = MessageDescriptor::default();
        let max = self.conv.max_msg_length() as usize;
        match self.get(&mut md, &gmo, max).await {
            Ok(message) => Ok(Some(Publication { md, message })),
            Err(e) if e.reason == ReasonCode::NoMsgAvailable => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Ends the handle (MQCLOSE of the Hsub), then closes the managed queue's handle.
    /// `keep` (MQCO_KEEP_SUB) keeps a durable subscription, its queue and the copies
    /// that arrive meanwhile for a later RESUME (2046 MQRC_OPTIONS_ERROR for a
    /// non-durable one); otherwise (MQCO_REMOVE_SUB) the subscription ends and a managed
    /// queue goes with it.
    pub async fn close(mut self, keep: bool) -> Result<(), MqError> {
        let options = if keep {
            CloseOptions::KEEP_SUB
        } else {
            CloseOptions::REMOVE_SUB
        };
        // On failure the subscription is still open: `self` is dropped on return, which
        // closes it (MQCO_NONE) and its queue in the background.
        close_hsub(&self.conv, self.hsub, options).await?;
        self.closed = true;
        match self.queue.take() {
            Some(queue) => queue.close(CloseOptions::empty()).await.map(drop),
            None => Ok(()),
        }
    }
}

async fn close_hsub(conv: &Conversation, hsub: i32, options: CloseOptions) -> Result<(), MqError> {
    let req = Request::Close {
        hobj: hsub,
        options,
    };
    match conv.call(&req).await? {
        Reply::Close { status } => status.into_result().map(drop),
        _ => Err(unexpected()),
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if self.closed {
            return;
        }
        let queue = self.queue.take();
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let conv = self.conv.clone();
            let hsub = self.hsub;
            rt.spawn(async move {
                let _ = close_hsub(&conv, hsub, CloseOptions::empty()).await;
                // The queue's handle after the subscription's, as an application would.
                drop(queue);
            });
        }
    }
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("hsub", &self.hsub)
            .field("topic_string", &self.topic_string)
            .field("destination", &self.destination)
            .field("managed_queue", &self.queue.as_ref().map(Queue::hobj))
            .finish()
    }
}
