//! Parked orders: accepted orders that are not in the book. A stop (stop-loss,
//! take-profit, trailing stop) waits here for its trigger, an OTO's pending leg for
//! its working leg to fill.
//!
//! Storage mirrors the book's: an [`Arena`] of nodes (the slot allocator and the
//! FIFO links), a parallel table of [`ParkInfo`] with everything else, and an id
//! map, all sized once. Fixed triggers sit in a [`LevelIndex`] by trigger price, one
//! FIFO per price: falling triggers (trigger when the price falls to them) on its
//! bid side, so the highest comes first; rising ones on its ask side, lowest first.
//! Trailing stops, whose trigger moves with the market, sit in one list per
//! direction and are all re-evaluated at each print.

use hashbrown::HashMap;
use peregrine_types::{InstrumentSpec, Price, Qty, Side, TrailUnit, TriggerKind};
use rustc_hash::FxBuildHasher;

use crate::arena::{Arena, OrderNode, NIL};
use crate::command::ExtOrder;
use crate::index::LevelIndex;
use crate::level::Level;

/// What a parked order waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParkState {
    /// Its trigger price.
    Waiting,
    /// Its list's working leg to fill completely.
    Pending,
    /// Nothing: it is in the activation queue (triggered or released).
    Queued,
}

/// Everything about a parked order besides its links.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ParkInfo {
    pub(crate) order: ExtOrder,
    pub(crate) seq: u64,
    pub(crate) state: ParkState,
    /// List slot (see `crate::lists`), or [`NIL`].
    pub(crate) list: u32,
    /// Trailing stops: the best price since entry; 0 otherwise.
    pub(crate) watermark: i64,
    /// The trigger price in force.
    pub(crate) eff: i64,
    /// Triggers on a rising price (else falling).
    pub(crate) rises: bool,
    /// Whether the queued activation is a release (else a trigger).
    pub(crate) release: bool,
}

impl ParkInfo {
    const EMPTY: ParkInfo = ParkInfo {
        order: ExtOrder::plain(crate::command::NewOrder {
            instrument: peregrine_types::InstrumentId(0),
            id: peregrine_types::OrderId(0),
            client_id: peregrine_types::ClientOrderId(0),
            account: peregrine_types::AccountId(0),
            side: Side::Buy,
            order_type: peregrine_types::OrderType::Limit,
            tif: peregrine_types::TimeInForce::Gtc,
            stp: peregrine_types::StpMode::None,
            price: Price::from_raw(0),
            qty: Qty::ZERO,
            expire_at: peregrine_types::Timestamp(0),
        }),
        seq: 0,
        state: ParkState::Pending,
        list: NIL,
        watermark: 0,
        eff: 0,
        rises: false,
        release: false,
    };
}

/// A triggered order's sort key: direction, price in trigger order, then sequence.
pub(crate) type TriggerKey = (bool, i64, u64, u32);

/// The store (see the module documentation).
#[derive(Debug)]
pub(crate) struct Park<L: LevelIndex> {
    nodes: Arena,
    info: Vec<ParkInfo>,
    ids: HashMap<u64, u32, FxBuildHasher>,
    triggers: L,
    /// Trailing stops: `[falling, rising]`.
    trailing: [Level; 2],
    tick: i64,
    seq: u64,
    /// Orders waiting for a trigger (fixed and trailing).
    waiting: usize,
}

/// The trailing offset in price units at watermark `w`.
pub(crate) fn trail_offset(unit: TrailUnit, trail: i32, w: i64, tick: i64) -> i64 {
    match unit {
        TrailUnit::Ticks => i64::from(trail).saturating_mul(tick),
        TrailUnit::Bps => {
            let off = i128::from(w) * i128::from(trail) / 10_000;
            i64::try_from(off).unwrap_or(i64::MAX).max(1)
        }
        TrailUnit::None => 0,
    }
}

/// A trailing stop's trigger price at watermark `w`.
pub(crate) fn trailing_price(e: &ExtOrder, rises: bool, w: i64, tick: i64) -> i64 {
    let off = trail_offset(e.trigger.unit, e.trigger.trail, w, tick);
    if rises {
        w.saturating_add(off)
    } else {
        w.saturating_sub(off)
    }
}

/// Whether `e` triggers on a rising price.
pub(crate) fn rises(e: &ExtOrder) -> bool {
    e.trigger.kind.rises(e.order.side)
}

