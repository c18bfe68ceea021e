use peregrine_book::{MatchingEngine, NewOrder};
use peregrine_types::{InstrumentSpec, OrderId, Price, Qty};
use peregrine_wire::reason::RejectCode;

use super::*;

/// Every engine reject has the same value in the wire table (the engine's table and
/// the protocol's cannot drift), except `NotOwner`, which is never sent.
#[test]
fn reject_codes_match_the_wire_table() {
    for r in RejectReason::ALL {
        let wire = RejectCode::from_code(r.code()).expect("every engine code is in the table");
        assert_eq!(wire.name(), r.as_str(), "{r:?}");
        let sent = reject_code(r);
        if r == RejectReason::NotOwner {
            assert_eq!(sent, RejectCode::UnknownOrder.reason());
        } else {
            assert_eq!(sent.0, r.code());
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
        let code = cancel_code(c);
        assert_eq!(code.0, c as u16);
        assert_eq!(CancelCode::from_code(code.0).unwrap().name(), c.as_str());
    }
}

fn run(engine: &mut MatchingEngine, cmd: Command, seq: u64) -> Vec<Report> {
    let mut events = Vec::new();
    engine.execute(&cmd, &mut events);
    let ctx = Ctx::of(&cmd, seq, ClientOrderId(0));
    events
        .iter()
        .flat_map(|e| reports_for(e, &ctx))
        .flatten()
        .collect()
}

fn new_order(account: u32, client: u64, side: Side, price: i64, qty: i64) -> Command {
    Command {
        ts: Timestamp(1_000),
        action: Action::New(NewOrder {
            instrument: InstrumentId(1),
            id: OrderId(0),
            client_id: ClientOrderId(client),
            account: AccountId(account),
            side,
            order_type: OrderType::Limit,
            tif: TimeInForce::Gtd,
            stp: StpMode::None,
            price: Price::from_raw(price),
            qty: Qty::from_raw(qty),
            expire_at: Timestamp(9_000),
        }),
    }
}

#[test]
fn each_report_goes_to_its_own_accounts_stream_with_journaled_fields() {
    let mut e = MatchingEngine::new(&[InstrumentSpec::example(1)], 64).unwrap();
    let resting = run(&mut e, new_order(1, 7, Side::Sell, 10_000, 5), 1);
    match resting.as_slice() {
        [(AccountId(1), Outbound::Accepted(a))] => {
            assert_eq!(
                (a.tif, a.expire_at, a.report_seq),
                (TimeInForce::Gtd, Timestamp(9_000), 0)
            );
        }
        other => panic!("{other:?}"),
    }
    let trade = run(&mut e, new_order(2, 8, Side::Buy, 10_000, 2), 2);
    let accounts: Vec<u32> = trade.iter().map(|r| r.0 .0).collect();
    assert_eq!(
        accounts,
        [2, 1, 2],
        "Accepted (taker), maker fill, taker fill"
    );
    for (account, msg) in &trade {
        assert!(msg.report().is_none(), "unstamped");
        assert_eq!(msg.engine_seq(), 2);
        if let Outbound::Fill(f) = msg {
            assert_eq!(f.account, *account);
        }
    }
}

#[test]
fn a_foreign_cancel_is_answered_as_unknown() {
    let mut e = MatchingEngine::new(&[InstrumentSpec::example(1)], 64).unwrap();
    run(&mut e, new_order(1, 7, Side::Sell, 10_000, 5), 1);
    let cancel = |account: u32, id: u64| Command {
        ts: Timestamp(2_000),
        action: Action::Cancel(peregrine_book::Cancel {
            instrument: InstrumentId(1),
            id: OrderId(id),
            account: AccountId(account),
            client_id: ClientOrderId(99),
        }),
    };
    let foreign = run(&mut e, cancel(2, 1), 2);
    let unknown = run(&mut e, cancel(2, 12345), 3);
    let reason = |r: &[Report]| match r {
        [(_, Outbound::CancelRejected(c))] => c.reason,
        other => panic!("{other:?}"),
    };
    assert_eq!(reason(&foreign), RejectCode::UnknownOrder.reason());
    assert_eq!(reason(&foreign), reason(&unknown), "no enumeration");
}

/// A mass cancel refused for an unknown instrument answers with the request's own
/// client order id (the book's refusal carries none): the client can match it.
#[test]
fn a_refused_mass_cancel_carries_the_requests_id() {
    let mut e: MatchingEngine = MatchingEngine::new(&[InstrumentSpec::example(1)], 64).unwrap();
    let cmd = Command {
        ts: Timestamp(1_000),
        action: Action::MassCancel(peregrine_book::MassCancel {
            instrument: InstrumentId(42),
            account: AccountId(3),
            side: None,
        }),
    };
    let mut events = Vec::new();
    e.execute(&cmd, &mut events);
    let ctx = Ctx {
        request_id: ClientOrderId(777),
        ..Ctx::of(&cmd, 5, ClientOrderId(0))
    };
    let reports: Vec<Report> = events
        .iter()
        .flat_map(|ev| reports_for(ev, &ctx))
        .flatten()
        .collect();
    match reports.as_slice() {
        [(AccountId(3), Outbound::CancelRejected(c))] => {
            assert_eq!(c.client_order_id, ClientOrderId(777));
            assert_eq!(c.request_kind, RequestKind::MassCancel);
            assert_eq!(c.reason, RejectCode::UnknownInstrument.reason());
            assert_eq!(c.instrument, Some(InstrumentId(42)));
        }
        other => panic!("{other:?}"),
    }
}
