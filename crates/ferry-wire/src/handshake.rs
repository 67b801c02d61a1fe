//! The handshake: `ClientHello` first, `ServerHello` back, and the negotiation rules.
//!
//! A hello is `magic "FRY\x01"` + `total length u32` + `kind u8` + body; the length is
//! capped at [`MAX_HELLO_LEN`] so a stranger cannot make the server buffer much before
//! it knows who is talking. The server refuses an unknown major version (or a channel or
//! queue manager it does not have) with a failed `ServerHello` whose reason says why,
//! then closes the socket.

use bitflags::bitflags;
use bytes::{BufMut, Bytes, BytesMut};
use ferry_mqi::compression::{agree, MAX_HEADER_COMPRESSION_LIST, MAX_MESSAGE_COMPRESSION_LIST};
use ferry_mqi::{CompCode, FixedStr, HeaderCompression, MessageCompression, ReasonCode, Technique};

use crate::compression::Techniques;
use crate::cursor::{put_fixed, put_string, Reader};
use crate::structs::{get_status, put_status, Status};
use crate::WireError;

/// The four bytes every Ferry connection starts with (both directions).
pub const MAGIC: [u8; 4] = *b"FRY\x01";

/// The protocol major version this crate speaks. Peers with another major refuse.
pub const PROTOCOL_MAJOR: u16 = 1;
/// The protocol minor version this crate speaks. The lower of the two peers' wins.
///
/// Minor 1 adds the SET verb (MQSET); a peer that negotiated minor 0 never sends it.
/// Minor 2 adds MQPMO.Context to PUT and PUT1 (passing context).
/// Minor 3 adds MQCSP (user id and password) to MQCONN.
/// Minor 4 adds channel compression: the COMPHDR and COMPMSG lists in the client hello,
/// the agreed techniques in the server hello, and the COMPRESSED frame flag.
/// Minor 5 adds publish/subscribe: the SUB verb (MQSUB), the OPENTOPIC verb (MQOPEN of a
/// topic by topic string) and the message properties in the GET reply.
/// Minor 6 adds message properties to PUT and PUT1 (a length-prefixed
/// `MessageProperties` encoding after the MQPMO), so a native application can put a
/// `traceparent`.
pub const PROTOCOL_MINOR: u16 = 6;
/// The first minor version with the SET verb.
pub const MINOR_WITH_SET: u16 = 1;
/// The first minor version whose MQPMO carries Context (the handle to pass context from).
pub const MINOR_WITH_CONTEXT: u16 = 2;
/// The first minor version whose MQCONN carries MQCSP credentials.
pub const MINOR_WITH_CREDENTIALS: u16 = 3;
/// The first minor version with channel compression (the hello's compression fields).
pub const MINOR_WITH_COMPRESSION: u16 = 4;
/// The first minor version with publish/subscribe: the SUB and OPENTOPIC verbs, and
/// message properties in the GET reply.
pub const MINOR_WITH_PUBSUB: u16 = 5;
/// The first minor version whose PUT and PUT1 carry message properties.
pub const MINOR_WITH_PUT_PROPERTIES: u16 = 6;

/// Largest encoded hello (either direction).
pub const MAX_HELLO_LEN: u32 = 1024;

/// Default MAXMSGL: 4 MiB, as MQ's default channel MAXMSGL.
pub const DEFAULT_MAX_MSG_LENGTH: u32 = 4 * 1024 * 1024;
/// Default heartbeat interval in seconds (MQ's HBINT default is 300).
pub const DEFAULT_HEARTBEAT_SECS: u32 = 300;
/// Default SHARECNV, as MQ's SVRCONN default.
pub const DEFAULT_SHARECNV: u32 = 10;

const KIND_CLIENT_HELLO: u8 = 1;
const KIND_SERVER_HELLO: u8 = 2;
const KIND_CHANNEL_HELLO: u8 = 3;
const KIND_CHANNEL_HELLO_REPLY: u8 = 4;
/// Magic (4) + total length (4) + kind (1).
const HELLO_PREFIX: usize = 9;

