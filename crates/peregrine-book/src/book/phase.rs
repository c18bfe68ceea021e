//! Time and trading phases: the clock's advance (GTD expiries, and the timers:
//! market-maker protection thaws, timed auction ends, the daily schedule), the admin
//! market commands, and entering and leaving call auctions
//! (`docs/auctions.md`).
//!
//! Timed work due by a command's time runs before its action, in time order;
//! at one instant expiries come first, then thaws, then an auction's end, then the
//! schedule. An instrument idle for days catches its schedule up from the day
//! before the command.

use std::cmp::Reverse;

use peregrine_types::rules::DAY_NS;
use peregrine_types::{AuctionKind, Timestamp, TradingPhase};

use super::OrderBook;
use crate::command::{CommandKind, MarketOp, MmpCommand, MmpOp};
use crate::event::{Event, EventSink, MmpStatus, MmpUpdate, PhaseChanged, Rejected};
use crate::ids::OrderIds;
use crate::index::LevelIndex;
use crate::mmp::params_ok;
use crate::reject::{CancelReason, RejectReason};

/// A timer that is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Timer {
    Thaw,
    AuctionEnd,
    /// The schedule's boundary `k` (0 opening call, 1 open, 2 closing call, 3 close).
    Schedule(usize),
}

impl<L: LevelIndex, I: OrderIds> OrderBook<L, I> {
    /// Expires every GTD order due at or before `now`, runs the timers due by then,
    /// and moves the clock forward (never backwards).
    #[inline]
    pub fn advance_time<S: EventSink>(&mut self, now: Timestamp, sink: &mut S) {
        let ts = now.0;
        if ts < self.due {
            // Nothing is due: the one check a plain command pays.
            self.now = self.now.max(ts);
            return;
        }
        self.advance_due(ts, sink);
    }

    /// [`OrderBook::advance_time`] when something may be due by `ts`.
    #[cold]
    #[inline(never)]
    fn advance_due<S: EventSink>(&mut self, ts: u64, sink: &mut S) {
        self.quiet = false;
        if self.sched_done == 0
            && self.spec.schedule.is_some()
            && self.next_boundary().is_some_and(|(b, _)| b <= ts)
        {
            // A fresh book: its schedule starts the day before.
            self.sched_done = (ts / DAY_NS).saturating_sub(1) * DAY_NS;
            self.refresh_timer();
        }
        loop {
            let expiry = match self.expiry.peek() {
                Some(&Reverse((at, _))) if at <= ts => Some(at),
                _ => None,
            };
            let timer = (self.next_timer <= ts).then_some(self.next_timer);
            match (expiry, timer) {
                (Some(at), Some(t)) if at <= t => self.expire_next(sink),
                (Some(_), None) => self.expire_next(sink),
                (_, Some(t)) => self.fire(t, sink),
                (None, None) => break,
            }
        }
        self.now = self.now.max(ts);
        self.refresh_due();
    }

    /// Recomputes [`OrderBook::due`](super::OrderBook): the earliest GTD expiry,
    /// timer, or 0 while a schedule waits to start.
    pub(super) fn refresh_due(&mut self) {
        let expiry = self.expiry.peek().map_or(u64::MAX, |r| (r.0).0);
        let start = if self.sched_done == 0 && self.spec.schedule.is_some() {
            0
        } else {
            u64::MAX
        };
        self.due = expiry.min(self.next_timer).min(start);
    }

    /// Expires the heap's earliest entry (stale entries are dropped).
    fn expire_next<S: EventSink>(&mut self, sink: &mut S) {
        let Some(Reverse((at, id))) = self.expiry.pop() else {
            return;
        };
        self.now = self.now.max(at);
        if let Some(slot) = self.ids.get(id) {
            if self.arena.get(slot).expire_at.0 == at {
                self.cancel_slot(slot, CancelReason::Expired, sink);
            }
        } else if let Some(slot) = self.park.get(id) {
            if self.park.info(slot).order.order.expire_at.0 == at {
                self.cancel_parked(slot, CancelReason::Expired, sink);
            }
        }
    }

    /// The earliest timer (see [`OrderBook::next_timer`]).
    pub(super) fn refresh_timer(&mut self) {
        let mut t = u64::MAX;
        if self.phase.is_auction() && self.ends_at != 0 {
            t = t.min(self.ends_at);
        }
        if let Some(thaw) = self.mmp.next_thaw() {
            t = t.min(thaw);
        }
        if let Some((b, _)) = self.next_boundary() {
            t = t.min(b);
        }
        self.next_timer = t;
        self.refresh_due();
    }

