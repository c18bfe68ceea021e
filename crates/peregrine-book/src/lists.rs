//! Live order lists: a slab with a free list and an id map, sized once. The rules
//! (what a leg's fill, trigger or exit does to the others) are applied by the book
//! (`book/lists.rs`); this only stores who belongs to which list.

use hashbrown::HashMap;
use peregrine_types::{AccountId, ClientOrderId, ListKind, OrderId};
use rustc_hash::FxBuildHasher;

use crate::venue::{ListStage, ListState};

/// One live list.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ListEntry {
    pub(crate) id: u64,
    pub(crate) client_id: ClientOrderId,
    pub(crate) account: AccountId,
    pub(crate) kind: ListKind,
    pub(crate) stage: ListStage,
    /// Order ids of the legs still bound (0: gone).
    pub(crate) legs: [u64; 3],
    /// The legs' ids as entered (for the list's reports).
    pub(crate) entered: [u64; 3],
}

impl ListEntry {
    const EMPTY: ListEntry = ListEntry {
        id: 0,
        client_id: ClientOrderId(0),
        account: AccountId(0),
        kind: ListKind::Oco,
        stage: ListStage::Oco,
        legs: [0; 3],
        entered: [0; 3],
    };

    /// The canonical view.
    pub(crate) fn state(&self) -> ListState {
        ListState {
            id: OrderId(self.id),
            client_id: self.client_id,
            account: self.account,
            kind: self.kind,
            stage: self.stage,
            legs: self.legs.map(OrderId),
            entered: self.entered.map(OrderId),
        }
    }

    /// The index of leg `id`, if still bound.
    pub(crate) fn leg_index(&self, id: u64) -> Option<usize> {
        self.legs.iter().position(|&l| l == id && id != 0)
    }
}

/// The table.
#[derive(Debug)]
pub(crate) struct Lists {
    slots: Vec<ListEntry>,
    free: Vec<u32>,
    ids: HashMap<u64, u32, FxBuildHasher>,
}

impl Lists {
    /// Room for `capacity` live lists.
    pub(crate) fn new(capacity: usize) -> Self {
        Lists {
            slots: vec![ListEntry::EMPTY; capacity],
            free: (0..capacity as u32).rev().collect(),
            ids: HashMap::with_capacity_and_hasher(capacity.max(1), FxBuildHasher),
        }
    }

    /// Live lists.
    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    /// True when no slot is free.
    pub(crate) fn is_full(&self) -> bool {
        self.free.is_empty()
    }

    /// The slot of live list `id`.
    pub(crate) fn get(&self, id: u64) -> Option<u32> {
        if self.ids.is_empty() {
            return None;
        }
        self.ids.get(&id).copied()
    }

    /// Stores `entry`; `None` when full.
    pub(crate) fn insert(&mut self, entry: ListEntry) -> Option<u32> {
        let slot = self.free.pop()?;
        self.slots[slot as usize] = entry;
        self.ids.insert(entry.id, slot);
        Some(slot)
    }

    /// The list in `slot`.
    pub(crate) fn entry(&self, slot: u32) -> &ListEntry {
        &self.slots[slot as usize]
    }

    /// The list in `slot`, mutably.
    pub(crate) fn entry_mut(&mut self, slot: u32) -> &mut ListEntry {
        &mut self.slots[slot as usize]
    }

    /// Forgets the list in `slot`.
    pub(crate) fn remove(&mut self, slot: u32) -> ListEntry {
        let e = self.slots[slot as usize];
        self.ids.remove(&e.id);
        self.free.push(slot);
        e
    }

    /// Every live list's slot (unordered).
    pub(crate) fn for_each_slot(&self, f: &mut dyn FnMut(u32)) {
        for slot in self.ids.values() {
            f(*slot);
        }
    }
}
