//! The ledger driven through the real matching engine.

use peregrine_book::{Action, Cancel, Command, Event, MatchingEngine, NewOrder, Replace};
use peregrine_ledger::{AssetId, InstrumentAssets, Ledger};
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, InstrumentSpec, OrderId, OrderType, Price, Qty, Side,
    StpMode, TimeInForce, Timestamp,
};
use proptest::prelude::*;

const BASE: AssetId = AssetId(1);
const QUOTE: AssetId = AssetId(2);
const INST: InstrumentId = InstrumentId(1);

fn setup() -> MatchingEngine<peregrine_book::Ladder, Ledger> {
    let ledger = Ledger::new(&[(
        INST,
        InstrumentAssets {
            base: BASE,
            quote: QUOTE,
        },
    )]);
    MatchingEngine::with_pre_match(&[InstrumentSpec::example(1)], 256, ledger).unwrap()
}

fn order(account: u32, side: Side, price: i64, qty: i64) -> NewOrder {
    NewOrder {
        instrument: INST,
        id: OrderId(0),
        client_id: ClientOrderId(0),
        account: AccountId(account),
        side,
        order_type: OrderType::Limit,
        tif: TimeInForce::Gtc,
        stp: StpMode::None,
        price: Price::from_raw(price),
        qty: Qty::from_raw(qty),
        expire_at: Timestamp(0),
    }
}

fn exec(e: &mut MatchingEngine<peregrine_book::Ladder, Ledger>, action: Action) -> Vec<Event> {
    let mut ev = Vec::new();
    e.execute(
        &Command {
            ts: Timestamp(1),
            action,
        },
        &mut ev,
    );
    e.pre_match().settle(&ev);
    e.pre_match().check().unwrap();
    ev
}

#[test]
fn buy_reserves_quote_and_fill_settles_both_sides_with_price_improvement() {
    let mut e = setup();
    e.pre_match()
        .deposit(AccountId(1), QUOTE, 1_000_000)
        .unwrap();
    e.pre_match().deposit(AccountId(2), BASE, 100).unwrap();
    exec(&mut e, Action::New(order(2, Side::Sell, 10_000, 10)));
    assert_eq!(e.pre_match().balance(AccountId(2), BASE).reserved, 10);
    // Buy 10 at a limit of 10,050: reserves 100,500, pays 100,000 at the maker's price.
    let ev = exec(&mut e, Action::New(order(1, Side::Buy, 10_050, 10)));
    assert!(ev.iter().any(|x| matches!(x, Event::Fill(_))));
    let l = e.pre_match();
    assert_eq!(l.balance(AccountId(1), QUOTE).available, 900_000);
    assert_eq!(l.balance(AccountId(1), QUOTE).reserved, 0);
    assert_eq!(l.balance(AccountId(1), BASE).available, 10);
    assert_eq!(l.balance(AccountId(2), QUOTE).available, 100_000);
    assert_eq!(l.balance(AccountId(2), BASE).total(), 90);
}

#[test]
fn insufficient_balance_is_rejected_with_a_reason() {
    let mut e = setup();
    e.pre_match().deposit(AccountId(1), QUOTE, 99_999).unwrap();
    let ev = exec(&mut e, Action::New(order(1, Side::Buy, 10_000, 10)));
    assert!(
        matches!(ev[..], [Event::Rejected(r)] if r.reason == peregrine_book::RejectReason::InsufficientBalance)
    );
    let ev = exec(&mut e, Action::New(order(1, Side::Sell, 10_000, 1)));
    assert!(matches!(ev[..], [Event::Rejected(_)]), "no base to sell");
}

