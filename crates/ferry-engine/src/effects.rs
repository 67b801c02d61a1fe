//! Effects: what the engine asks the server to do, returned as data.
//!
//! The engine never performs I/O. A call that completes someone else's wait, or changes
//! the definitions that must be saved, pushes an [`Effect`] into the caller's [`Effects`]
//! buffer; the server performs them after the call. The buffer is reused across calls
//! (drain it, keep it) so the hot path does not allocate.

use crate::connection::{ConnId, Hobj};
use crate::get::GetResult;

/// One thing the server must do after an engine call.
///
/// `GetCompleted` carries the message descriptor inline: boxing it would allocate once
/// per delivered message on the hot path, while an effect is moved only once.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Effect {
    /// A GET that was waiting finished: a message arrived (or was committed or backed out
    /// onto the queue), the wait interval ended (2033), the queue manager is quiescing
    /// (2161) or stopping (2162), the queue was deleted (2052) or get-inhibited (2016).
    /// The server sends the answer to connection `conn`.
    GetCompleted {
        /// The connection whose GET completes.
        conn: ConnId,
        /// The handle the GET was issued on.
        hobj: Hobj,
        /// The message or the failure.
        result: GetResult,
    },
    /// Definitions changed (define/alter/delete, a permanent dynamic queue made or
    /// deleted, ALTER QMGR): the server saves [`crate::QueueManager::catalogue`].
    CatalogueChanged,
}

/// A reusable buffer of effects.
#[derive(Debug, Default)]
pub struct Effects {
    items: Vec<Effect>,
}

impl Effects {
    /// An empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an effect. `CatalogueChanged` is kept once per batch.
    pub fn push(&mut self, e: Effect) {
        if matches!(e, Effect::CatalogueChanged)
            && self
                .items
                .iter()
                .any(|x| matches!(x, Effect::CatalogueChanged))
        {
            return;
        }
        self.items.push(e);
    }

    /// Takes every effect out, keeping the allocation.
    pub fn drain(&mut self) -> std::vec::Drain<'_, Effect> {
        self.items.drain(..)
    }

    /// Forgets every effect, keeping the allocation.
    pub fn clear(&mut self) {
        self.items.clear();
    }

    /// The effects so far.
    pub fn as_slice(&self) -> &[Effect] {
        &self.items
    }

    /// How many effects are waiting.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when there is nothing to do.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}
