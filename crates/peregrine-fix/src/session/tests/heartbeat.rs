//! Heartbeats and TestRequests (FIX 4.4 test cases 4a, 4b, 6).

use super::*;

/// 4a: a Heartbeat after an interval of sending nothing (QuickFIX
/// 4a_NoDataSentDuringHeartBtInt).
#[test]
fn heartbeat_after_an_interval_of_silence() {
    let (mut s, _) = logged_on();
    assert_eq!(s.poll(T0 + 29 * SEC).unwrap(), None);
    assert!(drain(&mut s).is_empty());
    s.poll(T0 + 30 * SEC).unwrap();
    let out = drain(&mut s);
    assert_eq!(types(&out), vec!["0"]);
    assert_eq!(out[0].get(112), None);
}

/// 6: hearing nothing for an interval (+20%), a TestRequest; nothing for a second
/// such interval, Logout and disconnect. No Heartbeat while the TestRequest waits
/// for its answer (QuickFIX 6_SendTestRequest).
#[test]
fn test_request_after_silence_then_disconnect_if_still_silent() {
    let (mut s, _) = logged_on();
    s.poll(T0 + 30 * SEC).unwrap();
    assert_eq!(types(&drain(&mut s)), vec!["0"]);
    s.poll(T0 + 36 * SEC).unwrap();
    assert_eq!(types(&drain(&mut s)), vec!["1"]);
    for t in [60, 66, 71] {
        assert_eq!(s.poll(T0 + t * SEC).unwrap(), None);
    }
    assert!(
        drain(&mut s).is_empty(),
        "no Heartbeat while the TestRequest is unanswered"
    );
    assert_eq!(
        s.poll(T0 + 72 * SEC).unwrap(),
        Some(Event::Disconnect(DisconnectReason::HeartbeatTimeout))
    );
    assert_eq!(types(&drain(&mut s)), vec!["5"]);
}

#[test]
fn an_answer_to_the_test_request_keeps_the_session() {
    let (mut s, mut p) = logged_on();
    s.poll(T0 + 36 * SEC).unwrap();
    let test_id = drain(&mut s)
        .iter()
        .find(|o| o.msg_type == "1")
        .unwrap()
        .get(112)
        .unwrap()
        .to_string();
    let hb = p.msg("0", T0 + 37 * SEC, &[(112, &test_id)]);
    assert_eq!(feed(&mut s, &hb, T0 + 37 * SEC), vec![]);
    assert_eq!(s.poll(T0 + 72 * SEC).unwrap(), None);
    assert!(s.is_logged_on());
    // Heartbeats resume once it is answered.
    assert_eq!(types(&drain(&mut s)), vec!["0"]);
}

/// 4b: a TestRequest is answered with a Heartbeat echoing its TestReqID (QuickFIX
/// 4b_ReceivedTestRequest).
#[test]
fn test_request_is_answered_with_its_id() {
    let (mut s, mut p) = logged_on();
    assert_eq!(
        feed(&mut s, &p.msg("1", T0, &[(112, "ping-7")]), T0),
        vec![]
    );
    let out = drain(&mut s);
    assert_eq!((types(&out), out[0].get(112)), (vec!["0"], Some("ping-7")));
}

/// Any message from the peer counts as hearing from it (a malformed one too).
#[test]
fn any_message_is_a_sign_of_life() {
    let (mut s, mut p) = logged_on();
    feed(&mut s, &p.msg("0", T0 + 30 * SEC, &[]), T0 + 30 * SEC);
    s.poll(T0 + 36 * SEC).unwrap();
    assert!(!types(&drain(&mut s)).contains(&"1"));
}