    /// When the book next has timed work (a thaw, an auction's end, a scheduled
    /// phase change): a venue with no orders flowing sends a `Tick` then. GTD
    /// expiries are not included: they happen with the next command.
    pub fn next_timer(&self) -> Option<Timestamp> {
        (self.next_timer != u64::MAX).then_some(Timestamp(self.next_timer))
    }

    /// The schedule's first boundary after the last one it ran.
    fn next_boundary(&self) -> Option<(u64, usize)> {
        let s = self.spec.schedule.as_ref()?;
        let day = self.sched_done / DAY_NS;
        for d in [day, day + 1] {
            for (k, t) in s.times().iter().enumerate() {
                let b = d * DAY_NS + t.nanos();
                if b > self.sched_done {
                    return Some((b, k));
                }
            }
        }
        None
    }

    /// Runs the timers due at `t`.
    fn fire<S: EventSink>(&mut self, t: u64, sink: &mut S) {
        self.now = self.now.max(t);
        let which = if self.mmp.next_thaw() == Some(t) {
            Timer::Thaw
        } else if self.phase.is_auction() && self.ends_at == t {
            Timer::AuctionEnd
        } else {
            match self.next_boundary() {
                Some((b, k)) if b == t => Timer::Schedule(k),
                _ => {
                    self.refresh_timer();
                    return;
                }
            }
        };
        match which {
            Timer::Thaw => {
                let instrument = self.spec.id;
                self.mmp.thaw_due(t, &mut |account, params| {
                    sink.push(Event::Mmp(MmpUpdate {
                        instrument,
                        account,
                        status: MmpStatus::Thawed,
                        params,
                        window_qty: 0,
                        window_fills: 0,
                    }));
                });
            }
            Timer::AuctionEnd => self.uncross_to(TradingPhase::Continuous, sink),
            Timer::Schedule(k) => {
                self.sched_done = t;
                match k {
                    0 => self.enter_auction(AuctionKind::Opening, 0, sink),
                    1 => self.uncross_to(TradingPhase::Continuous, sink),
                    2 => self.enter_auction(AuctionKind::Closing, 0, sink),
                    _ => self.uncross_to(TradingPhase::Halted, sink),
                }
            }
        }
        self.refresh_timer();
    }

    /// Starts a call auction of `kind` (ending by itself at `ends_at`, 0: not timed).
    pub(super) fn enter_auction<S: EventSink>(
        &mut self,
        kind: AuctionKind,
        ends_at: u64,
        sink: &mut S,
    ) {
        self.set_phase(TradingPhase::Auction(kind));
        self.ends_at = ends_at;
        self.indicative = (0, 0, 0, None);
        self.phase_changed(sink);
        self.refresh_timer();
    }

    /// A trade would have printed outside the volatility band: a volatility auction.
    pub(super) fn start_volatility<S: EventSink>(&mut self, sink: &mut S) {
        let ms = self.spec.volatility.map_or(0, |v| v.auction_ms);
        let ends = self.now.saturating_add(ms.saturating_mul(1_000_000));
        self.enter_auction(AuctionKind::Volatility, ends, sink);
    }

    /// Ends a call auction (or a halt) into `to`: in an auction, or going continuous
    /// with a crossed book, the book uncrosses first; the trades' cascade runs before
    /// anything else.
    pub(super) fn uncross_to<S: EventSink>(&mut self, to: TradingPhase, sink: &mut S) {
        let crossed = self.is_crossed();
        if crossed && (self.phase.is_auction() || to == TradingPhase::Continuous) {
            self.uncross(sink);
        }
        self.set_phase(to);
        self.ends_at = 0;
        self.indicative = (0, 0, 0, None);
        self.phase_changed(sink);
        self.refresh_timer();
        self.cascade(sink);
    }

    /// Whether the best bid reaches the best ask (possible only after a call).
    pub(super) fn is_crossed(&self) -> bool {
        matches!(
            (self.best(peregrine_types::Side::Buy), self.best(peregrine_types::Side::Sell)),
            (Some((b, ..)), Some((a, ..))) if b >= a
        )
    }

