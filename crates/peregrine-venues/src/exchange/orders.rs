//! The adapter's order table: engine order id ↔ client order id ↔ exchange order id.
//!
//! Three maps, each reserved up front for `capacity` open orders (FxHash; a map at or
//! below its reserved size never reallocates, and removals leave room that hashbrown
//! reuses by rehashing in place), so the per-order path allocates nothing after
//! start-up. The adapter refuses orders beyond `capacity` with `Busy`.

use peregrine_types::{InstrumentId, Price, Qty};

use crate::Report;
use rustc_hash::FxHashMap;

/// What a request client order id was used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ReqKind {
    /// A `NewOrder`: answered by `Accepted` or `Rejected`.
    New,
    /// A `Cancel`: answered by `Cancelled` or `CancelRejected`.
    Cancel,
    /// A `Replace`: answered by `Replaced` or `CancelRejected`.
    Replace,
}

/// One open order, as the adapter tracks it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Tracked {
    /// Exchange order id; 0 until `Accepted`.
    pub order_id: u64,
    /// Instrument.
    pub instrument: InstrumentId,
    /// Open quantity, lots.
    pub leaves: i64,
    /// Client order id of the cancel on its way (0: none).
    pub cancel_cl: u64,
    /// Client order id of the replace on its way (0: none).
    pub replace_cl: u64,
    /// A cancel asked before the order was acknowledged (sent on `Accepted`) or while
    /// the connection was down (the reconciliation after login cancels it).
    pub want_cancel: bool,
    /// A replace asked before the order was acknowledged (sent on `Accepted`).
    pub want_replace: Option<(Price, Qty)>,
    /// The connection was lost while the order was open or on its way (and any
    /// cancel or replace of it on its way): its state at the exchange is unknown until
    /// the replay after the next login (and the reconciliation after it) settles it.
    pub in_doubt: bool,
}

/// The table.
#[derive(Debug)]
pub(super) struct OrderTable {
    by_engine: FxHashMap<u64, Tracked>,
    by_order: FxHashMap<u64, u64>,
    by_cl: FxHashMap<u64, (u64, ReqKind)>,
    capacity: usize,
}

impl OrderTable {
    /// An empty table with room for `capacity` open orders.
    pub(super) fn new(capacity: usize) -> OrderTable {
        OrderTable {
            by_engine: FxHashMap::with_capacity_and_hasher(capacity, Default::default()),
            by_order: FxHashMap::with_capacity_and_hasher(capacity, Default::default()),
            // A new order and one cancel or replace each.
            by_cl: FxHashMap::with_capacity_and_hasher(capacity * 2, Default::default()),
            capacity,
        }
    }

    /// Open orders.
    pub(super) fn len(&self) -> usize {
        self.by_engine.len()
    }

    /// No room for another order.
    pub(super) fn is_full(&self) -> bool {
        self.by_engine.len() >= self.capacity
    }

    /// Room for `n` more orders.
    pub(super) fn has_room(&self, n: usize) -> bool {
        self.by_engine.len() + n <= self.capacity
    }

    /// Starts tracking a new order sent as client order id `cl`.
    pub(super) fn insert_new(
        &mut self,
        engine_id: u64,
        cl: u64,
        instrument: InstrumentId,
        qty: Qty,
    ) {
        self.by_engine.insert(
            engine_id,
            Tracked {
                order_id: 0,
                instrument,
                leaves: qty.lots(),
                cancel_cl: 0,
                replace_cl: 0,
                want_cancel: false,
                want_replace: None,
                in_doubt: false,
            },
        );
        self.by_cl.insert(cl, (engine_id, ReqKind::New));
    }

    /// Tracks an order a previous run of the engine left open (from its journal): in
    /// doubt until the replay after the next login settles it. One never acknowledged
    /// is known by its client order id, which is its engine id.
    pub(super) fn insert_restored(
        &mut self,
        engine_id: u64,
        order_id: u64,
        instrument: InstrumentId,
        leaves: Qty,
    ) {
        self.by_engine.insert(
            engine_id,
            Tracked {
                order_id,
                instrument,
                leaves: leaves.lots(),
                cancel_cl: 0,
                replace_cl: 0,
                want_cancel: false,
                want_replace: None,
                in_doubt: true,
            },
        );
        if order_id != 0 {
            self.by_order.insert(order_id, engine_id);
        } else {
            self.by_cl.insert(engine_id, (engine_id, ReqKind::New));
        }
    }

    /// Records a cancel or replace request `cl` about `engine_id`.
    pub(super) fn insert_request(&mut self, cl: u64, engine_id: u64, kind: ReqKind) {
        self.by_cl.insert(cl, (engine_id, kind));
    }

    /// The order, if open.
    pub(super) fn get_mut(&mut self, engine_id: u64) -> Option<&mut Tracked> {
        self.by_engine.get_mut(&engine_id)
    }

    /// The request `cl` was answered: what it was about, once.
    pub(super) fn take_request(&mut self, cl: u64) -> Option<(u64, ReqKind)> {
        self.by_cl.remove(&cl)
    }

