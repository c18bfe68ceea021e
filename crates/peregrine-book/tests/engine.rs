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
