//! Layout tests: every message's type code, version, size and field offsets are
//! pinned here by hand, independently of the schema the code is generated from, so an
//! edit of `schema/protocol.xml` that moves, resizes or drops a field of a released
//! layout fails here (versioning is additive: a new version appends, it never moves).
//! A new message gets its row here too. The encoder is checked to write each field
//! exactly inside its declared byte range, and reserved bytes stay zero.

use peregrine_wire::header::HEADER_FIELDS;
use peregrine_wire::md::packet::{PACKET_HEADER_FIELDS, PACKET_HEADER_SIZE};
use peregrine_wire::md::recovery::Recovery;
use peregrine_wire::md::MdMessage;
use peregrine_wire::{v2, MessageDesc, WireMessage, HEADER_SIZE, MAX_MESSAGE_SIZE};

/// (name, type code, version, size, body fields as (name, offset, size)).
type Pinned = (
    &'static str,
    u8,
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
    ("Logout", 0x02, 1, 8, &[]),
    ("ClientHeartbeat", 0x03, 1, 8, &[]),
    (
        "NewOrder",
        0x10,
        1,
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
        1,
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
        1,
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
        1,
        21,
        &[
            ("client_order_id", 8, 8),
            ("instrument", 16, 4),
            ("side", 20, 1),
        ],
    ),
    (
        "Deposit",
        0x20,
        1,
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
        1,
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
        1,
        24,
        &[("request_id", 8, 8), ("account", 16, 4), ("asset", 20, 4)],
    ),
    (
        "Trade",
        0x40,
        1,
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
        1,
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
        1,
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
        1,
        26,
        &[("session_id", 8, 8), ("first_seq", 16, 8), ("count", 24, 2)],
    ),
    (
        "ReplayResponse",
        0x51,
        1,
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
        1,
        20,
        &[("request_id", 8, 8), ("instrument", 16, 4)],
    ),
    (
        "SnapshotHeader",
        0x53,
        1,
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
        1,
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
        1,
        32,
        &[
            ("request_id", 8, 8),
            ("as_of_seq", 16, 8),
            ("instrument", 24, 4),
            ("level_count", 28, 4),
        ],
    ),
    (
        "Login",
        0x04,
        2,
        64,
        &[
            ("next_report_seq", 8, 8),
            ("proof", 16, 32),
            ("account", 48, 4),
            ("target", 52, 4),
            ("heartbeat_interval_ms", 56, 4),
            ("kind", 60, 1),
            ("reserved", 61, 3),
        ],
    ),
    (
        "OrderStatusRequest",
        0x14,
        2,
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
        2,
        24,
        &[
            ("request_id", 8, 8),
            ("account", 16, 4),
            ("instrument", 20, 4),
        ],
    ),
    ("Challenge", 0x84, 2, 64, out![("nonce", 32, 32)]),
    (
        "LoginAccepted",
        0x81,
        2,
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
        2,
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
        2,
        40,
        out![("next_report_seq", 32, 8)],
    ),
    (
        "ReplayStart",
        0x85,
        2,
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
        2,
        48,
        out![("next_report_seq", 32, 8), ("count", 40, 8)],
    ),
    (
        "LeaderRedirect",
        0x87,
        2,
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
        2,
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
        2,
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
        2,
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
        "Fill",
        0x92,
        2,
        100,
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
        ],
    ),
    (
        "Cancelled",
        0x93,
        2,
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
        2,
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
        2,
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
        2,
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
        2,
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
        2,
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
        2,
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
        2,
        72,
        out![
            ("request_id", 32, 8),
            ("available", 40, 8),
            ("held", 48, 8),
            ("account", 56, 4),
            ("asset", 60, 4),
            ("report_seq", 64, 8),
        ],
    ),
    (
        "AdminRejected",
        0xA1,
        2,
        64,
        out![
            ("request_id", 32, 8),
            ("account", 40, 4),
            ("asset", 44, 4),
            ("reason", 48, 2),
            ("reserved", 50, 6),
            ("report_seq", 56, 8),
        ],
    ),
    (
        "InstrumentListRequest",
        0x56,
        2,
        16,
        &[("request_id", 8, 8)],
    ),
    (
        "InstrumentList",
        0x57,
        2,
        22,
        &[("request_id", 8, 8), ("count", 16, 4), ("reason", 20, 2)],
    ),
    (
        "RecoveryRedirect",
        0x58,
        2,
        88,
        &[
            ("leader_id", 8, 8),
            ("retry_after_ms", 16, 4),
            ("reserved", 20, 4),
            ("address", 24, 64),
        ],
    ),
    (
        "Disconnect",
        0x88,
        2,
        48,
        out![
            ("next_report_seq", 32, 8),
            ("reason", 40, 2),
            ("reserved", 42, 6),
        ],
    ),
];

