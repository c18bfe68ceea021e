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

mod fees {
    //! Fees charged in the ledger: exact integers moved between each side and the fee
    //! account, buys reserving for their fees, and conservation over random streams
    //! with stops, icebergs and order lists.

    use super::*;
    use peregrine_book::{ExtOrder, OrderList, Trigger};
    use peregrine_ledger::Fees;
    use peregrine_types::{FeeSchedule, FeeTier, ListKind, TriggerKind};

    const FEE: AccountId = AccountId(99);

    fn spec() -> InstrumentSpec {
        InstrumentSpec {
            fees: Some(FeeSchedule {
                maker_ppm: -150,
                taker_ppm: 2_500,
                tiers: vec![FeeTier {
                    min_volume: "50".into(),
                    maker_ppm: -200,
                    taker_ppm: 1_000,
                }],
            }),
            ..InstrumentSpec::example(1)
        }
    }

    fn fee_engine() -> MatchingEngine<peregrine_book::Ladder, Ledger> {
        let assets = InstrumentAssets {
            base: BASE,
            quote: QUOTE,
        };
        let fees = Fees::from_specs(&[spec()]).unwrap().unwrap();
        let ledger = Ledger::new(&[(INST, assets)]).with_fees(fees, FEE);
        MatchingEngine::with_pre_match(&[spec()], 256, ledger).unwrap()
    }

    fn fill_fees(ev: &[Event]) -> i128 {
        ev.iter()
            .map(|e| match e {
                Event::Fill(f) => i128::from(f.maker_fee) + i128::from(f.taker_fee),
                _ => 0,
            })
            .sum()
    }

    #[test]
    fn a_taker_pays_a_maker_earns_a_rebate_and_the_fee_account_keeps_the_rest() {
        let mut e = fee_engine();
        e.pre_match()
            .deposit(AccountId(1), QUOTE, 1_000_000)
            .unwrap();
        e.pre_match().deposit(AccountId(2), BASE, 100).unwrap();
        exec(&mut e, Action::New(order(2, Side::Sell, 10_000, 10)));
        // The buy reserves 100,500 at its limit plus 0.25 % of it for fees: 251.
        let buy = order(1, Side::Buy, 10_050, 10);
        let mut ev = Vec::new();
        e.execute(
            &Command {
                ts: Timestamp(1),
                action: Action::New(NewOrder {
                    tif: TimeInForce::Ioc,
                    ..buy
                }),
            },
            &mut ev,
        );
        let f = ev
            .iter()
            .find_map(|x| match x {
                Event::Fill(f) => Some(*f),
                _ => None,
            })
            .unwrap();
        // Notional 100,000: the taker pays 250, the maker earns 15.
        assert_eq!((f.taker_fee, f.maker_fee), (250, -15));
        let l = e.pre_match_ref();
        l.check().unwrap();
        assert_eq!(
            l.balance(AccountId(1), QUOTE).available,
            1_000_000 - 100_250
        );
        assert_eq!(l.balance(AccountId(1), QUOTE).reserved, 0);
        assert_eq!(l.balance(AccountId(2), QUOTE).available, 100_015);
        assert_eq!(l.balance(FEE, QUOTE).available, 235);
        assert_eq!(l.fees_collected(QUOTE), 235);
    }

    #[test]
    fn a_buy_without_room_for_its_fees_is_rejected() {
        let mut e = fee_engine();
        // 100,000 buys 10 at 10,000 without fees; the fee reserve needs 250 more.
        e.pre_match().deposit(AccountId(1), QUOTE, 100_000).unwrap();
        let ev = exec(&mut e, Action::New(order(1, Side::Buy, 10_000, 10)));
        assert!(
            matches!(ev[0], Event::Rejected(r) if r.reason == peregrine_book::RejectReason::InsufficientBalance)
        );
        e.pre_match().deposit(AccountId(1), QUOTE, 250).unwrap();
        let ev = exec(&mut e, Action::New(order(1, Side::Buy, 10_000, 10)));
        assert!(matches!(ev[0], Event::Accepted(_)));
    }

    /// An OTO whose working buy brings the base its pending sell needs: the sell's
    /// balance check runs when it is released, after the fill settled.
    #[test]
    fn an_oto_exit_is_paid_for_by_its_entry() {
        let mut e = fee_engine();
        e.pre_match()
            .deposit(AccountId(1), QUOTE, 2_000_000)
            .unwrap();
        e.pre_match().deposit(AccountId(2), BASE, 10).unwrap();
        exec(&mut e, Action::New(order(2, Side::Sell, 10_000, 10)));
        let list = OrderList {
            instrument: INST,
            account: AccountId(1),
            kind: ListKind::Oto,
            client_id: ClientOrderId(7),
            legs: [
                ExtOrder::plain(order(1, Side::Buy, 10_000, 10)),
                ExtOrder::plain(order(1, Side::Sell, 10_100, 10)),
                ExtOrder::plain(order(1, Side::Sell, 10_100, 10)),
            ],
        };
        let mut ev = Vec::new();
        e.execute_list(Timestamp(2), &list, &mut ev);
        e.pre_match_ref().check().unwrap();
        let released = ev.iter().any(|x| matches!(x, Event::Triggered(_)));
        assert!(released, "{ev:#?}");
        assert!(
            !ev.iter().any(|x| matches!(x, Event::Cancelled(_))),
            "the exit was not refused: {ev:#?}"
        );
        let l = e.pre_match_ref();
        assert_eq!(l.balance(AccountId(1), BASE).reserved, 10);
        assert_eq!(l.balance(AccountId(1), BASE).available, 0);
    }

