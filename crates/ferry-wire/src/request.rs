//! Requests: the MQI calls a client sends, typed, with their payload layouts.
//!
//! `Request::decode` turns a request [`Frame`] into a [`Request`]; `encode_request`
//! appends one to an output buffer so a driver can batch many frames into one write.
//! PUT and PUT1 bodies are the rest of the payload: decoding hands out a `Bytes` slice
//! of the read buffer, never a copy.

use bytes::{BufMut, Bytes, BytesMut};
use ferry_mqi::{
    CloseOptions, FixedStr, GetOptions, InquireValue, MessageDescriptor, ObjectDescriptor,
    OpenOptions, PutOptions, Selector, SubscriptionDescriptor,
};

use crate::cursor::{put_bounded_string, put_bytes, put_count, put_fixed, put_string, Reader};
use crate::frame::{begin_frame, finish_frame, Frame, Verb, REPLY_VERB_BIT};
use crate::structs::{
    get_attr_value, get_close_options, get_gmo, get_md, get_od, get_open_options, get_pmo, get_sd,
    put_attr_value, put_close_options, put_gmo, put_md, put_od, put_open_options, put_pmo, put_sd,
};
use crate::WireError;

/// MQCONN: what a client tells the queue manager when it opens a conversation.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ConnRequest {
    /// Queue manager wanted (blank: the one that owns the socket).
    pub qmgr_name: FixedStr<48>,
    /// MQCNO ApplName.
    pub appl_name: FixedStr<28>,
    /// The user the application runs as.
    pub user_id: FixedStr<12>,
    /// MQCNO options bits (carried; the server judges them).
    pub options: u32,
    /// MQCSP: a user id and password to check (protocol minor 3 and later).
    pub credentials: Option<Credentials>,
}

/// The longest topic string carried (MQOD ObjectString, MQSD ObjectString, a resolved
/// topic string): MQ's 10,240 bytes.
pub const MAX_OBJECT_STRING_LEN: usize = ferry_mqi::subscription::MAX_SUB_STRING_LENGTH;

/// The longest MQCSP user id carried.
pub const MAX_CSP_USER_LEN: usize = 1024;
/// The longest MQCSP password carried.
pub const MAX_CSP_PASSWORD_LEN: usize = 1024;

/// MQCSP: the user id and password an application gives at connect. Its `Debug` never
/// shows the password, so it cannot reach a log by accident.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Credentials {
    /// CSPUserId.
    pub user: String,
    /// CSPPassword.
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("user", &self.user)
            .field("password", &"********")
            .finish()
    }
}

/// One MQI call from client to queue manager.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// MQCONN(X): open this conversation.
    Conn(ConnRequest),
    /// MQDISC. `backout` asks the queue manager to back out the unit of work instead of
    /// committing it (what MQ does when an application ends abnormally; the client sets
    /// it when a connection is dropped without `disconnect`).
    Disc {
        /// Back out rather than commit an open unit of work.
        backout: bool,
    },
    /// MQOPEN.
    Open {
        /// What to open.
        od: ObjectDescriptor,
        /// MQOO options.
        options: OpenOptions,
    },
    /// MQCLOSE.
    Close {
        /// The handle.
        hobj: i32,
        /// MQCO options.
        options: CloseOptions,
    },
    /// MQPUT.
    Put {
        /// The handle, opened for output.
        hobj: i32,
        /// Input message descriptor.
        md: MessageDescriptor,
        /// Put options.
        pmo: PutOptions,
        /// The message's properties in the [`ferry_mqi::MessageProperties`] encoding
        /// (empty: none; always empty before minor 6).
        properties: Bytes,
        /// The message body (a slice of the read buffer once decoded).
        body: Bytes,
    },
    /// MQPUT1.
    Put1 {
        /// What to open.
        od: ObjectDescriptor,
        /// Input message descriptor.
        md: MessageDescriptor,
        /// Put options.
        pmo: PutOptions,
        /// The message's properties, as in [`Request::Put`].
        properties: Bytes,
        /// The message body.
        body: Bytes,
    },
    /// MQGET.
    Get {
        /// The handle, opened for input or browse.
        hobj: i32,
        /// Input descriptor: MsgId/CorrelId/GroupId... are the match fields.
        md: MessageDescriptor,
        /// Get options.
        gmo: GetOptions,
        /// The application's buffer length (largest body to return).
        max_len: u32,
    },
    /// MQINQ.
    Inq {
        /// The handle, opened for inquire.
        hobj: i32,
        /// MQIA_/MQCA_ selectors, answered in this order.
        selectors: Vec<Selector>,
    },
    /// MQSET (protocol minor 1 and later).
    Set {
        /// The handle, opened for set.
        hobj: i32,
        /// Each selector with its new value (an integer for MQIA_, text for MQCA_).
        attrs: Vec<(Selector, InquireValue)>,
    },
    /// MQCMIT.
    Cmit,
    /// MQBACK.
    Back,
    /// An MQSC command for the command server.
    Mqsc {
        /// The command text, e.g. `DISPLAY QLOCAL(APP.*)`.
        command: String,
    },
    /// A heartbeat request (conversation 0).
    Heartbeat,
    /// MQSUB (protocol minor 5): makes, resumes or alters a subscription.
    Sub {
        /// The subscription descriptor.
        sd: SubscriptionDescriptor,
        /// The queue handle the copies go to (a queue the application opened for
        /// output); 0 for none (MQSO_MANAGED, or a RESUME that keeps the destination).
        hobj: i32,
    },
    /// MQOPEN of a topic (MQOT_TOPIC) for publishing (protocol minor 5): the MQOD's
    /// ObjectName and ObjectString, which OPEN's MQOD has no room for.
    OpenTopic {
        /// A topic object (blank: none).
        object_name: FixedStr<48>,
        /// A topic string, appended to the object's (at most 10,240 bytes).
        object_string: String,
        /// MQOO options (OUTPUT and its companions).
        options: OpenOptions,
    },
    /// MQSUBRQ (protocol minor 5): the retained publications a subscription matches,
    /// sent to it again (MQSR_ACTION_PUBLICATION, the only action).
    SubRq {
        /// The subscription handle (Hsub).
        hsub: i32,
        /// MQSR action: 1 (MQSR_ACTION_PUBLICATION).
        action: i32,
    },
}

