//! The sequence rules (FIX 4.4 test cases 2a–2c, 2e, 10, 11, 20): in order;
//! too high → ResendRequest, the message queued until the gap is filled; too low →
//! Logout unless PossDup; SequenceReset in both modes.

use super::*;

const ORIG: &str = "20231114-22:13:19";

/// A PossDup resend of message `seq` (a NewOrderSingle).
fn resent_d(p: &mut Peer, seq: u64, id: &'static str) -> Vec<u8> {
    p.raw("D", seq, T0, &[(43, "Y"), (122, ORIG)], &order(id))
}

/// 2a: messages in sequence are delivered and the expected number moves on.
#[test]
fn in_sequence_application_messages_are_delivered() {
    let (mut s, mut p) = logged_on();
    let d = p.msg("D", T0, &order("a"));
    assert_eq!(feed(&mut s, &d, T0), vec![app_d(2, false)]);
    for _ in 0..4 {
        assert_eq!(feed(&mut s, &p.msg("0", T0, &[]), T0), vec![]);
    }
    assert_eq!(s.store().next_target_seq(), 7);
    assert!(drain(&mut s).is_empty());
}

/// 2b: too high → one ResendRequest from the expected number to infinity while the
/// gap is open; the message waits in the queue and is delivered, in order, once
/// the resend fills the gap (QuickFIX 2b_MsgSeqNumTooHigh, 2m).
#[test]
fn too_high_asks_for_a_resend_and_delivers_in_order_once_filled() {
    let (mut s, mut p) = logged_on();
    p.seq = 5; // expected 2
    assert_eq!(feed(&mut s, &p.msg("D", T0, &order("e")), T0), vec![]);
    assert_eq!(feed(&mut s, &p.msg("D", T0, &order("f")), T0), vec![]);
    let out = drain(&mut s);
    assert_eq!(
        types(&out),
        vec!["2"],
        "one ResendRequest while one is open"
    );
    assert_eq!((out[0].get(7), out[0].get(16)), (Some("2"), Some("0")));
    assert_eq!(s.store().next_target_seq(), 2);
    assert!(s.has_queued());
    // The peer resends 2, gap-fills 3..4: the queued 5 and 6 follow at once.
    let mut events = feed(&mut s, &resent_d(&mut p, 2, "b"), T0);
    let gf = p.raw(
        "4",
        3,
        T0,
        &[(43, "Y"), (122, ORIG)],
        &[(123, "Y"), (36, "5")],
    );
    events.extend(feed(&mut s, &gf, T0));
    assert_eq!(
        events,
        vec![app_d(2, true), app_d(5, false), app_d(6, false)]
    );
    assert_eq!(s.store().next_target_seq(), 7);
    assert!(!s.has_queued());
    // The peer resending what was queued is a duplicate now: ignored.
    assert_eq!(feed(&mut s, &resent_d(&mut p, 5, "e"), T0), vec![]);
    // Closed: a new gap asks again.
    p.seq = 9;
    feed(&mut s, &p.msg("0", T0, &[]), T0);
    assert_eq!(types(&drain(&mut s)), vec!["2"]);
}

/// The defect: a resend that fills only part of the gap, then new messages:
/// the rest of the gap is asked for again (once per step of progress, or after a
/// heartbeat interval without any).
#[test]
fn a_gap_answered_in_part_is_asked_for_again() {
    let (mut s, mut p) = logged_on();
    p.seq = 10;
    feed(&mut s, &p.msg("1", T0, &[(112, "t10")]), T0);
    assert_eq!(drain(&mut s)[0].get(7), Some("2"));
    // The peer resends 2..=5 only.
    for seq in 2..=5 {
        feed(
            &mut s,
            &p.raw("0", seq, T0, &[(43, "Y"), (122, ORIG)], &[]),
            T0,
        );
    }
    assert_eq!(s.store().next_target_seq(), 6);
    // Its next new message: still a gap (6..9): asked again, from 6.
    p.seq = 11;
    feed(&mut s, &p.msg("1", T0, &[(112, "t11")]), T0);
    let out = drain(&mut s);
    assert_eq!(
        (types(&out), out[0].get(7), out[0].get(16)),
        (vec!["2"], Some("6"), Some("0"))
    );
    // No progress since: not again for the next message...
    feed(&mut s, &p.msg("1", T0 + SEC, &[(112, "t12")]), T0 + SEC);
    assert!(drain(&mut s).is_empty());
    // ...but again once a heartbeat interval has passed without any.
    feed(
        &mut s,
        &p.msg("1", T0 + 31 * SEC, &[(112, "t13")]),
        T0 + 31 * SEC,
    );
    assert_eq!(types(&drain(&mut s)), vec!["2"]);
    // Filled at last: every queued TestRequest is answered, in order.
    let gf = p.raw(
        "4",
        6,
        T0 + 31 * SEC,
        &[(43, "Y"), (122, ORIG)],
        &[(123, "Y"), (36, "10")],
    );
    feed(&mut s, &gf, T0 + 31 * SEC);
    let out = drain(&mut s);
    let ids: Vec<_> = out.iter().map(|o| o.get(112).unwrap_or("")).collect();
    assert_eq!(ids, vec!["t10", "t11", "t12", "t13"]);
    assert_eq!(s.store().next_target_seq(), 14);
}

