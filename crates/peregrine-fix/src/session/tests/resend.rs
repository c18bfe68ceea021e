//! Answering ResendRequest from the store (FIX 4.4 test case 8), and the store
//! across a restart.

use super::*;
use crate::store::{Durability, FileStore};

#[test]
fn resend_replays_application_messages_and_gap_fills_the_rest() {
    let (mut s, mut p) = logged_on();
    // Ours: 1 Logon (admin), 2 app, 3 Heartbeat (admin), 4 app, 5 app.
    let t1 = T0 + SEC;
    send_order_ack(&mut s, t1, "a");
    s.poll(t1 + 30 * SEC).unwrap();
    send_order_ack(&mut s, t1 + 31 * SEC, "b");
    send_order_ack(&mut s, t1 + 31 * SEC, "c");
    drain(&mut s);
    let now = t1 + 32 * SEC;
    let req = p.msg("2", now, &[(7, "1"), (16, "0")]);
    assert_eq!(feed(&mut s, &req, now), vec![Ev::Resend(1, 0)]);
    let out = drain(&mut s);
    let summary: Vec<_> = out
        .iter()
        .map(|o| (o.msg_type.as_str(), o.seq, o.get(43), o.get(36), o.get(11)))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("4", 1, Some("Y"), Some("2"), None),
            ("8", 2, Some("Y"), None, Some("a")),
            ("4", 3, Some("Y"), Some("4"), None),
            ("8", 4, Some("Y"), None, Some("b")),
            ("8", 5, Some("Y"), None, Some("c")),
        ]
    );
    // OrigSendingTime is the first SendingTime; SendingTime is now.
    assert_eq!(out[1].get(122), Some("20231114-22:13:21.000"));
    assert_eq!(out[1].get(52), Some("20231114-22:13:53.000"));
    // A bounded range.
    let req = p.msg("2", now, &[(7, "3"), (16, "4")]);
    feed(&mut s, &req, now);
    let out = drain(&mut s);
    assert_eq!(
        out.iter()
            .map(|o| (o.msg_type.as_str(), o.seq))
            .collect::<Vec<_>>(),
        vec![("4", 3), ("8", 4)]
    );
    // Resends take no new sequence numbers.
    assert_eq!(s.store().next_sender_seq(), 6);
}

#[test]
fn a_malformed_resend_request_is_rejected() {
    let (mut s, mut p) = logged_on();
    assert_eq!(
        feed(&mut s, &p.msg("2", T0, &[(7, "1")]), T0),
        vec![Ev::Rejected {
            seq: 2,
            reason: SessionRejectReason::RequiredTagMissing,
            tag: Some(16)
        }]
    );
    assert_eq!(
        feed(&mut s, &p.msg("2", T0, &[(7, "5"), (16, "2")]), T0),
        vec![Ev::Rejected {
            seq: 3,
            reason: SessionRejectReason::ValueIncorrect,
            tag: Some(7)
        }]
    );
}

#[test]
fn messages_sent_while_disconnected_wait_in_the_store_for_the_resend() {
    let (mut s, mut p) = logged_on();
    s.disconnected();
    let seq = send_order_ack(&mut s, T0, "while-away");
    assert_eq!(seq, 2);
    s.connect(T0).unwrap();
    assert!(drain(&mut s).is_empty());
    feed(&mut s, &p.logon(T0, &[(554, "secret")]), T0);
    let out = drain(&mut s);
    assert_eq!((types(&out), out[0].seq), (vec!["A"], 3));
    // The peer expected 2, sees 3, asks.
    feed(&mut s, &p.msg("2", T0, &[(7, "2"), (16, "0")]), T0);
    let out = drain(&mut s);
    assert_eq!(
        (out[0].msg_type.as_str(), out[0].seq, out[0].get(11)),
        ("8", 2, Some("while-away"))
    );
    assert_eq!(
        (out[1].msg_type.as_str(), out[1].seq, out[1].get(36)),
        ("4", 3, Some("4"))
    );
}

#[test]
fn a_file_store_keeps_numbers_and_messages_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("CLIENT.fixstore");
    let mut p = Peer::new();
    {
        let store = FileStore::open(&path, Durability::OsBuffer, T0).unwrap();
        let mut s = Session::new(acceptor_config(), store);
        s.connect(T0).unwrap();
        feed(&mut s, &p.logon(T0, &[(554, "secret")]), T0);
        send_order_ack(&mut s, T0, "before-restart");
        drain(&mut s); // `outbound` flushes the store before bytes may leave
        feed(&mut s, &p.msg("D", T0, &order("x")), T0);
        drain(&mut s);
    }
    let store = FileStore::open(&path, Durability::OsBuffer, T0 + SEC).unwrap();
    assert_eq!((store.next_sender_seq(), store.next_target_seq()), (3, 3));
    let mut s = Session::new(acceptor_config(), store);
    s.connect(T0).unwrap();
    assert_eq!(
        feed(&mut s, &p.logon(T0, &[(554, "secret")]), T0),
        vec![Ev::LoggedOn {
            reset: false,
            hb: 30
        }]
    );
    feed(&mut s, &p.msg("2", T0, &[(7, "2"), (16, "0")]), T0);
    let out = drain(&mut s);
    assert_eq!(out[1].get(11), Some("before-restart"));
}
