//! `Queue`: an open object handle (hobj) and the calls made on it.

use std::sync::Arc;

use bytes::Bytes;
use ferry_mqi::{
    CloseOptions, FixedStr, GetOptionFlags, GetOptions, InquireValue, MessageDescriptor,
    MessageProperties, MqError, PropertyValue, PutOptions, ReasonCode, Selector,
};
use ferry_wire::{Reply, Request, MINOR_WITH_PUT_PROPERTIES};

use crate::conversation::Conversation;

/// 2298 MQRC_FUNCTION_NOT_SUPPORTED for properties on a put when the socket agreed a
/// protocol minor without them (nothing is sent: the queue manager could not see them).
pub(crate) fn check_put_properties(conv: &Conversation, properties: &[u8]) -> Result<(), MqError> {
    if !properties.is_empty() && conv.socket.negotiated.minor < MINOR_WITH_PUT_PROPERTIES {
        return Err(ReasonCode::FunctionNotSupported.into());
    }
    Ok(())
}

/// A message returned by [`Queue::get`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GotMessage {
    /// The body, at most the requested length (a zero-copy slice of the socket's buffer).
    pub data: Bytes,
    /// The message's full length (MQGET DataLength), larger than `data` when truncated.
    pub data_length: usize,
    /// The message's properties in their compact encoding (empty: none), e.g. the
    /// MQTopicString of a publication: read them with [`GotMessage::property`] or
    /// [`GotMessage::decode_properties`]. Queue managers older than protocol minor 5 send
    /// none.
    pub properties: Bytes,
    /// A warning the get completed with, e.g. 2079 MQRC_TRUNCATED_MSG_ACCEPTED.
    pub warning: Option<ReasonCode>,
    /// MQGMO GroupStatus: `b' '` not in a group, `b'G'` in a group, `b'L'` the last of
    /// its group (`ferry_mqi::descriptor::group_status`).
    pub group_status: u8,
    /// MQGMO SegmentStatus: `b' '` not a segment, `b'S'` a segment, `b'L'` the last
    /// segment (`ferry_mqi::descriptor::segment_status`).
    pub segment_status: u8,
}

impl GotMessage {
    /// True when the body was cut to the requested length.
    pub fn is_truncated(&self) -> bool {
        self.data.len() < self.data_length
    }

    /// The value of property `name` (names compare exactly), if the message has it,
    /// e.g. `"MQTopicString"` on a publication.
    pub fn property(&self, name: &str) -> Option<PropertyValue> {
        MessageProperties::find(&self.properties, name).map(|p| p.to_value())
    }

    /// All the message's properties, in order; an encoding the client cannot read is
    /// 2195 MQRC_UNEXPECTED_ERROR.
    pub fn decode_properties(&self) -> Result<MessageProperties, MqError> {
        MessageProperties::decode(&self.properties)
            .map_err(|_| MqError::from(ReasonCode::UnexpectedError))
    }
}

/// An open queue (or other object) of a [`crate::Connection`]: an MQ hobj.
///
/// Dropping a queue without [`Queue::close`] closes it in the background.
pub struct Queue {
    conv: Arc<Conversation>,
    hobj: i32,
    name: FixedStr<48>,
    resolved_name: FixedStr<48>,
    resolved_qmgr_name: FixedStr<48>,
    closed: bool,
}

fn unexpected() -> MqError {
    MqError::from(ReasonCode::UnexpectedError)
}

impl Queue {
    pub(crate) fn new(
        conv: Arc<Conversation>,
        hobj: i32,
        name: FixedStr<48>,
        resolved_name: FixedStr<48>,
        resolved_qmgr_name: FixedStr<48>,
    ) -> Self {
        Queue {
            conv,
            hobj,
            name,
            resolved_name,
            resolved_qmgr_name,
            closed: false,
        }
    }

    /// The name given to open (the model queue's name for a dynamic queue).
    pub fn name(&self) -> &str {
        self.name.as_str()
    }

