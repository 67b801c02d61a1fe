//! Topic strings: `/`-separated levels, case sensitive. `a/b` and `/a/b` are different
//! topics (the second has an empty first level), and `a//b` has an empty level. In a
//! published topic string the wildcard characters are ordinary characters.
//!
//! An MQOPEN of a topic, an MQSUB and DEFINE SUB name a topic by a topic object, an
//! object string, or both: both give the object's TOPICSTR, a `/`, then the string (MQ
//! always inserts the `/`, so `Weather` and `/EU` give `Weather//EU`).

use std::fmt;

/// The longest topic string (MQ_TOPIC_STR_LENGTH).
pub const MAX_TOPIC_STRING_LENGTH: usize = 10_240;

/// Why a topic string is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TopicStringError {
    /// Longer than [`MAX_TOPIC_STRING_LENGTH`] characters (2425 MQRC_TOPIC_STRING_ERROR).
    #[error("a topic string is at most {MAX_TOPIC_STRING_LENGTH} characters; this one has {0}")]
    TooLong(usize),
    /// Holds a NUL, which ends strings in MQ's C interface.
    #[error("a topic string cannot hold a NUL character")]
    Nul,
    /// Neither a topic object nor an object string names a topic (2085
    /// MQRC_UNKNOWN_OBJECT_NAME).
    #[error("neither a topic object nor an object string names a topic")]
    Missing,
}

/// A topic string, checked.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TopicString(String);

impl TopicString {
    /// Checks `text` as a topic string. The empty string is the root of the tree
    /// (SYSTEM.BASE.TOPIC's TOPICSTR).
    pub fn new(text: &str) -> Result<Self, TopicStringError> {
        let length = text.chars().count();
        if length > MAX_TOPIC_STRING_LENGTH {
            return Err(TopicStringError::TooLong(length));
        }
        if text.contains('\0') {
            return Err(TopicStringError::Nul);
        }
        Ok(TopicString(text.to_string()))
    }

    /// The string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Its levels, in order (one empty level for the root).
    pub fn levels(&self) -> impl Iterator<Item = &str> {
        self.0.split('/')
    }
}

impl fmt::Display for TopicString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// True when an MQOD or MQSD field counts as given: MQ takes a field as present when it
/// is not empty and its first character is neither a blank nor a NUL.
fn present(field: &str) -> bool {
    field.chars().next().is_some_and(|c| c != ' ' && c != '\0')
}

/// The topic string an MQOPEN, MQSUB or DEFINE SUB names: `object_topic` is the
/// TOPICSTR of the topic object named (None when no object is named), `object_string`
/// the ObjectString given.
pub fn combine(
    object_topic: Option<&str>,
    object_string: &str,
) -> Result<TopicString, TopicStringError> {
    let object = object_topic.filter(|t| !t.is_empty() || object_string.is_empty());
    match (object, present(object_string)) {
        (Some(topic), true) => TopicString::new(&format!("{topic}/{object_string}")),
        (Some(topic), false) => TopicString::new(topic),
        (None, true) => TopicString::new(object_string),
        (None, false) => match object_topic {
            // The object is the root (TOPICSTR ''), with no string after it.
            Some(root) => TopicString::new(root),
            None => Err(TopicStringError::Missing),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_and_string_combine_as_mq_does() {
        let c = |o: Option<&str>, s: &str| combine(o, s).map(|t| t.as_str().to_string());
        assert_eq!(c(Some("Weather"), "/EU"), Ok("Weather//EU".into()));
        assert_eq!(c(Some("/Weather"), "EU"), Ok("/Weather/EU".into()));
        assert_eq!(c(Some("Sport"), ""), Ok("Sport".into()));
        assert_eq!(
            c(Some("Sport"), " padded"),
            Ok("Sport".into()),
            "blank: absent"
        );
        assert_eq!(c(None, "Price/Fruit"), Ok("Price/Fruit".into()));
        assert_eq!(c(None, ""), Err(TopicStringError::Missing));
        // SYSTEM.BASE.TOPIC, TOPICSTR '': the string alone, or the root.
        assert_eq!(c(Some(""), "a/b"), Ok("a/b".into()));
        assert_eq!(c(Some(""), ""), Ok("".into()));
    }

    #[test]
    fn long_and_nul_strings_are_refused() {
        assert!(TopicString::new(&"a".repeat(MAX_TOPIC_STRING_LENGTH)).is_ok());
        assert_eq!(
            TopicString::new(&"a".repeat(MAX_TOPIC_STRING_LENGTH + 1)),
            Err(TopicStringError::TooLong(MAX_TOPIC_STRING_LENGTH + 1))
        );
        assert_eq!(TopicString::new("a\0b"), Err(TopicStringError::Nul));
        let t = TopicString::new("/a//b").unwrap();
        let levels: Vec<&str> = t.levels().collect();
        assert_eq!(levels, ["", "a", "", "b"]);
    }
}
