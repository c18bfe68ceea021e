//! A framed message seen through its standard header: every field a slice of the
//! input, the header fields checked (order, repeats, required tags, formats) in one
//! pass without allocating.

use super::error::FieldError;
use super::fields::Fields;
use super::frame::{PREFIX, TRAILER_LEN};
use super::tags::{self, is_header, is_trailer};
use super::time::parse_utc_timestamp;
use super::value::{parse_bool, parse_u64};
use super::SOH;

/// The standard header fields the session layer reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StandardHeader<'a> {
    /// MsgType (35).
    pub msg_type: &'a [u8],
    /// SenderCompID (49).
    pub sender_comp_id: &'a [u8],
    /// TargetCompID (56).
    pub target_comp_id: &'a [u8],
    /// MsgSeqNum (34), positive.
    pub msg_seq_num: u64,
    /// SendingTime (52), nanoseconds since the Unix epoch.
    pub sending_time: u64,
    /// PossDupFlag (43).
    pub poss_dup: bool,
    /// PossResend (97).
    pub poss_resend: bool,
    /// OrigSendingTime (122), nanoseconds since the Unix epoch.
    pub orig_sending_time: Option<u64>,
}

/// A message whose header was parsed; the body is left as bytes for the application
/// decoders ([`Message::fields`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    raw: &'a [u8],
    /// The standard header.
    pub header: StandardHeader<'a>,
    body: &'a [u8],
}

/// Why a message's header could not be accepted, with what the Reject needs to
/// reference it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseError<'a> {
    /// What is wrong.
    pub error: FieldError,
    /// MsgType, if it could be read (empty otherwise).
    pub msg_type: &'a [u8],
    /// MsgSeqNum, if it could be read.
    pub msg_seq_num: Option<u64>,
}

/// One bit per header tag the view checks for repeats.
fn header_bit(tag: u32) -> u32 {
    match tag {
        35 => 0,
        49 => 1,
        56 => 2,
        115 => 3,
        128 => 4,
        90 => 5,
        91 => 6,
        50 => 7,
        142 => 8,
        57 => 9,
        143 => 10,
        116 => 11,
        144 => 12,
        129 => 13,
        145 => 14,
        34 => 15,
        43 => 16,
        97 => 17,
        52 => 18,
        122 => 19,
        212 => 20,
        213 => 21,
        347 => 22,
        369 => 23,
        _ => 24, // the hops group (627..630) may repeat; never flagged
    }
}

