//! The reference book's parked orders, trigger cascade and market-maker protection,
//! by scanning.

use peregrine_types::{AccountId, OrderType, Price, Side, TrailUnit, TriggerKind};

use super::{PState, Parked, ReferenceBook};
use crate::command::ExtOrder;
use crate::event::{self, Event, EventSink, MmpStatus, MmpUpdate, TriggerCause};
use crate::reject::CancelReason;

fn rises(e: &ExtOrder) -> bool {
    e.trigger.kind.rises(e.order.side)
}

/// A trailing stop's trigger price at watermark `w`.
fn trailing(e: &ExtOrder, w: i64, tick: i64) -> i64 {
    let off = match e.trigger.unit {
        TrailUnit::Ticks => i64::from(e.trigger.trail) * tick,
        TrailUnit::Bps => (i128::from(w) * i128::from(e.trigger.trail) / 10_000).max(1) as i64,
        TrailUnit::None => 0,
    };
    if rises(e) {
        w + off
    } else {
        w - off
    }
}

impl ReferenceBook {
    /// Parks `e`: waiting for its trigger (trailing from the last price), or pending.
    pub(super) fn park(&mut self, e: &ExtOrder, pending: bool, list: u64, seq: Option<u64>) {
        let seq = seq.unwrap_or_else(|| {
            self.park_seq += 1;
            self.park_seq
        });
        let mut p = Parked {
            order: *e,
            seq,
            state: PState::Pending,
            release: false,
            list,
            watermark: 0,
            eff: 0,
        };
        if !pending {
            self.wait(&mut p);
        }
        self.parked.push(p);
    }

    fn wait(&self, p: &mut Parked) {
        p.state = PState::Waiting;
        if p.order.trigger.unit == TrailUnit::None {
            p.eff = p.order.trigger.price.units();
            p.watermark = 0;
        } else {
            p.watermark = self.last_price;
            p.eff = trailing(&p.order, self.last_price, self.spec.tick_size);
        }
    }

    /// Cancels parked order `id` with `reason`; tells its list.
    pub(super) fn cancel_parked(
        &mut self,
        id: u64,
        reason: CancelReason,
        sink: &mut impl EventSink,
    ) {
        let Some(i) = self.parked_pos(id) else { return };
        let p = self.parked.remove(i);
        let o = p.order.order;
        sink.push(self.cancelled_new(&o, o.qty.lots(), reason));
        if p.list != 0 {
            self.list_gone(p.list, id, sink);
        }
    }

    /// Runs the cascade: protections, trigger evaluation, activations, until done.
    pub(super) fn cascade(&mut self, sink: &mut impl EventSink) {
        loop {
            self.run_trips(sink);
            if self.round_first != 0 {
                let (first, last) = (self.round_first, self.last_price);
                self.round_first = 0;
                self.trigger_at(first);
                if last != first {
                    self.trigger_at(last);
                }
            }
            let Some(id) = self.queue.pop_front() else {
                break;
            };
            self.activate(id, sink);
        }
    }

    fn trigger_at(&mut self, p: i64) {
        let tick = self.spec.tick_size;
        let mut hit: Vec<(bool, i64, u64, u64)> = Vec::new();
        for q in &mut self.parked {
            if q.state != PState::Waiting {
                continue;
            }
            let up = rises(&q.order);
            let reached = if up { p >= q.eff } else { p <= q.eff };
            if reached {
                let key = if up { q.eff } else { -q.eff };
                hit.push((up, key, q.seq, q.order.order.id.0));
                q.state = PState::Queued;
                q.release = false;
            } else if q.order.trigger.unit != TrailUnit::None
                && ((up && p < q.watermark) || (!up && p > q.watermark))
            {
                q.watermark = p;
                q.eff = trailing(&q.order, p, tick);
            }
        }
        hit.sort();
        self.queue.extend(hit.iter().map(|h| h.3));
    }

