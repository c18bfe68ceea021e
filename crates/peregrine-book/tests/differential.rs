//! Differential tests: the fast book (with both level indexes) against the reference
//! book on random command streams. Every command must give identical events, identical
//! resting orders in priority order, the same state hash, and pass the invariant
//! checkers.

mod common;

use common::venue::{scheduled_spec, venue_spec, Coverage, VenueGenerator};
use common::{orders, Generator, Ledger};
use peregrine_book::{
    BTreeLevels, Book, Event, HashIds, IdWindow, Ladder, LevelIndex, OrderBook, OrderIds,
    ReferenceBook,
};
use proptest::prelude::*;

/// Small enough that `BookFull` happens.
const CAPACITY: usize = 16;

fn compare<L: LevelIndex>(seed: u64, commands: usize, capacity: usize) -> Result<(), String> {
    compare_with::<L, IdWindow>(Generator::new(seed), seed, commands, capacity)
}

fn compare_with<L: LevelIndex, I: OrderIds>(
    mut gen: Generator,
    seed: u64,
    commands: usize,
    capacity: usize,
) -> Result<(), String> {
    let mut fast: OrderBook<L, I> = OrderBook::new(common::spec(), capacity);
    let mut reference = ReferenceBook::new(common::spec(), capacity);
    let mut ledger = Ledger::default();
    let (mut ev_fast, mut ev_ref): (Vec<Event>, Vec<Event>) = (Vec::new(), Vec::new());
    for step in 0..commands {
        let cmd = gen.next_command();
        ev_fast.clear();
        ev_ref.clear();
        fast.execute(&cmd, &mut ev_fast);
        reference.execute(&cmd, &mut ev_ref);
        let ctx = || format!("seed {seed} step {step} cmd {cmd:?}");
        if ev_fast != ev_ref {
            return Err(format!("{}\nfast: {ev_fast:#?}\nref:  {ev_ref:#?}", ctx()));
        }
        let resting = orders(&fast);
        if resting != orders(&reference) {
            return Err(format!("{}: resting orders differ", ctx()));
        }
        fast.check_invariants()
            .map_err(|e| format!("{}: {e}", ctx()))?;
        ledger.observe(&ev_fast);
        ledger
            .check(&resting)
            .map_err(|e| format!("{}: {e}", ctx()))?;
        if step % 64 == 0 && fast.state_hash() != reference.state_hash() {
            return Err(format!("{}: state hash differs", ctx()));
        }
    }
    if fast.state_hash() != reference.state_hash() {
        return Err(format!("seed {seed}: final state hash differs"));
    }
    Ok(())
}

/// 24 seeds × 5,000 commands = 120,000 commands with a tiny arena (full often).
#[test]
fn ladder_matches_reference_over_many_seeds() {
    for seed in 0..24 {
        compare::<Ladder>(seed, 5_000, CAPACITY).unwrap();
    }
}

/// Deeper books: 6 seeds × 5,000 commands with room for hundreds of orders.
#[test]
fn ladder_matches_reference_with_deep_books() {
    for seed in 50..56 {
        compare::<Ladder>(seed, 5_000, 1024).unwrap();
    }
}

#[test]
fn btree_matches_reference_over_many_seeds() {
    for seed in 100..112 {
        compare::<BTreeLevels>(seed, 5_000, CAPACITY).unwrap();
    }
}

/// Order ids far apart and out of order: the id window slides constantly and most
/// live orders sit in its overflow map.
#[test]
fn spread_ids_match_reference() {
    for seed in 200..212 {
        compare_with::<Ladder, IdWindow>(Generator::spread(seed), seed, 5_000, CAPACITY).unwrap();
    }
    for seed in 212..215 {
        compare_with::<Ladder, IdWindow>(Generator::spread(seed), seed, 5_000, 1024).unwrap();
    }
}

