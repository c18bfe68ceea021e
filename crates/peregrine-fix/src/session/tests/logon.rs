//! Logon (FIX 4.4 test cases 1a–1e), ResetSeqNumFlag, and the session settings
//! ResetOnLogon, ResetOnLogout and ResetOnDisconnect.

use super::*;
use crate::session::State;

/// 1a: a valid Logon is answered with a Logon; both numbers move on.
#[test]
fn logon_is_answered_with_logon_and_sequences_advance() {
    let (s, _) = logged_on();
    assert_eq!(
        (s.store().next_sender_seq(), s.store().next_target_seq()),
        (2, 2)
    );
    assert!(s.is_logged_on());
}

#[test]
fn logon_answer_carries_encrypt_method_and_the_heartbeat_in_force() {
    let mut s = acceptor();
    let mut p = Peer::new();
    let logon = p.msg("A", T0, &[(98, "0"), (108, "45"), (554, "secret")]);
    assert_eq!(
        feed(&mut s, &logon, T0),
        vec![Ev::LoggedOn {
            reset: false,
            hb: 45
        }]
    );
    let out = drain(&mut s);
    assert_eq!((out[0].get(98), out[0].get(108)), (Some("0"), Some("45")));
    assert_eq!(out[0].get(141), None, "no reset asked, none answered");
}

/// 1d (authentication): refused with a Logout that takes no sequence number.
#[test]
fn wrong_password_gets_an_unsequenced_logout_and_the_session_numbers_do_not_move() {
    for extra in [&[(554, "wrong")][..], &[]] {
        let mut s = acceptor();
        let mut p = Peer::new();
        let events = feed(&mut s, &p.logon(T0, extra), T0);
        assert_eq!(
            events,
            vec![Ev::Disconnect(DisconnectReason::LogonRefused(
                "authentication failed"
            ))]
        );
        let out = drain(&mut s);
        assert_eq!(types(&out), vec!["5"]);
        assert_eq!(out[0].get(58), Some("authentication failed"));
        assert_eq!(
            (s.store().next_sender_seq(), s.store().next_target_seq()),
            (1, 1)
        );
    }
}

#[test]
fn heartbeat_interval_outside_the_bounds_is_refused() {
    for hb in ["0", "301", "x"] {
        let mut s = acceptor();
        let mut p = Peer::new();
        let logon = p.msg("A", T0, &[(98, "0"), (108, hb), (554, "secret")]);
        assert!(matches!(
            feed(&mut s, &logon, T0)[..],
            [Ev::Disconnect(DisconnectReason::LogonRefused(_))]
        ));
    }
}

#[test]
fn encrypt_method_other_than_none_is_refused() {
    let mut s = acceptor();
    let mut p = Peer::new();
    let logon = p.msg("A", T0, &[(98, "1"), (108, "30"), (554, "secret")]);
    assert!(matches!(
        feed(&mut s, &logon, T0)[..],
        [Ev::Disconnect(DisconnectReason::LogonRefused(_))]
    ));
}

/// 1c: a Logon from or to someone else is refused.
#[test]
fn logon_with_wrong_comp_ids_is_refused() {
    for (sender, target) in [("WT", "PGN"), ("CLIENT", "DLSI")] {
        let mut s = acceptor();
        let mut p = Peer {
            sender,
            target,
            ..Peer::new()
        };
        assert_eq!(
            feed(&mut s, &p.logon(T0, &[(554, "secret")]), T0),
            vec![Ev::Disconnect(DisconnectReason::LogonRefused(
                "CompID problem"
            ))]
        );
    }
}

/// 1d: a Logon with SendingTime far off, of another FIX version, or garbled, ends
/// the connection.
#[test]
fn invalid_logons_end_the_connection() {
    let mut s = acceptor();
    let mut p = Peer::new();
    let old = p.logon(T0 - 3600 * SEC, &[(554, "secret")]);
    assert_eq!(
        feed(&mut s, &old, T0),
        vec![Ev::Disconnect(DisconnectReason::LogonRefused(
            "SendingTime accuracy problem"
        ))]
    );
    let logon = Peer::new().logon(T0, &[(554, "secret")]);
    let mut s = acceptor();
    assert_eq!(
        feed(&mut s, &reframe(&logon, "FIX.3.9"), T0),
        vec![Ev::Disconnect(DisconnectReason::NotLogon)]
    );
    let mut s = acceptor();
    assert_eq!(
        feed(&mut s, &with_body_length(&logon, 40), T0),
        vec![Ev::Disconnect(DisconnectReason::NotLogon)]
    );
}

