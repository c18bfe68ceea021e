//! The market-data thread: polls every venue's feed, keeps one [`L2Book`] per (venue,
//! instrument), and at the end of every venue event publishes the books it changed:
//! into the board (the current book, read by strategies at will) and, as one
//! [`MdEvent`], into the ring of every strategy subscribed to that book. Trades go to
//! subscribers at once. It never blocks on a strategy (see [`super::fanout`]).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crossbeam_queue::ArrayQueue;
use crossbeam_utils::CachePadded;
use peregrine_queue::clock::now_ns;
use peregrine_queue::shm::ShmSpscProducer;
use peregrine_strategy::md::{BoardWriter, BookView, MdEvent, MdKind};
use peregrine_types::InstrumentId;

use super::book::L2Book;
use super::fanout::{Outbox, OutboxCounts};
use crate::counters::bump;
use crate::log::EngineLog;
use peregrine_queue::IdlePolicy;
use peregrine_venues::feed::{MarketFeed, MdUpdate};

/// Which book slot a (venue, instrument) has: venues × instruments, in config order.
#[derive(Debug, Clone)]
pub struct SlotMap {
    venues: usize,
    instruments: Vec<u32>,
}

impl SlotMap {
    /// A map over `venues` venues and these instruments.
    pub fn new(venues: usize, instruments: &[u32]) -> SlotMap {
        SlotMap {
            venues,
            instruments: instruments.to_vec(),
        }
    }

    /// The slot of (venue, instrument).
    pub fn slot(&self, venue: u32, instrument: InstrumentId) -> Option<usize> {
        let i = self.instruments.iter().position(|x| *x == instrument.0)?;
        ((venue as usize) < self.venues).then(|| venue as usize * self.instruments.len() + i)
    }

    /// Every (venue, instrument), in slot order.
    pub fn keys(&self) -> Vec<(u32, InstrumentId)> {
        (0..self.venues as u32)
            .flat_map(|v| self.instruments.iter().map(move |i| (v, InstrumentId(*i))))
            .collect()
    }

    /// Slots.
    pub fn len(&self) -> usize {
        self.venues * self.instruments.len()
    }

    /// No slot at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What the market-data thread counts (it is the only writer; the orchestrator's
/// snapshot reads).
#[derive(Debug, Default)]
pub struct MdCounters {
    /// Updates applied.
    pub updates: CachePadded<AtomicU64>,
    /// Trades seen.
    pub trades: CachePadded<AtomicU64>,
    /// Book versions published.
    pub publishes: CachePadded<AtomicU64>,
    /// Updates for a (venue, instrument) the engine does not know.
    pub unknown: CachePadded<AtomicU64>,
    /// Per strategy: pushed, skipped, full (in that order).
    pub strategies: Vec<[CachePadded<AtomicU64>; 3]>,
}

impl MdCounters {
    /// Counters for `strategies` strategies.
    pub fn new(strategies: usize) -> MdCounters {
        MdCounters {
            strategies: (0..strategies).map(|_| Default::default()).collect(),
            ..MdCounters::default()
        }
    }

    /// A strategy's counts.
    pub fn strategy(&self, s: usize) -> OutboxCounts {
        self.strategies
            .get(s)
            .map_or(OutboxCounts::default(), |c| OutboxCounts {
                // Relaxed: statistics.
                pushed: c[0].load(Ordering::Relaxed),
                skipped: c[1].load(Ordering::Relaxed),
                full: c[2].load(Ordering::Relaxed),
            })
    }
}

/// A strategy's fresh market-data ring, from the orchestrator (rings re-created).
pub type Attach = (u16, ShmSpscProducer<MdEvent>);

/// The thread's state; [`MdThread::run`] is the body.
#[derive(Debug)]
pub struct MdThread {
    feeds: Vec<(u32, Box<dyn MarketFeed>)>,
    map: SlotMap,
    books: Vec<L2Book>,
    views: Vec<BookView>,
    dirty: Vec<usize>,
    is_dirty: Vec<bool>,
    board: BoardWriter,
    outboxes: Vec<Outbox>,
    attach: Arc<ArrayQueue<Attach>>,
    counters: Arc<MdCounters>,
    stop: Arc<AtomicBool>,
    wait: IdlePolicy,
    log: EngineLog,
}

impl MdThread {
    /// A thread over these feeds (venue index, feed), publishing into `board` (one slot
    /// per `map` key) and to the strategies' `outboxes` (in strategy order).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        feeds: Vec<(u32, Box<dyn MarketFeed>)>,
        map: SlotMap,
        board: BoardWriter,
        outboxes: Vec<Outbox>,
        attach: Arc<ArrayQueue<Attach>>,
        counters: Arc<MdCounters>,
        stop: Arc<AtomicBool>,
        wait: IdlePolicy,
    ) -> MdThread {
        let keys = map.keys();
        MdThread {
            feeds,
            books: (0..keys.len()).map(|_| L2Book::default()).collect(),
            views: keys
                .iter()
                .map(|(v, i)| BookView::new(*v, *i, &[], &[]))
                .collect(),
            dirty: Vec::with_capacity(keys.len()),
            is_dirty: vec![false; keys.len()],
            map,
            board,
            outboxes,
            attach,
            counters,
            stop,
            wait,
            log: EngineLog::stderr_direct(),
        }
    }

