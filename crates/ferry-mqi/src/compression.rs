//! MQCOMPRESS: the channel compression techniques of COMPMSG and COMPHDR, and MQ's rule
//! for agreeing on one.
//!
//! Both attributes are lists. The end that starts the conversation (the client) lists the
//! techniques it wants in preference order; the first one the other end's list also has
//! wins, and NONE when there is none. ANY is only valid on the receiving end (SVRCONN):
//! there it stands for every technique. Values are MQ's (MQCOMPRESS_*), so a number seen
//! in MQ's documentation or PCF means the same here.

use std::fmt;

/// COMPMSG: how message data is compressed (MQCOMPRESS_*).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub enum MessageCompression {
    /// MQCOMPRESS_NONE (0): message data is sent as it is.
    #[default]
    None,
    /// MQCOMPRESS_RLE (1): run-length encoding.
    Rle,
    /// MQCOMPRESS_ZLIBFAST (2): zlib, favouring speed.
    ZlibFast,
    /// MQCOMPRESS_ZLIBHIGH (4): zlib, favouring size.
    ZlibHigh,
    /// MQCOMPRESS_LZ4FAST (16): LZ4, favouring speed.
    Lz4Fast,
    /// MQCOMPRESS_LZ4HIGH (32): LZ4, favouring size.
    Lz4High,
    /// MQCOMPRESS_ANY (268435455): any technique the partner asks for (receiving end only).
    Any,
}

/// COMPHDR: how the headers of a message flow are compressed (MQCOMPRESS_*).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub enum HeaderCompression {
    /// MQCOMPRESS_NONE (0).
    #[default]
    None,
    /// MQCOMPRESS_SYSTEM (8): the queue manager's own technique.
    System,
}

/// The most COMPMSG values a list holds (MQCD MsgCompList).
pub const MAX_MESSAGE_COMPRESSION_LIST: usize = 16;
/// The most COMPHDR values a list holds (MQCD HdrCompList).
pub const MAX_HEADER_COMPRESSION_LIST: usize = 2;

/// A compression technique of either list: MQSC keyword and MQCOMPRESS value.
pub trait Technique: Copy + Eq + fmt::Debug + 'static {
    /// The MQSC keywords, in MQ's order.
    const KEYWORDS: &'static [&'static str];
    /// Every value, in the order of [`Technique::KEYWORDS`].
    const ALL: &'static [Self];
    /// NONE.
    const NONE: Self;
    /// The value standing for every technique, if the list has one (COMPMSG's ANY).
    const ANY: Option<Self>;
    /// The MQCOMPRESS_* number.
    fn value(self) -> u32;
    /// The MQSC keyword.
    fn keyword(self) -> &'static str;

    /// The technique for an MQCOMPRESS_* number.
    fn from_value(value: u32) -> Option<Self> {
        Self::ALL.iter().copied().find(|t| t.value() == value)
    }

    /// The technique for an MQSC keyword (any case).
    fn from_keyword(keyword: &str) -> Option<Self> {
        let upper = keyword.trim().to_ascii_uppercase();
        Self::ALL.iter().copied().find(|t| t.keyword() == upper)
    }
}

impl Technique for MessageCompression {
    const KEYWORDS: &'static [&'static str] = &[
        "NONE", "RLE", "ZLIBFAST", "ZLIBHIGH", "LZ4FAST", "LZ4HIGH", "ANY",
    ];
    const ALL: &'static [Self] = &[
        MessageCompression::None,
        MessageCompression::Rle,
        MessageCompression::ZlibFast,
        MessageCompression::ZlibHigh,
        MessageCompression::Lz4Fast,
        MessageCompression::Lz4High,
        MessageCompression::Any,
    ];
    const NONE: Self = MessageCompression::None;
    const ANY: Option<Self> = Some(MessageCompression::Any);

    fn value(self) -> u32 {
        match self {
            MessageCompression::None => 0,
            MessageCompression::Rle => 1,
            MessageCompression::ZlibFast => 2,
            MessageCompression::ZlibHigh => 4,
            MessageCompression::Lz4Fast => 16,
            MessageCompression::Lz4High => 32,
            MessageCompression::Any => 268_435_455,
        }
    }

    fn keyword(self) -> &'static str {
        Self::KEYWORDS[Self::ALL.iter().position(|t| *t == self).unwrap_or(0)]
    }
}

impl Technique for HeaderCompression {
    const KEYWORDS: &'static [&'static str] = &["NONE", "SYSTEM"];
    const ALL: &'static [Self] = &[HeaderCompression::None, HeaderCompression::System];
    const NONE: Self = HeaderCompression::None;
    const ANY: Option<Self> = None;

    fn value(self) -> u32 {
        match self {
            HeaderCompression::None => 0,
            HeaderCompression::System => 8,
        }
    }

    fn keyword(self) -> &'static str {
        match self {
            HeaderCompression::None => "NONE",
            HeaderCompression::System => "SYSTEM",
        }
    }
}

