//! Version-2 layout tests: every version-2 order-entry message's type code, version,
//! size and field offsets pinned by hand, independently of the descriptors the code
//! generates; the encoder writes each field exactly inside its declared range; and the
//! recovery channel's version-2 messages.

use peregrine_wire::md::recovery::Recovery;
use peregrine_wire::{v2, MessageDesc, WireMessage};

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

/// (name, type, size, fields) of every version-2 message (version 2 unless listed in
/// `V1_TYPES`).
const PINNED: &[Pinned] = &[
    (
        "Login",
        0x04,
        64,
        &[
            ("next_report_seq", 8, 8),
            ("proof", 16, 32),
            ("account", 48, 4),
            ("target", 52, 4),
            ("heartbeat_interval_ms", 56, 4),
            ("kind", 60, 1),
            ("flags", 61, 1),
            ("reserved", 62, 2),
        ],
    ),
    (
        "OrderStatusRequest",
        0x14,
        36,
        &[
            ("request_id", 8, 8),
            ("order_id", 16, 8),
            ("client_order_id", 24, 8),
            ("instrument", 32, 4),
        ],
    ),
    (
        "OpenOrdersRequest",
        0x15,
        24,
        &[
            ("request_id", 8, 8),
            ("account", 16, 4),
            ("instrument", 20, 4),
        ],
    ),
    ("Challenge", 0x84, 64, out![("nonce", 32, 32)]),
    (
        "LoginAccepted",
        0x81,
        65,
        out![
            ("account", 32, 4),
            ("heartbeat_interval_ms", 36, 4),
            ("next_report_seq", 40, 8),
            ("oldest_report_seq", 48, 8),
            ("target", 56, 4),
            ("instrument_count", 60, 4),
            ("kind", 64, 1),
        ],
    ),
    (
        "LoginRejected",
        0x82,
        40,
        out![
            ("reason", 32, 2),
            ("reserved", 34, 2),
            ("retry_after_ms", 36, 4)
        ],
    ),
    (
        "ServerHeartbeat",
        0x83,
        40,
        out![("next_report_seq", 32, 8)],
    ),
    (
        "ReplayStart",
        0x85,
        58,
        out![
            ("from_seq", 32, 8),
            ("to_seq", 40, 8),
            ("count", 48, 8),
            ("reason", 56, 2)
        ],
    ),
    (
        "ReplayEnd",
        0x86,
        48,
        out![("next_report_seq", 32, 8), ("count", 40, 8)],
    ),
    (
        "LeaderRedirect",
        0x87,
        112,
        out![
            ("leader_id", 32, 8),
            ("retry_after_ms", 40, 4),
            ("reserved", 44, 4),
            ("address", 48, 64),
        ],
    ),
    (
        "InstrumentDefinition",
        0x9A,
        111,
        out![
            ("tick_size", 32, 8),
            ("lot_size", 40, 8),
            ("min_qty", 48, 8),
            ("max_qty", 56, 8),
            ("reference_price", 64, 8),
            ("band", 72, 8),
            ("symbol", 80, 16),
            ("instrument", 96, 4),
            ("base_asset", 100, 4),
            ("quote_asset", 104, 4),
            ("price_decimals", 108, 1),
            ("qty_decimals", 109, 1),
            ("status", 110, 1),
        ],
    ),
    (
        "Accepted",
        0x90,
        92,
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
            ("report_seq", 80, 8),
            ("account", 88, 4),
        ],
    ),
    (
        "Rejected",
        0x91,
        60,
        out![
            ("client_order_id", 32, 8),
            ("instrument", 40, 4),
            ("reason", 44, 2),
            ("reserved", 46, 2),
            ("report_seq", 48, 8),
            ("account", 56, 4),
        ],
    ),
    (
        "Cancelled",
        0x93,
        84,
        out![
            ("order_id", 32, 8),
            ("client_order_id", 40, 8),
            ("request_id", 48, 8),
            ("cancelled_qty", 56, 8),
            ("instrument", 64, 4),
            ("reason", 68, 2),
            ("side", 70, 1),
            ("reserved", 71, 1),
            ("report_seq", 72, 8),
            ("account", 80, 4),
        ],
    ),
    (
        "Replaced",
        0x94,
        92,
        out![
            ("order_id", 32, 8),
            ("client_order_id", 40, 8),
            ("orig_client_order_id", 48, 8),
            ("new_price", 56, 8),
            ("new_qty", 64, 8),
            ("instrument", 72, 4),
            ("priority_kept", 76, 1),
            ("reserved", 77, 3),
            ("report_seq", 80, 8),
            ("account", 88, 4),
        ],
    ),
    (
        "CancelRejected",
        0x95,
        68,
        out![
            ("client_order_id", 32, 8),
            ("order_id", 40, 8),
            ("instrument", 48, 4),
            ("reason", 52, 2),
            ("request_kind", 54, 1),
            ("reserved", 55, 1),
            ("report_seq", 56, 8),
            ("account", 64, 4),
        ],
    ),
    (
        "MassCancelDone",
        0x96,
        61,
        out![
            ("request_id", 32, 8),
            ("report_seq", 40, 8),
            ("cancelled", 48, 4),
            ("instrument", 52, 4),
            ("account", 56, 4),
            ("side", 60, 1),
        ],
    ),
    (
        "OrderStatus",
        0x97,
        100,
        out![
            ("request_id", 32, 8),
            ("order_id", 40, 8),
            ("client_order_id", 48, 8),
            ("price", 56, 8),
            ("open_qty", 64, 8),
            ("expire_at", 72, 8),
            ("report_seq", 80, 8),
            ("account", 88, 4),
            ("instrument", 92, 4),
            ("side", 96, 1),
            ("order_type", 97, 1),
            ("tif", 98, 1),
            ("state", 99, 1),
        ],
    ),
    (
        "OpenOrder",
        0x98,
        91,
        out![
            ("request_id", 32, 8),
            ("order_id", 40, 8),
            ("client_order_id", 48, 8),
            ("price", 56, 8),
            ("open_qty", 64, 8),
            ("expire_at", 72, 8),
            ("account", 80, 4),
            ("instrument", 84, 4),
            ("side", 88, 1),
            ("order_type", 89, 1),
            ("tif", 90, 1),
        ],
    ),
    (
        "OpenOrdersEnd",
        0x99,
        52,
        out![
            ("request_id", 32, 8),
            ("report_seq", 40, 8),
            ("count", 48, 4)
        ],
    ),
    (
        "Balance",
        0xA0,
        72,
        out![
            ("request_id", 32, 8),
            ("available", 40, 8),
            ("reserved", 48, 8),
            ("account", 56, 4),
            ("asset", 60, 4),
            ("report_seq", 64, 8),
        ],
    ),
    (
        "AdminRejected",
        0xA1,
        64,
        out![
            ("request_id", 32, 8),
            ("account", 40, 4),
            ("asset", 44, 4),
            ("reason", 48, 2),
            ("padding", 50, 6),
            ("report_seq", 56, 8),
        ],
    ),
    ("InstrumentListRequest", 0x56, 16, &[("request_id", 8, 8)]),
    (
        "InstrumentList",
        0x57,
        22,
        &[("request_id", 8, 8), ("count", 16, 4), ("reason", 20, 2)],
    ),
    (
        "RecoveryRedirect",
        0x58,
        88,
        &[
            ("leader_id", 8, 8),
            ("retry_after_ms", 16, 4),
            ("reserved", 20, 4),
            ("address", 24, 64),
        ],
    ),
];

