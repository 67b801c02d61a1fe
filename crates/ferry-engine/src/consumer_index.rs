//! A queue's async consumers, indexed the way its waiters are: a message made available
//! is offered only to the consumers that could want it — those matching by its CorrelId
//! or MsgId, and those with no id criteria — never by scanning every consumer. Request/
//! reply over AMQP puts one consumer per requester on a shared reply queue, each with
//! `JMSCorrelationID = 'x'`: a reply then looks at one consumer, not at all of them.

use crate::consumer::ConsumerId;
use crate::queue::Criteria;
use ferry_mqi::{CorrelId, MessageDescriptor, MsgId};
use foldhash::HashMap;

/// Where one consumer is filed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    /// Browsing: offered copies of every message.
    Browser,
    /// Destructive, no id criteria.
    General,
    /// Destructive, by CorrelId (and maybe MsgId too: checked on the candidate).
    Correl(CorrelId),
    /// Destructive, by MsgId only.
    Msg(MsgId),
}

/// The consumers of one local queue.
#[derive(Debug, Default)]
pub(crate) struct QueueConsumers {
    /// Every consumer, in registration order.
    all: Vec<ConsumerId>,
    browsers: Vec<ConsumerId>,
    general: Vec<ConsumerId>,
    by_correl: HashMap<CorrelId, Vec<ConsumerId>>,
    by_msg: HashMap<MsgId, Vec<ConsumerId>>,
    slots: HashMap<ConsumerId, Slot>,
}

impl QueueConsumers {
    /// Files consumer `id` (browsing or destructive, with `criteria`).
    pub fn add(&mut self, id: ConsumerId, browse: bool, criteria: &Criteria) {
        let slot = match (browse, criteria.correl_id, criteria.msg_id) {
            (true, _, _) => Slot::Browser,
            (false, Some(c), _) => Slot::Correl(c),
            (false, None, Some(m)) => Slot::Msg(m),
            (false, None, None) => Slot::General,
        };
        match slot {
            Slot::Browser => self.browsers.push(id),
            Slot::General => self.general.push(id),
            Slot::Correl(c) => self.by_correl.entry(c).or_default().push(id),
            Slot::Msg(m) => self.by_msg.entry(m).or_default().push(id),
        }
        self.slots.insert(id, slot);
        self.all.push(id);
    }

    /// Forgets consumer `id`.
    pub fn remove(&mut self, id: ConsumerId) {
        let Some(slot) = self.slots.remove(&id) else {
            return;
        };
        self.all.retain(|x| *x != id);
        match slot {
            Slot::Browser => self.browsers.retain(|x| *x != id),
            Slot::General => self.general.retain(|x| *x != id),
            Slot::Correl(c) => {
                if let Some(v) = self.by_correl.get_mut(&c) {
                    v.retain(|x| *x != id);
                    if v.is_empty() {
                        self.by_correl.remove(&c);
                    }
                }
            }
            Slot::Msg(m) => {
                if let Some(v) = self.by_msg.get_mut(&m) {
                    v.retain(|x| *x != id);
                    if v.is_empty() {
                        self.by_msg.remove(&m);
                    }
                }
            }
        }
    }

    /// No consumers at all.
    pub fn is_empty(&self) -> bool {
        self.all.is_empty()
    }

    /// Forgets every consumer and returns them (the queue is being deleted).
    pub fn take_all(&mut self) -> Vec<ConsumerId> {
        let all = std::mem::take(&mut self.all);
        *self = QueueConsumers::default();
        all
    }

    /// The browsing consumers.
    pub fn browsers(&self) -> &[ConsumerId] {
        &self.browsers
    }

    /// The destructive consumers that could want a message with `md`: those without id
    /// criteria and those filed under its CorrelId or MsgId (each still checks its full
    /// criteria and selection).
    pub fn takers_for<'a>(
        &'a self,
        md: &MessageDescriptor,
    ) -> impl Iterator<Item = &'a ConsumerId> + 'a {
        let by_correl = self.by_correl.get(&md.correl_id).into_iter().flatten();
        let by_msg = self.by_msg.get(&md.msg_id).into_iter().flatten();
        self.general.iter().chain(by_correl).chain(by_msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> [u8; 24] {
        [n; 24]
    }

    #[test]
    fn a_message_is_offered_only_to_consumers_that_could_want_it() {
        let mut q = QueueConsumers::default();
        let none = Criteria {
            msg_id: None,
            correl_id: None,
            group: None,
        };
        let by_c = |n| Criteria {
            msg_id: None,
            correl_id: Some(id(n)),
            group: None,
        };
        q.add(ConsumerId(1), false, &none);
        q.add(ConsumerId(2), false, &by_c(7));
        q.add(ConsumerId(3), false, &by_c(8));
        q.add(ConsumerId(4), true, &none);
        q.add(
            ConsumerId(5),
            false,
            &Criteria {
                msg_id: Some(id(9)),
                correl_id: None,
                group: None,
            },
        );
        let md = MessageDescriptor {
            correl_id: id(7),
            msg_id: id(9),
            ..MessageDescriptor::default()
        };
        let mut got: Vec<u64> = q.takers_for(&md).map(|c| c.0).collect();
        got.sort_unstable();
        assert_eq!(got, vec![1, 2, 5]);
        assert_eq!(q.browsers(), &[ConsumerId(4)]);

        q.remove(ConsumerId(2));
        let got: Vec<u64> = q.takers_for(&md).map(|c| c.0).collect();
        assert!(!got.contains(&2));
        assert_eq!(q.take_all().len(), 4);
        assert!(q.is_empty());
        assert_eq!(q.takers_for(&md).count(), 0);
    }
}
