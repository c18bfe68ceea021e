//! Golden byte vectors: exact encodings that clients in other languages can test
//! against. The same vectors appear in `docs/protocol.md`.

use peregrine_types::{
    ClientOrderId, InstrumentId, OrderType, Price, Qty, Side, StpMode, TimeInForce, Timestamp,
};
use peregrine_wire::md::packet::{stamp_send_time, PacketBuilder, PacketReader};
use peregrine_wire::md::Trade;
use peregrine_wire::orders::NewOrder;
use peregrine_wire::{decode, Message, WireMessage};

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn golden_new_order() -> NewOrder {
    NewOrder {
        client_order_id: ClientOrderId(0x0102_0304_0506_0708),
        price: Price::from_raw(10_050),
        qty: Qty::from_raw(3),
        expire_at: Timestamp(0),
        instrument: InstrumentId(7),
        side: Side::Sell,
        order_type: OrderType::Limit,
        tif: TimeInForce::Ioc,
        stp: StpMode::CancelBoth,
    }
}

#[test]
fn new_order_golden_bytes() {
    let mut buf = [0u8; 48];
    assert_eq!(golden_new_order().encode(&mut buf), Ok(48));
    assert_eq!(
        hex(&buf),
        "30 00 10 01 00 00 00 00 \
         08 07 06 05 04 03 02 01 \
         42 27 00 00 00 00 00 00 \
         03 00 00 00 00 00 00 00 \
         00 00 00 00 00 00 00 00 \
         07 00 00 00 01 00 01 03"
    );
    assert_eq!(
        decode(&buf),
        Ok((Message::NewOrder(golden_new_order()), 48))
    );
}

#[test]
fn packet_golden_bytes() {
    let trade = Trade {
        trade_id: 9,
        price: Price::from_raw(10_050),
        qty: Qty::from_raw(2),
        engine_time: Timestamp(1_000),
        instrument: InstrumentId(7),
        aggressor_side: Side::Buy,
    };
    let mut buf = [0u8; 1400];
    let mut b = PacketBuilder::new(&mut buf, 1, 5).unwrap();
    b.push(trade).unwrap();
    let n = b.len();
    assert!(stamp_send_time(&mut buf[..n], 2_000));
    let packet = &buf[..n];
    assert_eq!(
        hex(packet),
        "01 00 00 00 00 00 00 00 05 00 00 00 00 00 00 00 01 00 \
         d0 07 00 00 00 00 00 00 \
         2d 00 40 01 00 00 00 00 \
         09 00 00 00 00 00 00 00 \
         42 27 00 00 00 00 00 00 \
         02 00 00 00 00 00 00 00 \
         e8 03 00 00 00 00 00 00 \
         07 00 00 00 00"
    );
    let got: Vec<_> = PacketReader::new(packet).unwrap().collect();
    assert_eq!(got, [Ok((5, trade.into()))]);
}
