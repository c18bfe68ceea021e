//! Layout tests: every message's size, type code and field offsets are pinned here by
//! hand, independently of the descriptors the code generates, and the encoder is
//! checked to write each field exactly inside its declared byte range.

use peregrine_wire::header::HEADER_FIELDS;
use peregrine_wire::md::packet::{PACKET_HEADER_FIELDS, PACKET_HEADER_SIZE};
use peregrine_wire::md::recovery::Recovery;
use peregrine_wire::md::MdMessage;
use peregrine_wire::{Message, MessageDesc, HEADER_SIZE, MAX_MESSAGE_SIZE};

type Pinned = (
    &'static str,
    u8,
    usize,
    &'static [(&'static str, usize, usize)],
);

const OUT: [(&str, usize, usize); 3] = [
    ("session_seq", 8, 8),
    ("engine_seq", 16, 8),
    ("engine_time", 24, 8),
];

macro_rules! out {
    ($($f:expr),* $(,)?) => {
        &[OUT[0], OUT[1], OUT[2], $($f),*]
    };
}

const PINNED: &[Pinned] = &[
    (
        "Login",
        0x01,
        32,
        &[
            ("account", 8, 4),
            ("heartbeat_interval_ms", 12, 4),
            ("credential", 16, 16),
        ],
    ),
    ("Logout", 0x02, 8, &[]),
    ("ClientHeartbeat", 0x03, 8, &[]),
    (
        "NewOrder",
        0x10,
        48,
        &[
            ("client_order_id", 8, 8),
            ("price", 16, 8),
            ("qty", 24, 8),
            ("expire_at", 32, 8),
            ("instrument", 40, 4),
            ("side", 44, 1),
            ("order_type", 45, 1),
            ("tif", 46, 1),
            ("stp", 47, 1),
        ],
    ),
    (
        "Cancel",
        0x11,
        28,
        &[
            ("client_order_id", 8, 8),
            ("order_id", 16, 8),
            ("instrument", 24, 4),
        ],
    ),
    (
        "Replace",
        0x12,
        44,
        &[
            ("client_order_id", 8, 8),
            ("order_id", 16, 8),
            ("new_price", 24, 8),
            ("new_qty", 32, 8),
            ("instrument", 40, 4),
        ],
    ),
    (
        "MassCancel",
        0x13,
        21,
        &[
            ("client_order_id", 8, 8),
            ("instrument", 16, 4),
            ("side", 20, 1),
        ],
    ),
    (
        "LoginAccepted",
        0x81,
        40,
        out![("account", 32, 4), ("heartbeat_interval_ms", 36, 4)],
    ),
    ("LoginRejected", 0x82, 34, out![("reason", 32, 2)]),
    ("ServerHeartbeat", 0x83, 32, out![]),
    (
        "Accepted",
        0x90,
        80,
        out![
            ("order_id", 32, 8),
            ("client_order_id", 40, 8),
            ("price", 48, 8),
            ("qty", 56, 8),
            ("expire_at", 64, 8),
            ("instrument", 72, 4),
            ("side", 76, 1),
            ("order_type", 77, 1),
            ("tif", 78, 1),
            ("stp", 79, 1),
        ],
    ),
    (
        "Rejected",
        0x91,
        46,
        out![
            ("client_order_id", 32, 8),
            ("instrument", 40, 4),
            ("reason", 44, 2)
        ],
    ),
    (
        "Fill",
        0x92,
        86,
        out![
            ("order_id", 32, 8),
            ("client_order_id", 40, 8),
            ("trade_id", 48, 8),
            ("price", 56, 8),
            ("qty", 64, 8),
            ("leaves_qty", 72, 8),
            ("instrument", 80, 4),
            ("side", 84, 1),
            ("role", 85, 1),
        ],
    ),
    (
        "Cancelled",
        0x93,
        71,
        out![
            ("order_id", 32, 8),
            ("client_order_id", 40, 8),
            ("request_id", 48, 8),
            ("cancelled_qty", 56, 8),
            ("instrument", 64, 4),
            ("reason", 68, 2),
            ("side", 70, 1),
        ],
    ),
    (
        "Replaced",
        0x94,
        77,
        out![
            ("order_id", 32, 8),
            ("client_order_id", 40, 8),
            ("orig_client_order_id", 48, 8),
            ("new_price", 56, 8),
            ("new_qty", 64, 8),
            ("instrument", 72, 4),
            ("priority_kept", 76, 1),
        ],
    ),
    (
        "CancelRejected",
        0x95,
        55,
        out![
            ("client_order_id", 32, 8),
            ("order_id", 40, 8),
            ("instrument", 48, 4),
            ("reason", 52, 2),
            ("request_kind", 54, 1),
        ],
    ),
    (
        "Deposit",
        0x20,
        32,
        &[
            ("request_id", 8, 8),
            ("amount", 16, 8),
            ("account", 24, 4),
            ("asset", 28, 4),
        ],
    ),
    (
        "Withdraw",
        0x21,
        32,
        &[
            ("request_id", 8, 8),
            ("amount", 16, 8),
            ("account", 24, 4),
            ("asset", 28, 4),
        ],
    ),
    (
        "BalanceQuery",
        0x22,
        24,
        &[("request_id", 8, 8), ("account", 16, 4), ("asset", 20, 4)],
    ),
    (
        "Balance",
        0xA0,
        64,
        out![
            ("request_id", 32, 8),
            ("available", 40, 8),
            ("reserved", 48, 8),
            ("account", 56, 4),
            ("asset", 60, 4),
        ],
    ),
    (
        "AdminRejected",
        0xA1,
        50,
        out![
            ("request_id", 32, 8),
            ("account", 40, 4),
            ("asset", 44, 4),
            ("reason", 48, 2),
        ],
    ),
    (
        "Trade",
        0x40,
        45,
        &[
            ("trade_id", 8, 8),
            ("price", 16, 8),
            ("qty", 24, 8),
            ("engine_time", 32, 8),
            ("instrument", 40, 4),
            ("aggressor_side", 44, 1),
        ],
    ),
    (
        "L2Update",
        0x41,
        41,
        &[
            ("price", 8, 8),
            ("qty", 16, 8),
            ("engine_time", 24, 8),
            ("instrument", 32, 4),
            ("order_count", 36, 4),
            ("side", 40, 1),
        ],
    ),
    (
        "Commitment",
        0x42,
        104,
        &[
            ("tick_seq", 8, 8),
            ("timestamp", 16, 8),
            ("tx_count", 24, 8),
            ("trade_count", 32, 8),
            ("state_hash", 40, 32),
            ("merkle_root", 72, 32),
        ],
    ),
    (
        "ReplayRequest",
        0x50,
        26,
        &[("session_id", 8, 8), ("first_seq", 16, 8), ("count", 24, 2)],
    ),
    (
        "ReplayResponse",
        0x51,
        28,
        &[
            ("session_id", 8, 8),
            ("first_seq", 16, 8),
            ("count", 24, 2),
            ("reason", 26, 2),
        ],
    ),
    (
        "SnapshotRequest",
        0x52,
        20,
        &[("request_id", 8, 8), ("instrument", 16, 4)],
    ),
    (
        "SnapshotHeader",
        0x53,
        50,
        &[
            ("request_id", 8, 8),
            ("session_id", 16, 8),
            ("as_of_seq", 24, 8),
            ("engine_time", 32, 8),
            ("instrument", 40, 4),
            ("level_count", 44, 4),
            ("reason", 48, 2),
        ],
    ),
    (
        "SnapshotLevel",
        0x54,
        29,
        &[
            ("price", 8, 8),
            ("qty", 16, 8),
            ("order_count", 24, 4),
            ("side", 28, 1),
        ],
    ),
    (
        "SnapshotEnd",
        0x55,
        32,
        &[
            ("request_id", 8, 8),
            ("as_of_seq", 16, 8),
            ("instrument", 24, 4),
            ("level_count", 28, 4),
        ],
    ),
];

