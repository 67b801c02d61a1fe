//! Channel synchronisation records: what each end of a message channel remembers across
//! failures so that a persistent message crosses exactly once.
//!
//! As in MQ, the records are messages on SYSTEM.CHANNEL.SYNCQ, one per channel and end,
//! found by their CorrelId (the end's role and the channel's name). Keeping them on a
//! queue means the recovery log, checkpoints and restart recovery need nothing new:
//!
//! - The **receiving** end replaces its record (last committed sequence number and
//!   LUWID) inside the batch's unit of work, with the batch's puts, so the record and the
//!   messages are committed together or not at all.
//! - The **sending** end writes its record outside its unit of work, and waits for it to
//!   be durable, before it asks the receiver to confirm a batch with persistent messages:
//!   the record names the batch (its LUWID, sequence numbers and the transmission queue's
//!   MsgIds of its messages), so after a failure the sender can tell from the receiver's
//!   last LUWID whether to commit (remove those messages) or back out (send them again).
//!
//! A replacement puts the new record and then removes the old one; each record carries a
//! generation, so a failure between the two leaves two records, and the newer wins.

use super::engine_session::EngineSession;
use bytes::Bytes;
use ferry_engine::Hobj;
use ferry_mqi::descriptor::persistence;
use ferry_mqi::options::{GetOptionFlags, MatchOptions, OpenOptions, PutOptionFlags};
use ferry_mqi::{CorrelId, GetOptions, MessageDescriptor, MqError, MsgId, ObjectDescriptor};
use ferry_mqi::{PutOptions, ReasonCode};

/// The queue that holds the records (MQ's SYSTEM.CHANNEL.SYNCQ).
pub(crate) const SYNC_QUEUE: &str = ferry_objects::queue::CHANNEL_SYNC_QUEUE;

/// Largest record accepted when read back (a batch of 9999 MsgIds in hex is ~500 KB).
const MAX_RECORD_LEN: usize = 1 << 20;

/// Which end of the channel a record belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// The end that sends a transmission queue's messages (SDR, SVR).
    Sending,
    /// The end that puts what arrives (RCVR, RQSTR).
    Receiving,
}

/// The batch a sending end asked its partner to confirm and has not heard back about.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct InDoubtBatch {
    /// The batch's logical unit of work id.
    pub luwid: u64,
    /// Sequence number of its first message.
    pub first_seq: u32,
    /// Sequence number of its last message.
    pub last_seq: u32,
    /// The transmission queue MsgIds of its messages that travelled in the unit of work,
    /// in hex.
    pub msg_ids: Vec<String>,
}

/// One end's synchronisation state.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct SyncState {
    /// Orders the records of one end: the highest is current.
    pub generation: u64,
    /// Sequence number of the last message of the last committed batch (LSTSEQNO).
    pub committed_seq: u32,
    /// LUWID of the last committed batch (LSTLUWID).
    pub committed_luwid: u64,
    /// Sending end: the batch awaiting its confirmation.
    #[serde(default)]
    pub in_doubt: Option<InDoubtBatch>,
    /// The partner queue manager last seen.
    #[serde(default)]
    pub partner_qmgr: String,
}

impl SyncState {
    /// The state a sending end tells its partner at a start: its last committed batch
    /// and the batch it has no confirmation of.
    pub(crate) fn sender_sync(&self) -> ferry_wire::channel::SenderSync {
        ferry_wire::channel::SenderSync {
            last_committed_seq: self.committed_seq,
            in_doubt: self
                .in_doubt
                .as_ref()
                .map(|d| ferry_wire::channel::InDoubtBatch {
                    luwid: d.luwid,
                    first_seq: d.first_seq,
                    last_seq: d.last_seq,
                }),
        }
    }
}

/// The CorrelId that finds one end's records: the end (`S` or `R`) then the channel
/// name, blank-padded.
pub(crate) fn record_key(channel: &str, end: End) -> CorrelId {
    let mut key = [b' '; 24];
    key[0] = match end {
        End::Sending => b'S',
        End::Receiving => b'R',
    };
    let name = channel.as_bytes();
    let n = name.len().min(23);
    key[1..1 + n].copy_from_slice(&name[..n]);
    key
}

/// A MsgId as the record keeps it.
pub(crate) fn msg_id_hex(id: &MsgId) -> String {
    id.iter().map(|b| format!("{b:02X}")).collect()
}