/// 1e: the first message is not a Logon: disconnect without an answer.
#[test]
fn first_message_not_a_logon_disconnects_without_an_answer() {
    let mut s = acceptor();
    let mut p = Peer::new();
    let hb = p.msg("0", T0, &[]);
    assert_eq!(
        feed(&mut s, &hb, T0),
        vec![Ev::Disconnect(DisconnectReason::NotLogon)]
    );
    assert!(drain(&mut s).is_empty());
}

#[test]
fn no_logon_in_time_disconnects() {
    let mut s = acceptor();
    assert_eq!(s.poll(T0 + 9 * SEC).unwrap(), None);
    assert_eq!(
        s.poll(T0 + 10 * SEC).unwrap(),
        Some(Event::Disconnect(DisconnectReason::LogonTimeout))
    );
}

/// ResetSeqNumFlag at Logon: both numbers back to 1, the flag echoed.
#[test]
fn reset_seq_num_flag_resets_both_numbers_and_is_echoed() {
    let (mut s, mut p) = logged_on();
    send_order_ack(&mut s, T0, "a");
    drain(&mut s);
    s.disconnected();
    s.connect(T0).unwrap();
    p.seq = 1;
    let logon = p.logon(T0, &[(554, "secret"), (141, "Y")]);
    assert_eq!(
        feed(&mut s, &logon, T0),
        vec![Ev::LoggedOn {
            reset: true,
            hb: 30
        }]
    );
    let out = drain(&mut s);
    assert_eq!((out[0].seq, out[0].get(141)), (1, Some("Y")));
    assert_eq!(
        (s.store().next_sender_seq(), s.store().next_target_seq()),
        (2, 2)
    );
}

#[test]
fn reset_flag_with_a_sequence_number_other_than_one_is_refused() {
    let mut s = acceptor();
    let mut p = Peer::new();
    p.seq = 5;
    let logon = p.logon(T0, &[(554, "secret"), (141, "Y")]);
    assert!(matches!(
        feed(&mut s, &logon, T0)[..],
        [Ev::Disconnect(DisconnectReason::LogonRefused(_))]
    ));
}

/// 2c at Logon: too low is a Logout naming both numbers.
#[test]
fn logon_with_a_sequence_number_too_low_is_logged_out() {
    let (mut s, mut p) = logged_on();
    s.disconnected();
    s.connect(T0).unwrap();
    p.seq = 1; // expected 2
    let events = feed(&mut s, &p.logon(T0, &[(554, "secret")]), T0);
    assert_eq!(
        events,
        vec![Ev::Disconnect(DisconnectReason::SeqTooLow {
            expected: 2,
            received: 1
        })]
    );
    let out = drain(&mut s);
    assert_eq!(types(&out), vec!["5"]);
    assert_eq!(
        out[0].get(58),
        Some("MsgSeqNum too low, expecting 2 but received 1")
    );
}

/// 1a: a Logon too high logs on, then asks for the gap (QuickFIX
/// 1a_ValidLogonMsgSeqNumTooHigh).
#[test]
fn logon_with_a_sequence_number_too_high_logs_on_then_asks_for_a_resend() {
    let mut s = acceptor();
    let mut p = Peer::new();
    p.seq = 4;
    assert_eq!(
        feed(&mut s, &p.logon(T0, &[(554, "secret")]), T0),
        vec![Ev::LoggedOn {
            reset: false,
            hb: 30
        }]
    );
    let out = drain(&mut s);
    assert_eq!(types(&out), vec!["A", "2"]);
    assert_eq!((out[1].get(7), out[1].get(16)), (Some("1"), Some("0")));
    // The gap filled, the Logon's own number is consumed too.
    let gf = p.raw(
        "4",
        1,
        T0,
        &[(43, "Y"), (122, "20231114-22:13:19")],
        &[(123, "Y"), (36, "4")],
    );
    assert_eq!(feed(&mut s, &gf, T0), vec![]);
    assert_eq!(s.store().next_target_seq(), 5);
}

/// A second Logon without ResetSeqNumFlag on a logged-on connection.
#[test]
fn a_second_logon_on_a_logged_on_connection_is_logged_out() {
    let (mut s, mut p) = logged_on();
    let events = feed(&mut s, &p.logon(T0, &[(554, "secret")]), T0);
    assert_eq!(
        events,
        vec![Ev::Disconnect(DisconnectReason::DuplicateLogon)]
    );
    assert_eq!(types(&drain(&mut s)), vec!["5"]);
}

