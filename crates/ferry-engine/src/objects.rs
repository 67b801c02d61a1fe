//! The object catalogue: queue definitions with their live local queues, looked up by
//! name once (at open) and by a stable `QueueId` afterwards, plus the serializable
//! [`Catalogue`] the server saves and restores.

use crate::queue::LocalQueue;
use ferry_mqi::ReasonCode;
use ferry_objects::queue::DefinitionType;
use ferry_objects::{
    ChannelDefinition, ListenerDefinition, QmgrAttributes, QueueDefinition, QueueType,
};
use std::collections::BTreeMap;

/// A queue's slot and generation: handles keep this instead of the name, so a call
/// reaches its queue by index; a deleted queue's id never matches a new queue's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct QueueId {
    idx: u32,
    gen: u32,
}

/// A queue definition and, for local queues, its messages and counters.
#[derive(Debug)]
pub(crate) struct QueueEntry {
    pub def: QueueDefinition,
    pub local: Option<LocalQueue>,
}

impl QueueEntry {
    /// True for a temporary dynamic queue (never saved).
    pub fn is_temporary(&self) -> bool {
        self.def.queue_type == QueueType::Local
            && self.def.attributes.definition_type == DefinitionType::TemporaryDynamic
    }
}

#[derive(Debug, Default)]
struct Slot {
    gen: u32,
    entry: Option<QueueEntry>,
}

/// Every queue definition of the queue manager.
#[derive(Debug, Default)]
pub(crate) struct QueueTable {
    slots: Vec<Slot>,
    free: Vec<u32>,
    names: BTreeMap<String, QueueId>,
}

impl QueueTable {
    /// Queue names and ids, in name order.
    pub fn names(&self) -> &BTreeMap<String, QueueId> {
        &self.names
    }

    /// The id of queue `name`.
    pub fn lookup(&self, name: &str) -> Option<QueueId> {
        self.names.get(name).copied()
    }

    /// The queue with `id`, if it still exists.
    pub fn get(&self, id: QueueId) -> Option<&QueueEntry> {
        let s = self.slots.get(id.idx as usize)?;
        if s.gen != id.gen {
            return None;
        }
        s.entry.as_ref()
    }

    /// The local queue alias `entry` resolves to (its TARGQ): 2082
    /// MQRC_UNKNOWN_ALIAS_BASE_Q when there is none, 2001 MQRC_ALIAS_BASE_Q_TYPE_ERROR when
    /// it is not a local queue.
    pub fn alias_base(&self, entry: &QueueEntry) -> Result<QueueId, ReasonCode> {
        debug_assert_eq!(entry.def.queue_type, QueueType::Alias);
        let target = entry.def.attributes.target.trim();
        let tid = self.lookup(target).ok_or(ReasonCode::UnknownAliasBaseQ)?;
        let t = self.get(tid).ok_or(ReasonCode::UnknownAliasBaseQ)?;
        if t.def.queue_type != QueueType::Local {
            return Err(ReasonCode::AliasBaseQTypeError);
        }
        Ok(tid)
    }

    /// The queue with `id`, mutable.
    pub fn get_mut(&mut self, id: QueueId) -> Option<&mut QueueEntry> {
        let s = self.slots.get_mut(id.idx as usize)?;
        if s.gen != id.gen {
            return None;
        }
        s.entry.as_mut()
    }

    /// The live local queue with `id`.
    pub fn local_mut(&mut self, id: QueueId) -> Option<&mut LocalQueue> {
        self.get_mut(id)?.local.as_mut()
    }

    /// Adds a definition (the name must be free); local queues get live state.
    pub fn insert(&mut self, def: QueueDefinition) -> QueueId {
        let local = (def.queue_type == QueueType::Local).then(LocalQueue::default);
        let name = def.name.clone();
        let entry = QueueEntry { def, local };
        let id = match self.free.pop() {
            Some(idx) => {
                let s = &mut self.slots[idx as usize];
                s.entry = Some(entry);
                QueueId { idx, gen: s.gen }
            }
            None => {
                self.slots.push(Slot {
                    gen: 0,
                    entry: Some(entry),
                });
                QueueId {
                    idx: (self.slots.len() - 1) as u32,
                    gen: 0,
                }
            }
        };
        self.names.insert(name, id);
        id
    }

    /// Removes a queue; its id becomes stale.
    pub fn remove(&mut self, id: QueueId) -> Option<QueueEntry> {
        let s = self.slots.get_mut(id.idx as usize)?;
        if s.gen != id.gen {
            return None;
        }
        let e = s.entry.take()?;
        s.gen = s.gen.wrapping_add(1);
        self.free.push(id.idx);
        self.names.remove(&e.def.name);
        Some(e)
    }

    /// How many queues there are.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Every queue, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (QueueId, &QueueEntry)> {
        self.names
            .values()
            .filter_map(move |&id| self.get(id).map(|e| (id, e)))
    }
}

/// Everything that survives a restart: what the server saves after
/// [`crate::Effect::CatalogueChanged`] and gives back to
/// [`crate::QueueManager::from_catalogue`]. Temporary dynamic queues are not in it.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Catalogue {
    /// Queue manager attributes.
    pub qmgr: QmgrAttributes,
    /// Queue definitions of every type, sorted by name.
    pub queues: Vec<QueueDefinition>,
    /// Channel definitions, sorted by name.
    pub channels: Vec<ChannelDefinition>,
    /// Listener definitions, sorted by name.
    pub listeners: Vec<ListenerDefinition>,
    /// Channel authentication records (SET CHLAUTH).
    pub chlauth: ferry_security::chlauth::ChlauthRules,
    /// Authentication information objects (DEFINE AUTHINFO), sorted by name.
    pub authinfos: Vec<ferry_objects::AuthInfoDefinition>,
    /// Process definitions (DEFINE PROCESS), sorted by name. Absent in catalogues
    /// written before Ferry had them (then none: recovery adds SYSTEM.DEFAULT.PROCESS).
    pub processes: Vec<ferry_objects::ProcessDefinition>,
    /// Namelists (DEFINE NAMELIST), sorted by name.
    pub namelists: Vec<ferry_objects::NamelistDefinition>,
    /// Topic objects (DEFINE TOPIC), sorted by name.
    pub topics: Vec<ferry_objects::TopicDefinition>,
    /// Authority records (SET AUTHREC).
    pub authority_records: ferry_security::oam::AuthorityRecords,
    /// Durable subscriptions, sorted by name. Restored by
    /// [`crate::QueueManager::restore_subscriptions`] (which compiles their selectors),
    /// not by `from_catalogue`.
    pub subscriptions: Vec<ferry_objects::DurableSubscription>,
}
