//! A byte stream of good and garbled FIX messages, built from a list of choices,
//! and the check that framing it (read in chunks of any size, as from a socket)
//! delivers every good message, in order, whatever garbled bytes come before it.
//! Shared by the property test (`tests/fuzz.rs`) and the libFuzzer target
//! (`fuzz/fuzz_targets/fix_framer_stream.rs`, which includes this file by path).
//!
//! The one exception is FIX's: a BodyLength too long claims the bytes after it, up
//! to the first trailer after where it says the body ends; a good message whose
//! start it covers goes with it (the session asks for it again by its number). The
//! builder knows which message that is and expects it lost. A message cut short
//! (no trailer) is followed by a good one: two garbles in a row can read as one
//! message with a trailer and too long a BodyLength, which is that same case.

use peregrine_fix::codec::{frame, Encoder, Frame, FrameLimits, Message, Precision};

const T0: u64 = 1_700_000_000_000_000_000;

/// Limits of the streams (small, so "BodyLength above the maximum" is easy to hit).
pub(crate) const LIMITS: FrameLimits = FrameLimits { max_body: 512 };

/// The kinds of garbled bytes the builder writes.
const KINDS: u8 = 11;

/// A good message: a NewOrderSingle whose ClOrdID is `n`, `pad` bytes of Text.
fn good(enc: &mut Encoder, n: u64, pad: usize) -> Vec<u8> {
    let mut w = enc.start(b"D");
    w.bytes(49, b"CLIENT")
        .bytes(56, b"PGN")
        .uint(34, n)
        .timestamp(52, T0, Precision::Millis)
        .uint(11, n)
        .bytes(55, b"PGN-USD")
        .char(54, b'1')
        .uint(38, 5)
        .char(40, b'2')
        .bytes(44, b"100.25");
    let text = "x".repeat(pad);
    if pad > 0 {
        w.text(58, &text);
    }
    w.seal().to_vec()
}

/// `m` re-framed with BodyLength `n` (the CheckSum recomputed).
fn with_body_length(m: &[u8], n: usize) -> Vec<u8> {
    let body_at = body_start(m);
    let mut out = format!("8=FIX.4.4\x019={n}\x01").into_bytes();
    out.extend_from_slice(&m[body_at..m.len() - 7]);
    let sum: u32 = out.iter().map(|&b| u32::from(b)).sum();
    out.extend_from_slice(format!("10={:03}\x01", sum % 256).as_bytes());
    out
}

/// Where the body of `m` starts (after `9=n␁`).
fn body_start(m: &[u8]) -> usize {
    let at = m.windows(3).position(|w| w == b"\x019=").unwrap() + 3;
    at + m[at..].iter().position(|&b| b == 1).unwrap() + 1
}

/// Reads choices one byte at a time (0 once they run out).
struct Choices<'a>(&'a [u8], usize);

impl Choices<'_> {
    fn next(&mut self) -> u8 {
        let b = self.0.get(self.1).copied().unwrap_or(0);
        self.1 += 1;
        b
    }

    fn done(&self) -> bool {
        self.1 >= self.0.len()
    }
}

/// Garbled bytes of kind `kind` (a variation of `m`, the message they stand in for).
fn garbled(kind: u8, m: &[u8], c: &mut Choices<'_>) -> Vec<u8> {
    let body_len = m.len() - body_start(m) - 7;
    let k = usize::from(c.next() % 8) + 1;
    match kind {
        // Bytes that are not a message.
        0 => b"GET / HTTP/1.1\r\n\r\n"[..k.min(18)].to_vec(),
        // A wrong CheckSum.
        1 => {
            let mut g = m.to_vec();
            let n = g.len();
            g[n - 2] = if g[n - 2] == b'9' { b'0' } else { g[n - 2] + 1 };
            g
        }
        // A CheckSum cut short: `10=0␁`, `10=12␁`, `10=␁`.
        2 => {
            let mut g = m[..m.len() - 7].to_vec();
            g.extend_from_slice(
                &[
                    b"10=0\x01"[..].to_vec(),
                    b"10=12\x01".to_vec(),
                    b"10=\x01".to_vec(),
                ][k % 3],
            );
            g
        }
        // BodyLength too short.
        3 => with_body_length(m, body_len.saturating_sub(k * 3).max(1)),
        // BodyLength not a number, or above the maximum.
        4 => {
            let g = String::from_utf8(m.to_vec()).unwrap();
            g.replacen(
                "\x019=",
                if k % 2 == 0 {
                    "\x019=1a"
                } else {
                    "\x019=99999"
                },
                1,
            )
            .into_bytes()
        }
        // No trailer at all.
        5 => m[..m.len() - 7].to_vec(),
        // Cut short after a field.
        6 => {
            let cut = m.len() * k / 10;
            let end = m[..cut]
                .iter()
                .rposition(|&b| b == 1)
                .map_or(cut, |i| i + 1);
            m[..end.max(1)].to_vec()
        }
        // Cut short inside a field.
        7 => m[..(m.len() * k / 10).max(1)].to_vec(),
        // MsgType not the third field.
        8 => {
            let g = String::from_utf8(m.to_vec()).unwrap();
            let swapped = g.replacen("\x0135=D\x0149=CLIENT\x01", "\x0149=CLIENT\x0135=D\x01", 1);
            with_body_length(swapped.as_bytes(), body_len)
        }
        // BodyLength not the second field.
        9 => {
            let g = String::from_utf8(m.to_vec()).unwrap();
            let at = g.find("\x019=").unwrap();
            let end = at + 1 + g[at + 1..].find('\x01').unwrap();
            format!("{}{}", &g[..at], &g[end..]).into_bytes()
        }
        // Another FIX version's BeginString (framed: the session refuses it).
        _ => {
            let mut g = String::from_utf8(m[..m.len() - 7].to_vec())
                .unwrap()
                .replacen("FIX.4.4", "FIX.4.2", 1)
                .into_bytes();
            let sum: u32 = g.iter().map(|&b| u32::from(b)).sum();
            g.extend_from_slice(format!("10={:03}\x01", sum % 256).as_bytes());
            g
        }
    }
}