/// Every message any decoder accepts, once each.
fn all_descs() -> Vec<MessageDesc> {
    let mut v: Vec<MessageDesc> = Vec::new();
    for d in v2::Message::MESSAGES
        .iter()
        .chain(MdMessage::MESSAGES)
        .chain(Recovery::MESSAGES)
    {
        if !v.contains(d) {
            v.push(*d);
        }
    }
    v
}

/// Encodes a message from seeds.
type Encoder = Box<dyn Fn(&[u64]) -> Vec<u8>>;

/// The family whose `sample` builds message `name`, as an encoder of seeds.
fn encoder(name: &str) -> Encoder {
    let at = |msgs: &[MessageDesc]| msgs.iter().position(|d| d.name == name);
    let out = |n: usize, buf: [u8; 256]| buf[..n].to_vec();
    if let Some(i) = at(v2::Message::MESSAGES) {
        return Box::new(move |s: &[u64]| {
            let mut buf = [0u8; 256];
            out(v2::Message::sample(i, s).encode(&mut buf).unwrap(), buf)
        });
    }
    let i = at(Recovery::MESSAGES).unwrap_or_else(|| panic!("{name} has no decoder"));
    Box::new(move |s: &[u64]| {
        let mut buf = [0u8; 256];
        out(Recovery::sample(i, s).encode(&mut buf).unwrap(), buf)
    })
}

#[test]
fn every_message_matches_its_pinned_layout() {
    let descs = all_descs();
    for d in &descs {
        let (name, code, version, size, fields) = *PINNED
            .iter()
            .find(|p| p.0 == d.name)
            .unwrap_or_else(|| panic!("{} is not pinned in tests/layout.rs", d.name));
        assert_eq!(
            (d.msg_type, d.version, d.size),
            (code, version, size),
            "{name}: type code, version and size"
        );
        let got: Vec<_> = d
            .fields
            .iter()
            .map(|f| (f.name, f.offset, f.size))
            .collect();
        assert_eq!(got, fields.to_vec(), "{name}: field offsets");
    }
    assert_eq!(
        descs.len(),
        PINNED.len(),
        "every pinned message still exists"
    );
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
            let bytes = f.wire_type == "reserved" || f.wire_type.starts_with('[');
            let align = if bytes { 1 } else { f.size };
            assert_eq!(f.offset % align, 0, "{}.{} is aligned", d.name, f.name);
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
    assert_eq!(feed, ["Trade", "L2Update", "Commitment"]);
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
            ("marker", 18, 2),
            ("version", 20, 1),
            ("reserved", 21, 3),
            ("send_time", 24, 8)
        ]
    );
    assert_eq!((HEADER_SIZE, PACKET_HEADER_SIZE), (8, 32));
}

/// Encodes `sample(seeds)` and `sample(seeds with seed k bumped)`: the bytes that
/// differ must all lie inside field `k`'s declared range (and some must differ);
/// reserved padding never changes.
fn check_field_ranges(d: &MessageDesc, encode: &dyn Fn(&[u64]) -> Vec<u8>) {
    let base: Vec<u64> = (0..d.fields.len() as u64).map(|i| 1000 + 7 * i).collect();
    let a = encode(&base);
    assert_eq!(a.len(), d.size);
    assert_eq!(
        &a[..4],
        &[d.size as u8, (d.size >> 8) as u8, d.msg_type, d.version],
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
fn encoders_write_each_field_at_its_offset() {
    for d in all_descs() {
        check_field_ranges(&d, &*encoder(d.name));
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
    }
    assert_eq!(
        <v2::reference::InstrumentDefinition as WireMessage>::SIZE,
        111
    );
}
