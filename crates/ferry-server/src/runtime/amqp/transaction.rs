//! AMQP local transactions (AMQP 1.0 part 4): the coordinator link's state and the
//! control messages it carries.
//!
//! Each coordinator link (a Qpid JMS transacted session attaches one) gets its own
//! engine connection, made at the attach and ended at the detach: the engine's unit of
//! work is per connection, so the link's transaction is that connection's unit of work,
//! as MQ's JMS gives each transacted session its own hConn. One transaction at a time is
//! open on a coordinator (how Qpid JMS uses it: declare, work, discharge, declare...).
//!
//! - Transfers carrying `transactional-state(txn)` are put under syncpoint on the
//!   coordinator's connection (through output handles it opens itself).
//! - Deliveries the client accepts with `transactional-state(txn, accepted)` stay held by
//!   their consumer (nobody else gets them) and are listed here: a commit removes them, a
//!   rollback returns them with BackoutCount + 1 (AMQP delivery-count + 1, JMSRedelivered).
//! - A discharge commits or backs out the unit of work; a commit's answer waits until the
//!   log is durable past it (one flush per commit, as MQCMIT).

use bytes::Bytes;
use ferry_amqp::{condition, ErrorCondition, TxnControl};
use ferry_engine::{ConnId, DeliveryToken, Hobj};
use foldhash::HashMap;

/// The state of one coordinator link.
pub(super) struct Coordinator {
    /// The engine connection whose unit of work carries the link's transactions.
    pub conn: ConnId,
    /// The transaction open on it, if any.
    pub open: Option<Transaction>,
    /// Output handles opened on `conn`, by queue name.
    pub outputs: HashMap<String, Hobj>,
}

/// A declared, not yet discharged transaction.
pub(super) struct Transaction {
    /// Its id, as the client names it.
    pub id: Bytes,
    /// Deliveries accepted inside it: removed by its commit, returned by its rollback.
    pub acquired: Vec<DeliveryToken>,
}

/// What a message sent to the coordinator asks for.
#[derive(Debug, PartialEq)]
pub(super) enum Control {
    /// Start a transaction.
    Declare,
    /// End transaction `txn_id`: commit, or roll back when `fail`.
    Discharge {
        /// The transaction.
        txn_id: Bytes,
        /// Roll back instead of committing.
        fail: bool,
    },
}

/// Reads the control message in `payload` (an amqp-value section holding a declare or
/// a discharge). A declare with a global id asks for a distributed transaction, which
/// is refused.
pub(super) fn control_of(payload: &Bytes) -> Result<Control, ErrorCondition> {
    match TxnControl::from_message(payload.clone()) {
        Ok(TxnControl::Declare(declare)) if declare.global_id.is_some() => {
            Err(ErrorCondition::new(
                condition::NOT_IMPLEMENTED,
                "distributed transactions (a declare with a global-id) are not supported",
            ))
        }
        Ok(TxnControl::Declare(_)) => Ok(Control::Declare),
        Ok(TxnControl::Discharge(d)) => Ok(Control::Discharge {
            txn_id: d.txn_id,
            fail: d.fail,
        }),
        Err(e) => Err(ErrorCondition::new(
            condition::DECODE_ERROR,
            format!(
                "a coordinator message carries a declare or a discharge as its amqp-value: {e}"
            ),
        )),
    }
}

/// The condition for a transaction id no open transaction of the connection has.
pub(super) fn unknown_id(txn_id: &Bytes) -> ErrorCondition {
    ErrorCondition::new(
        condition::TRANSACTION_UNKNOWN_ID,
        format!("no open transaction has id {txn_id:02x?}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_amqp::message::Body;
    use ferry_amqp::{Declare, Discharge, Encode, Message};

    fn payload(body: Body) -> Bytes {
        let m = Message {
            body: Some(body),
            ..Message::default()
        };
        let mut out = bytes::BytesMut::new();
        m.encode(&mut out);
        out.freeze()
    }

    fn value_of(x: &impl Encode) -> ferry_amqp::Value {
        let mut out = bytes::BytesMut::new();
        x.encode(&mut out);
        ferry_amqp::codec::from_bytes(out.freeze()).expect("a value")
    }

    #[test]
    fn declare_and_discharge_are_read_from_the_amqp_value() {
        let declare = payload(Body::Value(value_of(&Declare::default())));
        assert_eq!(control_of(&declare), Ok(Control::Declare));
        let discharge = Discharge {
            txn_id: Bytes::from_static(b"\0\0\0\x07"),
            fail: true,
        };
        let discharge = payload(Body::Value(value_of(&discharge)));
        assert_eq!(
            control_of(&discharge),
            Ok(Control::Discharge {
                txn_id: Bytes::from_static(b"\0\0\0\x07"),
                fail: true
            })
        );
    }

    #[test]
    fn other_bodies_and_distributed_declares_are_refused() {
        let text = payload(Body::Value(ferry_amqp::Value::from("declare")));
        assert_eq!(
            control_of(&text).map_err(|e| e.condition.as_str().to_string()),
            Err(condition::DECODE_ERROR.to_string())
        );
        let global = Declare {
            global_id: Some(ferry_amqp::Value::from("xid")),
        };
        let global = payload(Body::Value(value_of(&global)));
        assert_eq!(
            control_of(&global).map_err(|e| e.condition.as_str().to_string()),
            Err(condition::NOT_IMPLEMENTED.to_string())
        );
    }
}