impl<'a> Message<'a> {
    /// Parses the header of a framed message (as delimited by
    /// [`super::frame::frame`]); checks the field order (35 first; header, then body,
    /// then trailer), header repeats, the required header tags and their formats.
    pub fn parse(raw: &'a [u8]) -> Result<Message<'a>, ParseError<'a>> {
        let fail = |error, msg_type| ParseError {
            error,
            msg_type,
            msg_seq_num: find_seq(raw),
        };
        let content =
            content(raw).ok_or_else(|| fail(FieldError::Malformed(tags::BODY_LENGTH), &[]))?;
        let mut msg_type: &[u8] = &[];
        let mut sender: Option<&[u8]> = None;
        let mut target: Option<&[u8]> = None;
        let mut seq: Option<&[u8]> = None;
        let mut sending_time: Option<&[u8]> = None;
        let mut poss_dup: Option<&[u8]> = None;
        let mut poss_resend: Option<&[u8]> = None;
        let mut orig_sending_time: Option<&[u8]> = None;
        let mut seen: u32 = 0;
        let mut body_start: Option<usize> = None;
        let mut trailer_start: Option<usize> = None;
        let mut fields = Fields::new(content);
        let mut first = true;
        loop {
            let at = fields.position();
            let Some(field) = fields.next() else { break };
            let field = field.map_err(|e| fail(e, msg_type))?;
            let tag = field.tag;
            if first {
                if tag != tags::MSG_TYPE {
                    return Err(fail(FieldError::OutOfOrder(tags::MSG_TYPE), msg_type));
                }
                first = false;
            }
            if matches!(tag, 8..=10) {
                return Err(fail(FieldError::OutOfOrder(tag), msg_type));
            }
            if trailer_start.is_some() && !is_trailer(tag) {
                return Err(fail(FieldError::OutOfOrder(tag), msg_type));
            }
            if is_header(tag) {
                if body_start.is_some() || trailer_start.is_some() {
                    return Err(fail(FieldError::OutOfOrder(tag), msg_type));
                }
                let bit = header_bit(tag);
                if bit < 24 {
                    if seen & (1 << bit) != 0 {
                        return Err(fail(FieldError::Repeated(tag), msg_type));
                    }
                    seen |= 1 << bit;
                }
                let v = Some(field.value);
                match tag {
                    tags::MSG_TYPE => msg_type = field.value,
                    tags::SENDER_COMP_ID => sender = v,
                    tags::TARGET_COMP_ID => target = v,
                    tags::MSG_SEQ_NUM => seq = v,
                    tags::SENDING_TIME => sending_time = v,
                    tags::POSS_DUP_FLAG => poss_dup = v,
                    tags::POSS_RESEND => poss_resend = v,
                    tags::ORIG_SENDING_TIME => orig_sending_time = v,
                    _ => {}
                }
            } else if is_trailer(tag) {
                trailer_start.get_or_insert(at);
            } else {
                body_start.get_or_insert(at);
            }
        }
        let end = trailer_start.unwrap_or(content.len());
        let body = &content[body_start.unwrap_or(end).min(end)..end];
        let required =
            |v: Option<&'a [u8]>, tag| v.ok_or_else(|| fail(FieldError::Missing(tag), msg_type));
        let sender_comp_id = required(sender, tags::SENDER_COMP_ID)?;
        let target_comp_id = required(target, tags::TARGET_COMP_ID)?;
        let seq = required(seq, tags::MSG_SEQ_NUM)?;
        let sending_time = required(sending_time, tags::SENDING_TIME)?;
        let msg_seq_num =
            parse_u64(seq).ok_or_else(|| fail(FieldError::Format(tags::MSG_SEQ_NUM), msg_type))?;
        if msg_seq_num == 0 {
            return Err(fail(FieldError::Value(tags::MSG_SEQ_NUM), msg_type));
        }
        let flag = |v: Option<&[u8]>, tag| match v {
            None => Ok(false),
            Some(v) => parse_bool(v).ok_or_else(|| fail(FieldError::Value(tag), msg_type)),
        };
        let time = |v: &[u8], tag| {
            parse_utc_timestamp(v).ok_or_else(|| fail(FieldError::Format(tag), msg_type))
        };
        let header = StandardHeader {
            msg_type,
            sender_comp_id,
            target_comp_id,
            msg_seq_num,
            sending_time: time(sending_time, tags::SENDING_TIME)?,
            poss_dup: flag(poss_dup, tags::POSS_DUP_FLAG)?,
            poss_resend: flag(poss_resend, tags::POSS_RESEND)?,
            orig_sending_time: match orig_sending_time {
                Some(v) => Some(time(v, tags::ORIG_SENDING_TIME)?),
                None => None,
            },
        };
        Ok(Message { raw, header, body })
    }

    /// The whole message as received.
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// MsgType (35).
    pub fn msg_type(&self) -> &'a [u8] {
        self.header.msg_type
    }

    /// The body: every field after the standard header and before the trailer.
    pub fn body(&self) -> &'a [u8] {
        self.body
    }

    /// The body's fields.
    pub fn fields(&self) -> Fields<'a> {
        Fields::new(self.body)
    }
}

/// The bytes between `9=n␁` and `10=nnn␁`.
fn content(raw: &[u8]) -> Option<&[u8]> {
    if raw.len() < PREFIX.len() + 2 + TRAILER_LEN || !raw.starts_with(PREFIX) {
        return None;
    }
    let soh = raw[PREFIX.len()..].iter().position(|&b| b == SOH)? + PREFIX.len();
    let start = soh + 1;
    let end = raw.len() - TRAILER_LEN;
    (start <= end).then(|| &raw[start..end])
}

