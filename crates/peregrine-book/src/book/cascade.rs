//! The cascade: what a command sets off after its own action, run to the end inside
//! the same command, in one documented order (`docs/orders.md`, "Triggers").
//!
//! An aggressor (an incoming order, a replace that trades, an activated order, an
//! uncross) prints trades between two prices: its first and its last (a sweep moves
//! one way, so every price between was passed). When it finishes:
//!
//! 1. market-maker protections it tripped fire (`Mmp` event, the account's quotes
//!    cancelled), in the order they tripped;
//! 2. its trades are evaluated as two prints, the first price then the last: each
//!    print triggers the stops it reaches (falling triggers highest first, rising
//!    ones lowest first, equal prices oldest first) and moves the trailing stops it
//!    passes; what it triggers joins the back of the activation queue (a working
//!    leg's complete fill already queued its list's pending legs, at the fill);
//! 3. the queue's next entry activates (`Triggered`, then its normal life: matching,
//!    resting or cancellation), and is itself an aggressor.
//!
//! The loop ends when the queue is empty. A stop can trigger only once, so the
//! cascade is finite (at most every parked order once).

use peregrine_types::{Price, Side};

use super::OrderBook;
use crate::arena::NIL;
use crate::event::{Event, EventSink, MmpStatus, MmpUpdate, TriggerCause, Triggered};
use crate::ids::OrderIds;
use crate::index::LevelIndex;
use crate::park::{would_trigger, ParkState};
use crate::reject::CancelReason;

impl<L: LevelIndex, I: OrderIds> OrderBook<L, I> {
    /// Runs the cascade a command set off, then publishes the indicative uncross in
    /// a call auction. A quiet book has nothing to run (its matching loop stopped
    /// where the book would cross, so the crossed-book check is left to checked
    /// builds, in `rest_new` and `replace`); a plain command in continuous trading
    /// takes the inline path: a few flag tests and the crossed-book check. Then
    /// whether the book is quiet is known again.
    #[inline(always)]
    pub(super) fn finish<S: EventSink>(&mut self, sink: &mut S) {
        if self.quiet {
            return;
        }
        if self.round_first != 0 && self.park.waiting() == 0 {
            // What the cascade's first evaluation would do: no stop can trigger.
            // (Protections fired before it can only cancel parked orders.)
            self.round_first = 0;
        }
        if self.round_first == 0
            && self.queue.is_empty()
            && self.mmp.tripped.is_empty()
            && self.phase.is_continuous()
        {
            self.assert_uncrossed();
        } else {
            self.finish_slow(sink);
        }
        self.quiet = self.quiet_now();
    }

    /// [`OrderBook::finish`] with a cascade to run or outside continuous trading.
    #[inline(never)]
    fn finish_slow<S: EventSink>(&mut self, sink: &mut S) {
        if self.round_first != 0 || !self.queue.is_empty() || !self.mmp.tripped.is_empty() {
            self.cascade(sink);
        }
        if self.phase.is_auction() {
            self.publish_indicative(sink);
        } else if self.phase.is_continuous() {
            self.assert_uncrossed();
        }
    }

    /// The post-condition of every command in continuous trading, on in release
    /// (two O(1) best-level reads): continuous matching never leaves the book
    /// crossed (a call auction may, and a halt during one keeps its book as it was).
    #[inline(always)]
    fn assert_uncrossed(&self) {
        if let (Some(b), Some(a)) = (self.levels.best(Side::Buy), self.levels.best(Side::Sell)) {
            if self.levels.level(b).price >= self.levels.level(a).price {
                crossed_panic(self.spec.id.0, self.phase);
            }
        }
    }

    /// See the module documentation.
    pub(super) fn cascade<S: EventSink>(&mut self, sink: &mut S) {
        loop {
            if !self.mmp.tripped.is_empty() {
                self.run_trips(sink);
            }
            if self.round_first != 0 {
                self.evaluate();
            }
            let Some((slot, id)) = self.queue.pop_front() else {
                break;
            };
            self.activate(slot, id, sink);
        }
    }

    /// Evaluates the prints since the last evaluation (see the module documentation).
    fn evaluate(&mut self) {
        let (first, last) = (self.round_first, self.last_price);
        self.round_first = 0;
        if self.park.waiting() == 0 {
            return;
        }
        self.trigger_at(first);
        if last != first {
            self.trigger_at(last);
        }
    }

