//! Tests of the maker's quoting: its mid, its own quotes, the anchor, a late feed, and
//! orders a person places by hand.

use super::*;
use crate::md::Level;
use crate::msg::{Command, Request};
use peregrine_queue::shm::{ShmSpsc, ShmSpscConsumer};

/// The default config without the bound around the last trade (these tests quote
/// at prices far from the default mid).
fn free() -> MakerConfig {
    MakerConfig {
        max_deviation: 0,
        ..MakerConfig::default()
    }
}

fn lvl(p: i64) -> Level {
    Level {
        price: Price::from_raw(p),
        qty: Qty::from_raw(1),
        orders: 1,
    }
}

#[test]
fn quotes_follow_the_book_and_skew_against_inventory() {
    let mut m = Maker::new(free());
    m.observe(&BookView::new(0, InstrumentId(1), &[lvl(99)], &[lvl(103)]));
    assert_eq!(m.mid(), 101);
    assert_eq!((m.target(Side::Buy), m.target(Side::Sell)), (99, 103));
    m.position = 4; // long: both quotes lower, so it sells sooner
    assert_eq!((m.target(Side::Buy), m.target(Side::Sell)), (95, 99));
    m.observe(&BookView::new(0, InstrumentId(1), &[], &[lvl(110)]));
    assert_eq!(m.mid(), 108);
    m.observe(&BookView::default());
    assert_eq!(m.mid(), 108, "an empty book keeps the last mid");
    m.position = 10;
    assert!(!m.room(Side::Buy) && m.room(Side::Sell));
}

#[test]
fn its_own_quotes_do_not_move_its_mid() {
    let mut m = Maker::new(free());
    m.observe(&BookView::new(0, InstrumentId(1), &[lvl(99)], &[lvl(103)]));
    assert_eq!(m.mid(), 101);
    // Short 3: its skewed quotes 102/106 are the whole book; the mid stays.
    m.position = -3;
    m.quoted(Side::Buy, 102);
    m.quoted(Side::Sell, 106);
    m.observe(&BookView::new(0, InstrumentId(1), &[lvl(102)], &[lvl(106)]));
    assert_eq!(m.mid(), 101, "its own skew does not feed back");
    // Someone else's ask below its own: that side counts.
    m.observe(&BookView::new(0, InstrumentId(1), &[lvl(102)], &[lvl(104)]));
    assert_eq!(m.mid(), 102);
    // More than its size at its price: others are there too.
    let big = Level {
        price: Price::from_raw(102),
        qty: Qty::from_raw(m.cfg.qty + 1),
        orders: 2,
    };
    m.observe(&BookView::new(0, InstrumentId(1), &[big], &[lvl(106)]));
    assert_eq!(m.mid(), 102 + m.cfg.half_spread);
    // Two orders at its price: one is someone else's.
    let two = Level {
        orders: 2,
        ..lvl(106)
    };
    m.observe(&BookView::new(0, InstrumentId(1), &[lvl(102)], &[two]));
    assert_eq!(m.mid(), 106 - m.cfg.half_spread);
}

#[test]
fn a_quote_the_feed_shows_late_is_still_its_own() {
    let mut m = Maker::new(free());
    // It quoted 98/102, then moved its bid to 97 and the venue acknowledged the
    // replace; the feed still shows the bid at 98.
    m.quoted(Side::Buy, 98);
    m.quoted(Side::Sell, 102);
    m.quoted(Side::Buy, 97);
    m.observe(&BookView::new(0, InstrumentId(1), &[lvl(98)], &[lvl(102)]));
    assert_eq!(m.mid(), 10_000, "neither side is anyone else's");
    // A price it quoted RECENT moves ago is forgotten.
    for p in 0..RECENT as i64 {
        m.quoted(Side::Buy, 90 - p);
    }
    m.observe(&BookView::new(0, InstrumentId(1), &[lvl(98)], &[]));
    assert_eq!(m.mid(), 98 + m.cfg.half_spread);
}

