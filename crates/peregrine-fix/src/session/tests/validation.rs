//! The dictionary through the session (FIX 4.4 test cases 2q, 14a–14i, 15, 21):
//! each violation is a Reject with its SessionRejectReason and RefTagID, the
//! number consumed; each check can be turned off like QuickFIX's setting.

use super::reject::{reject_of, rejected};
use super::*;
use crate::dict::Validation;

/// A NewOrderSingle 2 with `extra` after its fields, and each `(from, to)` of
/// `changes` made to them.
fn d_with(extra: &str, changes: &[(&str, &str)]) -> Vec<u8> {
    let mut body = format!(
        "35=D\x01{HDR2}11=ID\x0121=1\x0140=2\x0144=10\x0154=1\x0138=200.00\x0155=INTC\x0160=20231114-22:13:20\x01{extra}"
    );
    for (from, to) in changes {
        body = body.replace(from, to);
    }
    with_body(&body)
}

fn d(extra: &str) -> Vec<u8> {
    d_with(extra, &[])
}

fn reason(code: &str, tag: &str) -> (String, Option<String>, String) {
    (code.into(), Some(tag.into()), "2".into())
}

fn hb(extra: &str) -> Vec<u8> {
    with_body(&format!("35=0\x01{HDR2}{extra}"))
}

/// A session with `change` made to the default validation, logged on.
fn with_validation(change: impl FnOnce(&mut Validation)) -> (Session<MemoryStore>, Peer) {
    let mut c = acceptor_config();
    change(&mut c.validation);
    let mut s = Session::new(c, MemoryStore::new(T0));
    s.connect(T0).unwrap();
    let mut p = Peer::new();
    feed(&mut s, &p.logon(T0, &[(554, "secret")]), T0);
    drain(&mut s);
    (s, p)
}

/// 2q: a MsgType FIX 4.4 does not have: Reject 11 (not a BusinessMessageReject);
/// one it has reaches the application (QuickFIX 2q_MsgTypeNotValid,
/// 2r_UnregisteredMsgType).
#[test]
fn an_invalid_msg_type_is_rejected_at_session_level() {
    let (events, r, next) = rejected(&with_body(&format!("35=*\x01{HDR2}")));
    let r = r.unwrap();
    assert_eq!(
        (r.get(373), r.get(372), r.get(58)),
        (Some("11"), Some("*"), Some("Invalid MsgType"))
    );
    assert!(matches!(events[..], [Ev::Rejected { seq: 2, .. }]));
    assert_eq!(next, 3);
    let er = with_body(&format!("35=8\x01{HDR2}37=id\x0117=id\x01150=0\x0139=0\x0155=X\x0154=1\x01151=100\x0114=0\x016=0.0\x01"));
    let (events, r, _) = rejected(&er);
    assert!(r.is_none());
    assert!(matches!(&events[..], [Ev::App { msg_type, .. }] if msg_type == "8"));
}

/// 14a: a tag FIX 4.4 does not define (below or at/after 5000 user-defined):
/// Reject 0 (QuickFIX 14a_BadField).
#[test]
fn undefined_tags_are_invalid() {
    assert_eq!(reject_of(&hb("999=HI\x01")), reason("0", "999"));
    assert_eq!(reject_of(&hb("5000=HI\x01")), reason("0", "5000"));
}

/// 14c: a FIX 4.4 tag the message type does not have: Reject 2 (QuickFIX
/// 14c_TagNotDefinedForMsgType).
#[test]
fn a_tag_not_defined_for_the_message_type() {
    assert_eq!(reject_of(&hb("55=MSFT\x01")), reason("2", "55"));
    let (_, r, _) = rejected(&hb("55=MSFT\x01"));
    assert_eq!(
        r.unwrap().get(58),
        Some("Tag not defined for this message type")
    );
}

/// 14b: a required body field missing: Reject 1 (QuickFIX 14b_RequiredFieldMissing).
#[test]
fn a_required_body_field_missing() {
    let m = with_body(&format!(
        "35=D\x01{HDR2}40=1\x0160=20231114-22:13:20\x0154=1\x0121=3\x01"
    ));
    assert_eq!(reject_of(&m), reason("1", "11"));
}

