//! The reference book's clock: expiries and timers in time order, by scanning;
//! phase commands; protection commands.

use peregrine_types::rules::DAY_NS;
use peregrine_types::{AccountId, AuctionKind, ClientOrderId, OrderId, Timestamp, TradingPhase};

use super::{MmpRec, ReferenceBook};
use crate::command::{CommandKind, MarketOp, MmpCommand, MmpOp, MMP_MAX_FILLS};
use crate::event::{Event, EventSink, MmpStatus, MmpUpdate, PhaseChanged};
use crate::reject::{CancelReason, RejectReason};

impl ReferenceBook {
    /// The earliest GTD expiry due by `ts`: (time, order id).
    fn due_expiry(&self, ts: u64) -> Option<(u64, u64)> {
        let resting = self
            .entries
            .iter()
            .map(|e| (e.order.expire_at.0, e.order.id.0));
        let parked = self
            .parked
            .iter()
            .map(|p| (p.order.order.expire_at.0, p.order.order.id.0));
        resting
            .chain(parked)
            .filter(|&(at, _)| at != 0 && at <= ts)
            .min()
    }

    /// The schedule's boundaries after the last one run: (time, index).
    fn boundary(&self) -> Option<(u64, usize)> {
        let s = self.spec.schedule.as_ref()?;
        let day = self.sched_done / DAY_NS;
        (day..=day + 1)
            .flat_map(|d| {
                s.times()
                    .into_iter()
                    .enumerate()
                    .map(move |(k, t)| (d * DAY_NS + t.nanos(), k))
            })
            .find(|&(b, _)| b > self.sched_done)
    }

    fn thaw_time(&self) -> Option<u64> {
        self.mmp
            .iter()
            .filter(|m| m.frozen && m.frozen_until != 0)
            .map(|m| m.frozen_until)
            .min()
    }

    fn auction_end(&self) -> Option<u64> {
        (matches!(self.phase, TradingPhase::Auction(_)) && self.ends_at != 0)
            .then_some(self.ends_at)
    }

    /// Runs everything due by `ts` in time order (at one instant: expiries, thaws, an
    /// auction's end, the schedule), then moves the clock.
    pub(super) fn advance(&mut self, ts: u64, sink: &mut impl EventSink) {
        if self.spec.schedule.is_some() && self.sched_done == 0 {
            if let Some((b, _)) = self.boundary() {
                if b <= ts {
                    self.sched_done = (ts / DAY_NS).saturating_sub(1) * DAY_NS;
                }
            }
        }
        loop {
            let timers = [
                self.thaw_time(),
                self.auction_end(),
                self.boundary().map(|b| b.0),
            ];
            let timer = timers.into_iter().flatten().filter(|&t| t <= ts).min();
            let expiry = self.due_expiry(ts);
            match (expiry, timer) {
                (Some((at, id)), t) if t.is_none_or(|t| at <= t) => {
                    self.now = self.now.max(at);
                    if let Some(i) = self.pos(OrderId(id)) {
                        self.cancel_entry(i, CancelReason::Expired, sink);
                    } else {
                        self.cancel_parked(id, CancelReason::Expired, sink);
                    }
                }
                (_, Some(t)) => self.fire(t, sink),
                _ => break,
            }
        }
        self.now = self.now.max(ts);
    }

    fn fire(&mut self, t: u64, sink: &mut impl EventSink) {
        self.now = self.now.max(t);
        if self.thaw_time() == Some(t) {
            let mut due: Vec<AccountId> = self
                .mmp
                .iter()
                .filter(|m| m.frozen && m.frozen_until != 0 && m.frozen_until <= t)
                .map(|m| m.account)
                .collect();
            due.sort();
            for a in due {
                let m = self.mmp.iter_mut().find(|m| m.account == a).unwrap();
                m.frozen = false;
                m.frozen_until = 0;
                m.fills.clear();
                let params = m.params;
                sink.push(Event::Mmp(MmpUpdate {
                    instrument: self.spec.id,
                    account: a,
                    status: MmpStatus::Thawed,
                    params,
                    window_qty: 0,
                    window_fills: 0,
                }));
            }
        } else if self.auction_end() == Some(t) {
            self.uncross_to(TradingPhase::Continuous, sink);
        } else if let Some((b, k)) = self.boundary().filter(|b| b.0 == t) {
            self.sched_done = b;
            match k {
                0 => self.enter_auction(AuctionKind::Opening, 0, sink),
                1 => self.uncross_to(TradingPhase::Continuous, sink),
                2 => self.enter_auction(AuctionKind::Closing, 0, sink),
                _ => self.uncross_to(TradingPhase::Halted, sink),
            }
        }
    }

    fn phase_event(&self, sink: &mut impl EventSink) {
        sink.push(Event::PhaseChanged(PhaseChanged {
            instrument: self.spec.id,
            phase: self.phase,
            ends_at: Timestamp(self.ends_at),
        }));
    }

    fn enter_auction(&mut self, kind: AuctionKind, ends_at: u64, sink: &mut impl EventSink) {
        self.phase = TradingPhase::Auction(kind);
        self.ends_at = ends_at;
        self.indicative = (0, 0, 0, None);
        self.phase_event(sink);
    }