#[test]
fn the_anchor_pulls_the_mid_towards_the_reference() {
    let cfg = MakerConfig {
        anchor_per_mille: 100,
        ..free()
    };
    let mut m = Maker::new(cfg);
    // Someone else's quotes around 10_500: 10% of the way back to 10_000.
    m.observe(&BookView::new(
        0,
        InstrumentId(1),
        &[lvl(10_499)],
        &[lvl(10_501)],
    ));
    assert_eq!(m.mid(), 10_450);
    // An empty book: the mid converges on the reference.
    for _ in 0..200 {
        m.observe(&BookView::default());
    }
    assert!((m.mid() - 10_000).abs() < 10, "{}", m.mid());
    // Without an anchor the book alone sets it.
    let mut free = Maker::new(free());
    free.observe(&BookView::new(
        0,
        InstrumentId(1),
        &[lvl(10_499)],
        &[lvl(10_501)],
    ));
    assert_eq!(free.mid(), 10_500);
}

/// A venue where the maker alone rests orders and takers fill its quotes (its
/// inventory walks within the limit); the feed shows the book 0 to 2 moves late.
/// Returns how far its mid got from the start. `forgetful` keeps only its
/// current quote as "own" (the rule before the recent prices).
fn drift_with_a_late_feed(m: &mut Maker, forgetful: bool) -> i64 {
    let mut rng = peregrine_types::Rng::new(7);
    let mut shown = std::collections::VecDeque::new();
    let start = m.mid();
    let mut worst = 0;
    for _ in 0..20_000 {
        // A fill moves the position one lot, towards flat near the limit.
        let up = match m.position {
            p if p >= 8 => false,
            p if p <= -8 => true,
            _ => rng.chance(1, 2),
        };
        m.position += if up { 1 } else { -1 };
        let (bid, ask) = (m.target(Side::Buy), m.target(Side::Sell));
        if forgetful {
            m.recent = [[bid; RECENT], [ask; RECENT]];
        } else {
            m.quoted(Side::Buy, bid);
            m.quoted(Side::Sell, ask);
        }
        shown.push_back((bid, ask));
        while shown.len() > 1 + rng.below(3) as usize {
            shown.pop_front();
        }
        let (b, a) = shown[0];
        m.observe(&BookView::new(0, InstrumentId(1), &[lvl(b)], &[lvl(a)]));
        worst = worst.max((m.mid() - start).abs());
    }
    worst
}

#[test]
fn a_late_feed_does_not_walk_the_mid() {
    let mut m = Maker::new(free());
    assert_eq!(drift_with_a_late_feed(&mut m, false), 0);
    // Negative control: knowing only its current quote, the same flow walks it.
    let mut forgetful = Maker::new(free());
    let walked = drift_with_a_late_feed(&mut forgetful, true);
    assert!(walked > 100, "the control must walk: {walked}");
    // The anchor holds even the forgetful maker (a walk of up to 8 units per
    // update against a pull of 1%: within about 800).
    let anchored = MakerConfig {
        anchor_per_mille: 10,
        ..free()
    };
    let held = drift_with_a_late_feed(&mut Maker::new(anchored), true);
    assert!(
        held <= 800 && held * 4 < walked,
        "{held} (unanchored: {walked})"
    );
}

/// An [`Api`] on a ring in a temporary directory, and the ring's other end.
fn api(dir: &tempfile::TempDir) -> (Api, ShmSpscConsumer<Request>) {
    let ring = ShmSpsc::<Request>::create(&dir.path().join("submit"), 1024).unwrap();
    (
        Api::new(ring.producer().unwrap(), None),
        ring.consumer().unwrap(),
    )
}

/// Every new order the maker sent since the last call: (client id, side, price).
fn sent(rx: &mut ShmSpscConsumer<Request>) -> Vec<(u64, Side, i64)> {
    let mut out = Vec::new();
    while let Some(r) = rx.try_pop() {
        if let Ok(Command::New(o)) = r.decode() {
            out.push((r.client_id, o.side, o.price.units()));
        }
    }
    out
}

