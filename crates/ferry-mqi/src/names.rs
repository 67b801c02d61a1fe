//! MQ object-name rules: lengths and the allowed character set.
//!
//! Queue, queue manager, topic and namelist names are up to 48 characters, channel names
//! up to 20, drawn from `A-Z a-z 0-9 . / _ %` (mqsc.md §1).

/// Why a name was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// The name is empty.
    #[error("the name is empty")]
    Empty,
    /// The name is longer than allowed.
    #[error("the name is {len} characters long; at most {max} are allowed")]
    TooLong {
        /// The limit.
        max: usize,
        /// The length given.
        len: usize,
    },
    /// The name holds a character MQ names may not contain.
    #[error("the name contains {0:?}; names may hold only A-Z a-z 0-9 . / _ %")]
    InvalidChar(char),
}

/// Longest queue, queue manager, topic object or namelist name.
pub const MAX_OBJECT_NAME: usize = 48;
/// Longest channel name.
pub const MAX_CHANNEL_NAME: usize = 20;

fn validate(name: &str, max: usize) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if name.len() > max {
        return Err(NameError::TooLong {
            max,
            len: name.len(),
        });
    }
    match name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '_' | '%')))
    {
        Some(c) => Err(NameError::InvalidChar(c)),
        None => Ok(()),
    }
}

/// Checks a queue, queue manager, topic, listener or namelist name.
pub fn validate_object_name(name: &str) -> Result<(), NameError> {
    validate(name, MAX_OBJECT_NAME)
}

/// Checks a channel name.
pub fn validate_channel_name(name: &str) -> Result<(), NameError> {
    validate(name, MAX_CHANNEL_NAME)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_mq_names() {
        assert!(validate_object_name("APP.REQUEST.1").is_ok());
        assert!(validate_object_name("app/q_1%").is_ok());
        assert!(validate_channel_name("SYSTEM.DEF.SVRCONN").is_ok());
    }

    #[test]
    fn refuses_bad_names() {
        assert_eq!(validate_object_name(""), Err(NameError::Empty));
        assert!(matches!(
            validate_object_name(&"Q".repeat(49)),
            Err(NameError::TooLong { max: 48, len: 49 })
        ));
        assert_eq!(
            validate_object_name("A B"),
            Err(NameError::InvalidChar(' '))
        );
        assert!(validate_channel_name(&"C".repeat(21)).is_err());
    }
}
