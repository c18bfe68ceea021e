//! The dictionary's checks, one per rule (the session's tests drive the same rules
//! through whole sessions).

use super::validate::format_ok;
use super::*;
use crate::codec::{Encoder, FieldError, Message, Precision};

const T: u64 = 1_700_000_000_000_000_000;

/// A message of type `t` with `body` (tag=value pairs, in order).
fn msg(t: &str, body: &[(u32, &str)]) -> Vec<u8> {
    let mut enc = Encoder::default();
    let mut w = enc.start(t.as_bytes());
    w.bytes(49, b"A")
        .bytes(56, b"B")
        .uint(34, 2)
        .timestamp(52, T, Precision::Millis);
    for (tag, v) in body {
        w.bytes(*tag, v.as_bytes());
    }
    w.seal().to_vec()
}

fn check_with(t: &str, body: &[(u32, &str)], v: &Validation) -> Result<(), Violation> {
    let raw = msg(t, body);
    validate(&Message::parse(&raw).unwrap(), v)
}

fn check(t: &str, body: &[(u32, &str)]) -> Result<(), Violation> {
    check_with(t, body, &Validation::default())
}

const ORDER: [(u32, &str); 6] = [
    (11, "c1"),
    (55, "PGN-USD"),
    (54, "1"),
    (60, "20231114-22:13:20"),
    (38, "5"),
    (40, "2"),
];