/// A MsgId from the record's hex; `None` when it is not 48 hex digits.
pub(crate) fn msg_id_from_hex(text: &str) -> Option<MsgId> {
    if text.len() != 48 {
        return None;
    }
    let mut id = [0u8; 24];
    for (i, b) in id.iter_mut().enumerate() {
        *b = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(id)
}

/// One end's records, through an open handle on the sync queue.
pub(crate) struct SyncStore {
    hobj: Hobj,
    key: CorrelId,
    /// The current record's MsgId, if there is one.
    current: Option<MsgId>,
    /// The current state.
    pub state: SyncState,
}

impl SyncStore {
    /// Opens the sync queue and reads the end's current record (a fresh state when there
    /// is none); older records a failed replacement left are removed.
    pub(crate) async fn open(
        session: &EngineSession,
        channel: &str,
        end: End,
    ) -> Result<SyncStore, MqError> {
        let od = ObjectDescriptor::queue(SYNC_QUEUE).map_err(|_| ReasonCode::ObjectNameError)?;
        let hobj = session.open(
            &od,
            OpenOptions::INPUT_SHARED
                | OpenOptions::BROWSE
                | OpenOptions::OUTPUT
                | OpenOptions::FAIL_IF_QUIESCING,
        )?;
        let key = record_key(channel, end);
        let mut records: Vec<(MsgId, SyncState)> = Vec::new();
        let mut first = true;
        loop {
            let md = MessageDescriptor {
                correl_id: key,
                ..MessageDescriptor::default()
            };
            let browse = if first {
                GetOptionFlags::BROWSE_FIRST
            } else {
                GetOptionFlags::BROWSE_NEXT
            };
            first = false;
            let gmo = GetOptions {
                options: browse | GetOptionFlags::FAIL_IF_QUIESCING,
                wait_interval: 0,
                match_options: MatchOptions::CORREL_ID,
            };
            match session.get(hobj, &md, &gmo, MAX_RECORD_LEN).await {
                Ok(got) => match serde_json::from_slice::<SyncState>(&got.data) {
                    Ok(state) => records.push((got.md.msg_id, state)),
                    Err(e) => {
                        tracing::warn!("{SYNC_QUEUE}: an unreadable record is ignored: {e}");
                    }
                },
                Err(e) if e.error.reason == ReasonCode::NoMsgAvailable => break,
                Err(e) => return Err(e.error),
            }
        }
        records.sort_by_key(|(_, s)| s.generation);
        let newest = records.pop();
        let mut store = SyncStore {
            hobj,
            key,
            current: newest.as_ref().map(|(id, _)| *id),
            state: newest.map(|(_, s)| s).unwrap_or_default(),
        };
        for (stale, _) in records {
            store.remove(session, stale, false).await?;
        }
        Ok(store)
    }

    /// Replaces the record with `state` (its generation is set here). `in_unit`: inside
    /// the session's unit of work (the receiving end's batch); otherwise committed at
    /// once and durable when this returns (the sending end).
    pub(crate) async fn replace(
        &mut self,
        session: &EngineSession,
        mut state: SyncState,
        in_unit: bool,
    ) -> Result<(), MqError> {
        state.generation = self.state.generation + 1;
        let body = serde_json::to_vec(&state).map_err(|_| ReasonCode::UnexpectedError)?;
        let mut md = MessageDescriptor {
            correl_id: self.key,
            persistence: persistence::PERSISTENT,
            ..MessageDescriptor::default()
        };
        let syncpoint = if in_unit {
            PutOptionFlags::SYNCPOINT
        } else {
            PutOptionFlags::NO_SYNCPOINT
        };
        let pmo = PutOptions::new(
            syncpoint | PutOptionFlags::NEW_MSG_ID | PutOptionFlags::FAIL_IF_QUIESCING,
        );
        session
            .put(self.hobj, &mut md, &pmo, Bytes::from(body), Bytes::new())
            .await?;
        if let Some(old) = self.current.replace(md.msg_id) {
            self.remove(session, old, in_unit).await?;
        }
        self.state = state;
        Ok(())
    }

    /// Removes the record `msg_id` (gone already is fine).
    async fn remove(
        &mut self,
        session: &EngineSession,
        msg_id: MsgId,
        in_unit: bool,
    ) -> Result<(), MqError> {
        remove_message(session, self.hobj, msg_id, in_unit).await
    }
}

/// Gets message `msg_id` from `hobj`'s queue, inside the unit of work or not; a message
/// already gone is fine.
pub(crate) async fn remove_message(
    session: &EngineSession,
    hobj: Hobj,
    msg_id: MsgId,
    in_unit: bool,
) -> Result<(), MqError> {
    let md = MessageDescriptor {
        msg_id,
        ..MessageDescriptor::default()
    };
    let syncpoint = if in_unit {
        GetOptionFlags::SYNCPOINT
    } else {
        GetOptionFlags::NO_SYNCPOINT
    };
    let gmo = GetOptions {
        options: syncpoint | GetOptionFlags::ACCEPT_TRUNCATED_MSG,
        wait_interval: 0,
        match_options: MatchOptions::MSG_ID,
    };
    match session.get(hobj, &md, &gmo, 0).await {
        Ok(_) => Ok(()),
        Err(e) if e.error.reason == ReasonCode::NoMsgAvailable => Ok(()),
        // Truncated to nothing, accepted: removed.
        Err(e) if e.error.reason == ReasonCode::TruncatedMsgAccepted => Ok(()),
        Err(e) => Err(e.error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_the_end_and_the_channel() {
        let k = record_key("QM1.TO.QM2", End::Sending);
        assert_eq!(&k[..11], b"SQM1.TO.QM2");
        assert!(k[11..].iter().all(|b| *b == b' '));
        assert_ne!(k, record_key("QM1.TO.QM2", End::Receiving));
        let long = record_key("ABCDEFGHIJKLMNOPQRST", End::Receiving);
        assert_eq!(&long[1..21], b"ABCDEFGHIJKLMNOPQRST");
    }

    #[test]
    fn msg_ids_round_trip_through_hex() {
        let id: MsgId = std::array::from_fn(|i| (i * 11) as u8);
        assert_eq!(msg_id_from_hex(&msg_id_hex(&id)), Some(id));
        assert_eq!(msg_id_from_hex("XYZ"), None);
        assert_eq!(msg_id_from_hex(&"G".repeat(48)), None);
    }

    #[test]
    fn states_read_back_with_defaults_for_what_older_records_lack() {
        let s: SyncState =
            serde_json::from_str(r#"{"generation":3,"committed_seq":9,"committed_luwid":7}"#)
                .expect("reads");
        assert_eq!(s.in_doubt, None);
        assert_eq!(s.committed_seq, 9);
    }
}
