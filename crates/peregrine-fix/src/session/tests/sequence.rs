//! The sequence rules: too high → ResendRequest; too low → Logout unless PossDup;
//! SequenceReset in both modes.

use super::*;

#[test]
fn in_sequence_application_messages_are_delivered() {
    let (mut s, mut p) = logged_on();
    let d = p.msg("D", T0, &[(11, "a")]);
    assert_eq!(
        feed(&mut s, &d, T0),
        vec![Ev::App {
            msg_type: "D".into(),
            seq: 2,
            poss_dup: false
        }]
    );
    assert_eq!(s.store().next_target_seq(), 3);
}

#[test]
fn too_high_asks_for_a_resend_once_and_drops_the_message() {
    let (mut s, mut p) = logged_on();
    p.seq = 5; // expected 2
    assert_eq!(feed(&mut s, &p.msg("D", T0, &[(11, "a")]), T0), vec![]);
    assert_eq!(feed(&mut s, &p.msg("D", T0, &[(11, "b")]), T0), vec![]);
    let out = drain(&mut s);
    assert_eq!(
        types(&out),
        vec!["2"],
        "one ResendRequest while one is open"
    );
    assert_eq!((out[0].get(7), out[0].get(16)), (Some("2"), Some("0")));
    assert_eq!(s.store().next_target_seq(), 2);
    // The peer resends 2..=6 (3 and 4 as a gap fill); everything arrives in order.
    let mut events = Vec::new();
    let orig = "20231114-22:13:19.000";
    events.extend(feed(
        &mut s,
        &p.raw("D", 2, T0, &[(43, "Y"), (122, orig)], &[(11, "x")]),
        T0,
    ));
    events.extend(feed(
        &mut s,
        &p.raw(
            "4",
            3,
            T0,
            &[(43, "Y"), (122, orig)],
            &[(123, "Y"), (36, "5")],
        ),
        T0,
    ));
    events.extend(feed(
        &mut s,
        &p.raw("D", 5, T0, &[(43, "Y"), (122, orig)], &[(11, "a")]),
        T0,
    ));
    events.extend(feed(
        &mut s,
        &p.raw("D", 6, T0, &[(43, "Y"), (122, orig)], &[(11, "b")]),
        T0,
    ));
    assert_eq!(
        events,
        vec![
            Ev::App {
                msg_type: "D".into(),
                seq: 2,
                poss_dup: true
            },
            Ev::App {
                msg_type: "D".into(),
                seq: 5,
                poss_dup: true
            },
            Ev::App {
                msg_type: "D".into(),
                seq: 6,
                poss_dup: true
            },
        ]
    );
    assert_eq!(s.store().next_target_seq(), 7);
    // Closed: a new gap asks again.
    p.seq = 9;
    feed(&mut s, &p.msg("0", T0, &[]), T0);
    assert_eq!(types(&drain(&mut s)), vec!["2"]);
}

#[test]
fn too_low_without_poss_dup_is_logged_out() {
    let (mut s, mut p) = logged_on();
    feed(&mut s, &p.msg("D", T0, &[(11, "a")]), T0);
    p.seq = 2;
    let events = feed(&mut s, &p.msg("D", T0, &[(11, "a")]), T0);
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
        (vec!["5"], Some("MsgSeqNum too low"))
    );
}

#[test]
fn too_low_with_poss_dup_is_ignored() {
    let (mut s, mut p) = logged_on();
    feed(&mut s, &p.msg("D", T0, &[(11, "a")]), T0);
    let dup = p.raw(
        "D",
        2,
        T0,
        &[(43, "Y"), (122, "20231114-22:13:19")],
        &[(11, "a")],
    );
    assert_eq!(feed(&mut s, &dup, T0), vec![]);
    assert!(drain(&mut s).is_empty());
    assert!(s.is_logged_on());
}

#[test]
fn gap_fill_moves_the_expected_number_and_may_not_go_backwards() {
    let (mut s, mut p) = logged_on();
    let gf = p.raw(
        "4",
        2,
        T0,
        &[(43, "Y"), (122, "20231114-22:13:19")],
        &[(123, "Y"), (36, "10")],
    );
    assert_eq!(feed(&mut s, &gf, T0), vec![]);
    assert_eq!(s.store().next_target_seq(), 10);
    let bad = p.raw("4", 10, T0, &[], &[(123, "Y"), (36, "10")]);
    assert_eq!(
        feed(&mut s, &bad, T0),
        vec![Ev::Rejected {
            seq: 10,
            reason: SessionRejectReason::ValueIncorrect,
            tag: Some(36)
        }]
    );
    let out = drain(&mut s);
    assert_eq!(
        (types(&out), out[0].get(373), out[0].get(371)),
        (vec!["3"], Some("5"), Some("36"))
    );
}

#[test]
fn sequence_reset_ignores_msg_seq_num_and_may_only_raise() {
    let (mut s, mut p) = logged_on();
    // MsgSeqNum 99 is far beyond expected 2, but reset mode ignores it.
    let reset = p.raw("4", 99, T0, &[], &[(36, "20")]);
    assert_eq!(feed(&mut s, &reset, T0), vec![]);
    assert_eq!(s.store().next_target_seq(), 20);
    assert!(drain(&mut s).is_empty(), "no ResendRequest for a reset");
    let lower = p.raw("4", 20, T0, &[], &[(123, "N"), (36, "5")]);
    assert_eq!(
        feed(&mut s, &lower, T0),
        vec![Ev::Rejected {
            seq: 20,
            reason: SessionRejectReason::ValueIncorrect,
            tag: Some(36)
        }]
    );
    assert_eq!(s.store().next_target_seq(), 20);
    let missing = p.raw("4", 20, T0, &[], &[]);
    assert_eq!(
        feed(&mut s, &missing, T0),
        vec![Ev::Rejected {
            seq: 20,
            reason: SessionRejectReason::RequiredTagMissing,
            tag: Some(36)
        }]
    );
}

#[test]
fn a_resend_request_beyond_a_gap_is_still_served() {
    let (mut s, mut p) = logged_on();
    send_order_ack(&mut s, T0, "a");
    drain(&mut s);
    p.seq = 7;
    let events = feed(&mut s, &p.msg("2", T0, &[(7, "2"), (16, "0")]), T0);
    assert_eq!(events, vec![Ev::Resend(2, 0)]);
    // Ours: 1 Logon, 2 the ack, 3 our own ResendRequest (for the gap): the ack is
    // resent, our ResendRequest gap-filled.
    let out = drain(&mut s);
    assert_eq!(types(&out), vec!["2", "8", "4"]);
}

#[test]
fn a_logout_beyond_a_gap_is_answered() {
    let (mut s, mut p) = logged_on();
    p.seq = 7;
    assert_eq!(
        feed(&mut s, &p.msg("5", T0, &[]), T0),
        vec![Ev::Disconnect(DisconnectReason::PeerLogout)]
    );
    assert_eq!(types(&drain(&mut s)), vec!["2", "5"]);
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