/// The queue is bounded: what does not fit comes again with the resend.
#[test]
fn the_queue_behind_a_gap_is_bounded() {
    let mut c = acceptor_config();
    c.max_queued_bytes = 300;
    let mut s = Session::new(c, MemoryStore::new(T0));
    s.connect(T0).unwrap();
    let mut p = Peer::new();
    feed(&mut s, &p.logon(T0, &[(554, "secret")]), T0);
    p.seq = 3;
    for id in ["a", "b", "c", "d"] {
        feed(&mut s, &p.msg("D", T0, &order(id)), T0);
    }
    let filled = feed(&mut s, &resent_d(&mut p, 2, "x"), T0);
    assert!(filled.len() < 5 && filled.len() >= 2, "{filled:?}");
    assert_eq!(filled[0], app_d(2, true));
    // The rest arrives by resend (it was asked for to infinity).
    let next = s.store().next_target_seq();
    assert!(next < 7);
    assert_eq!(
        feed(&mut s, &resent_d(&mut p, next, "y"), T0),
        vec![app_d(next, true)]
    );
}

/// 2c: too low without PossDupFlag: Logout naming both numbers, close (QuickFIX
/// 2c_MsgSeqNumTooLow).
#[test]
fn too_low_without_poss_dup_is_logged_out() {
    let (mut s, mut p) = logged_on();
    feed(&mut s, &p.msg("D", T0, &order("a")), T0);
    p.seq = 2;
    let events = feed(&mut s, &p.msg("D", T0, &order("a")), T0);
    assert_eq!(
        events,
        vec![Ev::Disconnect(DisconnectReason::SeqTooLow {
            expected: 3,
            received: 2
        })]
    );
    let out = drain(&mut s);
    assert_eq!(
        (types(&out), out[0].get(58)),
        (
            vec!["5"],
            Some("MsgSeqNum too low, expecting 3 but received 2")
        )
    );
}

/// 2e: too low with PossDupFlag (and a good OrigSendingTime): ignored; a PossDup
/// message in sequence is delivered (QuickFIX 2e_PossDupAlreadyReceived,
/// 2e_PossDupNotReceived).
#[test]
fn poss_dup_already_received_is_ignored_and_not_received_is_processed() {
    let (mut s, mut p) = logged_on();
    feed(&mut s, &p.msg("D", T0, &order("a")), T0);
    assert_eq!(feed(&mut s, &resent_d(&mut p, 2, "a"), T0), vec![]);
    assert!(drain(&mut s).is_empty());
    assert!(s.is_logged_on());
    assert_eq!(
        feed(&mut s, &resent_d(&mut p, 3, "b"), T0),
        vec![app_d(3, true)]
    );
}

