//! The multi-instrument engine: routing, id assignment, unknown and halted instruments.

mod common;

use common::*;
use peregrine_book::{Event, MatchingEngine, RejectReason};
use peregrine_types::{InstrumentId, InstrumentSpec, InstrumentStatus, Side, TimeInForce};

fn engine() -> MatchingEngine {
    let specs = [
        common::spec(),
        InstrumentSpec {
            id: InstrumentId(3),
            ..common::spec()
        },
    ];
    MatchingEngine::new(&specs, 64).unwrap()
}

fn exec(e: &mut MatchingEngine, cmd: peregrine_book::Command) -> Vec<Event> {
    let mut ev = Vec::new();
    e.execute(&cmd, &mut ev);
    ev
}

#[test]
fn routes_by_instrument_and_assigns_ids() {
    let mut e = engine();
    let a = exec(&mut e, new(1, limit(0, 1, Side::Buy, 9_990, 20)));
    let b = exec(
        &mut e,
        new(1, limit(0, 1, Side::Buy, 9_990, 20).on(InstrumentId(3))),
    );
    assert!(matches!(a[0], Event::Accepted(x) if x.id.0 == 1 && x.instrument == InstrumentId(1)));
    assert!(matches!(b[0], Event::Accepted(x) if x.id.0 == 2 && x.instrument == InstrumentId(3)));
    assert_eq!(e.book(InstrumentId(1)).unwrap().len(), 1);
    assert_eq!(e.book(InstrumentId(3)).unwrap().len(), 1);
    // A sell on instrument 3 does not see instrument 1's bid.
    let c = exec(
        &mut e,
        new(1, limit(0, 2, Side::Sell, 9_990, 20).on(InstrumentId(3))),
    );
    assert!(c
        .iter()
        .any(|x| matches!(x, Event::Fill(f) if f.maker_id.0 == 2)));
    assert_eq!(e.book(InstrumentId(1)).unwrap().len(), 1);
}

#[test]
fn unknown_instrument_rejects_every_command() {
    let mut e = engine();
    let before = e.state_hash();
    for cmd in [
        new(1, limit(0, 1, Side::Buy, 9_990, 20).on(InstrumentId(2))),
        new(
            1,
            limit(0, 1, Side::Buy, 9_990, 20).on(InstrumentId(70_000)),
        ),
    ] {
        let ev = exec(&mut e, cmd);
        assert!(
            matches!(ev[..], [Event::Rejected(r)] if r.reason == RejectReason::UnknownInstrument)
        );
    }
    let mut c = cancel(1, 1, 1);
    if let peregrine_book::Action::Cancel(x) = &mut c.action {
        x.instrument = InstrumentId(2);
    }
    assert!(
        matches!(exec(&mut e, c)[..], [Event::Rejected(r)] if r.reason == RejectReason::UnknownInstrument)
    );
    // Only the id counter moved.
    assert_ne!(e.state_hash(), before);
    assert_eq!(e.books().map(|b| b.len()).sum::<usize>(), 0);
}

#[test]
fn halted_instrument_rejects_new_orders_only_there() {
    let mut e = engine();
    exec(&mut e, set_status(1, InstrumentStatus::Halted));
    let ev = exec(&mut e, new(1, limit(0, 1, Side::Buy, 9_990, 20)));
    assert!(matches!(ev[..], [Event::Rejected(r)] if r.reason == RejectReason::InstrumentHalted));
    let ev = exec(
        &mut e,
        new(1, limit(0, 1, Side::Buy, 9_990, 20).on(InstrumentId(3))),
    );
    assert!(matches!(ev[0], Event::Accepted(_)));
}

#[test]
fn tick_expires_in_every_book() {
    let mut e = engine();
    let gtd = limit(0, 1, Side::Buy, 9_990, 20)
        .with_tif(TimeInForce::Gtd)
        .with_expiry(50);
    exec(&mut e, new(1, gtd));
    exec(&mut e, new(1, gtd.on(InstrumentId(3))));
    let ev = exec(&mut e, tick(50));
    assert_eq!(
        ev.iter()
            .filter(|x| matches!(x, Event::Cancelled(_)))
            .count(),
        2
    );
}

#[test]
fn bad_specs_are_refused() {
    let bad = InstrumentSpec {
        tick_size: 0,
        ..common::spec()
    };
    assert!(MatchingEngine::<peregrine_book::Ladder>::new(&[bad], 8).is_err());
    let dup = [common::spec(), common::spec()];
    assert!(MatchingEngine::<peregrine_book::Ladder>::new(&dup, 8).is_err());
}

/// The pre-match seam: a stage that refuses large orders sees every new order and
/// replace (with its assigned id) before the book, and its reject leaves books untouched.
#[test]
fn pre_match_stage_can_refuse_before_the_book() {
    use peregrine_book::{NewOrder, PreMatch, Replace};
    #[derive(Default)]
    struct MaxQty {
        seen: Vec<u64>,
    }
    impl PreMatch for MaxQty {
        fn check_new(&mut self, o: &NewOrder, _: &InstrumentSpec) -> Result<(), RejectReason> {
            self.seen.push(o.id.0);
            if o.qty.lots() > 100 {
                Err(RejectReason::QtyAboveMax)
            } else {
                Ok(())
            }
        }
        fn check_replace(&mut self, r: &Replace, _: &InstrumentSpec) -> Result<(), RejectReason> {
            if r.qty.lots() > 100 {
                Err(RejectReason::QtyAboveMax)
            } else {
                Ok(())
            }
        }
    }
    let mut e: MatchingEngine<peregrine_book::Ladder, MaxQty> =
        MatchingEngine::with_pre_match(&[common::spec()], 64, MaxQty::default()).unwrap();
    let mut ev = Vec::new();
    e.execute(&new(1, limit(0, 1, Side::Buy, 9_990, 200)), &mut ev);
    assert!(
        matches!(ev[..], [Event::Rejected(r)] if r.reason == RejectReason::QtyAboveMax && r.id.0 == 1)
    );
    ev.clear();
    e.execute(&new(1, limit(0, 1, Side::Buy, 9_990, 20)), &mut ev);
    assert!(matches!(ev[0], Event::Accepted(a) if a.id.0 == 2));
    ev.clear();
    e.execute(&replace(1, 2, 1, 9_990, 500), &mut ev);
    assert!(matches!(ev[..], [Event::Rejected(r)] if r.reason == RejectReason::QtyAboveMax));
    assert_eq!(e.pre_match().seen, vec![1, 2]);
    assert_eq!(
        e.book(InstrumentId(1))
            .unwrap()
            .order_qty(peregrine_types::OrderId(2))
            .unwrap()
            .lots(),
        20
    );
}
