//! The deterministic order mix: a cycle of four orders per session.
//!
//! | j mod 4 | order | effect |
//! |---|---|---|
//! | 0 | buy GTC limit, 1..4 ticks below the reference | rests (a bid) |
//! | 1 | sell GTC limit, 1..4 ticks above the reference | rests (an ask) |
//! | 2 | sell IOC limit, 10 ticks below the reference | takes the best bid |
//! | 3 | buy IOC limit, 10 ticks above the reference | takes the best ask |
//!
//! Every order is one minimum quantity, so each cycle adds and removes one bid and one
//! ask: the book stays small however long the run, and every crossing order trades
//! (after the first cycle).

use peregrine_types::{
    ClientOrderId, InstrumentSpec, OrderType, Price, Qty, Side, StpMode, TimeInForce, Timestamp,
};
use peregrine_wire::orders::NewOrder;

/// The `j`-th order of a session (its client order id is set by the session).
pub fn order(spec: &InstrumentSpec, j: u64) -> NewOrder {
    let tick = spec.tick_size;
    let level = (j / 4 % 4) as i64 + 1;
    let (side, offset, tif) = match j % 4 {
        0 => (Side::Buy, -level, TimeInForce::Gtc),
        1 => (Side::Sell, level, TimeInForce::Gtc),
        2 => (Side::Sell, -10, TimeInForce::Ioc),
        _ => (Side::Buy, 10, TimeInForce::Ioc),
    };
    let base = spec.reference_price - spec.reference_price % tick;
    NewOrder {
        client_order_id: ClientOrderId(0),
        price: Price::from_raw(base + offset * tick),
        qty: Qty::from_raw(spec.min_qty.max(spec.lot_size)),
        expire_at: Timestamp(0),
        instrument: spec.id,
        side,
        order_type: OrderType::Limit,
        tif,
        stp: StpMode::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_book::{Action, Command, Event, MatchingEngine};
    use peregrine_types::AccountId;

    #[test]
    fn mix_rests_and_crosses_and_keeps_the_book_small() {
        let spec = InstrumentSpec::example(1);
        let mut engine: MatchingEngine =
            MatchingEngine::new(std::slice::from_ref(&spec), 1024).unwrap();
        let mut events = Vec::new();
        let (mut fills, mut rejects) = (0, 0);
        for j in 0..4000u64 {
            let o = order(&spec, j);
            let cmd = Command {
                ts: Timestamp(j + 1),
                action: Action::New(peregrine_book::NewOrder {
                    instrument: o.instrument,
                    id: peregrine_types::OrderId(0),
                    client_id: ClientOrderId(j + 1),
                    account: AccountId((j % 3) as u32 + 1),
                    side: o.side,
                    order_type: o.order_type,
                    tif: o.tif,
                    stp: o.stp,
                    price: o.price,
                    qty: o.qty,
                    expire_at: o.expire_at,
                }),
            };
            events.clear();
            engine.execute(&cmd, &mut events);
            fills += events
                .iter()
                .filter(|e| matches!(e, Event::Fill(_)))
                .count();
            rejects += events
                .iter()
                .filter(|e| matches!(e, Event::Rejected(_)))
                .count();
        }
        assert_eq!(rejects, 0);
        assert_eq!(fills, 2000, "every IOC takes one resting lot");
        let mut resting = 0;
        engine
            .book(spec.id)
            .unwrap()
            .visit_orders(&mut |_| resting += 1);
        assert_eq!(resting, 0);
    }
}
