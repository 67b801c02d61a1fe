//! The cluster workload algorithm: which instance of a cluster queue a message goes to.
//! Pure: it ranks the candidates it is given and returns the index of the one chosen.
//!
//! MQ's order, each rule keeping only the best candidates left by the one before:
//!
//! ```text
//! 1. highest CLWLRANK of the channel, then of the queue (before channel state, so a
//!    top-ranked queue manager that is down still wins: its messages wait)
//! 2. PUT(ENABLED) instances, when there is one (none: 2268 CLUSTER_PUT_INHIBITED)
//! 3. the local instance, when CLWLUSEQ says LOCAL and there is one
//! 4. queue managers not suspended (SUSPEND QMGR CLUSTER), when there is one
//! 5. the best channel state: running or startable, then starting, then retrying,
//!    then stopped
//! 6. highest NETPRTY
//! 7. highest CLWLPRTY of the channel, then of the queue
//! 8. the CLWLMRUC most recently used channels (when more than CLWLMRUC are left)
//! 9. the least used relative to CLWLWGHT (fewest messages per unit of weight), then
//!    the least recently used
//! ```
//!
//! Rule 9 is MQ's weighted round robin in the form of a count: with equal weights the
//! instances take turns, and a channel of weight 60 gets three messages for each one a
//! channel of weight 20 gets.

use ferry_mqi::ReasonCode;

/// How usable a candidate's channel is, best first (rule 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ChannelPreference {
    /// Running, or inactive and ready to start (or the local instance: no channel).
    Ready,
    /// Binding, initializing, starting or stopping.
    Starting,
    /// Retrying after a failure.
    Retrying,
    /// Stopped, paused or requesting.
    Stopped,
}

/// One instance of a cluster queue the algorithm may choose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The queue manager hosting the instance.
    pub qmgr: String,
    /// True for the instance on this queue manager.
    pub local: bool,
    /// CLWLRANK of the channel to the queue manager (its CLUSRCVR's).
    pub channel_rank: i32,
    /// CLWLRANK of the queue.
    pub queue_rank: i32,
    /// PUT(ENABLED) on the instance.
    pub put_enabled: bool,
    /// The queue manager is suspended from the cluster.
    pub suspended: bool,
    /// The channel's state.
    pub channel_state: ChannelPreference,
    /// NETPRTY of the channel.
    pub network_priority: i32,
    /// CLWLPRTY of the channel.
    pub channel_priority: i32,
    /// CLWLPRTY of the queue.
    pub queue_priority: i32,
    /// CLWLWGHT of the channel (1 to 99).
    pub weight: i32,
    /// Messages this queue manager sent through the channel (or put locally).
    pub sent: u64,
    /// When the channel was last chosen (a counter; 0: never).
    pub last_used: u64,
}

/// What a choice depends on besides the candidates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkloadRules {
    /// CLWLUSEQ resolved: true for LOCAL, false for ANY.
    pub use_local: bool,
    /// QMGR CLWLMRUC.
    pub most_recently_used: usize,
}

/// The index in `candidates` of the instance a message goes to: 2085
/// MQRC_UNKNOWN_OBJECT_NAME when there is none, 2268 MQRC_CLUSTER_PUT_INHIBITED when
/// every instance is PUT(DISABLED).
pub fn choose(candidates: &[Candidate], rules: WorkloadRules) -> Result<usize, ReasonCode> {
    if candidates.is_empty() {
        return Err(ReasonCode::UnknownObjectName);
    }
    let mut left: Vec<usize> = (0..candidates.len()).collect();
    let c = |i: &usize| &candidates[*i];
    keep_max(&mut left, |i| c(i).channel_rank);
    keep_max(&mut left, |i| c(i).queue_rank);
    if left.iter().all(|i| !c(i).put_enabled) {
        return Err(ReasonCode::ClusterPutInhibited);
    }
    left.retain(|i| c(i).put_enabled);
    if rules.use_local {
        if let Some(local) = left.iter().find(|i| c(i).local) {
            return Ok(*local);
        }
    }
    keep_max(&mut left, |i| !c(i).suspended);
    keep_max(&mut left, |i| std::cmp::Reverse(c(i).channel_state));
    keep_max(&mut left, |i| c(i).network_priority);
    keep_max(&mut left, |i| c(i).channel_priority);
    keep_max(&mut left, |i| c(i).queue_priority);
    let mruc = rules.most_recently_used.max(1);
    if left.len() > mruc {
        left.sort_by_key(|i| std::cmp::Reverse(c(i).last_used));
        left.truncate(mruc);
        left.sort_unstable();
    }
    debug_assert!(!left.is_empty(), "every rule keeps at least one candidate");
    let chosen = left
        .into_iter()
        .min_by(|a, b| {
            let (ca, cb) = (c(a), c(b));
            // sent_a / weight_a against sent_b / weight_b, without division.
            let wa = u128::from(ca.weight.max(1) as u32);
            let wb = u128::from(cb.weight.max(1) as u32);
            (u128::from(ca.sent) * wb)
                .cmp(&(u128::from(cb.sent) * wa))
                .then(ca.last_used.cmp(&cb.last_used))
                .then(a.cmp(b))
        })
        .ok_or(ReasonCode::NoDestinationsAvailable)?;
    Ok(chosen)
}

