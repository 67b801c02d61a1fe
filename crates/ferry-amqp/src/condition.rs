//! AMQP error conditions and the well-known symbols Qpid JMS and proton clients use.
//!
//! The error conditions are one table ([`ERROR_CONDITIONS`]): each row is a constant's
//! symbol and what it means, so a broker can both name a condition in code and list or
//! validate the set. The capability, filter and annotation symbols below it are the
//! vocabulary a JMS-compatible broker matches terminus contents and messages against.

macro_rules! conditions {
    ($($(#[$doc:meta])* $name:ident = $symbol:literal;)*) => {
        $($(#[$doc])* pub const $name: &str = $symbol;)*
        /// Every error condition defined here: (symbol, constant name).
        pub const ERROR_CONDITIONS: &[(&str, &str)] = &[$(($symbol, stringify!($name))),*];
    };
}

conditions! {
    /// An internal error occurred; the operator may need to intervene.
    INTERNAL_ERROR = "amqp:internal-error";
    /// A peer tried to use a node that does not exist.
    NOT_FOUND = "amqp:not-found";
    /// The peer is not authorized for the operation.
    UNAUTHORIZED_ACCESS = "amqp:unauthorized-access";
    /// Data could not be decoded.
    DECODE_ERROR = "amqp:decode-error";
    /// A resource limit was exceeded.
    RESOURCE_LIMIT_EXCEEDED = "amqp:resource-limit-exceeded";
    /// The peer tried something it is not allowed to do.
    NOT_ALLOWED = "amqp:not-allowed";
    /// A field held an invalid value (e.g. a duplicate container-id, a bad selector).
    INVALID_FIELD = "amqp:invalid-field";
    /// The peer asked for something not implemented.
    NOT_IMPLEMENTED = "amqp:not-implemented";
    /// The resource is locked by another party.
    RESOURCE_LOCKED = "amqp:resource-locked";
    /// A precondition of the operation failed.
    PRECONDITION_FAILED = "amqp:precondition-failed";
    /// The resource was deleted.
    RESOURCE_DELETED = "amqp:resource-deleted";
    /// The peer sent a frame not allowed in the current state.
    ILLEGAL_STATE = "amqp:illegal-state";
    /// The frame size is too small for the performative.
    FRAME_SIZE_TOO_SMALL = "amqp:frame-size-too-small";
    /// An operator or the broker closed the connection.
    CONNECTION_FORCED = "amqp:connection:forced";
    /// A frame broke the framing rules.
    FRAMING_ERROR = "amqp:connection:framing-error";
    /// The container is elsewhere; info says where.
    CONNECTION_REDIRECT = "amqp:connection:redirect";
    /// The peer sent more transfers than the session window allows.
    WINDOW_VIOLATION = "amqp:session:window-violation";
    /// A link was used in a way that does not fit its state.
    ERRANT_LINK = "amqp:session:errant-link";
    /// An attach used a handle already in use.
    HANDLE_IN_USE = "amqp:session:handle-in-use";
    /// A frame named a handle with no attached link.
    UNATTACHED_HANDLE = "amqp:session:unattached-handle";
    /// An operator or the broker detached the link.
    DETACH_FORCED = "amqp:link:detach-forced";
    /// The peer sent more messages than its credit allows.
    TRANSFER_LIMIT_EXCEEDED = "amqp:link:transfer-limit-exceeded";
    /// A message exceeded the link's max-message-size.
    MESSAGE_SIZE_EXCEEDED = "amqp:link:message-size-exceeded";
    /// The node is elsewhere; info says where.
    LINK_REDIRECT = "amqp:link:redirect";
    /// Another link with the same name took over this one.
    STOLEN = "amqp:link:stolen";
    /// The transaction id is not known.
    TRANSACTION_UNKNOWN_ID = "amqp:transaction:unknown-id";
    /// The transaction was rolled back instead of committed.
    TRANSACTION_ROLLBACK = "amqp:transaction:rollback";
    /// The transaction timed out.
    TRANSACTION_TIMEOUT = "amqp:transaction:timeout";
}

/// Terminus capability: the node is a queue.
pub const CAPABILITY_QUEUE: &str = "queue";
/// Terminus capability: the node is a topic.
pub const CAPABILITY_TOPIC: &str = "topic";
/// Terminus capability: the node is a temporary queue.
pub const CAPABILITY_TEMPORARY_QUEUE: &str = "temporary-queue";
/// Terminus capability: the node is a temporary topic.
pub const CAPABILITY_TEMPORARY_TOPIC: &str = "temporary-topic";
/// Terminus capability: a shared subscription.
pub const CAPABILITY_SHARED: &str = "shared";
/// Terminus capability: a global (no client-id) shared subscription.
pub const CAPABILITY_GLOBAL: &str = "global";
/// Connection capability: a sender with a null target address routes by `properties.to`.
pub const CAPABILITY_ANONYMOUS_RELAY: &str = "ANONYMOUS-RELAY";
/// Connection capability: shared subscriptions are supported.
pub const CAPABILITY_SHARED_SUBS: &str = "SHARED-SUBS";
/// Connection capability: `x-opt-delivery-time` is honoured.
pub const CAPABILITY_DELAYED_DELIVERY: &str = "DELAYED_DELIVERY";
/// Connection capability: one connection per container-id (JMS ClientID).
pub const CAPABILITY_SOLE_CONNECTION: &str = "sole-connection-for-container";
/// Coordinator capability: local transactions.
pub const CAPABILITY_LOCAL_TRANSACTIONS: &str = "amqp:local-transactions";
/// Open property set on a refused open (`{amqp:connection-establishment-failed: true}`).
pub const CONNECTION_ESTABLISHMENT_FAILED: &str = "amqp:connection-establishment-failed";
/// Error-info key naming the invalid field (e.g. `container-id`).
pub const INFO_INVALID_FIELD: &str = "invalid-field";

/// Selector filter descriptor code (`apache.org:selector-filter:string`).
pub const SELECTOR_FILTER_CODE: u64 = 0x0000_468C_0000_0004;
/// Selector filter descriptor symbol.
pub const SELECTOR_FILTER_SYMBOL: &str = "apache.org:selector-filter:string";
/// No-local filter descriptor code (`apache.org:no-local-filter:list`).
pub const NO_LOCAL_FILTER_CODE: u64 = 0x0000_468C_0000_0003;
/// No-local filter descriptor symbol.
pub const NO_LOCAL_FILTER_SYMBOL: &str = "apache.org:no-local-filter:list";
/// Filter-map key Qpid JMS uses for a selector.
pub const FILTER_KEY_JMS_SELECTOR: &str = "jms-selector";
/// Filter-map key proton uses for a selector.
pub const FILTER_KEY_SELECTOR: &str = "selector";
/// Filter-map key for no-local.
pub const FILTER_KEY_NO_LOCAL: &str = "no-local";

/// Message annotation: the JMS message type (a `byte`: 0..=5, see [`jms_msg_type`]).
pub const ANNOTATION_JMS_MSG_TYPE: &str = "x-opt-jms-msg-type";
/// Message annotation: the destination's type (`byte`: 0 queue, 1 topic, 2/3 temporary).
pub const ANNOTATION_JMS_DEST: &str = "x-opt-jms-dest";
/// Message annotation: the reply-to destination's type, same codes.
pub const ANNOTATION_JMS_REPLY_TO: &str = "x-opt-jms-reply-to";
/// Message annotation: delivery time (ms since the epoch) for delayed delivery.
pub const ANNOTATION_DELIVERY_TIME: &str = "x-opt-delivery-time";
/// Legacy annotation: destination type as a string list.
pub const ANNOTATION_TO_TYPE: &str = "x-opt-to-type";
/// Legacy annotation: reply-to type as a string list.
pub const ANNOTATION_REPLY_TYPE: &str = "x-opt-reply-type";

/// Values of `x-opt-jms-msg-type` (always encoded as AMQP `byte`).
pub mod jms_msg_type {
    /// javax.jms.Message (no body).
    pub const MESSAGE: i8 = 0;
    /// ObjectMessage (data section, serialized object).
    pub const OBJECT: i8 = 1;
    /// MapMessage (amqp-value map).
    pub const MAP: i8 = 2;
    /// BytesMessage (data section).
    pub const BYTES: i8 = 3;
    /// StreamMessage (amqp-sequence).
    pub const STREAM: i8 = 4;
    /// TextMessage (amqp-value string).
    pub const TEXT: i8 = 5;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_lists_each_condition_once_with_the_amqp_prefix() {
        let mut seen = std::collections::HashSet::new();
        for (symbol, _) in ERROR_CONDITIONS {
            assert!(symbol.starts_with("amqp:"), "{symbol}");
            assert!(seen.insert(*symbol), "duplicate {symbol}");
        }
        assert!(ERROR_CONDITIONS
            .contains(&("amqp:link:message-size-exceeded", "MESSAGE_SIZE_EXCEEDED")));
    }
}
