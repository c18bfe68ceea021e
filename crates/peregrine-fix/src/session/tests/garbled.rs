//! Garbled messages (FIX 4.4 test cases 2d, 2i, 2m, 2t, 3b, 3c): ignored, without a
//! Reject and without taking a sequence number, and never at the cost of the good
//! message after them; the next good message shows the gap.

use super::*;

/// `msg` with its CheckSum replaced by `checksum` (a wrong one).
fn with_checksum(msg: &[u8], checksum: &str) -> Vec<u8> {
    let mut m = msg[..msg.len() - 7].to_vec();
    m.extend_from_slice(format!("10={checksum}\x01").as_bytes());
    m
}

/// Feeds `bytes` and checks the session sent nothing and expects `next`.
fn ignored(s: &mut Session<MemoryStore>, bytes: &[u8], next: u64) {
    let events = feed(s, bytes, T0);
    assert!(events.iter().all(|e| *e == Ev::Garbled), "{events:?}");
    assert!(drain(s).is_empty(), "no answer to a garbled message");
    assert_eq!(s.store().next_target_seq(), next, "no number taken");
}

/// 3b: a wrong CheckSum (QuickFIX 3b_InvalidChecksum).
#[test]
fn a_wrong_checksum_is_ignored_and_the_next_message_asks_for_it() {
    let (mut s, mut p) = logged_on();
    let hb = p.raw("0", 2, T0, &[], &[]);
    ignored(&mut s, &with_checksum(&hb, "256"), 2);
    assert_eq!(feed(&mut s, &hb, T0), vec![]);
    let d = p.raw("D", 3, T0, &[], &order("a"));
    ignored(&mut s, &with_checksum(&d, "000"), 3);
    feed(&mut s, &p.raw("0", 4, T0, &[], &[]), T0);
    let out = drain(&mut s);
    assert_eq!(
        (types(&out), out[0].get(7), out[0].get(16)),
        (vec!["2"], Some("3"), Some("0"))
    );
    // The resent message fills the gap; the queued 4 follows.
    assert_eq!(feed(&mut s, &d, T0), vec![app_d(3, false)]);
    assert_eq!(s.store().next_target_seq(), 5);
}

/// 2d / 3c: a garbled message whose trailer is cut short (`10=0`) ends there: the
/// good message right after it is delivered (the defect: it was
/// swallowed). QuickFIX 2d_GarbledMessage, 3c_GarbledMessage.
#[test]
fn a_short_trailer_does_not_swallow_the_next_message() {
    let (mut s, mut p) = logged_on();
    let good = p.raw("0", 2, T0, &[], &[]);
    let mut bytes = with_checksum(&p.raw("0", 2, T0, &[], &[(112, "garbled")]), "0");
    bytes.extend_from_slice(&good);
    assert_eq!(feed(&mut s, &bytes, T0), vec![Ev::Garbled]);
    assert_eq!(
        s.store().next_target_seq(),
        3,
        "the good message was processed"
    );
    assert!(drain(&mut s).is_empty());
}

/// 2m: a wrong BodyLength, too short or too long; too long, the declared length
/// takes the next message with it (QuickFIX 2m_BodyLengthValueNotCorrect).
#[test]
fn a_wrong_body_length_is_ignored() {
    let (mut s, mut p) = logged_on();
    let d2 = p.raw("D", 2, T0, &[], &order("a"));
    ignored(&mut s, &with_body_length(&d2, 30), 2);
    let d3 = p.raw("D", 3, T0, &[], &order("b"));
    assert_eq!(feed(&mut s, &d3, T0), vec![]);
    assert_eq!(types(&drain(&mut s)), vec!["2"]);
    let resent = p.raw("D", 2, T0, &[(122, "20231114-22:13:20")], &order("a"));
    assert_eq!(
        feed(&mut s, &resent, T0),
        vec![app_d(2, false), app_d(3, false)]
    );
    // Too long: 4 claims to run into 5; both are lost, then both come again.
    let d4 = p.raw("D", 4, T0, &[], &order("c"));
    let d5 = p.raw("D", 5, T0, &[], &order("d"));
    let mut bytes = with_body_length(&d4, d4.len() + 10);
    bytes.extend_from_slice(&d5);
    ignored(&mut s, &bytes, 4);
    let mut bytes = d4.clone();
    bytes.extend_from_slice(&d5);
    assert_eq!(
        feed(&mut s, &bytes, T0),
        vec![app_d(4, false), app_d(5, false)]
    );
    assert!(
        drain(&mut s).is_empty(),
        "no ResendRequest: nothing was missing"
    );
}

