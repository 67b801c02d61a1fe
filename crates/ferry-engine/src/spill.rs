//! The spill of non-persistent messages beyond a queue's DefaultQBufferSize.
//!
//! Checkpoints file only persistent messages, so a deep queue of non-persistent messages
//! would otherwise hold every body in memory. When a queue holds more of their bodies than
//! its buffer, the server takes a [`crate::QueueManager::spill_plan`]: the newest
//! available ones still in memory (the head of the queue, next to be got, stays), written
//! to the queue's file without a sync (a restart discards non-persistent records), plus
//! the records of spilled messages gone since the last plan, to remove. Once written, the
//! server reports where they went ([`crate::QueueManager::bodies_spilled`]) and they give
//! up their bodies like filed persistent ones (`crate::body`). A message chosen for a
//! spill stays counted as pending until its report, so plans in between do not spill more
//! than needed.

use crate::body::FiledBody;

impl crate::QueueManager {
    /// True when a queue may hold more non-persistent bodies in memory than its
    /// DefaultQBufferSize: the server should take a [`crate::QueueManager::spill_plan`].
    pub fn spill_wanted(&self) -> bool {
        self.spill_hint
    }

    /// Non-persistent messages to write to queue files now, so that each queue holds at
    /// most DefaultQBufferSize of their bodies in memory (the newest go: the head of the
    /// queue stays), and the records of spilled messages gone since the last plan, to
    /// remove. The server writes them (no sync needed: a restart discards non-persistent
    /// records) and reports where they went with [`crate::QueueManager::bodies_spilled`].
    /// Temporary dynamic queues are not spilled.
    pub fn spill_plan(&mut self) -> Vec<crate::QueueFiling> {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> Vec<crate::QueueFiling> {
            self.spill_hint = false;
            let budget = self.buffers.non_persistent;
            let ids: Vec<_> = self.queues.iter().map(|(id, _)| id).collect();
            let mut plan = Vec::new();
            for id in ids {
                let Some(e) = self.queues.get(id) else {
                    continue;
                };
                if e.is_temporary() {
                    continue;
                }
                let queue = e.def.name.clone();
                let Some(lq) = self.queues.local_mut(id) else {
                    continue;
                };
                let store = &mut lq.store;
                let over = store
                    .resident_non_persistent_bytes()
                    .saturating_sub(store.spill_pending)
                    .saturating_sub(budget);
                let mut file: Vec<crate::LoggedMessage> = if over > 0 {
                    store
                        .spill_candidates(over)
                        .into_iter()
                        .filter_map(|m| m.logged().ok())
                        .collect()
                } else {
                    Vec::new()
                };
                // Written in get order, so a drain reads them back sequentially.
                file.reverse();
                for m in &file {
                    let len = u32::try_from(m.body.len()).unwrap_or(u32::MAX);
                    store.spilled.insert(m.seq, len);
                    store.spill_pending += u64::from(len);
                }
                let unfile = std::mem::take(&mut store.spill_gone);
                if !file.is_empty() || !unfile.is_empty() {
                    // The first write to the file of a new (or redefined) queue empties it
                    // of any earlier incarnation, whether a spill or a checkpoint comes first.
                    // A checkpoint emptying it after a spill left the spilled bodies only in
                    // deleted segments still open, unseen by CURFSIZE and the disk's books.
                    let filing = &mut store.filing;
                    let fresh = !filing.file_matches && !filing.file_started;
                    filing.file_started = true;
                    plan.push(crate::QueueFiling {
                        queue,
                        fresh,
                        file,
                        unfile,
                    });
                }
            }
            plan
        })();
        self.debug_check();
        result
    }

    /// The server has written a spill of queue `queue` ([`crate::QueueManager::spill_plan`]):
    /// those messages still there, available and in memory give up their bodies. Returns
    /// the bytes freed.
    pub fn bodies_spilled(&mut self, queue: &str, spilled: &[FiledBody]) -> u64 {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> u64 {
            let Some(id) = self.queues.lookup(queue) else {
                return 0;
            };
            let Some(lq) = self.queues.local_mut(id) else {
                return 0;
            };
            let store = &mut lq.store;
            let mut freed = 0;
            for f in spilled {
                let Some(pending) = store.spilled.get_mut(&f.seq) else {
                    continue;
                };
                let was = std::mem::take(pending);
                store.spill_pending = store.spill_pending.saturating_sub(u64::from(was));
                freed += store.leave_filed(f, &[]);
            }
            freed
        })();
        self.debug_check();
        result
    }
}
