//! The market-data thread with real shared-memory rings: books, conflation, and a
//! slow strategy that slows nobody.

use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crossbeam_queue::ArrayQueue;
use peregrine_queue::shm::{ShmSpsc, ShmSpscConsumer};
use peregrine_queue::WaitStrategy;
use peregrine_strategy::md::{board, BoardReader, BoardWriter, MdEvent, MdKind};
use peregrine_types::{InstrumentId, Price, Qty, Side};

use super::fanout::Outbox;
use super::thread::{MdCounters, MdThread, SlotMap};
use peregrine_venues::feed::{MarketFeed, MdUpdate};

/// A feed that hands out what a test queued.
#[derive(Debug, Default)]
struct Script(VecDeque<MdUpdate>);

impl MarketFeed for Script {
    fn poll(&mut self, _now: u64, out: &mut dyn FnMut(MdUpdate)) -> usize {
        let n = self.0.len();
        self.0.drain(..).for_each(out);
        n
    }
}

/// One script shared between the test and the thread's feed.
#[derive(Debug, Clone, Default)]
struct Shared(Arc<std::sync::Mutex<Script>>);

impl MarketFeed for Shared {
    fn poll(&mut self, now: u64, out: &mut dyn FnMut(MdUpdate)) -> usize {
        self.0.lock().unwrap().poll(now, out)
    }
}

fn level(side: Side, p: i64, q: i64) -> MdUpdate {
    MdUpdate::Level {
        instrument: InstrumentId(1),
        side,
        price: Price::from_raw(p),
        qty: Qty::from_raw(q),
        orders: 1,
        ts: 7,
    }
}

struct Rig {
    _dir: tempfile::TempDir,
    md: MdThread,
    feed: Shared,
    readers: Vec<ShmSpscConsumer<MdEvent>>,
    board: BoardReader,
}

/// Two strategies subscribed to book (venue 0, instrument 1), rings of `cap` slots.
fn rig(cap: usize) -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let map = SlotMap::new(1, &[1, 2]);
    let bpath = board::path(dir.path());
    let writer = BoardWriter::create(&bpath, &map.keys()).unwrap();
    let mut outboxes = Vec::new();
    let mut readers = Vec::new();
    for s in ["fast", "slow"] {
        let ring = ShmSpsc::<MdEvent>::create(&dir.path().join(s), cap).unwrap();
        readers.push(ring.consumer().unwrap());
        outboxes.push(Outbox::new(
            vec![true, false],
            Some(ring.producer().unwrap()),
        ));
    }
    let feed = Shared::default();
    let md = MdThread::new(
        vec![(0, Box::new(feed.clone()))],
        map,
        writer,
        outboxes,
        Arc::new(ArrayQueue::new(4)),
        Arc::new(MdCounters::new(2)),
        Arc::new(AtomicBool::new(false)),
        WaitStrategy::SpinThenYield.into(),
    );
    let board = BoardReader::attach(&bpath).unwrap();
    Rig {
        _dir: dir,
        md,
        feed,
        readers,
        board,
    }
}

impl Rig {
    fn send(&mut self, updates: &[MdUpdate]) {
        self.feed
            .0
            .lock()
            .unwrap()
            .0
            .extend(updates.iter().copied());
        self.md.poll_once();
    }
}

#[test]
fn a_venue_event_becomes_one_book_version_on_the_board_and_the_ring() {
    let mut r = rig(64);
    r.send(&[
        level(Side::Buy, 99, 5),
        level(Side::Sell, 101, 3),
        MdUpdate::End,
    ]);
    let b = r.board.read(0).unwrap();
    assert_eq!(b.seq, 1);
    assert_eq!(b.mid(), Some(Price::from_raw(100)));
    assert_eq!(b.exchange_ts, 7);
    let ev = r.readers[0].try_pop().unwrap();
    assert_eq!(ev.kind(), Some(MdKind::Book));
    assert_eq!((ev.seq, ev.bid_px, ev.ask_qty), (1, 99, 3));
    assert!(
        r.readers[0].try_pop().is_none(),
        "one event per venue event"
    );
    r.send(&[MdUpdate::Trade {
        instrument: InstrumentId(1),
        trade_id: 4,
        price: Price::from_raw(101),
        qty: Qty::from_raw(1),
        aggressor: Side::Buy,
        ts: 8,
    }]);
    let t = r.readers[0].try_pop().unwrap().trade();
    assert_eq!(
        (t.trade_id, t.price.units(), t.aggressor),
        (4, 101, Side::Buy)
    );
    // Instrument 2 is not subscribed; an unknown venue instrument is counted, not fatal.
    r.send(&[
        MdUpdate::Level {
            instrument: InstrumentId(2),
            side: Side::Buy,
            price: Price::from_raw(5),
            qty: Qty::from_raw(1),
            orders: 1,
            ts: 1,
        },
        level(Side::Buy, 98, 1),
        MdUpdate::Clear {
            instrument: InstrumentId(9),
        },
        MdUpdate::End,
    ]);
    assert_eq!(
        r.board.read(1).unwrap().best_bid().unwrap().price.units(),
        5
    );
    let ev = r.readers[0].try_pop().unwrap();
    assert_eq!(ev.slot, 0, "only the subscribed book reaches the ring");
    assert!(r.readers[0].try_pop().is_none());
}

/// The slow strategy never reads while 1,000 versions are published: the thread
/// never waits, the fast one gets every version, the slow one's ring conflates and
/// counts, and once it reads it finds the latest state.
#[test]
fn a_slow_strategy_slows_nobody_and_gets_the_latest_state() {
    let mut r = rig(8);
    for i in 0..1_000 {
        r.send(&[level(Side::Buy, 100 + i, 1), MdUpdate::End]);
        let ev = r.readers[0]
            .try_pop()
            .expect("the fast strategy gets every version");
        assert_eq!(ev.bid_px, 100 + i);
    }
    let slow = r.md.outbox(1).unwrap();
    assert_eq!(slow.pushed, 8, "the ring took what fit");
    assert_eq!(slow.skipped, 992);
    assert_eq!(r.md.outbox(0).unwrap().skipped, 0);
    // It reads now: 8 stale versions, then the thread delivers one with the latest.
    let mut last = None;
    while let Some(ev) = r.readers[1].try_pop() {
        last = Some(ev);
    }
    assert_eq!(last.unwrap().seq, 8);
    r.md.poll_once();
    let ev = r.readers[1].try_pop().unwrap();
    assert_eq!(
        (ev.seq, ev.bid_px),
        (1_000, 1_099),
        "conflated to the latest"
    );
    assert_eq!(ev.skipped, 992);
    assert!(r.readers[1].try_pop().is_none());
    // The board always had the latest.
    assert_eq!(r.board.read(0).unwrap().seq, 1_000);
}
