//! Extended orders: stops, stop-limits, take-profits, trailing stops and icebergs.
//! Their checks, and how they enter: a conditional order is parked until its
//! trigger; anything else runs at once like a new order.

use peregrine_types::{OrderType, TimeInForce, TradingPhase, TrailUnit, TriggerKind};

use super::new_order::{accepted, validate_new};
use super::OrderBook;
use crate::arena::NIL;
use crate::command::ExtOrder;
use crate::event::EventSink;
use crate::ids::OrderIds;
use crate::index::LevelIndex;
use crate::park::would_trigger;
use crate::reject::RejectReason;

/// Checks an extended order's trigger fields.
pub(super) fn check_trigger(
    e: &ExtOrder,
    spec: &peregrine_types::InstrumentSpec,
) -> Result<(), RejectReason> {
    let t = &e.trigger;
    if t.kind == TriggerKind::None {
        return if t.unit == TrailUnit::None && t.trail == 0 && t.price.units() == 0 {
            Ok(())
        } else {
            Err(RejectReason::InvalidTrigger)
        };
    }
    if e.order.order_type == OrderType::PostOnly {
        return Err(RejectReason::InvalidTrigger);
    }
    match t.unit {
        TrailUnit::None => {
            if t.trail != 0 || t.price.units() <= 0 {
                return Err(RejectReason::InvalidTrigger);
            }
            spec.check_price(t.price)?;
        }
        TrailUnit::Ticks | TrailUnit::Bps => {
            let bps_ok = t.unit != TrailUnit::Bps || t.trail <= 10_000;
            if t.kind != TriggerKind::StopLoss || t.trail <= 0 || t.price.units() != 0 || !bps_ok {
                return Err(RejectReason::InvalidTrigger);
            }
        }
    }
    Ok(())
}

/// Checks an iceberg's display quantity (0: not an iceberg).
pub(super) fn check_display(
    e: &ExtOrder,
    spec: &peregrine_types::InstrumentSpec,
) -> Result<(), RejectReason> {
    let d = e.display.lots();
    if d == 0 {
        return Ok(());
    }
    let o = &e.order;
    let rests = o.tif.can_rest() && o.order_type != OrderType::Market;
    if d < 0 || !rests || d % spec.lot_size != 0 || d < spec.min_qty || d >= o.qty.lots() {
        return Err(RejectReason::InvalidDisplayQty);
    }
    Ok(())
}

impl<L: LevelIndex, I: OrderIds> OrderBook<L, I> {
    /// Handles a new extended order.
    pub(crate) fn new_ext<S: EventSink>(&mut self, e: &ExtOrder, sink: &mut S) {
        self.quiet = false;
        if let Err(reason) = self.admit_ext(e) {
            sink.push(self.rejected_new(&e.order, reason));
            return;
        }
        sink.push(accepted(&e.order));
        self.enter_ext(e, NIL, sink);
    }

    /// Every rule that can refuse an extended order, in order: the plain order's
    /// field checks (a conditional order is not refused for its time in force in a
    /// call auction: it waits), the trigger, the display quantity, then admission
    /// (protection, duplicate id, room, post-only), then whether a stop would trigger
    /// at once.
    pub(super) fn admit_ext(&self, e: &ExtOrder) -> Result<(), RejectReason> {
        self.check_ext_fields(e, false)?;
        let parks = e.trigger.is_some();
        self.admit(&e.order, parks)?;
        self.check_would_trigger(e)
    }

    /// The field checks of an extended order (`pending`: an OTO leg checked for its
    /// fields only, whatever the phase).
    pub(super) fn check_ext_fields(&self, e: &ExtOrder, pending: bool) -> Result<(), RejectReason> {
        let phase = if (pending || e.trigger.is_some()) && self.phase.is_auction() {
            TradingPhase::Continuous
        } else {
            self.phase
        };
        validate_new(&self.spec, phase, self.now, &e.order)?;
        check_trigger(e, &self.spec)?;
        check_display(e, &self.spec)
    }

    /// `StopWouldTrigger` for a fixed trigger the last price already reached.
    pub(super) fn check_would_trigger(&self, e: &ExtOrder) -> Result<(), RejectReason> {
        let t = &e.trigger;
        if t.is_some()
            && t.unit == TrailUnit::None
            && would_trigger(t.kind, e.order.side, t.price.units(), self.last_price)
        {
            return Err(RejectReason::StopWouldTrigger);
        }
        Ok(())
    }

    /// Enters an admitted extended order: parks a conditional one (scheduling its
    /// expiry), runs anything else. `list`: its list slot.
    pub(super) fn enter_ext<S: EventSink>(&mut self, e: &ExtOrder, list: u32, sink: &mut S) {
        if e.trigger.is_some() {
            self.park_order(e, false, list);
        } else {
            self.incoming(&e.order, e.display.lots(), list, sink);
        }
    }

    /// Parks an admitted order (waiting for its trigger, or `pending` a release).
    pub(super) fn park_order(&mut self, e: &ExtOrder, pending: bool, list: u32) {
        let slot = self.park.insert(e, pending, list, self.last_price, None);
        debug_assert!(slot.is_some(), "no parking slot after admission");
        if slot.is_some() && e.order.tif == TimeInForce::Gtd {
            self.schedule_expiry(e.order.expire_at.0, e.order.id.0);
        }
    }
}
