//! MQ reason codes as AMQP error conditions, so an AMQP client learns what an MQ
//! application would (a JMS client sees the matching JMSException: an unknown queue is
//! InvalidDestinationException, a full queue ResourceAllocationException). The
//! description keeps MQ's reason code and name for the administrator.

use ferry_amqp::condition;
use ferry_amqp::ErrorCondition;
use ferry_mqi::ReasonCode;

/// The AMQP condition for an MQ reason code.
pub fn condition_of(reason: ReasonCode) -> &'static str {
    match reason {
        ReasonCode::UnknownObjectName | ReasonCode::QDeleted | ReasonCode::UnknownAliasBaseQ => {
            condition::NOT_FOUND
        }
        ReasonCode::NotAuthorized => condition::UNAUTHORIZED_ACCESS,
        // MAXHANDS reached (2017) is a limit on the connection, like a full queue.
        ReasonCode::QFull
        | ReasonCode::StorageNotAvailable
        | ReasonCode::ResourceProblem
        | ReasonCode::HandleNotAvailable => condition::RESOURCE_LIMIT_EXCEEDED,
        ReasonCode::MsgTooBigForQ | ReasonCode::MsgTooBigForQMgr => {
            condition::MESSAGE_SIZE_EXCEEDED
        }
        ReasonCode::PutInhibited | ReasonCode::GetInhibited | ReasonCode::QTypeError => {
            condition::NOT_ALLOWED
        }
        ReasonCode::ObjectInUse => condition::RESOURCE_LOCKED,
        ReasonCode::QMgrStopping | ReasonCode::QMgrQuiescing | ReasonCode::ConnectionQuiescing => {
            condition::CONNECTION_FORCED
        }
        _ => condition::INTERNAL_ERROR,
    }
}

/// An error condition for `reason`, described as "<what>: MQRC <n> <name>".
pub fn error_of(reason: ReasonCode, what: &str) -> ErrorCondition {
    ErrorCondition::new(
        condition_of(reason),
        format!("{what}: MQRC {} {}", reason.number(), reason.name()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jms_relevant_reasons_map_to_the_conditions_qpid_understands() {
        assert_eq!(
            condition_of(ReasonCode::UnknownObjectName),
            "amqp:not-found"
        );
        assert_eq!(
            condition_of(ReasonCode::QFull),
            "amqp:resource-limit-exceeded"
        );
        assert_eq!(
            condition_of(ReasonCode::NotAuthorized),
            "amqp:unauthorized-access"
        );
        assert_eq!(
            condition_of(ReasonCode::HandleNotAvailable),
            "amqp:resource-limit-exceeded",
            "MAXHANDS reached"
        );
        let e = error_of(ReasonCode::QFull, "queue Q is full");
        let d = e.description.expect("description");
        assert!(d.as_str().contains("2053"), "{}", d.as_str());
    }
}