    /// The resolved queue name (MQOD ResolvedQName): the base of an alias, or the
    /// generated name of a dynamic queue; the opened name when the server left it blank.
    pub fn resolved_name(&self) -> &str {
        if self.resolved_name.is_blank() {
            self.name.as_str()
        } else {
            self.resolved_name.as_str()
        }
    }

    /// The resolved queue manager name (MQOD ResolvedQMgrName).
    pub fn resolved_qmgr_name(&self) -> &str {
        self.resolved_qmgr_name.as_str()
    }

    /// The object handle number.
    pub fn hobj(&self) -> i32 {
        self.hobj
    }

    /// The conversation (hconn) the handle belongs to.
    pub(crate) fn conversation(&self) -> &Arc<Conversation> {
        &self.conv
    }

    /// Puts a message (MQPUT). On return `md` holds the output descriptor: the
    /// generated MsgId, PutDate/PutTime and context. Warnings (e.g. 2049) count as
    /// success. To pass context (PASS_IDENTITY_CONTEXT, PASS_ALL_CONTEXT), name the input
    /// queue opened with SAVE_ALL_CONTEXT: `PutOptions::new(..).with_context(input.hobj())`
    /// (sent to servers of protocol minor 2 and later; older ones answer 2097).
    pub async fn put(
        &self,
        md: &mut MessageDescriptor,
        pmo: &PutOptions,
        body: impl Into<Bytes>,
    ) -> Result<(), MqError> {
        self.put_with_warning(md, pmo, Bytes::new(), body.into())
            .await
            .map(drop)
    }

    /// [`Queue::put`] of a message with properties (as MQSETMP on a message handle
    /// passed in MQPMO.OriginalMsgHandle would give it), e.g. a W3C `traceparent`.
    /// Needs a queue manager of protocol minor 6 or later: an older one gets nothing
    /// sent and the call fails with 2298 MQRC_FUNCTION_NOT_SUPPORTED.
    pub async fn put_with_properties(
        &self,
        md: &mut MessageDescriptor,
        pmo: &PutOptions,
        properties: &MessageProperties,
        body: impl Into<Bytes>,
    ) -> Result<(), MqError> {
        self.put_with_warning(md, pmo, properties.encode(), body.into())
            .await
            .map(drop)
    }

    /// [`Queue::put`], returning the warning the put completed with (for a topic handle:
    /// 2550 MQRC_NO_SUBS_MATCHED). `properties` is a `MessageProperties` encoding
    /// (empty: none).
    pub(crate) async fn put_with_warning(
        &self,
        md: &mut MessageDescriptor,
        pmo: &PutOptions,
        properties: Bytes,
        body: Bytes,
    ) -> Result<Option<ReasonCode>, MqError> {
        check_put_properties(&self.conv, &properties)?;
        if body.len() + properties.len() > self.conv.max_msg_length() as usize {
            return Err(MqError::from(ReasonCode::DataLengthError));
        }
        let req = Request::Put {
            hobj: self.hobj,
            md: *md,
            pmo: *pmo,
            properties,
            body,
        };
        match self.conv.call(&req).await? {
            Reply::Put { status, md: out } => {
                let warning = status.into_result()?;
                *md = out;
                Ok(warning)
            }
            _ => Err(unexpected()),
        }
    }

