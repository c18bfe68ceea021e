//! Framing: find one whole message at the start of a byte stream, with bounded memory.
//!
//! [`frame`] looks only at the bytes it is given and never buffers: the caller keeps
//! its receive buffer and calls again when more bytes arrive. A BodyLength above
//! [`FrameLimits::max_body`] is refused from its digits alone, so a hostile length
//! never makes anyone wait for (or allocate) gigabytes.

use super::error::{FrameError, Garble};
use super::SOH;

/// The only BeginString this codec speaks.
pub const BEGIN_STRING: &[u8] = b"FIX.4.4";

/// `8=FIX.4.4␁9=`: every message starts with these 12 bytes.
pub(crate) const PREFIX: &[u8] = b"8=FIX.4.4\x019=";

/// `10=nnn␁`: every message ends with these 7 bytes.
pub(crate) const TRAILER_LEN: usize = 7;

/// Most digits BodyLength may have.
const MAX_LENGTH_DIGITS: usize = 9;

/// Bounds on what one message may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameLimits {
    /// The largest BodyLength accepted. A message is at most this plus
    /// [`FrameLimits::OVERHEAD`] bytes, which is how large a receive buffer must be.
    pub max_body: usize,
}

impl FrameLimits {
    /// Bytes around the body: `8=FIX.4.4␁9=` + 9 digits + SOH + `10=nnn␁`.
    pub const OVERHEAD: usize = PREFIX.len() + MAX_LENGTH_DIGITS + 1 + TRAILER_LEN;

    /// The largest whole message these limits allow.
    pub const fn max_message(self) -> usize {
        self.max_body + Self::OVERHEAD
    }
}

impl Default for FrameLimits {
    /// 8 KiB of body: an order-entry message is a few hundred bytes.
    fn default() -> Self {
        FrameLimits { max_body: 8192 }
    }
}

/// One delimited message at the start of the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame {
    /// A message of `len` bytes whose BodyLength and CheckSum are right.
    Message {
        /// Bytes of the whole message, `8=` through the final SOH.
        len: usize,
    },
    /// `len` bytes that look like one message whose BodyLength or CheckSum is wrong:
    /// skip them.
    Garbled {
        /// Bytes to skip.
        len: usize,
        /// What was wrong.
        garble: Garble,
    },
}

/// Looks for one message at the start of `buf`.
///
/// `Ok(None)`: the bytes so far are a valid beginning; read more. `Ok(Some(..))`: a
/// message (or a garbled one) is delimited. `Err`: the stream cannot be framed.
pub fn frame(buf: &[u8], limits: FrameLimits) -> Result<Option<Frame>, FrameError> {
    let seen = buf.len().min(PREFIX.len());
    if buf[..seen] != PREFIX[..seen] {
        return Err(FrameError::BadBeginString);
    }
    if buf.len() < PREFIX.len() {
        return Ok(None);
    }
    let Some((declared, body_start)) = body_length(buf, limits)? else {
        return Ok(None);
    };
    let trailer_at = body_start + declared;
    let total = trailer_at + TRAILER_LEN;
    if buf.len() < total {
        // Either the rest has not arrived, or BodyLength is too large; a later call
        // with more bytes tells which (bounded by `max_body`).
        return Ok(None);
    }
    if declared == 0 || buf[trailer_at - 1] != SOH || !is_trailer(&buf[trailer_at..total]) {
        return resync(buf, body_start, declared, limits);
    }
    let declared_sum = trailer_value(&buf[trailer_at..total]);
    let computed = checksum(&buf[..trailer_at]);
    if declared_sum != u16::from(computed) {
        return Ok(Some(Frame::Garbled {
            len: total,
            garble: Garble::CheckSum {
                declared: declared_sum,
                computed,
            },
        }));
    }
    Ok(Some(Frame::Message { len: total }))
}

/// Parses BodyLength after the prefix: `Ok(Some((length, body_start)))`.
fn body_length(buf: &[u8], limits: FrameLimits) -> Result<Option<(usize, usize)>, FrameError> {
    let mut value: u64 = 0;
    for (i, &b) in buf[PREFIX.len()..].iter().enumerate() {
        if b == SOH {
            if i == 0 {
                return Err(FrameError::BadBodyLength);
            }
            return Ok(Some((value as usize, PREFIX.len() + i + 1)));
        }
        if !b.is_ascii_digit() || i >= MAX_LENGTH_DIGITS {
            return Err(FrameError::BadBodyLength);
        }
        value = value * 10 + u64::from(b - b'0');
        if value > limits.max_body as u64 {
            return Err(FrameError::BodyLengthTooLarge {
                declared: value,
                max: limits.max_body,
            });
        }
    }
    Ok(None)
}

/// The trailer was not where BodyLength said: find the real one (the first
/// `␁10=nnn␁` after the body start) within the maximum message size.
fn resync(
    buf: &[u8],
    body_start: usize,
    declared: usize,
    limits: FrameLimits,
) -> Result<Option<Frame>, FrameError> {
    let window_end = buf.len().min(body_start + limits.max_body + TRAILER_LEN);
    // The SOH that ends the body is at `k`; the trailer starts at `k + 1`.
    let mut k = body_start;
    while k + TRAILER_LEN < window_end {
        if buf[k] == SOH && is_trailer(&buf[k + 1..k + 1 + TRAILER_LEN]) {
            let actual = k + 1 - body_start;
            return Ok(Some(Frame::Garbled {
                len: k + 1 + TRAILER_LEN,
                garble: Garble::BodyLength { declared, actual },
            }));
        }
        k += 1;
    }
    if buf.len() >= body_start + limits.max_body + TRAILER_LEN {
        return Err(FrameError::NoTrailer {
            max: limits.max_message(),
        });
    }
    Ok(None)
}