    pub(super) fn start_volatility(&mut self, sink: &mut impl EventSink) {
        let ms = self.spec.volatility.map_or(0, |v| v.auction_ms);
        self.enter_auction(AuctionKind::Volatility, self.now + ms * 1_000_000, sink);
    }

    fn crossed(&self) -> bool {
        let bid = self
            .entries
            .iter()
            .filter(|e| e.order.side == peregrine_types::Side::Buy)
            .map(|e| e.order.price)
            .max();
        let ask = self
            .entries
            .iter()
            .filter(|e| e.order.side == peregrine_types::Side::Sell)
            .map(|e| e.order.price)
            .min();
        matches!((bid, ask), (Some(b), Some(a)) if b >= a)
    }

    fn uncross_to(&mut self, to: TradingPhase, sink: &mut impl EventSink) {
        let auction = matches!(self.phase, TradingPhase::Auction(_));
        if self.crossed() && (auction || to == TradingPhase::Continuous) {
            self.uncross(sink);
        }
        self.phase = to;
        self.ends_at = 0;
        self.indicative = (0, 0, 0, None);
        self.phase_event(sink);
        self.cascade(sink);
    }

    pub(super) fn market(
        &mut self,
        instrument: peregrine_types::InstrumentId,
        op: MarketOp,
        kind: CommandKind,
        sink: &mut impl EventSink,
    ) {
        let reject = |book: &Self, sink: &mut dyn FnMut(Event), reason| {
            let _ = book;
            sink(Event::Rejected(crate::event::Rejected {
                instrument,
                command: kind,
                id: OrderId(0),
                client_id: ClientOrderId(0),
                account: AccountId(0),
                reason,
            }));
        };
        if instrument != self.spec.id {
            reject(self, &mut |e| sink.push(e), RejectReason::UnknownInstrument);
            return;
        }
        let lenient = kind == CommandKind::SetStatus;
        let auction = matches!(self.phase, TradingPhase::Auction(_));
        let ok = match op {
            MarketOp::Halt => lenient || self.phase != TradingPhase::Halted,
            MarketOp::Resume => lenient || self.phase != TradingPhase::Continuous,
            MarketOp::StartAuction { kind, .. } => !auction && kind != AuctionKind::Volatility,
            MarketOp::Uncross => auction,
        };
        if !ok {
            reject(self, &mut |e| sink.push(e), RejectReason::InvalidPhase);
            return;
        }
        match op {
            MarketOp::Halt => {
                self.phase = TradingPhase::Halted;
                self.ends_at = 0;
                self.indicative = (0, 0, 0, None);
                self.phase_event(sink);
            }
            MarketOp::Resume => self.uncross_to(TradingPhase::Continuous, sink),
            MarketOp::StartAuction { kind, duration_ns } => {
                let ends = if duration_ns == 0 {
                    0
                } else {
                    self.now + duration_ns
                };
                self.enter_auction(kind, ends, sink);
            }
            MarketOp::Uncross => {
                let to = if self.phase == TradingPhase::Auction(AuctionKind::Closing) {
                    TradingPhase::Halted
                } else {
                    TradingPhase::Continuous
                };
                self.uncross_to(to, sink);
            }
        }
    }

    pub(super) fn mmp_command(&mut self, m: &MmpCommand, sink: &mut impl EventSink) {
        let event = |status, params| {
            Event::Mmp(MmpUpdate {
                instrument: m.instrument,
                account: m.account,
                status,
                params,
                window_qty: 0,
                window_fills: 0,
            })
        };
        let found = self.mmp.iter().position(|x| x.account == m.account);
        let result = if m.instrument != self.spec.id {
            Err(RejectReason::UnknownInstrument)
        } else {
            match (m.op, found) {
                (MmpOp::Set(p), _) => {
                    let ok = p.window_ns > 0
                        && p.max_qty > 0
                        && p.max_fills >= 1
                        && p.max_fills <= MMP_MAX_FILLS;
                    if ok {
                        if let Some(i) = found {
                            self.mmp.remove(i);
                        }
                        self.mmp.push(MmpRec {
                            account: m.account,
                            params: p,
                            fills: Vec::new(),
                            frozen: false,
                            frozen_until: 0,
                            tripped: false,
                        });
                        sink.push(event(MmpStatus::Set, p));
                        Ok(())
                    } else {
                        Err(RejectReason::InvalidMmp)
                    }
                }
                (MmpOp::Reset, Some(i)) => {
                    let r = &mut self.mmp[i];
                    r.frozen = false;
                    r.frozen_until = 0;
                    r.fills.clear();
                    sink.push(event(MmpStatus::Reset, r.params));
                    Ok(())
                }
                (MmpOp::Clear, Some(i)) => {
                    self.mmp.remove(i);
                    sink.push(event(MmpStatus::Cleared, Default::default()));
                    Ok(())
                }
                (_, None) => Err(RejectReason::InvalidMmp),
            }
        };
        if let Err(reason) = result {
            sink.push(Event::Rejected(crate::event::Rejected {
                instrument: m.instrument,
                command: CommandKind::Mmp,
                id: OrderId(0),
                client_id: ClientOrderId(m.request_id),
                account: m.account,
                reason,
            }));
        }
    }
}
