//! One test per error variant, each produced through the public decoders exactly as a
//! peer's bytes would produce it.

use peregrine_wire::md::packet::{
    encode_heartbeat, PacketBuilder, PacketFormat, PacketReader, PushError, PACKET_HEADER_SIZE,
};
use peregrine_wire::md::{MdMessage, Trade};
use peregrine_wire::orders::{MassCancel, NewOrder};
use peregrine_wire::v2::reports::Replaced;
use peregrine_wire::v2::{decode, Inbound};
use peregrine_wire::{DecodeError, EncodeError, WireMessage};

fn new_order_bytes() -> [u8; 48] {
    let mut buf = [0u8; 48];
    NewOrder::sample(&[1, 2, 3, 4, 5, 0, 0, 0, 0])
        .encode(&mut buf)
        .unwrap();
    buf
}

#[test]
fn incomplete_asks_for_the_header_then_the_frame() {
    let buf = new_order_bytes();
    assert_eq!(
        decode(&buf[..5]),
        Err(DecodeError::Incomplete {
            needed: 8,
            available: 5
        })
    );
    assert_eq!(
        decode(&buf[..20]),
        Err(DecodeError::Incomplete {
            needed: 48,
            available: 20
        })
    );
    assert_eq!(
        decode(&[]),
        Err(DecodeError::Incomplete {
            needed: 8,
            available: 0
        })
    );
}

#[test]
fn bad_length_is_reported_from_two_bytes() {
    assert_eq!(decode(&[0, 0]), Err(DecodeError::BadLength { length: 0 }));
    assert_eq!(
        decode(&[0xff, 0xff, 0x10]),
        Err(DecodeError::BadLength { length: 0xffff })
    );
    assert_eq!(
        decode(&[7, 0, 0x10, 1, 0, 0, 0, 0]),
        Err(DecodeError::BadLength { length: 7 })
    );
}

#[test]
fn unknown_type() {
    assert_eq!(
        decode(&[8, 0, 0x7f, 1, 0, 0, 0, 0]),
        Err(DecodeError::UnknownType(0x7f))
    );
    // A market-data type is unknown to the order-entry decoders.
    assert_eq!(
        Inbound::decode(&[45, 0, 0x40, 1, 0, 0, 0, 0]),
        Err(DecodeError::UnknownType(0x40))
    );
}

#[test]
fn bad_version() {
    let mut buf = new_order_bytes();
    buf[3] = 2;
    assert_eq!(
        decode(&buf),
        Err(DecodeError::BadVersion {
            msg_type: 0x10,
            version: 2
        })
    );
}

#[test]
fn reserved_must_be_zero() {
    let mut buf = new_order_bytes();
    buf[7] = 1;
    let err = DecodeError::InvalidField {
        field: "reserved",
        value: 1 << 24,
    };
    assert_eq!(decode(&buf), Err(err));
}

#[test]
fn length_mismatch() {
    let mut buf = new_order_bytes();
    buf[0] = 40;
    let err = DecodeError::LengthMismatch {
        msg_type: 0x10,
        expected: 48,
        actual: 40,
    };
    assert_eq!(decode(&buf), Err(err));
}

#[test]
fn invalid_enum_fields_are_named() {
    let cases: [(usize, &str); 4] = [(44, "side"), (45, "order_type"), (46, "tif"), (47, "stp")];
    for (offset, field) in cases {
        let mut buf = new_order_bytes();
        buf[offset] = 9;
        assert_eq!(
            decode(&buf),
            Err(DecodeError::InvalidField { field, value: 9 })
        );
    }
}

#[test]
fn invalid_flag_and_side_filter() {
    let mut buf = [0u8; 92];
    Replaced::sample(&[1]).encode(&mut buf).unwrap();
    buf[76] = 2;
    let err = DecodeError::InvalidField {
        field: "priority_kept",
        value: 2,
    };
    assert_eq!(decode(&buf), Err(err));

    let mut buf = [0u8; 21];
    MassCancel::sample(&[1]).encode(&mut buf).unwrap();
    buf[20] = 3;
    assert_eq!(
        decode(&buf),
        Err(DecodeError::InvalidField {
            field: "side",
            value: 3
        })
    );
}

#[test]
fn buffer_too_small() {
    let mut buf = [0u8; 47];
    let err = EncodeError::BufferTooSmall {
        needed: 48,
        available: 47,
    };
    assert_eq!(NewOrder::sample(&[1]).encode(&mut buf), Err(err));
    assert_eq!(
        PacketBuilder::new(&mut buf[..10], 1, 1).map(|_| ()),
        Err(EncodeError::BufferTooSmall {
            needed: PACKET_HEADER_SIZE,
            available: 10
        })
    );
}

fn trade_packet(buf: &mut [u8]) -> usize {
    let mut b = PacketBuilder::new(buf, 1, 1).unwrap();
    b.push(Trade::sample(&[1])).unwrap();
    b.push(Trade::sample(&[2])).unwrap();
    b.len()
}

#[test]
fn packet_truncated() {
    let mut buf = [0u8; 200];
    let n = trade_packet(&mut buf);
    assert_eq!(
        PacketReader::new(&buf[..10]).map(|_| ()),
        Err(DecodeError::Truncated {
            needed: 16,
            available: 10
        })
    );
    let items: Vec<_> = PacketReader::new(&buf[..n - 1]).unwrap().collect();
    assert_eq!(items.len(), 2);
    assert!(items[0].is_ok());
    assert_eq!(
        items[1],
        Err(DecodeError::Truncated {
            needed: 45,
            available: 44
        })
    );
}

#[test]
fn packet_trailing_bytes() {
    let mut buf = [0u8; 200];
    let n = trade_packet(&mut buf);
    let items: Vec<_> = PacketReader::new(&buf[..n + 3]).unwrap().collect();
    assert_eq!(
        items.last(),
        Some(&Err(DecodeError::TrailingBytes { extra: 3 }))
    );
    let n = encode_heartbeat(&mut buf, PacketFormat::V2, 1, 9).unwrap();
    assert_eq!(
        PacketReader::new(&buf[..n + 1]).map(|_| ()),
        Err(DecodeError::TrailingBytes { extra: 1 })
    );
}

#[test]
fn packet_message_errors_stop_iteration() {
    let mut buf = [0u8; 200];
    let n = trade_packet(&mut buf);
    buf[PACKET_HEADER_SIZE + 44] = 5; // first trade's aggressor_side
    let items: Vec<_> = PacketReader::new(&buf[..n]).unwrap().collect();
    let err = DecodeError::InvalidField {
        field: "aggressor_side",
        value: 5,
    };
    assert_eq!(items, [Err(err)]);
}

#[test]
fn packet_sequence_overflow_is_invalid() {
    let mut buf = [0u8; 200];
    let n = trade_packet(&mut buf);
    buf[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    let err = DecodeError::InvalidField {
        field: "first_seq",
        value: u64::MAX,
    };
    assert_eq!(PacketReader::new(&buf[..n]).map(|_| ()), Err(err));
}

#[test]
fn push_full_hands_the_message_back() {
    let mut buf = [0u8; PACKET_HEADER_SIZE + 50];
    let mut b = PacketBuilder::new(&mut buf, 1, 1).unwrap();
    let t = Trade::sample(&[3]);
    b.push(t).unwrap();
    assert_eq!(b.push(t), Err(PushError::Full(MdMessage::Trade(t))));
}
