//! Channel compression (COMPMSG, COMPHDR) of the frames that carry a message: PUT and PUT1
//! requests and GET replies. Pure: bytes in, bytes out, no I/O and no clock.
//!
//! The techniques are agreed in the hello (docs/protocol.md §3). A sender compresses a
//! message frame's data with the agreed COMPMSG technique and its descriptor part with the
//! agreed COMPHDR one, keeps whichever part came out smaller, and marks the frame
//! [`FrameFlags::COMPRESSED`]; when neither part gets smaller the frame goes as it is. The
//! payload of a compressed frame is:
//!
//! ```text
//! 0  header technique  u8   0 NONE, 8 SYSTEM (run-length encoding)
//! 1  message technique u8   0 NONE, 1 RLE, 2 ZLIBFAST, 4 ZLIBHIGH, 16 LZ4FAST, 32 LZ4HIGH
//! 2  reserved          u16  0
//! 4  head length       u32  the uncompressed payload before the message data
//! 8  data length       u32  the uncompressed message data
//! 12 head stored       u32  bytes the head takes below (= head length with NONE)
//! 16 head, then the message data (the rest of the payload)
//! ```
//!
//! The receiver ([`FrameExpander`]) refuses a technique the connection did not agree on,
//! and checks the announced lengths against the negotiated limit *before* it allocates:
//! a frame cannot make it hold more than MAXMSGL plus the frame overhead, however well
//! its data claims to compress. Damaged data is a protocol violation like any other.

use bytes::{BufMut, BytesMut};
use ferry_mqi::{HeaderCompression, MessageCompression, Technique};
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

use crate::frame::{Frame, FrameFlags, HEADER_LEN};
use crate::WireError;

/// Bytes of the compressed-payload prefix (techniques and lengths).
pub const PREFIX_LEN: usize = 16;

/// Message data shorter than this is sent as it is: no technique gains on it.
pub const MIN_DATA_LEN: usize = 32;

/// A descriptor part shorter than this is sent as it is.
pub const MIN_HEAD_LEN: usize = 16;

/// The techniques a connection agreed on in its hello.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Techniques {
    /// COMPHDR in use.
    pub header: HeaderCompression,
    /// COMPMSG in use.
    pub message: MessageCompression,
}

impl Techniques {
    /// Whether anything is compressed on the connection.
    pub fn any(&self) -> bool {
        self.header != HeaderCompression::None || self.message != MessageCompression::None
    }
}

/// What compressing or expanding one message frame did, for COMPRATE and COMPMSG.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowSize {
    /// Bytes of the parts subject to compression, uncompressed.
    pub before: usize,
    /// The same parts as they travel.
    pub after: usize,
    /// The technique the message data travelled with (NONE when it did not shrink).
    pub message: MessageCompression,
    /// The technique the descriptor part travelled with.
    pub header: HeaderCompression,
}

/// Compresses message frames for one connection, keeping the codecs' state between
/// messages (a zlib stream's tables are large, an LZ4 hash table is not small either).
pub struct FrameCompressor {
    techniques: Techniques,
    deflate: Option<Compress>,
    lz4_table: Option<lz4_flex::block::CompressTable>,
    head: Vec<u8>,
    data: Vec<u8>,
}

impl std::fmt::Debug for FrameCompressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameCompressor")
            .field("techniques", &self.techniques)
            .finish_non_exhaustive()
    }
}

impl FrameCompressor {
    /// A compressor for the agreed `techniques`.
    pub fn new(techniques: Techniques) -> Self {
        FrameCompressor {
            techniques,
            deflate: None,
            lz4_table: None,
            head: Vec::new(),
            data: Vec::new(),
        }
    }

    /// The agreed techniques.
    pub fn techniques(&self) -> Techniques {
        self.techniques
    }

    /// Compresses the frame that starts at `start` in `out` (the last frame there) and
    /// whose payload ends with `data_len` bytes of message data. Leaves the frame as it is
    /// when nothing shrinks. Returns the sizes before and after.
    pub fn compress_frame(
        &mut self,
        out: &mut BytesMut,
        start: usize,
        data_len: usize,
    ) -> FlowSize {
        let payload_at = start + HEADER_LEN;
        debug_assert!(out.len() >= payload_at, "no frame at {start}");
        let (flow, compressed) = self.compress_tail(out, payload_at, data_len);
        if compressed {
            let total = (out.len() - start) as u32;
            out[start..start + 4].copy_from_slice(&total.to_le_bytes());
            out[start + 13] |= FrameFlags::COMPRESSED.bits();
        }
        flow
    }