    /// Sets the phase (and the spec's status: halted or active). The book is no
    /// longer quiet: its finish runs in full and knows again.
    pub(super) fn set_phase(&mut self, phase: TradingPhase) {
        self.quiet = false;
        self.phase = phase;
        self.spec.status = match phase {
            TradingPhase::Halted => peregrine_types::InstrumentStatus::Halted,
            _ => peregrine_types::InstrumentStatus::Active,
        };
    }

    fn phase_changed<S: EventSink>(&self, sink: &mut S) {
        sink.push(Event::PhaseChanged(PhaseChanged {
            instrument: self.spec.id,
            phase: self.phase,
            ends_at: Timestamp(self.ends_at),
        }));
    }

    /// An admin phase command (`SetStatus` maps to `Halt` / `Resume` and is never
    /// refused for the phase it finds).
    pub(super) fn market<S: EventSink>(
        &mut self,
        instrument: peregrine_types::InstrumentId,
        op: MarketOp,
        kind: CommandKind,
        sink: &mut S,
    ) {
        self.quiet = false;
        if instrument != self.spec.id {
            self.reject_other(instrument, kind, sink);
            return;
        }
        let lenient = kind == CommandKind::SetStatus;
        let ok = match op {
            MarketOp::Halt => lenient || self.phase != TradingPhase::Halted,
            MarketOp::Resume => lenient || self.phase != TradingPhase::Continuous,
            MarketOp::StartAuction { kind, .. } => {
                !self.phase.is_auction() && kind != AuctionKind::Volatility
            }
            MarketOp::Uncross => self.phase.is_auction(),
        };
        if !ok {
            sink.push(Event::Rejected(Rejected {
                instrument,
                command: kind,
                id: peregrine_types::OrderId(0),
                client_id: peregrine_types::ClientOrderId(0),
                account: peregrine_types::AccountId(0),
                reason: RejectReason::InvalidPhase,
            }));
            return;
        }
        match op {
            MarketOp::Halt => {
                self.set_phase(TradingPhase::Halted);
                self.ends_at = 0;
                self.indicative = (0, 0, 0, None);
                self.phase_changed(sink);
                self.refresh_timer();
            }
            MarketOp::Resume => self.uncross_to(TradingPhase::Continuous, sink),
            MarketOp::StartAuction { kind, duration_ns } => {
                let ends = if duration_ns == 0 {
                    0
                } else {
                    self.now.saturating_add(duration_ns)
                };
                self.enter_auction(kind, ends, sink);
            }
            MarketOp::Uncross => {
                let to = match self.phase {
                    TradingPhase::Auction(AuctionKind::Closing) => TradingPhase::Halted,
                    _ => TradingPhase::Continuous,
                };
                self.uncross_to(to, sink);
            }
        }
    }

    /// An account's market-maker protection command.
    pub(super) fn mmp_command<S: EventSink>(&mut self, m: &MmpCommand, sink: &mut S) {
        self.quiet = false;
        let reason = if m.instrument != self.spec.id {
            Some(RejectReason::UnknownInstrument)
        } else {
            match m.op {
                MmpOp::Set(p) if !params_ok(&p) => Some(RejectReason::InvalidMmp),
                MmpOp::Set(p) => {
                    self.mmp.set(m.account, p);
                    self.mmp_event(m, MmpStatus::Set, p, sink);
                    None
                }
                MmpOp::Reset => match self.mmp.reset(m.account) {
                    Some(p) => {
                        self.mmp_event(m, MmpStatus::Reset, p, sink);
                        None
                    }
                    None => Some(RejectReason::InvalidMmp),
                },
                MmpOp::Clear => {
                    if self.mmp.clear(m.account) {
                        self.mmp_event(m, MmpStatus::Cleared, Default::default(), sink);
                        None
                    } else {
                        Some(RejectReason::InvalidMmp)
                    }
                }
            }
        };
        if let Some(reason) = reason {
            sink.push(Event::Rejected(Rejected {
                instrument: m.instrument,
                command: CommandKind::Mmp,
                id: peregrine_types::OrderId(0),
                client_id: peregrine_types::ClientOrderId(m.request_id),
                account: m.account,
                reason,
            }));
        }
        self.refresh_timer();
    }

    fn mmp_event<S: EventSink>(
        &self,
        m: &MmpCommand,
        status: MmpStatus,
        params: crate::command::MmpParams,
        sink: &mut S,
    ) {
        sink.push(Event::Mmp(MmpUpdate {
            instrument: self.spec.id,
            account: m.account,
            status,
            params,
            window_qty: 0,
            window_fills: 0,
        }));
    }
}