/// Keeps the candidates of `left` whose `key` is the largest.
fn keep_max<K: Ord>(left: &mut Vec<usize>, key: impl Fn(&usize) -> K) {
    if let Some(best) = left.iter().map(&key).max() {
        left.retain(|i| key(i) == best);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(qmgr: &str) -> Candidate {
        Candidate {
            qmgr: qmgr.into(),
            local: false,
            channel_rank: 0,
            queue_rank: 0,
            put_enabled: true,
            suspended: false,
            channel_state: ChannelPreference::Ready,
            network_priority: 0,
            channel_priority: 0,
            queue_priority: 0,
            weight: 50,
            sent: 0,
            last_used: 0,
        }
    }

    const ANY: WorkloadRules = WorkloadRules {
        use_local: false,
        most_recently_used: 999_999_999,
    };
    const LOCAL: WorkloadRules = WorkloadRules {
        use_local: true,
        most_recently_used: 999_999_999,
    };

    fn pick(cands: &[Candidate], rules: WorkloadRules) -> Result<&str, ReasonCode> {
        choose(cands, rules).map(|i| cands[i].qmgr.as_str())
    }

    #[test]
    fn nothing_known_is_2085() {
        assert_eq!(choose(&[], ANY), Err(ReasonCode::UnknownObjectName));
    }

    #[test]
    fn channel_rank_then_queue_rank_win_even_over_a_stopped_channel() {
        let mut a = cand("A");
        a.channel_rank = 1;
        a.channel_state = ChannelPreference::Stopped;
        let mut b = cand("B");
        b.queue_rank = 9;
        assert_eq!(pick(&[a.clone(), b.clone()], ANY), Ok("A"));
        let mut c = cand("C");
        c.channel_rank = 1;
        c.queue_rank = 1;
        c.channel_state = ChannelPreference::Stopped;
        assert_eq!(pick(&[a, b, c], ANY), Ok("C"));
    }

    #[test]
    fn put_disabled_instances_are_left_out_and_all_disabled_is_2268() {
        let mut a = cand("A");
        a.put_enabled = false;
        let b = cand("B");
        assert_eq!(pick(&[a.clone(), b], ANY), Ok("B"));
        assert_eq!(choose(&[a], ANY), Err(ReasonCode::ClusterPutInhibited));
    }

    #[test]
    fn the_local_instance_wins_with_clwluseq_local_only() {
        let mut l = cand("HERE");
        l.local = true;
        l.sent = 100;
        let r = cand("R");
        assert_eq!(pick(&[r.clone(), l.clone()], LOCAL), Ok("HERE"));
        assert_eq!(pick(&[r.clone(), l.clone()], ANY), Ok("R"));
        // A disabled local instance does not count.
        l.put_enabled = false;
        assert_eq!(pick(&[r, l], LOCAL), Ok("R"));
    }

    #[test]
    fn suspended_queue_managers_come_last() {
        let mut a = cand("A");
        a.suspended = true;
        let mut b = cand("B");
        b.sent = 1000;
        assert_eq!(pick(&[a.clone(), b], ANY), Ok("B"));
        assert_eq!(pick(&[a], ANY), Ok("A"));
    }

    #[test]
    fn channel_state_orders_before_priorities() {
        let mut a = cand("A");
        a.channel_state = ChannelPreference::Retrying;
        a.network_priority = 9;
        a.channel_priority = 9;
        let mut b = cand("B");
        b.channel_state = ChannelPreference::Starting;
        assert_eq!(pick(&[a.clone(), b.clone()], ANY), Ok("B"));
        let mut c = cand("C");
        c.channel_state = ChannelPreference::Stopped;
        assert_eq!(pick(&[c, a], ANY), Ok("A"));
    }

    #[test]
    fn netprty_then_channel_then_queue_priority() {
        let mut a = cand("A");
        a.network_priority = 1;
        let mut b = cand("B");
        b.channel_priority = 9;
        assert_eq!(pick(&[a.clone(), b.clone()], ANY), Ok("A"));
        let mut c = cand("C");
        c.queue_priority = 9;
        assert_eq!(pick(&[b.clone(), c.clone()], ANY), Ok("B"));
        let d = cand("D");
        assert_eq!(pick(&[d, c], ANY), Ok("C"));
    }

    #[test]
    fn mruc_keeps_the_most_recently_used() {
        let mut a = cand("A");
        a.last_used = 5;
        a.sent = 10;
        let mut b = cand("B");
        b.last_used = 0;
        let rules = WorkloadRules {
            use_local: false,
            most_recently_used: 1,
        };
        // B is less used, but only A is among the one most recently used.
        assert_eq!(pick(&[a.clone(), b.clone()], rules), Ok("A"));
        assert_eq!(pick(&[a, b], ANY), Ok("B"));
    }

    #[test]
    fn weights_share_the_messages() {
        let mut cands = vec![cand("A"), cand("B"), cand("C")];
        cands[0].weight = 60;
        cands[1].weight = 20;
        cands[2].weight = 20;
        for n in 1..=100u64 {
            let i = choose(&cands, ANY).expect("a choice");
            cands[i].sent += 1;
            cands[i].last_used = n;
        }
        assert_eq!(
            cands.iter().map(|c| c.sent).collect::<Vec<_>>(),
            vec![60, 20, 20]
        );
        let mut even = vec![cand("A"), cand("B")];
        for n in 1..=101u64 {
            let i = choose(&even, ANY).expect("a choice");
            even[i].sent += 1;
            even[i].last_used = n;
        }
        assert!(even[0].sent.abs_diff(even[1].sent) <= 1);
    }

    #[test]
    fn least_recently_used_breaks_ties() {
        let mut a = cand("A");
        a.last_used = 7;
        let mut b = cand("B");
        b.last_used = 3;
        assert_eq!(pick(&[a, b], ANY), Ok("B"));
    }
}
