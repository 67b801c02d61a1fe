//! Replies: what the queue manager answers to each request, typed.
//!
//! Every reply starts with the call's [`Status`] (MQCC + MQRC) and then always carries
//! the verb's output fields, also on failure: MQ fills the descriptor and DataLength even
//! for 2080 MQRC_TRUNCATED_MSG_FAILED. A GET body is the rest of the payload, a
//! zero-copy `Bytes` slice of the read buffer. From protocol minor 5 a GET reply also
//! carries the message's properties, so replies are laid out for the connection's minor
//! ([`Reply::decode_at`], [`encode_reply_at`]).

use bytes::{BufMut, Bytes, BytesMut};
use ferry_mqi::{FixedStr, InquireValue, MessageDescriptor};

use crate::cursor::{put_bounded_string, put_bytes, put_count, put_fixed, put_string, Reader};
use crate::frame::{begin_frame, finish_frame, Frame, Verb};
use crate::request::MAX_OBJECT_STRING_LEN;
use crate::structs::{get_attr_value, put_attr_value};
use crate::structs::{get_md, get_status, put_md, put_status, Status};
use crate::WireError;

/// The output of an MQSC command.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct MqscOutput {
    /// The command server's response lines (AMQ8xxx messages, DISPLAY attributes...).
    pub lines: Vec<String>,
    /// True when the command failed (runmqsc would count it as an error).
    pub failed: bool,
}

/// One answer from queue manager to client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// MQCONN: the conversation is open when the status is not failed.
    Conn {
        /// Outcome.
        status: Status,
        /// The queue manager's name.
        qmgr_name: FixedStr<48>,
    },
    /// MQDISC.
    Disc {
        /// Outcome.
        status: Status,
    },
    /// MQOPEN.
    Open {
        /// Outcome.
        status: Status,
        /// The object handle (MQHO_UNUSABLE_HOBJ -1 on failure).
        hobj: i32,
        /// The resolved queue name: a dynamic queue's generated name arrives here.
        resolved_q_name: FixedStr<48>,
        /// The resolved queue manager name.
        resolved_qmgr_name: FixedStr<48>,
    },
    /// MQCLOSE.
    Close {
        /// Outcome.
        status: Status,
    },
    /// MQPUT.
    Put {
        /// Outcome.
        status: Status,
        /// The output descriptor: generated MsgId, PutDate/PutTime, context.
        md: MessageDescriptor,
    },
    /// MQPUT1.
    Put1 {
        /// Outcome.
        status: Status,
        /// The output descriptor.
        md: MessageDescriptor,
    },
    /// MQGET.
    Get {
        /// Outcome (warning 2079 when truncated and accepted).
        status: Status,
        /// The message's descriptor.
        md: MessageDescriptor,
        /// The full length of the message (DataLength), even when truncated.
        data_length: u32,
        /// The message's properties in the [`ferry_mqi::MessageProperties`] encoding
        /// (empty: none), e.g. a publication's MQTopicString. Carried from protocol minor
        /// 5; always empty on a connection of a lower minor.
        properties: Bytes,
        /// The body, at most the requested length.
        body: Bytes,
    },
    /// MQINQ.
    Inq {
        /// Outcome.
        status: Status,
        /// One value per selector, in request order.
        values: Vec<InquireValue>,
    },
    /// MQSET.
    Set {
        /// Outcome.
        status: Status,
    },
    /// MQCMIT.
    Cmit {
        /// Outcome.
        status: Status,
    },
    /// MQBACK.
    Back {
        /// Outcome.
        status: Status,
    },
    /// An MQSC command's output.
    Mqsc {
        /// Outcome of the transport (OK unless the command server was unreachable).
        status: Status,
        /// The command's output.
        output: MqscOutput,
    },
    /// A heartbeat response.
    Heartbeat,
    /// MQSUB (protocol minor 5).
    Sub {
        /// Outcome.
        status: Status,
        /// The subscription handle (Hsub; -1 on failure): MQCLOSE it with KEEP_SUB or
        /// REMOVE_SUB.
        hsub: i32,
        /// For a managed subscription, the handle of its queue, opened for input, browse
        /// and inquire; 0 when there is none.
        hobj: i32,
        /// SubId: the copies' CorrelId unless MQSO_SET_CORREL_ID gave another.
        sub_id: [u8; 24],
        /// The resolved topic string (MQSD ResObjectString).
        topic_string: String,
        /// The queue the copies go to.
        destination: FixedStr<48>,
    },
    /// MQSUBRQ (protocol minor 5).
    SubRq {
        /// Outcome (2437 MQRC_NO_RETAINED_MSG when there was nothing to send).
        status: Status,
        /// MQSRO NumPubs: the publications sent.
        num_pubs: i32,
    },
    /// MQOPEN of a topic (protocol minor 5).
    OpenTopic {
        /// Outcome.
        status: Status,
        /// The object handle (-1 on failure).
        hobj: i32,
        /// The resolved topic string (MQOD ResObjectString).
        topic_string: String,
    },
}

