//! The replay driver: one thread, simulated time, one seed.
//!
//! Recorded messages reach the exchange core at their venue time; everything a
//! strategy does waits in a time-ordered queue:
//!
//! ```text
//!  recorded message ──(venue time)──▶ core ──▶ book change / trade ──(+ feed latency)──▶ on_book / on_trade
//!  strategy request ──(+ entry latency)──▶ core ──▶ its answers ──(+ response latency)──▶ on_ack / on_fill / ...
//!  timer ──(every timer_interval_ns of simulated time)──▶ on_timer
//! ```
//!
//! At equal times the recorded message goes first, then queued requests and answers in
//! the order they were made, then market data, then the timer. The same data,
//! settings and seed give the same run, fill for fill ([`crate::report::fills_hash`]).
//! Without a strategy, the loop is just decode → core (→ check).

pub mod gateway;
pub mod md;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use peregrine_book::Event;
use peregrine_strategy::msg::{Event as SdkEvent, EventKind, Request, RequestKind};
use peregrine_types::{stamp, Side};

use crate::attach::{Attached, Delivery};
use crate::data::{DataError, Recorded, Source};
use crate::latency::Latency;
use crate::outcome::{CheckReport, OffBook};
pub use crate::outcome::{Checker, Market};
use crate::report::Recorder;
use crate::venue::Venue;
use gateway::Gateway;
use md::{MdItem, MdQueue};

/// Which clock a recorded message's core time comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timeline {
    /// The venue's timestamp (L3 files, which have only that); the strategy sees the
    /// message `feed_latency_ns` later.
    Exchange,
    /// The recorder's receive timestamp minus `feed_latency_ns` (L2 recordings, whose
    /// venue and receive clocks may disagree by more than the latency itself).
    Local,
}

/// How to replay.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Venue → strategy market-data latency, ns.
    pub feed_latency_ns: u64,
    /// Where core time comes from.
    pub timeline: Timeline,
    /// The strategy's venue index (orders naming another venue are refused).
    pub venue_index: u32,
    /// Equity curve sample period, ns of simulated time.
    pub sample_every_ns: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            feed_latency_ns: 0,
            timeline: Timeline::Exchange,
            venue_index: 0,
            sample_every_ns: 1_000_000_000,
        }
    }
}

/// Why a replay stopped early.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The data.
    #[error(transparent)]
    Data(#[from] DataError),
    /// The strategy failed (a Python exception and its traceback).
    #[error("the strategy failed at simulated time {at} ns: {why}")]
    Strategy {
        /// Simulated time.
        at: u64,
        /// What it reported.
        why: String,
    },
}

/// What a run did.
#[derive(Debug)]
pub struct Outcome {
    /// Recorded messages replayed.
    pub messages: u64,
    /// First and last core time.
    pub span: (u64, u64),
    /// Check findings.
    pub check: Option<CheckReport>,
    /// The strategy's side, if one was attached.
    pub strategy: Option<StrategySide>,
}

/// Something queued for later.
#[derive(Debug, Clone, Copy)]
enum Item {
    /// A strategy request reaching the core.
    ToCore(Request),
    /// An answer reaching the strategy.
    ToStrategy(SdkEvent),
}

#[derive(Debug, Clone, Copy)]
struct Pending {
    at: u64,
    seq: u64,
    item: Item,
}

impl PartialEq for Pending {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Pending {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

/// The strategy's side of a replay: its gateway, queues, latency and recorder.
#[derive(Debug)]
pub struct StrategySide {
    /// Requests and answers, translated.
    pub gateway: Gateway,
    /// Position, PnL, latencies, samples.
    pub recorder: Recorder,
    queue: BinaryHeap<Reverse<Pending>>,
    md: MdQueue,
    latency: Latency,
    seq: u64,
    timer: Option<u64>,
    requests: Vec<Request>,
    answers: Vec<SdkEvent>,
    fills_seen: usize,
    trade_seq: u64,
}

impl StrategySide {
    /// A strategy side trading at `venue_index`.
    pub fn new(venue_index: u32, latency: Latency, recorder: Recorder) -> StrategySide {
        StrategySide {
            gateway: Gateway::new(venue_index),
            recorder,
            queue: BinaryHeap::new(),
            md: MdQueue::default(),
            latency,
            seq: 0,
            timer: None,
            requests: Vec::with_capacity(64),
            answers: Vec::with_capacity(64),
            fills_seen: 0,
            trade_seq: 0,
        }
    }