    /// Compresses `payload` in place, a whole message payload whose last `data_len`
    /// bytes are message data, into the compressed-payload layout (the module comment),
    /// for a protocol that marks compression its own way (a message channel's
    /// `MessageFlags::COMPRESSED`). Returns the sizes and whether it was compressed;
    /// when nothing shrinks the payload is left as it is.
    pub fn compress_payload(
        &mut self,
        payload: &mut BytesMut,
        data_len: usize,
    ) -> (FlowSize, bool) {
        self.compress_tail(payload, 0, data_len)
    }

    /// Compresses what `out` holds from `payload_at` (a payload ending with `data_len`
    /// bytes of message data) in place: the sizes, and whether it was rewritten.
    fn compress_tail(
        &mut self,
        out: &mut BytesMut,
        payload_at: usize,
        data_len: usize,
    ) -> (FlowSize, bool) {
        let payload_len = out.len().saturating_sub(payload_at);
        debug_assert!(data_len <= payload_len, "message data beyond the payload");
        let data_len = data_len.min(payload_len);
        let head_len = payload_len - data_len;
        let mut flow = FlowSize {
            before: data_len,
            after: data_len,
            ..FlowSize::default()
        };
        if self.techniques.header == HeaderCompression::System {
            flow.before += head_len;
            flow.after += head_len;
        }
        if !self.techniques.any() {
            return (flow, false);
        }
        let (head, data) = out[payload_at..].split_at(head_len);
        let message = self.techniques.message;
        let data_used = if message != MessageCompression::None && data_len >= MIN_DATA_LEN {
            self.data.clear();
            let shrank = match message {
                MessageCompression::Rle => rle_encode(data, &mut self.data, data_len),
                MessageCompression::ZlibFast | MessageCompression::ZlibHigh => {
                    let level = if message == MessageCompression::ZlibFast {
                        Compression::fast()
                    } else {
                        Compression::best()
                    };
                    let deflate = self
                        .deflate
                        .get_or_insert_with(|| Compress::new(level, true));
                    deflate_into(deflate, data, &mut self.data)
                }
                MessageCompression::Lz4Fast | MessageCompression::Lz4High => {
                    let table = self.lz4_table.get_or_insert_with(Default::default);
                    lz4_into(table, data, &mut self.data)
                }
                MessageCompression::None | MessageCompression::Any => false,
            };
            shrank && self.data.len() < data_len
        } else {
            false
        };
        let head_used =
            self.techniques.header == HeaderCompression::System && head_len >= MIN_HEAD_LEN && {
                self.head.clear();
                rle_encode(head, &mut self.head, head_len)
            };
        if !data_used && !head_used {
            return (flow, false);
        }
        let header = if head_used {
            HeaderCompression::System
        } else {
            HeaderCompression::None
        };
        let used = if data_used {
            message
        } else {
            MessageCompression::None
        };
        // Rebuild the payload: prefix, head, data. The head is small: a raw one is set
        // aside so the payload can be rewritten in place.
        if !head_used {
            self.head.clear();
            self.head.extend_from_slice(head);
        }
        let raw_data = if data_used {
            None
        } else {
            // Only the descriptor shrank (COMPHDR alone): the data moves.
            Some(BytesMut::from(data))
        };
        let stored_head = self.head.len();
        out.truncate(payload_at);
        out.reserve(
            PREFIX_LEN + stored_head + raw_data.as_ref().map_or(self.data.len(), |d| d.len()),
        );
        out.put_u8(header.value() as u8);
        out.put_u8(used.value() as u8);
        out.put_u16_le(0);
        out.put_u32_le(head_len as u32);
        out.put_u32_le(data_len as u32);
        out.put_u32_le(stored_head as u32);
        out.put_slice(&self.head);
        match &raw_data {
            Some(d) => out.put_slice(d),
            None => out.put_slice(&self.data),
        }
        if head_used {
            flow.after = flow.after - head_len + self.head.len();
        }
        if data_used {
            flow.after = flow.after - data_len + self.data.len();
        }
        flow.message = used;
        flow.header = header;
        (flow, true)
    }
}