    fn ext(account: u32, buy: bool, price: i64, qty: i64, kind: u8, display: i64) -> ExtOrder {
        let side = if buy { Side::Buy } else { Side::Sell };
        let mut e = ExtOrder::plain(order(account, side, price, qty));
        match kind {
            0 => {}
            1 => {
                let stop = if buy { price - 3 } else { price + 3 };
                e.trigger = Trigger::at(TriggerKind::StopLoss, Price::from_raw(stop));
            }
            _ => e.trigger = Trigger::trailing(peregrine_types::TrailUnit::Ticks, 2),
        }
        if display > 0 && display < qty && kind == 0 {
            e.display = Qty::from_raw(display);
        }
        e
    }

    #[derive(Debug, Clone)]
    enum FeeOp {
        New(u32, bool, i64, i64, u8, i64),
        Oto(u32, bool, i64, i64),
        Cancel(u64, u32),
        Tick(u64),
    }

    fn fee_op() -> impl Strategy<Value = FeeOp> {
        prop_oneof![
            8 => (1u32..5, any::<bool>(), 9_994i64..10_006, 1i64..40, 0u8..3, 0i64..10)
                .prop_map(|(a, b, p, q, k, d)| FeeOp::New(a, b, p, q, k, d)),
            2 => (1u32..5, any::<bool>(), 9_994i64..10_006, 1i64..40)
                .prop_map(|(a, b, p, q)| FeeOp::Oto(a, b, p, q)),
            2 => (1u64..300, 1u32..5).prop_map(|(id, a)| FeeOp::Cancel(id, a)),
            1 => (1u64..3).prop_map(FeeOp::Tick),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 120, ..ProptestConfig::default() })]

        /// Over random streams with fees, stops, trailing stops, icebergs and OTO lists
        /// whose pending legs are paid for by their working legs' fills: the fees of
        /// all fills equal what the fee account collected, nothing is ever negative,
        /// per asset Σ(available + reserved) = deposits, every reservation (fee reserve
        /// included) matches the open orders, and the fee account never pays out more
        /// than it took.
        #[test]
        fn prop_fees_are_conserved(ops in proptest::collection::vec(fee_op(), 1..250)) {
            let mut e = fee_engine();
            for a in 1..5 {
                e.pre_match().deposit(AccountId(a), QUOTE, 3_000_000).unwrap();
                e.pre_match().deposit(AccountId(a), BASE, 300).unwrap();
            }
            let mut reported = 0i128;
            let mut day = 0u64;
            for (step, op) in ops.into_iter().enumerate() {
                let ts = Timestamp(day * peregrine_types::rules::DAY_NS + step as u64 + 1);
                let mut ev = Vec::new();
                match op {
                    FeeOp::New(a, b, p, q, k, d) => {
                        e.execute(&Command { ts, action: Action::NewExt(ext(a, b, p, q, k, d)) }, &mut ev);
                    }
                    FeeOp::Oto(a, b, p, q) => {
                        let working = ext(a, b, p, q, 0, 0);
                        let exit = ext(a, !b, if b { p + 2 } else { p - 2 }, q, 0, 0);
                        let list = OrderList {
                            instrument: INST,
                            account: AccountId(a),
                            kind: ListKind::Oto,
                            client_id: ClientOrderId(step as u64),
                            legs: [working, exit, exit],
                        };
                        e.execute_list(ts, &list, &mut ev);
                    }
                    FeeOp::Cancel(id, a) => {
                        let c = Cancel { instrument: INST, id: OrderId(id), account: AccountId(a), client_id: ClientOrderId(0) };
                        e.execute(&Command { ts, action: Action::Cancel(c) }, &mut ev);
                    }
                    FeeOp::Tick(days) => {
                        day += days;
                        continue;
                    }
                }
                reported += fill_fees(&ev);
                let l = e.pre_match_ref();
                l.check().map_err(TestCaseError::fail)?;
                prop_assert_eq!(l.fees_collected(QUOTE), reported);
                prop_assert_eq!(l.balance(FEE, QUOTE).total(), reported);
                prop_assert!(reported >= 0, "the fee account paid out more than it took");
            }
        }
    }
}