impl Request {
    /// The message data a PUT or PUT1 carries (the end of its payload), for compression.
    pub fn message_data(&self) -> Option<&Bytes> {
        match self {
            Request::Put { body, .. } | Request::Put1 { body, .. } => Some(body),
            _ => None,
        }
    }

    /// The verb this request travels under.
    pub fn verb(&self) -> Verb {
        match self {
            Request::Conn(_) => Verb::Conn,
            Request::Disc { .. } => Verb::Disc,
            Request::Open { .. } => Verb::Open,
            Request::Close { .. } => Verb::Close,
            Request::Put { .. } => Verb::Put,
            Request::Put1 { .. } => Verb::Put1,
            Request::Get { .. } => Verb::Get,
            Request::Inq { .. } => Verb::Inq,
            Request::Set { .. } => Verb::Set,
            Request::Cmit => Verb::Cmit,
            Request::Back => Verb::Back,
            Request::Mqsc { .. } => Verb::Mqsc,
            Request::Heartbeat => Verb::Heartbeat,
            Request::Sub { .. } => Verb::Sub,
            Request::OpenTopic { .. } => Verb::OpenTopic,
            Request::SubRq { .. } => Verb::SubRq,
        }
    }

    /// Decodes a request frame laid out for the newest protocol minor
    /// ([`crate::PROTOCOL_MINOR`]); see [`Request::decode_at`].
    pub fn decode(frame: &Frame) -> Result<Request, WireError> {
        Self::decode_at(frame, crate::PROTOCOL_MINOR)
    }