/// The ladder side holding triggers of a direction.
fn ladder_side(rises: bool) -> Side {
    if rises {
        Side::Sell
    } else {
        Side::Buy
    }
}

impl<L: LevelIndex> Park<L> {
    /// A store for `capacity` parked orders of `spec`'s instrument; all memory now.
    pub(crate) fn new(spec: &InstrumentSpec, capacity: usize) -> Self {
        let ids = HashMap::with_capacity_and_hasher(capacity.max(1), FxBuildHasher);
        Park {
            nodes: Arena::with_capacity(capacity),
            info: crate::memory::filled_vec(capacity, ParkInfo::EMPTY),
            ids,
            triggers: L::new(spec, capacity),
            trailing: [Level::empty(0), Level::empty(0)],
            tick: spec.tick_size,
            seq: 0,
            waiting: 0,
        }
    }

    /// Slots.
    pub(crate) fn capacity(&self) -> usize {
        self.nodes.capacity()
    }

    /// Parked orders.
    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True when no slot is free.
    pub(crate) fn is_full(&self) -> bool {
        self.nodes.is_full()
    }

    /// Orders waiting for a trigger.
    #[inline]
    pub(crate) fn waiting(&self) -> usize {
        self.waiting
    }

    /// The next parked-order sequence number.
    pub(crate) fn seq(&self) -> u64 {
        self.seq
    }

    /// Restores the sequence counter (snapshots).
    pub(crate) fn set_seq(&mut self, seq: u64) {
        self.seq = seq;
    }

    /// The slot of parked order `id`.
    #[inline]
    pub(crate) fn get(&self, id: u64) -> Option<u32> {
        if self.ids.is_empty() {
            return None;
        }
        self.ids.get(&id).copied()
    }

    /// The info in `slot`.
    pub(crate) fn info(&self, slot: u32) -> &ParkInfo {
        &self.info[slot as usize]
    }

    /// The info in `slot`, mutably.
    pub(crate) fn info_mut(&mut self, slot: u32) -> &mut ParkInfo {
        &mut self.info[slot as usize]
    }

    /// Whether `slot` holds live order `id`.
    pub(crate) fn holds(&self, slot: u32, id: u64) -> bool {
        let n = self.nodes.get(slot);
        n.live && n.id.0 == id
    }

    /// Parks `order` with sequence `seq` (or the next one), pending a release or
    /// waiting for its trigger (`last`: the last trade price, a trailing stop's
    /// first watermark). `None` when full.
    pub(crate) fn insert(
        &mut self,
        order: &ExtOrder,
        pending: bool,
        list: u32,
        last: i64,
        seq: Option<u64>,
    ) -> Option<u32> {
        let node = OrderNode {
            id: order.order.id,
            client_id: order.order.client_id,
            price: Price::from_raw(0),
            qty: order.order.qty,
            account: order.order.account,
            side: order.order.side,
            ..OrderNode::EMPTY
        };
        let slot = self.nodes.alloc(node)?;
        let seq = seq.unwrap_or_else(|| {
            self.seq += 1;
            self.seq
        });
        self.info[slot as usize] = ParkInfo {
            order: *order,
            seq,
            state: ParkState::Pending,
            list,
            watermark: 0,
            eff: 0,
            rises: rises(order),
            release: false,
        };
        self.ids.insert(order.order.id.0, slot);
        if !pending {
            self.wait(slot, last);
        }
        Some(slot)
    }

    /// Puts a pending (or restored) order in slot `slot` in the trigger index, its
    /// trailing watermark starting at `last` (unless `restore` keeps the given one).
    pub(crate) fn wait(&mut self, slot: u32, last: i64) {
        let tick = self.tick;
        let i = &mut self.info[slot as usize];
        i.state = ParkState::Waiting;
        if i.order.trigger.unit == TrailUnit::None {
            i.eff = i.order.trigger.price.units();
            i.watermark = 0;
        } else {
            i.watermark = last;
            i.eff = trailing_price(&i.order, i.rises, last, tick);
        }
        self.link(slot);
    }

    /// Restores a waiting order's trailing state exactly (snapshots).
    pub(crate) fn wait_restored(&mut self, slot: u32, watermark: i64, eff: i64) {
        let i = &mut self.info[slot as usize];
        i.state = ParkState::Waiting;
        i.watermark = watermark;
        i.eff = eff;
        self.link(slot);
    }

