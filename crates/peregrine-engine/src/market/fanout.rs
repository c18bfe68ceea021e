//! One strategy's market-data outbox: which books it subscribed to, its shared-memory
//! ring, and conflation.
//!
//! The market-data thread never waits for a strategy. A push into a full ring is not
//! retried and not queued: for a book change the outbox remembers that the book is
//! *pending* and, as soon as the ring has room, pushes one event for it carrying the
//! then latest state (later changes of a pending book are folded into that one
//! event); a trade that does not fit is dropped. Both count in `skipped`, which every
//! event carries, so the strategy knows how much it missed. A slow strategy therefore
//! costs the thread one failed push per change, and costs other strategies nothing.

use peregrine_queue::shm::ShmSpscProducer;
use peregrine_strategy::md::MdEvent;

/// Counts of one outbox.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutboxCounts {
    /// Events pushed.
    pub pushed: u64,
    /// Book changes folded into a later event, and trades dropped.
    pub skipped: u64,
    /// Pushes refused because the ring was full.
    pub full: u64,
}

/// One strategy's outbox.
#[derive(Debug)]
pub struct Outbox {
    tx: Option<ShmSpscProducer<MdEvent>>,
    subscribed: Vec<bool>,
    pending: Vec<bool>,
    any_pending: bool,
    /// Counts.
    pub counts: OutboxCounts,
}

impl Outbox {
    /// An outbox over `slots` books, subscribed to those with `subscribed[slot]`.
    pub fn new(subscribed: Vec<bool>, tx: Option<ShmSpscProducer<MdEvent>>) -> Outbox {
        let n = subscribed.len();
        Outbox {
            tx,
            subscribed,
            pending: vec![false; n],
            any_pending: false,
            counts: OutboxCounts::default(),
        }
    }

    /// A fresh ring (the strategy's rings were re-created): nothing is pending.
    pub fn attach(&mut self, tx: ShmSpscProducer<MdEvent>) {
        self.tx = Some(tx);
        self.pending.iter_mut().for_each(|p| *p = false);
        self.any_pending = false;
    }

    /// Whether the strategy takes changes of book `slot`.
    pub fn wants(&self, slot: usize) -> bool {
        self.subscribed.get(slot).copied().unwrap_or(false)
    }

    fn push(&mut self, mut ev: MdEvent) -> bool {
        let Some(tx) = self.tx.as_mut() else {
            return false;
        };
        ev.skipped = self.counts.skipped;
        match tx.try_push(ev) {
            Ok(()) => {
                self.counts.pushed += 1;
                true
            }
            Err(_) => {
                self.counts.full += 1;
                false
            }
        }
    }

    /// Book `slot` changed; `ev` describes its new version.
    pub fn book(&mut self, slot: usize, ev: &MdEvent) {
        if !self.wants(slot) {
            return;
        }
        if self.pending[slot] {
            self.counts.skipped += 1; // folded into the pending event
            return;
        }
        if !self.push(*ev) {
            self.pending[slot] = true;
            self.any_pending = true;
            self.counts.skipped += 1;
        }
    }

    /// A trade on book `slot`.
    pub fn trade(&mut self, slot: usize, ev: &MdEvent) {
        if self.wants(slot) && !self.push(*ev) {
            self.counts.skipped += 1;
        }
    }

    /// Pushes the latest state of every pending book while the ring has room
    /// (`latest(slot)` builds the event).
    pub fn flush(&mut self, latest: &dyn Fn(usize) -> MdEvent) {
        if !self.any_pending {
            return;
        }
        for slot in 0..self.pending.len() {
            if self.pending[slot] {
                if !self.push(latest(slot)) {
                    return;
                }
                self.pending[slot] = false;
            }
        }
        self.any_pending = false;
    }
}