/// Version-2 order-entry types whose layout is version 1's, unchanged (pinned in
/// `tests/layout.rs`).
const V1_TYPES: &[&str] = &[
    "Logout",
    "ClientHeartbeat",
    "NewOrder",
    "Cancel",
    "Replace",
    "MassCancel",
    "Deposit",
    "Withdraw",
    "BalanceQuery",
];

fn v2_descs() -> Vec<MessageDesc> {
    let mut v: Vec<MessageDesc> = v2::Message::MESSAGES
        .iter()
        .filter(|d| !V1_TYPES.contains(&d.name) && d.version == 2)
        .copied()
        .collect();
    for d in Recovery::MESSAGES {
        if d.version == 2 && !v.contains(d) {
            v.push(*d);
        }
    }
    v
}

#[test]
fn every_v2_message_matches_its_pinned_layout() {
    let descs = v2_descs();
    assert_eq!(
        descs.len(),
        PINNED.len(),
        "every message pinned exactly once"
    );
    for d in &descs {
        let (name, code, size, fields) = *PINNED
            .iter()
            .find(|p| p.0 == d.name)
            .unwrap_or_else(|| panic!("{} is not pinned", d.name));
        assert_eq!((d.msg_type, d.size, d.version), (code, size, 2), "{name}");
        let got: Vec<_> = d
            .fields
            .iter()
            .map(|f| (f.name, f.offset, f.size))
            .collect();
        assert_eq!(got, fields.to_vec(), "{name}: field offsets");
    }
    for d in v2::Message::MESSAGES {
        if V1_TYPES.contains(&d.name) {
            assert_eq!(d.version, 1, "{} is unchanged since version 1", d.name);
        }
    }
}

