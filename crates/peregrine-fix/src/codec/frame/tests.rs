use super::*;

fn msg(body: &str) -> Vec<u8> {
    let mut m = format!("8=FIX.4.4\x019={}\x01{}", body.len(), body).into_bytes();
    let sum = checksum(&m);
    m.extend_from_slice(format!("10={sum:03}\x01").as_bytes());
    m
}

const LIMITS: FrameLimits = FrameLimits { max_body: 256 };
const BODY: &str = "35=0\x0149=A\x0156=B\x0134=1\x0152=20240101-00:00:00\x01";

fn garbled(len: usize, garble: Garble) -> Option<Frame> {
    Some(Frame::Garbled { len, garble })
}

#[test]
fn frames_a_whole_message_and_waits_for_a_partial_one() {
    let m = msg(BODY);
    assert_eq!(frame(&m, LIMITS), Some(Frame::Message { len: m.len() }));
    for cut in 0..m.len() {
        assert_eq!(frame(&m[..cut], LIMITS), None, "cut at {cut}");
    }
    let mut two = m.clone();
    two.extend_from_slice(&m);
    assert_eq!(frame(&two, LIMITS), Some(Frame::Message { len: m.len() }));
}

#[test]
fn junk_is_skipped_up_to_the_next_message_start() {
    let good = msg(BODY);
    let mut s = b"GET / HTTP/1.1\r\n".to_vec();
    let junk = s.len();
    s.extend_from_slice(&good);
    assert_eq!(frame(&s, LIMITS), garbled(junk, Garble::Junk));
    assert_eq!(
        frame(&s[junk..], LIMITS),
        Some(Frame::Message { len: good.len() })
    );
    // Without a start, all of it but a tail that may begin one.
    assert_eq!(frame(b"hello 8=F", LIMITS), garbled(6, Garble::Junk));
    assert_eq!(frame(b"8=F", LIMITS), None);
    assert_eq!(frame(b"X", LIMITS), garbled(1, Garble::Junk));
}

#[test]
fn another_begin_string_is_framed_for_the_session_to_judge() {
    let body = "35=1\x0134=2\x0149=A\x0152=20240101-00:00:00\x0156=B\x01112=x\x01";
    let mut m = format!("8=FIX.4.1\x019={}\x01{body}", body.len()).into_bytes();
    let sum = checksum(&m);
    m.extend_from_slice(format!("10={sum:03}\x01").as_bytes());
    assert_eq!(frame(&m, LIMITS), Some(Frame::Message { len: m.len() }));
}

#[test]
fn a_bad_header_is_skipped_to_the_next_start() {
    let good = msg(BODY);
    for bad in [
        &b"8=FIX.4.4\x0135=0\x01"[..],
        b"8=FIX.4.4\x019=\x01",
        b"8=FIX.4.4\x019=1a\x01",
    ] {
        let mut s = bad.to_vec();
        s.extend_from_slice(&good);
        assert_eq!(
            frame(&s, LIMITS),
            garbled(bad.len(), Garble::Header),
            "{bad:?}"
        );
    }
}

#[test]
fn huge_body_length_is_refused_from_its_digits() {
    let huge = b"8=FIX.4.4\x019=257\x01";
    assert_eq!(
        frame(huge, LIMITS),
        garbled(huge.len(), Garble::BodyLengthTooLarge { declared: 257 })
    );
    // Nine digits at most: more is a malformed header, whatever follows.
    let long = b"8=FIX.4.4\x019=99999999999999999999\x01";
    assert_eq!(frame(long, LIMITS), garbled(long.len(), Garble::Header));
}

#[test]
fn wrong_checksum_is_garbled_with_both_values() {
    let mut m = msg("35=0\x0134=1\x01");
    let n = m.len();
    m[n - 2] = if m[n - 2] == b'9' { b'8' } else { b'9' };
    assert!(matches!(
        frame(&m, LIMITS),
        Some(Frame::Garbled { len, garble: Garble::CheckSum { declared: Some(_), .. } }) if len == n
    ));
}

/// The defect: `10=0` (too short a CheckSum) swallowed the next message.
#[test]
fn a_short_checksum_ends_its_own_message() {
    let good = msg(BODY);
    let mut bad = good[..good.len() - 7].to_vec();
    bad.extend_from_slice(b"10=0\x01");
    let mut s = bad.clone();
    s.extend_from_slice(&good);
    assert!(matches!(
        frame(&s, LIMITS),
        Some(Frame::Garbled { len, garble: Garble::CheckSum { declared: None, .. } }) if len == bad.len()
    ));
    assert_eq!(
        frame(&s[bad.len()..], LIMITS),
        Some(Frame::Message { len: good.len() })
    );
}

#[test]
fn a_missing_trailer_ends_where_the_next_message_starts() {
    let good = msg(BODY);
    let bad = "8=FIX.4.4\x019=10\x0135=0\x0134=1\x0111=123\x01".to_string();
    let mut s = bad.clone().into_bytes();
    s.extend_from_slice(&good);
    assert_eq!(frame(&s, LIMITS), garbled(bad.len(), Garble::NoTrailer));
}

#[test]
fn wrong_body_length_resyncs_on_the_next_trailer() {
    let good = msg("35=0\x0134=1\x01");
    let text = String::from_utf8(good.clone()).unwrap();
    // Too short a BodyLength: the message's own trailer ends it.
    let short = text.replacen("9=10", "9=5", 1).into_bytes();
    assert_eq!(
        frame(&short, LIMITS),
        garbled(
            short.len(),
            Garble::BodyLength {
                declared: 5,
                actual: 10
            }
        )
    );
    // Too long: BodyLength covers the start of the next message, which goes with it
    // (the first trailer after the declared end ends the garbled bytes).
    let long = text.replacen("9=10", "9=20", 1).into_bytes();
    assert_eq!(frame(&long, LIMITS), None);
    let mut more = long.clone();
    more.extend_from_slice(&good);
    more.extend_from_slice(&good);
    assert_eq!(
        frame(&more, LIMITS),
        garbled(
            long.len() + good.len(),
            Garble::BodyLength {
                declared: 20,
                actual: 10 + good.len()
            }
        )
    );
}

#[test]
fn no_trailer_within_the_limit_is_skipped() {
    let mut junk = b"8=FIX.4.4\x019=5\x01".to_vec();
    junk.extend(std::iter::repeat_n(b'x', 300));
    assert_eq!(frame(&junk, LIMITS), garbled(junk.len(), Garble::NoTrailer));
    assert_eq!(frame(&junk[..200], LIMITS), None);
}

#[test]
fn checksum_above_255_never_matches() {
    let mut m = msg("35=0\x01");
    let n = m.len();
    m[n - 4..n - 1].copy_from_slice(b"999");
    assert!(matches!(
        frame(&m, LIMITS),
        Some(Frame::Garbled {
            garble: Garble::CheckSum { .. },
            ..
        })
    ));
}
