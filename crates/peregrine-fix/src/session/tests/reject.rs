//! Session-level Rejects of the standard header and the arrival checks (FIX 4.4
//! test cases 2f, 2g, 2k, 2o, 7, 14b, 14d, 14g, and the reverse routing of a
//! Reject).

use super::*;

/// Feeds `raw` to a logged-on session (expected 2) and returns the events, the
/// Reject it sent (if any), and the next expected number.
pub(super) fn rejected(raw: &[u8]) -> (Vec<Ev>, Option<Out>, u64) {
    let (mut s, _) = logged_on();
    let events = feed(&mut s, raw, T0);
    let reject = drain(&mut s).into_iter().find(|o| o.msg_type == "3");
    (events, reject, s.store().next_target_seq())
}

/// (373, 371, 45) of the Reject `raw` gets.
pub(super) fn reject_of(raw: &[u8]) -> (String, Option<String>, String) {
    let (_, r, next) = rejected(raw);
    let r = r.expect("a Reject");
    assert_eq!(next, 3, "a rejected message in sequence is consumed");
    (
        r.get(373).unwrap().to_string(),
        r.get(371).map(str::to_string),
        r.get(45).unwrap().to_string(),
    )
}

fn reason(code: &str, tag: &str) -> (String, Option<String>, String) {
    (code.into(), Some(tag.into()), "2".into())
}

/// 14b: a required header tag missing.
#[test]
fn missing_required_header_tag() {
    let m = with_body("35=0\x0149=CLIENT\x0134=2\x0152=20231114-22:13:20.000\x01");
    assert_eq!(reject_of(&m), reason("1", "56"));
}

/// 14g: a header field after the body (QuickFIX 14g: MsgSeqNum after the body was
/// answered with a Logout; the rule is Reject 14, the number consumed).
#[test]
fn header_fields_after_the_body_are_out_of_order() {
    let m = with_body("35=D\x0111=id\x0121=3\x0140=1\x0154=1\x0155=MSFT\x0160=20231114-22:13:20\x0134=2\x0149=CLIENT\x0152=20231114-22:13:20.000\x0156=PGN\x01");
    assert_eq!(reject_of(&m), reason("14", "34"));
    let m = with_body(
        "35=D\x0155=MSFT\x0134=2\x0149=CLIENT\x0152=20231114-22:13:20\x0156=PGN\x0111=id\x01",
    );
    assert_eq!(reject_of(&m), reason("14", "34"));
    let m = with_body(&format!("35=0\x01{HDR2}112=x\x0150=desk\x01"));
    assert_eq!(reject_of(&m), reason("14", "50"));
}

/// 14h (header): a header tag twice.
#[test]
fn repeated_header_tags() {
    let m = with_body(&format!("35=0\x01{HDR2}52=20231114-22:13:20.000\x01"));
    assert_eq!(reject_of(&m), reason("13", "52"));
}

/// 14e (header): PossDupFlag not Y or N.
#[test]
fn bad_header_values() {
    let m = with_body(&format!("35=0\x01{HDR2}43=Q\x01"));
    assert_eq!(reject_of(&m), reason("5", "43"));
    let m = with_body("35=0\x0149=CLIENT\x0156=PGN\x0134=2\x0152=yesterday\x01");
    assert_eq!(reject_of(&m), reason("6", "52"));
}

/// 14d: a tag without a value (QuickFIX 14d_TagSpecifiedWithoutValue).
#[test]
fn a_tag_without_a_value() {
    let m = with_body("35=0\x0134=2\x0149=CLIENT\x0152=20231114-22:13:20\x0156=\x01");
    assert_eq!(reject_of(&m), reason("4", "56"));
}

/// 14a (the codec's part): a tag that is not a positive number; RefTagID keeps the
/// number as written (QuickFIX 14a_BadField).
#[test]
fn invalid_tag_numbers() {
    for (tag, id) in [("0", "0"), ("-1", "-1")] {
        let m = with_body(&format!("35=0\x01{HDR2}{tag}=HI\x01"));
        assert_eq!(reject_of(&m), reason("0", id));
    }
    let m = with_body(&format!("35=0\x01{HDR2}x1=HI\x01"));
    assert_eq!(reject_of(&m), ("0".into(), None, "2".into()));
}

/// 2k: CompIDs not this session's: Reject 9, Logout, close (QuickFIX
/// 2k_CompIDDoesNotMatchProfile).
#[test]
fn wrong_comp_ids_are_rejected_then_logged_out() {
    for (sender, target, tag) in [
        ("WT", "PGN", "49"),
        ("CLIENT", "DLSI", "56"),
        ("WT", "DLSI", "49"),
    ] {
        let (mut s, mut p) = logged_on();
        p.sender = sender;
        p.target = target;
        let events = feed(&mut s, &p.msg("D", T0, &order("a")), T0);
        assert_eq!(
            events,
            vec![Ev::Disconnect(DisconnectReason::CompIdProblem)],
            "the Reject is followed by the Logout"
        );
        let out = drain(&mut s);
        assert_eq!(types(&out), vec!["3", "5"]);
        assert_eq!(
            (out[0].get(373), out[0].get(371), out[0].get(45), out[1].seq),
            (Some("9"), Some(tag), Some("2"), 3)
        );
    }
}