/// A stream from `choices`, and the ClOrdIDs of the good messages framing must
/// deliver, in order. Kind 10 (another BeginString) frames as a message: its seq
/// (0) is expected too.
pub(crate) fn build(choices: &[u8]) -> (Vec<u8>, Vec<u64>) {
    let mut c = Choices(choices, 0);
    let mut enc = Encoder::default();
    let mut stream = Vec::new();
    let mut expected = Vec::new();
    let mut n = 0;
    let mut force_good = false;
    while !c.done() && n < 200 {
        n += 1;
        let pick = if std::mem::take(&mut force_good) {
            0
        } else {
            c.next()
        };
        let pad = usize::from(c.next() % 40);
        let m = good(&mut enc, n, pad);
        match pick % 16 {
            0..=4 => {
                stream.extend_from_slice(&m);
                expected.push(n);
            }
            5 => {
                // BodyLength too long, into the next (good) message, which it takes.
                n += 1;
                let next = good(&mut enc, n, pad);
                let over = (next.len() / 2).max(16);
                let body_len = m.len() - body_start(&m) - 7;
                stream.extend_from_slice(&with_body_length(&m, body_len + over));
                stream.extend_from_slice(&next);
            }
            k => {
                let kind = (k - 6) % KINDS;
                stream.extend_from_slice(&garbled(kind, &m, &mut c));
                force_good = matches!(kind, 5..=7);
                if kind == 10 {
                    expected.push(u64::MAX); // framed; not a FIX.4.4 message
                }
            }
        }
    }
    // A last good message, so nothing is left waiting for more bytes.
    n += 1;
    stream.extend_from_slice(&good(&mut enc, n, 0));
    expected.push(n);
    (stream, expected)
}

/// Frames `stream` as a session's receive buffer sees it, bytes arriving in chunks
/// of the sizes `chunks` gives (cycled); returns the ClOrdIDs delivered (u64::MAX
/// for a message of another FIX version) and the garbled byte count.
pub(crate) fn deliver(stream: &[u8], chunks: &[usize]) -> (Vec<u64>, usize) {
    let mut delivered = Vec::new();
    let mut garbled = 0;
    let mut buf: Vec<u8> = Vec::new();
    let mut at = 0;
    let mut k = 0;
    while at < stream.len() || !buf.is_empty() {
        let step = chunks
            .get(k % chunks.len().max(1))
            .copied()
            .unwrap_or(7)
            .max(1);
        k += 1;
        let take = step.min(stream.len() - at);
        buf.extend_from_slice(&stream[at..at + take]);
        at += take;
        loop {
            match frame(&buf, LIMITS) {
                None => break,
                Some(Frame::Message { len }) => {
                    assert!(len <= LIMITS.max_message());
                    match Message::parse(&buf[..len]) {
                        Ok(m) if m.header.begin_string == b"FIX.4.4" => {
                            delivered.push(m.header.msg_seq_num)
                        }
                        Ok(_) => delivered.push(u64::MAX),
                        // MsgType not third: framed, then garbled for the session.
                        Err(e) if e.is_garbled() => garbled += len,
                        Err(e) => panic!("a framed message does not parse: {e:?}"),
                    }
                    buf.drain(..len);
                }
                Some(Frame::Garbled { len, .. }) => {
                    assert!(len > 0 && len <= buf.len());
                    garbled += len;
                    buf.drain(..len);
                }
            }
        }
        if at == stream.len() && take == 0 {
            break; // whatever is left waits for bytes that never come
        }
        assert!(
            buf.len() <= LIMITS.max_message(),
            "never more than one message buffered"
        );
    }
    (delivered, garbled)
}