    fn activate(&mut self, id: u64, sink: &mut impl EventSink) {
        let Some(i) = self.parked_pos(id) else { return };
        if self.parked[i].state != PState::Queued {
            return;
        }
        let p = self.parked.remove(i);
        let e = p.order;
        let o = e.order;
        sink.push(Event::Triggered(event::Triggered {
            instrument: self.spec.id,
            id: o.id,
            client_id: o.client_id,
            account: o.account,
            side: o.side,
            trigger_price: Price::from_raw(if p.release { 0 } else { p.eff }),
            last_price: Price::from_raw(self.last_price),
            cause: if p.release {
                TriggerCause::Released
            } else {
                TriggerCause::Price
            },
        }));
        if !p.release {
            if p.list != 0 {
                self.list_triggered(p.list, id, sink);
            }
            self.incoming(&o, e.display.lots(), 0, sink);
            return;
        }
        if sink.admit(&o, &self.spec).is_err() {
            self.unplaced(&e, p.list, CancelReason::Refused, sink);
            return;
        }
        if e.trigger.kind != TriggerKind::None {
            self.park(&e, false, p.list, Some(p.seq));
            let t = e.trigger;
            let reached = t.unit == TrailUnit::None
                && if t.kind.rises(o.side) {
                    self.last_price >= t.price.units()
                } else {
                    self.last_price <= t.price.units()
                };
            if reached {
                let last = self.parked.len() - 1;
                self.parked[last].state = PState::Queued;
                self.parked[last].release = false;
                self.queue.push_back(id);
            }
            return;
        }
        if o.order_type == OrderType::PostOnly
            && self.phase == peregrine_types::TradingPhase::Continuous
            && self.would_take(o.side, o.price)
        {
            self.unplaced(&e, p.list, CancelReason::PostOnlyWouldTake, sink);
            return;
        }
        self.incoming(&o, e.display.lots(), p.list, sink);
    }

    fn unplaced(
        &mut self,
        e: &ExtOrder,
        list: u64,
        reason: CancelReason,
        sink: &mut impl EventSink,
    ) {
        sink.push(self.cancelled_new(&e.order, e.order.qty.lots(), reason));
        if list != 0 {
            self.list_gone(list, e.order.id.0, sink);
        }
    }

    /// Counts a maker fill for `account`'s protection.
    pub(super) fn mmp_fill(&mut self, account: AccountId, q: i64) {
        let now = self.now;
        let Some(m) = self.mmp.iter_mut().find(|m| m.account == account) else {
            return;
        };
        if m.frozen || m.tripped {
            return;
        }
        let window = m.params.window_ns;
        m.fills.retain(|&(t, _)| now.saturating_sub(t) < window);
        m.fills.push((now, q));
        let qty: i64 = m.fills.iter().map(|f| f.1).sum();
        if m.fills.len() >= m.params.max_fills as usize || qty >= m.params.max_qty {
            m.tripped = true;
            self.tripped.push(account);
        }
    }

    /// Fires tripped protections: freeze, `Mmp(Triggered)`, the account's quotes go.
    fn run_trips(&mut self, sink: &mut impl EventSink) {
        let tripped = std::mem::take(&mut self.tripped);
        for account in tripped {
            let now = self.now;
            let Some(m) = self.mmp.iter_mut().find(|m| m.account == account) else {
                continue;
            };
            let qty: i64 = m.fills.iter().map(|f| f.1).sum();
            let fills = m.fills.len() as u32;
            m.tripped = false;
            m.frozen = true;
            m.frozen_until = if m.params.freeze_ns == 0 {
                0
            } else {
                now + m.params.freeze_ns
            };
            m.fills.clear();
            let params = m.params;
            sink.push(Event::Mmp(MmpUpdate {
                instrument: self.spec.id,
                account,
                status: MmpStatus::Triggered,
                params,
                window_qty: qty,
                window_fills: fills,
            }));
            for side in [Side::Buy, Side::Sell] {
                self.cancel_resting_of(side, account, CancelReason::Mmp, sink);
            }
        }
    }
}
