//! Preallocated arena of 64-byte order nodes with a free list.
//!
//! Nodes are addressed by `u32` slot indices ([`NIL`] = none). Each node is one cache
//! line (`repr(C, align(64))`), so walking a level's FIFO touches one line per order.
//! The arena never grows: when it is full, [`Arena::alloc`] returns `None` and the book
//! rejects the order with `BookFull`.

use peregrine_types::{AccountId, ClientOrderId, OrderId, Price, Qty, Side, StpMode, Timestamp};

/// "No node".
pub const NIL: u32 = u32::MAX;

/// [`OrderNode::flags`]: the order is post-only (matters for replaces).
pub const POST_ONLY: u8 = 1;
/// [`OrderNode::flags`]: an iceberg; its display size and hidden quantity are in the
/// book's per-slot extension table.
pub const ICEBERG: u8 = 2;
/// [`OrderNode::flags`]: a leg of a live order list (the list is in the extension
/// table).
pub const IN_LIST: u8 = 4;

/// One resting order, exactly one cache line.
#[repr(C, align(64))]
#[derive(Debug, Clone, Copy)]
pub struct OrderNode {
    /// Exchange id.
    pub id: OrderId,
    /// Client id.
    pub client_id: ClientOrderId,
    /// Limit price.
    pub price: Price,
    /// Open quantity.
    pub qty: Qty,
    /// GTD expiry, 0 for none.
    pub expire_at: Timestamp,
    /// Owner.
    pub account: AccountId,
    /// Previous node in the level FIFO (towards the head), or [`NIL`].
    pub prev: u32,
    /// Next node in the level FIFO (towards the tail), or the next free slot.
    pub next: u32,
    /// Handle of the level the node rests in (index-specific).
    pub level: u32,
    /// Side.
    pub side: Side,
    /// Self-trade prevention mode.
    pub stp: StpMode,
    /// [`POST_ONLY`], [`ICEBERG`], [`IN_LIST`]: one byte tested on the paths that
    /// must treat those orders differently, so plain orders pay one branch.
    pub flags: u8,
    /// Whether the slot holds a live order.
    pub live: bool,
}

const _: () = assert!(core::mem::size_of::<OrderNode>() == 64);
const _: () = assert!(core::mem::align_of::<OrderNode>() == 64);

impl OrderNode {
    /// Whether the order is post-only.
    #[inline]
    pub fn post_only(&self) -> bool {
        self.flags & POST_ONLY != 0
    }

    pub(crate) const EMPTY: OrderNode = OrderNode {
        id: OrderId(0),
        client_id: ClientOrderId(0),
        price: Price::from_raw(0),
        qty: Qty::ZERO,
        expire_at: Timestamp(0),
        account: AccountId(0),
        prev: NIL,
        next: NIL,
        level: NIL,
        side: Side::Buy,
        stp: StpMode::None,
        flags: 0,
        live: false,
    };
}

/// Fixed-capacity node storage.
#[derive(Debug)]
pub struct Arena {
    nodes: Vec<OrderNode>,
    free_head: u32,
    live: u32,
}

impl Arena {
    /// Allocates all `capacity` nodes up front (64 bytes each).
    ///
    /// # Panics
    /// If `capacity` does not fit in a `u32` slot index (a configuration error at
    /// start-up, never on the order path).
    pub fn with_capacity(capacity: usize) -> Arena {
        assert!(
            capacity < NIL as usize,
            "arena capacity must be below u32::MAX"
        );
        let mut nodes = crate::memory::filled_vec(capacity, OrderNode::EMPTY);
        for (i, node) in nodes.iter_mut().enumerate() {
            node.next = if i + 1 < capacity {
                (i + 1) as u32
            } else {
                NIL
            };
        }
        let free_head = if capacity == 0 { NIL } else { 0 };
        Arena {
            nodes,
            free_head,
            live: 0,
        }
    }

    /// Total slots.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.nodes.len()
    }

    /// Live nodes.
    #[inline]
    pub fn len(&self) -> usize {
        self.live as usize
    }

    /// True when no node is live.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// True when no slot is free.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.free_head == NIL
    }

    /// Takes a free slot and writes `node` into it.
    #[inline]
    pub fn alloc(&mut self, node: OrderNode) -> Option<u32> {
        let slot = self.free_head;
        if slot == NIL {
            return None;
        }
        let n = &mut self.nodes[slot as usize];
        self.free_head = n.next;
        *n = OrderNode { live: true, ..node };
        self.live += 1;
        Some(slot)
    }

    /// Returns a slot to the free list.
    #[inline]
    pub fn free(&mut self, slot: u32) {
        let n = &mut self.nodes[slot as usize];
        debug_assert!(n.live, "double free of slot {slot}");
        n.live = false;
        n.next = self.free_head;
        n.prev = NIL;
        self.free_head = slot;
        self.live -= 1;
    }

    /// The node in `slot`.
    #[inline]
    pub fn get(&self, slot: u32) -> &OrderNode {
        &self.nodes[slot as usize]
    }

    /// The node in `slot`, mutably.
    #[inline]
    pub fn get_mut(&mut self, slot: u32) -> &mut OrderNode {
        &mut self.nodes[slot as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_until_full_then_reuse() {
        let mut a = Arena::with_capacity(3);
        let s: Vec<u32> = (0..3).map(|_| a.alloc(OrderNode::EMPTY).unwrap()).collect();
        assert!(a.is_full());
        assert_eq!(a.alloc(OrderNode::EMPTY), None);
        a.free(s[1]);
        assert_eq!(a.len(), 2);
        assert_eq!(a.alloc(OrderNode::EMPTY), Some(s[1]));
        assert!(a.get(s[1]).live);
    }

    #[test]
    fn zero_capacity_is_always_full() {
        let mut a = Arena::with_capacity(0);
        assert!(a.is_full());
        assert_eq!(a.alloc(OrderNode::EMPTY), None);
    }
}
