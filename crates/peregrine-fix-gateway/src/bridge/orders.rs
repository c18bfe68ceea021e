//! The gateway's view of one session's orders: FIX ClOrdIDs ↔ native client order
//! ids, each order's FIX state, and the requests in flight. Every change is noted
//! (`dirty`) so the bridge can write it to the session's store (`persist`).

use peregrine_fix::app::{MassCancelScope, OrdType, OrderState, Side, TimeInForce};
use peregrine_types::ListKind;
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

/// Where an order list (E) stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListPhase {
    /// Sent, not answered yet.
    Sent = 0,
    /// Accepted: its legs are live.
    Executing = 1,
    /// No leg depends on another any more (its legs live on as plain orders).
    Done = 2,
    /// Refused as a whole: no leg was entered.
    Rejected = 3,
}

impl ListPhase {
    pub(crate) fn from_u8(b: u8) -> Option<Self> {
        Some(match b {
            0 => ListPhase::Sent,
            1 => ListPhase::Executing,
            2 => ListPhase::Done,
            3 => ListPhase::Rejected,
            _ => return None,
        })
    }
}

/// One order list (NewOrderList E): its legs are orders of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct List {
    /// ListID (66).
    pub list_id: Vec<u8>,
    /// The native client list id (every native ListStatus of the list carries it).
    pub native: u64,
    pub kind: ListKind,
    /// The legs' order indices, in the list's order (2, or 3 for an OTOCO).
    pub legs: Vec<usize>,
    /// The exchange's list id (its leg 0's order id; 0 until accepted).
    pub exchange_id: u64,
    pub phase: ListPhase,
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
    /// An OrderMassCancelRequest (its Cancelled reports carry this id; its
    /// MassCancelDone is answered with an OrderMassCancelReport).
    Mass {
        cl_ord_id: Vec<u8>,
        scope: MassCancelScope,
        symbol: Option<Vec<u8>>,
        side: Option<Side>,
    },
    /// A NewOrderList (answered by ListStatus accepted or rejected; its legs are
    /// `New` under their own native ids).
    List { list: usize },
    /// A ListCancelRequest (answered by the list's ListStatus done or a
    /// CancelRejected).
    CancelList { list: usize },
}

/// Orders and requests of one session.
#[derive(Debug)]
pub(crate) struct OrderTable {
    orders: Vec<Order>,
    /// Native client order id (the order's, and each of its replaces') → order.
    by_native: FxHashMap<u64, usize>,
    /// Current ClOrdID → order.
    by_cl: FxHashMap<Vec<u8>, usize>,
    pending: FxHashMap<u64, Pending>,
    lists: Vec<List>,
    /// ListID → list (the latest of that ListID).
    lists_by_id: FxHashMap<Vec<u8>, usize>,
    /// Native client list id → list.
    lists_by_native: FxHashMap<u64, usize>,
    /// Lists changed since the last [`OrderTable::clear_dirty`].
    dirty_lists: Vec<usize>,
    pub(super) next_native: u64,
    pub(super) next_exec: u64,
    /// Orders changed since the last [`OrderTable::clear_dirty`].
    dirty_orders: Vec<usize>,
    /// Native ids whose mapping or pending request changed since then.
    dirty_native: Vec<u64>,
    /// The counters moved since then.
    dirty_counters: bool,
}

impl OrderTable {
    /// Ids start from the wall clock (ns) so a restarted gateway does not reuse them.
    pub(super) fn new(start: u64) -> Self {
        OrderTable {
            orders: Vec::new(),
            by_native: FxHashMap::default(),
            by_cl: FxHashMap::default(),
            pending: FxHashMap::default(),
            lists: Vec::new(),
            lists_by_id: FxHashMap::default(),
            lists_by_native: FxHashMap::default(),
            dirty_lists: Vec::new(),
            next_native: start.max(1),
            next_exec: start.max(1),
            dirty_orders: Vec::new(),
            dirty_native: Vec::new(),
            dirty_counters: true,
        }
    }

    /// A fresh native client order id.
    pub(super) fn native_id(&mut self) -> u64 {
        self.next_native += 1;
        self.dirty_counters = true;
        self.next_native
    }