/// Expands compressed frames for one connection.
pub struct FrameExpander {
    techniques: Techniques,
    inflate: Option<Decompress>,
}

impl std::fmt::Debug for FrameExpander {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameExpander")
            .field("techniques", &self.techniques)
            .finish_non_exhaustive()
    }
}

impl FrameExpander {
    /// An expander accepting the agreed `techniques` (and NONE).
    pub fn new(techniques: Techniques) -> Self {
        FrameExpander {
            techniques,
            inflate: None,
        }
    }

    /// The frame with its payload expanded, when it is compressed (the flag cleared), and
    /// the sizes before and after; a frame without the flag comes back as it is, with
    /// `None`. `max_payload` bounds the expanded payload (the negotiated frame limit less
    /// the frame header): a frame that announces more is refused before anything is
    /// allocated, and data that expands to anything but what it announced is refused too.
    pub fn expand(
        &mut self,
        mut frame: Frame,
        max_payload: usize,
    ) -> Result<(Frame, Option<FlowSize>), WireError> {
        if !frame.flags.contains(FrameFlags::COMPRESSED) {
            return Ok((frame, None));
        }
        let (expanded, flow) = self.expand_payload(&frame.payload, max_payload)?;
        frame.payload = expanded.freeze();
        frame.flags.remove(FrameFlags::COMPRESSED);
        Ok((frame, Some(flow)))
    }

    /// Expands a payload in the compressed-payload layout (the module comment), as
    /// [`FrameExpander::expand`] does for a frame: for a protocol that marks
    /// compression its own way. `max_payload` bounds the expanded payload.
    pub fn expand_payload(
        &mut self,
        p: &[u8],
        max_payload: usize,
    ) -> Result<(BytesMut, FlowSize), WireError> {
        if p.len() < PREFIX_LEN {
            return Err(WireError::Truncated);
        }
        let header = technique::<HeaderCompression>(p[0])?;
        let message = technique::<MessageCompression>(p[1])?;
        let reserved = u16::from_le_bytes([p[2], p[3]]);
        if reserved != 0 {
            return Err(WireError::ReservedBits {
                field: "compressed payload prefix",
                bits: u32::from(reserved),
            });
        }
        if header != HeaderCompression::None && header != self.techniques.header {
            return Err(not_agreed(header.keyword(), header.value()));
        }
        if message != MessageCompression::None && message != self.techniques.message {
            return Err(not_agreed(message.keyword(), message.value()));
        }
        let u32_at = |i: usize| u32::from_le_bytes([p[i], p[i + 1], p[i + 2], p[i + 3]]) as usize;
        let (head_len, data_len, head_stored) = (u32_at(4), u32_at(8), u32_at(12));
        let total = head_len as u64 + data_len as u64;
        if total > max_payload as u64 {
            return Err(WireError::ExpandsTooLarge {
                len: total,
                max: max_payload as u64,
            });
        }
        let rest = &p[PREFIX_LEN..];
        if head_stored > rest.len() {
            return Err(WireError::Truncated);
        }
        let (head_in, data_in) = rest.split_at(head_stored);
        if header == HeaderCompression::None && head_stored != head_len {
            return Err(WireError::InvalidValue {
                field: "compressed payload head stored",
                value: head_stored as i64,
            });
        }
        if message == MessageCompression::None && data_in.len() != data_len {
            return Err(WireError::InvalidValue {
                field: "compressed payload data length",
                value: data_len as i64,
            });
        }
        let mut expanded = BytesMut::zeroed(head_len + data_len);
        let (head_out, data_out) = expanded.split_at_mut(head_len);
        match header {
            HeaderCompression::None => head_out.copy_from_slice(head_in),
            HeaderCompression::System => rle_decode_into(head_in, head_out)
                .map_err(|detail| corrupt(HeaderCompression::System.keyword(), detail))?,
        }
        match message {
            MessageCompression::None => data_out.copy_from_slice(data_in),
            MessageCompression::Rle => {
                rle_decode_into(data_in, data_out).map_err(|d| corrupt(message.keyword(), d))?
            }
            MessageCompression::ZlibFast | MessageCompression::ZlibHigh => {
                let inflate = self.inflate.get_or_insert_with(|| Decompress::new(true));
                inflate_into(inflate, data_in, data_out)
                    .map_err(|d| corrupt(message.keyword(), d))?
            }
            MessageCompression::Lz4Fast | MessageCompression::Lz4High => {
                lz4_decode_into(data_in, data_out).map_err(|d| corrupt(message.keyword(), d))?
            }
            MessageCompression::Any => return Err(not_agreed("ANY", message.value())),
        }
        let mut flow = FlowSize {
            before: data_len,
            after: data_in.len(),
            message,
            header,
        };
        if self.techniques.header == HeaderCompression::System {
            flow.before += head_len;
            flow.after += head_stored;
        }
        Ok((expanded, flow))
    }
}