/// Version-1 messages (the version-2 additions to the recovery channel are pinned in
/// `tests/layout_v2.rs`).
fn all_descs() -> Vec<MessageDesc> {
    let mut v: Vec<MessageDesc> = Message::MESSAGES.to_vec();
    for d in Recovery::MESSAGES.iter().chain(MdMessage::MESSAGES) {
        if d.version == 1 && !v.contains(d) {
            v.push(*d);
        }
    }
    v
}

fn pinned(name: &str) -> &'static Pinned {
    PINNED
        .iter()
        .find(|p| p.0 == name)
        .unwrap_or_else(|| panic!("{name} is not pinned"))
}

#[test]
fn every_message_matches_its_pinned_layout() {
    let descs = all_descs();
    assert_eq!(
        descs.len(),
        PINNED.len(),
        "every message pinned exactly once"
    );
    for d in &descs {
        let (name, code, size, fields) = *pinned(d.name);
        assert_eq!(
            (d.msg_type, d.size),
            (code, size),
            "{name}: type code and size"
        );
        let got: Vec<_> = d
            .fields
            .iter()
            .map(|f| (f.name, f.offset, f.size))
            .collect();
        assert_eq!(got, fields.to_vec(), "{name}: field offsets");
    }
}

#[test]
fn fields_are_contiguous_and_naturally_aligned() {
    for d in all_descs() {
        let mut at = HEADER_SIZE;
        for f in d.fields {
            assert_eq!(
                f.offset, at,
                "{}.{} follows the previous field",
                d.name, f.name
            );
            let align = if f.size <= 8 { f.size } else { 1 };
            assert_eq!(
                f.offset % align,
                0,
                "{}.{} is naturally aligned",
                d.name,
                f.name
            );
            at += f.size;
        }
        assert_eq!(at, d.size, "{} has no trailing padding", d.name);
        assert!(d.size <= MAX_MESSAGE_SIZE, "{} fits the length cap", d.name);
    }
}