    /// A fresh number for a report the gateway makes itself (its ExecID,
    /// `bridge::exec_id`), or for the OrderID of a mass cancel report.
    pub(super) fn exec_id(&mut self) -> u64 {
        self.next_exec += 1;
        self.dirty_counters = true;
        self.next_exec
    }

    /// How many orders (done ones included).
    pub(super) fn len(&self) -> usize {
        self.orders.len()
    }

    /// Order `i`.
    pub(super) fn order(&self, i: usize) -> &Order {
        &self.orders[i]
    }

    /// Order `i`, to change (noted for the store).
    pub(super) fn order_mut(&mut self, i: usize) -> &mut Order {
        self.dirty_orders.push(i);
        &mut self.orders[i]
    }

    /// The request in flight under native id `native`.
    pub(super) fn pending(&self, native: u64) -> Option<&Pending> {
        self.pending.get(&native)
    }

    /// Records a request in flight.
    pub(super) fn set_pending(&mut self, native: u64, p: Pending) {
        self.dirty_native.push(native);
        self.pending.insert(native, p);
    }

    /// Removes (answers) a request in flight.
    pub(super) fn take_pending(&mut self, native: u64) -> Option<Pending> {
        let p = self.pending.remove(&native);
        if p.is_some() {
            self.dirty_native.push(native);
        }
        p
    }

    /// Every request in flight, removed, oldest native id first.
    pub(super) fn drain_pending(&mut self) -> Vec<(u64, Pending)> {
        let mut all: Vec<(u64, Pending)> = self.pending.drain().collect();
        all.sort_by_key(|&(n, _)| n);
        self.dirty_native.extend(all.iter().map(|&(n, _)| n));
        all
    }

    /// Whether anything changed since the last [`OrderTable::clear_dirty`].
    pub(super) fn is_dirty(&self) -> bool {
        self.dirty_counters
            || !self.dirty_orders.is_empty()
            || !self.dirty_native.is_empty()
            || !self.dirty_lists.is_empty()
    }

    /// Sorts the changed orders and native ids and drops repeats, in place: the
    /// lists keep their capacity, so a checkpoint allocates nothing once they have
    /// grown to a batch's size (they were taken and rebuilt on every checkpoint).
    pub(super) fn settle_dirty(&mut self) {
        self.dirty_orders.sort_unstable();
        self.dirty_orders.dedup();
        self.dirty_native.sort_unstable();
        self.dirty_native.dedup();
        self.dirty_lists.sort_unstable();
        self.dirty_lists.dedup();
    }

    /// The changed lists, as [`OrderTable::settle_dirty`] left them.
    pub(super) fn dirty_lists(&self) -> &[usize] {
        &self.dirty_lists
    }

    /// The changed orders, as [`OrderTable::settle_dirty`] left them.
    pub(super) fn dirty_orders(&self) -> &[usize] {
        &self.dirty_orders
    }

    /// The changed native ids, as [`OrderTable::settle_dirty`] left them.
    pub(super) fn dirty_natives(&self) -> &[u64] {
        &self.dirty_native
    }

    /// Forgets what changed (after it was stored).
    pub(super) fn clear_dirty(&mut self) {
        self.dirty_orders.clear();
        self.dirty_native.clear();
        self.dirty_lists.clear();
        self.dirty_counters = false;
    }

    /// The order native id `native` names, and its request in flight (for the store).
    pub(super) fn native_entry(&self, native: u64) -> (Option<usize>, Option<&Pending>) {
        (
            self.by_native.get(&native).copied(),
            self.pending.get(&native),
        )
    }

    /// Puts back order `i` as stored (restart).
    pub(super) fn restore_order(&mut self, i: usize, order: Order) {
        if i > self.orders.len() {
            return;
        }
        if i == self.orders.len() {
            self.orders.push(order);
        } else {
            let old = std::mem::replace(&mut self.orders[i], order);
            if self.by_cl.get(&old.cl_ord_id) == Some(&i) {
                self.by_cl.remove(&old.cl_ord_id);
            }
        }
        self.by_cl.insert(self.orders[i].cl_ord_id.clone(), i);
    }

