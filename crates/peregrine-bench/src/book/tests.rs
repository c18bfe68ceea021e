//! The workloads are what their names and docs say.

use peregrine_book::{Event, OrderBook};
use peregrine_types::Side;

use super::workload::{self, spec_for, to_command, Op};

#[test]
fn ferrox_mix_follows_seed_002() {
    let s = workload::ferrox_mixed();
    assert_eq!(s.steps.len(), 10_000);
    for (i, (op, timed)) in s.steps.iter().enumerate() {
        assert!(timed);
        match (i % 10, op) {
            (
                0..=5,
                Op::Add {
                    price,
                    side,
                    qty: 10,
                    ioc: false,
                    ..
                },
            ) => {
                // Adds alternate bid at 100 / ask at 200 (counting adds, not i).
                assert!(matches!(
                    (side, price),
                    (Side::Buy, 100) | (Side::Sell, 200)
                ));
            }
            (6 | 7, Op::Cancel { .. }) => {}
            (
                8 | 9,
                Op::Add {
                    side: Side::Buy,
                    price: 200,
                    qty: 10,
                    ioc: false,
                    ..
                },
            ) => {}
            other => panic!("step {i}: unexpected {other:?}"),
        }
    }
}

#[test]
fn market_mix_has_the_documented_shape() {
    let n = 50_000;
    let s = workload::market_mix("t", 1_000, 900, n);
    let (mut replaces, mut gtc, mut ioc, mut cancels) = (0, 0, 0, 0);
    for (op, _) in &s.steps {
        match op {
            Op::Replace { .. } => replaces += 1,
            Op::Add { ioc: true, .. } => ioc += 1,
            Op::Add { .. } => gtc += 1,
            Op::Cancel { .. } => cancels += 1,
            Op::Stop { .. } | Op::Iceberg { .. } => panic!("the market mix has no {op:?}"),
        }
    }
    let pct = |x: usize| 100.0 * x as f64 / s.steps.len() as f64;
    assert!(
        (78.0..86.0).contains(&pct(replaces)),
        "replaces {}",
        pct(replaces)
    );
    assert!((7.0..12.0).contains(&pct(gtc)), "gtc {}", pct(gtc));
    assert!((2.0..4.5).contains(&pct(ioc)), "ioc {}", pct(ioc));
    assert!(
        (4.0..8.0).contains(&pct(cancels)),
        "cancels {}",
        pct(cancels)
    );
    // Replay on a real book: about 6% of commands trade, ~1,000 orders on ~750 levels.
    let mut book: OrderBook = OrderBook::new(spec_for(&s), s.capacity);
    let mut ev: Vec<Event> = Vec::new();
    for op in &s.setup {
        book.execute(&to_command(op, 0), &mut ev);
    }
    let mut trading = 0;
    let mut resting = Vec::new();
    for (i, (op, _)) in s.steps.iter().enumerate() {
        ev.clear();
        book.execute(&to_command(op, 0), &mut ev);
        trading += usize::from(ev.iter().any(|e| matches!(e, Event::Fill(_))));
        if i % 1_000 == 0 {
            resting.push(book.len());
        }
    }
    let trade_pct = pct(trading);
    assert!(
        (3.0..10.0).contains(&trade_pct),
        "trading commands {trade_pct}%"
    );
    let avg = resting.iter().sum::<usize>() / resting.len();
    assert!((850..1_150).contains(&avg), "average resting {avg}");
    let mut levels = 0;
    for side in [Side::Buy, Side::Sell] {
        book.visit_depth(side, usize::MAX, &mut |_, _, _| levels += 1);
    }
    assert!((600..900).contains(&levels), "levels {levels}");
}

#[test]
fn cancel_middle_always_hits_a_live_order_in_the_middle() {
    let s = workload::cancel_middle_1k(2_000);
    let mut book: OrderBook = OrderBook::new(spec_for(&s), s.capacity);
    let mut ev: Vec<Event> = Vec::new();
    for op in &s.setup {
        book.execute(&to_command(op, 0), &mut ev);
    }
    for (op, timed) in &s.steps {
        ev.clear();
        book.execute(&to_command(op, 0), &mut ev);
        if *timed {
            assert!(matches!(ev[0], Event::Cancelled(_)), "{ev:?}");
        }
        assert_eq!(book.len(), if *timed { 999 } else { 1_000 });
    }
}