/// (name, type, size, fields) of every version-3 message: the venue's order types
/// (order entry and feed) and the fill with its fee.
const PINNED_V3: &[Pinned] = &[
    (
        "Fill",
        0x92,
        112,
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
            ("reserved", 86, 2),
            ("report_seq", 88, 8),
            ("account", 96, 4),
            ("reserved3", 100, 4),
            ("fee", 104, 8),
        ],
    ),
    (
        "NewOrderExt",
        0x16,
        72,
        &[
            ("client_order_id", 8, 8),
            ("price", 16, 8),
            ("qty", 24, 8),
            ("expire_at", 32, 8),
            ("stop_price", 40, 8),
            ("display_qty", 48, 8),
            ("instrument", 56, 4),
            ("trail", 60, 4),
            ("side", 64, 1),
            ("order_type", 65, 1),
            ("tif", 66, 1),
            ("stp", 67, 1),
            ("trigger", 68, 1),
            ("trail_unit", 69, 1),
            ("reserved", 70, 2),
        ],
    ),
    (
        "NewOrderList",
        0x17,
        216,
        &[
            ("client_list_id", 8, 8),
            ("instrument", 16, 4),
            ("kind", 20, 1),
            ("reserved", 21, 3),
            ("leg0", 24, 64),
            ("leg1", 88, 64),
            ("leg2", 152, 64),
        ],
    ),
    (
        "CancelList",
        0x18,
        28,
        &[
            ("client_order_id", 8, 8),
            ("list_id", 16, 8),
            ("instrument", 24, 4),
        ],
    ),
    (
        "MmpRequest",
        0x19,
        56,
        &[
            ("request_id", 8, 8),
            ("window_ns", 16, 8),
            ("max_qty", 24, 8),
            ("freeze_ns", 32, 8),
            ("instrument", 40, 4),
            ("max_fills", 44, 4),
            ("action", 48, 1),
            ("reserved", 49, 7),
        ],
    ),
    (
        "MarketControl",
        0x1A,
        32,
        &[
            ("request_id", 8, 8),
            ("duration_ns", 16, 8),
            ("instrument", 24, 4),
            ("action", 28, 1),
            ("auction_kind", 29, 1),
            ("reserved", 30, 2),
        ],
    ),
    (
        "AcceptedExt",
        0x9B,
        124,
        out![
            ("order_id", 32, 8),
            ("client_order_id", 40, 8),
            ("price", 48, 8),
            ("qty", 56, 8),
            ("expire_at", 64, 8),
            ("stop_price", 72, 8),
            ("display_qty", 80, 8),
            ("list_id", 88, 8),
            ("report_seq", 96, 8),
            ("instrument", 104, 4),
            ("account", 108, 4),
            ("trail", 112, 4),
            ("side", 116, 1),
            ("order_type", 117, 1),
            ("tif", 118, 1),
            ("stp", 119, 1),
            ("trigger", 120, 1),
            ("trail_unit", 121, 1),
            ("stage", 122, 1),
            ("reserved", 123, 1),
        ],
    ),
    (
        "Triggered",
        0x9C,
        88,
        out![
            ("order_id", 32, 8),
            ("client_order_id", 40, 8),
            ("trigger_price", 48, 8),
            ("last_price", 56, 8),
            ("report_seq", 64, 8),
            ("instrument", 72, 4),
            ("account", 76, 4),
            ("side", 80, 1),
            ("cause", 81, 1),
            ("reserved", 82, 6),
        ],
    ),
    (
        "ListStatus",
        0x9D,
        104,
        out![
            ("list_id", 32, 8),
            ("client_list_id", 40, 8),
            ("request_id", 48, 8),
            ("leg0", 56, 8),
            ("leg1", 64, 8),
            ("leg2", 72, 8),
            ("report_seq", 80, 8),
            ("instrument", 88, 4),
            ("account", 92, 4),
            ("reason", 96, 2),
            ("kind", 98, 1),
            ("status", 99, 1),
            ("leg", 100, 1),
            ("reserved", 101, 3),
        ],
    ),
    (
        "MmpStatus",
        0x9E,
        104,
        out![
            ("request_id", 32, 8),
            ("window_ns", 40, 8),
            ("max_qty", 48, 8),
            ("freeze_ns", 56, 8),
            ("window_qty", 64, 8),
            ("report_seq", 72, 8),
            ("instrument", 80, 4),
            ("account", 84, 4),
            ("max_fills", 88, 4),
            ("window_fills", 92, 4),
            ("action", 96, 1),
            ("reserved", 97, 7),
        ],
    ),
    (
        "MarketControlDone",
        0x9F,
        56,
        out![
            ("request_id", 32, 8),
            ("ends_at", 40, 8),
            ("instrument", 48, 4),
            ("phase", 52, 1),
            ("reserved", 53, 3),
        ],
    ),
    (
        "MarketStatus",
        0x43,
        32,
        &[
            ("ends_at", 8, 8),
            ("engine_time", 16, 8),
            ("instrument", 24, 4),
            ("phase", 28, 1),
            ("reserved", 29, 3),
        ],
    ),
    (
        "AuctionIndicative",
        0x44,
        48,
        &[
            ("price", 8, 8),
            ("volume", 16, 8),
            ("surplus", 24, 8),
            ("engine_time", 32, 8),
            ("instrument", 40, 4),
            ("surplus_side", 44, 1),
            ("reserved", 45, 3),
        ],
    ),
];