    /// Puts back native id `native`'s mapping and request in flight as stored.
    pub(super) fn restore_native(&mut self, native: u64, order: Option<usize>, p: Option<Pending>) {
        match order.filter(|&i| i < self.orders.len()) {
            Some(i) => self.by_native.insert(native, i),
            None => self.by_native.remove(&native),
        };
        match p {
            Some(p) => self.pending.insert(native, p),
            None => self.pending.remove(&native),
        };
    }

    /// The latest order whose ClOrdID is (or was last) `cl`, done ones included
    /// (for status requests).
    pub(super) fn by_cl_ord_id(&self, cl: &[u8]) -> Option<usize> {
        self.by_cl.get(cl).copied()
    }

    /// The order a native client order id belongs to.
    pub(super) fn by_native(&self, native: u64) -> Option<usize> {
        self.by_native.get(&native).copied()
    }

    /// Adds an order sent with native id `native`.
    pub(super) fn insert(&mut self, order: Order, native: u64) -> usize {
        let i = self.orders.len();
        self.by_cl.insert(order.cl_ord_id.clone(), i);
        self.orders.push(order);
        self.by_native.insert(native, i);
        self.set_pending(native, Pending::New { order: i });
        self.dirty_orders.push(i);
        i
    }

    /// A replace took effect: the order's ClOrdID is now `cl`, and the replace's
    /// native id names it too.
    pub(super) fn renamed(&mut self, order: usize, cl: Vec<u8>, native: u64) {
        let old = std::mem::replace(&mut self.orders[order].cl_ord_id, cl.clone());
        if self.by_cl.get(&old) == Some(&order) {
            self.by_cl.remove(&old);
        }
        self.by_cl.insert(cl, order);
        self.by_native.insert(native, order);
        self.dirty_orders.push(order);
        self.dirty_native.push(native);
    }

    /// Maps a replace's native id to its order before the answer arrives (fills after
    /// a replace carry the replace's id).
    pub(super) fn alias(&mut self, native: u64, order: usize) {
        self.by_native.insert(native, order);
        self.dirty_native.push(native);
    }

    /// Whether order `i` can still trade or is still waiting for its answer.
    pub(super) fn live(&self, i: usize) -> bool {
        self.orders[i].state.is_none_or(|s| s.is_open())
    }

    /// How many lists (done ones included).
    pub(super) fn list_count(&self) -> usize {
        self.lists.len()
    }

    /// List `l`.
    pub(super) fn list(&self, l: usize) -> &List {
        &self.lists[l]
    }

    /// List `l`, to change (noted for the store).
    pub(super) fn list_mut(&mut self, l: usize) -> &mut List {
        self.dirty_lists.push(l);
        &mut self.lists[l]
    }

    /// The latest list of ListID `id`.
    pub(super) fn list_by_id(&self, id: &[u8]) -> Option<usize> {
        self.lists_by_id.get(id).copied()
    }

    /// The list of native client list id `native`.
    pub(super) fn list_by_native(&self, native: u64) -> Option<usize> {
        self.lists_by_native.get(&native).copied()
    }

    /// Adds a list sent with native client list id `list.native` (its legs already
    /// inserted).
    pub(super) fn insert_list(&mut self, list: List) -> usize {
        let l = self.lists.len();
        self.lists_by_id.insert(list.list_id.clone(), l);
        self.lists_by_native.insert(list.native, l);
        self.set_pending(list.native, Pending::List { list: l });
        self.lists.push(list);
        self.dirty_lists.push(l);
        l
    }

    /// Puts back list `l` as stored (restart).
    pub(super) fn restore_list(&mut self, l: usize, list: List) {
        if l > self.lists.len() {
            return;
        }
        if l == self.lists.len() {
            self.lists.push(list);
        } else {
            let old = std::mem::replace(&mut self.lists[l], list);
            if self.lists_by_id.get(&old.list_id) == Some(&l) {
                self.lists_by_id.remove(&old.list_id);
            }
            self.lists_by_native.remove(&old.native);
        }
        self.lists_by_id.insert(self.lists[l].list_id.clone(), l);
        self.lists_by_native.insert(self.lists[l].native, l);
    }

    /// The native id under which order `i`'s own request is still in flight.
    pub(super) fn native_of_new(&self, i: usize) -> Option<u64> {
        self.pending
            .iter()
            .find(|(_, p)| matches!(p, Pending::New { order } if *order == i))
            .map(|(&n, _)| n)
    }
}
