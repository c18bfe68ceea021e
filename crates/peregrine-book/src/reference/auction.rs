//! The reference book's uncross: a brute-force search over every price on the grid
//! inside the band, and the execution by pairing orders in priority order.

use peregrine_types::{Price, Qty, Side};

use super::ReferenceBook;
use crate::event::{self, Event, EventSink};

/// (price, volume, surplus, surplus side).
type Cross = (i64, i64, i64, Option<Side>);

impl ReferenceBook {
    /// The uncross at every grid price, the best one kept: most volume, then least
    /// surplus, then closest to the last price, then lowest.
    pub(super) fn brute_cross(&self) -> Cross {
        let tick = self.spec.tick_size;
        let low = self.spec.band_low().div_euclid(tick) * tick;
        let r = self.last_price;
        let mut best: Cross = (0, 0, 0, None);
        let mut p = low;
        while p <= self.spec.band_high() {
            if p > 0 {
                let buy: i64 = self
                    .entries
                    .iter()
                    .filter(|e| e.order.side == Side::Buy && e.order.price.units() >= p)
                    .map(|e| e.order.qty.lots())
                    .sum();
                let sell: i64 = self
                    .entries
                    .iter()
                    .filter(|e| e.order.side == Side::Sell && e.order.price.units() <= p)
                    .map(|e| e.order.qty.lots())
                    .sum();
                let v = buy.min(sell);
                let side = match buy.cmp(&sell) {
                    std::cmp::Ordering::Greater => Some(Side::Buy),
                    std::cmp::Ordering::Less => Some(Side::Sell),
                    std::cmp::Ordering::Equal => None,
                };
                let c = (p, v, (buy - sell).abs(), side);
                let key = |c: &Cross| (-c.1, c.2, (c.0 - r).unsigned_abs(), c.0);
                if v > 0 && (best.1 == 0 || key(&c) < key(&best)) {
                    best = c;
                }
            }
            p += tick;
        }
        best
    }

    /// Executes the uncross (see `book/uncross.rs` for the event order).
    pub(super) fn uncross(&mut self, sink: &mut impl EventSink) {
        let (p, volume, ..) = self.brute_cross();
        if volume == 0 {
            return;
        }
        let price = Price::from_raw(p);
        let mut left = volume;
        let (mut cur_buy, mut cur_sell): (Option<Price>, Option<Price>) = (None, None);
        while left > 0 {
            let Some(b) = self
                .in_priority(Side::Buy)
                .into_iter()
                .find(|&i| self.entries[i].order.price >= price)
            else {
                break;
            };
            let Some(s) = self
                .in_priority(Side::Sell)
                .into_iter()
                .find(|&i| self.entries[i].order.price <= price)
            else {
                break;
            };
            let (buy, sell) = (self.entries[b].order, self.entries[s].order);
            let q = buy.qty.lots().min(sell.qty.lots()).min(left);
            left -= q;
            self.trade_seq += 1;
            sink.push(Event::Fill(event::Fill {
                instrument: self.spec.id,
                trade_id: self.trade_seq,
                maker_id: sell.id,
                taker_id: buy.id,
                maker_client_id: sell.client_id,
                taker_client_id: buy.client_id,
                maker_account: sell.account,
                taker_account: buy.account,
                taker_side: Side::Buy,
                price,
                qty: Qty::from_raw(q),
                maker_leaves: Qty::from_raw(sell.qty.lots() - q),
                taker_leaves: Qty::from_raw(buy.qty.lots() - q),
                auction: true,
                maker_fee: 0,
                taker_fee: 0,
            }));
            self.printed(p);
            self.mmp_fill(sell.account, q);
            self.mmp_fill(buy.account, q);
            cur_buy = Some(buy.price);
            cur_sell = Some(sell.price);
            let b_left = self.reduce_whole(buy.id, q);
            let s_left = self.reduce_whole(sell.id, q);
            if sell.list.0 != 0 {
                self.list_fill(sell.list.0, sell.id.0, s_left, sink);
            }
            if buy.list.0 != 0 {
                self.list_fill(buy.list.0, buy.id.0, b_left, sink);
            }
            if !self.has_level(Side::Buy, buy.price) {
                sink.push(self.level_event(Side::Buy, buy.price));
                cur_buy = None;
            }
            if !self.has_level(Side::Sell, sell.price) {
                sink.push(self.level_event(Side::Sell, sell.price));
                cur_sell = None;
            }
        }
        if let Some(bp) = cur_buy {
            sink.push(self.level_event(Side::Buy, bp));
        }
        if let Some(sp) = cur_sell {
            sink.push(self.level_event(Side::Sell, sp));
        }
    }

    fn has_level(&self, side: Side, price: Price) -> bool {
        self.entries
            .iter()
            .any(|e| e.order.side == side && e.order.price == price)
    }

    /// Lowers an order's whole quantity by `q` (an iceberg keeps its place and shows
    /// at most its display size); returns what is left.
    fn reduce_whole(&mut self, id: peregrine_types::OrderId, q: i64) -> i64 {
        let i = self.pos(id).expect("a live order");
        let o = &mut self.entries[i].order;
        let left = o.qty.lots() - q;
        if left == 0 {
            self.entries.remove(i);
            return 0;
        }
        o.qty = Qty::from_raw(left);
        o.shown = if o.display.is_zero() {
            o.qty
        } else {
            Qty::from_raw(o.display.lots().min(left))
        };
        left
    }

    /// Publishes the indicative uncross when it changed.
    pub(super) fn publish_indicative(&mut self, sink: &mut impl EventSink) {
        let c = self.brute_cross();
        if c == self.indicative {
            return;
        }
        self.indicative = c;
        sink.push(Event::Indicative(event::Indicative {
            instrument: self.spec.id,
            price: Price::from_raw(c.0),
            volume: Qty::from_raw(c.1),
            surplus: Qty::from_raw(c.2),
            surplus_side: c.3,
        }));
    }
}
