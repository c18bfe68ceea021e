use super::*;
use proptest::prelude::*;

fn new_order() -> NewOrder {
    NewOrder {
        instrument: InstrumentId(7),
        id: OrderId(0x0102_0304_0506_0708),
        client_id: ClientOrderId(42),
        account: AccountId(9),
        side: Side::Sell,
        order_type: OrderType::PostOnly,
        tif: TimeInForce::Gtd,
        stp: StpMode::DecrementAndCancel,
        price: Price::from_raw(-5),
        qty: Qty::from_raw(i64::MAX),
        expire_at: Timestamp(u64::MAX),
    }
}

fn every_variant() -> Vec<Command> {
    let actions = [
        Action::New(new_order()),
        Action::Cancel(Cancel {
            instrument: InstrumentId(u32::MAX),
            id: OrderId(3),
            account: AccountId(4),
            client_id: ClientOrderId(5),
        }),
        Action::Replace(Replace {
            instrument: InstrumentId(1),
            id: OrderId(2),
            account: AccountId(3),
            client_id: ClientOrderId(4),
            price: Price::from_raw(100),
            qty: Qty::from_raw(7),
        }),
        Action::MassCancel(MassCancel {
            instrument: InstrumentId(1),
            account: AccountId(2),
            side: None,
        }),
        Action::MassCancel(MassCancel {
            instrument: InstrumentId(1),
            account: AccountId(2),
            side: Some(Side::Buy),
        }),
        Action::SetStatus(SetStatus {
            instrument: InstrumentId(3),
            status: InstrumentStatus::Halted,
        }),
        Action::SetStatus(SetStatus {
            instrument: InstrumentId(3),
            status: InstrumentStatus::Active,
        }),
        Action::Tick,
    ];
    actions
        .into_iter()
        .enumerate()
        .map(|(i, action)| Command {
            ts: Timestamp(1_700_000_000_000_000_000 + i as u64),
            action,
        })
        .collect()
}

fn encoded(cmd: &Command) -> Vec<u8> {
    let mut buf = [0xEE; MAX_ENCODED];
    let n = encode(cmd, &mut buf);
    buf[..n].to_vec()
}

#[test]
fn every_variant_round_trips_at_its_fixed_length() {
    let lengths = [72, 40, 56, 32, 32, 24, 24, 16];
    for (cmd, len) in every_variant().iter().zip(lengths) {
        let bytes = encoded(cmd);
        assert_eq!(bytes.len(), len, "{cmd:?}");
        assert_eq!(decode(&bytes), Ok(*cmd));
    }
}