impl Reply {
    /// The message data a GET reply carries (the end of its payload), for compression.
    pub fn message_data(&self) -> Option<&Bytes> {
        match self {
            Reply::Get { body, .. } => Some(body),
            _ => None,
        }
    }

    /// The verb this reply travels under (sent as `verb | 0x80`).
    pub fn verb(&self) -> Verb {
        match self {
            Reply::Conn { .. } => Verb::Conn,
            Reply::Disc { .. } => Verb::Disc,
            Reply::Open { .. } => Verb::Open,
            Reply::Close { .. } => Verb::Close,
            Reply::Put { .. } => Verb::Put,
            Reply::Put1 { .. } => Verb::Put1,
            Reply::Get { .. } => Verb::Get,
            Reply::Inq { .. } => Verb::Inq,
            Reply::Set { .. } => Verb::Set,
            Reply::Cmit { .. } => Verb::Cmit,
            Reply::Back { .. } => Verb::Back,
            Reply::Mqsc { .. } => Verb::Mqsc,
            Reply::Heartbeat => Verb::Heartbeat,
            Reply::Sub { .. } => Verb::Sub,
            Reply::OpenTopic { .. } => Verb::OpenTopic,
            Reply::SubRq { .. } => Verb::SubRq,
        }
    }

    /// The call's status (OK for a heartbeat).
    pub fn status(&self) -> Status {
        match self {
            Reply::Conn { status, .. }
            | Reply::Disc { status }
            | Reply::Open { status, .. }
            | Reply::Close { status }
            | Reply::Put { status, .. }
            | Reply::Put1 { status, .. }
            | Reply::Get { status, .. }
            | Reply::Inq { status, .. }
            | Reply::Set { status }
            | Reply::Cmit { status }
            | Reply::Back { status }
            | Reply::Mqsc { status, .. }
            | Reply::Sub { status, .. }
            | Reply::OpenTopic { status, .. }
            | Reply::SubRq { status, .. } => *status,
            Reply::Heartbeat => Status::OK,
        }
    }

    /// A reply to `verb` that carries only a failure, with empty output fields: what a
    /// server sends when it refuses a call before doing anything (e.g. 2018 HCONN_ERROR).
    /// Returns `None` for verbs that have no reply (`Error`) or no status (`Heartbeat`).
    pub fn failure(verb: Verb, status: Status) -> Option<Reply> {
        Some(match verb {
            Verb::Conn => Reply::Conn {
                status,
                qmgr_name: FixedStr::BLANK,
            },
            Verb::Disc => Reply::Disc { status },
            Verb::Open => Reply::Open {
                status,
                hobj: -1,
                resolved_q_name: FixedStr::BLANK,
                resolved_qmgr_name: FixedStr::BLANK,
            },
            Verb::Close => Reply::Close { status },
            Verb::Put => Reply::Put {
                status,
                md: MessageDescriptor::default(),
            },
            Verb::Put1 => Reply::Put1 {
                status,
                md: MessageDescriptor::default(),
            },
            Verb::Get => Reply::Get {
                status,
                md: MessageDescriptor::default(),
                data_length: 0,
                properties: Bytes::new(),
                body: Bytes::new(),
            },
            Verb::Inq => Reply::Inq {
                status,
                values: Vec::new(),
            },
            Verb::Set => Reply::Set { status },
            Verb::Cmit => Reply::Cmit { status },
            Verb::Back => Reply::Back { status },
            Verb::Mqsc => Reply::Mqsc {
                status,
                output: MqscOutput::default(),
            },
            Verb::Sub => Reply::Sub {
                status,
                hsub: -1,
                hobj: 0,
                sub_id: [0; 24],
                topic_string: String::new(),
                destination: FixedStr::BLANK,
            },
            Verb::OpenTopic => Reply::OpenTopic {
                status,
                hobj: -1,
                topic_string: String::new(),
            },
            Verb::SubRq => Reply::SubRq {
                status,
                num_pubs: 0,
            },
            Verb::Heartbeat | Verb::Error => return None,
        })
    }

