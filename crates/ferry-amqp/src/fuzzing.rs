//! Entry points that push arbitrary bytes through every decoder of the crate, and
//! through a server-role [`Connection`].
//!
//! The cargo-fuzz target `amqp_frame` (crates/ferry-amqp/fuzz) calls
//! [`decode_everything`], and a proptest in this crate's tests calls it too, so stable CI
//! covers the same path. Besides "never panics", it checks that whatever decodes
//! re-encodes to bytes that decode and re-encode to the same bytes (a fixed point; byte
//! comparison so NaN floats compare equal). [`feed_server`] plays a broker answering
//! every event (SASL, open, attach, credit, dispositions, sends) so the state machine
//! sees as much of its surface as the bytes reach.
//!
//! Random bytes rarely make a valid frame past the first, so [`drive_sequence`] (the
//! target `amqp_sequence`, and a proptest too) reads the bytes as a *script*: which
//! frame comes next (headers, SASL, open, begin, attach, flow, transfer, disposition,
//! detach, end, close, heartbeats, raw bytes, the clock moving on) and its fields, most
//! of them near the limits (handles and channels around the maxima, credit of 2^31 and
//! more, dispositions over every id, transfers split and aborted). A broker answers
//! every event, and after every frame the connection must stay within its [`Config`]:
//! sessions, links, incomplete bytes and what it writes back all bounded.

use bytes::{Bytes, BytesMut};

use crate::codec::Decoder;
use crate::codec::{from_bytes, to_bytes, Decode, Encode};
use crate::connection::{Config, Connection, Event, SaslServer};
use crate::frame::{encode_frame, encode_transfer, FrameDecoder, ProtocolHeader};
use crate::message::{Header, Message, PropertiesSpans, RawSections};
use crate::performative::*;
use crate::value::Value;
use crate::value::{Str, Symbol};

/// The frame limit used while fuzzing (1 MiB).
pub const FUZZ_MAX_FRAME: u32 = 1 << 20;

/// Decodes `data` as protocol header + frames, as each performative, as a value and as a
/// message. Panics only if a decoded value fails to round-trip (a codec bug).
pub fn decode_everything(data: &[u8]) {
    let bytes = Bytes::copy_from_slice(data);
    frames(data);
    round_trip::<Value>(&bytes);
    round_trip::<Performative>(&bytes);
    round_trip::<Open>(&bytes);
    round_trip::<Begin>(&bytes);
    round_trip::<Attach>(&bytes);
    round_trip::<Flow>(&bytes);
    round_trip::<Transfer>(&bytes);
    round_trip::<Disposition>(&bytes);
    round_trip::<Detach>(&bytes);
    round_trip::<End>(&bytes);
    round_trip::<Close>(&bytes);
    round_trip::<Source>(&bytes);
    round_trip::<LinkTarget>(&bytes);
    round_trip::<DeliveryState>(&bytes);
    round_trip::<Declare>(&bytes);
    round_trip::<Discharge>(&bytes);
    round_trip::<SaslInit>(&bytes);
    round_trip::<SaslOutcome>(&bytes);
    message(&bytes);
    let _ = fast_path_agrees(&bytes);
    feed_server(data);
}

/// Whatever a fast path (the performatives', the header's, the properties section's)
/// reads from `bytes`, starting at any described value in it, the general decoder reads
/// too, to the same value and the same length. Panics otherwise; returns how many reads
/// a fast path made (so a test can tell it was not bypassed).
pub fn fast_path_agrees(bytes: &Bytes) -> usize {
    bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == 0)
        .map(|(at, _)| fast_paths_agree_at(&bytes.slice(at..)))
        .sum()
}