#[test]
fn layout_is_pinned() {
    let cmd = Command {
        ts: Timestamp(0x1122_3344_5566_7788),
        action: Action::New(new_order()),
    };
    let b = encoded(&cmd);
    assert_eq!(&b[..8], &[VERSION, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(&b[8..16], &0x1122_3344_5566_7788u64.to_le_bytes());
    assert_eq!(&b[16..20], &7u32.to_le_bytes());
    assert_eq!(&b[20..24], &9u32.to_le_bytes());
    assert_eq!(&b[24..32], &0x0102_0304_0506_0708u64.to_le_bytes());
    assert_eq!(&b[32..40], &42u64.to_le_bytes());
    assert_eq!(&b[40..48], &[1, 2, 3, 4, 0, 0, 0, 0]);
    assert_eq!(&b[48..56], &(-5i64).to_le_bytes());
    assert_eq!(&b[56..64], &i64::MAX.to_le_bytes());
    assert_eq!(&b[64..72], &u64::MAX.to_le_bytes());
}

#[test]
fn a_mass_cancel_request_round_trips_and_pins_its_layout() {
    use peregrine_types::{AccountId, ClientOrderId, InstrumentId, Side, Timestamp};
    for instrument in [Some(InstrumentId(7)), None] {
        let m = MassCancelRequest {
            ts: Timestamp(11),
            instrument,
            account: AccountId(3),
            side: Some(Side::Sell),
            client_id: ClientOrderId(0x0102_0304_0506_0708),
        };
        let mut buf = [0u8; MAX_ENCODED];
        let n = encode_mass_cancel(&m, &mut buf);
        assert_eq!(n, 40);
        assert_eq!((buf[0], buf[1]), (VERSION, 8));
        let scope = instrument.map_or(u32::MAX, |i| i.0);
        assert_eq!(&buf[16..20], &scope.to_le_bytes());
        assert_eq!(&buf[20..24], &3u32.to_le_bytes());
        assert_eq!(buf[24], 1);
        assert_eq!(&buf[32..40], &0x0102_0304_0506_0708u64.to_le_bytes());
        assert_eq!(decode_record(&buf[..n]), Ok(Record::MassCancel(m)));
        assert_eq!(decode(&buf[..n]), Err(CodecError::NotABookCommand(8)));
        let mut bad = buf;
        bad[26] = 1;
        assert_eq!(decode_record(&bad[..n]), Err(CodecError::BadPadding(26)));
    }
}

#[test]
fn bad_bytes_are_typed_errors() {
    let good = encoded(&every_variant()[0]);
    let with = |at: usize, v: u8| {
        let mut b = good.clone();
        b[at] = v;
        decode(&b)
    };
    assert_eq!(decode(&good[..3]), Err(CodecError::TooShort(3)));
    assert_eq!(with(0, 2), Err(CodecError::BadVersion(2)));
    assert_eq!(with(1, 14), Err(CodecError::BadTag(14)));
    assert_eq!(
        with(1, 1),
        Err(CodecError::BadLength {
            tag: 1,
            expected: 40,
            got: 72
        })
    );
    assert_eq!(with(5, 1), Err(CodecError::BadPadding(5)));
    assert_eq!(with(45, 1), Err(CodecError::BadPadding(45)));
    for (at, field) in [(40, "side"), (41, "order_type"), (42, "tif"), (43, "stp")] {
        assert_eq!(
            with(at, 200),
            Err(CodecError::BadEnum { field, value: 200 })
        );
    }
    let mut long = good.clone();
    long.push(0);
    assert!(matches!(decode(&long), Err(CodecError::BadLength { .. })));
    let status = encoded(&every_variant()[5]);
    let mut b = status.clone();
    b[20] = 2;
    assert_eq!(
        decode(&b),
        Err(CodecError::BadEnum {
            field: "status",
            value: 2
        })
    );
    let mass = encoded(&every_variant()[3]);
    let mut b = mass.clone();
    b[24] = 3;
    assert!(matches!(
        decode(&b),
        Err(CodecError::BadEnum { field: "side", .. })
    ));
}

fn arb_command() -> impl Strategy<Value = Command> {
    let ids = (any::<u32>(), any::<u32>(), any::<u64>(), any::<u64>());
    let new = (
        ids,
        0u8..2,
        0u8..3,
        0u8..4,
        0u8..5,
        any::<i64>(),
        any::<i64>(),
        any::<u64>(),
    )
        .prop_map(|((i, a, id, c), s, t, f, p, price, qty, exp)| {
            Action::New(NewOrder {
                instrument: InstrumentId(i),
                id: OrderId(id),
                client_id: ClientOrderId(c),
                account: AccountId(a),
                side: Side::from_u8(s).unwrap(),
                order_type: OrderType::from_u8(t).unwrap(),
                tif: TimeInForce::from_u8(f).unwrap(),
                stp: StpMode::from_u8(p).unwrap(),
                price: Price::from_raw(price),
                qty: Qty::from_raw(qty),
                expire_at: Timestamp(exp),
            })
        });
    let cancel = ids.prop_map(|(i, a, id, c)| {
        Action::Cancel(Cancel {
            instrument: InstrumentId(i),
            id: OrderId(id),
            account: AccountId(a),
            client_id: ClientOrderId(c),
        })
    });
    let replace = (ids, any::<i64>(), any::<i64>()).prop_map(|((i, a, id, c), p, q)| {
        Action::Replace(Replace {
            instrument: InstrumentId(i),
            id: OrderId(id),
            account: AccountId(a),
            client_id: ClientOrderId(c),
            price: Price::from_raw(p),
            qty: Qty::from_raw(q),
        })
    });
    let mass = (any::<u32>(), any::<u32>(), 0u8..3).prop_map(|(i, a, s)| {
        Action::MassCancel(MassCancel {
            instrument: InstrumentId(i),
            account: AccountId(a),
            side: Side::from_u8(s),
        })
    });
    let status = (any::<u32>(), any::<bool>()).prop_map(|(i, h)| {
        Action::SetStatus(SetStatus {
            instrument: InstrumentId(i),
            status: if h {
                InstrumentStatus::Halted
            } else {
                InstrumentStatus::Active
            },
        })
    });
    let action = prop_oneof![new, cancel, replace, mass, status, Just(Action::Tick)];
    (any::<u64>(), action).prop_map(|(ts, action)| Command {
        ts: Timestamp(ts),
        action,
    })
}

proptest! {
    #[test]
    fn prop_round_trip(cmd in arb_command()) {
        prop_assert_eq!(decode(&encoded(&cmd)), Ok(cmd));
    }

    #[test]
    fn prop_lists_round_trip(list in arb_list()) {
        let mut buf = [0u8; MAX_ENCODED];
        let n = encode_record(&Record::List(list), &mut buf);
        prop_assert_eq!(n, 232);
        prop_assert_eq!(decode_record(&buf[..n]), Ok(Record::List(list)));
    }

    #[test]
    fn prop_decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = decode(&bytes);
        let _ = decode_record(&bytes);
    }

    #[test]
    fn prop_admin_round_trip(a in arb_admin()) {
        prop_assert_eq!(decode_record(&encoded_admin(&a)), Ok(Record::Admin(a)));
    }

    #[test]
    fn prop_decode_of_mutated_admin_never_panics(a in arb_admin(), at in 0usize..40, v in any::<u8>()) {
        let mut b = encoded_admin(&a);
        b[at] = v;
        if let Ok(Record::Admin(back)) = decode_record(&b) {
            prop_assert_eq!(encoded_admin(&back), b);
        }
    }

    /// Random bytes rarely pass the version and tag checks; this flips one byte of a
    /// valid encoding so the body checks are exercised too.
    #[test]
    fn prop_decode_of_mutated_never_panics(cmd in arb_command(), at in 0usize..72, v in any::<u8>()) {
        let mut b = encoded(&cmd);
        let i = at % b.len();
        b[i] = v;
        if let Ok(back) = decode(&b) {
            let mut again = [0; MAX_ENCODED];
            let n = encode(&back, &mut again);
            prop_assert_eq!(&again[..n], &b[..]);
        }
    }
}

fn encoded_admin(a: &AdminCommand) -> Vec<u8> {
    let mut buf = [0xEE; MAX_ENCODED];
    let n = encode_admin(a, &mut buf);
    buf[..n].to_vec()
}

fn arb_admin() -> impl Strategy<Value = AdminCommand> {
    (
        any::<u64>(),
        any::<bool>(),
        any::<u32>(),
        any::<u32>(),
        any::<i64>(),
        any::<u64>(),
    )
        .prop_map(|(ts, d, account, asset, amount, request_id)| AdminCommand {
            ts: Timestamp(ts),
            kind: if d {
                AdminKind::Deposit
            } else {
                AdminKind::Withdraw
            },
            account: AccountId(account),
            asset: AssetId(asset),
            amount,
            request_id,
        })
}

#[test]
fn admin_layout_is_pinned_and_refused_by_book_decode() {
    let a = AdminCommand {
        ts: Timestamp(0x1122_3344_5566_7788),
        kind: AdminKind::Withdraw,
        account: AccountId(9),
        asset: AssetId(2),
        amount: -3,
        request_id: 77,
    };
    let b = encoded_admin(&a);
    assert_eq!(b.len(), 40);
    assert_eq!(&b[..8], &[VERSION, 7, 0, 0, 0, 0, 0, 0]);
    assert_eq!(&b[8..16], &0x1122_3344_5566_7788u64.to_le_bytes());
    assert_eq!(&b[16..20], &9u32.to_le_bytes());
    assert_eq!(&b[20..24], &2u32.to_le_bytes());
    assert_eq!(&b[24..32], &(-3i64).to_le_bytes());
    assert_eq!(&b[32..40], &77u64.to_le_bytes());
    assert_eq!(decode(&b), Err(CodecError::NotABookCommand(7)));
    let deposit = AdminCommand {
        kind: AdminKind::Deposit,
        ..a
    };
    let d = encoded_admin(&deposit);
    assert_eq!(d[1], 6);
    assert_eq!(decode_record(&d), Ok(Record::Admin(deposit)));
    assert_eq!(
        decode_record(&d[..39]),
        Err(CodecError::BadLength {
            tag: 6,
            expected: 40,
            got: 39
        })
    );
    let mut pad = d.clone();
    pad[3] = 1;
    assert_eq!(decode_record(&pad), Err(CodecError::BadPadding(3)));
    for cmd in every_variant() {
        assert_eq!(decode_record(&encoded(&cmd)), Ok(Record::Command(cmd)));
    }
}

fn ext_order() -> ExtOrder {
    ExtOrder {
        order: new_order(),
        trigger: Trigger {
            kind: TriggerKind::StopLoss,
            unit: TrailUnit::Bps,
            trail: 25,
            price: Price::from_raw(0),
        },
        display: Qty::from_raw(30),
    }
}

/// The venue's record kinds: each round-trips at its fixed length, and a bad enum or
/// padding byte is a typed error.
#[test]
fn venue_records_round_trip() {
    let cmds = [
        (Action::NewExt(ext_order()), 96),
        (
            Action::CancelList(CancelList {
                instrument: InstrumentId(1),
                list_id: OrderId(77),
                account: AccountId(2),
                client_id: ClientOrderId(3),
            }),
            40,
        ),
        (
            Action::Mmp(MmpCommand {
                instrument: InstrumentId(1),
                account: AccountId(2),
                op: MmpOp::Set(MmpParams {
                    window_ns: 1_000,
                    max_qty: 50,
                    max_fills: 3,
                    freeze_ns: 9,
                }),
                request_id: 11,
            }),
            64,
        ),
        (
            Action::Mmp(MmpCommand {
                instrument: InstrumentId(1),
                account: AccountId(2),
                op: MmpOp::Reset,
                request_id: 12,
            }),
            64,
        ),
        (
            Action::Market(MarketCommand {
                instrument: InstrumentId(4),
                op: MarketOp::StartAuction {
                    kind: AuctionKind::Manual,
                    duration_ns: 5_000,
                },
            }),
            32,
        ),
        (
            Action::Market(MarketCommand {
                instrument: InstrumentId(4),
                op: MarketOp::Uncross,
            }),
            32,
        ),
    ];
    for (action, len) in cmds {
        let cmd = Command {
            ts: Timestamp(5),
            action,
        };
        let bytes = encoded(&cmd);
        assert_eq!(bytes.len(), len, "{cmd:?}");
        assert_eq!(decode(&bytes), Ok(cmd));
    }
    let ext = encoded(&Command {
        ts: Timestamp(5),
        action: Action::NewExt(ext_order()),
    });
    let mut bad = ext.clone();
    bad[72] = 3;
    assert_eq!(
        decode(&bad),
        Err(CodecError::BadEnum {
            field: "trigger",
            value: 3
        })
    );
    let mut bad = ext;
    bad[74] = 1;
    assert_eq!(decode(&bad), Err(CodecError::BadPadding(74)));
}

fn arb_list() -> impl Strategy<Value = ListRecord> {
    let leg = (
        any::<u64>(),
        any::<u64>(),
        (0u8..2, 0u8..3, 0u8..4, 0u8..5, 0u8..3, 0u8..3),
        any::<i32>(),
        (
            any::<i64>(),
            any::<i64>(),
            any::<u64>(),
            any::<i64>(),
            any::<i64>(),
        ),
    )
        .prop_map(
            |(_id, c, (s, t, f, p, k, u), trail, (price, qty, exp, tp, d))| ExtOrder {
                order: NewOrder {
                    instrument: InstrumentId(3),
                    // Not journaled: the engine numbers a list's legs.
                    id: OrderId(0),
                    client_id: ClientOrderId(c),
                    account: AccountId(8),
                    side: Side::from_u8(s).unwrap(),
                    order_type: OrderType::from_u8(t).unwrap(),
                    tif: TimeInForce::from_u8(f).unwrap(),
                    stp: StpMode::from_u8(p).unwrap(),
                    price: Price::from_raw(price),
                    qty: Qty::from_raw(qty),
                    expire_at: Timestamp(exp),
                },
                trigger: Trigger {
                    kind: TriggerKind::from_u8(k).unwrap(),
                    unit: TrailUnit::from_u8(u).unwrap(),
                    trail,
                    price: Price::from_raw(tp),
                },
                display: Qty::from_raw(d),
            },
        );
    (
        any::<u64>(),
        0u8..3,
        any::<u64>(),
        leg.clone(),
        leg.clone(),
        leg,
    )
        .prop_map(|(ts, k, c, a, b, d)| {
            let kind = ListKind::from_u8(k).unwrap();
            let blank = ExtOrder::plain(blank_order(InstrumentId(3), AccountId(8)));
            let legs = [a, b, if kind == ListKind::Otoco { d } else { blank }];
            ListRecord {
                ts: Timestamp(ts),
                list: OrderList {
                    instrument: InstrumentId(3),
                    account: AccountId(8),
                    kind,
                    client_id: ClientOrderId(c),
                    legs,
                },
            }
        })
}
