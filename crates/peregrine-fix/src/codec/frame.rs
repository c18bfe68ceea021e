//! Framing: find one message at the start of a byte stream, with bounded memory, and
//! tell a garbled message from a good one without ever losing the good one after it.
//!
//! [`frame`] looks only at the bytes it is given and never buffers: the caller keeps
//! its receive buffer and calls again when more bytes arrive. The rules (FIX session
//! protocol, "garbled messages"): a message starts with `8=FIX…␁9=n␁`; BodyLength
//! `n` says where `␁10=` must be. What cannot be trusted is reported as
//! [`Frame::Garbled`] with the number of bytes to skip, and the session ignores it
//! (no Reject, no sequence number):
//!
//! * bytes before a message start (`8=FIX`) are skipped up to the next start;
//! * a start whose BeginString or BodyLength is malformed, or whose BodyLength is
//!   above [`FrameLimits::max_body`] (refused from its digits alone), is skipped up
//!   to the next start;
//! * otherwise the trailer is looked for from where BodyLength puts it onwards: found
//!   there with the right CheckSum, the message is good; found there with a wrong
//!   one, or found further on (BodyLength too short, or too long: the declared length
//!   then covers the next message too, which is lost with it, as the definitions of
//!   the FIX session test cases and QuickFIX's acceptance suite expect), the message
//!   ends with that trailer and is garbled. The trailer is `10=` and one to three
//!   characters (so a damaged `10=0` still ends its own message); if the start of
//!   another message comes first (`␁8=FIX`, or `8=FIX.4.4␁9=` cut into a field),
//!   the garbled one ends there and the next is framed on its own.

use super::error::Garble;
use super::SOH;

/// The only BeginString this codec speaks.
pub const BEGIN_STRING: &[u8] = b"FIX.4.4";

/// `8=FIX.4.4␁9=`: every message of ours starts with these 12 bytes.
pub(crate) const PREFIX: &[u8] = b"8=FIX.4.4\x019=";

/// `10=nnn␁`: every well-formed message ends with these 7 bytes.
pub(crate) const TRAILER_LEN: usize = 7;

/// What every message start begins with, whatever its FIX version.
const START: &[u8] = b"8=FIX";

/// `␁10=`: the start of the trailer.
const TRAILER_TAG: &[u8] = b"\x0110=";

/// Longest BeginString value accepted (`FIXT.1.1` is 8).
const MAX_BEGIN_STRING: usize = 16;

/// Most digits BodyLength may have.
const MAX_LENGTH_DIGITS: usize = 9;

/// Most characters a CheckSum value may have and still be taken as one.
const MAX_CHECKSUM_CHARS: usize = 3;

/// Bounds on what one message may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameLimits {
    /// The largest BodyLength accepted. A message is at most this plus
    /// [`FrameLimits::OVERHEAD`] bytes, which is how large a receive buffer must be.
    pub max_body: usize,
}

impl FrameLimits {
    /// Bytes around the body: `8=` + the longest BeginString + SOH + `9=` + 9 digits +
    /// SOH + `10=nnn␁`.
    pub const OVERHEAD: usize = 2 + MAX_BEGIN_STRING + 1 + 2 + MAX_LENGTH_DIGITS + 1 + TRAILER_LEN;

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

/// One delimited message, or bytes to skip, at the start of the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame {
    /// A message of `len` bytes whose BodyLength and CheckSum are right. Its
    /// BeginString may be another FIX version's (the session checks it).
    Message {
        /// Bytes of the whole message, `8=` through the final SOH.
        len: usize,
    },
    /// `len` bytes that are not a trustworthy message: skip them.
    Garbled {
        /// Bytes to skip (at least 1).
        len: usize,
        /// What was wrong.
        garble: Garble,
    },
}

