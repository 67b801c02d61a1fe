//! What can go wrong talking AMQP to a broker, typed so the harness can tell a refused
//! attach (`amqp:not-found`: a queue is missing) from a lost connection or a rejected
//! message. Every peer fault arrives as one of these, never as a panic.

use ferry_amqp::connection::ConnectionError;
use ferry_amqp::ErrorCondition;

/// An AMQP error condition as the peer (or the connection) stated it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    /// The condition symbol, e.g. `amqp:not-found`.
    pub condition: String,
    /// The description, if any.
    pub description: String,
}

impl Condition {
    /// Copies an [`ErrorCondition`] (none: an empty condition).
    pub fn from_error(e: Option<&ErrorCondition>) -> Condition {
        Condition {
            condition: e.map_or(String::new(), |e| e.condition.as_str().to_string()),
            description: e
                .and_then(|e| e.description.as_ref())
                .map_or(String::new(), |d| d.as_str().to_string()),
        }
    }
}

impl std::fmt::Display for Condition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.condition.is_empty(), self.description.is_empty()) {
            (true, _) => f.write_str("no error condition"),
            (false, true) => f.write_str(&self.condition),
            (false, false) => write!(f, "{} ({})", self.condition, self.description),
        }
    }
}

/// Why an AMQP operation failed.
#[derive(Debug, thiserror::Error)]
pub enum AmqpError {
    /// The `--url` is not one the harness understands.
    #[error("{0}")]
    Url(String),
    /// The socket failed (context, error).
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
    /// SASL did not succeed.
    #[error("SASL authentication failed ({0})")]
    Auth(String),
    /// The connection is gone (closed by the peer, a fault, or ours).
    #[error("connection closed: {0}")]
    Closed(Condition),
    /// The broker refused to attach a link to `address`.
    #[error("attach to '{address}' refused: {condition}")]
    Refused {
        /// The node.
        address: String,
        /// The broker's reason.
        condition: Condition,
    },
    /// The broker detached a link that was in use.
    #[error("link to '{address}' detached: {condition}")]
    Detached {
        /// The node.
        address: String,
        /// The broker's reason.
        condition: Condition,
    },
    /// A message sent to `address` was not accepted (rejected, released, modified).
    #[error("message to '{address}' not accepted: {outcome}")]
    NotAccepted {
        /// The node.
        address: String,
        /// The outcome, described.
        outcome: String,
    },
    /// A request of ours did not fit the connection's state (a harness bug, reported).
    #[error("protocol: {0}")]
    Protocol(#[from] ConnectionError),
    /// Waited too long.
    #[error("timed out {0}")]
    Timeout(String),
}

impl AmqpError {
    /// True when the broker said the node does not exist (`amqp:not-found`).
    pub fn is_not_found(&self) -> bool {
        matches!(self, AmqpError::Refused { condition, .. } | AmqpError::Detached { condition, .. }
            if condition.condition == ferry_amqp::condition::NOT_FOUND)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_is_recognised_and_described() {
        let e = AmqpError::Refused {
            address: "REQUEST.1".into(),
            condition: Condition::from_error(Some(&ErrorCondition::new(
                ferry_amqp::condition::NOT_FOUND,
                "no such queue",
            ))),
        };
        assert!(e.is_not_found());
        assert_eq!(
            e.to_string(),
            "attach to 'REQUEST.1' refused: amqp:not-found (no such queue)"
        );
        assert!(!AmqpError::Closed(Condition::from_error(None)).is_not_found());
        assert_eq!(
            AmqpError::Closed(Condition::from_error(None)).to_string(),
            "connection closed: no error condition"
        );
    }
}