/// 14e: a value outside the field's enumeration: Reject 5 (QuickFIX
/// 14e_IncorrectEnumValue, ReverseRoute's 40=w).
#[test]
fn values_outside_the_enumeration() {
    assert_eq!(
        reject_of(&d_with("", &[("21=1", "21=4")])),
        reason("5", "21")
    );
    assert_eq!(reject_of(&d("167=BOO\x01")), reason("5", "167"));
    let (events, r, _) = rejected(&d("167=CS\x01"));
    assert!(r.is_none(), "167=CS is a SecurityType");
    assert_eq!(events, vec![app_d(2, false)]);
}

/// 14f: a value not of the field's type: Reject 6 (QuickFIX 14f_IncorrectDataFormat,
/// RejectResentMessage's ExpireTime).
#[test]
fn values_of_the_wrong_format() {
    let plus = d_with("", &[("38=200.00", "38=+200.00")]);
    assert_eq!(reject_of(&plus), reason("6", "38"));
    let abc = d_with("", &[("38=200.00", "38=abc")]);
    assert_eq!(reject_of(&abc), reason("6", "38"));
    assert_eq!(reject_of(&d("126=20040415\x01")), reason("6", "126"));
}

/// 14h: a body tag twice outside a repeating group: Reject 13 (QuickFIX
/// 14h_RepeatedTag).
#[test]
fn a_body_tag_twice() {
    assert_eq!(reject_of(&d("40=1\x01")), reason("13", "40"));
}

/// 14i: a NumInGroup that does not match its entries: Reject 16 with the count
/// tag; a count of 0 with no entries is fine (QuickFIX 14i, 21).
#[test]
fn repeating_group_counts() {
    let m = d("386=3\x01336=PRE-OPEN\x01336=AFTER-HOURS\x01");
    assert_eq!(reject_of(&m), reason("16", "386"));
    let (_, r, _) = rejected(&m);
    assert_eq!(
        r.unwrap().get(58),
        Some("Incorrect NumInGroup count for repeating group")
    );
    let (events, _, _) = rejected(&d("386=0\x01"));
    assert_eq!(events, vec![app_d(2, false)]);
}

/// 15: the same message with its header and body fields in other orders is
/// accepted (QuickFIX 15_HeaderAndBodyFieldsOrderedDifferently).
#[test]
fn field_order_within_header_and_body_is_free() {
    let m = with_body("35=D\x0149=CLIENT\x0134=2\x0156=PGN\x0152=20231114-22:13:20\x0140=2\x0155=INTC\x0144=10\x0160=20231114-22:13:20\x0138=1\x0154=1\x0121=3\x0111=id\x01");
    let (events, r, _) = rejected(&m);
    assert!(r.is_none());
    assert_eq!(events, vec![app_d(2, false)]);
}

/// Each check can be turned off, like QuickFIX's settings of the same names.
#[test]
fn each_check_can_be_turned_off() {
    // ValidateUserDefinedFields=N: a user-defined tag is ignored.
    let (mut s, _) = with_validation(|v| v.user_defined_fields = false);
    assert_eq!(feed(&mut s, &hb("5000=HI\x01"), T0), vec![]);
    assert!(drain(&mut s).is_empty());
    // AllowUnknownMsgFields=Y: an unknown tag, or one of another message, is ignored.
    let (mut s, _) = with_validation(|v| v.allow_unknown_message_fields = true);
    assert_eq!(feed(&mut s, &hb("999=HI\x0155=MSFT\x01"), T0), vec![]);
    assert!(drain(&mut s).is_empty());
    // ValidateFieldsOutOfOrder=N: a header field after the body is taken.
    let (mut s, _) = with_validation(|v| v.fields_out_of_order = false);
    let late =
        with_body("35=0\x01112=x\x0149=CLIENT\x0156=PGN\x0134=2\x0152=20231114-22:13:20\x01");
    assert_eq!(feed(&mut s, &late, T0), vec![]);
    assert_eq!(s.store().next_target_seq(), 3);
    assert!(drain(&mut s).is_empty());
    // UseDataDictionary=N: only the header is checked.
    let (mut s, _) = with_validation(|v| v.use_data_dictionary = false);
    let events = feed(&mut s, &with_body(&format!("35=*\x01{HDR2}999=x\x01")), T0);
    assert!(matches!(&events[..], [Ev::App { msg_type, .. }] if msg_type == "*"));
}