    fn push(&mut self, at: u64, item: Item) {
        self.seq += 1;
        self.queue.push(Reverse(Pending {
            at,
            seq: self.seq,
            item,
        }));
    }

    /// Calls the strategy at `now` and queues what it sent.
    fn call(&mut self, s: &mut dyn Attached, now: u64, d: Delivery<'_>) -> Result<(), ReplayError> {
        self.requests.clear();
        s.deliver(now, d, &mut self.requests)
            .map_err(|why| ReplayError::Strategy { at: now, why })?;
        for i in 0..self.requests.len() {
            let r = self.requests[i];
            let k = match r.kind {
                k if k == RequestKind::New as u8 => 0,
                k if k == RequestKind::Cancel as u8 => 1,
                k if k == RequestKind::Replace as u8 => 2,
                _ => 3,
            };
            self.recorder.requests[k] += 1;
            if k == 3 {
                continue; // heartbeats and receipts are for the engine
            }
            let entry = self.latency.entry(now);
            self.recorder.entry(entry);
            self.push(now + entry, Item::ToCore(r));
        }
        Ok(())
    }

    /// Reads what the core did since the last look: the strategy's answers, market
    /// data, fills for the recorder.
    fn after_core(
        &mut self,
        venue: &mut Venue,
        ts: u64,
        feed: u64,
        venue_index: u32,
        off: Option<OffBook>,
    ) {
        let tapped = venue.take_tapped();
        let instrument = venue.instrument();
        let mut changed = false;
        for ev in &tapped {
            match ev {
                Event::LevelChanged(_) => changed = true,
                Event::Fill(f) => {
                    self.trade_seq += 1;
                    self.md.trade(
                        ts + feed,
                        ts,
                        venue_index,
                        instrument,
                        f.trade_id,
                        f.taker_side,
                        f.price.units(),
                        f.qty.lots(),
                    );
                }
                _ => {}
            }
        }
        if let Some(o) = off {
            self.trade_seq += 1;
            self.md.trade(
                ts + feed,
                ts,
                venue_index,
                instrument,
                0,
                o.aggressor,
                o.price,
                o.qty,
            );
        }
        if changed {
            self.md.book(
                ts + feed,
                ts,
                md::view(venue.book(), venue_index, instrument),
            );
        }
        self.answers.clear();
        self.gateway
            .events(&tapped, ts, instrument.0, &mut self.answers);
        venue.untap(tapped);
        for i in 0..self.answers.len() {
            let e = self.answers[i];
            let response = self.latency.response(ts);
            self.recorder.response(response);
            self.push(ts + response, Item::ToStrategy(e));
        }
        if self.gateway.fills.len() > self.fills_seen {
            let book = venue.book();
            let (bid, ask) = (book.best(Side::Buy), book.best(Side::Sell));
            for f in &self.gateway.fills[self.fills_seen..] {
                self.recorder.fill(f);
            }
            self.fills_seen = self.gateway.fills.len();
            self.recorder
                .sample(ts, bid.map(|b| b.0.units()), ask.map(|a| a.0.units()));
        } else if self.recorder.due(ts) {
            let book = venue.book();
            let (bid, ask) = (book.best(Side::Buy), book.best(Side::Sell));
            self.recorder
                .sample(ts, bid.map(|b| b.0.units()), ask.map(|a| a.0.units()));
        }
    }