impl fmt::Display for MessageCompression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())
    }
}

impl fmt::Display for HeaderCompression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())
    }
}

/// MQ's rule: the first technique of the initiator's list (in its order of preference)
/// that the responder's list also has, or that the responder accepts with ANY; NONE when
/// they share none. ANY in the initiator's list is skipped (it is not valid there).
pub fn agree<T: Technique>(initiator: &[T], responder: &[T]) -> T {
    let responder_any = T::ANY.is_some_and(|any| responder.contains(&any));
    initiator
        .iter()
        .copied()
        .filter(|t| Some(*t) != T::ANY)
        .find(|t| responder_any || responder.contains(t))
        .unwrap_or(T::NONE)
}

/// Why a compression list was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CompressionListError {
    /// A word that names no technique of the list.
    #[error("'{word}' is not a compression technique; use {allowed}")]
    Unknown {
        /// The word.
        word: String,
        /// The keywords accepted.
        allowed: String,
    },
    /// More values than the list holds.
    #[error("{count} values; a list holds at most {max}")]
    TooMany {
        /// Values given.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// A value given twice.
    #[error("{0} is listed twice")]
    Duplicate(&'static str),
    /// ANY where only the receiving end may have it (a client's list).
    #[error("ANY is only valid on the receiving end of a channel (SVRCONN)")]
    AnyNotAllowed,
}

/// Reads a list written as keywords separated by commas or blanks (`LZ4FAST,ZLIBFAST`),
/// at most `max` of them, no duplicates. An empty text is NONE.
pub fn parse_list<T: Technique>(text: &str, max: usize) -> Result<Vec<T>, CompressionListError> {
    let mut list = Vec::new();
    for word in text
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|w| !w.is_empty())
    {
        let t = T::from_keyword(word).ok_or_else(|| CompressionListError::Unknown {
            word: word.to_string(),
            allowed: T::KEYWORDS.join(", "),
        })?;
        if list.contains(&t) {
            return Err(CompressionListError::Duplicate(t.keyword()));
        }
        list.push(t);
    }
    if list.len() > max {
        return Err(CompressionListError::TooMany {
            count: list.len(),
            max,
        });
    }
    if list.is_empty() {
        list.push(T::NONE);
    }
    Ok(list)
}

/// A list as MQSC writes it: `LZ4FAST,ZLIBFAST`.
pub fn list_text<T: Technique>(list: &[T]) -> String {
    let words: Vec<&str> = list.iter().map(|t| t.keyword()).collect();
    words.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use HeaderCompression as H;
    use MessageCompression as M;

    #[test]
    fn values_are_mqs() {
        let values: Vec<u32> = M::ALL.iter().map(|t| t.value()).collect();
        assert_eq!(values, [0, 1, 2, 4, 16, 32, 268_435_455]);
        assert_eq!(H::System.value(), 8);
        for t in M::ALL {
            assert_eq!(M::from_value(t.value()), Some(*t));
            assert_eq!(M::from_keyword(t.keyword()), Some(*t));
        }
        assert_eq!(M::from_value(3), None);
    }

    #[test]
    fn the_initiators_first_shared_choice_wins() {
        assert_eq!(agree(&[M::Lz4Fast], &[M::ZlibFast, M::Lz4Fast]), M::Lz4Fast);
        assert_eq!(
            agree(&[M::ZlibHigh, M::Lz4Fast], &[M::Lz4Fast, M::ZlibHigh]),
            M::ZlibHigh,
            "the initiator's order, not the responder's"
        );
        assert_eq!(agree(&[M::Lz4High], &[M::ZlibFast]), M::None);
        assert_eq!(agree(&[M::Rle, M::None], &[M::None]), M::None);
        assert_eq!(agree(&[M::ZlibHigh], &[M::Any]), M::ZlibHigh);
        assert_eq!(agree(&[M::Any], &[M::Any]), M::None, "ANY is no choice");
        assert_eq!(agree(&[H::System], &[H::None, H::System]), H::System);
        assert_eq!(agree(&[H::System], &[H::None]), H::None);
    }

    #[test]
    fn lists_parse_as_mqsc_writes_them() {
        assert_eq!(
            parse_list::<M>("lz4fast, ZLIBFAST", 16),
            Ok(vec![M::Lz4Fast, M::ZlibFast])
        );
        assert_eq!(parse_list::<M>("", 16), Ok(vec![M::None]));
        assert!(matches!(
            parse_list::<M>("LZ4", 16),
            Err(CompressionListError::Unknown { .. })
        ));
        assert_eq!(
            parse_list::<M>("RLE,RLE", 16),
            Err(CompressionListError::Duplicate("RLE"))
        );
        assert!(matches!(
            parse_list::<H>("NONE,SYSTEM,NONE", 2),
            Err(CompressionListError::Duplicate("NONE"))
        ));
        assert_eq!(list_text(&[M::Lz4Fast, M::None]), "LZ4FAST,NONE");
    }
}