fn fast_paths_agree_at(bytes: &Bytes) -> usize {
    let mut taken = 0;
    if let Some((quick, used)) = crate::performative::quick_decode(bytes) {
        taken += 1;
        let mut dec = Decoder::new(bytes.clone());
        let general: Result<Performative, _> = dec.read();
        // Compared encoded: a NaN float in a field map is not equal to itself.
        assert_eq!(
            general.as_ref().map(to_bytes),
            Ok(to_bytes(&quick)),
            "performative fast path disagrees"
        );
        assert_eq!(
            dec.position(),
            used,
            "performative fast path ends elsewhere"
        );
    }
    let mut start = Decoder::new(bytes.clone());
    let Ok(code) = start.read_code() else {
        return taken;
    };
    let (mut quick, mut general) = (start.clone(), start.clone());
    if let Some(h) = Header::quick(&mut quick, code) {
        taken += 1;
        assert_eq!(
            Header::general(&mut general, code),
            Ok(h),
            "header fast path disagrees"
        );
        assert_eq!(
            quick.position(),
            general.position(),
            "header fast path ends elsewhere"
        );
    }
    let (mut quick, mut general) = (start.clone(), start);
    if let Some(p) = PropertiesSpans::quick(&mut quick, code) {
        taken += 1;
        assert_eq!(
            PropertiesSpans::general(&mut general, code),
            Ok(p),
            "properties fast path disagrees"
        );
        assert_eq!(
            quick.position(),
            general.position(),
            "properties fast path ends elsewhere"
        );
    }
    taken
}

/// Feeds `data` to server-role connections: as the first bytes, after the AMQP header
/// (no SASL), and after the SASL header, answering every event like a broker.
pub fn feed_server(data: &[u8]) {
    for header in [None, Some(ProtocolHeader::Amqp), Some(ProtocolHeader::Sasl)] {
        let config = Config {
            max_frame_size: 4096,
            incoming_window: 8,
            max_message_size: Some(1 << 16),
            ..Config::default()
        };
        let mut sasl = SaslServer::plain_and_anonymous();
        sasl.allow_no_sasl = true;
        let mut server = Connection::server(config, sasl);
        let mut input = BytesMut::new();
        if let Some(h) = header {
            h.encode(&mut input);
        }
        input.extend_from_slice(data);
        serve(&mut server, &mut input);
    }
}

fn serve(server: &mut Connection, input: &mut BytesMut) {
    let mut events = Vec::new();
    let mut now = 0;
    for _ in 0..64 {
        let before = input.len();
        server.receive(input, now, &mut events);
        if events.is_empty() && input.len() == before {
            break;
        }
        for event in events.drain(..) {
            answer(server, event);
        }
        server.take_output();
        now += 1_000;
        server.tick(now, &mut events);
    }
}

/// What a broker would do: accept everything, grant credit, settle, send when it can.
fn answer(server: &mut Connection, event: Event) {
    // Results are ignored: the state may have moved on (closed, detached) meanwhile.
    match event {
        Event::SaslInit { .. } => {
            let _ = server.sasl_outcome(true);
        }
        Event::Open(_) => {
            let _ = server.open(Open::new("fuzz"));
        }
        Event::Attach { link, attach } => {
            let peer_sends = attach.role == Role::Sender;
            let _ = server.attach_reply(link, attach.source, attach.target);
            if peer_sends {
                let _ = server.grant_credit(link, 2);
            }
        }
        Event::Flow { link, drain, .. } => {
            if server.credit(link) > 0 {
                let _ = server.send(link, Bytes::from_static(b"t"), false, 0, |out| {
                    out.extend_from_slice(&[0x00, 0x53, 0x77, 0xa1, 0x01, b'x'])
                });
            }
            if drain {
                let _ = server.drained(link);
            }
        }
        Event::Message {
            link, delivery_id, ..
        } => {
            if server.credit(link) == 0 {
                let _ = server.grant_credit(link, 2);
            }
            let _ = server.disposition(
                link.session(),
                Role::Receiver,
                delivery_id,
                delivery_id,
                true,
                Some(DeliveryState::Accepted),
            );
        }
        _ => {}
    }
}