/// 10: SequenceReset-GapFill in sequence moves the expected number to NewSeqNo;
/// too high, it is kept for its turn and the gap asked for; too low with PossDup,
/// ignored; too low without, Logout (QuickFIX 10_MsgSeqNum*).
#[test]
fn gap_fill_in_sequence_too_high_and_too_low() {
    let (mut s, mut p) = logged_on();
    let gf = p.raw("4", 2, T0, &[], &[(123, "Y"), (36, "20")]);
    assert_eq!(feed(&mut s, &gf, T0), vec![]);
    assert_eq!(s.store().next_target_seq(), 20);
    let bad = p.raw("4", 20, T0, &[], &[(123, "Y"), (36, "20")]);
    assert_eq!(
        feed(&mut s, &bad, T0),
        vec![Ev::Rejected {
            seq: 20,
            reason: SessionRejectReason::ValueIncorrect,
            tag: Some(36)
        }]
    );
    assert_eq!(s.store().next_target_seq(), 21);
    let out = drain(&mut s);
    assert_eq!(
        (types(&out), out[0].get(373), out[0].get(371)),
        (vec!["3"], Some("5"), Some("36"))
    );
    // Too high: ResendRequest, and the gap fill waits for its turn.
    let (mut s, mut p) = logged_on();
    let high = p.raw("4", 10, T0, &[], &[(123, "Y"), (36, "20")]);
    feed(&mut s, &high, T0);
    assert_eq!(types(&drain(&mut s)), vec!["2"]);
    assert_eq!(s.store().next_target_seq(), 2);
    // Too low: with PossDup ignored, without it the end.
    let (mut s, mut p) = logged_on();
    feed(&mut s, &p.msg("0", T0, &[]), T0);
    let dup = p.raw(
        "4",
        1,
        T0,
        &[(43, "Y"), (122, ORIG)],
        &[(123, "Y"), (36, "20")],
    );
    assert_eq!(feed(&mut s, &dup, T0), vec![]);
    let low = p.raw("4", 1, T0, &[], &[(123, "Y"), (36, "20")]);
    assert_eq!(
        feed(&mut s, &low, T0),
        vec![Ev::Disconnect(DisconnectReason::SeqTooLow {
            expected: 3,
            received: 1
        })]
    );
}

/// 11: SequenceReset in reset mode ignores MsgSeqNum (0 included) and may only
/// raise the expected number: equal is accepted, lower is Reject 5 (RefTagID 36)
/// and changes nothing (QuickFIX 11a, 11b, 11c).
#[test]
fn sequence_reset_ignores_msg_seq_num_and_may_only_raise() {
    let (mut s, mut p) = logged_on();
    let reset = p.raw("4", 0, T0, &[], &[(36, "25")]);
    assert_eq!(feed(&mut s, &reset, T0), vec![]);
    assert_eq!(s.store().next_target_seq(), 25);
    assert!(drain(&mut s).is_empty(), "no ResendRequest for a reset");
    let reset = p.raw("4", 99, T0, &[], &[(123, "N"), (36, "50")]);
    assert_eq!(feed(&mut s, &reset, T0), vec![]);
    assert_eq!(s.store().next_target_seq(), 50);
    let equal = p.raw("4", 0, T0, &[], &[(36, "50")]);
    assert_eq!(feed(&mut s, &equal, T0), vec![]);
    let lower = p.raw("4", 0, T0, &[], &[(123, "N"), (36, "5")]);
    assert_eq!(
        feed(&mut s, &lower, T0),
        vec![Ev::Rejected {
            seq: 0,
            reason: SessionRejectReason::ValueIncorrect,
            tag: Some(36)
        }]
    );
    let out = drain(&mut s);
    assert_eq!((out[0].get(45), out[0].get(372)), (Some("0"), Some("4")));
    assert_eq!(s.store().next_target_seq(), 50);
    let missing = p.raw("4", 50, T0, &[], &[]);
    assert_eq!(
        feed(&mut s, &missing, T0),
        vec![Ev::Rejected {
            seq: 50,
            reason: SessionRejectReason::RequiredTagMissing,
            tag: Some(36)
        }]
    );
}

/// A reset over a gap closes it and drops what was queued below NewSeqNo.
#[test]
fn a_sequence_reset_closes_an_open_gap() {
    let (mut s, mut p) = logged_on();
    p.seq = 5;
    feed(&mut s, &p.msg("0", T0, &[]), T0);
    drain(&mut s);
    let reset = p.raw("4", 0, T0, &[], &[(36, "8")]);
    feed(&mut s, &reset, T0);
    assert!(!s.has_queued());
    assert_eq!(feed(&mut s, &p.raw("0", 8, T0, &[], &[]), T0), vec![]);
    assert_eq!(s.store().next_target_seq(), 9);
    assert!(drain(&mut s).is_empty());
}

