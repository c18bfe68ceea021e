//! Prefetching for commands that have not run yet.
//!
//! With a million resting orders, a cancel or replace walks a chain of memory that is
//! not in cache: id-table entry → order node → its neighbours, its level, the new
//! level and that level's tail node. Each link is a miss of 100–400 ns on this kind
//! of VM, and each depends on the one before, so one command cannot overlap them.
//! A caller that already holds the next few commands (a batch read from a socket or
//! popped from a ring) can: each [`Stage`] reads only what the previous stage brought
//! in and starts loading the next link, so by the time a command runs its chain is in
//! L1. [`OrderBook::execute_batch`] runs the pipeline; the stages are public for
//! callers that schedule it themselves (e.g. across books in the engine).
//!
//! Prefetching is only a hint: it reads state that the commands in between may change
//! (then a wrong line is loaded, nothing else happens) and never writes.

use peregrine_types::Side;

use super::OrderBook;
use crate::arena::NIL;
use crate::command::{Action, Command};
use crate::event::EventSink;
use crate::ids::OrderIds;
use crate::index::LevelIndex;
use crate::prefetch::prefetch;

/// How far ahead of execution a command is, and so which link of its chain to load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Furthest ahead: the id-table entry of the order named, and the price levels a
    /// new order or a replace will rest at (address arithmetic only, no reads).
    Ids,
    /// Reads the id entry and loads the order's node; for a new order, reads its
    /// level and loads the tail node it will link behind.
    Nodes,
    /// Just before execution: reads the node and loads its neighbours, its level and,
    /// for a replace, the new level's tail node.
    Neighbours,
}

/// Distances (in commands) at which [`OrderBook::execute_batch`] runs each stage.
/// Measured on the 1M-order mix (`docs/performance.md`): a stage needs about two
/// commands' time for its line to arrive.
pub const LOOKAHEAD: [(usize, Stage); 3] =
    [(6, Stage::Ids), (4, Stage::Nodes), (2, Stage::Neighbours)];

impl<L: LevelIndex, I: OrderIds> OrderBook<L, I> {
    /// Runs `cmds` in order, prefetching each command's memory a few commands before
    /// it runs ([`LOOKAHEAD`]). Produces exactly the events of calling
    /// [`OrderBook::execute`] on each command.
    pub fn execute_batch<S: EventSink>(&mut self, cmds: &[Command], sink: &mut S) {
        for i in 0..cmds.len() {
            for (d, stage) in LOOKAHEAD {
                if let Some(c) = cmds.get(i + d) {
                    self.prefetch(c, stage);
                }
            }
            self.execute(&cmds[i], sink);
        }
    }

    /// Starts loading what `cmd` will touch, as far as `stage` allows. Changes
    /// nothing; a command for another instrument or naming an unknown order is
    /// ignored.
    #[inline]
    pub fn prefetch(&self, cmd: &Command, stage: Stage) {
        match (&cmd.action, stage) {
            (Action::New(o), Stage::Ids) => self.levels.prefetch(o.side, o.price.units()),
            (Action::New(o), Stage::Nodes) => self.prefetch_tail(o.side, o.price.units()),
            (Action::Cancel(c), Stage::Ids) => self.ids.prefetch(c.id.0),
            (Action::Replace(r), Stage::Ids) => {
                self.ids.prefetch(r.id.0);
                self.levels.prefetch(Side::Buy, r.price.units());
                self.levels.prefetch(Side::Sell, r.price.units());
            }
            (Action::Cancel(c), Stage::Nodes) => self.prefetch_node(c.id.0),
            (Action::Replace(r), Stage::Nodes) => self.prefetch_node(r.id.0),
            (Action::Cancel(c), Stage::Neighbours) => {
                if let Some(slot) = self.ids.get(c.id.0) {
                    self.prefetch_around(slot, None);
                }
            }
            (Action::Replace(r), Stage::Neighbours) => {
                if let Some(slot) = self.ids.get(r.id.0) {
                    self.prefetch_around(slot, Some(r.price.units()));
                }
            }
            _ => {}
        }
    }

    /// Loads the node of live order `id`.
    #[inline]
    fn prefetch_node(&self, id: u64) {
        if let Some(slot) = self.ids.get(id) {
            prefetch(self.arena.get(slot));
        }
    }

    /// Loads the tail node of the level at `price` on `side`, if the level has orders.
    #[inline]
    fn prefetch_tail(&self, side: Side, price: i64) {
        if self
            .spec
            .check_price(peregrine_types::Price::from_raw(price))
            .is_err()
        {
            return;
        }
        if let Some(h) = self.levels.find(side, price) {
            let tail = self.levels.level(h).tail;
            if tail != NIL {
                prefetch(self.arena.get(tail));
            }
        }
    }

    /// Loads what unlinking the order in `slot` touches (its neighbours and level)
    /// and, when it moves to `new_price`, the tail node it will link behind.
    #[inline]
    pub(super) fn prefetch_around(&self, slot: u32, new_price: Option<i64>) {
        let n = self.arena.get(slot);
        if n.prev != NIL {
            prefetch(self.arena.get(n.prev));
        }
        if n.next != NIL {
            prefetch(self.arena.get(n.next));
        }
        if n.level != NIL {
            prefetch(self.levels.level(n.level));
        }
        if let Some(p) = new_price {
            self.prefetch_tail(n.side, p);
        }
    }
}