    /// Decodes a reply frame laid out for the newest protocol minor
    /// ([`crate::PROTOCOL_MINOR`]); see [`Reply::decode_at`].
    pub fn decode(frame: &Frame) -> Result<Reply, WireError> {
        Self::decode_at(frame, crate::PROTOCOL_MINOR)
    }

    /// Decodes a reply frame of a connection that negotiated protocol minor `minor` (a
    /// GET reply carries the message's properties from minor 5). Refuses requests,
    /// close notices and malformed payloads.
    pub fn decode_at(frame: &Frame, minor: u16) -> Result<Reply, WireError> {
        if frame.flags.contains(crate::FrameFlags::COMPRESSED) {
            return Err(WireError::NotExpanded);
        }
        if !frame.is_reply() {
            return Err(WireError::UnexpectedVerb {
                verb: frame.verb.code(),
                expected: "a reply",
            });
        }
        let mut r = Reader::new(&frame.payload);
        let reply = match frame.verb {
            Verb::Heartbeat => Reply::Heartbeat,
            Verb::Error => {
                return Err(WireError::UnexpectedVerb {
                    verb: Verb::Error.code(),
                    expected: "a reply",
                })
            }
            verb => {
                let status = get_status(&mut r)?;
                match verb {
                    Verb::Conn => Reply::Conn {
                        status,
                        qmgr_name: r.fixed("CONN reply qmgr_name")?,
                    },
                    Verb::Disc => Reply::Disc { status },
                    Verb::Open => Reply::Open {
                        status,
                        hobj: r.i32()?,
                        resolved_q_name: r.fixed("OPEN reply ResolvedQName")?,
                        resolved_qmgr_name: r.fixed("OPEN reply ResolvedQMgrName")?,
                    },
                    Verb::Close => Reply::Close { status },
                    Verb::Put => Reply::Put {
                        status,
                        md: get_md(&mut r)?,
                    },
                    Verb::Put1 => Reply::Put1 {
                        status,
                        md: get_md(&mut r)?,
                    },
                    Verb::Get => Reply::Get {
                        status,
                        md: get_md(&mut r)?,
                        data_length: r.u32()?,
                        properties: if minor >= crate::MINOR_WITH_PUBSUB {
                            r.bytes()?
                        } else {
                            Bytes::new()
                        },
                        body: r.rest(),
                    },
                    Verb::Inq => {
                        let (n, cap) = r.count(5)?;
                        let mut values = Vec::with_capacity(cap);
                        for _ in 0..n {
                            values.push(get_attr_value(&mut r)?);
                        }
                        Reply::Inq { status, values }
                    }
                    Verb::Set => Reply::Set { status },
                    Verb::Cmit => Reply::Cmit { status },
                    Verb::Back => Reply::Back { status },
                    Verb::Mqsc => {
                        let failed = r.bool("MQSC reply failed")?;
                        let (n, cap) = r.count(4)?;
                        let mut lines = Vec::with_capacity(cap);
                        for _ in 0..n {
                            lines.push(r.string("MQSC reply line")?);
                        }
                        Reply::Mqsc {
                            status,
                            output: MqscOutput { lines, failed },
                        }
                    }
                    Verb::Sub => Reply::Sub {
                        status,
                        hsub: r.i32()?,
                        hobj: r.i32()?,
                        sub_id: r.array()?,
                        topic_string: r
                            .bounded_string("SUB reply ResObjectString", MAX_OBJECT_STRING_LEN)?,
                        destination: r.fixed("SUB reply destination")?,
                    },
                    Verb::SubRq => Reply::SubRq {
                        status,
                        num_pubs: r.i32()?,
                    },
                    Verb::OpenTopic => Reply::OpenTopic {
                        status,
                        hobj: r.i32()?,
                        topic_string: r.bounded_string(
                            "OPENTOPIC reply ResObjectString",
                            MAX_OBJECT_STRING_LEN,
                        )?,
                    },
                    // Heartbeat and Error were handled by the outer match.
                    Verb::Heartbeat | Verb::Error => Reply::Heartbeat,
                }
            }
        };
        r.finish()?;
        Ok(reply)
    }
}