/// What a hello is, by its kind byte: how a listener tells an application's client
/// connection from a partner queue manager's message channel before decoding anything.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum HelloKind {
    /// A [`ClientHello`]: an application connecting (client or bindings).
    Client = KIND_CLIENT_HELLO,
    /// A [`ServerHello`]: the queue manager's answer to a client.
    Server = KIND_SERVER_HELLO,
    /// A [`crate::channel::ChannelHello`]: the initiating end of a message channel.
    Channel = KIND_CHANNEL_HELLO,
    /// A [`crate::channel::ChannelHelloReply`]: the responding end's answer.
    ChannelReply = KIND_CHANNEL_HELLO_REPLY,
}

impl HelloKind {
    /// The kind for a kind byte, if there is one.
    pub fn from_code(code: u8) -> Option<HelloKind> {
        Some(match code {
            KIND_CLIENT_HELLO => HelloKind::Client,
            KIND_SERVER_HELLO => HelloKind::Server,
            KIND_CHANNEL_HELLO => HelloKind::Channel,
            KIND_CHANNEL_HELLO_REPLY => HelloKind::ChannelReply,
            _ => return None,
        })
    }

    /// The kind byte.
    pub fn code(self) -> u8 {
        self as u8
    }

    fn name(self) -> &'static str {
        match self {
            HelloKind::Client => "ClientHello",
            HelloKind::Server => "ServerHello",
            HelloKind::Channel => "ChannelHello",
            HelloKind::ChannelReply => "ChannelHelloReply",
        }
    }
}

/// The kind of the hello at the front of `buf`, without consuming anything: `Ok(None)`
/// until its first 9 bytes are there. A listener calls it on the first bytes of a
/// connection to choose [`ClientHello::decode`] or
/// [`crate::channel::ChannelHello::decode`]. Bad magic, a length outside 9 to
/// [`MAX_HELLO_LEN`] or an unknown kind byte is refused as the decoders refuse it.
pub fn peek_hello_kind(buf: &[u8]) -> Result<Option<HelloKind>, WireError> {
    check_magic(buf)?;
    if buf.len() < HELLO_PREFIX {
        return Ok(None);
    }
    check_hello_len(buf)?;
    HelloKind::from_code(buf[8])
        .map(Some)
        .ok_or(WireError::UnexpectedVerb {
            verb: buf[8],
            expected: "a hello kind (1 client, 2 server, 3 channel, 4 channel reply)",
        })
}

bitflags! {
    /// Capability bits requested in `ClientHello` and granted in `ServerHello`.
    ///
    /// The granted set is the intersection of requested and supported. COMPRESSION is
    /// used from minor 4; the others are reserved for later issues.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct HelloFlags: u32 {
        /// Reserved: TLS upgrade after the hello. Must be 0 now.
        const TLS = 0x01;
        /// Channel compression (minor 4): in a client hello, its COMPHDR and COMPMSG lists
        /// follow; in a server hello, the techniques agreed follow.
        const COMPRESSION = 0x02;
        /// Reserved: asynchronous put (MQPMO_ASYNC_RESPONSE). Must be 0 now.
        const ASYNC_PUT = 0x04;
        /// Reserved: read-ahead of non-persistent messages. Must be 0 now.
        const READ_AHEAD = 0x08;
        const _ = !0;
    }
}