/// MsgSeqNum found by a lenient scan, for a Reject of a message that did not parse.
pub(crate) fn find_seq(raw: &[u8]) -> Option<u64> {
    let at = raw.windows(4).position(|w| w == b"\x0134=")? + 4;
    let len = raw[at..].iter().position(|&b| b == SOH)?;
    parse_u64(&raw[at..at + len]).filter(|&s| s > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::frame::checksum;

    fn msg(body: &str) -> Vec<u8> {
        let mut m = format!("8=FIX.4.4\x019={}\x01{}", body.len(), body).into_bytes();
        let sum = checksum(&m);
        m.extend_from_slice(format!("10={sum:03}\x01").as_bytes());
        m
    }

    const HDR: &str = "35=D\x0149=CLIENT\x0156=PGN\x0134=7\x0152=20240101-10:00:00.000\x01";

    #[test]
    fn parses_the_header_and_leaves_the_body() {
        let m = msg(&format!("{HDR}11=abc\x0155=PGN-USD\x01"));
        let p = Message::parse(&m).unwrap();
        assert_eq!(p.header.msg_type, b"D");
        assert_eq!(p.header.sender_comp_id, b"CLIENT");
        assert_eq!(p.header.target_comp_id, b"PGN");
        assert_eq!(p.header.msg_seq_num, 7);
        assert!(!p.header.poss_dup);
        assert_eq!(p.body(), b"11=abc\x0155=PGN-USD\x01");
        assert_eq!(p.fields().count(), 2);
    }

    fn err(body: &str) -> (FieldError, Option<u64>) {
        let m = msg(body);
        let e = Message::parse(&m).unwrap_err();
        (e.error, e.msg_seq_num)
    }

    #[test]
    fn each_header_rule_has_its_error() {
        assert_eq!(err("49=A\x0135=D\x01").0, FieldError::OutOfOrder(35));
        assert_eq!(
            err(&format!("{HDR}11=a\x0134=8\x01")),
            (FieldError::OutOfOrder(34), Some(7))
        );
        assert_eq!(err(&format!("{HDR}49=X\x01")).0, FieldError::Repeated(49));
        assert_eq!(
            err("35=D\x0149=A\x0156=B\x0152=20240101-10:00:00\x01").0,
            FieldError::Missing(34)
        );
        assert_eq!(
            err("35=D\x0149=A\x0134=1\x0152=20240101-10:00:00\x01").0,
            FieldError::Missing(56)
        );
        assert_eq!(
            err("35=D\x0149=A\x0156=B\x0134=x\x0152=20240101-10:00:00\x01").0,
            FieldError::Format(34)
        );
        assert_eq!(
            err("35=D\x0149=A\x0156=B\x0134=0\x0152=20240101-10:00:00\x01").0,
            FieldError::Value(34)
        );
        assert_eq!(
            err("35=D\x0149=A\x0156=B\x0134=1\x0152=yesterday\x01").0,
            FieldError::Format(52)
        );
        assert_eq!(err(&format!("{HDR}43=X\x01")).0, FieldError::Value(43));
        assert_eq!(err(&format!("{HDR}11=\x01")).0, FieldError::NoValue(11));
        assert_eq!(
            err(&format!("{HDR}93=1\x0189=x\x0111=a\x01")).0,
            FieldError::OutOfOrder(11)
        );
        assert_eq!(err(&format!("{HDR}9=5\x01")).0, FieldError::OutOfOrder(9));
    }

    #[test]
    fn garbage_never_panics() {
        for raw in [
            &b""[..],
            b"8=FIX.4.4\x019=",
            b"8=FIX.4.4\x019=1\x0110=000\x01",
            b"8=FIX.4.4\x019=0\x0110=000\x01",
        ] {
            assert!(Message::parse(raw).is_err());
        }
    }
}
