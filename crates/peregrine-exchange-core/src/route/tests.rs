use super::*;
use peregrine_book::event::{Accepted, Cancelled, Fill, LevelChanged, Rejected, Replaced};
use peregrine_book::RejectReason;
use peregrine_types::{OrderType, Price, Qty, Side, StpMode, TimeInForce};
use peregrine_wire::{Inbound, WireMessage};

fn ctx() -> Ctx {
    Ctx {
        engine_seq: 7,
        ts: Timestamp(99),
        new_order: None,
        request_id: ClientOrderId(55),
        orig_client_id: ClientOrderId(44),
    }
}

fn one(r: Reports) -> (Dest, Outbound) {
    assert!(r[1].is_none());
    r[0].unwrap()
}

#[test]
fn new_order_becomes_a_command_with_the_session_account() {
    let o = orders::NewOrder::sample(&[1, 2, 3, 4, 5, 6, 7, 8, 9]);
    let cmd = to_command(&Inbound::NewOrder(o), AccountId(9), Timestamp(5)).unwrap();
    let Action::New(n) = cmd.action else { panic!() };
    assert_eq!(
        (n.account, n.client_id, n.price, n.qty),
        (AccountId(9), o.client_order_id, o.price, o.qty)
    );
    assert_eq!(cmd.ts, Timestamp(5));
    let all = orders::MassCancel {
        client_order_id: ClientOrderId(1),
        instrument: None,
        side: None,
    };
    assert!(to_command(&Inbound::MassCancel(all), AccountId(9), Timestamp(5)).is_none());
    let c = mass_cancel_of(&all, InstrumentId(3), AccountId(9), Timestamp(5));
    assert!(matches!(c.action, Action::MassCancel(m) if m.instrument == InstrumentId(3)));
}

#[test]
fn accepted_echoes_the_order_to_the_requester() {
    let wire = orders::NewOrder {
        client_order_id: ClientOrderId(3),
        price: Price::from_raw(100),
        qty: Qty::from_raw(2),
        expire_at: Timestamp(0),
        instrument: InstrumentId(1),
        side: Side::Sell,
        order_type: OrderType::PostOnly,
        tif: TimeInForce::Gtc,
        stp: StpMode::CancelBoth,
    };
    let ev = Event::Accepted(Accepted {
        instrument: InstrumentId(1),
        id: OrderId(11),
        client_id: ClientOrderId(3),
        account: AccountId(1),
        side: Side::Sell,
        price: Price::from_raw(100),
        qty: Qty::from_raw(2),
    });
    let (dest, msg) = one(reports_for(
        &ev,
        &Ctx {
            new_order: Some(wire),
            ..ctx()
        },
    ));
    assert_eq!(dest, Dest::Requester);
    let Outbound::Accepted(a) = msg else { panic!() };
    assert_eq!(
        (a.order_id, a.engine_seq, a.engine_time),
        (OrderId(11), 7, Timestamp(99))
    );
    assert_eq!(
        (a.order_type, a.stp),
        (OrderType::PostOnly, StpMode::CancelBoth)
    );
}

#[test]
fn rejects_carry_the_reason_code_and_kind() {
    let rej = |command| {
        Event::Rejected(Rejected {
            instrument: InstrumentId(1),
            command,
            id: OrderId(5),
            client_id: ClientOrderId(6),
            account: AccountId(1),
            reason: RejectReason::NotOwner,
        })
    };
    let (_, m) = one(reports_for(&rej(CommandKind::New), &ctx()));
    assert!(matches!(m, Outbound::Rejected(r) if r.reason == ReasonCode(11)));
    let (_, m) = one(reports_for(&rej(CommandKind::Cancel), &ctx()));
    let Outbound::CancelRejected(c) = m else {
        panic!()
    };
    assert_eq!(
        (c.reason, c.request_kind, c.order_id),
        (
            ReasonCode(RejectReason::NotOwner.code()),
            RequestKind::Cancel,
            OrderId(5)
        )
    );
    let (_, m) = one(reports_for(&rej(CommandKind::Replace), &ctx()));
    assert!(matches!(m, Outbound::CancelRejected(c) if c.request_kind == RequestKind::Replace));
}