fn order_with(extra: &[(u32, &'static str)]) -> Vec<(u32, &'static str)> {
    let mut b = ORDER.to_vec();
    b.extend_from_slice(extra);
    b
}

#[test]
fn a_well_formed_order_and_the_admin_messages_pass() {
    assert_eq!(check("D", &ORDER), Ok(()));
    assert_eq!(check("0", &[]), Ok(()));
    assert_eq!(check("0", &[(112, "x")]), Ok(()));
    assert_eq!(check("1", &[(112, "x")]), Ok(()));
    assert_eq!(check("2", &[(7, "1"), (16, "0")]), Ok(()));
    assert_eq!(check("4", &[(123, "Y"), (36, "9")]), Ok(()));
    assert_eq!(check("A", &[(98, "0"), (108, "30"), (141, "Y")]), Ok(()));
    // Peregrine's extension: self-trade prevention on D and G.
    assert_eq!(check("D", &order_with(&[(2964, "2")])), Ok(()));
    assert_eq!(
        check("D", &order_with(&[(2964, "7")])),
        Err(Violation::Value(2964))
    );
    assert_eq!(
        check(
            "F",
            &[
                (41, "a"),
                (11, "b"),
                (54, "1"),
                (60, "20231114-22:13:20"),
                (2964, "1")
            ]
        ),
        Err(Violation::NotDefinedForMessage(2964))
    );
}

/// SessionRejectReason 11 (QuickFIX 2q).
#[test]
fn an_unknown_msg_type_is_invalid() {
    assert_eq!(check("*", &[]), Err(Violation::InvalidMsgType));
    assert_eq!(check("ZZ", &[]), Err(Violation::InvalidMsgType));
    assert!(is_msg_type(b"8") && is_msg_type(b"AE") && is_msg_type(b"BH"));
    // A FIX 4.4 type the session does not lay out is checked field by field only.
    assert_eq!(check("8", &[(37, "1"), (150, "0"), (6, "0.0")]), Ok(()));
    assert_eq!(check("8", &[(6, "abc")]), Err(Violation::Format(6)));
}

/// SessionRejectReason 0 (QuickFIX 14a), and `user_defined_fields` /
/// `allow_unknown_message_fields`.
#[test]
fn tags_outside_the_dictionary_are_invalid_unless_allowed() {
    assert_eq!(check("0", &[(999, "HI")]), Err(Violation::InvalidTag(999)));
    assert_eq!(
        check("0", &[(5000, "HI")]),
        Err(Violation::InvalidTag(5000))
    );
    assert_eq!(check("0", &[(20, "HI")]), Err(Violation::InvalidTag(20)));
    let lenient_user = Validation {
        user_defined_fields: false,
        ..Validation::default()
    };
    assert_eq!(check_with("0", &[(5000, "HI")], &lenient_user), Ok(()));
    assert_eq!(
        check_with("0", &[(999, "HI")], &lenient_user),
        Err(Violation::InvalidTag(999))
    );
    let unknown_ok = Validation {
        allow_unknown_message_fields: true,
        ..Validation::default()
    };
    assert_eq!(check_with("0", &[(999, "HI")], &unknown_ok), Ok(()));
    assert_eq!(check_with("0", &[(55, "X")], &unknown_ok), Ok(()));
    let off = Validation {
        use_data_dictionary: false,
        ..Validation::default()
    };
    assert_eq!(check_with("*", &[(999, "HI")], &off), Ok(()));
}

/// SessionRejectReason 2 (QuickFIX 14c).
#[test]
fn a_tag_of_another_message_type_is_not_defined() {
    assert_eq!(
        check("0", &[(55, "MSFT")]),
        Err(Violation::NotDefinedForMessage(55))
    );
    assert_eq!(
        check("D", &order_with(&[(150, "0")])),
        Err(Violation::NotDefinedForMessage(150))
    );
}

/// SessionRejectReason 1 (QuickFIX 14b): the dictionary's required fields; a field
/// FIX leaves optional (OrderQty is one of three ways to give a quantity) is the
/// application's to refuse.
#[test]
fn required_fields() {
    let no_cl: Vec<_> = ORDER.iter().copied().filter(|&(t, _)| t != 11).collect();
    assert_eq!(check("D", &no_cl), Err(Violation::Missing(11)));
    let no_qty: Vec<_> = ORDER.iter().copied().filter(|&(t, _)| t != 38).collect();
    assert_eq!(check("D", &no_qty), Ok(()));
    assert_eq!(check("1", &[]), Err(Violation::Missing(112)));
    assert_eq!(check("2", &[(7, "1")]), Err(Violation::Missing(16)));
}

/// SessionRejectReason 5 (QuickFIX 14e, ReverseRoute).
#[test]
fn enumerated_values() {
    assert_eq!(
        check("D", &order_with(&[(21, "4")])),
        Err(Violation::Value(21))
    );
    assert_eq!(check("D", &order_with(&[(21, "3")])), Ok(()));
    assert_eq!(
        check("D", &order_with(&[(167, "BOO")])),
        Err(Violation::Value(167))
    );
    assert_eq!(check("D", &order_with(&[(167, "CS")])), Ok(()));
    let bad_type: Vec<_> = ORDER
        .iter()
        .map(|&(t, v)| if t == 40 { (t, "w") } else { (t, v) })
        .collect();
    assert_eq!(check("D", &bad_type), Err(Violation::Value(40)));
    // A MultipleValueString: each value must be one of the field's.
    assert_eq!(check("D", &order_with(&[(18, "6 E")])), Ok(()));
    assert_eq!(
        check("D", &order_with(&[(18, "6 ?")])),
        Err(Violation::Value(18))
    );
}

/// SessionRejectReason 6 (QuickFIX 14f, RejectResentMessage).
#[test]
fn data_formats() {
    let qty = |v: &'static str| -> Vec<(u32, &'static str)> {
        ORDER
            .iter()
            .map(|&(t, x)| if t == 38 { (t, v) } else { (t, x) })
            .collect()
    };
    assert_eq!(check("D", &qty("+200.00")), Err(Violation::Format(38)));
    assert_eq!(check("D", &qty("abc")), Err(Violation::Format(38)));
    assert_eq!(check("D", &qty("1.2.3")), Err(Violation::Format(38)));
    assert_eq!(check("D", &qty("002000.00")), Ok(()));
    assert_eq!(
        check("D", &order_with(&[(126, "20040415")])),
        Err(Violation::Format(126))
    );
    assert_eq!(
        check("D", &order_with(&[(126, "20040415-10:00:00")])),
        Ok(())
    );
    assert_eq!(
        check("2", &[(7, "x"), (16, "0")]),
        Err(Violation::Format(7))
    );
    // A Boolean that is not Y or N is a format error before it is an enum one.
    assert_eq!(
        check("A", &[(98, "0"), (108, "30"), (141, "X")]),
        Err(Violation::Format(141))
    );
    for (ty, good, bad) in [
        (FieldType::Int, &b"-12"[..], &b"1-2"[..]),
        (FieldType::SeqNum, b"12", b"-12"),
        (FieldType::Float, b"-1.50", b"1e5"),
        (FieldType::Char, b"x", b"xy"),
        (FieldType::Boolean, b"N", b"y"),
        (FieldType::Date, b"20240229", b"20241301"),
        (FieldType::MonthYear, b"202403w2", b"202403w9"),
        (FieldType::MonthYear, b"202403", b"2024"),
        (FieldType::UtcTimeOnly, b"23:59:60.123", b"24:00:00"),
        (FieldType::UtcTimestamp, b"20240101-00:00:00.5", b"20240101"),
    ] {
        assert!(format_ok(ty, good), "{ty:?} {good:?}");
        assert!(!format_ok(ty, bad), "{ty:?} {bad:?}");
    }
}

/// SessionRejectReason 13 (QuickFIX 14h).
#[test]
fn a_tag_twice_outside_a_group() {
    assert_eq!(
        check("D", &order_with(&[(40, "1")])),
        Err(Violation::Repeated(40))
    );
}

/// SessionRejectReasons 16 and 15 (QuickFIX 14i); a count of 0 with no entries is
/// fine (QuickFIX 21).
#[test]
fn repeating_groups() {
    let two_of_three = order_with(&[(386, "3"), (336, "PRE-OPEN"), (336, "AFTER-HOURS")]);
    assert_eq!(check("D", &two_of_three), Err(Violation::GroupCount(386)));
    let two = order_with(&[(386, "2"), (336, "PRE-OPEN"), (336, "AFTER-HOURS")]);
    assert_eq!(check("D", &two), Ok(()));
    let too_many = order_with(&[(386, "1"), (336, "PRE-OPEN"), (336, "AFTER-HOURS")]);
    assert_eq!(check("D", &too_many), Err(Violation::GroupCount(386)));
    let zero = order_with(&[(386, "0")]);
    assert_eq!(check("D", &zero), Ok(()));
    let out_of_order = order_with(&[(386, "1"), (625, "X"), (336, "PRE-OPEN")]);
    assert_eq!(check("D", &out_of_order), Err(Violation::GroupOrder(625)));
    // Nested: Parties with PartySubIDs, then a top-level field closes both.
    let nested = order_with(&[
        (453, "2"),
        (448, "P1"),
        (447, "D"),
        (452, "1"),
        (802, "1"),
        (523, "S"),
        (803, "1"),
        (448, "P2"),
        (452, "3"),
        (59, "1"),
    ]);
    assert_eq!(check("D", &nested), Ok(()));
    // Group members may repeat across entries, not be read as repeated tags.
    let logon_types = [
        (98, "0"),
        (108, "30"),
        (384, "2"),
        (372, "D"),
        (385, "R"),
        (372, "F"),
        (385, "R"),
    ];
    assert_eq!(check("A", &logon_types), Ok(()));
}

/// The codec's own errors pass through (RefTagID keeps the number as written).
#[test]
fn field_errors_keep_the_tag_as_written() {
    let raw = b"8=FIX.4.4\x019=47\x0135=0\x0149=A\x0156=B\x0134=2\x0152=20231114-22:13:20\x01-1=HI\x0110=000\x01";
    // Framing is not the point here: parse the bytes as they are.
    let e = Message::parse(raw).unwrap_err();
    assert_eq!(e.error, FieldError::InvalidTag(Some(-1)));
    assert_eq!(e.error.ref_tag_id(), Some(-1));
    assert_eq!(
        Violation::Field(FieldError::InvalidTag(Some(0))).tag(),
        Some(0)
    );
}

mod differential {
    use super::*;
    use proptest::prelude::*;

    /// Tags worth drawing: the validated messages' fields, group counts and members,
    /// header and trailer tags out of place, Peregrine's extension, user-defined and
    /// unknown tags.
    const TAGS: &[u32] = &[
        1, 7, 11, 15, 16, 18, 21, 36, 37, 38, 40, 41, 44, 45, 52, 54, 55, 58, 59, 60, 98, 99, 108,
        111, 112, 123, 126, 141, 211, 372, 373, 380, 383, 384, 385, 447, 448, 452, 453, 464, 523,
        553, 554, 584, 802, 803, 34, 49, 56, 10, 2964, 5001, 9999, 957, 4000,
    ];

    const VALUES: &[&str] = &[
        "1",
        "2",
        "3",
        "0",
        "A",
        "a",
        "D",
        "H",
        "Y",
        "N",
        "12",
        "-3",
        "+4",
        "1.5",
        "1..5",
        "abc",
        "5 6",
        "0 A",
        "20231114-22:13:20",
        "20231114-22:13:20.123",
        "20230230-10:00:00",
        "20231114",
        "202311",
        "202311w2",
        "12:30:00",
        "",
        "99",
        "1 ",
        "PGN-USD",
    ];

    fn field() -> impl Strategy<Value = (u32, String)> {
        let tag = prop_oneof![
            4 => proptest::sample::select(TAGS),
            1 => 1u32..1000,
        ];
        let value = prop_oneof![
            4 => proptest::sample::select(VALUES).prop_map(str::to_string),
            2 => "[ -~]",
            1 => "[0-9A-Za-z]( [0-9A-Za-z]){0,2}",
            1 => "[ -~]{1,6}",
        ];
        (tag, value).prop_filter("a value", |(_, v)| !v.is_empty())
    }

    fn validation() -> impl Strategy<Value = Validation> {
        (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(a, b, c, d)| {
            Validation {
                use_data_dictionary: a || b, // mostly on
                fields_out_of_order: b,
                user_defined_fields: c,
                allow_unknown_message_fields: d,
            }
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3_000))]

        /// The table-driven validation gives the first version's verdict (its
        /// searches: `reference.rs`) on every message: the same checks, none
        /// weakened.
        #[test]
        fn prop_the_table_driven_validation_equals_the_reference(
            t in proptest::sample::select(&[
                "0", "1", "2", "3", "4", "5", "A", "D", "F", "G", "q", "H", "8", "AE", "ZZ",
                "Q", "~", "AAA",
            ][..]),
            order_first in any::<bool>(),
            body in proptest::collection::vec(field(), 0..14),
            v in validation(),
        ) {
            let mut fields: Vec<(u32, &str)> = Vec::new();
            if order_first {
                fields.extend_from_slice(&ORDER);
            }
            fields.extend(body.iter().map(|(t, v)| (*t, v.as_str())));
            let raw = msg(t, &fields);
            // A header field out of place fails the header view first (where the
            // session allows it, the view takes it).
            let Ok(m) = Message::parse(&raw) else { return Ok(()) };
            prop_assert_eq!(validate(&m, &v), super::super::reference::validate(&m, &v));
        }
    }
}
