use super::*;
use peregrine_book::event::LevelChanged;
use peregrine_types::{ClientOrderId, InstrumentId, Price, Qty, Side};
use peregrine_wire::orders;
use peregrine_wire::WireMessage;

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
}

#[test]
fn levels_and_trades_go_to_the_feed() {
    let lvl = Event::LevelChanged(LevelChanged {
        instrument: InstrumentId(1),
        side: Side::Sell,
        price: Price::from_raw(100),
        qty: Qty::from_raw(0),
        count: 0,
    });
    assert!(
        matches!(feed_for(&lvl, Timestamp(1)), Some(MdMessage::L2Update(u)) if u.qty.is_zero() && u.side == Side::Sell)
    );
}
