//! Cancel/replace. The new terms of an open order are checked like a new order's
//! (quantity, notional, collar, position counting open orders, rate limit; the kill
//! switch blocks replaces too), and the open-order count does not change.
//!
//! A replace sets the order's *open* quantity at the venue, whatever the order filled
//! meanwhile: if the order fills while the replace is on its way, the replace then
//! puts the new quantity back in the book. So while it is in flight the worst case is
//! the order's current open quantity filling *and* the new quantity after it: the
//! check counts both, and the replace reserves its whole new quantity on top of the
//! order's at once, so orders checked meanwhile see that worst case too. The venue's
//! answer settles it: [`RiskEngine::on_replaced`] (the open quantity becomes the
//! venue's new open quantity, the reservation only that) or
//! [`RiskEngine::on_replace_failed`] (the reservation is released). (Found by the
//! orchestrator's simulation: counting the order's own quantity once, as a growth,
//! let a fill racing a replace push a position past its limit.)

use peregrine_types::{Price, Qty};

use super::{OrderRequest, RiskEngine, RiskReject, StrategyId, MAX_SANE};

impl RiskEngine {
    /// Checks a replace of `s`'s open order `client_id` to `price` and open quantity
    /// `qty`; on success reserves any growth of the order. An order the engine does
    /// not track is refused as [`RiskReject::InvalidOrder`].
    pub fn check_replace(
        &mut self,
        s: StrategyId,
        client_id: u64,
        price: Price,
        qty: Qty,
        now_ns: u64,
    ) -> Result<(), RiskReject> {
        match self.evaluate_replace(s, client_id, price, qty, now_ns) {
            Ok(extra) => {
                if let Some(mut open) = self.open.get(&(s, client_id)).copied() {
                    let add = extra - open.extra;
                    open.extra = extra;
                    self.release(s, open, -add, false);
                    self.open.insert((s, client_id), open);
                }
                Ok(())
            }
            Err(e) => {
                self.rejects[e.index()] += 1;
                Err(e)
            }
        }
    }

    /// The rules; on success the open quantity to reserve on top of the order's.
    fn evaluate_replace(
        &mut self,
        s: StrategyId,
        client_id: u64,
        price: Price,
        qty: Qty,
        now_ns: u64,
    ) -> Result<i64, RiskReject> {
        let scope = self.scope(s)?;
        if self.global.killed || scope.killed {
            return Err(RiskReject::KillSwitch);
        }
        let (q, p) = (qty.lots(), price.units());
        if q <= 0 || p <= 0 || q > MAX_SANE || p > MAX_SANE {
            return Err(RiskReject::InvalidOrder);
        }
        let open = self
            .open
            .get(&(s, client_id))
            .copied()
            .ok_or(RiskReject::InvalidOrder)?;
        let o = OrderRequest {
            venue: open.venue,
            instrument: open.instrument,
            client_id,
            side: open.side,
            price,
            qty,
        };
        // The order's own open quantity counts too (see the module docs): `Some(0)`
        // only marks a replace (the open-order count is not checked).
        let own = Some(0);
        let reference = self.reference(o.venue, o.instrument);
        let position = self.positions.get(s, o.instrument).net;
        scope.check(&o, position, reference, own)?;
        let total = self.positions.net_total(o.instrument);
        self.global.check(&o, total, reference, own)?;
        let sc = self.scope(s)?;
        if !sc.bucket.peek(&sc.limits, now_ns)
            || !self.global.bucket.peek(&self.global.limits, now_ns)
        {
            return Err(RiskReject::RateLimited);
        }
        let sc = self.scope_mut(s)?;
        let limits = sc.limits;
        sc.bucket.try_take(&limits, now_ns);
        let limits = self.global.limits;
        self.global.bucket.try_take(&limits, now_ns);
        // One replace per order is in flight (the orchestrator's rule); should another
        // come, the reservation covers the larger of the two.
        Ok(qty.lots().max(open.extra))
    }

    /// The venue applied a replace: the order's open quantity is now `qty`.
    pub fn on_replaced(&mut self, s: StrategyId, client_id: u64, qty: Qty) {
        if let Some(mut open) = self.open.get(&(s, client_id)).copied() {
            let delta = qty.lots() - open.leaves - open.extra;
            self.release(s, open, -delta, false);
            open.leaves = qty.lots();
            open.extra = 0;
            self.open.insert((s, client_id), open);
        }
    }