    fn link(&mut self, slot: u32) {
        let i = self.info[slot as usize];
        self.waiting += 1;
        let n = self.nodes.get_mut(slot);
        n.price = Price::from_raw(i.eff);
        if i.order.trigger.unit != TrailUnit::None {
            n.level = NIL;
            self.trailing[usize::from(i.rises)].push_back(&mut self.nodes, slot);
            return;
        }
        let side = ladder_side(i.rises);
        let h = self.triggers.get_or_insert(side, i.eff);
        self.nodes.get_mut(slot).level = h;
        self.triggers.level_mut(h).push_back(&mut self.nodes, slot);
        self.triggers.occupied(side, h);
    }

    /// Takes a waiting order out of the trigger index (it stays parked).
    fn unlink(&mut self, slot: u32) {
        let i = self.info[slot as usize];
        if i.state != ParkState::Waiting {
            return;
        }
        self.waiting -= 1;
        let h = self.nodes.get(slot).level;
        if h == NIL {
            self.trailing[usize::from(i.rises)].unlink(&mut self.nodes, slot);
            return;
        }
        let side = ladder_side(i.rises);
        self.triggers.level_mut(h).unlink(&mut self.nodes, slot);
        if self.triggers.level(h).is_empty() {
            self.triggers.remove(side, h);
        }
    }

    /// Marks `slot` as queued for activation (out of the trigger index).
    pub(crate) fn queue(&mut self, slot: u32, release: bool) {
        self.unlink(slot);
        let i = &mut self.info[slot as usize];
        i.state = ParkState::Queued;
        i.release = release;
    }

    /// Removes the order in `slot` and returns it.
    pub(crate) fn remove(&mut self, slot: u32) -> ParkInfo {
        self.unlink(slot);
        let i = self.info[slot as usize];
        self.ids.remove(&i.order.order.id.0);
        self.nodes.free(slot);
        i
    }

    /// Collects the orders a print at `p` triggers into `out` (and takes them out of
    /// the index, marked queued), then moves the trailing watermarks to `p`.
    pub(crate) fn triggered_at(&mut self, p: i64, out: &mut Vec<TriggerKey>) {
        if self.waiting == 0 {
            return;
        }
        for rises in [false, true] {
            let side = ladder_side(rises);
            while let Some(h) = self.triggers.best(side) {
                let price = self.triggers.level(h).price;
                if (rises && price > p) || (!rises && price < p) {
                    break;
                }
                let mut slot = self.triggers.level(h).head;
                while slot != NIL {
                    let next = self.nodes.get(slot).next;
                    out.push(key(&self.info[slot as usize], slot));
                    self.queue(slot, false);
                    slot = next;
                }
            }
            let mut slot = self.trailing[usize::from(rises)].head;
            while slot != NIL {
                let next = self.nodes.get(slot).next;
                let i = self.info[slot as usize];
                if (rises && p >= i.eff) || (!rises && p <= i.eff) {
                    out.push(key(&i, slot));
                    self.queue(slot, false);
                } else if (rises && p < i.watermark) || (!rises && p > i.watermark) {
                    let eff = trailing_price(&i.order, rises, p, self.tick);
                    let info = &mut self.info[slot as usize];
                    info.watermark = p;
                    info.eff = eff;
                    self.nodes.get_mut(slot).price = Price::from_raw(eff);
                }
                slot = next;
            }
        }
    }

    /// Calls `f` with each parked slot (unordered).
    pub(crate) fn for_each_slot(&self, f: &mut dyn FnMut(u32)) {
        for slot in self.ids.values() {
            f(*slot);
        }
    }
}

/// The sort key of a triggered order: falling triggers first (highest price first),
/// then rising ones (lowest first); equal prices by sequence.
fn key(i: &ParkInfo, slot: u32) -> TriggerKey {
    let price = if i.rises { i.eff } else { -i.eff };
    (i.rises, price, i.seq, slot)
}

/// Whether `kind` on `side` would trigger at once against last price `last`, for a
/// fixed trigger at `price`.
pub(crate) fn would_trigger(kind: TriggerKind, side: Side, price: i64, last: i64) -> bool {
    if kind.rises(side) {
        last >= price
    } else {
        last <= price
    }
}