#[test]
fn cancel_ioc_remainder_and_book_rejects_release_everything() {
    let mut e = setup();
    e.pre_match()
        .deposit(AccountId(1), QUOTE, 10_000_000)
        .unwrap();
    exec(&mut e, Action::New(order(1, Side::Buy, 9_000, 10)));
    let ioc = NewOrder {
        tif: TimeInForce::Ioc,
        ..order(1, Side::Buy, 9_500, 10)
    };
    exec(&mut e, Action::New(ioc));
    // A post-only that would take is rejected by the book after the ledger reserved.
    e.pre_match().deposit(AccountId(2), BASE, 10).unwrap();
    exec(&mut e, Action::New(order(2, Side::Sell, 9_900, 5)));
    let po = NewOrder {
        order_type: OrderType::PostOnly,
        ..order(1, Side::Buy, 9_900, 5)
    };
    let ev = exec(&mut e, Action::New(po));
    assert!(matches!(ev[..], [Event::Rejected(_)]));
    assert_eq!(
        e.pre_match().balance(AccountId(1), QUOTE).reserved,
        90_000,
        "only the resting buy holds"
    );
    exec(
        &mut e,
        Action::Cancel(Cancel {
            instrument: INST,
            id: OrderId(1),
            account: AccountId(1),
            client_id: ClientOrderId(0),
        }),
    );
    assert_eq!(e.pre_match().balance(AccountId(1), QUOTE).reserved, 0);
    assert_eq!(
        e.pre_match().balance(AccountId(1), QUOTE).available,
        10_000_000
    );
}

#[test]
fn replace_needs_and_adjusts_the_reservation() {
    let mut e = setup();
    e.pre_match().deposit(AccountId(1), QUOTE, 100_000).unwrap();
    exec(&mut e, Action::New(order(1, Side::Buy, 9_000, 10)));
    let up = Replace {
        instrument: INST,
        id: OrderId(1),
        account: AccountId(1),
        client_id: ClientOrderId(0),
        price: Price::from_raw(9_000),
        qty: Qty::from_raw(12),
    };
    let ev = exec(&mut e, Action::Replace(up));
    assert!(matches!(ev[..], [Event::Rejected(_)]), "108,000 > 100,000");
    let down = Replace {
        qty: Qty::from_raw(5),
        ..up
    };
    exec(&mut e, Action::Replace(down));
    assert_eq!(e.pre_match().balance(AccountId(1), QUOTE).reserved, 45_000);
}

#[test]
fn withdrawal_never_takes_reserved_funds() {
    let mut e = setup();
    e.pre_match().deposit(AccountId(1), QUOTE, 100_000).unwrap();
    exec(&mut e, Action::New(order(1, Side::Buy, 9_000, 10)));
    assert!(e.pre_match().withdraw(AccountId(1), QUOTE, 10_001).is_err());
    assert!(e.pre_match().withdraw(AccountId(1), QUOTE, 10_000).is_ok());
    assert!(e.pre_match().withdraw(AccountId(1), QUOTE, 0).is_err());
    e.pre_match().check().unwrap();
}