/// 20: a ResendRequest beyond a gap is served at once (the peer may be waiting for
/// it to fill ours); its number is kept and consumed in turn (QuickFIX
/// 20_SimultaneousResendRequest).
#[test]
fn a_resend_request_beyond_a_gap_is_served_and_counted_in_turn() {
    let (mut s, mut p) = logged_on();
    send_order_ack(&mut s, T0, "a");
    drain(&mut s);
    p.seq = 7;
    feed(&mut s, &p.msg("0", T0, &[]), T0);
    assert_eq!(types(&drain(&mut s)), vec!["2"]);
    let events = feed(&mut s, &p.msg("2", T0, &[(7, "2"), (16, "2")]), T0);
    assert_eq!(events, vec![Ev::Resend(2, 2)]);
    assert_eq!(types(&drain(&mut s)), vec!["8"]);
    for seq in 2..=6 {
        feed(
            &mut s,
            &p.raw("0", seq, T0, &[(43, "Y"), (122, ORIG)], &[]),
            T0,
        );
    }
    // 7 (a Heartbeat) and 8 (the ResendRequest, already served) are consumed.
    assert_eq!(s.store().next_target_seq(), 9);
    assert!(
        drain(&mut s).is_empty(),
        "the ResendRequest is not served twice"
    );
}

/// A Logout's number is not held against it: beyond a gap it is answered (the gap
/// is asked for at the next Logon); below, the answer says so.
#[test]
fn a_logout_out_of_sequence_is_answered() {
    let (mut s, mut p) = logged_on();
    p.seq = 7;
    assert_eq!(
        feed(&mut s, &p.msg("5", T0, &[]), T0),
        vec![Ev::Disconnect(DisconnectReason::PeerLogout)]
    );
    let out = drain(&mut s);
    assert_eq!((types(&out), out[0].get(58)), (vec!["5"], None));
    let (mut s, mut p) = logged_on();
    feed(&mut s, &p.msg("0", T0, &[]), T0);
    p.seq = 2;
    assert_eq!(
        feed(&mut s, &p.msg("5", T0, &[]), T0),
        vec![Ev::Disconnect(DisconnectReason::PeerLogout)]
    );
    let out = drain(&mut s);
    assert_eq!(
        out[0].get(58),
        Some("MsgSeqNum too low, expecting 3 but received 2")
    );
}

#[test]
fn our_sequence_reset_moves_our_numbers_and_tells_the_peer() {
    let (mut s, mut p) = logged_on();
    s.reset_sequence(50, T0).unwrap();
    let out = drain(&mut s);
    assert_eq!(
        (
            out[0].msg_type.as_str(),
            out[0].seq,
            out[0].get(123),
            out[0].get(36)
        ),
        ("4", 2, Some("N"), Some("50"))
    );
    assert_eq!(send_order_ack(&mut s, T0, "x"), 50);
    // Lowering is not possible: nothing is sent.
    s.reset_sequence(10, T0).unwrap();
    assert_eq!(types(&drain(&mut s)), vec!["8"]);
    // A resend over the skipped numbers is one gap fill, then the message.
    feed(&mut s, &p.msg("2", T0, &[(7, "3"), (16, "0")]), T0);
    let out = drain(&mut s);
    assert_eq!(
        out.iter()
            .map(|o| (o.msg_type.as_str(), o.seq, o.get(36)))
            .collect::<Vec<_>>(),
        vec![("4", 3, Some("50")), ("8", 50, None)]
    );
}

/// A ResendRequest below the expected number is served, and not counted: refusing
/// it would only stop the peer catching up (QuickFIX 8_OnlyAdminMessages).
#[test]
fn a_resend_request_below_the_expected_number_is_served() {
    let (mut s, mut p) = logged_on();
    send_order_ack(&mut s, T0, "a");
    feed(&mut s, &p.msg("0", T0, &[]), T0);
    drain(&mut s);
    p.seq = 2; // expected 3
    let events = feed(&mut s, &p.msg("2", T0, &[(7, "1"), (16, "0")]), T0);
    assert_eq!(events, vec![Ev::Resend(1, 0)]);
    assert_eq!(types(&drain(&mut s)), vec!["4", "8"]);
    assert_eq!(s.store().next_target_seq(), 3);
    assert!(s.is_logged_on());
}