    /// Hands what the feeds log to `log` (the engine's log thread).
    pub fn with_log(mut self, log: EngineLog) -> MdThread {
        self.log = log;
        self
    }

    /// Runs until `stop`.
    pub fn run(mut self) {
        let mut idler = self.wait.idler();
        // Relaxed: a stop flag.
        while !self.stop.load(Ordering::Relaxed) {
            if self.poll_once() {
                idler.reset();
            } else {
                idler.idle();
            }
        }
    }

    /// One pass over every feed; true if anything arrived.
    pub fn poll_once(&mut self) -> bool {
        while let Some((s, tx)) = self.attach.pop() {
            if let Some(o) = self.outboxes.get_mut(s as usize) {
                o.attach(tx);
            }
        }
        let mut n = 0;
        let mut feeds = std::mem::take(&mut self.feeds);
        for (venue, feed) in feeds.iter_mut() {
            let venue = *venue;
            let now = now_ns();
            n += feed.poll(now, &mut |u| self.apply(venue, u, now));
            let log = &self.log;
            feed.drain_log(&mut |line| log.line(line));
        }
        self.feeds = feeds;
        self.publish(now_ns()); // a feed that forgot its End still gets published
        let views = &self.views;
        let latest = |slot: usize| book_event(slot, &views[slot], now_ns());
        for (i, o) in self.outboxes.iter_mut().enumerate() {
            o.flush(&latest);
            if let Some(c) = self.counters.strategies.get(i) {
                // Relaxed: statistics, single writer.
                c[0].store(o.counts.pushed, Ordering::Relaxed);
                c[1].store(o.counts.skipped, Ordering::Relaxed);
                c[2].store(o.counts.full, Ordering::Relaxed);
            }
        }
        n > 0
    }

    fn apply(&mut self, venue: u32, u: MdUpdate, now: u64) {
        bump(&self.counters.updates);
        let instrument = match u {
            MdUpdate::End => return self.publish(now),
            MdUpdate::Level { instrument, .. }
            | MdUpdate::Trade { instrument, .. }
            | MdUpdate::Clear { instrument } => instrument,
        };
        let Some(slot) = self.map.slot(venue, instrument) else {
            bump(&self.counters.unknown);
            return;
        };
        match u {
            MdUpdate::Level {
                side,
                price,
                qty,
                orders,
                ts,
                ..
            } => {
                self.books[slot].update(side, price, qty, orders);
                self.views[slot].exchange_ts = ts;
                self.mark(slot, now);
            }
            MdUpdate::Clear { .. } => {
                self.books[slot].clear();
                self.mark(slot, now);
            }
            MdUpdate::Trade {
                trade_id,
                price,
                qty,
                aggressor,
                ts,
                ..
            } => {
                bump(&self.counters.trades);
                let ev = MdEvent {
                    kind: MdKind::Trade as u8,
                    side: aggressor as u8,
                    slot: slot as u32,
                    venue,
                    instrument: instrument.0,
                    seq: trade_id,
                    exchange_ts: ts,
                    recv_ts: now,
                    publish_ts: now_ns(),
                    price: price.units(),
                    qty: qty.lots(),
                    ..MdEvent::default()
                };
                for o in &mut self.outboxes {
                    o.trade(slot, &ev);
                }
            }
            MdUpdate::End => {}
        }
    }

    fn mark(&mut self, slot: usize, now: u64) {
        self.views[slot].recv_ts = now;
        if !self.is_dirty[slot] {
            self.is_dirty[slot] = true;
            self.dirty.push(slot);
        }
    }

    /// Publishes every changed book: board first, then the subscribers' rings.
    fn publish(&mut self, _now: u64) {
        while let Some(slot) = self.dirty.pop() {
            self.is_dirty[slot] = false;
            let old = self.views[slot];
            let mut v = self.books[slot].view(old.venue, old.instrument);
            v.seq = old.seq + 1;
            v.exchange_ts = old.exchange_ts;
            v.recv_ts = old.recv_ts;
            self.views[slot] = v;
            self.board.publish(slot, &v);
            bump(&self.counters.publishes);
            let ev = book_event(slot, &v, now_ns());
            for o in &mut self.outboxes {
                o.book(slot, &ev);
            }
        }
    }

    /// The published view of `slot` (tests).
    pub fn view(&self, slot: usize) -> Option<&BookView> {
        self.views.get(slot)
    }

    /// Outbox counts of strategy `s` (tests).
    pub fn outbox(&self, s: usize) -> Option<OutboxCounts> {
        self.outboxes.get(s).map(|o| o.counts)
    }
}

/// The ring event announcing version `v` of book `slot`.
fn book_event(slot: usize, v: &BookView, publish_ts: u64) -> MdEvent {
    let (b, a) = (v.best_bid(), v.best_ask());
    MdEvent {
        kind: MdKind::Book as u8,
        slot: slot as u32,
        venue: v.venue,
        instrument: v.instrument.0,
        seq: v.seq,
        exchange_ts: v.exchange_ts,
        recv_ts: v.recv_ts,
        publish_ts,
        bid_px: b.map_or(0, |l| l.price.units()),
        bid_qty: b.map_or(0, |l| l.qty.lots()),
        ask_px: a.map_or(0, |l| l.price.units()),
        ask_qty: a.map_or(0, |l| l.qty.lots()),
        ..MdEvent::default()
    }
}