fn technique<T: Technique>(byte: u8) -> Result<T, WireError> {
    T::from_value(u32::from(byte))
        .filter(|t| Some(*t) != T::ANY)
        .ok_or(WireError::InvalidValue {
            field: "compression technique",
            value: i64::from(byte),
        })
}

fn not_agreed(technique: &'static str, value: u32) -> WireError {
    WireError::TechniqueNotAgreed { technique, value }
}

fn corrupt(technique: &'static str, detail: &'static str) -> WireError {
    WireError::CorruptCompressedData { technique, detail }
}

/// zlib-compresses `input` into `out` (emptied first); false when the result would not
/// be smaller than the input (compression stops there).
fn deflate_into(deflate: &mut Compress, input: &[u8], out: &mut Vec<u8>) -> bool {
    deflate.reset();
    out.clear();
    // compress_vec writes into the spare capacity only: a stream that does not end
    // within the input's length would not be smaller.
    out.reserve(input.len());
    matches!(
        deflate.compress_vec(input, out, FlushCompress::Finish),
        Ok(Status::StreamEnd)
    ) && out.len() < input.len()
}

/// Inflates `input` into exactly `out`.
fn inflate_into(
    inflate: &mut Decompress,
    input: &[u8],
    out: &mut [u8],
) -> Result<(), &'static str> {
    inflate.reset(true);
    let status = inflate
        .decompress(input, out, FlushDecompress::Finish)
        .map_err(|_| "the zlib stream is damaged")?;
    if inflate.total_out() as usize != out.len() {
        return Err("the zlib stream holds less data than announced");
    }
    if status != Status::StreamEnd {
        // The output is full but the stream goes on: more data than announced.
        return Err("the zlib stream holds more data than announced");
    }
    if inflate.total_in() as usize != input.len() {
        return Err("bytes follow the end of the zlib stream");
    }
    Ok(())
}

/// LZ4-block-compresses `input` into `out`; false on failure.
fn lz4_into(table: &mut lz4_flex::block::CompressTable, input: &[u8], out: &mut Vec<u8>) -> bool {
    out.clear();
    out.resize(lz4_flex::block::get_maximum_output_size(input.len()), 0);
    match lz4_flex::block::compress_into_with_table(input, out, table) {
        Ok(n) => {
            out.truncate(n);
            true
        }
        Err(_) => false,
    }
}

/// Decodes an LZ4 block into exactly `out`.
fn lz4_decode_into(input: &[u8], out: &mut [u8]) -> Result<(), &'static str> {
    match lz4_flex::block::decompress_into(input, out) {
        Ok(n) if n == out.len() => Ok(()),
        Ok(_) => Err("the LZ4 block holds less data than announced"),
        Err(_) => Err("the LZ4 block is damaged or holds more data than announced"),
    }
}

/// Longest run one RLE repeat token covers.
const RLE_MAX_RUN: usize = 130;
/// Shortest run worth a repeat token.
const RLE_MIN_RUN: usize = 3;
/// Longest literal stretch one token covers.
const RLE_MAX_LITERAL: usize = 128;
/// Input read before the encoder judges whether run-length encoding pays.
const RLE_PROBE: usize = 512;