/// The client's opening message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientHello {
    /// Protocol major version.
    pub major: u16,
    /// Protocol minor version.
    pub minor: u16,
    /// Requested capabilities (0 in protocol 1.0).
    pub flags: HelloFlags,
    /// SVRCONN channel name (blank for bindings connections).
    pub channel: FixedStr<20>,
    /// Queue manager wanted; blank = whichever owns the listener.
    pub qmgr_name: FixedStr<48>,
    /// Largest message the client wants to handle (0 = the server's limit).
    pub max_msg_length: u32,
    /// Requested heartbeat interval in seconds (0 = none).
    pub heartbeat_interval: u32,
    /// Requested conversations per socket (SHARECNV; 0 and 1 = one).
    pub sharecnv: u32,
    /// Name of the application (MQCNO ApplName).
    pub appl_name: FixedStr<28>,
    /// The user the client runs as.
    pub user_id: FixedStr<12>,
    /// COMPHDR: header compression wanted, in order of preference (sent with the
    /// COMPRESSION flag, from minor 4; at most 2).
    pub compress_header: Vec<HeaderCompression>,
    /// COMPMSG: message compression wanted, in order of preference (sent with the
    /// COMPRESSION flag, from minor 4; at most 16).
    pub compress_message: Vec<MessageCompression>,
}

impl ClientHello {
    /// Whether the compression lists travel in this hello.
    fn has_compression_fields(&self) -> bool {
        self.minor >= MINOR_WITH_COMPRESSION && self.flags.contains(HelloFlags::COMPRESSION)
    }
}

impl Default for ClientHello {
    /// This crate's version, no flags, blank names, default limits.
    fn default() -> Self {
        ClientHello {
            major: PROTOCOL_MAJOR,
            minor: PROTOCOL_MINOR,
            flags: HelloFlags::empty(),
            channel: FixedStr::BLANK,
            qmgr_name: FixedStr::BLANK,
            max_msg_length: DEFAULT_MAX_MSG_LENGTH,
            heartbeat_interval: DEFAULT_HEARTBEAT_SECS,
            sharecnv: DEFAULT_SHARECNV,
            appl_name: FixedStr::BLANK,
            user_id: FixedStr::BLANK,
            compress_header: Vec::new(),
            compress_message: Vec::new(),
        }
    }
}

/// The server's answer: accepted with negotiated values, or refused with a reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerHello {
    /// OK, or FAILED with the reason (2540 unknown channel, 2058 wrong queue manager,
    /// 2059 not available, 2539 unsupported protocol version...).
    pub status: Status,
    /// Protocol major version of the server.
    pub major: u16,
    /// Negotiated minor version.
    pub minor: u16,
    /// Granted capabilities (none in protocol 1.0).
    pub flags: HelloFlags,
    /// Negotiated maximum message length.
    pub max_msg_length: u32,
    /// Negotiated heartbeat interval in seconds (0 = none).
    pub heartbeat_interval: u32,
    /// Conversations allowed on this socket (0 and 1 = one).
    pub sharecnv: u32,
    /// The queue manager's name.
    pub qmgr_name: FixedStr<48>,
    /// The server's software version, e.g. `ferry 0.1.0`.
    pub server_version: String,
    /// Human-readable explanation when refused; empty otherwise.
    pub message: String,
    /// The techniques agreed (sent when COMPRESSION is granted, from minor 4).
    pub compression: Techniques,
}

impl ServerHello {
    /// A refusal with `reason` and an explanation.
    pub fn refuse(reason: ReasonCode, message: impl Into<String>) -> Self {
        ServerHello {
            status: Status {
                comp: CompCode::Failed,
                reason,
            },
            major: PROTOCOL_MAJOR,
            minor: PROTOCOL_MINOR,
            flags: HelloFlags::empty(),
            max_msg_length: 0,
            heartbeat_interval: 0,
            sharecnv: 0,
            qmgr_name: FixedStr::BLANK,
            server_version: String::new(),
            message: message.into(),
            compression: Techniques::default(),
        }
    }
}

/// What a server offers, before negotiation with one client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerLimits {
    /// The channel's MAXMSGL.
    pub max_msg_length: u32,
    /// The channel's HBINT in seconds.
    pub heartbeat_interval: u32,
    /// The channel's SHARECNV.
    pub sharecnv: u32,
    /// Capabilities the server supports.
    pub flags: HelloFlags,
    /// The channel's COMPHDR list.
    pub compress_header: Vec<HeaderCompression>,
    /// The channel's COMPMSG list (ANY: whatever the client asks for).
    pub compress_message: Vec<MessageCompression>,
}

