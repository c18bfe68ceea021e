//! Logon, Logout, heartbeats and timeouts.

use super::*;
use crate::session::State;

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
}

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
    assert_eq!(types(&drain(&mut s)), vec!["5"]);
}

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
}

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
fn heartbeat_after_an_interval_of_silence() {
    let (mut s, _) = logged_on();
    assert_eq!(s.poll(T0 + 29 * SEC).unwrap(), None);
    assert!(drain(&mut s).is_empty());
    s.poll(T0 + 30 * SEC).unwrap();
    let out = drain(&mut s);
    assert_eq!(types(&out), vec!["0"]);
    assert_eq!(out[0].get(112), None);
}

#[test]
fn test_request_after_silence_then_disconnect_if_still_silent() {
    let (mut s, _) = logged_on();
    s.poll(T0 + 36 * SEC).unwrap();
    let out = drain(&mut s);
    assert!(types(&out).contains(&"1"), "{:?}", types(&out));
    assert_eq!(s.poll(T0 + 71 * SEC).unwrap(), None);
    assert_eq!(
        s.poll(T0 + 72 * SEC).unwrap(),
        Some(Event::Disconnect(DisconnectReason::HeartbeatTimeout))
    );
    assert!(types(&drain(&mut s)).contains(&"5"));
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
}

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

#[test]
fn peer_logout_is_answered_then_disconnects() {
    let (mut s, mut p) = logged_on();
    assert_eq!(
        feed(&mut s, &p.msg("5", T0, &[]), T0),
        vec![Ev::Disconnect(DisconnectReason::PeerLogout)]
    );
    assert_eq!(types(&drain(&mut s)), vec!["5"]);
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