    /// The earliest of the queued items, market data and the timer.
    fn next_at(&self) -> Option<u64> {
        [
            self.queue.peek().map(|p| p.0.at),
            self.md.next_at(),
            self.timer,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Handles the earliest pending thing (due at `at`).
    fn step(
        &mut self,
        s: &mut dyn Attached,
        venue: &mut Venue,
        at: u64,
        settings: &Settings,
    ) -> Result<(), ReplayError> {
        if self.queue.peek().is_some_and(|p| p.0.at == at) {
            let Some(Reverse(p)) = self.queue.pop() else {
                return Ok(());
            };
            match p.item {
                Item::ToCore(req) => {
                    self.answers.clear();
                    let mut refused = std::mem::take(&mut self.answers);
                    self.gateway.request(venue, &req, at, &mut refused);
                    for e in refused.drain(..) {
                        let response = self.latency.response(at);
                        self.push(at + response, Item::ToStrategy(e));
                    }
                    self.answers = refused;
                    self.after_core(
                        venue,
                        at,
                        settings.feed_latency_ns,
                        settings.venue_index,
                        None,
                    );
                }
                Item::ToStrategy(mut e) => {
                    e.ts[stamp::STRATEGY_RECV] = at;
                    let first = matches!(
                        e.kind(),
                        Some(
                            EventKind::Ack
                                | EventKind::Reject
                                | EventKind::Replaced
                                | EventKind::ReplaceReject
                        )
                    );
                    if let (true, Some(rt)) = (first, e.round_trip_ns()) {
                        self.recorder.round_trip(rt);
                    }
                    if let Some(k) = e.kind() {
                        if let Some(n) = self.recorder.events.get_mut(k as usize - 1) {
                            *n += 1;
                        }
                    }
                    self.call(s, at, Delivery::Event(&e))?;
                }
            }
        } else if self.md.next_at() == Some(at) {
            let Some((_, item)) = self.md.pop() else {
                return Ok(());
            };
            match item {
                MdItem::Book(b) => {
                    self.recorder.md[0] += 1;
                    self.recorder.feed(at.saturating_sub(b.exchange_ts));
                    self.call(s, at, Delivery::Book(&b))?;
                }
                MdItem::Trade(t) => {
                    self.recorder.md[1] += 1;
                    self.call(s, at, Delivery::Trade(&t))?;
                }
            }
        } else if self.timer == Some(at) {
            self.timer = s.timer_interval_ns().map(|i| at + i);
            self.call(s, at, Delivery::Timer)?;
        }
        Ok(())
    }
}

fn core_ts<M>(r: &Recorded<M>, settings: &Settings) -> u64 {
    match settings.timeline {
        Timeline::Exchange => r.exch_ts,
        Timeline::Local => r.local_ts.saturating_sub(settings.feed_latency_ns),
    }
}

/// Replays `source` through `market` into `venue`, with `strategy` attached (its side
/// in `side`) and `check` run after every message.
pub fn run<S, M>(
    source: &mut S,
    market: &mut M,
    venue: &mut Venue,
    mut strategy: Option<(&mut dyn Attached, StrategySide)>,
    mut check: Option<&mut dyn Checker<M>>,
    settings: &Settings,
) -> Result<Outcome, ReplayError>
where
    S: Source,
    M: Market<Msg = S::Msg>,
{
    let mut next = source.next_msg()?;
    let first = next.as_ref().map_or(0, |r| core_ts(r, settings));
    let mut last = first;
    let mut messages = 0u64;
    if let Some((s, side)) = strategy.as_mut() {
        venue.tap();
        let start = first + settings.feed_latency_ns;
        side.call(*s, start, Delivery::Start)?;
        side.timer = s.timer_interval_ns().map(|i| start + i);
    }
    loop {
        let rec_at = next.as_ref().map(|r| core_ts(r, settings));
        let pending_at = strategy.as_ref().and_then(|(_, side)| side.next_at());
        let recorded_first = match (rec_at, pending_at) {
            (None, None) => break,
            (Some(r), Some(p)) => r <= p,
            (Some(_), None) => true,
            (None, Some(_)) => false,
        };
        if recorded_first {
            let Some(rec) = next.take() else { break };
            let ts = core_ts(&rec, settings).max(last);
            last = ts;
            let off = market.apply(venue, ts, &rec.msg);
            messages += 1;
            if let Some(c) = check.as_mut() {
                c.step(messages, ts, &rec.msg, venue, market)?;
            }
            if let Some((_, side)) = strategy.as_mut() {
                side.after_core(
                    venue,
                    ts,
                    settings.feed_latency_ns,
                    settings.venue_index,
                    off,
                );
            }
            next = source.next_msg()?;
            if next.is_none() {
                if let Some((_, side)) = strategy.as_mut() {
                    side.timer = None; // the data is over: no more timers
                }
            }
        } else if let (Some((s, side)), Some(at)) = (strategy.as_mut(), pending_at) {
            side.step(*s, venue, at, settings)?;
            if s.finished() {
                break;
            }
        }
    }
    if let Some(c) = check.as_mut() {
        c.finish(messages, venue);
    }
    Ok(Outcome {
        messages,
        span: (first, last),
        check: check.map(|c| c.report()),
        strategy: strategy.map(|(_, side)| side),
    })
}