/// The values both sides use after the handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Negotiated {
    /// Minor protocol version (the lower of the two).
    pub minor: u16,
    /// Granted capabilities.
    pub flags: HelloFlags,
    /// Largest message: the lower of the two, the server's when the client asked 0.
    pub max_msg_length: u32,
    /// Heartbeat interval: the server's when the client proposes 0 or more, else the
    /// client's shorter one; 0 only when the server's is 0 (see [`negotiate`]).
    pub heartbeat_interval: u32,
    /// Conversations per socket: the lower of the two (0 and 1 mean one).
    pub sharecnv: u32,
    /// The compression techniques agreed (NONE unless COMPRESSION was granted).
    pub compression: Techniques,
}

/// Applies the negotiation rules of docs/protocol.md §3. The caller (the server) first
/// refuses a client whose major version differs from [`PROTOCOL_MAJOR`].
pub fn negotiate(client: &ClientHello, server: &ServerLimits) -> Negotiated {
    let max_msg_length = if client.max_msg_length == 0 {
        server.max_msg_length
    } else {
        client.max_msg_length.min(server.max_msg_length)
    };
    let minor = negotiate_minor(client.minor);
    let mut flags = client.flags & server.flags;
    if minor < MINOR_WITH_COMPRESSION {
        flags.remove(HelloFlags::COMPRESSION);
    }
    let compression = if flags.contains(HelloFlags::COMPRESSION) {
        Techniques {
            header: agree(&client.compress_header, &server.compress_header),
            message: agree(&client.compress_message, &server.compress_message),
        }
    } else {
        Techniques::default()
    };
    Negotiated {
        minor,
        flags,
        compression,
        max_msg_length,
        heartbeat_interval: negotiate_heartbeat(
            client.heartbeat_interval,
            server.heartbeat_interval,
        ),
        sharecnv: client.sharecnv.min(server.sharecnv),
    }
}

/// The heartbeat interval of a socket: the server's interval (the channel's HBINT) is the
/// longest a client gets, so a client that proposes none (0) or a longer one cannot make
/// the server keep a dead or silent socket for ever; a client may ask for a shorter one.
/// A server interval of 0 (HBINT(0)) turns heartbeats off whatever the client proposes.
pub fn negotiate_heartbeat(client: u32, server: u32) -> u32 {
    match client {
        0 => server,
        c => c.min(server),
    }
}

fn negotiate_minor(client: u16) -> u16 {
    #[allow(clippy::unnecessary_min_or_max)]
    client.min(PROTOCOL_MINOR)
}

/// Appends a hello prefix with a zero length; [`finish_hello`] patches the length.
pub(crate) fn begin_hello(out: &mut BytesMut, kind: HelloKind) -> usize {
    let start = out.len();
    out.put_slice(&MAGIC);
    out.put_u32_le(0);
    out.put_u8(kind.code());
    start
}

/// Patches the length of the hello started at `start`; a hello over [`MAX_HELLO_LEN`] is
/// removed from `out` again and refused.
pub(crate) fn finish_hello(out: &mut BytesMut, start: usize) -> Result<(), WireError> {
    let len = out.len() - start;
    if len > MAX_HELLO_LEN as usize {
        out.truncate(start);
        return Err(WireError::FrameTooLarge {
            len: len as u64,
            max: u64::from(MAX_HELLO_LEN),
        });
    }
    out[start + 4..start + 8].copy_from_slice(&(len as u32).to_le_bytes());
    Ok(())
}

