//! The call auction's uncross: the price that maximises executed volume, its
//! execution, and the indicative uncross published during the call
//! (`docs/auctions.md`).
//!
//! At a price `p` the buy quantity is every bid at `p` or above, the sell quantity
//! every ask at `p` or below (icebergs with their hidden part); `min` of the two
//! trades. The uncross price maximises it, then minimises the surplus (the unmatched
//! difference), then is the closest to the reference price (the last trade price),
//! then the lowest. Both quantities change only at limit prices, so the search
//! walks the levels of the crossed range once (descending) and, between two
//! consecutive limit prices, takes the grid price closest to the reference: O(levels).
//! The reference book searches every grid price instead, and the differential tests
//! compare the two.

use peregrine_types::{Price, Qty, Side};

use super::OrderBook;
use crate::arena::{ICEBERG, NIL};
use crate::event::{Event, EventSink, Fill, Indicative};
use crate::ids::OrderIds;
use crate::index::LevelIndex;

/// An uncross: price, volume, surplus and the side holding it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Cross {
    pub(super) price: i64,
    pub(super) volume: i64,
    pub(super) surplus: i64,
    pub(super) side: Option<Side>,
}

impl Cross {
    const NONE: Cross = Cross {
        price: 0,
        volume: 0,
        surplus: 0,
        side: None,
    };

    fn at(price: i64, buy: i64, sell: i64) -> Cross {
        Cross {
            price,
            volume: buy.min(sell),
            surplus: (buy - sell).abs(),
            side: match buy.cmp(&sell) {
                core::cmp::Ordering::Greater => Some(Side::Buy),
                core::cmp::Ordering::Less => Some(Side::Sell),
                core::cmp::Ordering::Equal => None,
            },
        }
    }

    /// Whether `self` beats `other` with reference price `r`.
    fn beats(&self, other: &Cross, r: i64) -> bool {
        let key = |c: &Cross| (-c.volume, c.surplus, (c.price - r).unsigned_abs(), c.price);
        self.volume > 0 && (other.volume == 0 || key(self) < key(other))
    }
}

impl<L: LevelIndex, I: OrderIds> OrderBook<L, I> {
    /// The uncross the book would make now ([`Cross::NONE`] when it does not cross).
    pub(super) fn cross(&self) -> Cross {
        let (Some(bh), Some(ah)) = (self.levels.best(Side::Buy), self.levels.best(Side::Sell))
        else {
            return Cross::NONE;
        };
        let (max_bid, min_ask) = (self.levels.level(bh).price, self.levels.level(ah).price);
        if max_bid < min_ask {
            return Cross::NONE;
        }
        // Every ask at or below the highest bid, and the highest such level.
        let (mut asks, mut top, mut a) = (0i64, ah, Some(ah));
        while let Some(x) = a {
            if self.levels.level(x).price > max_bid {
                break;
            }
            asks += self.level_full(x);
            top = x;
            a = self.levels.next_worse(Side::Sell, x);
        }
        let r = self.last_price;
        let tick = self.spec.tick_size;
        let mut best = Cross::NONE;
        let (mut b, mut a) = (Some(bh), Some(top));
        let (mut buys, mut asks_above) = (0i64, 0i64);
        let mut prev: Option<i64> = None;
        loop {
            let bp = b
                .map(|x| self.levels.level(x).price)
                .filter(|&p| p >= min_ask);
            let ap = a.map(|x| self.levels.level(x).price);
            let x = match (bp, ap) {
                (None, None) => break,
                (Some(p), None) | (None, Some(p)) => p,
                (Some(p), Some(q)) => p.max(q),
            };
            if let Some(px) = prev {
                if px - x > tick {
                    let p = closest(r, x + tick, px - tick, tick);
                    let c = Cross::at(p, buys, asks - asks_above);
                    if c.beats(&best, r) {
                        best = c;
                    }
                }
            }
            if bp == Some(x) {
                if let Some(h) = b {
                    buys += self.level_full(h);
                    b = self.levels.next_worse(Side::Buy, h);
                }
            }
            let c = Cross::at(x, buys, asks - asks_above);
            if c.beats(&best, r) {
                best = c;
            }
            if ap == Some(x) {
                if let Some(h) = a {
                    asks_above += self.level_full(h);
                    a = self.levels.next_better(Side::Sell, h);
                }
            }
            prev = Some(x);
        }
        best
    }

    /// A level's quantity with its icebergs' hidden parts.
    fn level_full(&self, h: u32) -> i64 {
        let l = self.levels.level(h);
        let mut total = l.total;
        let mut slot = l.head;
        while slot != NIL {
            total += self.hidden(slot);
            slot = self.arena.get(slot).next;
        }
        total
    }

