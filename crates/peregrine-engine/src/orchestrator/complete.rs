//! Completions from gateways: update risk and positions, tell the strategy.

use peregrine_strategy::msg::{reason, EventKind};
use peregrine_types::stamp;
use peregrine_types::{InstrumentId, Price, Qty};

use super::{event, Orchestrator};
use crate::gateway::{Completion, CompletionKind};
use peregrine_risk::{Fill, StrategyId};
use peregrine_venues::{Report, VenueError, REASON_DISCONNECTED};

impl Orchestrator {
    pub(super) fn on_completion(&mut self, c: Completion, t6: u64) {
        if !self.orders.contains_key(&c.engine_id) {
            return; // a late report about a finished order (e.g. cancel after fill)
        }
        self.log_report(&c);
        let Some(o) = self.orders.get_mut(&c.engine_id) else {
            return;
        };
        o.ts[stamp::GATEWAY_RECV] = c.t4;
        o.ts[stamp::GATEWAY_DONE] = c.t5;
        o.ts[stamp::ORCH_RECV_COMPLETION] = t6;
        let s = o.strategy;
        let sid = StrategyId(s);
        let mut o = *o;
        let mut done = false;
        let mut ev = match c.kind {
            CompletionKind::Report(Report::Ack { .. }) => event(EventKind::Ack, &o),
            CompletionKind::Report(Report::Rejected { reason: r, .. }) => {
                done = true;
                let mut ev = event(EventKind::Reject, &o);
                ev.reason = venue_reason(r);
                if r == REASON_DISCONNECTED {
                    self.count_engine_reject(ev.reason);
                } else {
                    *self.venue_rejects.entry((o.venue, r)).or_insert(0) += 1;
                }
                ev
            }
            CompletionKind::Report(Report::Fill {
                price, qty, leaves, ..
            }) => {
                o.leaves = leaves.lots();
                done = leaves.is_zero();
                self.fill(sid, &o, price, qty);
                let mut ev = event(EventKind::Fill, &o);
                ev.price = price.units();
                ev.qty = qty.lots();
                ev
            }
            CompletionKind::Report(Report::Cancelled { qty, leaves, .. }) => {
                done = leaves.is_zero();
                if !done {
                    // A self-trade decrement: part of the order is gone, the rest open.
                    self.risk.on_reduced(sid, o.client_id, qty.lots());
                }
                o.leaves = leaves.lots();
                let mut ev = event(EventKind::Cancelled, &o);
                ev.qty = qty.lots();
                ev
            }
            CompletionKind::Report(Report::Replaced { price, qty, .. }) => {
                o.replace_pending = false;
                o.price = price.units();
                o.qty = qty.lots();
                o.leaves = qty.lots();
                self.risk.on_replaced(sid, o.client_id, qty);
                event(EventKind::Replaced, &o)
            }
            CompletionKind::Report(Report::ReplaceRejected { reason: r, .. }) => {
                self.replace_failed(&mut o, venue_reason(r))
            }
            CompletionKind::ReplaceFailed(e) => self.replace_failed(&mut o, venue_error_code(e)),
            CompletionKind::Report(Report::CancelRejected { reason: r, .. }) => {
                o.cancel_sent = false;
                let mut ev = event(EventKind::CancelReject, &o);
                ev.reason = venue_reason(r);
                ev
            }
            CompletionKind::CancelFailed(e) => {
                o.cancel_sent = false;
                let mut ev = event(EventKind::CancelReject, &o);
                ev.reason = venue_error_code(e);
                ev
            }
            CompletionKind::SubmitFailed(e) => {
                done = true;
                let mut ev = event(EventKind::Reject, &o);
                ev.reason = venue_error_code(e);
                self.count_engine_reject(ev.reason);
                ev
            }
        };
        ev.scheduled_delay_ns = c.scheduled_ns;
        if done {
            self.risk.on_done(sid, o.client_id);
            self.orders.remove(&c.engine_id);
            self.by_client.remove(&(s, o.client_id));
        } else {
            self.orders.insert(c.engine_id, o);
        }
        if Self::is_orphan(o.client_id) {
            return; // no incarnation of the strategy alive now knows this order
        }
        self.emit(s, ev);
    }

    fn replace_failed(&mut self, o: &mut super::Live, code: u16) -> peregrine_strategy::msg::Event {
        o.replace_pending = false;
        self.risk
            .on_replace_failed(StrategyId(o.strategy), o.client_id);
        if (201..reason::VENUE).contains(&code) {
            self.count_engine_reject(code);
        }
        let mut ev = event(EventKind::ReplaceReject, o);
        ev.reason = code;
        ev
    }

    fn fill(&mut self, sid: StrategyId, o: &super::Live, price: Price, qty: Qty) {
        let fill = Fill {
            venue: o.venue,
            instrument: InstrumentId(o.instrument),
            side: o.side,
            price,
            qty,
        };
        if self.risk.on_fill(sid, o.client_id, fill).is_some() {
            // A loss or position breach switched the strategy's kill switch on: pull
            // its orders too.
            self.cancel_scope(Some(sid.0));
        }
    }
}

/// The reason code a strategy sees for a request its venue adapter refused at once.
fn venue_error_code(e: VenueError) -> u16 {
    match e {
        VenueError::Busy => reason::GATEWAY_BUSY,
        VenueError::Disconnected => reason::VENUE_DOWN,
        VenueError::UnknownOrder(_) => reason::UNKNOWN_ORDER,
    }
}

/// The reason code a strategy sees for a venue's reason `r`.
fn venue_reason(r: u16) -> u16 {
    if r == REASON_DISCONNECTED {
        reason::VENUE_DOWN
    } else {
        reason::VENUE.saturating_add(r)
    }
}