/// Refuses a buffer whose first bytes (as many as are there, up to 4) are not [`MAGIC`].
fn check_magic(buf: &[u8]) -> Result<(), WireError> {
    let avail = buf.len().min(4);
    if buf[..avail] != MAGIC[..avail] {
        let mut m = [0u8; 4];
        m[..avail].copy_from_slice(&buf[..avail]);
        return Err(WireError::BadMagic(m));
    }
    Ok(())
}

/// The announced length of the hello whose 9-byte prefix is in `buf`, refused outside
/// 9 to [`MAX_HELLO_LEN`].
fn check_hello_len(buf: &[u8]) -> Result<u32, WireError> {
    let len = u32::from_le_bytes([buf[4], buf[5], buf[6], buf[7]]);
    if len > MAX_HELLO_LEN {
        return Err(WireError::FrameTooLarge {
            len: u64::from(len),
            max: u64::from(MAX_HELLO_LEN),
        });
    }
    if (len as usize) < HELLO_PREFIX {
        return Err(WireError::FrameTooSmall { len });
    }
    Ok(len)
}

/// Splits one hello of `kind` off `buf`: `Ok(None)` until complete; the body (after the
/// prefix) as a slice of the buffer.
pub(crate) fn split_hello(buf: &mut BytesMut, kind: HelloKind) -> Result<Option<Bytes>, WireError> {
    check_magic(buf)?;
    if buf.len() < HELLO_PREFIX {
        return Ok(None);
    }
    let len = check_hello_len(buf)?;
    if buf[8] != kind.code() {
        return Err(WireError::UnexpectedVerb {
            verb: buf[8],
            expected: kind.name(),
        });
    }
    if buf.len() < len as usize {
        return Ok(None);
    }
    let mut hello = buf.split_to(len as usize);
    let _ = hello.split_to(HELLO_PREFIX);
    Ok(Some(hello.freeze()))
}

impl ClientHello {
    /// Appends the encoded hello to `out`.
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), WireError> {
        let start = begin_hello(out, HelloKind::Client);
        out.put_u16_le(self.major);
        out.put_u16_le(self.minor);
        out.put_u32_le(self.flags.bits());
        put_fixed(out, &self.channel);
        put_fixed(out, &self.qmgr_name);
        out.put_u32_le(self.max_msg_length);
        out.put_u32_le(self.heartbeat_interval);
        out.put_u32_le(self.sharecnv);
        put_fixed(out, &self.appl_name);
        put_fixed(out, &self.user_id);
        if self.has_compression_fields() {
            put_list(out, &self.compress_header);
            put_list(out, &self.compress_message);
        }
        finish_hello(out, start)
    }

    /// Takes a client hello off the front of `buf`; `Ok(None)` until it is complete.
    ///
    /// Only the layout is checked: version and names are for the server to judge, so it
    /// can answer with a precise reason. A hello whose major version is not
    /// [`PROTOCOL_MAJOR`] still decodes as long as its prefix does; the body of another
    /// major version may not, in which case the server refuses with 2539.
    pub fn decode(buf: &mut BytesMut) -> Result<Option<ClientHello>, WireError> {
        let Some(body) = split_hello(buf, HelloKind::Client)? else {
            return Ok(None);
        };
        let mut r = Reader::new(&body);
        let mut hello = ClientHello {
            major: r.u16()?,
            minor: r.u16()?,
            flags: HelloFlags::from_bits_retain(r.u32()?),
            channel: r.fixed("ClientHello.channel")?,
            qmgr_name: r.fixed("ClientHello.qmgr_name")?,
            max_msg_length: r.u32()?,
            heartbeat_interval: r.u32()?,
            sharecnv: r.u32()?,
            appl_name: r.fixed("ClientHello.appl_name")?,
            user_id: r.fixed("ClientHello.user_id")?,
            compress_header: Vec::new(),
            compress_message: Vec::new(),
        };
        if hello.has_compression_fields() {
            hello.compress_header = get_list(
                &mut r,
                MAX_HEADER_COMPRESSION_LIST,
                "ClientHello.compress_header",
            )?;
            hello.compress_message = get_list(
                &mut r,
                MAX_MESSAGE_COMPRESSION_LIST,
                "ClientHello.compress_message",
            )?;
        }
        r.finish()?;
        Ok(Some(hello))
    }
}