    /// Queues the stops one print at `p` triggers, in trigger order.
    fn trigger_at(&mut self, p: i64) {
        self.triggered.clear();
        self.park.triggered_at(p, &mut self.triggered);
        self.triggered.sort_unstable();
        for i in 0..self.triggered.len() {
            let slot = self.triggered[i].3;
            let id = self.park.info(slot).order.order.id.0;
            self.queue.push_back((slot, id));
        }
    }

    /// Fires the protections tripped by the last aggressor.
    fn run_trips<S: EventSink>(&mut self, sink: &mut S) {
        for i in 0..self.mmp.tripped.len() {
            let account = self.mmp.tripped[i];
            let (params, (qty, fills)) = self.mmp.freeze(account, self.now);
            sink.push(Event::Mmp(MmpUpdate {
                instrument: self.spec.id,
                account,
                status: MmpStatus::Triggered,
                params,
                window_qty: qty,
                window_fills: fills,
            }));
            for side in [peregrine_types::Side::Buy, peregrine_types::Side::Sell] {
                self.cancel_resting_of(side, account, CancelReason::Mmp, sink);
            }
        }
        self.mmp.tripped.clear();
        self.refresh_timer();
    }

    /// Activates queued parked order `id` in `slot` (skipped if it was cancelled
    /// since it was queued).
    fn activate<S: EventSink>(&mut self, slot: u32, id: u64, sink: &mut S) {
        if !self.park.holds(slot, id) || self.park.info(slot).state != ParkState::Queued {
            return;
        }
        let info = self.park.remove(slot);
        let e = info.order;
        let o = e.order;
        let cause = if info.release {
            TriggerCause::Released
        } else {
            TriggerCause::Price
        };
        sink.push(Event::Triggered(Triggered {
            instrument: self.spec.id,
            id: o.id,
            client_id: o.client_id,
            account: o.account,
            side: o.side,
            trigger_price: Price::from_raw(if info.release { 0 } else { info.eff }),
            last_price: Price::from_raw(self.last_price),
            cause,
        }));
        if !info.release {
            if info.list != NIL {
                self.list_triggered(info.list, o.id.0, sink);
            }
            self.incoming(&o, e.display.lots(), NIL, sink);
            return;
        }
        let list = info.list;
        if sink.admit(&o, &self.spec).is_err() {
            self.gone_unplaced(&e, list, CancelReason::Refused, sink);
            return;
        }
        if e.trigger.is_some() {
            // Parked again, now waiting for its own trigger (with its entry
            // priority); one the market already reached triggers at once.
            let slot = self
                .park
                .insert(&e, false, list, self.last_price, Some(info.seq));
            let Some(slot) = slot else {
                debug_assert!(false, "a freed parking slot is gone");
                return;
            };
            let t = &e.trigger;
            let fixed = t.unit == peregrine_types::TrailUnit::None;
            if fixed && would_trigger(t.kind, o.side, t.price.units(), self.last_price) {
                self.park.queue(slot, false);
                self.queue.push_back((slot, o.id.0));
            }
            return;
        }
        if o.order_type == peregrine_types::OrderType::PostOnly
            && self.phase.is_continuous()
            && self.would_take(o.side, o.price.units())
        {
            self.gone_unplaced(&e, list, CancelReason::PostOnlyWouldTake, sink);
            return;
        }
        self.incoming(&o, e.display.lots(), list, sink);
    }

    /// An activated order that never reached the book: `Cancelled` for all of it,
    /// then its list's rules.
    fn gone_unplaced<S: EventSink>(
        &mut self,
        e: &crate::command::ExtOrder,
        list: u32,
        reason: CancelReason,
        sink: &mut S,
    ) {
        let o = e.order;
        sink.push(Event::Cancelled(crate::event::Cancelled {
            instrument: self.spec.id,
            id: o.id,
            client_id: o.client_id,
            account: o.account,
            side: o.side,
            price: o.price,
            qty: o.qty,
            leaves: peregrine_types::Qty::ZERO,
            reason,
        }));
        if list != NIL {
            self.list_gone(list, o.id.0, sink);
        }
    }
}

/// The crossed-book assertion's failure, out of line.
#[cold]
#[inline(never)]
fn crossed_panic(instrument: u32, phase: peregrine_types::TradingPhase) -> ! {
    panic!("the book of instrument {instrument} is crossed after a command in phase {phase:?}")
}