/// Looks for one message at the start of `buf`. `None`: the bytes so far may be the
/// beginning of one; read more. Never asks for more than
/// [`FrameLimits::max_message`] bytes before deciding.
pub fn frame(buf: &[u8], limits: FrameLimits) -> Option<Frame> {
    if buf.is_empty() {
        return None;
    }
    if !buf.starts_with(START) {
        if START.starts_with(buf) {
            return None;
        }
        return Some(skip(buf, Garble::Junk));
    }
    // BeginString: `8=FIX…␁`.
    let Some(bs_len) = position_within(&buf[2..], SOH, MAX_BEGIN_STRING + 1) else {
        return if buf.len() < 2 + MAX_BEGIN_STRING + 1 {
            None
        } else {
            Some(skip(buf, Garble::Header))
        };
    };
    if !buf[2..2 + bs_len]
        .iter()
        .all(|&c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'.')
    {
        return Some(skip(buf, Garble::Header));
    }
    // BodyLength: `9=digits␁`, the second field.
    let length_at = 2 + bs_len + 1;
    let (declared, body_start) = match body_length(&buf[length_at..]) {
        Length::NeedMore => return None,
        Length::Bad => return Some(skip(buf, Garble::Header)),
        Length::Value(n, used) => (n, length_at + used),
    };
    if declared > limits.max_body as u64 {
        return Some(skip(buf, Garble::BodyLengthTooLarge { declared }));
    }
    end_of(buf, body_start, declared as usize, limits)
}

/// Where the message whose body starts at `body_start` ends, BodyLength `declared`.
fn end_of(buf: &[u8], body_start: usize, declared: usize, limits: FrameLimits) -> Option<Frame> {
    // The SOH that ends the body, where BodyLength says: `␁10=` must start there.
    let expected_at = (body_start + declared)
        .saturating_sub(1)
        .max(body_start - 1);
    let found = |p: usize, value_len: usize| {
        let end = p + TRAILER_TAG.len() + value_len + 1;
        let value = &buf[p + TRAILER_TAG.len()..end - 1];
        trailer(buf, (p, end), value, expected_at, body_start, declared)
    };
    // Cut short: another message starts inside the declared body, before any
    // trailer (a complete message with too long a BodyLength has its trailer first).
    match next_start_in_body(buf, body_start, expected_at) {
        Start::NeedMore => return None,
        Start::At(at) => return Some(no_trailer(at)),
        Start::None => {}
    }
    // The good case: the trailer is where BodyLength says.
    if buf.get(expected_at) == Some(&SOH) {
        if let Look::Trailer { value_len } = look(&buf[expected_at + 1..]) {
            return Some(found(expected_at, value_len));
        }
    }
    let last_at = body_start + limits.max_body - 1;
    for p in expected_at.. {
        if p > last_at {
            return Some(skip(buf, Garble::NoTrailer));
        }
        let rest = buf.get(p..).filter(|r| !r.is_empty())?;
        if rest[0] == SOH {
            match look(&rest[1..]) {
                Look::NeedMore => return None,
                Look::Nothing => {}
                Look::NextMessage => return Some(no_trailer(p + 1)),
                Look::Trailer { value_len } => return Some(found(p, value_len)),
            }
        } else if rest.len() < PREFIX.len() && PREFIX.starts_with(rest) {
            return None;
        } else if rest.starts_with(PREFIX) {
            // Cut short inside a field, the next message right after it.
            return Some(no_trailer(p));
        }
    }
    None
}

/// `len` bytes without a trailer before the next message.
fn no_trailer(len: usize) -> Frame {
    Frame::Garbled {
        len,
        garble: Garble::NoTrailer,
    }
}

enum Start {
    NeedMore,
    At(usize),
    None,
}

/// The searcher for [`START`], built once (building one per message cost as much
/// as the search).
fn start_finder() -> &'static memchr::memmem::Finder<'static> {
    static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(START));
    &FINDER
}

/// A message start (`␁8=FIX`, or `8=FIX.4.4␁9=` cut into a field) beginning in
/// `[body_start, body_end)` with no trailer (`␁10=`) before it. One SIMD search of
/// the body for `8=FIX`, which a well-formed body never holds after a SOH.
fn next_start_in_body(buf: &[u8], body_start: usize, body_end: usize) -> Start {
    let window = &buf[body_start..buf.len().min(body_end + START.len() - 1)];
    for i in start_finder().find_iter(window).map(|i| body_start + i) {
        if i >= body_end {
            break;
        }
        let rest = &buf[i..];
        let is_start = buf[i - 1] == SOH || rest.starts_with(PREFIX);
        if !is_start {
            if rest.len() < PREFIX.len() && PREFIX.starts_with(rest) {
                return Start::NeedMore;
            }
            continue;
        }
        if memchr::memmem::find(&buf[body_start - 1..i], TRAILER_TAG).is_some() {
            return Start::None; // its own trailer first: too long a BodyLength
        }
        return Start::At(i);
    }
    Start::None
}

