use peregrine_book::{Action, Command, NewOrder};
use peregrine_types::{ClientOrderId, InstrumentId, InstrumentSpec, StpMode};

use super::*;

fn engine_with_orders() -> MatchingEngine {
    let mut e = MatchingEngine::new(
        &[InstrumentSpec::example(1), InstrumentSpec::example(2)],
        64,
    )
    .unwrap();
    let mut ev = Vec::new();
    for (account, client, instrument, price) in
        [(1, 10, 1, 9_900), (2, 20, 1, 9_800), (1, 11, 2, 9_700)]
    {
        e.execute(
            &Command {
                ts: Timestamp(1),
                action: Action::New(NewOrder {
                    instrument: InstrumentId(instrument),
                    id: OrderId(0),
                    client_id: ClientOrderId(client),
                    account: AccountId(account),
                    side: Side::Buy,
                    order_type: OrderType::Limit,
                    tif: TimeInForce::Gtc,
                    stp: StpMode::None,
                    price: Price::from_raw(price),
                    qty: Qty::from_raw(3),
                    expire_at: Timestamp(0),
                }),
            },
            &mut ev,
        );
    }
    e
}

const AT: AsOf = AsOf {
    engine_seq: 3,
    engine_time: Timestamp(1),
};

fn status(e: &MatchingEngine, scope: Scope, order: u64, client: u64) -> OrderStatus {
    let req = OrderStatusRequest {
        request_id: 5,
        order_id: OrderId(order),
        client_order_id: ClientOrderId(client),
        instrument: InstrumentId(1),
    };
    order_status(e, scope, &req, AT, |a| u64::from(a.0) * 100, |id| id.0 == 2)
}

#[test]
fn status_by_order_id_or_client_id_within_the_scope() {
    let e = engine_with_orders();
    let s = status(&e, Scope::Account(AccountId(1)), 1, 0);
    assert_eq!(
        (s.state, s.client_order_id, s.open_qty),
        (OrderState::New, ClientOrderId(10), Qty::from_raw(3))
    );
    assert_eq!(
        (s.account, s.report_seq, s.request_id),
        (AccountId(1), 100, 5)
    );
    let by_client = status(&e, Scope::Account(AccountId(2)), 0, 20);
    assert_eq!(
        (by_client.order_id, by_client.state),
        (OrderId(2), OrderState::PartiallyFilled)
    );
    let any = status(&e, Scope::All, 2, 0);
    assert_eq!(any.account, AccountId(2));
}

#[test]
fn a_foreign_order_looks_exactly_like_an_unknown_one() {
    let e = engine_with_orders();
    let foreign = status(&e, Scope::Account(AccountId(1)), 2, 0);
    let unknown = status(&e, Scope::Account(AccountId(1)), 999, 0);
    assert_eq!(foreign.state, OrderState::Unknown);
    // Everything but the echoed id is identical.
    assert_eq!(
        OrderStatus {
            order_id: OrderId(0),
            ..foreign
        },
        OrderStatus {
            order_id: OrderId(0),
            ..unknown
        }
    );
}

#[test]
fn open_orders_of_a_scope_and_nothing_of_another() {
    let e = engine_with_orders();
    let list = |scope, account, instrument| {
        let req = OpenOrdersRequest {
            request_id: 8,
            account,
            instrument,
        };
        let mut got = Vec::new();
        let end = open_orders(&e, scope, &req, AT, 77, |o| {
            got.push((o.account.0, o.client_order_id.0))
        });
        assert_eq!(end.count as usize, got.len());
        assert_eq!((end.request_id, end.report_seq), (8, 77));
        got
    };
    let mine = Scope::Account(AccountId(1));
    assert_eq!(list(mine, None, None), [(1, 10), (1, 11)]);
    assert_eq!(list(mine, None, Some(InstrumentId(2))), [(1, 11)]);
    assert!(
        list(mine, Some(AccountId(2)), None).is_empty(),
        "another account: nothing"
    );
    assert_eq!(
        list(Scope::All, None, Some(InstrumentId(1))),
        [(1, 10), (2, 20)]
    );
    assert_eq!(list(Scope::All, Some(AccountId(2)), None), [(2, 20)]);
}