fn v3_descs() -> Vec<MessageDesc> {
    v2::Message::MESSAGES
        .iter()
        .chain(peregrine_wire::md::MdMessage::MESSAGES)
        .filter(|d| d.version == 3)
        .copied()
        .collect()
}

#[test]
fn every_v3_message_matches_its_pinned_layout() {
    let descs = v3_descs();
    assert_eq!(descs.len(), PINNED_V3.len(), "every message pinned once");
    for d in &descs {
        let (name, code, size, fields) = *PINNED_V3
            .iter()
            .find(|p| p.0 == d.name)
            .unwrap_or_else(|| panic!("{} is not pinned", d.name));
        assert_eq!((d.msg_type, d.size, d.version), (code, size, 3), "{name}");
        let got: Vec<_> = d
            .fields
            .iter()
            .map(|f| (f.name, f.offset, f.size))
            .collect();
        assert_eq!(got, fields.to_vec(), "{name}: field offsets");
    }
}

#[test]
fn v2_fields_are_contiguous_and_naturally_aligned() {
    for d in v2_descs().into_iter().chain(v3_descs()) {
        let mut at = peregrine_wire::HEADER_SIZE;
        for f in d.fields {
            assert_eq!(
                f.offset, at,
                "{}.{} follows the previous field",
                d.name, f.name
            );
            let bytes = f.wire_type == "reserved" || f.wire_type.starts_with('[');
            let align = if bytes { 1 } else { f.size.min(8) };
            assert_eq!(f.offset % align, 0, "{}.{} is aligned", d.name, f.name);
            at += f.size;
        }
        assert_eq!(at, d.size);
    }
}

