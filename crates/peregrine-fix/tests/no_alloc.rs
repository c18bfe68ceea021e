//! The codec's hot path allocates nothing once warm: framing, the header view, the
//! dictionary's validation, a NewOrderSingle decode with exact decimals, and
//! encoding an ExecutionReport into a reused encoder. (The session adds the store,
//! whose buffers grow amortised.)

use peregrine_fix::app::{
    decimal_units, ExecType, ExecutionReport, NewOrderSingle, OrdStatus, OrdType, Side, TimeInForce,
};
use peregrine_fix::codec::{frame, Encoder, Frame, FrameLimits, Message, Precision};
use peregrine_fix::dict::{validate, Validation};
use peregrine_testkit::{allocations_during, CountingAllocator};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

const T: u64 = 1_700_000_000_123_000_000;

fn order(enc: &mut Encoder) -> Vec<u8> {
    let mut w = enc.start(b"D");
    w.bytes(49, b"CLIENT1")
        .bytes(56, b"PEREGRINE")
        .uint(34, 7)
        .timestamp(52, T, Precision::Millis);
    w.bytes(11, b"order-1")
        .bytes(55, b"PGN-USD")
        .char(54, b'1')
        .decimal(38, 500, 0)
        .char(40, b'2');
    w.decimal(44, 10025, 2)
        .char(59, b'1')
        .timestamp(60, T, Precision::Millis);
    w.seal().to_vec()
}

fn report(enc: &mut Encoder, i: u64) -> usize {
    let er = ExecutionReport {
        order_id: 4_000_000 + i,
        cl_ord_id: b"order-1",
        orig_cl_ord_id: None,
        exec_id: b"1-17",
        exec_type: ExecType::Trade,
        ord_status: OrdStatus::PartiallyFilled,
        symbol: b"PGN-USD",
        side: Side::Buy,
        ord_type: Some(OrdType::Limit),
        time_in_force: Some(TimeInForce::Gtc),
        order_qty: Some(500),
        price: Some(10025),
        last: Some((10025, 200)),
        leaves_qty: 300,
        cum_qty: 200,
        notional: 10025 * 200,
        ord_rej_reason: None,
        text: None,
        ord_status_req_id: None,
        transact_time: T + i,
        price_decimals: 2,
        qty_decimals: 0,
    };
    let mut w = enc.start(b"8");
    w.bytes(49, b"PEREGRINE")
        .bytes(56, b"CLIENT1")
        .uint(34, i)
        .timestamp(52, T + i, Precision::Millis);
    er.encode(&mut w, Precision::Millis);
    w.seal().len()
}

#[test]
fn parse_decode_and_encode_do_not_allocate() {
    let mut enc = Encoder::default();
    let raw = order(&mut enc);
    report(&mut enc, 1); // warm: the buffer grows to the largest message once
    let n = allocations_during(|| {
        for i in 0..10_000u64 {
            let Some(Frame::Message { len }) = frame(&raw, FrameLimits::default()) else {
                panic!()
            };
            let m = Message::parse(&raw[..len]).unwrap();
            validate(&m, &Validation::default()).unwrap();
            let d = NewOrderSingle::decode(&m).unwrap();
            let qty = decimal_units(d.terms.order_qty, 0, 38).unwrap();
            let px = decimal_units(d.terms.price.unwrap(), 2, 44).unwrap();
            assert_eq!((qty, px), (500, 10025));
            assert!(report(&mut enc, i) > 100);
        }
    });
    assert_eq!(n, 0, "allocations on the codec's hot path");
}
