//! Writing a message into a reusable buffer.
//!
//! The body is written first, after a gap reserved for `8=FIX.4.4␁9=n␁`; when the
//! message is finished the prefix is written right-aligned into the gap (its width
//! depends on BodyLength's digits) and the trailer appended, so nothing is moved and,
//! once the buffer has grown to the largest message, nothing is allocated.

use super::frame::{checksum, FrameLimits, PREFIX, TRAILER_LEN};
use super::time::{write_utc_timestamp, Precision};
use super::value::{write_decimal, write_i64, write_u64};
use super::SOH;

/// The gap in front of the body: the prefix plus the most digits BodyLength has.
const RESERVE: usize = FrameLimits::OVERHEAD - TRAILER_LEN;

/// A reusable message buffer.
#[derive(Debug, Clone)]
pub struct Encoder {
    buf: Vec<u8>,
    start: usize,
}

impl Encoder {
    /// An encoder whose buffer starts with room for `capacity` bytes.
    pub fn with_capacity(capacity: usize) -> Self {
        Encoder {
            buf: Vec::with_capacity(capacity.max(RESERVE + 64)),
            start: 0,
        }
    }

    /// Starts a message of type `msg_type`: writes `35=msg_type␁` as the first body
    /// field. Header fields (49, 56, 34, 52, …) come next, written by the caller.
    pub fn start(&mut self, msg_type: &[u8]) -> MessageWriter<'_> {
        self.buf.clear();
        self.buf.resize(RESERVE, 0);
        self.start = 0;
        let mut w = MessageWriter { enc: self };
        w.bytes(super::tags::MSG_TYPE, msg_type);
        w
    }

    /// The last finished message.
    pub fn message(&self) -> &[u8] {
        &self.buf[self.start..]
    }
}

impl Default for Encoder {
    fn default() -> Self {
        Encoder::with_capacity(512)
    }
}

/// Appends fields to the message being written; [`MessageWriter::seal`] seals it.
#[derive(Debug)]
pub struct MessageWriter<'e> {
    enc: &'e mut Encoder,
}

impl<'e> MessageWriter<'e> {
    fn tag(&mut self, tag: u32) {
        write_u64(&mut self.enc.buf, u64::from(tag));
        self.enc.buf.push(b'=');
    }

    /// A field whose value is the given bytes. An SOH inside the value would end the
    /// field early: it is written as a space (only [`MessageWriter::text`] sees free
    /// text; identifiers come from parsed messages, which hold no SOH).
    pub fn bytes(&mut self, tag: u32, value: &[u8]) -> &mut Self {
        self.tag(tag);
        let at = self.enc.buf.len();
        self.enc.buf.extend_from_slice(value);
        for b in &mut self.enc.buf[at..] {
            if *b == SOH {
                *b = b' ';
            }
        }
        self.enc.buf.push(SOH);
        self
    }

    /// Free text (58 Text and the like); SOH becomes a space.
    pub fn text(&mut self, tag: u32, value: &str) -> &mut Self {
        self.bytes(tag, value.as_bytes())
    }

    /// A single-character field.
    pub fn char(&mut self, tag: u32, value: u8) -> &mut Self {
        self.bytes(tag, &[value])
    }

    /// A `Boolean` field (`Y`/`N`).
    pub fn bool(&mut self, tag: u32, value: bool) -> &mut Self {
        self.char(tag, if value { b'Y' } else { b'N' })
    }

    /// An unsigned integer field.
    pub fn uint(&mut self, tag: u32, value: u64) -> &mut Self {
        self.tag(tag);
        write_u64(&mut self.enc.buf, value);
        self.enc.buf.push(SOH);
        self
    }

    /// A signed integer field.
    pub fn int(&mut self, tag: u32, value: i64) -> &mut Self {
        self.tag(tag);
        write_i64(&mut self.enc.buf, value);
        self.enc.buf.push(SOH);
        self
    }

    /// An exact decimal: `units` of `10^-decimals`.
    pub fn decimal(&mut self, tag: u32, units: i64, decimals: u32) -> &mut Self {
        self.tag(tag);
        write_decimal(&mut self.enc.buf, units, decimals);
        self.enc.buf.push(SOH);
        self
    }

    /// A decimal given as the exact ratio `numerator / denominator` (an average
    /// price), rounded half up to `decimals` + `extra` places, then with trailing
    /// zeros beyond `decimals` places dropped. A zero denominator writes 0.
    pub fn ratio(
        &mut self,
        tag: u32,
        numerator: i128,
        denominator: i64,
        decimals: u32,
        extra: u32,
    ) -> &mut Self {
        let places = (decimals + extra).min(18);
        let scale = 10i128.pow(places - decimals);
        let units = if denominator == 0 {
            0
        } else {
            let n = numerator.saturating_mul(scale);
            let d = i128::from(denominator);
            let q = n.div_euclid(d);
            let r = n.rem_euclid(d);
            let rounded = if r * 2 >= d.abs() { q + 1 } else { q };
            i64::try_from(rounded).unwrap_or(if rounded < 0 { i64::MIN } else { i64::MAX })
        };
        self.tag(tag);
        write_decimal(&mut self.enc.buf, units, places);
        if places > decimals {
            let mut trim = 0;
            while trim < (places - decimals) as usize && self.enc.buf.last() == Some(&b'0') {
                self.enc.buf.pop();
                trim += 1;
            }
            if decimals == 0 && trim == places as usize && self.enc.buf.last() == Some(&b'.') {
                self.enc.buf.pop();
            }
        }
        self.enc.buf.push(SOH);
        self
    }