    /// The replace failed (venue refused it, or it never left the engine): the
    /// growth it reserved is released; the order is unchanged.
    pub fn on_replace_failed(&mut self, s: StrategyId, client_id: u64) {
        if let Some(mut open) = self.open.get(&(s, client_id)).copied() {
            let extra = std::mem::take(&mut open.extra);
            self.release(s, open, extra, false);
            self.open.insert((s, client_id), open);
        }
    }
}

#[cfg(test)]
mod tests {
    use peregrine_types::{InstrumentId, Price, Qty, Side};

    use crate::{Fill, Limits, OrderRequest, RiskEngine, RiskReject, StrategyId};

    const S: StrategyId = StrategyId(0);
    const I: InstrumentId = InstrumentId(1);

    fn engine(limits: Limits) -> RiskEngine {
        let mut e = RiskEngine::new(Limits::default());
        e.register(S, limits, 0);
        e
    }

    fn new(e: &mut RiskEngine, id: u64, side: Side, price: i64, qty: i64) {
        let o = OrderRequest {
            venue: 0,
            instrument: I,
            client_id: id,
            side,
            price: Price::from_raw(price),
            qty: Qty::from_raw(qty),
        };
        e.check_new(S, &o, 0).unwrap();
    }

    fn replace(e: &mut RiskEngine, id: u64, price: i64, qty: i64) -> Result<(), RiskReject> {
        e.check_replace(S, id, Price::from_raw(price), Qty::from_raw(qty), 0)
    }

    /// Open buy quantity, seen through the position rule: the largest new buy that
    /// still passes `max_position = cap`.
    fn open_buy(e: &RiskEngine) -> i64 {
        e.strategies[0].as_ref().unwrap().open_side(I, Side::Buy)
    }

    #[test]
    fn new_terms_are_checked_like_a_new_order() {
        let mut e = engine(Limits {
            max_order_qty: Some(10),
            max_order_notional: Some(1_000),
            price_collar: Some(5),
            ..Limits::default()
        });
        new(&mut e, 1, Side::Buy, 50, 5);
        assert_eq!(replace(&mut e, 1, 50, 11), Err(RiskReject::MaxOrderQty));
        assert_eq!(
            replace(&mut e, 1, 101, 10),
            Err(RiskReject::MaxOrderNotional)
        );
        assert_eq!(replace(&mut e, 1, 50, 0), Err(RiskReject::InvalidOrder));
        assert_eq!(replace(&mut e, 9, 50, 1), Err(RiskReject::InvalidOrder));
        e.set_reference(0, I, 50);
        assert_eq!(replace(&mut e, 1, 56, 1), Err(RiskReject::PriceCollar));
        assert_eq!(replace(&mut e, 1, 55, 1), Ok(()));
        assert_eq!(e.reject_count(RiskReject::MaxOrderQty), 1);
        assert_eq!(e.reject_count(RiskReject::InvalidOrder), 2);
    }

    #[test]
    fn open_order_count_does_not_change_and_a_replace_in_flight_counts_on_top() {
        let mut e = engine(Limits {
            max_open_orders: Some(1),
            max_position: Some(20),
            ..Limits::default()
        });
        new(&mut e, 1, Side::Buy, 100, 8);
        // At the open-order limit, a replace is still allowed. While it is in flight
        // the order may fill its 8 and then rest 10 more: 18 count.
        assert_eq!(replace(&mut e, 1, 100, 10), Ok(()));
        assert_eq!(e.open_orders(Some(S)), 1);
        assert_eq!(
            open_buy(&e),
            18,
            "the new quantity is reserved on top at once"
        );
        e.on_replace_failed(S, 1);
        assert_eq!(open_buy(&e), 8, "a refused replace releases it");
        assert_eq!(replace(&mut e, 1, 100, 13), Err(RiskReject::MaxPosition));
        assert_eq!(replace(&mut e, 1, 100, 12), Ok(()));
    }

