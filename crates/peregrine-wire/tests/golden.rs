//! Golden byte vectors: exact encodings that clients in other languages can test
//! against. The same vectors appear in `docs/protocol.md`.

use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, OrderId, OrderType, Price, Qty, Side, StpMode,
    TimeInForce, Timestamp,
};
use peregrine_wire::field::{Pad, SessionKind};
use peregrine_wire::md::packet::{stamp_send_time, PacketBuilder, PacketReader};
use peregrine_wire::md::Trade;
use peregrine_wire::orders::NewOrder;
use peregrine_wire::v2::{decode, Message};
use peregrine_wire::{v2, LiquidityRole, WireMessage};

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
         00 00 02 00 00 00 \
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

/// The version-2 login vector of `docs/protocol.md` §7: key 0x00..0x1f, nonce 32 ×
/// 0xAB, account 7 trading as itself, heartbeat 1000 ms, next report 1.
fn golden_login() -> (
    peregrine_wire::auth::AccountKey,
    [u8; 32],
    v2::session::Login,
) {
    let key = peregrine_wire::auth::AccountKey(core::array::from_fn(|i| i as u8));
    let nonce = [0xAB; 32];
    let mut login = v2::session::Login {
        next_report_seq: 1,
        proof: [0; 32],
        account: AccountId(7),
        target: Some(AccountId(7)),
        heartbeat_interval_ms: 1000,
        kind: SessionKind::Trading,
        reserved: Pad,
    };
    login.proof = login.proof_for(&key, &nonce);
    (key, nonce, login)
}

#[test]
fn v2_login_golden_bytes_and_proof() {
    let (key, nonce, login) = golden_login();
    assert_eq!(
        key.stored().to_hex(),
        "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
    );
    let mut buf = [0u8; 64];
    assert_eq!(login.encode(&mut buf), Ok(64));
    assert_eq!(hex(&buf), GOLDEN_LOGIN);
    assert!(login.verify(&key.stored(), &nonce));
    assert_eq!(v2::decode(&buf), Ok((v2::Message::Login(login), 64)));
}

#[test]
fn v2_fill_golden_bytes() {
    let fill = v2::reports::Fill {
        session_seq: 3,
        engine_seq: 41,
        engine_time: Timestamp(1_000),
        order_id: OrderId(17),
        client_order_id: ClientOrderId(5),
        trade_id: 9,
        price: Price::from_raw(10_050),
        qty: Qty::from_raw(2),
        leaves_qty: Qty::from_raw(1),
        instrument: InstrumentId(7),
        side: Side::Sell,
        role: LiquidityRole::Maker,
        reserved: Pad,
        report_seq: 12,
        account: AccountId(7),
    };
    let mut buf = [0u8; 100];
    assert_eq!(fill.encode(&mut buf), Ok(100));
    assert_eq!(
        hex(&buf),
        "64 00 92 02 00 00 00 00 \
         03 00 00 00 00 00 00 00 \
         29 00 00 00 00 00 00 00 \
         e8 03 00 00 00 00 00 00 \
         11 00 00 00 00 00 00 00 \
         05 00 00 00 00 00 00 00 \
         09 00 00 00 00 00 00 00 \
         42 27 00 00 00 00 00 00 \
         02 00 00 00 00 00 00 00 \
         01 00 00 00 00 00 00 00 \
         07 00 00 00 01 00 00 00 \
         0c 00 00 00 00 00 00 00 \
         07 00 00 00"
    );
    assert_eq!(v2::decode(&buf), Ok((v2::Message::Fill(fill), 100)));
}

/// Checked independently with Python's `hmac` and `hashlib` (docs/protocol.md §7).
const GOLDEN_LOGIN: &str = "40 00 04 02 00 00 00 00 \
     01 00 00 00 00 00 00 00 \
     d4 64 05 55 62 2c fc 4f 41 98 d3 30 67 51 eb 37 \
     e3 0f 91 a7 52 36 f8 3e dd 0a 61 2c a9 a4 ad 59 \
     07 00 00 00 07 00 00 00 e8 03 00 00 00 00 00 00";