/// 2t: BeginString, BodyLength and MsgType not the first three fields (QuickFIX
/// 2t_FirstThreeFieldsOutOfOrder).
#[test]
fn the_first_three_fields_out_of_order_are_garbled() {
    let (mut s, mut p) = logged_on();
    let msg_type_first = b"35=0\x018=FIX.4.4\x019=29\x0134=2\x0149=CLIENT\x0152=20231114-22:13:20\x0156=PGN\x0110=121\x01";
    ignored(&mut s, msg_type_first, 2);
    let seq_second =
        with_body("34=2\x0135=0\x0149=CLIENT\x0156=PGN\x0152=20231114-22:13:20.000\x01");
    ignored(&mut s, &seq_second, 2);
    assert_eq!(
        feed(&mut s, &p.raw("1", 2, T0, &[], &[(112, "HELLO")]), T0),
        vec![]
    );
    assert_eq!(drain(&mut s)[0].get(112), Some("HELLO"));
}

/// Bytes that are not a message, and a BodyLength above the limit, are skipped
/// without buffering: the session keeps going.
#[test]
fn junk_and_huge_body_lengths_are_skipped() {
    let (mut s, mut p) = logged_on();
    ignored(&mut s, b"GET / HTTP/1.1\r\n\r\n", 2);
    ignored(&mut s, b"8=FIX.4.4\x019=999999999\x01", 2);
    assert_eq!(feed(&mut s, &p.msg("0", T0, &[]), T0), vec![]);
    assert_eq!(s.store().next_target_seq(), 3);
}

/// 2i: a well-formed message of another FIX version on a logged-on session: Logout
/// "Incorrect BeginString", close (QuickFIX 2i_BeginStringValueUnexpected).
#[test]
fn another_begin_string_is_logged_out() {
    let (mut s, mut p) = logged_on();
    let fix41 = reframe(&p.msg("1", T0, &[(112, "id")]), "FIX.4.1");
    assert_eq!(
        feed(&mut s, &fix41, T0),
        vec![Ev::Disconnect(DisconnectReason::IncorrectBeginString)]
    );
    let out = drain(&mut s);
    assert_eq!(
        (types(&out), out[0].seq, out[0].get(58)),
        (vec!["5"], 2, Some("Incorrect BeginString"))
    );
}

/// Every good message after any garbled one is delivered, whatever the mix (the
/// stream-level property, with random mixes, is `tests/fuzz.rs`).
#[test]
fn a_good_message_after_each_kind_of_garble_is_delivered() {
    let (mut s, mut p) = logged_on();
    let garbles: Vec<Vec<u8>> = vec![
        b"junk".to_vec(),
        with_checksum(&p.raw("0", 99, T0, &[], &[]), "1"),
        with_checksum(&p.raw("0", 99, T0, &[], &[]), "001"),
        with_body_length(&p.raw("0", 99, T0, &[], &[]), 5),
        b"8=FIX.4.4\x0135=0\x01".to_vec(),
        with_body("34=9\x0135=0\x01"),
        // No trailer at all: it ends where the next message starts.
        b"8=FIX.4.4\x019=10\x0135=0\x0134=9\x01".to_vec(),
    ];
    let mut bytes = Vec::new();
    for g in &garbles {
        bytes.extend_from_slice(g);
        bytes.extend_from_slice(&p.msg("D", T0, &order("x")));
    }
    let apps = feed(&mut s, &bytes, T0)
        .into_iter()
        .filter(|e| matches!(e, Ev::App { .. }))
        .count();
    assert_eq!(apps, garbles.len());
    assert!(drain(&mut s).is_empty());
}