/// 2o: SendingTime more than the tolerance off, either way: Reject 10, Logout,
/// close (QuickFIX 2o_SendingTimeValueOutOfRange); within it is fine; with
/// `check_latency` off it is not checked.
#[test]
fn sending_time_out_of_range_is_rejected_then_logged_out() {
    for off in [T0 - 121 * SEC, T0 + 121 * SEC] {
        let (mut s, mut p) = logged_on();
        let late = p.msg("0", off, &[]);
        assert_eq!(
            feed(&mut s, &late, T0),
            vec![Ev::Disconnect(DisconnectReason::SendingTime)]
        );
        let out = drain(&mut s);
        assert_eq!(types(&out), vec!["3", "5"]);
        assert_eq!((out[0].get(373), out[0].get(371)), (Some("10"), Some("52")));
    }
    let (mut s, mut p) = logged_on();
    let ok = p.msg("D", T0 - 119 * SEC, &order("a"));
    assert_eq!(feed(&mut s, &ok, T0), vec![app_d(2, false)]);
    let mut c = acceptor_config();
    c.check_latency = false;
    let mut s = Session::new(c, MemoryStore::new(T0));
    s.connect(T0).unwrap();
    let mut p = Peer::new();
    feed(&mut s, &p.logon(T0, &[(554, "secret")]), T0);
    let old = p.msg("D", T0 - 3600 * SEC, &order("a"));
    assert_eq!(feed(&mut s, &old, T0), vec![app_d(2, false)]);
}

/// 2g: PossDupFlag without OrigSendingTime: Reject 1 (RefTagID 122), in sequence
/// consumed, too low not (QuickFIX 2g_PossDupNoOrigSendingTime).
#[test]
fn poss_dup_without_orig_sending_time_is_rejected() {
    let (mut s, mut p) = logged_on();
    let m = p.raw("D", 2, T0, &[(43, "Y")], &order("a"));
    let rejected = vec![Ev::Rejected {
        seq: 2,
        reason: SessionRejectReason::RequiredTagMissing,
        tag: Some(122),
    }];
    assert_eq!(feed(&mut s, &m, T0), rejected);
    assert_eq!(s.store().next_target_seq(), 3);
    let (mut s, mut p) = logged_on();
    feed(&mut s, &p.msg("D", T0, &order("a")), T0);
    feed(&mut s, &p.msg("D", T0, &order("b")), T0);
    drain(&mut s);
    assert_eq!(feed(&mut s, &m, T0), rejected);
    assert_eq!(s.store().next_target_seq(), 4, "too low: not consumed");
    let out = drain(&mut s);
    assert_eq!((types(&out), out[0].get(372)), (vec!["3"], Some("D")));
    assert!(s.is_logged_on());
}

/// 2f: PossDupFlag with OrigSendingTime after SendingTime: Reject 10, Logout,
/// close, whether in sequence or too low (QuickFIX 2f_PossDupOrigSendingTimeTooHigh).
#[test]
fn orig_sending_time_after_sending_time_is_rejected_then_logged_out() {
    let (mut s, mut p) = logged_on();
    feed(&mut s, &p.msg("D", T0, &order("a")), T0);
    feed(&mut s, &p.msg("D", T0, &order("b")), T0);
    drain(&mut s);
    let m = p.raw(
        "D",
        2,
        T0,
        &[(43, "Y"), (122, "20231114-22:13:30")],
        &order("a"),
    );
    assert_eq!(
        feed(&mut s, &m, T0),
        vec![Ev::Disconnect(DisconnectReason::SendingTime)]
    );
    let out = drain(&mut s);
    assert_eq!(types(&out), vec!["3", "5"]);
    assert_eq!((out[0].get(45), out[0].get(373)), (Some("2"), Some("10")));
}

/// 7: a Reject from the peer is consumed and reported.
#[test]
fn a_peer_reject_is_reported_and_consumed() {
    let (mut s, mut p) = logged_on();
    assert_eq!(
        feed(&mut s, &p.msg("3", T0, &[(45, "1")]), T0),
        vec![Ev::PeerRejected(1)]
    );
    assert_eq!(s.store().next_target_seq(), 3);
    assert!(drain(&mut s).is_empty());
}

/// MsgSeqNum missing or not a number: nothing can be sequenced: Logout, close.
#[test]
fn missing_msg_seq_num_is_logged_out() {
    let m = with_body("35=D\x0149=CLIENT\x0156=PGN\x0152=20231114-22:13:20.000\x01");
    let (events, _, _) = rejected(&m);
    assert_eq!(events, vec![Ev::Disconnect(DisconnectReason::NoSeqNum)]);
}

/// A Reject goes back the way the message came: OnBehalfOf* become DeliverTo* and
/// the other way round; empty routing fields are not echoed (QuickFIX ReverseRoute,
/// ReverseRouteWithEmptyRoutingTags).
#[test]
fn a_reject_is_routed_back() {
    let body = |route: &str| {
        with_body(&format!(
            "35=D\x01{HDR2}{route}11=ID\x0121=3\x0138=100\x0140=w\x0154=1\x0155=INTC\x0160=20231114-22:13:20\x01"
        ))
    };
    for (route, back) in [
        ("115=JCD\x01", vec![(128, "JCD")]),
        ("128=JCD\x01", vec![(115, "JCD")]),
        (
            "115=JCD\x01116=CS\x01144=CHI\x01",
            vec![(128, "JCD"), (129, "CS"), (145, "CHI")],
        ),
        (
            "128=JCD\x01129=CS\x01145=CHI\x01",
            vec![(115, "JCD"), (116, "CS"), (144, "CHI")],
        ),
    ] {
        let (_, r, _) = rejected(&body(route));
        let r = r.unwrap();
        assert_eq!((r.get(373), r.get(371)), (Some("5"), Some("40")));
        for (tag, v) in back {
            assert_eq!(r.get(tag), Some(v), "{route:?} → {tag}");
        }
    }
    let (_, r, _) = rejected(&body("115=JCD\x01116=\x01"));
    let r = r.unwrap();
    assert_eq!((r.get(373), r.get(371)), (Some("4"), Some("116")));
    assert_eq!((r.get(128), r.get(129)), (Some("JCD"), None));
}