    /// Decodes a request frame of a connection that negotiated protocol minor `minor`
    /// (PUT and PUT1 carry MQPMO.Context from minor 2). Refuses replies, close notices,
    /// malformed payloads and verbs the minor does not have
    /// ([`WireError::VerbNotNegotiated`]: SUB and OPENTOPIC before minor 5).
    pub fn decode_at(frame: &Frame, minor: u16) -> Result<Request, WireError> {
        if frame.flags.contains(crate::FrameFlags::COMPRESSED) {
            return Err(WireError::NotExpanded);
        }
        if frame.is_reply() {
            return Err(WireError::UnexpectedVerb {
                verb: frame.verb.code() | REPLY_VERB_BIT,
                expected: "a request",
            });
        }
        if frame.verb.first_minor() > minor {
            return Err(WireError::VerbNotNegotiated {
                verb: frame.verb.code(),
                needs: frame.verb.first_minor(),
                minor,
            });
        }
        let mut r = Reader::new(&frame.payload);
        let req = match frame.verb {
            Verb::Conn => Request::Conn(ConnRequest {
                qmgr_name: r.fixed("CONN.qmgr_name")?,
                appl_name: r.fixed("CONN.appl_name")?,
                user_id: r.fixed("CONN.user_id")?,
                options: r.u32()?,
                credentials: if minor >= crate::MINOR_WITH_CREDENTIALS {
                    get_credentials(&mut r)?
                } else {
                    None
                },
            }),
            Verb::Disc => Request::Disc {
                backout: r.bool("DISC.backout")?,
            },
            Verb::Open => Request::Open {
                od: get_od(&mut r)?,
                options: get_open_options(&mut r)?,
            },
            Verb::Close => Request::Close {
                hobj: r.i32()?,
                options: get_close_options(&mut r)?,
            },
            Verb::Put => Request::Put {
                hobj: r.i32()?,
                md: get_md(&mut r)?,
                pmo: get_pmo(&mut r, minor)?,
                properties: get_put_properties(&mut r, minor)?,
                body: r.rest(),
            },
            Verb::Put1 => Request::Put1 {
                od: get_od(&mut r)?,
                md: get_md(&mut r)?,
                pmo: get_pmo(&mut r, minor)?,
                properties: get_put_properties(&mut r, minor)?,
                body: r.rest(),
            },
            Verb::Get => Request::Get {
                hobj: r.i32()?,
                md: get_md(&mut r)?,
                gmo: get_gmo(&mut r)?,
                max_len: r.u32()?,
            },
            Verb::Inq => {
                let hobj = r.i32()?;
                let (n, cap) = r.count(4)?;
                let mut selectors = Vec::with_capacity(cap);
                for _ in 0..n {
                    selectors.push(r.i32()?);
                }
                Request::Inq { hobj, selectors }
            }
            Verb::Set => {
                let hobj = r.i32()?;
                let (n, cap) = r.count(9)?;
                let mut attrs = Vec::with_capacity(cap);
                for _ in 0..n {
                    let s = r.i32()?;
                    attrs.push((s, get_attr_value(&mut r)?));
                }
                Request::Set { hobj, attrs }
            }
            Verb::Cmit => Request::Cmit,
            Verb::Back => Request::Back,
            Verb::Mqsc => Request::Mqsc {
                command: r.string("MQSC command")?,
            },
            Verb::Heartbeat => Request::Heartbeat,
            Verb::Sub => Request::Sub {
                sd: get_sd(&mut r)?,
                hobj: r.i32()?,
            },
            Verb::SubRq => Request::SubRq {
                hsub: r.i32()?,
                action: r.i32()?,
            },
            Verb::OpenTopic => Request::OpenTopic {
                object_name: r.fixed("OPENTOPIC.ObjectName")?,
                object_string: r.bounded_string("OPENTOPIC.ObjectString", MAX_OBJECT_STRING_LEN)?,
                options: get_open_options(&mut r)?,
            },
            Verb::Error => {
                return Err(WireError::UnexpectedVerb {
                    verb: Verb::Error.code(),
                    expected: "a request",
                })
            }
        };
        r.finish()?;
        Ok(req)
    }
}

/// Appends `req` as one frame of `conversation` with `request_id` to `out`, laid out
/// for the newest protocol minor ([`crate::PROTOCOL_MINOR`]); see
/// [`encode_request_at`].
pub fn encode_request(
    conversation: u32,
    request_id: u32,
    req: &Request,
    out: &mut BytesMut,
) -> Result<(), WireError> {
    encode_request_at(conversation, request_id, req, crate::PROTOCOL_MINOR, out)
}