#[test]
fn type_codes_are_unique_across_families() {
    let descs = all_descs();
    for (i, a) in descs.iter().enumerate() {
        for b in &descs[i + 1..] {
            assert_ne!(a.msg_type, b.msg_type, "{} and {}", a.name, b.name);
        }
    }
    let feed: Vec<_> = MdMessage::MESSAGES.iter().map(|d| d.name).collect();
    assert_eq!(
        feed,
        [
            "Trade",
            "L2Update",
            "Commitment",
            "MarketStatus",
            "AuctionIndicative"
        ]
    );
}

#[test]
fn header_and_packet_header_layouts() {
    let h: Vec<_> = HEADER_FIELDS
        .iter()
        .map(|f| (f.name, f.offset, f.size))
        .collect();
    assert_eq!(
        h,
        [
            ("length", 0, 2),
            ("msg_type", 2, 1),
            ("version", 3, 1),
            ("reserved", 4, 4)
        ]
    );
    let p: Vec<_> = PACKET_HEADER_FIELDS
        .iter()
        .map(|f| (f.name, f.offset, f.size))
        .collect();
    assert_eq!(
        p,
        [
            ("session_id", 0, 8),
            ("first_seq", 8, 8),
            ("count", 16, 2),
            ("send_time", 18, 8)
        ]
    );
    assert_eq!((HEADER_SIZE, PACKET_HEADER_SIZE), (8, 26));
}

/// Encodes `sample(seeds)` and `sample(seeds with seed k bumped)`: the bytes that differ
/// must all lie inside field `k`'s declared range (and some must differ).
fn check_field_ranges(name: &str, fields: usize, encode: &dyn Fn(&[u64]) -> Vec<u8>) {
    let d = all_descs().into_iter().find(|d| d.name == name).unwrap();
    assert_eq!(d.fields.len(), fields);
    let base: Vec<u64> = (0..fields as u64).map(|i| 1000 + 7 * i).collect();
    let a = encode(&base);
    assert_eq!(a.len(), d.size);
    assert_eq!(
        &a[..2],
        &(d.size as u16).to_le_bytes(),
        "{name}: length field"
    );
    assert_eq!(a[2], d.msg_type, "{name}: type byte");
    for (k, f) in d.fields.iter().enumerate() {
        let mut seeds = base.clone();
        seeds[k] += 1;
        let b = encode(&seeds);
        let diff: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
        assert!(
            !diff.is_empty(),
            "{name}.{}: changing it changes the bytes",
            f.name
        );
        for i in diff {
            assert!(
                (f.offset..f.offset + f.size).contains(&i),
                "{name}.{}: byte {i} outside {}..{}",
                f.name,
                f.offset,
                f.offset + f.size
            );
        }
    }
}

#[test]
fn encoders_write_each_field_at_its_offset() {
    for (i, d) in Message::MESSAGES.iter().enumerate() {
        check_field_ranges(d.name, d.fields.len(), &|s: &[u64]| {
            let mut buf = [0u8; 128];
            let n = Message::sample(i, s).encode(&mut buf).unwrap();
            buf[..n].to_vec()
        });
    }
    for (i, d) in Recovery::MESSAGES.iter().enumerate() {
        if d.version != 1 {
            continue;
        }
        check_field_ranges(d.name, d.fields.len(), &|s: &[u64]| {
            let mut buf = [0u8; 128];
            let n = Recovery::sample(i, s).encode(&mut buf).unwrap();
            buf[..n].to_vec()
        });
    }
}