/// The hash-map baseline still obeys the same rules.
#[test]
fn hashbrown_ids_match_reference() {
    for seed in 300..306 {
        compare_with::<Ladder, HashIds>(Generator::new(seed), seed, 5_000, CAPACITY).unwrap();
        compare_with::<Ladder, HashIds>(Generator::spread(seed), seed, 5_000, CAPACITY).unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Short streams from arbitrary seeds (shrinks to the smallest failing prefix).
    #[test]
    fn prop_fast_book_equals_reference(seed in any::<u64>(), len in 1usize..400) {
        prop_assert_eq!(compare::<Ladder>(seed, len, CAPACITY), Ok(()));
    }

    /// The same with ids far apart and out of order.
    #[test]
    fn prop_spread_ids_equal_reference(seed in any::<u64>(), len in 1usize..400) {
        let gen = Generator::spread(seed);
        prop_assert_eq!(compare_with::<Ladder, IdWindow>(gen, seed, len, CAPACITY), Ok(()));
    }
}

/// The generator really exercises what it claims to: every event kind and every
/// reject reason the book can produce on its own shows up.
#[test]
fn generator_covers_every_outcome() {
    use peregrine_book::{CancelReason, RejectReason};
    use std::collections::HashSet;
    let mut gen = Generator::new(7);
    let mut book: OrderBook = OrderBook::new(common::spec(), CAPACITY);
    let (mut rejects, mut cancels, mut kinds) = (HashSet::new(), HashSet::new(), HashSet::new());
    let mut ev = Vec::new();
    for _ in 0..50_000 {
        ev.clear();
        book.execute(&gen.next_command(), &mut ev);
        for e in &ev {
            kinds.insert(std::mem::discriminant(e));
            match e {
                Event::Rejected(r) => {
                    rejects.insert(r.reason);
                }
                Event::Cancelled(c) => {
                    cancels.insert(c.reason);
                }
                _ => {}
            }
        }
    }
    assert_eq!(kinds.len(), 8, "every event kind of the plain stream");
    for r in &RejectReason::ALL[..16] {
        if !matches!(
            r,
            RejectReason::UnknownInstrument | RejectReason::InsufficientBalance
        ) {
            assert!(rejects.contains(r), "never rejected with {r:?}");
        }
    }
    for c in [
        CancelReason::UserRequested,
        CancelReason::MassCancel,
        CancelReason::Unfilled,
        CancelReason::FokUnfillable,
        CancelReason::SelfTrade,
        CancelReason::Expired,
    ] {
        assert!(cancels.contains(&c), "never cancelled with {c:?}");
    }
}

/// Runs a venue stream through the fast book (index `L`) and the reference book:
/// identical events, resting orders and venue state after every step, the fast
/// book's invariants, quantity conservation over resting and parked orders.
fn compare_venue<L: LevelIndex>(
    mut gen: VenueGenerator,
    spec: peregrine_types::InstrumentSpec,
    seed: u64,
    steps: usize,
    capacity: usize,
    parked: usize,
) -> Result<Coverage, String> {
    let mut fast: OrderBook<L> = OrderBook::with_capacities(spec.clone(), capacity, parked);
    let mut reference = ReferenceBook::with_capacities(spec, capacity, parked);
    let mut ledger = Ledger::default();
    let mut coverage = Coverage::default();
    let (mut ev_fast, mut ev_ref): (Vec<Event>, Vec<Event>) = (Vec::new(), Vec::new());
    let mut was_quiet = fast.is_quiet();
    for step in 0..steps {
        let op = gen.next_op();
        ev_fast.clear();
        ev_ref.clear();
        op.apply(&mut fast, &mut ev_fast);
        op.apply(&mut reference, &mut ev_ref);
        let ctx = || format!("seed {seed} step {step} op {op:?}");
        if ev_fast != ev_ref {
            return Err(format!("{}\nfast: {ev_fast:#?}\nref:  {ev_ref:#?}", ctx()));
        }
        let resting = orders(&fast);
        if resting != orders(&reference) {
            return Err(format!(
                "{}: resting orders differ\nfast {resting:#?}\nref {:#?}",
                ctx(),
                orders(&reference)
            ));
        }
        let venue = fast.venue_state();
        if venue != reference.venue_state() {
            return Err(format!(
                "{}: venue state differs\nfast {venue:#?}\nref {:#?}",
                ctx(),
                reference.venue_state()
            ));
        }
        fast.check_invariants()
            .map_err(|e| format!("{}: {e}", ctx()))?;
        ledger.observe(&ev_fast);
        coverage.observe(&ev_fast);
        if fast.is_quiet() {
            coverage.quiet_steps += 1;
            coverage.quiet_entries += usize::from(!was_quiet);
        }
        was_quiet = fast.is_quiet();
        ledger
            .check_venue(&resting, &venue.parked, venue.phase.is_continuous())
            .map_err(|e| format!("{}: {e}", ctx()))?;
        if step % 64 == 0 && fast.state_hash() != reference.state_hash() {
            return Err(format!("{}: state hash differs", ctx()));
        }
    }
    if fast.state_hash() != reference.state_hash() {
        return Err(format!("seed {seed}: final state hash differs"));
    }
    Ok(coverage)
}

/// Stops, icebergs, lists, protections, halts and auctions against the reference:
/// 16 seeds x 3,000 steps with a tiny book (full often) and a deeper one.
#[test]
fn venue_streams_match_reference() {
    for seed in 0..8 {
        compare_venue::<Ladder>(VenueGenerator::new(seed), venue_spec(), seed, 3_000, 16, 8)
            .unwrap();
    }
    for seed in 8..16 {
        compare_venue::<Ladder>(
            VenueGenerator::new(seed),
            venue_spec(),
            seed,
            3_000,
            512,
            256,
        )
        .unwrap();
    }
}

/// The quiet path (nothing parked, no live list, no protection: a plain order or
/// cancel leaves out the venue rules' per-fill work and the command's finish)
/// against the reference, in streams that go quiet and back many times. The fast
/// book's invariants include that a book saying it is quiet is.
#[test]
fn quiet_spells_match_reference() {
    let (mut steps, mut entries) = (0, 0);
    for seed in 80..88 {
        let gen = VenueGenerator::with_quiet_spells(seed);
        let c = compare_venue::<Ladder>(gen, venue_spec(), seed, 3_000, 512, 256).unwrap();
        steps += c.quiet_steps;
        entries += c.quiet_entries;
    }
    eprintln!("quiet after {steps} of 24,000 steps, entered {entries} times");
    assert!(
        (2_000..20_000).contains(&steps) && entries >= 40,
        "the streams go quiet and back: quiet after {steps} steps, entered {entries} times"
    );
}

/// The same over the `BTreeMap` index.
#[test]
fn venue_streams_match_reference_btree() {
    for seed in 40..44 {
        compare_venue::<BTreeLevels>(
            VenueGenerator::new(seed),
            venue_spec(),
            seed,
            3_000,
            256,
            64,
        )
        .unwrap();
    }
}

/// The daily schedule (opening and closing auctions) with the clock jumping hours.
#[test]
fn scheduled_streams_match_reference() {
    for seed in 60..66 {
        let gen = VenueGenerator::with_hours(seed);
        compare_venue::<Ladder>(gen, scheduled_spec(), seed, 3_000, 512, 256).unwrap();
    }
}

/// The venue stream reaches what it claims to: every event kind, every reject and
/// cancel reason a lone book can produce, triggers, releases, auction fills.
#[test]
fn venue_generator_covers_every_outcome() {
    use peregrine_book::{CancelReason, RejectReason};
    let mut all = Coverage::default();
    for seed in 0..8 {
        // Half the seeds with a book of 6 orders: triggered orders often find it full.
        let cap = if seed % 2 == 0 { 16 } else { 6 };
        let c =
            compare_venue::<Ladder>(VenueGenerator::new(seed), venue_spec(), seed, 3_000, cap, 8)
                .unwrap();
        all.kinds.extend(c.kinds);
        all.rejects.extend(c.rejects);
        all.cancels.extend(c.cancels);
        all.triggered += c.triggered;
        all.released += c.released;
        all.auction_fills += c.auction_fills;
    }
    eprintln!(
        "kinds {} rejects {:?} cancels {:?} triggered {} released {} auction fills {}",
        all.kinds.len(),
        all.rejects,
        all.cancels,
        all.triggered,
        all.released,
        all.auction_fills
    );
    assert_eq!(all.kinds.len(), 12, "every event kind");
    for r in RejectReason::ALL {
        if !matches!(
            r,
            RejectReason::UnknownInstrument | RejectReason::InsufficientBalance
        ) {
            assert!(all.rejects.contains(&r), "never rejected with {r:?}");
        }
    }
    for c in CancelReason::ALL {
        // Refused needs a pre-match stage that refuses (tests/venue_rules.rs).
        if c != CancelReason::Refused {
            assert!(all.cancels.contains(&c), "never cancelled with {c:?}");
        }
    }
    assert!(
        all.triggered > 100 && all.released > 10 && all.auction_fills > 10,
        "{all:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Short venue streams from arbitrary seeds.
    #[test]
    fn prop_venue_fast_book_equals_reference(seed in any::<u64>(), len in 1usize..300) {
        let r = compare_venue::<Ladder>(VenueGenerator::new(seed), venue_spec(), seed, len, 16, 8);
        prop_assert!(r.is_ok(), "{}", r.err().unwrap_or_default());
    }
}

/// The uncross price, volume and surplus by brute force over every grid price in the
/// band, from the resting orders alone (independent of both books).
fn brute_uncross(
    orders: &[peregrine_book::RestingOrder],
    spec: &peregrine_types::InstrumentSpec,
    reference: i64,
) -> (i64, i64, i64) {
    use peregrine_types::Side;
    let mut best = (0i64, 0i64, 0i64);
    let tick = spec.tick_size;
    let mut p = (spec.band_low() + tick - 1) / tick * tick;
    while p <= spec.band_high() {
        let buy: i64 = orders
            .iter()
            .filter(|o| o.side == Side::Buy && o.price.units() >= p)
            .map(|o| o.qty.lots())
            .sum();
        let sell: i64 = orders
            .iter()
            .filter(|o| o.side == Side::Sell && o.price.units() <= p)
            .map(|o| o.qty.lots())
            .sum();
        let (v, s) = (buy.min(sell), (buy - sell).abs());
        let key = |(p, v, s): (i64, i64, i64)| (-v, s, (p - reference).abs(), p);
        if v > 0 && (best.1 == 0 || key((p, v, s)) < key(best)) {
            best = (p, v, s);
        }
        p += spec.tick_size;
    }
    best
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Random call-auction books (prices and sizes drawn from a few values, so ties in
    /// volume, surplus and distance are common; the reference price on and off the
    /// grid): the fast book's indicative uncross equals a brute-force search, the
    /// reference book agrees event for event, and the uncross trades exactly the volume.
    #[test]
    fn prop_uncross_matches_brute_force(
        orders in proptest::collection::vec((any::<bool>(), 0i64..9, 1i64..6, 0u8..4), 1..30),
        reference in 9_985i64..10_016,
        tick in prop_oneof![Just(2i64), Just(5i64)],
    ) {
        use peregrine_book::{Action, Command, MarketCommand, MarketOp};
        use peregrine_types::{AuctionKind, Side, Timestamp};
        let spec = peregrine_types::InstrumentSpec {
            reference_price: reference,
            tick_size: tick,
            ..common::spec()
        };
        let mut fast: OrderBook = OrderBook::new(spec.clone(), 64);
        let mut slow = ReferenceBook::new(spec.clone(), 64);
        let start = Command {
            ts: Timestamp(1),
            action: Action::Market(MarketCommand {
                instrument: common::INST,
                op: MarketOp::StartAuction { kind: AuctionKind::Manual, duration_ns: 0 },
            }),
        };
        let mut steps = vec![start];
        for (i, (buy, k, q, iceberg)) in orders.iter().enumerate() {
            let side = if *buy { Side::Buy } else { Side::Sell };
            let mut o =
                common::limit(i as u64 + 1, 1 + (i % 3) as u32, side, 9_990 + tick * k, 20 * q);
            o.client_id = peregrine_types::ClientOrderId(i as u64);
            let action = if *iceberg == 0 && *q > 1 {
                Action::NewExt(peregrine_book::ExtOrder {
                    order: o,
                    trigger: peregrine_book::Trigger::NONE,
                    display: peregrine_types::Qty::from_raw(20),
                })
            } else {
                Action::New(o)
            };
            steps.push(Command { ts: Timestamp(2 + i as u64), action });
        }
        for cmd in &steps {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            fast.execute(cmd, &mut a);
            slow.execute(cmd, &mut b);
            prop_assert_eq!(&a, &b);
        }
        let resting = orders_of(&fast);
        let (p, v, s) = brute_uncross(&resting, &spec, reference);
        let ind = fast.venue_state().indicative;
        prop_assert_eq!((ind.0.units(), ind.1.lots(), ind.2.lots()), (p, v, s));
        let uncross = Command {
            ts: Timestamp(100),
            action: Action::Market(MarketCommand { instrument: common::INST, op: MarketOp::Uncross }),
        };
        let (mut a, mut b) = (Vec::new(), Vec::new());
        fast.execute(&uncross, &mut a);
        slow.execute(&uncross, &mut b);
        prop_assert_eq!(&a, &b);
        let traded: i64 = a
            .iter()
            .filter_map(|e| match e {
                Event::Fill(f) => {
                    assert!(f.auction && f.price.units() == p);
                    Some(f.qty.lots())
                }
                _ => None,
            })
            .sum();
        prop_assert_eq!(traded, v);
        fast.check_invariants().map_err(TestCaseError::fail)?;
    }
}

fn orders_of(book: &OrderBook) -> Vec<peregrine_book::RestingOrder> {
    orders(book)
}