    /// Executes the uncross: bids best first and asks best first, FIFO within a
    /// level, paired at one price until the volume is done. Each pair is a `Fill`
    /// (the sell order as maker, `auction` set); an order takes part with its whole
    /// quantity (an iceberg's hidden part too, keeping its place and showing at most
    /// its display size of what is left). A level's `LevelChanged` follows the fill
    /// that emptied it (bid side first); at the end, the partly executed levels'
    /// (bid, then ask). No self-trade prevention applies.
    pub(super) fn uncross<S: EventSink>(&mut self, sink: &mut S) {
        let c = self.cross();
        if c.volume == 0 {
            return;
        }
        let (p, mut left) = (c.price, c.volume);
        let (Some(mut bh), Some(mut ah)) =
            (self.levels.best(Side::Buy), self.levels.best(Side::Sell))
        else {
            return;
        };
        let (mut bs, mut as_) = (self.levels.level(bh).head, self.levels.level(ah).head);
        let (mut b_touched, mut a_touched) = (false, false);
        while left > 0 && bs != NIL && as_ != NIL {
            let (buy, sell) = (*self.arena.get(bs), *self.arena.get(as_));
            let (bq, sq) = (
                buy.qty.lots() + self.hidden(bs),
                sell.qty.lots() + self.hidden(as_),
            );
            let q = bq.min(sq).min(left);
            left -= q;
            self.trade_seq += 1;
            sink.push(Event::Fill(Fill {
                instrument: self.spec.id,
                trade_id: self.trade_seq,
                maker_id: sell.id,
                taker_id: buy.id,
                maker_client_id: sell.client_id,
                taker_client_id: buy.client_id,
                maker_account: sell.account,
                taker_account: buy.account,
                taker_side: Side::Buy,
                price: Price::from_raw(p),
                qty: Qty::from_raw(q),
                maker_leaves: Qty::from_raw(sq - q),
                taker_leaves: Qty::from_raw(bq - q),
                auction: true,
                maker_fee: 0,
                taker_fee: 0,
            }));
            self.printed(p);
            if self.mmp.any() {
                self.mmp.on_fill(sell.account, q, self.now);
                self.mmp.on_fill(buy.account, q, self.now);
            }
            let (b_next, s_next) = (buy.next, sell.next);
            let (b_list, s_list) = (self.list_of(bs), self.list_of(as_));
            b_touched = true;
            a_touched = true;
            let b_done = self.reduce_full(bs, bh, bq - q);
            let s_done = self.reduce_full(as_, ah, sq - q);
            if s_list != NIL {
                let live = (!s_done).then_some(as_);
                self.list_fill(s_list, sell.id.0, sq - q, live, sink);
            }
            if b_list != NIL {
                let live = (!b_done).then_some(bs);
                self.list_fill(b_list, buy.id.0, bq - q, live, sink);
            }
            if b_done {
                bs = b_next;
                if bs == NIL {
                    let next = self.levels.next_worse(Side::Buy, bh);
                    self.level_changed(Side::Buy, bh, sink);
                    b_touched = false;
                    if let Some(h) = next.filter(|&h| self.levels.level(h).price >= p) {
                        bh = h;
                        bs = self.levels.level(h).head;
                    }
                }
            }
            if s_done {
                as_ = s_next;
                if as_ == NIL {
                    let next = self.levels.next_worse(Side::Sell, ah);
                    self.level_changed(Side::Sell, ah, sink);
                    a_touched = false;
                    if let Some(h) = next.filter(|&h| self.levels.level(h).price <= p) {
                        ah = h;
                        as_ = self.levels.level(h).head;
                    }
                }
            }
        }
        if b_touched {
            self.level_changed(Side::Buy, bh, sink);
        }
        if a_touched {
            self.level_changed(Side::Sell, ah, sink);
        }
    }

    /// Lowers an order's whole quantity to `left` (removing it at zero; an iceberg
    /// shows at most its display size of the rest and keeps its place). Returns
    /// whether it is gone.
    fn reduce_full(&mut self, slot: u32, h: u32, left: i64) -> bool {
        let n = *self.arena.get(slot);
        if left == 0 {
            self.levels.level_mut(h).unlink(&mut self.arena, slot);
            self.release(slot);
            return true;
        }
        let shown = if n.flags & ICEBERG != 0 {
            let ext = &mut self.ext[slot as usize];
            let shown = ext.display.min(left);
            ext.hidden = left - shown;
            shown
        } else {
            left
        };
        self.levels.level_mut(h).total += shown - n.qty.lots();
        self.arena.get_mut(slot).qty = Qty::from_raw(shown);
        false
    }

    /// Publishes the indicative uncross if it changed since the last one.
    pub(super) fn publish_indicative<S: EventSink>(&mut self, sink: &mut S) {
        let c = self.cross();
        let now = (c.price, c.volume, c.surplus, c.side);
        if now == self.indicative {
            return;
        }
        self.indicative = now;
        sink.push(Event::Indicative(Indicative {
            instrument: self.spec.id,
            price: Price::from_raw(c.price),
            volume: Qty::from_raw(c.volume),
            surplus: Qty::from_raw(c.surplus),
            surplus_side: c.side,
        }));
    }
}

/// The grid price in `[lo, hi]` (both on the grid) closest to `r`; the lower on a tie.
fn closest(r: i64, lo: i64, hi: i64, tick: i64) -> i64 {
    if r <= lo {
        return lo;
    }
    if r >= hi {
        return hi;
    }
    let floor = r - r.rem_euclid(tick);
    let ceil = if floor == r { r } else { floor + tick };
    if r - floor <= ceil - r {
        floor
    } else {
        ceil
    }
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn closest_grid_price() {
        assert_eq!(closest(103, 100, 110, 5), 105);
        assert_eq!(closest(102, 100, 110, 5), 100);
        assert_eq!(closest(107, 100, 110, 5), 105);
        assert_eq!(closest(103, 100, 110, 2), 102, "a tie goes to the lower");
        assert_eq!(closest(107, 110, 120, 5), 110);
        assert_eq!(closest(130, 110, 120, 5), 120);
        assert_eq!(closest(115, 110, 120, 5), 115);
    }
}
