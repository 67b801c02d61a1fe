//! What a reply waits for before it reaches its client, whatever the protocol.
//!
//! Output that must wait for the recovery log takes one path for every protocol: an
//! engine call returns how its output must wait ([`ReplyWait`]: a log position, a
//! failure, a definitions change being saved); the connection holds the output and
//! registers as a [`DurableHold`](super::log_driver::DurableHold), which the log driver
//! releases or fails by log position.

/// How the output of an engine call must wait for the recovery log.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum ReplyHold {
    /// Send it at once.
    #[default]
    Now,
    /// Hold it until the log is durable up to this LSN.
    Until(u64),
    /// Its log records could not be appended: answer 2102 MQRC_RESOURCE_PROBLEM.
    Fail,
}

impl ReplyHold {
    /// The hold of output that depends on both `self` and `other`: the later position,
    /// and a failure over anything.
    #[must_use]
    pub(crate) fn and(self, other: ReplyHold) -> ReplyHold {
        match (self, other) {
            (ReplyHold::Fail, _) | (_, ReplyHold::Fail) => ReplyHold::Fail,
            (ReplyHold::Until(a), ReplyHold::Until(b)) => ReplyHold::Until(a.max(b)),
            (ReplyHold::Until(a), ReplyHold::Now) | (ReplyHold::Now, ReplyHold::Until(a)) => {
                ReplyHold::Until(a)
            }
            (ReplyHold::Now, ReplyHold::Now) => ReplyHold::Now,
        }
    }
}

/// Everything the reply of engine calls must wait for: the recovery log and the
/// definitions writer (a call that changed definitions is answered once they are saved).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[must_use]
pub(crate) struct ReplyWait {
    /// The recovery log.
    pub log: ReplyHold,
    /// The definitions writer's ticket for the change, if the calls changed definitions.
    pub definitions: Option<u64>,
}

impl ReplyWait {
    /// What a reply depending on both `self` and `other` waits for.
    pub(crate) fn and(self, other: ReplyWait) -> ReplyWait {
        ReplyWait {
            log: self.log.and(other.log),
            definitions: match (self.definitions, other.definitions) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_waits_for_the_later_position_and_fails_with_either_call() {
        let now = ReplyHold::Now;
        assert_eq!(now.and(now), ReplyHold::Now);
        assert_eq!(now.and(ReplyHold::Until(5)), ReplyHold::Until(5));
        assert_eq!(
            ReplyHold::Until(9).and(ReplyHold::Until(5)),
            ReplyHold::Until(9)
        );
        assert_eq!(ReplyHold::Until(9).and(ReplyHold::Fail), ReplyHold::Fail);
        let a = ReplyWait {
            log: ReplyHold::Until(3),
            definitions: Some(2),
        };
        let b = ReplyWait {
            log: ReplyHold::Now,
            definitions: Some(7),
        };
        assert_eq!(
            a.and(b),
            ReplyWait {
                log: ReplyHold::Until(3),
                definitions: Some(7)
            }
        );
        assert_eq!(a.and(ReplyWait::default()), a);
    }
}