    /// A `UTCTimestamp` field.
    pub fn timestamp(&mut self, tag: u32, ns: u64, precision: Precision) -> &mut Self {
        self.tag(tag);
        write_utc_timestamp(&mut self.enc.buf, ns, precision);
        self.enc.buf.push(SOH);
        self
    }

    /// Pre-encoded whole fields (each `tag=value␁`), appended as they are.
    pub fn raw(&mut self, fields: &[u8]) -> &mut Self {
        self.enc.buf.extend_from_slice(fields);
        self
    }

    /// Bytes of body written so far (what BodyLength will say).
    pub fn body_len(&self) -> usize {
        self.enc.buf.len() - RESERVE
    }

    /// Writes the prefix and the trailer; returns the whole message.
    pub fn seal(self) -> &'e [u8] {
        let enc = self.enc;
        let body_len = enc.buf.len() - RESERVE;
        let mut digits = [0u8; 20];
        let mut n = body_len;
        let mut d = digits.len();
        loop {
            d -= 1;
            digits[d] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let digits = &digits[d..];
        let prefix_len = PREFIX.len() + digits.len() + 1;
        let start = RESERVE - prefix_len;
        enc.buf[start..start + PREFIX.len()].copy_from_slice(PREFIX);
        enc.buf[start + PREFIX.len()..RESERVE - 1].copy_from_slice(digits);
        enc.buf[RESERVE - 1] = SOH;
        let sum = checksum(&enc.buf[start..]);
        enc.buf.extend_from_slice(&[
            b'1',
            b'0',
            b'=',
            b'0' + sum / 100,
            b'0' + sum / 10 % 10,
            b'0' + sum % 10,
            SOH,
        ]);
        enc.start = start;
        &enc.buf[start..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{frame, Frame, Message};

    #[test]
    fn encodes_a_message_that_frames_and_parses() {
        let mut enc = Encoder::default();
        let mut w = enc.start(b"D");
        w.bytes(49, b"CLIENT")
            .bytes(56, b"PGN")
            .uint(34, 12)
            .timestamp(52, 1_700_000_000_123_000_000, Precision::Millis)
            .bool(43, false)
            .bytes(11, b"ord-1")
            .decimal(44, 10025, 2)
            .int(38, -5)
            .text(58, "a\x01b");
        let m = w.seal().to_vec();
        assert_eq!(
            frame(&m, FrameLimits::default()),
            Some(Frame::Message { len: m.len() })
        );
        let p = Message::parse(&m).unwrap();
        assert_eq!(p.header.msg_seq_num, 12);
        assert_eq!(p.header.sending_time, 1_700_000_000_123_000_000);
        assert_eq!(p.body(), b"11=ord-1\x0144=100.25\x0138=-5\x0158=a b\x01");
        assert_eq!(enc.message(), m.as_slice());
    }

    #[test]
    fn ratios_round_half_up_and_trim() {
        let text = |n: i128, d: i64, dec: u32| {
            let mut enc = Encoder::default();
            let mut w = enc.start(b"8");
            w.ratio(6, n, d, dec, 4);
            let m = w.seal().to_vec();
            let six = crate::codec::Fields::new(&m)
                .flatten()
                .find(|f| f.tag == 6)
                .unwrap();
            String::from_utf8(six.value.to_vec()).unwrap()
        };
        assert_eq!(text(10025 * 3, 3, 2), "100.25");
        assert_eq!(text(10000 + 10001, 2, 2), "100.005");
        assert_eq!(text(10000 * 2 + 10001, 3, 2), "100.003333");
        assert_eq!(text(2, 3, 2), "0.006667");
        assert_eq!(text(5, 1, 0), "5");
        assert_eq!(text(7, 2, 0), "3.5");
        assert_eq!(text(0, 0, 2), "0.00");
    }

    #[test]
    fn body_length_of_every_width_is_exact() {
        let mut enc = Encoder::default();
        for pad in [0usize, 5, 95, 995, 9995] {
            let mut w = enc.start(b"0");
            w.bytes(58, &vec![b'x'; pad]);
            let m = w.seal().to_vec();
            assert_eq!(
                frame(&m, FrameLimits { max_body: 20_000 }),
                Some(Frame::Message { len: m.len() })
            );
        }
    }
}