/// Bumping seed `k` changes bytes inside field `k`'s range only (reserved padding
/// never changes).
fn check_field_ranges(d: &MessageDesc, encode: &dyn Fn(&[u64]) -> Vec<u8>) {
    let base: Vec<u64> = (0..d.fields.len() as u64).map(|i| 1000 + 7 * i).collect();
    let a = encode(&base);
    assert_eq!(a.len(), d.size);
    assert_eq!(
        &a[..4],
        &[d.size as u8, 0, d.msg_type, 2],
        "{}: header",
        d.name
    );
    for (k, f) in d.fields.iter().enumerate() {
        let mut seeds = base.clone();
        seeds[k] += 1;
        let b = encode(&seeds);
        let diff: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
        if f.wire_type == "reserved" {
            assert!(diff.is_empty(), "{}.{} is always zero", d.name, f.name);
            assert!(a[f.offset..f.offset + f.size].iter().all(|&x| x == 0));
            continue;
        }
        assert!(
            !diff.is_empty(),
            "{}.{}: changing it changes the bytes",
            d.name,
            f.name
        );
        for i in diff {
            assert!(
                (f.offset..f.offset + f.size).contains(&i),
                "{}.{}: byte {i} outside its range",
                d.name,
                f.name
            );
        }
    }
}

#[test]
fn v2_encoders_write_each_field_at_its_offset() {
    for (i, d) in v2::Message::MESSAGES.iter().enumerate() {
        if d.version != 2 {
            continue;
        }
        check_field_ranges(d, &|s: &[u64]| {
            let mut buf = [0u8; 128];
            let n = v2::Message::sample(i, s).encode(&mut buf).unwrap();
            buf[..n].to_vec()
        });
    }
    for (i, d) in Recovery::MESSAGES.iter().enumerate() {
        if d.version != 2 {
            continue;
        }
        check_field_ranges(d, &|s: &[u64]| {
            let mut buf = [0u8; 128];
            let n = Recovery::sample(i, s).encode(&mut buf).unwrap();
            buf[..n].to_vec()
        });
    }
}

#[test]
fn a_non_zero_reserved_byte_is_refused() {
    let mut buf = [0u8; 128];
    let n = v2::reports::Fill::sample(&[1, 2, 3])
        .encode(&mut buf)
        .unwrap();
    buf[86] = 1;
    assert_eq!(
        v2::decode(&buf[..n]),
        Err(peregrine_wire::DecodeError::InvalidField {
            field: "reserved",
            value: 1
        })
    );
}

#[test]
fn sizes_of_the_families_are_consistent() {
    for d in v2::Message::MESSAGES {
        let family = if d.msg_type < 0x80 {
            v2::Inbound::size_of_type(d.msg_type)
        } else {
            v2::Outbound::size_of_type(d.msg_type)
        };
        assert_eq!(family, Some((d.size, d.version)), "{}", d.name);
        assert_eq!(
            <v2::reference::InstrumentDefinition as WireMessage>::SIZE,
            111
        );
    }
}
