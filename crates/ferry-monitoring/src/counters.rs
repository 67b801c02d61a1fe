//! The statistics counters the engine keeps as the work happens: plain integers on
//! state the engine already touches (one [`MqiCounters`] on the queue manager, one
//! [`QueueCounters`] per local queue), no locks, no allocation, no hashing. They only
//! grow, from the queue manager's start; a publisher takes the difference between two
//! readings for MQ's per-interval ("delta") elements, and the Prometheus exposition
//! shows them as they are (counters).
//!
//! Each `note_*` method records one event; the engine calls them where the event is
//! decided, so a counter never needs a second look-up.

/// Queue-manager-wide MQI counts: what MQ's STATMQI class counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MqiCounters {
    /// MQCONN/MQCONNX that succeeded.
    pub conns: u64,
    /// MQCONN/MQCONNX that failed.
    pub conns_failed: u64,
    /// MQDISC and connections ended.
    pub discs: u64,
    /// MQOPEN that succeeded.
    pub opens: u64,
    /// MQOPEN that failed.
    pub opens_failed: u64,
    /// MQCLOSE that succeeded.
    pub closes: u64,
    /// MQCLOSE that failed.
    pub closes_failed: u64,
    /// MQINQ that succeeded.
    pub inqs: u64,
    /// MQINQ that failed.
    pub inqs_failed: u64,
    /// MQSET that succeeded.
    pub sets: u64,
    /// MQSET that failed.
    pub sets_failed: u64,
    /// MQPUT of non-persistent messages to queues.
    pub puts_non_persistent: u64,
    /// MQPUT of persistent messages to queues.
    pub puts_persistent: u64,
    /// MQPUT1 of non-persistent messages to queues.
    pub put1s_non_persistent: u64,
    /// MQPUT1 of persistent messages to queues.
    pub put1s_persistent: u64,
    /// Bytes of non-persistent messages put (MQPUT and MQPUT1, body and properties).
    pub put_bytes_non_persistent: u64,
    /// Bytes of persistent messages put.
    pub put_bytes_persistent: u64,
    /// MQPUT that failed.
    pub puts_failed: u64,
    /// MQPUT1 that failed.
    pub put1s_failed: u64,
    /// Destructive gets of non-persistent messages (MQGET, waited-for gets, consumers).
    pub gets_non_persistent: u64,
    /// Destructive gets of persistent messages.
    pub gets_persistent: u64,
    /// Bytes of non-persistent messages got destructively.
    pub get_bytes_non_persistent: u64,
    /// Bytes of persistent messages got destructively.
    pub get_bytes_persistent: u64,
    /// Destructive MQGET that failed (MQRC_NO_MSG_AVAILABLE included, as MQ counts).
    pub gets_failed: u64,
    /// Browses of non-persistent messages.
    pub browses_non_persistent: u64,
    /// Browses of persistent messages.
    pub browses_persistent: u64,
    /// Bytes of non-persistent messages browsed.
    pub browse_bytes_non_persistent: u64,
    /// Bytes of persistent messages browsed.
    pub browse_bytes_persistent: u64,
    /// Browse MQGET that failed.
    pub browses_failed: u64,
    /// MQCMIT (and units of work committed at MQDISC).
    pub commits: u64,
    /// MQBACK (and units of work backed out at MQDISC or on a broken connection).
    pub backouts: u64,
    /// Durable subscriptions created by MQSUB.
    pub subs_created_durable: u64,
    /// Non-durable subscriptions created by MQSUB.
    pub subs_created_non_durable: u64,
    /// Durable subscriptions resumed by MQSUB.
    pub subs_resumed_durable: u64,
    /// Durable subscriptions altered by MQSUB.
    pub subs_altered_durable: u64,
    /// MQSUB that failed.
    pub subs_failed: u64,
    /// Publications (MQPUT/MQPUT1 to a topic) of non-persistent messages.
    pub topic_puts_non_persistent: u64,
    /// Publications of persistent messages.
    pub topic_puts_persistent: u64,
    /// Bytes published (once per publication).
    pub topic_put_bytes: u64,
    /// Publications that failed.
    pub topic_puts_failed: u64,
    /// Copies of publications put for subscribers.
    pub published_messages: u64,
    /// Bytes of those copies.
    pub published_bytes: u64,
}

impl MqiCounters {
    /// One call with result `r`: the counter `ok` chooses grows when it succeeded,
    /// the one `failed` chooses when it failed.
    #[inline]
    pub fn note_result<T, E>(
        &mut self,
        r: &Result<T, E>,
        ok: fn(&mut Self) -> &mut u64,
        failed: fn(&mut Self) -> &mut u64,
    ) {
        let counter = if r.is_ok() { ok(self) } else { failed(self) };
        *counter += 1;
    }

