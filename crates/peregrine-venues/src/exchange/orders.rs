//! The adapter's order table: engine order id ↔ client order id ↔ exchange order id.
//!
//! Three maps, each reserved up front for `capacity` open orders (FxHash; a map at or
//! below its reserved size never reallocates, and removals leave room that hashbrown
//! reuses by rehashing in place), so the per-order path allocates nothing after
//! start-up. The adapter refuses orders beyond `capacity` with `Busy`.

use peregrine_types::{InstrumentId, Price, Qty};
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
    /// The connection was lost while the order was open: its state at the exchange is
    /// unknown until the reconciliation after the next login.
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
    /// doubt until the reconciliation after the next login settles it.
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

    /// The connection is gone. Orders never acknowledged are forgotten and returned
    /// through `lost`; acknowledged ones become in doubt, and any replace on its way
    /// is reported through `replace_lost` (its outcome is unknown; the
    /// reconciliation cancels the order anyway). Every request id is forgotten.
    pub(super) fn on_disconnect(
        &mut self,
        lost: &mut dyn FnMut(u64),
        replace_lost: &mut dyn FnMut(u64),
    ) {
        self.by_cl.clear();
        self.by_engine.retain(|&engine_id, t| {
            if t.order_id == 0 {
                lost(engine_id);
                return false;
            }
            if t.replace_cl != 0 || t.want_replace.is_some() {
                replace_lost(engine_id);
            }
            t.in_doubt = true;
            t.cancel_cl = 0;
            t.replace_cl = 0;
            t.want_replace = None;
            true
        });
        let by_engine = &self.by_engine;
        self.by_order.retain(|_, e| by_engine.contains_key(e));
    }

    /// The reconciliation is over: every order still in doubt was not resting at the
    /// exchange any more. Forgets them, handing each (engine id, open quantity) to
    /// `gone`.
    pub(super) fn drop_in_doubt(&mut self, gone: &mut dyn FnMut(u64, i64)) {
        let by_order = &mut self.by_order;
        self.by_engine.retain(|&engine_id, t| {
            if t.in_doubt {
                by_order.remove(&t.order_id);
                gone(engine_id, t.leaves);
                false
            } else {
                true
            }
        });
    }
}
