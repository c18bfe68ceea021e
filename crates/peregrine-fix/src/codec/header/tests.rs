use super::*;
use crate::codec::frame::checksum;

fn msg(body: &str) -> Vec<u8> {
    msg_v("FIX.4.4", body)
}

fn msg_v(version: &str, body: &str) -> Vec<u8> {
    let mut m = format!("8={version}\x019={}\x01{}", body.len(), body).into_bytes();
    let sum = checksum(&m);
    m.extend_from_slice(format!("10={sum:03}\x01").as_bytes());
    m
}

const HDR: &str = "35=D\x0149=CLIENT\x0156=PGN\x0134=7\x0152=20240101-10:00:00.000\x01";

#[test]
fn parses_the_header_and_leaves_the_body() {
    let m = msg(&format!("{HDR}11=abc\x0155=PGN-USD\x01"));
    let p = Message::parse(&m).unwrap();
    assert_eq!(p.header.begin_string, b"FIX.4.4");
    assert_eq!(p.header.msg_type, b"D");
    assert_eq!(p.header.sender_comp_id, b"CLIENT");
    assert_eq!(p.header.target_comp_id, b"PGN");
    assert_eq!(p.header.msg_seq_num, 7);
    assert!(!p.header.poss_dup);
    assert!(p.route().is_empty());
    assert_eq!(p.body(), b"11=abc\x0155=PGN-USD\x01");
    assert_eq!(p.fields().count(), 2);
}

#[test]
fn another_begin_string_parses_for_the_session_to_refuse() {
    let m = msg_v("FIX.4.1", HDR);
    assert_eq!(Message::parse(&m).unwrap().header.begin_string, b"FIX.4.1");
}

#[test]
fn routing_fields_are_kept_even_when_the_header_fails_after_them() {
    let m = msg(&format!("{HDR}115=JCD\x01116=CS\x0111=a\x01"));
    let r = Message::parse(&m).unwrap().route();
    assert_eq!(r.on_behalf_of, [Some(&b"JCD"[..]), Some(&b"CS"[..]), None]);
    assert_eq!(r.deliver_to, [None; 3]);
    let m = msg(&format!("{HDR}128=JCD\x01129=\x0111=a\x01"));
    let e = Message::parse(&m).unwrap_err();
    assert_eq!(e.error, FieldError::NoValue(129));
    assert_eq!(e.msg_seq_num, Some(7));
    assert_eq!(route_of(&m).deliver_to, [Some(&b"JCD"[..]), None, None]);
}

fn err(body: &str) -> (FieldError, Option<u64>) {
    let m = msg(body);
    let e = Message::parse(&m).unwrap_err();
    (e.error, e.msg_seq_num)
}

#[test]
fn each_header_rule_has_its_error() {
    assert_eq!(err("49=A\x0135=D\x01").0, FieldError::OutOfOrder(35));
    assert_eq!(
        err(&format!("{HDR}11=a\x0134=8\x01")),
        (FieldError::OutOfOrder(34), Some(7))
    );
    // MsgSeqNum after the body: its number is still found for the Reject.
    assert_eq!(
        err("35=D\x0111=a\x0134=9\x0149=A\x0156=B\x0152=20240101-10:00:00\x01"),
        (FieldError::OutOfOrder(34), Some(9))
    );
    assert_eq!(err(&format!("{HDR}49=X\x01")).0, FieldError::Repeated(49));
    assert_eq!(
        err("35=D\x0149=A\x0156=B\x0152=20240101-10:00:00\x01").0,
        FieldError::Missing(34)
    );
    assert_eq!(
        err("35=D\x0149=A\x0134=1\x0152=20240101-10:00:00\x01").0,
        FieldError::Missing(56)
    );
    assert_eq!(
        err("35=D\x0149=A\x0156=B\x0134=x\x0152=20240101-10:00:00\x01").0,
        FieldError::Format(34)
    );
    assert_eq!(
        err("35=D\x0149=A\x0156=B\x0134=1\x0152=yesterday\x01").0,
        FieldError::Format(52)
    );
    assert_eq!(err(&format!("{HDR}43=X\x01")).0, FieldError::Value(43));
    assert_eq!(err(&format!("{HDR}11=\x01")).0, FieldError::NoValue(11));
    assert_eq!(
        err(&format!("{HDR}93=1\x0189=x\x0111=a\x01")).0,
        FieldError::OutOfOrder(11)
    );
    assert_eq!(err(&format!("{HDR}9=5\x01")).0, FieldError::OutOfOrder(9));
}

#[test]
fn msg_seq_num_zero_is_read_for_the_session_to_judge() {
    let m = msg("35=4\x0149=A\x0156=B\x0134=0\x0152=20240101-10:00:00\x0136=5\x01");
    assert_eq!(Message::parse(&m).unwrap().header.msg_seq_num, 0);
}

#[test]
fn msg_type_not_third_and_checksum_not_last_are_garbled_not_malformed() {
    for body in [
        "34=1\x0135=0\x0149=A\x0156=B\x0152=20240101-10:00:00\x01",
        "35=0\x0149=A\x0156=B\x0134=1\x0152=20240101-10:00:00\x0110=000\x01",
        "35=0\x018=FIX.4.4\x0149=A\x0156=B\x0134=1\x0152=20240101-10:00:00\x01",
    ] {
        let m = msg(body);
        assert!(Message::parse(&m).unwrap_err().is_garbled(), "{body:?}");
    }
    let m = msg(&format!("{HDR}11=a\x0134=8\x01"));
    assert!(!Message::parse(&m).unwrap_err().is_garbled());
}

#[test]
fn header_fields_anywhere_when_the_order_is_not_validated() {
    let m = msg("35=D\x0111=a\x0134=9\x0149=A\x0156=B\x0152=20240101-10:00:00\x01");
    let lenient = ParseOptions {
        header_fields_first: false,
    };
    let p = Message::parse_with(&m, lenient).unwrap();
    assert_eq!(p.header.msg_seq_num, 9);
    assert_eq!(p.header.sender_comp_id, b"A");
}

#[test]
fn garbage_never_panics() {
    for raw in [
        &b""[..],
        b"8=FIX.4.4\x019=",
        b"8=FIX.4.4\x019=1\x0110=000\x01",
        b"8=FIX.4.4\x019=0\x0110=000\x01",
        b"8=\x019=0\x0110=000\x01",
        b"9=0\x0110=000\x01",
    ] {
        assert!(Message::parse(raw).is_err());
    }
}