impl ServerHello {
    /// Appends the encoded hello to `out`.
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), WireError> {
        let start = begin_hello(out, HelloKind::Server);
        put_status(out, &self.status);
        out.put_u16_le(self.major);
        out.put_u16_le(self.minor);
        out.put_u32_le(self.flags.bits());
        out.put_u32_le(self.max_msg_length);
        out.put_u32_le(self.heartbeat_interval);
        out.put_u32_le(self.sharecnv);
        put_fixed(out, &self.qmgr_name);
        put_string(out, &self.server_version)?;
        put_string(out, &self.message)?;
        if self.minor >= MINOR_WITH_COMPRESSION && self.flags.contains(HelloFlags::COMPRESSION) {
            out.put_u32_le(self.compression.header.value());
            out.put_u32_le(self.compression.message.value());
        }
        finish_hello(out, start)
    }

    /// Takes a server hello off the front of `buf`; `Ok(None)` until it is complete.
    pub fn decode(buf: &mut BytesMut) -> Result<Option<ServerHello>, WireError> {
        let Some(body) = split_hello(buf, HelloKind::Server)? else {
            return Ok(None);
        };
        let mut r = Reader::new(&body);
        let mut hello = ServerHello {
            status: get_status(&mut r)?,
            major: r.u16()?,
            minor: r.u16()?,
            flags: HelloFlags::from_bits_retain(r.u32()?),
            max_msg_length: r.u32()?,
            heartbeat_interval: r.u32()?,
            sharecnv: r.u32()?,
            qmgr_name: r.fixed("ServerHello.qmgr_name")?,
            server_version: r.string("ServerHello.server_version")?,
            message: r.string("ServerHello.message")?,
            compression: Techniques::default(),
        };
        if hello.minor >= MINOR_WITH_COMPRESSION && hello.flags.contains(HelloFlags::COMPRESSION) {
            hello.compression = Techniques {
                header: get_technique(r.u32()?, "ServerHello.compress_header")?,
                message: get_technique(r.u32()?, "ServerHello.compress_message")?,
            };
        }
        r.finish()?;
        Ok(Some(hello))
    }
}

/// Writes a compression list: `count u8` + one `u32` MQCOMPRESS value each.
pub(crate) fn put_list<T: Technique>(out: &mut BytesMut, list: &[T]) {
    debug_assert!(
        list.len() <= usize::from(u8::MAX),
        "compression list too long"
    );
    out.put_u8(list.len().min(usize::from(u8::MAX)) as u8);
    for t in list.iter().take(usize::from(u8::MAX)) {
        out.put_u32_le(t.value());
    }
}

/// Reads a compression list of at most `max` known techniques.
pub(crate) fn get_list<T: Technique>(
    r: &mut Reader<'_>,
    max: usize,
    field: &'static str,
) -> Result<Vec<T>, WireError> {
    let count = usize::from(r.u8()?);
    if count > max {
        return Err(WireError::InvalidValue {
            field,
            value: count as i64,
        });
    }
    (0..count)
        .map(|_| {
            let v = r.u32()?;
            T::from_value(v).ok_or(WireError::InvalidValue {
                field,
                value: i64::from(v),
            })
        })
        .collect()
}

