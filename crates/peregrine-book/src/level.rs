//! A price level: an intrusive FIFO of arena nodes plus its aggregates.

use crate::arena::{Arena, NIL};

/// One price level on one side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Level {
    /// Price in units.
    pub price: i64,
    /// Oldest order (first to trade), or [`NIL`].
    pub head: u32,
    /// Newest order, or [`NIL`].
    pub tail: u32,
    /// Number of orders.
    pub count: u32,
    /// Sum of open quantity.
    pub total: i64,
}

impl Level {
    /// An empty level at `price`.
    pub const fn empty(price: i64) -> Level {
        Level {
            price,
            head: NIL,
            tail: NIL,
            count: 0,
            total: 0,
        }
    }

    /// True when no order rests here.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }

    /// Appends `slot` at the tail (lowest priority).
    #[inline]
    pub fn push_back(&mut self, arena: &mut Arena, slot: u32) {
        let qty = {
            let n = arena.get_mut(slot);
            n.prev = self.tail;
            n.next = NIL;
            n.qty.lots()
        };
        if self.tail == NIL {
            self.head = slot;
        } else {
            arena.get_mut(self.tail).next = slot;
        }
        self.tail = slot;
        self.count += 1;
        self.total += qty;
    }

    /// Unlinks `slot` (anywhere in the FIFO) in O(1). The node's quantity must be what
    /// was counted into `total`.
    #[inline]
    pub fn unlink(&mut self, arena: &mut Arena, slot: u32) {
        let (prev, next, qty) = {
            let n = arena.get(slot);
            (n.prev, n.next, n.qty.lots())
        };
        if prev == NIL {
            self.head = next;
        } else {
            arena.get_mut(prev).next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            arena.get_mut(next).prev = prev;
        }
        self.count -= 1;
        self.total -= qty;
    }
}