fn frames(data: &[u8]) {
    let mut buf = BytesMut::from(data);
    if ProtocolHeader::decode(&mut buf).is_err() {
        buf = BytesMut::from(data);
    }
    let mut dec = FrameDecoder::new(FUZZ_MAX_FRAME);
    while let Ok(Some(frame)) = dec.decode(&mut buf) {
        let Some(p) = &frame.performative else {
            continue;
        };
        let mut out = BytesMut::new();
        encode_frame(frame.channel, p, &frame.payload, &mut out);
        let again = FrameDecoder::new(u32::MAX)
            .decode(&mut out)
            .expect("re-encoded frame decodes")
            .expect("re-encoded frame is whole");
        assert_eq!(again.channel, frame.channel);
        assert_eq!(again.payload, frame.payload);
        assert_eq!(to_bytes(&again.performative), to_bytes(&frame.performative));
        if !frame.payload.is_empty() {
            message(&frame.payload);
        }
    }
}

fn round_trip<T: Decode + Encode>(bytes: &Bytes) {
    if let Ok(v) = from_bytes::<T>(bytes.clone()) {
        let first = to_bytes(&v);
        let again = from_bytes::<T>(first.clone()).expect("re-encoded value decodes");
        assert_eq!(to_bytes(&again), first, "encoding is not a fixed point");
    }
}

fn message(bytes: &Bytes) {
    let scanned = RawSections::scan(bytes.clone());
    let decoded = Message::decode_with_sections(bytes.clone());
    // The broker's decode (properties borrowed) accepts exactly what the owned decode
    // accepts, and reads the same message.
    let borrowed = Message::decode_borrowing_properties(bytes);
    match (&decoded, &borrowed) {
        (Ok((m, raw)), Ok((rest, properties, raw_b))) => {
            assert_eq!(raw, raw_b, "both decodes find the same sections");
            assert_eq!(m.properties, properties.map(|p| p.to_owned()));
            let mut whole = rest.clone();
            whole.properties = m.properties.clone();
            // Compared encoded: a NaN float is not equal to itself, its bytes are.
            let (mut a, mut b) = (BytesMut::new(), BytesMut::new());
            whole.encode(&mut a);
            m.encode(&mut b);
            assert_eq!(a, b, "the other sections decode the same");
        }
        (Err(_), Err(_)) => {}
        _ => panic!(
            "owned and borrowing decodes disagree: {:?} vs {:?}",
            decoded.as_ref().err(),
            borrowed.as_ref().err()
        ),
    }
    if let Ok((m, _)) = &decoded {
        // A coordinator reads its control straight from the amqp-value section: the same
        // declare or discharge the generic value holds, or none when it holds neither.
        let direct = TxnControl::from_message(bytes.clone()).ok();
        let by_value = match &m.body {
            Some(crate::message::Body::Value(v)) => crate::codec::from_value::<Declare>(v)
                .map(TxnControl::Declare)
                .or_else(|_| crate::codec::from_value::<Discharge>(v).map(TxnControl::Discharge))
                .ok(),
            _ => None,
        };
        let encoded = |c: &TxnControl| match c {
            TxnControl::Declare(d) => to_bytes(d),
            TxnControl::Discharge(d) => to_bytes(d),
        };
        assert_eq!(
            direct.as_ref().map(encoded),
            by_value.as_ref().map(encoded),
            "the direct read of a coordinator message disagrees with the generic one"
        );
    }
    if let Ok((m, raw)) = decoded {
        // Whatever decodes also scans, to the same spans.
        assert_eq!(scanned.as_ref(), Ok(&raw));
        let mut first = BytesMut::new();
        m.encode(&mut first);
        let again = Message::decode(first.clone().freeze()).expect("re-encoded message decodes");
        let mut second = BytesMut::new();
        again.encode(&mut second);
        assert_eq!(first, second, "message encoding is not a fixed point");
    }
}