/// Run-length encodes `input` onto `out` (MQ's RLE technique; Ferry's SYSTEM header
/// compression too). Tokens: a control byte `n` below 128 is followed by `n + 1` literal
/// bytes; `n` of 128 or more by one byte that repeats `n - 125` times (3 to 130). Stops
/// and returns false as soon as `out` would reach `limit` bytes, or when past the first
/// 512 bytes it has saved less than 1/32 of what it read (text without runs: it would not
/// pay, and trying to the end costs as much as sending).
pub fn rle_encode(input: &[u8], out: &mut Vec<u8>, limit: usize) -> bool {
    let start = out.len();
    let mut i = 0;
    let mut literal_from = 0;
    let flush_literals = |out: &mut Vec<u8>, from: usize, to: usize| {
        let mut at = from;
        while at < to {
            let n = (to - at).min(RLE_MAX_LITERAL);
            out.push((n - 1) as u8);
            out.extend_from_slice(&input[at..at + n]);
            at += n;
        }
    };
    while i < input.len() {
        let b = input[i];
        let mut run = 1;
        while i + run < input.len() && input[i + run] == b && run < RLE_MAX_RUN {
            run += 1;
        }
        if run >= RLE_MIN_RUN {
            flush_literals(out, literal_from, i);
            out.push((run - RLE_MIN_RUN + 128) as u8);
            out.push(b);
            i += run;
            literal_from = i;
        } else {
            i += run;
        }
        let written = out.len() - start;
        // What the input read so far costs: the tokens written, and the literals pending.
        let cost = written + (i - literal_from);
        if written >= limit || (i >= RLE_PROBE && cost > i - i / 32) {
            return false;
        }
    }
    flush_literals(out, literal_from, input.len());
    out.len() - start < limit
}

/// Decodes [`rle_encode`]'s tokens into exactly `out`: an error when the tokens are cut
/// short, hold more than `out` or less.
pub fn rle_decode_into(mut input: &[u8], out: &mut [u8]) -> Result<(), &'static str> {
    let mut at = 0;
    while let Some((&control, rest)) = input.split_first() {
        if control < 128 {
            let n = usize::from(control) + 1;
            let literal = rest.get(..n).ok_or("a literal run is cut short")?;
            out.get_mut(at..at + n)
                .ok_or("the runs hold more data than announced")?
                .copy_from_slice(literal);
            at += n;
            input = &rest[n..];
        } else {
            let n = usize::from(control) - 128 + RLE_MIN_RUN;
            let (&b, rest) = rest.split_first().ok_or("a repeat run is cut short")?;
            out.get_mut(at..at + n)
                .ok_or("the runs hold more data than announced")?
                .fill(b);
            at += n;
            input = rest;
        }
    }
    if at != out.len() {
        return Err("the runs hold less data than announced");
    }
    Ok(())
}

/// COMPRATE and COMPTIME of a channel instance: a short-term and a long-term figure
/// each, as DISPLAY CHSTATUS shows them. Both are moving averages over the messages
/// compressed or expanded: the short-term one weighs the last message 1/8, the long-term
/// one 1/128, so the first follows a change within tens of messages and the second
/// within about a thousand.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CompressionMeter {
    messages: u64,
    rate: (f64, f64),
    micros: (f64, f64),
}

impl CompressionMeter {
    /// Records one message frame compressed or expanded: `flow`'s sizes and the
    /// microseconds it took.
    pub fn record(&mut self, flow: &FlowSize, micros: f64) {
        if flow.before == 0 {
            return;
        }
        let saved = 100.0 * (flow.before as f64 - flow.after as f64) / flow.before as f64;
        let saved = saved.max(0.0);
        if self.messages == 0 {
            self.rate = (saved, saved);
            self.micros = (micros, micros);
        } else {
            self.rate.0 += (saved - self.rate.0) / 8.0;
            self.rate.1 += (saved - self.rate.1) / 128.0;
            self.micros.0 += (micros - self.micros.0) / 8.0;
            self.micros.1 += (micros - self.micros.1) / 128.0;
        }
        self.messages += 1;
    }

    /// COMPRATE: percent of the compressible bytes saved, short term and long term.
    pub fn rate(&self) -> (u32, u32) {
        (self.rate.0.round() as u32, self.rate.1.round() as u32)
    }

    /// COMPTIME: microseconds spent compressing or expanding one message, short term and
    /// long term.
    pub fn time(&self) -> (u32, u32) {
        (self.micros.0.round() as u32, self.micros.1.round() as u32)
    }