    /// A put to a queue of `bytes` that succeeded.
    #[inline]
    pub fn note_put(&mut self, put1: bool, persistent: bool, bytes: usize) {
        let bytes = bytes as u64;
        match (put1, persistent) {
            (false, false) => self.puts_non_persistent += 1,
            (false, true) => self.puts_persistent += 1,
            (true, false) => self.put1s_non_persistent += 1,
            (true, true) => self.put1s_persistent += 1,
        }
        if persistent {
            self.put_bytes_persistent += bytes;
        } else {
            self.put_bytes_non_persistent += bytes;
        }
    }

    /// A publication of `bytes` that succeeded.
    #[inline]
    pub fn note_topic_put(&mut self, persistent: bool, bytes: usize) {
        if persistent {
            self.topic_puts_persistent += 1;
        } else {
            self.topic_puts_non_persistent += 1;
        }
        self.topic_put_bytes += bytes as u64;
    }

    /// A destructive get of `bytes`.
    #[inline]
    pub fn note_get(&mut self, persistent: bool, bytes: usize) {
        if persistent {
            self.gets_persistent += 1;
            self.get_bytes_persistent += bytes as u64;
        } else {
            self.gets_non_persistent += 1;
            self.get_bytes_non_persistent += bytes as u64;
        }
    }

    /// A browse of `bytes`.
    #[inline]
    pub fn note_browse(&mut self, persistent: bool, bytes: usize) {
        if persistent {
            self.browses_persistent += 1;
            self.browse_bytes_persistent += bytes as u64;
        } else {
            self.browses_non_persistent += 1;
            self.browse_bytes_non_persistent += bytes as u64;
        }
    }

    /// All MQPUT and MQPUT1 to queues that succeeded.
    pub fn put_count(&self) -> u64 {
        self.puts_non_persistent
            + self.puts_persistent
            + self.put1s_non_persistent
            + self.put1s_persistent
    }

    /// All bytes put to queues.
    pub fn put_bytes(&self) -> u64 {
        self.put_bytes_non_persistent + self.put_bytes_persistent
    }

    /// All destructive gets.
    pub fn get_count(&self) -> u64 {
        self.gets_non_persistent + self.gets_persistent
    }

    /// All bytes got destructively.
    pub fn get_bytes(&self) -> u64 {
        self.get_bytes_non_persistent + self.get_bytes_persistent
    }

    /// All publications that succeeded.
    pub fn topic_put_count(&self) -> u64 {
        self.topic_puts_non_persistent + self.topic_puts_persistent
    }
}

/// Applies `$op` to every field of two [`MqiCounters`].
macro_rules! each_field {
    ($a:expr, $b:expr, $op:ident, $($f:ident),* $(,)?) => {
        MqiCounters { $($f: $a.$f.$op($b.$f)),* }
    };
}

macro_rules! mqi_fields {
    ($a:expr, $b:expr, $op:ident) => {
        each_field!(
            $a,
            $b,
            $op,
            conns,
            conns_failed,
            discs,
            opens,
            opens_failed,
            closes,
            closes_failed,
            inqs,
            inqs_failed,
            sets,
            sets_failed,
            puts_non_persistent,
            puts_persistent,
            put1s_non_persistent,
            put1s_persistent,
            put_bytes_non_persistent,
            put_bytes_persistent,
            puts_failed,
            put1s_failed,
            gets_non_persistent,
            gets_persistent,
            get_bytes_non_persistent,
            get_bytes_persistent,
            gets_failed,
            browses_non_persistent,
            browses_persistent,
            browse_bytes_non_persistent,
            browse_bytes_persistent,
            browses_failed,
            commits,
            backouts,
            subs_created_durable,
            subs_created_non_durable,
            subs_resumed_durable,
            subs_altered_durable,
            subs_failed,
            topic_puts_non_persistent,
            topic_puts_persistent,
            topic_put_bytes,
            topic_puts_failed,
            published_messages,
            published_bytes,
        )
    };
}

impl MqiCounters {
    /// Every count of `self` less `other`'s (not below zero): the work between two
    /// readings, or the work left when some is taken out.
    pub fn minus(&self, other: &Self) -> Self {
        mqi_fields!(self, other, saturating_sub)
    }

    /// Every count of `self` plus `other`'s.
    pub fn plus(&self, other: &Self) -> Self {
        mqi_fields!(self, other, saturating_add)
    }
}

/// One local queue's counts: what MQ's STATQ class counts per queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueCounters {
    /// MQOPEN of the queue (directly or through an alias).
    pub opens: u64,
    /// MQCLOSE of the queue.
    pub closes: u64,
    /// MQPUT of non-persistent messages.
    pub puts_non_persistent: u64,
    /// MQPUT of persistent messages.
    pub puts_persistent: u64,
    /// MQPUT1 of non-persistent messages.
    pub put1s_non_persistent: u64,
    /// MQPUT1 of persistent messages.
    pub put1s_persistent: u64,
    /// Bytes of non-persistent messages put.
    pub put_bytes_non_persistent: u64,
    /// Bytes of persistent messages put.
    pub put_bytes_persistent: u64,
    /// Destructive gets of non-persistent messages.
    pub gets_non_persistent: u64,
    /// Destructive gets of persistent messages.
    pub gets_persistent: u64,
    /// Bytes of non-persistent messages got.
    pub get_bytes_non_persistent: u64,
    /// Bytes of persistent messages got.
    pub get_bytes_persistent: u64,
    /// Milliseconds the messages got destructively spent on the queue, summed (the
    /// average queue time is its growth over the gets' growth).
    pub queue_time_ms: u64,
}