/// The limits of the server that [`drive_sequence`] drives: small, so a short script
/// reaches every one of them.
pub fn sequence_config() -> Config {
    Config {
        max_frame_size: 4096,
        channel_max: 7,
        idle_time_out: Some(10_000),
        handle_max: 15,
        incoming_window: 8,
        max_message_size: Some(8192),
        max_links: 6,
        max_incomplete_bytes: 4096,
    }
}

/// Reads a script from `data` and plays it against a server-role connection answered
/// like a broker; panics if the connection ever holds more than its
/// [`sequence_config`] allows or writes back far more than it was sent.
pub fn drive_sequence(data: &[u8]) {
    drive_sequence_depth(data);
}

/// [`drive_sequence`], returning how far the script got: 1 when the connection opened,
/// 2 when a session began, 3 when a link attached, 4 when a message arrived (so tests
/// can check scripts reach deep states).
pub fn drive_sequence_depth(data: &[u8]) -> u8 {
    let mut depth = 0u8;
    let config = sequence_config();
    let mut script = Script { data, at: 0 };
    let prelude = script.byte() % 8;
    let mut sasl = SaslServer::plain_and_anonymous();
    sasl.allow_no_sasl = prelude >= 3 || script.flag();
    let mut server = Connection::server(config.clone(), sasl);
    let mut input = BytesMut::new();
    let mut events = Vec::new();
    let mut now = 0u64;
    match prelude {
        0..=2 => {
            ProtocolHeader::Sasl.encode(&mut input);
            let init = SaslInit {
                mechanism: Symbol::from_static("ANONYMOUS"),
                initial_response: None,
                hostname: None,
            };
            encode_frame(0, &Performative::SaslInit(init), &[], &mut input);
            ProtocolHeader::Amqp.encode(&mut input);
            encode_frame(0, &Performative::Open(Open::new("fuzz")), &[], &mut input);
        }
        3..=5 => {
            ProtocolHeader::Amqp.encode(&mut input);
            encode_frame(0, &Performative::Open(Open::new("fuzz")), &[], &mut input);
        }
        // The script starts from the first byte (headers are among its steps).
        _ => {}
    }
    if !input.is_empty() {
        // Opened: a session on channel 0 to start from (the script adds more, or not).
        let begin = Begin {
            remote_channel: None,
            next_outgoing_id: 0,
            incoming_window: 100,
            outgoing_window: 100,
            handle_max: 100,
            offered_capabilities: Vec::new(),
            desired_capabilities: Vec::new(),
            properties: Vec::new(),
        };
        encode_frame(0, &Performative::Begin(begin), &[], &mut input);
        // And, most of the time, a link the client sends on (handle 0) and one it
        // receives on (handle 1).
        if prelude % 3 != 2 {
            for (handle, role) in [(0, Role::Sender), (1, Role::Receiver)] {
                let attach = Attach {
                    name: Str::from(format!("link-{handle}")),
                    handle,
                    role,
                    source: Some(Source::default()),
                    target: Some(LinkTarget::Node(Target::default())),
                    initial_delivery_count: Some(0),
                    ..Attach::default()
                };
                encode_frame(0, &Performative::Attach(Box::new(attach)), &[], &mut input);
            }
        }
    }
    let mut sent = 0usize;
    for step in 0..257 {
        if script.done() {
            break;
        }
        let before = input.len();
        if step > 0 {
            // (The first round answers the prelude alone, as a broker would before the
            // client's next frames.)
            now += script.step(&mut input);
        }
        let fed = input.len() - before;
        server.receive(&mut input, now, &mut events);
        for event in events.drain(..) {
            depth = depth.max(match &event {
                Event::Open(_) => 1,
                Event::Begin { .. } => 2,
                Event::Attach { .. } => 3,
                Event::Message { .. } => 4,
                _ => 0,
            });
            if let Event::Flow { link, .. } = &event {
                if server.credit(*link) > 0 {
                    sent += 1;
                }
            }
            answer(&mut server, event);
        }
        if let Some(next) = server.tick(now, &mut events) {
            debug_assert!(next >= now);
        }
        for event in events.drain(..) {
            answer(&mut server, event);
        }
        let f = server.footprint();
        assert!(f.sessions <= usize::from(config.channel_max) + 1, "{f:?}");
        assert!(f.live_links <= config.max_links, "{f:?}");
        assert!(f.links <= 2 * config.max_links, "{f:?}");
        let one_message = config.max_message_size.unwrap_or(0) as usize;
        assert!(
            f.incomplete_bytes <= config.max_incomplete_bytes.max(one_message),
            "{f:?}"
        );
        assert!(f.unsettled_out <= sent, "{f:?} after {sent} sends");
        let out = server.take_output();
        // An answer echoes at most what it answers (a refused attach echoes its name),
        // plus frames of a fixed size.
        assert!(
            out.len() <= 4 * fed + 64 * 1024,
            "{} bytes out for {fed} in",
            out.len()
        );
        if server.is_finished() {
            assert_eq!(f.sessions, 0, "a finished connection holds nothing: {f:?}");
            break;
        }
    }
    depth
}