/// `10=nnn␁`.
fn is_trailer(t: &[u8]) -> bool {
    t.len() == TRAILER_LEN
        && &t[..3] == b"10="
        && t[3..6].iter().all(u8::is_ascii_digit)
        && t[6] == SOH
}

fn trailer_value(t: &[u8]) -> u16 {
    t[3..6]
        .iter()
        .fold(0u16, |acc, &d| acc * 10 + u16::from(d - b'0'))
}

/// The FIX CheckSum: the sum of the bytes modulo 256.
pub(crate) fn checksum(bytes: &[u8]) -> u8 {
    // Summing in u32 lanes lets the compiler vectorise; 16 MiB of 0xFF still fits.
    let sum: u32 = bytes.iter().map(|&b| u32::from(b)).sum();
    (sum & 0xFF) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(body: &str) -> Vec<u8> {
        let mut m = format!("8=FIX.4.4\x019={}\x01{}", body.len(), body).into_bytes();
        let sum = checksum(&m);
        m.extend_from_slice(format!("10={sum:03}\x01").as_bytes());
        m
    }

    const LIMITS: FrameLimits = FrameLimits { max_body: 256 };

    #[test]
    fn frames_a_whole_message_and_waits_for_a_partial_one() {
        let m = msg("35=0\x0149=A\x0156=B\x0134=1\x0152=20240101-00:00:00\x01");
        assert_eq!(frame(&m, LIMITS), Ok(Some(Frame::Message { len: m.len() })));
        for cut in 0..m.len() {
            assert_eq!(frame(&m[..cut], LIMITS), Ok(None), "cut at {cut}");
        }
        let mut two = m.clone();
        two.extend_from_slice(&m);
        assert_eq!(
            frame(&two, LIMITS),
            Ok(Some(Frame::Message { len: m.len() }))
        );
    }

    #[test]
    fn bad_begin_string_is_fatal_from_the_first_wrong_byte() {
        assert_eq!(frame(b"8=FIX.4.2", LIMITS), Err(FrameError::BadBeginString));
        assert_eq!(frame(b"X", LIMITS), Err(FrameError::BadBeginString));
        assert_eq!(
            frame(b"8=FIX.4.4\x0135=", LIMITS),
            Err(FrameError::BadBeginString)
        );
    }

    #[test]
    fn huge_body_length_is_refused_from_its_digits() {
        assert_eq!(
            frame(b"8=FIX.4.4\x019=257", LIMITS),
            Err(FrameError::BodyLengthTooLarge {
                declared: 257,
                max: 256
            })
        );
        assert!(matches!(
            frame(b"8=FIX.4.4\x019=99999999999999999999\x01", LIMITS),
            Err(FrameError::BodyLengthTooLarge { .. })
        ));
        assert_eq!(
            frame(b"8=FIX.4.4\x019=\x01", LIMITS),
            Err(FrameError::BadBodyLength)
        );
        assert_eq!(
            frame(b"8=FIX.4.4\x019=1a", LIMITS),
            Err(FrameError::BadBodyLength)
        );
    }

    #[test]
    fn wrong_checksum_is_garbled_with_both_values() {
        let mut m = msg("35=0\x0134=1\x01");
        let n = m.len();
        m[n - 2] = if m[n - 2] == b'9' { b'8' } else { b'9' };
        assert!(matches!(
            frame(&m, LIMITS),
            Ok(Some(Frame::Garbled { len, garble: Garble::CheckSum { .. } })) if len == n
        ));
    }

    #[test]
    fn wrong_body_length_resyncs_on_the_real_trailer() {
        let good = msg("35=0\x0134=1\x01");
        let text = String::from_utf8(good.clone()).unwrap();
        // Too short a BodyLength.
        let short = text.replacen("9=10", "9=5", 1).into_bytes();
        assert_eq!(
            frame(&short, LIMITS),
            Ok(Some(Frame::Garbled {
                len: short.len(),
                garble: Garble::BodyLength {
                    declared: 5,
                    actual: 10
                }
            }))
        );
        // Too long: waits until enough bytes arrive, then finds the first trailer.
        let long = text.replacen("9=10", "9=40", 1).into_bytes();
        assert_eq!(frame(&long, LIMITS), Ok(None));
        let mut more = long.clone();
        more.extend_from_slice(&good);
        more.extend_from_slice(&good);
        assert_eq!(
            frame(&more, LIMITS),
            Ok(Some(Frame::Garbled {
                len: long.len(),
                garble: Garble::BodyLength {
                    declared: 40,
                    actual: 10
                }
            }))
        );
    }

    #[test]
    fn no_trailer_within_the_limit_is_fatal() {
        let mut junk = b"8=FIX.4.4\x019=5\x01".to_vec();
        junk.extend(std::iter::repeat_n(b'x', 300));
        assert_eq!(
            frame(&junk, LIMITS),
            Err(FrameError::NoTrailer {
                max: LIMITS.max_message()
            })
        );
    }

    #[test]
    fn checksum_above_255_never_matches() {
        let mut m = msg("35=0\x01");
        let n = m.len();
        m[n - 4..n - 1].copy_from_slice(b"999");
        assert!(matches!(
            frame(&m, LIMITS),
            Ok(Some(Frame::Garbled {
                garble: Garble::CheckSum { .. },
                ..
            }))
        ));
    }
}
