//! Completions from gateways: update risk and positions, tell the strategy.

use peregrine_risk::{Fill, StrategyId};
use peregrine_strategy::msg::{reason, Event, EventKind};
use peregrine_types::stamp;
use peregrine_types::{InstrumentId, Price, Qty};
use peregrine_venues::{Report, VenueError, REASON_DISCONNECTED};

use crate::io::{Completion, CompletionKind, Outputs};
use crate::record::{is_orphan, Rec};
use crate::state::{event, Live, Orchestrator};

impl Orchestrator {
    pub(crate) fn on_completion(&mut self, c: Completion, t6: u64, out: &mut Outputs) {
        if let CompletionKind::Cursor(seq) = c.kind {
            return self.record(
                Rec::Cursor {
                    venue: c.venue as u16,
                    seq,
                },
                out,
            );
        }
        if let CompletionKind::Report(Report::ListStatus {
            status, reason: r, ..
        }) = c.kind
        {
            // About the list, not one order (its leg 0 may be done already).
            return self.on_list_status(c.engine_id, status, r, t6, out);
        }
        if let CompletionKind::SubmitFailed(_) = c.kind {
            self.list_failed(c.engine_id);
        }
        let Some(mut o) = self.orders.get(&c.engine_id).copied() else {
            return; // a late report about a finished order (e.g. cancel after fill)
        };
        self.record_report(&c, out);
        if c.t3 != 0 {
            o.ts[stamp::ORCH_DISPATCH] = c.t3;
        }
        o.ts[stamp::GATEWAY_RECV] = c.t4;
        o.ts[stamp::GATEWAY_DONE] = c.t5;
        o.ts[stamp::ORCH_RECV_COMPLETION] = t6;
        let s = o.strategy;
        let sid = StrategyId(s);
        let mut done = false;
        let mut ev = match c.kind {
            CompletionKind::Report(Report::Ack { .. }) => event(EventKind::Ack, &o),
            CompletionKind::Report(Report::Rejected { reason: r, .. }) => {
                done = true;
                let mut ev = event(EventKind::Reject, &o);
                ev.reason = venue_reason(r);
                if r == REASON_DISCONNECTED {
                    self.rejects.count_engine(ev.reason);
                } else {
                    self.rejects.count_venue(o.venue, r);
                }
                ev
            }
            CompletionKind::Report(Report::Fill {
                price, qty, leaves, ..
            }) => {
                o.leaves = leaves.lots();
                done = leaves.is_zero();
                // The table holds the current order before risk may pull every order
                // of the strategy (a breach), so the cancel marks stick.
                self.orders.insert(c.engine_id, o);
                self.fill(sid, &o, price, qty, out);
                if let Some(now) = self.orders.get(&c.engine_id) {
                    o = *now;
                }
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
            CompletionKind::Report(Report::Triggered {
                trigger_price,
                last_price,
                ..
            }) => {
                // Still the same open order, now live at the venue: nothing changes
                // for risk (it was counted in full from the start).
                let mut ev = event(EventKind::Triggered, &o);
                ev.price = trigger_price.units();
                ev.qty = last_price.units();
                ev
            }
            CompletionKind::Report(Report::ReplaceRejected { reason: r, .. }) => {
                self.replace_failed(&mut o, venue_reason(r))
            }
            CompletionKind::ReplaceFailed(e) => self.replace_failed(&mut o, venue_error_code(e)),
            CompletionKind::Report(Report::CancelRejected { reason: r, .. }) => {
                self.cancel_refused(&mut o, venue_reason(r))
            }
            CompletionKind::CancelFailed(e) => self.cancel_refused(&mut o, venue_error_code(e)),
            CompletionKind::SubmitFailed(e) => {
                done = true;
                let mut ev = event(EventKind::Reject, &o);
                ev.reason = venue_error_code(e);
                self.rejects.count_engine(ev.reason);
                ev
            }
            CompletionKind::Cursor(_) | CompletionKind::Report(Report::ListStatus { .. }) => return,
        };
        ev.scheduled_delay_ns = c.scheduled_ns;
        if done {
            self.risk.on_done(sid, o.client_id);
            self.orders.remove(&c.engine_id);
            self.by_client.remove(&(s, o.client_id));
        } else {
            self.orders.insert(c.engine_id, o);
        }
        if is_orphan(o.client_id) {
            return; // no incarnation of the strategy alive now knows this order
        }
        self.emit(s, ev, out);
    }

    fn replace_failed(&mut self, o: &mut Live, code: u16) -> Event {
        o.replace_pending = false;
        self.risk
            .on_replace_failed(StrategyId(o.strategy), o.client_id);
        if (201..reason::VENUE).contains(&code) {
            self.rejects.count_engine(code);
        }
        let mut ev = event(EventKind::ReplaceReject, o);
        ev.reason = code;
        ev
    }

    fn cancel_refused(&mut self, o: &mut Live, code: u16) -> Event {
        o.cancel_sent = false;
        o.cancel_asked = false;
        let mut ev = event(EventKind::CancelReject, o);
        ev.reason = code;
        ev
    }

    fn fill(&mut self, sid: StrategyId, o: &Live, price: Price, qty: Qty, out: &mut Outputs) {
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
            self.cancel_scope(Some(sid.0), out);
        }
    }

    /// Journals what a venue report changes about order `c.engine_id`.
    fn record_report(&self, c: &Completion, out: &mut Outputs) {
        let engine_id = c.engine_id;
        let rec = match c.kind {
            CompletionKind::Report(Report::Ack { venue_id, .. }) => Rec::Ack {
                engine_id,
                venue_id,
            },
            CompletionKind::Report(Report::Fill {
                price, qty, leaves, ..
            }) => Rec::Fill {
                engine_id,
                price: price.units(),
                qty: qty.lots(),
                leaves: leaves.lots(),
            },
            CompletionKind::Report(Report::Cancelled { qty, leaves, .. }) => Rec::Cancelled {
                engine_id,
                qty: qty.lots(),
                leaves: leaves.lots(),
            },
            CompletionKind::Report(Report::Rejected { .. }) | CompletionKind::SubmitFailed(_) => {
                Rec::Rejected { engine_id }
            }
            CompletionKind::Report(Report::Replaced { price, qty, .. }) => Rec::Replaced {
                engine_id,
                price: price.units(),
                qty: qty.lots(),
            },
            _ => return,
        };
        self.record(rec, out);
    }
}

/// The reason code a strategy sees for a request its venue adapter refused at once.
fn venue_error_code(e: VenueError) -> u16 {
    match e {
        VenueError::Busy => reason::GATEWAY_BUSY,
        VenueError::Disconnected => reason::VENUE_DOWN,
        VenueError::UnknownOrder(_) => reason::UNKNOWN_ORDER,
        VenueError::Unsupported => reason::UNSUPPORTED,
    }
}

/// The reason code a strategy sees for a venue's reason `r`.
pub(crate) fn venue_reason(r: u16) -> u16 {
    if r == REASON_DISCONNECTED {
        reason::VENUE_DOWN
    } else {
        reason::VENUE.saturating_add(r)
    }
}
