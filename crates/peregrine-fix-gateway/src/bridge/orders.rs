//! The gateway's view of one session's orders: FIX ClOrdIDs ↔ native client order
//! ids, each order's FIX state, and the requests in flight.

use peregrine_fix::app::{OrdType, OrderState, Side, TimeInForce};
use rustc_hash::FxHashMap;

/// One order.
#[derive(Debug, Clone)]
pub(crate) struct Order {
    /// The order's current ClOrdID (a replace's becomes the order's).
    pub cl_ord_id: Vec<u8>,
    /// Index into the instrument table.
    pub instrument: usize,
    pub side: Side,
    pub ord_type: OrdType,
    pub tif: TimeInForce,
    /// The exchange's order id (0 until accepted).
    pub order_id: u64,
    /// Quantity and price as sent (units), until accepted.
    pub qty: i64,
    pub price: i64,
    /// The FIX state (from the exchange's reports).
    pub state: Option<OrderState>,
}

/// A request the exchange has not answered yet, by its native client order id.
#[derive(Debug, Clone)]
pub(crate) enum Pending {
    /// The order itself (answered by Accepted or Rejected).
    New { order: usize },
    /// An OrderCancelRequest.
    Cancel {
        order: usize,
        cl_ord_id: Vec<u8>,
        orig: Vec<u8>,
    },
    /// An OrderCancelReplaceRequest.
    Replace {
        order: usize,
        cl_ord_id: Vec<u8>,
        orig: Vec<u8>,
    },
    /// An OrderMassCancelRequest (its Cancelled reports carry this id).
    Mass,
}

/// Orders and requests of one session.
#[derive(Debug)]
pub(crate) struct OrderTable {
    pub orders: Vec<Order>,
    /// Native client order id (the order's, and each of its replaces') → order.
    by_native: FxHashMap<u64, usize>,
    /// Current ClOrdID → order.
    by_cl: FxHashMap<Vec<u8>, usize>,
    pub pending: FxHashMap<u64, Pending>,
    next_native: u64,
    next_exec: u64,
}

impl OrderTable {
    /// Ids start from the wall clock (ns) so a restarted gateway does not reuse them.
    pub fn new(start: u64) -> Self {
        OrderTable {
            orders: Vec::new(),
            by_native: FxHashMap::default(),
            by_cl: FxHashMap::default(),
            pending: FxHashMap::default(),
            next_native: start.max(1),
            next_exec: start.max(1),
        }
    }

    /// A fresh native client order id.
    pub fn native_id(&mut self) -> u64 {
        self.next_native += 1;
        self.next_native
    }

    /// A fresh ExecID.
    pub fn exec_id(&mut self) -> u64 {
        self.next_exec += 1;
        self.next_exec
    }

    /// The latest order whose ClOrdID is (or was last) `cl`, done ones included
    /// (for status requests).
    pub fn by_cl_ord_id(&self, cl: &[u8]) -> Option<usize> {
        self.by_cl.get(cl).copied()
    }

    /// The order a native client order id belongs to.
    pub fn by_native(&self, native: u64) -> Option<usize> {
        self.by_native.get(&native).copied()
    }

    /// Adds an order sent with native id `native`.
    pub fn insert(&mut self, order: Order, native: u64) -> usize {
        let i = self.orders.len();
        self.by_cl.insert(order.cl_ord_id.clone(), i);
        self.orders.push(order);
        self.by_native.insert(native, i);
        self.pending.insert(native, Pending::New { order: i });
        i
    }

    /// A replace took effect: the order's ClOrdID is now `cl`, and the replace's
    /// native id names it too.
    pub fn renamed(&mut self, order: usize, cl: Vec<u8>, native: u64) {
        let old = std::mem::replace(&mut self.orders[order].cl_ord_id, cl.clone());
        if self.by_cl.get(&old) == Some(&order) {
            self.by_cl.remove(&old);
        }
        self.by_cl.insert(cl, order);
        self.by_native.insert(native, order);
    }

    /// Maps a replace's native id to its order before the answer arrives (fills after
    /// a replace carry the replace's id).
    pub fn alias(&mut self, native: u64, order: usize) {
        self.by_native.insert(native, order);
    }

    /// Whether order `i` can still trade or is still waiting for its answer.
    pub fn live(&self, i: usize) -> bool {
        self.orders[i].state.is_none_or(|s| s.is_open())
    }

    /// Open orders (accepted, not done) in the scope, for a mass cancel's count.
    pub fn open_in(&self, instrument: Option<usize>, side: Option<Side>) -> u64 {
        self.orders
            .iter()
            .filter(|o| o.state.is_some_and(|s| s.is_open()))
            .filter(|o| instrument.is_none_or(|i| o.instrument == i))
            .filter(|o| side.is_none_or(|s| o.side == s))
            .count() as u64
    }
}