/// The verdict once the trailer `␁10=value␁` is found at `p` (ending at `end`);
/// BodyLength (`declared`) put it at `expected_at`.
fn trailer(
    buf: &[u8],
    (p, end): (usize, usize),
    value: &[u8],
    expected_at: usize,
    body_start: usize,
    declared: usize,
) -> Frame {
    if p != expected_at {
        return Frame::Garbled {
            len: end,
            garble: Garble::BodyLength {
                declared,
                actual: p + 1 - body_start,
            },
        };
    }
    let computed = checksum(&buf[..=p]);
    let declared = (value.len() == MAX_CHECKSUM_CHARS && value.iter().all(u8::is_ascii_digit))
        .then(|| {
            value
                .iter()
                .fold(0u16, |acc, &d| acc * 10 + u16::from(d - b'0'))
        });
    if declared == Some(u16::from(computed)) {
        Frame::Message { len: end }
    } else {
        Frame::Garbled {
            len: end,
            garble: Garble::CheckSum { declared, computed },
        }
    }
}

/// What follows a SOH inside a message being framed.
enum Look {
    /// Too few bytes to tell.
    NeedMore,
    /// An ordinary field.
    Nothing,
    /// `10=` and a value of `value_len` characters ended by SOH.
    Trailer { value_len: usize },
    /// `8=FIX`: another message starts.
    NextMessage,
}

fn look(rest: &[u8]) -> Look {
    let tag = &TRAILER_TAG[1..];
    if rest.len() < tag.len() && tag.starts_with(rest) {
        return Look::NeedMore;
    }
    if rest.starts_with(tag) {
        let value = &rest[tag.len()..];
        let window = value.len().min(MAX_CHECKSUM_CHARS + 1);
        return match value[..window].iter().position(|&b| b == SOH) {
            Some(n) => Look::Trailer { value_len: n },
            None if value.len() <= MAX_CHECKSUM_CHARS => Look::NeedMore,
            None => Look::Nothing,
        };
    }
    if rest.len() < START.len() && START.starts_with(rest) {
        return Look::NeedMore;
    }
    if rest.starts_with(START) {
        return Look::NextMessage;
    }
    Look::Nothing
}

enum Length {
    NeedMore,
    Bad,
    /// The value and the bytes `9=digits␁` took.
    Value(u64, usize),
}

/// Parses `9=digits␁` at the start of `b`.
fn body_length(b: &[u8]) -> Length {
    const TAG: &[u8] = b"9=";
    if b.len() < TAG.len() {
        return if TAG.starts_with(b) {
            Length::NeedMore
        } else {
            Length::Bad
        };
    }
    if !b.starts_with(TAG) {
        return Length::Bad;
    }
    let mut value: u64 = 0;
    for (i, &c) in b[TAG.len()..].iter().enumerate() {
        if c == SOH {
            return if i == 0 {
                Length::Bad
            } else {
                Length::Value(value, TAG.len() + i + 1)
            };
        }
        if !c.is_ascii_digit() || i >= MAX_LENGTH_DIGITS {
            return Length::Bad;
        }
        value = value * 10 + u64::from(c - b'0');
    }
    Length::NeedMore
}

/// Index of `byte` among the first `within` bytes of `b`.
fn position_within(b: &[u8], byte: u8, within: usize) -> Option<usize> {
    b[..b.len().min(within)].iter().position(|&c| c == byte)
}

/// Garbled bytes from the start of `buf` up to the next message start after its
/// first byte; without one, all but a tail that may be the beginning of one.
fn skip(buf: &[u8], garble: Garble) -> Frame {
    let len = match buf[1..].windows(START.len()).position(|w| w == START) {
        Some(at) => at + 1,
        None => {
            let keep = (1..START.len())
                .rev()
                .find(|&k| k < buf.len() && buf.ends_with(&START[..k]))
                .unwrap_or(0);
            buf.len() - keep
        }
    };
    Frame::Garbled { len, garble }
}

/// The FIX CheckSum: the sum of the bytes modulo 256.
pub(crate) fn checksum(bytes: &[u8]) -> u8 {
    // Summing in u32 lanes lets the compiler vectorise; 16 MiB of 0xFF still fits.
    let sum: u32 = bytes.iter().map(|&b| u32::from(b)).sum();
    (sum & 0xFF) as u8
}

#[cfg(test)]
mod tests;