/// The script: bytes read one field at a time, zeros once they run out.
struct Script<'a> {
    data: &'a [u8],
    at: usize,
}

impl Script<'_> {
    fn done(&self) -> bool {
        self.at >= self.data.len()
    }

    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    fn flag(&mut self) -> bool {
        self.byte() & 1 == 1
    }

    fn u32(&mut self) -> u32 {
        u32::from_be_bytes([self.byte(), self.byte(), self.byte(), self.byte()])
    }

    /// A number near the interesting values: small ones, the limits, 2^31, 2^32-1.
    fn number(&mut self) -> u32 {
        match self.byte() % 8 {
            0..=2 => u32::from(self.byte() % 20),
            3 => 0x7fff_ffff,
            4 => 0x8000_0000,
            5 => u32::MAX,
            6 => u32::MAX - u32::from(self.byte() % 4),
            _ => self.u32(),
        }
    }

    /// Mostly channel 0 (a frame on a channel never begun ends the connection), some
    /// others up to and past channel-max.
    fn channel(&mut self) -> u16 {
        match self.byte() % 64 {
            0..=58 => 0,
            59..=61 => 1 + u16::from(self.byte() % 3),
            62 => u16::from(self.byte() % 10),
            _ => u16::from_be_bytes([self.byte(), self.byte()]),
        }
    }

    fn handle(&mut self) -> u32 {
        // Mostly the two links the prelude attaches (a frame on a handle never attached
        // ends the session), some others up to and past handle-max.
        match self.byte() % 16 {
            0..=13 => u32::from(self.byte() % 2),
            14 => u32::from(self.byte() % 20),
            _ => self.number(),
        }
    }

    fn state(&mut self) -> Option<DeliveryState> {
        match self.byte() % 6 {
            0 => None,
            1 => Some(DeliveryState::Accepted),
            2 => Some(DeliveryState::Released),
            3 => Some(DeliveryState::Rejected { error: None }),
            4 => Some(DeliveryState::Modified {
                delivery_failed: self.flag(),
                undeliverable_here: self.flag(),
                message_annotations: Vec::new(),
            }),
            _ => Some(DeliveryState::Received {
                section_number: self.number(),
                section_offset: u64::from(self.number()),
            }),
        }
    }

    /// Appends the next scripted frame (or bytes) to `input`; returns how far the
    /// clock moves (ms).
    fn step(&mut self, input: &mut BytesMut) -> u64 {
        let mut channel = self.channel();
        let p = match self.byte() % 32 {
            0..=3 if self.byte().is_multiple_of(2) => {
                // Channel 0 is begun already, most of the time.
                channel = u16::from(self.byte() % 10);
                Performative::Begin(Begin {
                    remote_channel: self
                        .byte()
                        .is_multiple_of(8)
                        .then(|| u16::from(self.byte() % 8)),
                    next_outgoing_id: self.number(),
                    incoming_window: self.number(),
                    outgoing_window: self.number(),
                    handle_max: self.number(),
                    offered_capabilities: Vec::new(),
                    desired_capabilities: Vec::new(),
                    properties: Vec::new(),
                })
            }
            0..=9 => {
                let address = Str::from(format!("Q{}", self.byte() % 3));
                let role = if self.flag() {
                    Role::Sender
                } else {
                    Role::Receiver
                };
                // A new handle most of the time (0 and 1 are the prelude's).
                let handle = match self.byte() % 16 {
                    0 => self.handle(),
                    n => 2 + u32::from(n % 8),
                };
                Performative::Attach(Box::new(Attach {
                    name: Str::from(format!("link-{}", self.byte() % 8)),
                    handle,
                    role,
                    snd_settle_mode: if self.flag() {
                        SenderSettleMode::Settled
                    } else {
                        SenderSettleMode::Unsettled
                    },
                    source: Some(Source {
                        address: Some(address.clone()),
                        ..Source::default()
                    }),
                    target: Some(LinkTarget::Node(Target {
                        address: Some(address),
                        ..Target::default()
                    })),
                    initial_delivery_count: self.flag().then(|| self.number()),
                    max_message_size: self.flag().then(|| u64::from(self.number())),
                    ..Attach::default()
                }))
            }
            10..=13 => Performative::Flow(Flow {
                next_incoming_id: self.flag().then(|| self.number()),
                incoming_window: self.number(),
                next_outgoing_id: self.number(),
                outgoing_window: self.number(),
                handle: self.flag().then(|| self.handle()),
                delivery_count: self.flag().then(|| self.number()),
                link_credit: self.flag().then(|| self.number()),
                available: None,
                drain: self.flag(),
                echo: self.flag(),
                properties: Vec::new(),
            }),
            14..=19 => {
                let t = Transfer {
                    handle: self.handle(),
                    delivery_id: (!self.byte().is_multiple_of(8)).then(|| self.number()),
                    delivery_tag: Some(Bytes::from(vec![self.byte(); 4])),
                    message_format: Some(0),
                    settled: Some(self.flag()),
                    more: self.flag(),
                    aborted: self.byte().is_multiple_of(8),
                    ..Transfer::default()
                };
                let len = match self.byte() {
                    0 => 5000, // over max-frame-size
                    n => usize::from(n) * 12,
                };
                encode_transfer(channel, &t, &vec![0x42; len], input);
                return 10;
            }
            20..=23 => Performative::Disposition(Disposition {
                role: if self.flag() {
                    Role::Receiver
                } else {
                    Role::Sender
                },
                first: self.number(),
                last: self.flag().then(|| self.number()),
                settled: self.flag(),
                state: self.state(),
                batchable: false,
            }),
            24 | 25 => Performative::Detach(Detach {
                handle: self.handle(),
                closed: self.flag(),
                error: None,
            }),
            26 if self.byte().is_multiple_of(2) => Performative::End(End::default()),
            27 | 28 => match self.byte() % 4 {
                0 => Performative::Close(Close::default()),
                1 => Performative::Open(Open::new("again")),
                2 => {
                    crate::frame::encode_heartbeat(input);
                    return 1_000;
                }
                _ => return u64::from(self.number() % 100_000),
            },
            29 => {
                if self.flag() {
                    ProtocolHeader::Amqp.encode(input);
                } else {
                    ProtocolHeader::Sasl.encode(input);
                }
                return 0;
            }
            _ => {
                // Raw bytes (which mostly end the connection), one time in four.
                if !self.byte().is_multiple_of(4) {
                    return 100;
                }
                let n = usize::from(self.byte() % 32);
                for _ in 0..n {
                    let b = self.byte();
                    input.extend_from_slice(&[b]);
                }
                return 0;
            }
        };
        encode_frame(channel, &p, &[], input);
        10
    }
}
