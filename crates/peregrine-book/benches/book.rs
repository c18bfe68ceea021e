//! Criterion micro benches of the book's basic operations (mean time with confidence
//! intervals and change detection). Percentiles and baselines: `peregrine bench book`.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use peregrine_book::{Action, Cancel, Command, CountingSink, NewOrder, OrderBook};
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, InstrumentSpec, OrderId, OrderType, Price, Qty, Side,
    StpMode, TimeInForce, Timestamp,
};

fn order(id: u64, side: Side, price: i64, tif: TimeInForce) -> Command {
    Command {
        ts: Timestamp(1),
        action: Action::New(NewOrder {
            instrument: InstrumentId(1),
            id: OrderId(id),
            client_id: ClientOrderId(id),
            account: AccountId((id % 64) as u32),
            side,
            order_type: OrderType::Limit,
            tif,
            stp: StpMode::None,
            price: Price::from_raw(price),
            qty: Qty::from_raw(10),
            expire_at: Timestamp(0),
        }),
    }
}

fn cancel(id: u64) -> Command {
    Command {
        ts: Timestamp(1),
        action: Action::Cancel(Cancel {
            instrument: InstrumentId(1),
            id: OrderId(id),
            account: AccountId((id % 64) as u32),
            client_id: ClientOrderId(id),
        }),
    }
}

/// A book with 1,000 resting orders on 500 levels a side around 10,000.
fn book() -> (OrderBook, u64) {
    let mut b: OrderBook = OrderBook::new(InstrumentSpec::example(1), 1 << 16);
    let mut sink = CountingSink::default();
    for i in 0..1_000u64 {
        let (side, price) = if i % 2 == 0 {
            (Side::Buy, 9_999 - (i as i64 / 2) % 500)
        } else {
            (Side::Sell, 10_001 + (i as i64 / 2) % 500)
        };
        b.execute(&order(i + 1, side, price, TimeInForce::Gtc), &mut sink);
    }
    (b, 1_001)
}

fn benches(c: &mut Criterion) {
    let mut sink = CountingSink::default();
    c.bench_function("insert_then_cancel", |bench| {
        let (mut b, mut id) = book();
        bench.iter(|| {
            id += 1;
            b.execute(&order(id, Side::Buy, 9_990, TimeInForce::Gtc), &mut sink);
            b.execute(&cancel(id), &mut sink);
        })
    });
    c.bench_function("cross_one_and_refill", |bench| {
        let (mut b, mut id) = book();
        bench.iter(|| {
            id += 2;
            b.execute(&order(id, Side::Sell, 10_000, TimeInForce::Gtc), &mut sink);
            b.execute(
                &order(id + 1, Side::Buy, 10_000, TimeInForce::Ioc),
                &mut sink,
            );
        })
    });
    c.bench_function("sweep_5_levels", |bench| {
        bench.iter_batched_ref(
            book,
            |(b, id)| {
                let mut cmd = order(*id, Side::Buy, 10_005, TimeInForce::Ioc);
                if let Action::New(o) = &mut cmd.action {
                    o.qty = Qty::from_raw(50); // one order of 10 on each of 10,001..=10,005
                }
                b.execute(&cmd, &mut sink)
            },
            BatchSize::LargeInput,
        )
    });
}

criterion_group!(book_benches, benches);
criterion_main!(book_benches);