#[derive(Debug, Clone)]
enum Op {
    New {
        account: u32,
        buy: bool,
        price: i64,
        qty: i64,
        kind: u8,
        tif: u8,
        stp: u8,
    },
    Cancel {
        id: u64,
        account: u32,
    },
    Replace {
        id: u64,
        account: u32,
        price: i64,
        qty: i64,
    },
    Deposit {
        account: u32,
        base: bool,
        amount: i64,
    },
    Withdraw {
        account: u32,
        base: bool,
        amount: i64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (1u32..5, any::<bool>(), 9_990i64..10_010, 1i64..50, 0u8..3, 0u8..4, 0u8..5)
            .prop_map(|(account, buy, price, qty, kind, tif, stp)| Op::New { account, buy, price, qty, kind, tif, stp }),
        2 => (1u64..200, 1u32..5).prop_map(|(id, account)| Op::Cancel { id, account }),
        2 => (1u64..200, 1u32..5, 9_990i64..10_010, 1i64..60).prop_map(|(id, account, price, qty)| Op::Replace { id, account, price, qty }),
        1 => (1u32..5, any::<bool>(), 1i64..2_000_000).prop_map(|(account, base, amount)| Op::Deposit { account, base, amount }),
        1 => (1u32..5, any::<bool>(), 1i64..2_000_000).prop_map(|(account, base, amount)| Op::Withdraw { account, base, amount }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Per asset Σ(available + reserved) = deposits − withdrawals, nothing negative, and
    /// every resting order's reservation covers exactly its open quantity.
    #[test]
    fn prop_balances_are_conserved(ops in proptest::collection::vec(op(), 1..300)) {
        let mut e = setup();
        for a in 1..5 {
            e.pre_match().deposit(AccountId(a), QUOTE, 5_000_000).unwrap();
            e.pre_match().deposit(AccountId(a), BASE, 500).unwrap();
        }
        for (step, op) in ops.into_iter().enumerate() {
            let ts = Timestamp(step as u64 + 1);
            let action = match op {
                Op::New { account, buy, price, qty, kind, tif, stp } => {
                    let order_type = [OrderType::Limit, OrderType::Market, OrderType::PostOnly][kind as usize];
                    let tif = [TimeInForce::Gtc, TimeInForce::Ioc, TimeInForce::Fok, TimeInForce::Gtd][tif as usize];
                    let expire_at = if tif == TimeInForce::Gtd { Timestamp(step as u64 + 5) } else { Timestamp(0) };
                    let stp = StpMode::from_u8(stp).unwrap();
                    Action::New(NewOrder { order_type, tif, stp, expire_at, ..order(account, if buy { Side::Buy } else { Side::Sell }, price, qty) })
                }
                Op::Cancel { id, account } => Action::Cancel(Cancel { instrument: INST, id: OrderId(id), account: AccountId(account), client_id: ClientOrderId(0) }),
                Op::Replace { id, account, price, qty } => Action::Replace(Replace { instrument: INST, id: OrderId(id), account: AccountId(account), client_id: ClientOrderId(0), price: Price::from_raw(price), qty: Qty::from_raw(qty) }),
                Op::Deposit { account, base, amount } => {
                    e.pre_match().deposit(AccountId(account), if base { BASE } else { QUOTE }, amount as i128).unwrap();
                    continue;
                }
                Op::Withdraw { account, base, amount } => {
                    let _ = e.pre_match().withdraw(AccountId(account), if base { BASE } else { QUOTE }, amount as i128);
                    e.pre_match().check().map_err(TestCaseError::fail)?;
                    continue;
                }
            };
            let mut ev = Vec::new();
            e.execute(&Command { ts, action }, &mut ev);
            e.pre_match().settle(&ev);
            e.pre_match().check().map_err(TestCaseError::fail)?;
            let mut resting = Vec::new();
            e.book(INST).unwrap().visit_orders(&mut |o| resting.push((o.id, o.qty.lots())));
            for (id, qty) in &resting {
                prop_assert_eq!(e.pre_match().held_qty(*id), Some(*qty));
            }
            prop_assert_eq!(e.pre_match().open_holds(), resting.len());
        }
    }
}

#[test]
fn export_is_sorted_and_restore_reproduces_the_ledger() {
    let mut e = setup();
    for a in [3, 1, 2] {
        e.pre_match()
            .deposit(AccountId(a), QUOTE, 1_000_000)
            .unwrap();
        e.pre_match().deposit(AccountId(a), BASE, 50).unwrap();
    }
    exec(&mut e, Action::New(order(2, Side::Buy, 10_000, 7)));
    exec(&mut e, Action::New(order(1, Side::Buy, 9_990, 3)));
    exec(&mut e, Action::New(order(3, Side::Sell, 10_000, 4)));
    exec(&mut e, Action::New(order(3, Side::Sell, 10_020, 5)));
    let state = e.pre_match_ref().export();
    let keys: Vec<_> = state.balances.iter().map(|(a, s, _)| (*a, *s)).collect();
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    assert_eq!(keys, sorted);
    assert!(state.holds.windows(2).all(|w| w[0].order < w[1].order));
    assert_eq!(state.holds.len(), 3);
    assert_eq!(state.supply, vec![(BASE, 150), (QUOTE, 3_000_000)]);

    let mut copy = Ledger::new(&[(
        INST,
        InstrumentAssets {
            base: BASE,
            quote: QUOTE,
        },
    )]);
    copy.restore(&state);
    copy.check().unwrap();
    assert_eq!(copy.export(), state);
    assert_eq!(copy.held_qty(OrderId(1)), Some(3));
}
