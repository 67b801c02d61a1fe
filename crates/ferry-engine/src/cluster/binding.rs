//! Where each put to a cluster queue goes under its handle's binding, and which waiting
//! messages may go elsewhere: MQOO_BIND_ON_OPEN keeps the instance chosen at MQOPEN,
//! BIND_NOT_FIXED chooses at each put, BIND_ON_GROUP chooses at the first message of a
//! logical group and keeps that instance to the group's last (a message outside a group
//! chooses as NOT_FIXED).
//!
//! A message that may be reallocated (bound NOT_FIXED) carries
//! [`REALLOCATABLE_FEEDBACK`] in the Feedback of its transmission-queue descriptor (the
//! one that never leaves this queue manager: the MQXQH holds the application's own).
//! While its cluster-sender cannot run, the server's repository task asks
//! [`QueueManager::cluster_reallocate`] for another instance and moves it there, as MQ
//! reallocates them; a message bound to its instance waits for it.

use super::{BindMode, ClusterBinding, ClusterChoice};
use crate::connection::{ConnId, Hobj, RemoteTarget};
use crate::qmgr::QueueManager;
use ferry_mqi::descriptor::msg_flags;
use ferry_mqi::{MessageDescriptor, ReasonCode};

/// The Feedback of a transmission-queue message that may be reallocated to another
/// instance: a value of MQ's application range (MQFB_APPL_FIRST 65536 to
/// MQFB_APPL_LAST 999999999), on the descriptor only this queue manager sees.
pub const REALLOCATABLE_FEEDBACK: i32 = 999_999_000;

/// The flags that put a message in a logical group.
const GROUP_FLAGS: i32 = msg_flags::MSG_IN_GROUP | msg_flags::LAST_MSG_IN_GROUP;

impl QueueManager {
    /// The instance the put of `md` on handle `hobj` goes to, under `binding`.
    pub(crate) fn cluster_put_choice(
        &mut self,
        conn: ConnId,
        hobj: Hobj,
        binding: ClusterBinding,
        target: &RemoteTarget,
        md: &MessageDescriptor,
    ) -> Result<ClusterChoice, ReasonCode> {
        let queue = target.remote_q_name.as_str();
        let fixed = ClusterChoice {
            qmgr: target.remote_qmgr_name.as_str().to_string(),
            channel: Some(binding.channel.as_str().to_string()),
        };
        match binding.mode {
            BindMode::OnOpen => Ok(fixed),
            BindMode::NotFixed => self.cluster_choose(queue, false),
            BindMode::OnGroup if md.msg_flags & GROUP_FLAGS == 0 => {
                self.cluster_choose(queue, false)
            }
            BindMode::OnGroup => {
                if let Some(choice) = self.cluster_groups.get(&(conn, hobj)) {
                    return Ok(choice.clone());
                }
                let choice = self.cluster_choose(queue, false)?;
                self.cluster_groups.insert((conn, hobj), choice.clone());
                Ok(choice)
            }
        }
    }

    /// Forgets the group binding of a handle being closed.
    pub(crate) fn cluster_handle_closed(&mut self, conn: ConnId, hobj: Hobj) {
        self.cluster_groups.remove(&(conn, hobj));
    }

    /// Another instance of cluster queue `queue` for a reallocatable message waiting
    /// for queue manager `from` (whose channel cannot run, or which left the cluster):
    /// the workload algorithm's choice among the remote instances, or `None` when it
    /// would choose `from` again (nothing better is available: the message waits).
    pub fn cluster_reallocate(&mut self, queue: &str, from: &str) -> Option<ClusterChoice> {
        let choice = self.cluster_choose(queue, false).ok()?;
        if choice.qmgr == from || choice.channel.is_none() {
            return None;
        }
        self.cluster.note_chosen(&choice.qmgr);
        Some(choice)
    }
}