    /// The race the simulation found: the order fills while its replace is on its
    /// way, then the replace restores the open quantity; the position stays within
    /// the limit because the check counted both.
    #[test]
    fn a_fill_racing_a_replace_stays_within_the_position_limit() {
        let mut e = engine(Limits {
            max_position: Some(6),
            ..Limits::default()
        });
        new(&mut e, 1, Side::Sell, 100, 3);
        assert_eq!(replace(&mut e, 1, 99, 4), Err(RiskReject::MaxPosition));
        replace(&mut e, 1, 99, 3).unwrap();
        let fill = |q| Fill {
            venue: 0,
            instrument: I,
            side: Side::Sell,
            price: Price::from_raw(100),
            qty: Qty::from_raw(q),
        };
        e.on_fill(S, 1, fill(2));
        e.on_replaced(S, 1, Qty::from_raw(3));
        e.on_fill(S, 1, fill(3));
        let p = e.positions().get(S, I).net;
        assert_eq!(p, -5);
        assert!(p.abs() <= 6);
    }

    #[test]
    fn position_counts_fills_and_other_open_orders() {
        let mut e = engine(Limits {
            max_position: Some(10),
            ..Limits::default()
        });
        new(&mut e, 1, Side::Buy, 100, 4);
        new(&mut e, 2, Side::Buy, 100, 3);
        e.on_fill(
            S,
            2,
            Fill {
                venue: 0,
                instrument: I,
                side: Side::Buy,
                price: Price::from_raw(100),
                qty: Qty::from_raw(3),
            },
        );
        // Position 3 + order 1's 4 + its new 4 = 11 > 10; 3 fits.
        assert_eq!(replace(&mut e, 1, 100, 4), Err(RiskReject::MaxPosition));
        assert_eq!(replace(&mut e, 1, 100, 3), Ok(()));
    }

    #[test]
    fn venue_answer_settles_the_open_quantity() {
        let mut e = engine(Limits::default());
        new(&mut e, 1, Side::Buy, 100, 5);
        replace(&mut e, 1, 101, 9).unwrap();
        assert_eq!(open_buy(&e), 14, "5 may fill, then 9 rest");
        e.on_replaced(S, 1, Qty::from_raw(9));
        assert_eq!(open_buy(&e), 9);
        // Shrinking reserves its quantity on top too while in flight, and releases on
        // the answer.
        replace(&mut e, 1, 101, 2).unwrap();
        assert_eq!(open_buy(&e), 11);
        e.on_replaced(S, 1, Qty::from_raw(2));
        assert_eq!(open_buy(&e), 2);
        // A partial fill while a replace is in flight, then the replace lands: the
        // venue's new open quantity is what is open.
        replace(&mut e, 1, 101, 6).unwrap();
        let fill = Fill {
            venue: 0,
            instrument: I,
            side: Side::Buy,
            price: Price::from_raw(101),
            qty: Qty::from_raw(1),
        };
        e.on_fill(S, 1, fill);
        assert_eq!(open_buy(&e), 7);
        e.on_replaced(S, 1, Qty::from_raw(6));
        assert_eq!(open_buy(&e), 6);
        e.on_done(S, 1);
        assert_eq!((open_buy(&e), e.open_orders(Some(S))), (0, 0));
        assert_eq!(e.open_orders(None), 0);
    }

    #[test]
    fn filled_out_during_a_growing_replace_releases_everything() {
        let mut e = engine(Limits::default());
        new(&mut e, 1, Side::Buy, 100, 2);
        replace(&mut e, 1, 100, 5).unwrap();
        let fill = Fill {
            venue: 0,
            instrument: I,
            side: Side::Buy,
            price: Price::from_raw(100),
            qty: Qty::from_raw(2),
        };
        e.on_fill(S, 1, fill);
        assert_eq!((open_buy(&e), e.open_orders(Some(S))), (0, 0));
        e.on_replace_failed(S, 1); // the venue's answer to a done order: no effect
        assert_eq!(open_buy(&e), 0);
    }

    #[test]
    fn kill_switch_blocks_replaces() {
        let mut e = engine(Limits::default());
        new(&mut e, 1, Side::Sell, 100, 1);
        e.kill(Some(S));
        assert_eq!(replace(&mut e, 1, 100, 1), Err(RiskReject::KillSwitch));
    }
}