#[test]
fn sweeps_fill_exactly_n_levels() {
    for levels in [1, 5, 50] {
        let s = workload::sweep(levels, 50);
        let mut book: OrderBook = OrderBook::new(spec_for(&s), s.capacity);
        let mut ev: Vec<Event> = Vec::new();
        for op in &s.setup {
            book.execute(&to_command(op, 0), &mut ev);
        }
        for (op, timed) in &s.steps {
            ev.clear();
            book.execute(&to_command(op, 0), &mut ev);
            if *timed {
                let prices: std::collections::BTreeSet<i64> = ev
                    .iter()
                    .filter_map(|e| match e {
                        Event::Fill(f) => Some(f.price.units()),
                        _ => None,
                    })
                    .collect();
                let fills = ev.iter().filter(|e| matches!(e, Event::Fill(_))).count();
                assert_eq!((fills as i64, prices.len() as i64), (levels, levels));
                assert_eq!(*prices.first().unwrap(), 100_000);
            }
        }
    }
}

#[test]
fn ops_stay_32_bytes() {
    // The step list of every workload is read in the timed loop: the venue's ops must
    // not widen it (that would change the existing workloads' numbers).
    assert_eq!(std::mem::size_of::<Op>(), 32);
}

#[test]
fn venue_mix_has_the_documented_shape_and_cascades() {
    let n = 50_000;
    let (s, counts) = super::venue::generate("t", 1_000, 700, n);
    assert_eq!(s.steps.len(), n);
    let (mut stops, mut icebergs, mut trailing) = (0, 0, 0);
    for (op, _) in &s.steps {
        match op {
            Op::Stop { kind, .. } => {
                stops += 1;
                trailing += usize::from(matches!(
                    kind,
                    workload::StopKind::TrailTicks | workload::StopKind::TrailBps
                ));
            }
            Op::Iceberg { .. } => icebergs += 1,
            _ => {}
        }
    }
    let pct = |x: usize| 100.0 * x as f64 / n as f64;
    // A stop step cancels a parked stop instead when 600 are parked.
    assert!((7.0..10.5).contains(&pct(stops)), "stops {}", pct(stops));
    assert!(
        (4.5..5.5).contains(&pct(icebergs)),
        "icebergs {}",
        pct(icebergs)
    );
    assert!((20.0..40.0).contains(&(100.0 * trailing as f64 / stops as f64)));
    // Replayed on a fresh book, the steps elect what the generator saw, in cascades,
    // and nothing is rejected.
    let mut book: OrderBook = OrderBook::new(spec_for(&s), s.capacity);
    let mut ev: Vec<Event> = Vec::new();
    for op in &s.setup {
        book.execute(&to_command(op, 0), &mut ev);
    }
    let (mut elected, mut largest, mut big, mut rejects) = (0, 0, 0, 0);
    let mut iceberg_fills = 0;
    let ids: std::collections::HashSet<u64> = s
        .steps
        .iter()
        .filter_map(|(op, _)| match op {
            Op::Iceberg { id, .. } => Some(*id),
            _ => None,
        })
        .collect();
    for (i, (op, _)) in s.steps.iter().enumerate() {
        ev.clear();
        book.execute(&to_command(op, i as u64 + 1), &mut ev);
        let t = ev
            .iter()
            .filter(|e| matches!(e, Event::Triggered(_)))
            .count();
        elected += t;
        largest = largest.max(t);
        big += usize::from(t >= 10);
        rejects += ev
            .iter()
            .filter(|e| matches!(e, Event::Rejected(_)))
            .count();
        iceberg_fills += ev
            .iter()
            .filter(|e| matches!(e, Event::Fill(f) if ids.contains(&f.maker_id.0)))
            .count();
    }
    book.check_invariants().unwrap();
    assert_eq!(
        (elected, largest, big, rejects),
        (
            counts.elected,
            counts.largest,
            counts.cascades_10,
            counts.rejected
        )
    );
    assert_eq!(rejects, 0);
    assert!(
        elected > n / 20,
        "elected {elected} {counts:?} stops {}",
        pct(stops)
    );
    assert!(big > 20 && largest >= 15, "cascades: {counts:?}");
    assert!(
        counts.refills > 500 && iceberg_fills > counts.refills,
        "{counts:?}"
    );
}