/// A Logon with ResetSeqNumFlag=Y and MsgSeqNum 1 on a logged-on session resets
/// both numbers there and then, answered by our Logon 1 with 141=Y (QuickFIX
/// SessionReset).
#[test]
fn a_logon_with_reset_seq_num_flag_resets_the_live_session() {
    let (mut s, mut p) = logged_on();
    for _ in 0..8 {
        feed(&mut s, &p.msg("0", T0, &[]), T0);
    }
    feed(&mut s, &p.msg("1", T0, &[(112, "1")]), T0);
    assert_eq!(drain(&mut s)[0].seq, 2);
    p.seq = 1;
    let reset = p.logon(T0, &[(141, "Y")]);
    assert_eq!(
        feed(&mut s, &reset, T0),
        vec![Ev::LoggedOn {
            reset: true,
            hb: 30
        }]
    );
    let out = drain(&mut s);
    assert_eq!(
        (types(&out), out[0].seq, out[0].get(141)),
        (vec!["A"], 1, Some("Y"))
    );
    feed(&mut s, &p.msg("1", T0, &[(112, "1")]), T0);
    let out = drain(&mut s);
    assert_eq!((out[0].msg_type.as_str(), out[0].seq), ("0", 2));
    assert!(s.is_logged_on());
    // Not number 1: refused.
    let (mut s, mut p) = logged_on();
    p.seq = 3;
    let bad = p.logon(T0, &[(141, "Y")]);
    assert_eq!(
        feed(&mut s, &bad, T0),
        vec![Ev::Disconnect(DisconnectReason::BadReset)]
    );
}

/// ResetOnLogon (acceptor): every Logon starts both sequences again, whatever the
/// numbers were; the answer carries no 141=Y unless the peer's Logon did.
#[test]
fn reset_on_logon_starts_every_logon_at_one() {
    let mut c = acceptor_config();
    c.reset_on_logon = true;
    let mut store = MemoryStore::new(T0);
    store.advance_sender_seq(40).unwrap();
    store.set_next_target_seq(30).unwrap();
    let mut s = Session::new(c, store);
    s.connect(T0).unwrap();
    let mut p = Peer::new();
    assert_eq!(
        feed(&mut s, &p.logon(T0, &[(554, "secret")]), T0),
        vec![Ev::LoggedOn {
            reset: true,
            hb: 30
        }]
    );
    let out = drain(&mut s);
    assert_eq!((out[0].seq, out[0].get(141)), (1, None));
    assert_eq!(s.store().next_target_seq(), 2);
}

/// ResetOnLogout: after the Logout exchange both numbers are 1 again.
#[test]
fn reset_on_logout_starts_the_next_session_at_one() {
    let mut c = acceptor_config();
    c.reset_on_logout = true;
    let mut s = Session::new(c, MemoryStore::new(T0));
    s.connect(T0).unwrap();
    let mut p = Peer::new();
    feed(&mut s, &p.logon(T0, &[(554, "secret")]), T0);
    feed(&mut s, &p.msg("0", T0, &[]), T0);
    assert_eq!(
        feed(&mut s, &p.msg("5", T0, &[]), T0),
        vec![Ev::Disconnect(DisconnectReason::PeerLogout)]
    );
    assert_eq!(types(&drain(&mut s)), vec!["A", "5"]);
    assert_eq!(
        (s.store().next_sender_seq(), s.store().next_target_seq()),
        (1, 1)
    );
}

/// ResetOnDisconnect: however the connection ends, both numbers are 1 again.
#[test]
fn reset_on_disconnect_starts_the_next_session_at_one() {
    let mut c = acceptor_config();
    c.reset_on_disconnect = true;
    let mut s = Session::new(c, MemoryStore::new(T0));
    s.connect(T0).unwrap();
    let mut p = Peer::new();
    feed(&mut s, &p.logon(T0, &[(554, "secret")]), T0);
    send_order_ack(&mut s, T0, "a");
    drain(&mut s);
    s.disconnected();
    assert_eq!(
        (s.store().next_sender_seq(), s.store().next_target_seq()),
        (1, 1)
    );
    // Without the setting, the numbers carry over.
    let (mut s, _) = logged_on();
    s.disconnected();
    assert_eq!(s.store().next_target_seq(), 2);
}