fn event(client_id: u64, price: i64) -> Event {
    Event {
        client_id,
        price,
        ..Event::default()
    }
}

#[test]
fn an_order_far_from_the_market_does_not_move_the_mid() {
    // The demo's case: the market trades at 100.00, a person bids 3 at 94.50 while
    // the maker's own bid is briefly missing from the book.
    let mut m = Maker::new(MakerConfig::default());
    m.last_trade = Some(10_000);
    m.quoted(Side::Sell, 10_002);
    m.observe(&BookView::new(
        0,
        InstrumentId(1),
        &[lvl(9_450)],
        &[lvl(10_002)],
    ));
    assert_eq!(m.mid(), 10_000);
    // Near the market, someone else's bid does move it.
    m.observe(&BookView::new(
        0,
        InstrumentId(1),
        &[lvl(9_990)],
        &[lvl(10_002)],
    ));
    assert_eq!(m.mid(), 9_992);
    // A mid left far away (by a market that moved and came back) returns within the
    // bound, and so do both quotes, whatever the inventory.
    m.mid = 9_000;
    m.observe(&BookView::default());
    assert_eq!(m.mid(), 10_000 - m.cfg.max_deviation);
    m.position = -10;
    for side in [Side::Buy, Side::Sell] {
        assert!(
            (m.target(side) - 10_000).abs() <= m.cfg.max_deviation,
            "{side:?}"
        );
    }
    // The market moves: the reference is the last trade.
    m.last_trade = Some(10_400);
    m.observe(&BookView::new(
        0,
        InstrumentId(1),
        &[lvl(10_398)],
        &[lvl(10_402)],
    ));
    assert_eq!(m.mid(), 10_400);
}

/// A kill switch engaged for `ticks` timer ticks (every order refused), then
/// released: how many orders the maker sent while killed, and how many ticks after
/// the release it was quoting both sides again.
fn kill_and_release(ticks: u32) -> (usize, u32) {
    let dir = tempfile::tempdir().unwrap();
    let (mut api, mut rx) = api(&dir);
    let mut m = Maker::new(MakerConfig::default());
    m.on_start(&mut api);
    let mut while_killed = 0;
    for _ in 0..ticks {
        for (id, _, p) in sent(&mut rx) {
            while_killed += 1;
            m.on_reject(&mut api, &event(id, p));
        }
        m.on_timer(&mut api, 0);
    }
    for after in 0..=MAX_HOLD * 2 {
        let quoted = sent(&mut rx);
        for (id, _, p) in &quoted {
            m.on_ack(&mut api, &event(*id, *p));
        }
        if m.quotes.iter().all(|q| q.is_some_and(|q| q.acked)) {
            return (while_killed, after);
        }
        m.on_timer(&mut api, 0);
    }
    panic!("not quoting again after the release");
}

#[test]
fn a_kill_switch_gets_a_few_attempts_a_second_and_quoting_resumes_after_it() {
    // 2,000 ticks (2 s at up's 1 ms timer): both sides back off to MAX_HOLD.
    let (attempts, resumed) = kill_and_release(2_000);
    assert!(
        attempts <= 2 * 20,
        "{attempts} orders sent against a kill switch"
    );
    assert!(
        resumed <= MAX_HOLD + 1,
        "quoting resumed {resumed} ticks after the release"
    );
    // The bound is the backoff's: without it, every tick sends (control).
    let dir = tempfile::tempdir().unwrap();
    let (mut api, mut rx) = api(&dir);
    let mut m = Maker::new(MakerConfig::default());
    let mut flood = 0;
    for _ in 0..2_000 {
        for (id, _, _) in sent(&mut rx) {
            flood += 1;
            m.done(id); // a reject without the hold
        }
        m.on_timer(&mut api, 0);
    }
    assert!(flood >= 2 * 1_999, "the control floods: {flood}");
}