#[test]
fn a_fill_goes_to_maker_and_taker_owners() {
    let ev = Event::Fill(Fill {
        instrument: InstrumentId(1),
        trade_id: 4,
        maker_id: OrderId(1),
        taker_id: OrderId(2),
        maker_client_id: ClientOrderId(10),
        taker_client_id: ClientOrderId(20),
        maker_account: AccountId(1),
        taker_account: AccountId(2),
        taker_side: Side::Buy,
        price: Price::from_raw(100),
        qty: Qty::from_raw(3),
        maker_leaves: Qty::from_raw(0),
        taker_leaves: Qty::from_raw(1),
    });
    let r = reports_for(&ev, &ctx());
    let (d0, Outbound::Fill(maker)) = r[0].unwrap() else {
        panic!()
    };
    let (d1, Outbound::Fill(taker)) = r[1].unwrap() else {
        panic!()
    };
    assert_eq!(
        (d0, d1),
        (Dest::OwnerOf(OrderId(1)), Dest::OwnerOf(OrderId(2)))
    );
    assert_eq!(
        (maker.side, maker.role, maker.client_order_id),
        (Side::Sell, LiquidityRole::Maker, ClientOrderId(10))
    );
    assert_eq!(
        (taker.side, taker.role, taker.leaves_qty),
        (Side::Buy, LiquidityRole::Taker, Qty::from_raw(1))
    );
    assert_eq!(maker.trade_id, taker.trade_id);
    assert!(
        matches!(feed_for(&ev, Timestamp(1)), Some(MdMessage::Trade(t)) if t.trade_id == 4 && t.aggressor_side == Side::Buy)
    );
}

#[test]
fn cancels_name_the_request_only_when_requested() {
    let cancel = |reason| {
        Event::Cancelled(Cancelled {
            instrument: InstrumentId(1),
            id: OrderId(8),
            client_id: ClientOrderId(2),
            account: AccountId(1),
            side: Side::Buy,
            price: Price::from_raw(100),
            qty: Qty::from_raw(1),
            leaves: Qty::from_raw(0),
            reason,
        })
    };
    let (d, m) = one(reports_for(&cancel(CancelReason::UserRequested), &ctx()));
    assert_eq!(d, Dest::OwnerOf(OrderId(8)));
    assert!(
        matches!(m, Outbound::Cancelled(c) if c.request_id == ClientOrderId(55) && c.reason == ReasonCode(1))
    );
    let (_, m) = one(reports_for(&cancel(CancelReason::Unfilled), &ctx()));
    assert!(
        matches!(m, Outbound::Cancelled(c) if c.request_id == ClientOrderId(0) && c.reason == ReasonCode(3))
    );
}

#[test]
fn replaced_reports_the_previous_client_id_and_levels_go_to_the_feed_only() {
    let ev = Event::Replaced(Replaced {
        instrument: InstrumentId(1),
        id: OrderId(8),
        client_id: ClientOrderId(9),
        account: AccountId(1),
        side: Side::Buy,
        price: Price::from_raw(101),
        qty: Qty::from_raw(1),
        priority_kept: false,
    });
    let (_, m) = one(reports_for(&ev, &ctx()));
    assert!(matches!(m, Outbound::Replaced(r) if r.orig_client_order_id == ClientOrderId(44)));
    let lvl = Event::LevelChanged(LevelChanged {
        instrument: InstrumentId(1),
        side: Side::Sell,
        price: Price::from_raw(100),
        qty: Qty::from_raw(0),
        count: 0,
    });
    assert_eq!(reports_for(&lvl, &ctx()), [None, None]);
    assert!(
        matches!(feed_for(&lvl, Timestamp(1)), Some(MdMessage::L2Update(u)) if u.qty.is_zero() && u.side == Side::Sell)
    );
}