/// Appends `reply` as one frame answering `request_id` of `conversation` to `out`, laid
/// out for the newest protocol minor ([`crate::PROTOCOL_MINOR`]); see
/// [`encode_reply_at`].
pub fn encode_reply(
    conversation: u32,
    request_id: u32,
    reply: &Reply,
    out: &mut BytesMut,
) -> Result<(), WireError> {
    encode_reply_at(conversation, request_id, reply, crate::PROTOCOL_MINOR, out)
}

/// Appends `reply` as one frame laid out for a connection that negotiated protocol minor
/// `minor` (a GET reply's properties are left out before minor 5: an older client gets
/// the layout it knows).
///
/// On error (a body or text beyond 4 GiB, a topic string beyond 10,240 bytes) `out` is
/// left as it was.
pub fn encode_reply_at(
    conversation: u32,
    request_id: u32,
    reply: &Reply,
    minor: u16,
    out: &mut BytesMut,
) -> Result<(), WireError> {
    let start = begin_frame(out, conversation, request_id, reply.verb(), true);
    if !matches!(reply, Reply::Heartbeat) {
        put_status(out, &reply.status());
    }
    let body_ok = match reply {
        Reply::Conn { qmgr_name, .. } => {
            put_fixed(out, qmgr_name);
            Ok(())
        }
        Reply::Open {
            hobj,
            resolved_q_name,
            resolved_qmgr_name,
            ..
        } => {
            out.put_i32_le(*hobj);
            put_fixed(out, resolved_q_name);
            put_fixed(out, resolved_qmgr_name);
            Ok(())
        }
        Reply::Put { md, .. } | Reply::Put1 { md, .. } => {
            put_md(out, md);
            Ok(())
        }
        Reply::Get {
            md,
            data_length,
            properties,
            body,
            ..
        } => {
            put_md(out, md);
            out.put_u32_le(*data_length);
            let props = if minor >= crate::MINOR_WITH_PUBSUB {
                put_bytes(out, properties)
            } else {
                Ok(())
            };
            props.map(|()| out.put_slice(body))
        }
        Reply::Sub {
            hsub,
            hobj,
            sub_id,
            topic_string,
            destination,
            ..
        } => {
            out.put_i32_le(*hsub);
            out.put_i32_le(*hobj);
            out.put_slice(sub_id);
            put_bounded_string(
                out,
                topic_string,
                "SUB reply ResObjectString",
                MAX_OBJECT_STRING_LEN,
            )
            .map(|()| put_fixed(out, destination))
        }
        Reply::SubRq { num_pubs, .. } => {
            out.put_i32_le(*num_pubs);
            Ok(())
        }
        Reply::OpenTopic {
            hobj, topic_string, ..
        } => {
            out.put_i32_le(*hobj);
            put_bounded_string(
                out,
                topic_string,
                "OPENTOPIC reply ResObjectString",
                MAX_OBJECT_STRING_LEN,
            )
        }
        Reply::Inq { values, .. } => put_count(out, values.len()).and_then(|()| {
            for v in values {
                put_attr_value(out, v)?;
            }
            Ok(())
        }),
        Reply::Mqsc { output, .. } => {
            out.put_u8(u8::from(output.failed));
            put_count(out, output.lines.len()).and_then(|()| {
                for l in &output.lines {
                    put_string(out, l)?;
                }
                Ok(())
            })
        }
        Reply::Disc { .. }
        | Reply::Close { .. }
        | Reply::Set { .. }
        | Reply::Cmit { .. }
        | Reply::Back { .. }
        | Reply::Heartbeat => Ok(()),
    };
    if let Err(e) = body_ok {
        out.truncate(start);
        return Err(e);
    }
    finish_frame(out, start)
}