impl QueueCounters {
    /// A put of `bytes` to the queue.
    #[inline]
    pub fn note_put(&mut self, put1: bool, persistent: bool, bytes: usize) {
        let bytes = bytes as u64;
        match (put1, persistent) {
            (false, false) => self.puts_non_persistent += 1,
            (false, true) => self.puts_persistent += 1,
            (true, false) => self.put1s_non_persistent += 1,
            (true, true) => self.put1s_persistent += 1,
        }
        if persistent {
            self.put_bytes_persistent += bytes;
        } else {
            self.put_bytes_non_persistent += bytes;
        }
    }

    /// A destructive get of `bytes` of a message that waited `waited_ms`.
    #[inline]
    pub fn note_get(&mut self, persistent: bool, bytes: usize, waited_ms: u64) {
        if persistent {
            self.gets_persistent += 1;
            self.get_bytes_persistent += bytes as u64;
        } else {
            self.gets_non_persistent += 1;
            self.get_bytes_non_persistent += bytes as u64;
        }
        self.queue_time_ms += waited_ms;
    }

    /// All MQPUT and MQPUT1 to the queue.
    pub fn put_count(&self) -> u64 {
        self.puts_non_persistent
            + self.puts_persistent
            + self.put1s_non_persistent
            + self.put1s_persistent
    }

    /// All bytes put.
    pub fn put_bytes(&self) -> u64 {
        self.put_bytes_non_persistent + self.put_bytes_persistent
    }

    /// All destructive gets.
    pub fn get_count(&self) -> u64 {
        self.gets_non_persistent + self.gets_persistent
    }

    /// All bytes got.
    pub fn get_bytes(&self) -> u64 {
        self.get_bytes_non_persistent + self.get_bytes_persistent
    }

    /// Every count of `self` less `other`'s (not below zero): the work between two
    /// readings.
    pub fn minus(&self, other: &Self) -> Self {
        QueueCounters {
            opens: self.opens.saturating_sub(other.opens),
            closes: self.closes.saturating_sub(other.closes),
            puts_non_persistent: self
                .puts_non_persistent
                .saturating_sub(other.puts_non_persistent),
            puts_persistent: self.puts_persistent.saturating_sub(other.puts_persistent),
            put1s_non_persistent: self
                .put1s_non_persistent
                .saturating_sub(other.put1s_non_persistent),
            put1s_persistent: self.put1s_persistent.saturating_sub(other.put1s_persistent),
            put_bytes_non_persistent: self
                .put_bytes_non_persistent
                .saturating_sub(other.put_bytes_non_persistent),
            put_bytes_persistent: self
                .put_bytes_persistent
                .saturating_sub(other.put_bytes_persistent),
            gets_non_persistent: self
                .gets_non_persistent
                .saturating_sub(other.gets_non_persistent),
            gets_persistent: self.gets_persistent.saturating_sub(other.gets_persistent),
            get_bytes_non_persistent: self
                .get_bytes_non_persistent
                .saturating_sub(other.get_bytes_non_persistent),
            get_bytes_persistent: self
                .get_bytes_persistent
                .saturating_sub(other.get_bytes_persistent),
            queue_time_ms: self.queue_time_ms.saturating_sub(other.queue_time_ms),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn puts_and_gets_split_by_verb_and_persistence() {
        let mut m = MqiCounters::default();
        m.note_put(false, false, 10);
        m.note_put(false, true, 20);
        m.note_put(true, true, 5);
        assert_eq!(m.put_count(), 3);
        assert_eq!(m.put_bytes(), 35);
        assert_eq!((m.puts_persistent, m.put1s_persistent), (1, 1));
        assert_eq!(m.put_bytes_non_persistent, 10);
        m.note_get(true, 20);
        m.note_browse(false, 7);
        assert_eq!((m.get_count(), m.get_bytes()), (1, 20));
        assert_eq!(m.browse_bytes_non_persistent, 7);
        m.note_topic_put(true, 3);
        assert_eq!((m.topic_put_count(), m.topic_put_bytes), (1, 3));
        let twice = m.plus(&m);
        assert_eq!(twice.put_count(), 6);
        assert_eq!(twice.minus(&m), m);
        assert_eq!(MqiCounters::default().minus(&m), MqiCounters::default());

        let mut q = QueueCounters::default();
        q.note_put(true, false, 4);
        q.note_get(false, 4, 250);
        assert_eq!((q.put_count(), q.put_bytes(), q.get_count()), (1, 4, 1));
        assert_eq!(q.queue_time_ms, 250);
        assert_eq!(q.minus(&q), QueueCounters::default());
        assert_eq!(q.minus(&QueueCounters::default()), q);
    }
}