/// 1b: the shell names the session from the Logon before attaching one.
#[test]
fn identify_logon_names_the_session_before_one_is_attached() {
    let mut p = Peer::new();
    let logon = p.logon(T0, &[]);
    let id = crate::session::identify_logon(&logon, FrameLimits::default())
        .unwrap()
        .unwrap();
    assert_eq!(
        (id.sender_comp_id, id.target_comp_id),
        (&b"CLIENT"[..], &b"PGN"[..])
    );
    assert_eq!(
        crate::session::identify_logon(&logon[..10], FrameLimits::default()),
        Ok(None)
    );
    assert!(crate::session::identify_logon(&p.msg("D", T0, &[]), FrameLimits::default()).is_err());
    assert!(crate::session::identify_logon(b"GET / HTTP/1.1\r\n", FrameLimits::default()).is_err());
}

#[test]
fn initiator_sends_credentials_and_logs_on_when_answered() {
    let mut c = SessionConfig::new(Role::Initiator, "CLIENT", "PGN");
    c.username = Some("alice".into());
    c.password = Some("secret".into());
    let mut s = Session::new(c, MemoryStore::new(T0));
    s.connect(T0).unwrap();
    let out = drain(&mut s);
    assert_eq!(types(&out), vec!["A"]);
    assert_eq!(
        (out[0].get(553), out[0].get(554), out[0].get(108)),
        (Some("alice"), Some("secret"), Some("30"))
    );
    let mut venue = Peer {
        sender: "PGN",
        target: "CLIENT",
        ..Peer::new()
    };
    assert_eq!(
        feed(&mut s, &venue.logon(T0, &[]), T0),
        vec![Ev::LoggedOn {
            reset: false,
            hb: 30
        }]
    );

    // A Logout in answer to our Logon is a refusal.
    let mut s2 = Session::new(
        SessionConfig::new(Role::Initiator, "CLIENT", "PGN"),
        MemoryStore::new(T0),
    );
    s2.connect(T0).unwrap();
    let mut venue = Peer {
        sender: "PGN",
        target: "CLIENT",
        ..Peer::new()
    };
    assert_eq!(
        feed(&mut s2, &venue.msg("5", T0, &[(58, "no")]), T0),
        vec![Ev::Disconnect(DisconnectReason::LogonRejectedByPeer)]
    );
}

#[test]
fn initiator_reset_on_logon_sends_the_flag_from_one() {
    let mut c = SessionConfig::new(Role::Initiator, "CLIENT", "PGN");
    c.reset_on_logon = true;
    let mut store = MemoryStore::new(T0);
    store.advance_sender_seq(50).unwrap();
    let mut s = Session::new(c, store);
    s.connect(T0).unwrap();
    let out = drain(&mut s);
    assert_eq!((out[0].seq, out[0].get(141)), (1, Some("Y")));
}

/// 13b: a Logout is answered with a Logout (without Text), then the connection
/// closes.
#[test]
fn peer_logout_is_answered_then_disconnects() {
    let (mut s, mut p) = logged_on();
    assert_eq!(
        feed(&mut s, &p.msg("5", T0, &[]), T0),
        vec![Ev::Disconnect(DisconnectReason::PeerLogout)]
    );
    let out = drain(&mut s);
    assert_eq!((types(&out), out[0].get(58)), (vec!["5"], None));
    assert_eq!(s.state(), State::Closing);
}

#[test]
fn our_logout_waits_for_the_answer_or_times_out() {
    let (mut s, mut p) = logged_on();
    s.logout("end of day", T0).unwrap();
    let out = drain(&mut s);
    assert_eq!(
        (types(&out), out[0].get(58)),
        (vec!["5"], Some("end of day"))
    );
    assert_eq!(
        feed(&mut s, &p.msg("5", T0, &[]), T0),
        vec![Ev::Disconnect(DisconnectReason::LogoutComplete)]
    );
    assert!(drain(&mut s).is_empty());

    let (mut s, _) = logged_on();
    s.logout("bye", T0).unwrap();
    assert_eq!(
        s.poll(T0 + 10 * SEC).unwrap(),
        Some(Event::Disconnect(DisconnectReason::LogoutTimeout))
    );
}

#[test]
fn a_peer_that_does_not_read_is_flagged_as_a_slow_consumer() {
    let (mut s, _) = logged_on();
    let mut n = 0;
    while !s.is_slow_consumer() {
        send_order_ack(&mut s, T0, "order-with-a-longer-id");
        n += 1;
    }
    assert!(n > 1000);
    assert_eq!(s.store().next_sender_seq(), 2 + n);
}