    /// The engine id of exchange order `order_id`.
    pub(super) fn by_order(&self, order_id: u64) -> Option<u64> {
        self.by_order.get(&order_id).copied()
    }

    /// The exchange accepted `engine_id` as `order_id`.
    pub(super) fn acked(&mut self, engine_id: u64, order_id: u64) -> Option<Tracked> {
        let t = self.by_engine.get_mut(&engine_id)?;
        t.order_id = order_id;
        self.by_order.insert(order_id, engine_id);
        Some(*t)
    }

    /// The order is finished: forget it (requests still on their way stay until
    /// answered).
    pub(super) fn remove(&mut self, engine_id: u64) -> Option<Tracked> {
        let t = self.by_engine.remove(&engine_id)?;
        if t.order_id != 0 {
            self.by_order.remove(&t.order_id);
        }
        Some(t)
    }

    /// The connection is gone: every order, acknowledged or not, and every cancel or
    /// replace on its way, is in doubt; request ids are kept, so the replay's answers
    /// are recognised. Returns (orders never acknowledged, replaces on their way).
    pub(super) fn on_disconnect(&mut self) -> (usize, usize) {
        let (mut unacked, mut replaces) = (0, 0);
        for t in self.by_engine.values_mut() {
            t.in_doubt = true;
            unacked += usize::from(t.order_id == 0);
            replaces += usize::from(t.replace_cl != 0 || t.want_replace.is_some());
            t.want_replace = None; // a replace not sent yet is refused with the rest
        }
        (unacked, replaces)
    }

    /// The replay after a login is over: every report of a request the exchange
    /// received has arrived, so a request of an order in doubt still unanswered never
    /// reached it. Such a new order is reported `Rejected`, such a replace
    /// `ReplaceRejected` (both with `reason`), and such a cancel forgotten (the
    /// reconciliation's mass cancel follows). Returns how many new orders were
    /// rejected so (after an open-orders snapshot instead of a replay the exchange
    /// could have received and ended one without a report left: the caller warns).
    pub(super) fn settle_after_replay(
        &mut self,
        reason: u16,
        out: &mut dyn FnMut(Report),
    ) -> usize {
        let by_cl = &mut self.by_cl;
        let mut rejected = 0;
        self.by_engine.retain(|&engine_id, t| {
            if !t.in_doubt {
                return true;
            }
            if t.cancel_cl != 0 && by_cl.remove(&t.cancel_cl).is_some() {
                t.cancel_cl = 0;
                t.want_cancel = true;
            }
            if t.replace_cl != 0 && by_cl.remove(&t.replace_cl).is_some() {
                t.replace_cl = 0;
                out(Report::ReplaceRejected { engine_id, reason });
            }
            if t.order_id != 0 {
                return true;
            }
            by_cl.retain(|_, (e, _)| *e != engine_id);
            out(Report::Rejected { engine_id, reason });
            rejected += 1;
            false
        });
        rejected
    }

    /// Orders in doubt.
    pub(super) fn in_doubt(&self) -> usize {
        self.by_engine.values().filter(|t| t.in_doubt).count()
    }

    /// Test-only (the simulation's negative control): the old settlement at a drop,
    /// which guessed. Orders never acknowledged are forgotten and returned, as are
    /// the orders with a replace on its way; acknowledged orders become in doubt.
    #[cfg(feature = "test-sabotage")]
    pub(super) fn forget_unacknowledged(&mut self) -> (Vec<u64>, Vec<u64>) {
        let (mut lost, mut replaces) = (Vec::new(), Vec::new());
        self.by_cl.clear();
        self.by_engine.retain(|&engine_id, t| {
            if t.order_id == 0 {
                lost.push(engine_id);
                return false;
            }
            if t.replace_cl != 0 || t.want_replace.is_some() {
                replaces.push(engine_id);
            }
            t.in_doubt = true;
            t.cancel_cl = 0;
            t.replace_cl = 0;
            t.want_replace = None;
            true
        });
        let by_engine = &self.by_engine;
        self.by_order.retain(|_, e| by_engine.contains_key(e));
        (lost, replaces)
    }

    /// The reconciliation is over (its barrier came back): what the mass cancel
    /// removed has been reported, so an acknowledged order still in doubt is not
    /// resting at the exchange any more. After a replay that cannot happen; after an
    /// open-orders snapshot (the exchange no longer retains the reports) it is an order
    /// that ended while the reports were lost. Forgets them, handing each (engine id,
    /// open quantity) to `gone`.
    pub(super) fn drop_in_doubt(&mut self, gone: &mut dyn FnMut(u64, i64)) {
        let by_order = &mut self.by_order;
        self.by_engine.retain(|&engine_id, t| {
            if t.in_doubt && t.order_id != 0 {
                by_order.remove(&t.order_id);
                gone(engine_id, t.leaves);
                false
            } else {
                true
            }
        });
    }
}