    /// Messages recorded.
    pub fn messages(&self) -> u64 {
        self.messages
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{decode_frame, encode_reply, encode_request, max_frame_len, Reply, Request};
    use bytes::Bytes;
    use ferry_mqi::{MessageDescriptor, PutOptions};

    const ALL: [MessageCompression; 6] = [
        MessageCompression::None,
        MessageCompression::Rle,
        MessageCompression::ZlibFast,
        MessageCompression::ZlibHigh,
        MessageCompression::Lz4Fast,
        MessageCompression::Lz4High,
    ];

    fn json(len: usize) -> Bytes {
        let mut s = String::new();
        let mut i = 0u64;
        while s.len() < len {
            s.push_str(&format!(
                r#"{{"order":{i},"customer":"C{:05}","item":"widget-{}","qty":{},"status":"NEW"}},"#,
                i * 7919 % 100_000,
                i % 13,
                i % 5 + 1
            ));
            i += 1;
        }
        s.truncate(len);
        Bytes::from(s)
    }

    fn put(body: Bytes) -> Request {
        Request::Put {
            properties: bytes::Bytes::new(),
            hobj: 3,
            md: MessageDescriptor::default(),
            pmo: PutOptions::default(),
            body,
        }
    }

    fn round_trip(t: Techniques, req: &Request) -> (Frame, FlowSize) {
        let mut out = BytesMut::new();
        encode_request(1, 2, req, &mut out).unwrap();
        let plain_len = out.len();
        let mut c = FrameCompressor::new(t);
        let flow = c.compress_frame(&mut out, 0, req.message_data().map_or(0, |b| b.len()));
        let frame = decode_frame(&mut out, max_frame_len(1 << 20))
            .unwrap()
            .unwrap();
        assert!(out.is_empty());
        let mut e = FrameExpander::new(t);
        let (frame, _) = e.expand(frame, (1 << 20) + 4096 - HEADER_LEN).unwrap();
        assert_eq!(Request::decode(&frame).as_ref(), Ok(req));
        let _ = plain_len;
        (frame, flow)
    }

    #[test]
    fn every_technique_round_trips_a_put_byte_exact() {
        for message in ALL {
            for header in [HeaderCompression::None, HeaderCompression::System] {
                let t = Techniques { header, message };
                for len in [0, 1, 31, 32, 2048, 20 * 1024] {
                    let (_, flow) = round_trip(t, &put(json(len)));
                    // JSON has few runs: RLE is for padded data and may not shrink it.
                    let shrinks =
                        !matches!(message, MessageCompression::None | MessageCompression::Rle);
                    if shrinks && len >= 2048 {
                        assert_eq!(flow.message, message, "{t:?} {len}");
                        assert!(flow.after < flow.before, "{t:?} {len}: {flow:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_get_reply_compresses_and_incompressible_data_goes_as_it_is() {
        let t = Techniques {
            header: HeaderCompression::None,
            message: MessageCompression::Lz4Fast,
        };
        let reply = Reply::Get {
            status: crate::Status::OK,
            md: MessageDescriptor::default(),
            data_length: 2048,
            // Properties travel in the head, before the message data.
            properties: Bytes::from_static(b"properties"),
            body: json(2048),
        };
        let mut out = BytesMut::new();
        encode_reply(1, 1, &reply, &mut out).unwrap();
        let plain = out.len();
        let flow = FrameCompressor::new(t).compress_frame(&mut out, 0, 2048);
        assert!(out.len() < plain);
        assert_eq!(flow.message, MessageCompression::Lz4Fast);
        let frame = decode_frame(&mut out, u32::MAX).unwrap().unwrap();
        let (frame, _) = FrameExpander::new(t).expand(frame, 1 << 20).unwrap();
        assert_eq!(Reply::decode(&frame), Ok(reply));

        // Random bytes do not shrink: the frame is left alone.
        let mut state = 0x9E37_79B9u32;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                state as u8
            })
            .collect();
        let mut out = BytesMut::new();
        encode_request(1, 1, &put(Bytes::from(noise)), &mut out).unwrap();
        let before = out.clone();
        let flow = FrameCompressor::new(Techniques {
            message: MessageCompression::ZlibHigh,
            ..t
        })
        .compress_frame(&mut out, 0, 4096);
        assert_eq!(flow.message, MessageCompression::None);
        assert_eq!(out, before);
    }

    fn compressed(t: Techniques, body: Bytes) -> Frame {
        let mut out = BytesMut::new();
        encode_request(1, 1, &put(body.clone()), &mut out).unwrap();
        FrameCompressor::new(t).compress_frame(&mut out, 0, body.len());
        decode_frame(&mut out, u32::MAX).unwrap().unwrap()
    }

    #[test]
    fn a_frame_that_expands_past_the_limit_is_refused_before_allocating() {
        let t = Techniques {
            header: HeaderCompression::None,
            message: MessageCompression::ZlibFast,
        };
        // 1 MiB of zeros compresses to about a kilobyte.
        let frame = compressed(t, Bytes::from(vec![0u8; 1 << 20]));
        assert!(frame.payload.len() < 16 * 1024, "{}", frame.payload.len());
        let e = FrameExpander::new(t).expand(frame, 64 * 1024).unwrap_err();
        assert!(matches!(e, WireError::ExpandsTooLarge { .. }), "{e}");
        assert_eq!(e.reason(), ferry_mqi::ReasonCode::MsgTooBigForChannel);
    }

    #[test]
    fn lying_lengths_damaged_data_and_unagreed_techniques_are_refused() {
        let t = Techniques {
            header: HeaderCompression::None,
            message: MessageCompression::Lz4Fast,
        };
        let frame = compressed(t, json(4096));
        // Announce one byte more data than there is.
        let mut lying = frame.payload.to_vec();
        let n = u32::from_le_bytes(lying[8..12].try_into().unwrap()) + 1;
        lying[8..12].copy_from_slice(&n.to_le_bytes());
        let mut f = frame.clone();
        f.payload = Bytes::from(lying);
        assert!(matches!(
            FrameExpander::new(t).expand(f, 1 << 20),
            Err(WireError::CorruptCompressedData { .. })
        ));
        // Garbage in the data.
        let mut garbage = frame.payload.to_vec();
        let at = garbage.len() - 40;
        garbage[at..].fill(0xFF);
        let mut f = frame.clone();
        f.payload = Bytes::from(garbage);
        assert!(FrameExpander::new(t).expand(f, 1 << 20).is_err());
        // A technique the connection did not agree on.
        let other = Techniques {
            message: MessageCompression::ZlibFast,
            ..t
        };
        assert!(matches!(
            FrameExpander::new(other).expand(frame.clone(), 1 << 20),
            Err(WireError::TechniqueNotAgreed { .. })
        ));
        assert!(matches!(
            FrameExpander::new(Techniques::default()).expand(frame, 1 << 20),
            Err(WireError::TechniqueNotAgreed { .. })
        ));
    }

    #[test]
    fn rle_gives_up_early_on_text_without_runs_and_takes_padding() {
        let text = json(20 * 1024);
        let mut out = Vec::new();
        assert!(!rle_encode(&text, &mut out, text.len()));
        assert!(
            out.len() < 2 * RLE_PROBE,
            "gave up after {} bytes written",
            out.len()
        );
        let mut padded = vec![b' '; 8192];
        padded[..300].copy_from_slice(&text[..300]);
        out.clear();
        assert!(rle_encode(&padded, &mut out, padded.len()));
        assert!(out.len() < 600, "{}", out.len());
    }

    #[test]
    fn the_meter_reports_the_share_saved() {
        let mut m = CompressionMeter::default();
        for _ in 0..100 {
            m.record(
                &FlowSize {
                    before: 2000,
                    after: 1320,
                    ..FlowSize::default()
                },
                12.0,
            );
        }
        assert_eq!(m.rate(), (34, 34));
        assert_eq!(m.time(), (12, 12));
        assert_eq!(m.messages(), 100);
    }

    proptest::proptest! {
        /// RLE decodes to exactly what it encoded, whatever the bytes.
        #[test]
        fn rle_round_trips(data in proptest::collection::vec(
            proptest::prop_oneof![proptest::num::u8::ANY, proptest::strategy::Just(0u8)], 0..2000)) {
            let mut enc = Vec::new();
            if rle_encode(&data, &mut enc, usize::MAX) {
                let mut dec = vec![0u8; data.len()];
                proptest::prop_assert_eq!(rle_decode_into(&enc, &mut dec), Ok(()));
                proptest::prop_assert_eq!(dec, data);
            }
        }

        /// Any body, any technique: the frame expands to the frame that was compressed.
        #[test]
        fn frames_round_trip(body in proptest::collection::vec(0u8..4, 0..5000), m in 0usize..6, h: bool) {
            let t = Techniques {
                header: if h { HeaderCompression::System } else { HeaderCompression::None },
                message: ALL[m],
            };
            round_trip(t, &put(Bytes::from(body)));
        }
    }
}