    /// Gets a message (MQGET) of at most `max_len` bytes.
    ///
    /// As in MQ, the MsgId/CorrelId (per `gmo.match_options`) of `md` select the
    /// message, and on return `md` holds the message's descriptor: reset the ids before
    /// the next get. With `ACCEPT_TRUNCATED_MSG` a longer message is removed and
    /// returned cut, with warning 2079; without it the get fails with 2080 and the
    /// message stays (and `md` still describes it). No message: 2033.
    ///
    /// With `GetOptionFlags::UNLOCK` the call returns no message and leaves `md` alone,
    /// as MQ does; its warning is 2209 MQRC_NO_MSG_LOCKED when nothing was locked.
    pub async fn get(
        &self,
        md: &mut MessageDescriptor,
        gmo: &GetOptions,
        max_len: usize,
    ) -> Result<GotMessage, MqError> {
        let req = Request::Get {
            hobj: self.hobj,
            md: *md,
            gmo: *gmo,
            max_len: u32::try_from(max_len).unwrap_or(u32::MAX),
        };
        match self.conv.call(&req).await? {
            Reply::Get {
                status,
                md: out,
                data_length,
                properties,
                body,
            } => {
                let unlock = gmo.options.contains(GetOptionFlags::UNLOCK);
                if status.reason == ReasonCode::TruncatedMsgFailed {
                    *md = out;
                }
                let warning = status.into_result()?;
                if !unlock {
                    *md = out;
                }
                Ok(GotMessage {
                    data: body,
                    data_length: data_length as usize,
                    properties,
                    warning,
                    // Both follow from the returned descriptor's MsgFlags, so the wire
                    // does not carry them.
                    group_status: out.group_status(),
                    segment_status: out.segment_status(),
                })
            }
            _ => Err(unexpected()),
        }
    }

    /// Reads attributes (MQINQ): one value per selector, in order. The queue must be
    /// open with `OpenOptions::INQUIRE`.
    pub async fn inquire(&self, selectors: &[Selector]) -> Result<Vec<InquireValue>, MqError> {
        let req = Request::Inq {
            hobj: self.hobj,
            selectors: selectors.to_vec(),
        };
        match self.conv.call(&req).await? {
            Reply::Inq { status, values } => {
                status.into_result()?;
                Ok(values)
            }
            _ => Err(unexpected()),
        }
    }

    /// Changes attributes (MQSET): InhibitGet/InhibitPut and the trigger attributes, each
    /// selector with its value. The queue must be open with `OpenOptions::SET` (else
    /// 2040). A server older than protocol minor 1 does not know MQSET: the call fails
    /// with 2298 MQRC_FUNCTION_NOT_SUPPORTED without being sent.
    pub async fn set(&self, attrs: &[(Selector, InquireValue)]) -> Result<(), MqError> {
        if self.conv.socket.negotiated.minor < ferry_wire::MINOR_WITH_SET {
            return Err(ReasonCode::FunctionNotSupported.into());
        }
        let req = Request::Set {
            hobj: self.hobj,
            attrs: attrs.to_vec(),
        };
        match self.conv.call(&req).await? {
            Reply::Set { status } => status.into_result().map(drop),
            _ => Err(unexpected()),
        }
    }

    /// Closes the handle (MQCLOSE), e.g. with `CloseOptions::DELETE` for a permanent
    /// dynamic queue. `Ok(Some(warning))` is MQCC_WARNING: the handle was closed in the
    /// middle of a group it put or got in logical order (2241 MQRC_INCOMPLETE_GROUP, or
    /// 2242 MQRC_INCOMPLETE_MSG for a segmented message).
    pub async fn close(mut self, options: CloseOptions) -> Result<Option<ReasonCode>, MqError> {
        self.closed = true;
        let req = Request::Close {
            hobj: self.hobj,
            options,
        };
        match self.conv.call(&req).await? {
            Reply::Close { status } => status.into_result(),
            _ => Err(unexpected()),
        }
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        if self.closed {
            return;
        }
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let conv = self.conv.clone();
            let hobj = self.hobj;
            rt.spawn(async move {
                let _ = conv
                    .call(&Request::Close {
                        hobj,
                        options: CloseOptions::empty(),
                    })
                    .await;
            });
        }
    }
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue")
            .field("name", &self.name.as_str())
            .field("resolved_name", &self.resolved_name())
            .field("hobj", &self.hobj)
            .finish()
    }
}