/// Appends `req` as one frame laid out for a connection that negotiated protocol minor
/// `minor` (MQPMO.Context is left out before minor 2).
///
/// On error (a body or text beyond 4 GiB, a topic string or MQSD text beyond its bound)
/// `out` is left as it was. A verb the minor does not have is the caller's to avoid
/// ([`Verb::first_minor`]): it is encoded all the same, and the peer refuses it.
pub fn encode_request_at(
    conversation: u32,
    request_id: u32,
    req: &Request,
    minor: u16,
    out: &mut BytesMut,
) -> Result<(), WireError> {
    let start = begin_frame(out, conversation, request_id, req.verb(), false);
    let body_ok = match req {
        Request::Conn(c) => {
            put_fixed(out, &c.qmgr_name);
            put_fixed(out, &c.appl_name);
            put_fixed(out, &c.user_id);
            out.put_u32_le(c.options);
            if minor >= crate::MINOR_WITH_CREDENTIALS {
                put_credentials(out, c.credentials.as_ref())
            } else {
                Ok(())
            }
        }
        Request::Disc { backout } => {
            out.put_u8(u8::from(*backout));
            Ok(())
        }
        Request::Open { od, options } => {
            put_od(out, od);
            put_open_options(out, *options);
            Ok(())
        }
        Request::Close { hobj, options } => {
            out.put_i32_le(*hobj);
            put_close_options(out, *options);
            Ok(())
        }
        Request::Put {
            hobj,
            md,
            pmo,
            properties,
            body,
        } => {
            out.put_i32_le(*hobj);
            put_md(out, md);
            put_pmo(out, pmo, minor);
            put_put_properties(out, properties, minor).map(|()| out.put_slice(body))
        }
        Request::Put1 {
            od,
            md,
            pmo,
            properties,
            body,
        } => {
            put_od(out, od);
            put_md(out, md);
            put_pmo(out, pmo, minor);
            put_put_properties(out, properties, minor).map(|()| out.put_slice(body))
        }
        Request::Get {
            hobj,
            md,
            gmo,
            max_len,
        } => {
            out.put_i32_le(*hobj);
            put_md(out, md);
            put_gmo(out, gmo);
            out.put_u32_le(*max_len);
            Ok(())
        }
        Request::Inq { hobj, selectors } => {
            out.put_i32_le(*hobj);
            put_count(out, selectors.len()).map(|()| {
                for s in selectors {
                    out.put_i32_le(*s);
                }
            })
        }
        Request::Set { hobj, attrs } => {
            out.put_i32_le(*hobj);
            put_count(out, attrs.len()).and_then(|()| {
                for (s, v) in attrs {
                    out.put_i32_le(*s);
                    put_attr_value(out, v)?;
                }
                Ok(())
            })
        }
        Request::Cmit | Request::Back | Request::Heartbeat => Ok(()),
        Request::Mqsc { command } => put_string(out, command),
        Request::Sub { sd, hobj } => put_sd(out, sd).map(|()| out.put_i32_le(*hobj)),
        Request::SubRq { hsub, action } => {
            out.put_i32_le(*hsub);
            out.put_i32_le(*action);
            Ok(())
        }
        Request::OpenTopic {
            object_name,
            object_string,
            options,
        } => {
            put_fixed(out, object_name);
            put_bounded_string(
                out,
                object_string,
                "OPENTOPIC.ObjectString",
                MAX_OBJECT_STRING_LEN,
            )
            .map(|()| put_open_options(out, *options))
        }
    };
    if let Err(e) = body_ok {
        out.truncate(start);
        return Err(e);
    }
    finish_frame(out, start)
}

/// MQCSP after MQCONN's fixed fields: a presence byte, then user id and password as
/// length-prefixed UTF-8, each at most 1024 bytes.
fn get_credentials(r: &mut Reader<'_>) -> Result<Option<Credentials>, WireError> {
    if !r.bool("CONN.credentials")? {
        return Ok(None);
    }
    let user = r.string("CONN.csp_user")?;
    let password = r.string("CONN.csp_password")?;
    for (field, text, max) in [
        ("CONN.csp_user", &user, MAX_CSP_USER_LEN),
        ("CONN.csp_password", &password, MAX_CSP_PASSWORD_LEN),
    ] {
        if text.len() > max {
            return Err(WireError::NameTooLong {
                field,
                len: text.len(),
                max,
            });
        }
    }
    Ok(Some(Credentials { user, password }))
}

fn put_credentials(out: &mut BytesMut, c: Option<&Credentials>) -> Result<(), WireError> {
    match c {
        None => {
            out.put_u8(0);
            Ok(())
        }
        Some(c) => {
            out.put_u8(1);
            put_string(out, &c.user)?;
            put_string(out, &c.password)
        }
    }
}

/// A PUT or PUT1's message properties: a length-prefixed [`ferry_mqi::MessageProperties`]
/// encoding from minor 6 ([`crate::MINOR_WITH_PUT_PROPERTIES`]), none before. Checked by
/// the queue manager, not here: the wire only carries them.
fn get_put_properties(r: &mut Reader, minor: u16) -> Result<Bytes, WireError> {
    if minor >= crate::MINOR_WITH_PUT_PROPERTIES {
        r.bytes()
    } else {
        Ok(Bytes::new())
    }
}

/// Writes a PUT or PUT1's message properties for `minor`: refused before minor 6 unless
/// there are none (a peer that old could not see them).
fn put_put_properties(out: &mut BytesMut, properties: &[u8], minor: u16) -> Result<(), WireError> {
    if minor >= crate::MINOR_WITH_PUT_PROPERTIES {
        put_bytes(out, properties)
    } else if properties.is_empty() {
        Ok(())
    } else {
        Err(WireError::NotNegotiated {
            what: "message properties on PUT",
            needs: crate::MINOR_WITH_PUT_PROPERTIES,
            minor,
        })
    }
}
