//! Reject with the right SessionRejectReason for each malformed input.

use super::*;

/// Feeds `raw` to a logged-on session (expected 2) and returns the events and the
/// Reject it sent, if any.
fn rejected(raw: &[u8]) -> (Vec<Ev>, Option<Out>, u64) {
    let (mut s, _) = logged_on();
    let events = feed(&mut s, raw, T0);
    let reject = drain(&mut s).into_iter().find(|o| o.msg_type == "3");
    (events, reject, s.store().next_target_seq())
}

fn reject_of(raw: &[u8]) -> (String, Option<String>, String) {
    let (_, r, _) = rejected(raw);
    let r = r.expect("a Reject");
    (
        r.get(373).unwrap().to_string(),
        r.get(371).map(str::to_string),
        r.get(45).unwrap().to_string(),
    )
}

fn with_body(body: &str) -> Vec<u8> {
    let mut m = format!("8=FIX.4.4\x019={}\x01{}", body.len(), body).into_bytes();
    let sum = crate::codec::frame_checksum(&m);
    m.extend_from_slice(format!("10={sum:03}\x01").as_bytes());
    m
}

const HDR: &str = "35=D\x0149=CLIENT\x0156=PGN\x0134=2\x0152=20231114-22:13:20.000\x01";

#[test]
fn bad_checksum_is_rejected_and_not_consumed() {
    let mut m = with_body(&format!("{HDR}11=a\x01"));
    let n = m.len();
    m[n - 2] = if m[n - 2] == b'0' { b'1' } else { b'0' };
    let (events, r, next) = rejected(&m);
    assert_eq!(events, vec![Ev::Garbled]);
    let r = r.unwrap();
    assert_eq!(
        (r.get(373), r.get(371), r.get(45)),
        (Some("5"), Some("10"), Some("2"))
    );
    assert_eq!(
        next, 2,
        "a garbled message is not consumed: the next one asks for its resend"
    );
}

#[test]
fn bad_body_length_is_rejected_and_not_consumed() {
    let good = String::from_utf8(with_body(&format!("{HDR}11=a\x01"))).unwrap();
    let len = HDR.len() + 5;
    let bad = good.replacen(&format!("9={len}"), &format!("9={}", len - 3), 1);
    let (events, r, next) = rejected(bad.as_bytes());
    assert_eq!(events, vec![Ev::Garbled]);
    assert_eq!(r.unwrap().get(371), Some("9"));
    assert_eq!(next, 2);
}

#[test]
fn missing_required_tag() {
    let m = with_body("35=D\x0149=CLIENT\x0156=PGN\x0134=2\x0111=a\x01");
    assert_eq!(reject_of(&m), ("1".into(), Some("52".into()), "2".into()));
}

#[test]
fn tags_out_of_order() {
    let m = with_body(&format!("{HDR}11=a\x0150=desk\x01"));
    assert_eq!(reject_of(&m), ("14".into(), Some("50".into()), "2".into()));
    let m = with_body("49=CLIENT\x0135=D\x0156=PGN\x0134=2\x0152=20231114-22:13:20.000\x01");
    assert_eq!(reject_of(&m).0, "14");
}

#[test]
fn repeated_tags() {
    let m = with_body(&format!("{HDR}52=20231114-22:13:20.000\x01"));
    assert_eq!(reject_of(&m), ("13".into(), Some("52".into()), "2".into()));
}

#[test]
fn bad_enum_values() {
    let m =
        with_body("35=D\x0149=CLIENT\x0156=PGN\x0134=2\x0143=Q\x0152=20231114-22:13:20.000\x01");
    assert_eq!(reject_of(&m), ("5".into(), Some("43".into()), "2".into()));
}

#[test]
fn bad_data_format_invalid_tag_and_empty_value() {
    let m = with_body("35=D\x0149=CLIENT\x0156=PGN\x0134=2\x0152=yesterday\x01");
    assert_eq!(reject_of(&m), ("6".into(), Some("52".into()), "2".into()));
    let m = with_body(&format!("{HDR}x1=a\x01"));
    assert_eq!(reject_of(&m).0, "0");
    let m = with_body(&format!("{HDR}11=\x01"));
    assert_eq!(reject_of(&m), ("4".into(), Some("11".into()), "2".into()));
}

#[test]
fn a_rejected_message_is_consumed() {
    let m = with_body(&format!("{HDR}52=20231114-22:13:20.000\x01"));
    let (events, _, next) = rejected(&m);
    assert!(matches!(events[..], [Ev::Rejected { seq: 2, .. }]));
    assert_eq!(next, 3);
}

#[test]
fn wrong_comp_ids_are_rejected_then_logged_out() {
    let (mut s, mut p) = logged_on();
    p.sender = "INTRUDER";
    let events = feed(&mut s, &p.msg("D", T0, &[(11, "a")]), T0);
    assert_eq!(
        events,
        vec![Ev::Disconnect(DisconnectReason::CompIdProblem)],
        "the Reject is followed by the Logout"
    );
    let out = drain(&mut s);
    assert_eq!(types(&out), vec!["3", "5"]);
    assert_eq!((out[0].get(373), out[0].get(371)), (Some("9"), Some("49")));
}

#[test]
fn sending_time_out_of_range_is_rejected_then_logged_out() {
    let (mut s, mut p) = logged_on();
    let late = p.msg("D", T0 - 121 * SEC, &[(11, "a")]);
    assert_eq!(
        feed(&mut s, &late, T0),
        vec![Ev::Disconnect(DisconnectReason::SendingTime)]
    );
    let out = drain(&mut s);
    assert_eq!(types(&out), vec!["3", "5"]);
    assert_eq!((out[0].get(373), out[0].get(371)), (Some("10"), Some("52")));
    // Within the tolerance is fine.
    let (mut s, mut p) = logged_on();
    let ok = p.msg("D", T0 - 119 * SEC, &[(11, "a")]);
    assert!(matches!(feed(&mut s, &ok, T0)[..], [Ev::App { .. }]));
}

#[test]
fn poss_dup_without_orig_sending_time_is_rejected() {
    let (mut s, mut p) = logged_on();
    let m = p.raw("D", 2, T0, &[(43, "Y")], &[(11, "a")]);
    assert_eq!(
        feed(&mut s, &m, T0),
        vec![Ev::Rejected {
            seq: 2,
            reason: SessionRejectReason::RequiredTagMissing,
            tag: Some(122)
        }]
    );
}

#[test]
fn a_huge_body_length_logs_out_without_buffering() {
    let (mut s, _) = logged_on();
    let events = feed(&mut s, b"8=FIX.4.4\x019=999999999\x01", T0);
    assert!(matches!(
        events[..],
        [Ev::Disconnect(DisconnectReason::Framing(_))]
    ));
    assert_eq!(types(&drain(&mut s)), vec!["5"]);
}

#[test]
fn missing_msg_seq_num_is_logged_out() {
    let m = with_body("35=D\x0149=CLIENT\x0156=PGN\x0152=20231114-22:13:20.000\x01");
    let (events, _, _) = rejected(&m);
    assert_eq!(events, vec![Ev::Disconnect(DisconnectReason::NoSeqNum)]);
}

#[test]
fn a_peer_reject_is_reported() {
    let (mut s, mut p) = logged_on();
    assert_eq!(
        feed(&mut s, &p.msg("3", T0, &[(45, "1"), (373, "99")]), T0),
        vec![Ev::PeerRejected(1)]
    );
}