/// A technique agreed by a server: a known one, and never ANY.
pub(crate) fn get_technique<T: Technique>(value: u32, field: &'static str) -> Result<T, WireError> {
    T::from_value(value)
        .filter(|t| Some(*t) != T::ANY)
        .ok_or(WireError::InvalidValue {
            field,
            value: i64::from(value),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client() -> ClientHello {
        ClientHello {
            channel: FixedStr::new("SYSTEM.DEF.SVRCONN").unwrap(),
            qmgr_name: FixedStr::new("QM1").unwrap(),
            appl_name: FixedStr::new("requester").unwrap(),
            user_id: FixedStr::new("app").unwrap(),
            ..ClientHello::default()
        }
    }

    #[test]
    fn client_hello_round_trips_at_every_split() {
        let mut full = BytesMut::new();
        client().encode(&mut full).unwrap();
        for cut in 0..full.len() {
            let mut part = BytesMut::from(&full[..cut]);
            assert_eq!(ClientHello::decode(&mut part), Ok(None), "cut {cut}");
        }
        let mut all = full.clone();
        assert_eq!(ClientHello::decode(&mut all), Ok(Some(client())));
        assert!(all.is_empty());
    }

    #[test]
    fn server_hello_round_trips() {
        let h = ServerHello {
            status: Status::OK,
            major: 1,
            minor: 0,
            flags: HelloFlags::empty(),
            max_msg_length: 1000,
            heartbeat_interval: 5,
            sharecnv: 10,
            qmgr_name: FixedStr::new("QM1").unwrap(),
            server_version: "ferry 0.1.0".into(),
            message: String::new(),
            compression: Techniques::default(),
        };
        let mut b = BytesMut::new();
        h.encode(&mut b).unwrap();
        assert_eq!(ServerHello::decode(&mut b), Ok(Some(h)));
        let r = ServerHello::refuse(ReasonCode::UnknownChannelName, "no channel X");
        r.encode(&mut b).unwrap();
        assert_eq!(ServerHello::decode(&mut b), Ok(Some(r)));
    }

    #[test]
    fn wrong_magic_and_kind_refused() {
        let mut b = BytesMut::from(&b"GET / HTTP/1.1\r\n"[..]);
        assert!(matches!(
            ClientHello::decode(&mut b),
            Err(WireError::BadMagic(_))
        ));
        let mut b = BytesMut::new();
        client().encode(&mut b).unwrap();
        assert!(matches!(
            ServerHello::decode(&mut b),
            Err(WireError::UnexpectedVerb { .. })
        ));
        let mut b = BytesMut::from(&b"FRY\x01\xff\xff\xff\x7f\x01"[..]);
        assert!(matches!(
            ClientHello::decode(&mut b),
            Err(WireError::FrameTooLarge { .. })
        ));
    }

    #[test]
    fn negotiation_rules() {
        let limits = ServerLimits {
            max_msg_length: 1 << 20,
            heartbeat_interval: 300,
            sharecnv: 10,
            flags: HelloFlags::empty(),
            compress_header: vec![HeaderCompression::None],
            compress_message: vec![MessageCompression::None],
        };
        let mut c = client();
        c.max_msg_length = 0;
        c.heartbeat_interval = 60;
        c.sharecnv = 100;
        c.flags = HelloFlags::TLS;
        let n = negotiate(&c, &limits);
        assert_eq!(n.max_msg_length, 1 << 20);
        assert_eq!(
            n.heartbeat_interval, 60,
            "a shorter interval is the client's to ask"
        );
        assert_eq!(n.sharecnv, 10);
        assert_eq!(n.flags, HelloFlags::empty());
        c.heartbeat_interval = 0;
        c.max_msg_length = 100;
        let n = negotiate(&c, &limits);
        assert_eq!(
            (n.heartbeat_interval, n.max_msg_length),
            (300, 100),
            "a client that wants no heartbeats gets the server's"
        );
    }

    fn svrconn(message: Vec<MessageCompression>) -> ServerLimits {
        ServerLimits {
            max_msg_length: 1 << 20,
            heartbeat_interval: 300,
            sharecnv: 10,
            flags: HelloFlags::COMPRESSION,
            compress_header: vec![HeaderCompression::None, HeaderCompression::System],
            compress_message: message,
        }
    }

    fn compressing(message: Vec<MessageCompression>) -> ClientHello {
        ClientHello {
            flags: HelloFlags::COMPRESSION,
            compress_header: vec![HeaderCompression::System],
            compress_message: message,
            ..client()
        }
    }

    #[test]
    fn compression_is_agreed_as_mq_does() {
        use MessageCompression as M;
        let server = svrconn(vec![M::ZlibFast, M::Lz4Fast]);
        let n = negotiate(&compressing(vec![M::Lz4Fast]), &server);
        assert_eq!(n.compression.message, M::Lz4Fast);
        assert_eq!(n.compression.header, HeaderCompression::System);
        assert!(n.flags.contains(HelloFlags::COMPRESSION));
        let n = negotiate(&compressing(vec![M::Lz4High]), &server);
        assert_eq!(
            n.compression.message,
            M::None,
            "a technique the channel lacks"
        );
        let n = negotiate(&compressing(vec![M::Rle]), &svrconn(vec![M::Any]));
        assert_eq!(n.compression.message, M::Rle);
    }

    #[test]
    fn a_minor_2_peer_never_compresses() {
        use MessageCompression as M;
        // An old client: no flag, no lists, minor 2.
        let old = ClientHello {
            minor: 2,
            ..client()
        };
        let n = negotiate(&old, &svrconn(vec![M::Any]));
        assert_eq!((n.minor, n.compression), (2, Techniques::default()));
        assert!(!n.flags.contains(HelloFlags::COMPRESSION));
        // Its hello bytes are what a minor-2 client sends: the lists are not there.
        let mut with_flag = BytesMut::new();
        ClientHello {
            flags: HelloFlags::COMPRESSION,
            compress_message: vec![M::Lz4Fast],
            ..old.clone()
        }
        .encode(&mut with_flag)
        .unwrap();
        let mut plain = BytesMut::new();
        old.encode(&mut plain).unwrap();
        assert_eq!(with_flag.len(), plain.len());
        // A server hello that grants nothing has no compression fields (an old client
        // reads it), also a refusal.
        let refusal = ServerHello::refuse(ReasonCode::UnknownChannelName, "no");
        let mut b = BytesMut::new();
        refusal.encode(&mut b).unwrap();
        let mut old_layout = b.clone();
        let decoded = ServerHello::decode(&mut old_layout).unwrap().unwrap();
        assert_eq!(decoded, refusal);
    }

    #[test]
    fn compression_fields_round_trip() {
        use MessageCompression as M;
        let c = compressing(vec![M::Lz4Fast, M::ZlibFast, M::None]);
        let mut b = BytesMut::new();
        c.encode(&mut b).unwrap();
        assert_eq!(ClientHello::decode(&mut b), Ok(Some(c)));
        let h = ServerHello {
            flags: HelloFlags::COMPRESSION,
            compression: Techniques {
                header: HeaderCompression::System,
                message: M::Lz4Fast,
            },
            status: Status::OK,
            ..ServerHello::refuse(ReasonCode::None, "")
        };
        h.encode(&mut b).unwrap();
        assert_eq!(ServerHello::decode(&mut b), Ok(Some(h)));
        // A list longer than MQ's, or an unknown value, is refused.
        let mut long = BytesMut::new();
        compressing(vec![M::Rle; 17]).encode(&mut long).unwrap();
        assert!(matches!(
            ClientHello::decode(&mut long),
            Err(WireError::InvalidValue { .. })
        ));
    }

    proptest::proptest! {
        /// The server's interval bounds every socket's; only HBINT(0) gives none.
        #[test]
        fn the_heartbeat_is_never_longer_than_the_servers(client: u32, server: u32) {
            let hb = negotiate_heartbeat(client, server);
            proptest::prop_assert!(hb <= server);
            proptest::prop_assert_eq!(hb == 0, server == 0);
            if client != 0 && client <= server {
                proptest::prop_assert_eq!(hb, client);
            }
        }
    }
}
