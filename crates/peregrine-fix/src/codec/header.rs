//! A framed message seen through its standard header: every field a slice of the
//! input, the header fields checked (order, repeats, required tags, formats) in one
//! pass without allocating.

use super::error::FieldError;
use super::fields::Fields;
use super::frame::TRAILER_LEN;
use super::tags::{self, is_header, is_trailer};
use super::time::parse_utc_timestamp;
use super::value::{parse_bool, parse_u64};
use super::SOH;

/// The routing fields of the standard header, as received: a session-level answer
/// (a Reject) is routed back by swapping them (OnBehalfOf ↔ DeliverTo).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Route<'a> {
    /// OnBehalfOfCompID (115), OnBehalfOfSubID (116), OnBehalfOfLocationID (144).
    pub on_behalf_of: [Option<&'a [u8]>; 3],
    /// DeliverToCompID (128), DeliverToSubID (129), DeliverToLocationID (145).
    pub deliver_to: [Option<&'a [u8]>; 3],
}

impl<'a> Route<'a> {
    /// OnBehalfOf* tags, in the order of [`Route::on_behalf_of`].
    pub const ON_BEHALF_OF: [u32; 3] = [115, 116, 144];
    /// DeliverTo* tags, in the order of [`Route::deliver_to`].
    pub const DELIVER_TO: [u32; 3] = [128, 129, 145];

    fn set(&mut self, tag: u32, value: &'a [u8]) {
        if let Some(i) = Self::ON_BEHALF_OF.iter().position(|&t| t == tag) {
            self.on_behalf_of[i] = Some(value);
        } else if let Some(i) = Self::DELIVER_TO.iter().position(|&t| t == tag) {
            self.deliver_to[i] = Some(value);
        }
    }

    /// Whether no routing field was given.
    pub fn is_empty(&self) -> bool {
        self.on_behalf_of
            .iter()
            .chain(&self.deliver_to)
            .all(Option::is_none)
    }
}

/// The standard header fields the session layer reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StandardHeader<'a> {
    /// BeginString (8): `FIX.4.4` for every message this session accepts.
    pub begin_string: &'a [u8],
    /// MsgType (35).
    pub msg_type: &'a [u8],
    /// SenderCompID (49).
    pub sender_comp_id: &'a [u8],
    /// TargetCompID (56).
    pub target_comp_id: &'a [u8],
    /// MsgSeqNum (34). 0 is kept (a SequenceReset in reset mode may carry it; for
    /// anything else it is too low).
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

impl ParseError<'_> {
    /// Whether the message is garbled rather than malformed (FIX: BeginString,
    /// BodyLength and MsgType not the first three fields, or CheckSum not the last):
    /// it is ignored, not rejected.
    pub fn is_garbled(&self) -> bool {
        matches!(
            self.error,
            FieldError::OutOfOrder(tags::BEGIN_STRING | tags::BODY_LENGTH | tags::CHECK_SUM)
                | FieldError::OutOfOrder(tags::MSG_TYPE)
        ) || self.error == FieldError::Malformed(tags::BODY_LENGTH)
    }
}

/// How strictly [`Message::parse_with`] reads the field order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseOptions {
    /// A header field after the first body field is an error (SessionRejectReason
    /// 14); otherwise it is taken as part of the header wherever it is.
    pub header_fields_first: bool,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            header_fields_first: true,
        }
    }
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

/// Header values as found, before their formats are checked.
#[derive(Default)]
struct Raw<'a> {
    msg_type: &'a [u8],
    sender: Option<&'a [u8]>,
    target: Option<&'a [u8]>,
    seq: Option<&'a [u8]>,
    sending_time: Option<&'a [u8]>,
    poss_dup: Option<&'a [u8]>,
    poss_resend: Option<&'a [u8]>,
    orig_sending_time: Option<&'a [u8]>,
}

impl<'a> Raw<'a> {
    fn set(&mut self, tag: u32, v: &'a [u8]) {
        match tag {
            tags::MSG_TYPE => self.msg_type = v,
            tags::SENDER_COMP_ID => self.sender = Some(v),
            tags::TARGET_COMP_ID => self.target = Some(v),
            tags::MSG_SEQ_NUM => self.seq = Some(v),
            tags::SENDING_TIME => self.sending_time = Some(v),
            tags::POSS_DUP_FLAG => self.poss_dup = Some(v),
            tags::POSS_RESEND => self.poss_resend = Some(v),
            tags::ORIG_SENDING_TIME => self.orig_sending_time = Some(v),
            _ => {}
        }
    }
}

impl<'a> Message<'a> {
    /// [`Message::parse_with`] the default (strict) options.
    pub fn parse(raw: &'a [u8]) -> Result<Message<'a>, ParseError<'a>> {
        Self::parse_with(raw, ParseOptions::default())
    }

    /// Parses the header of a framed message (as delimited by
    /// [`super::frame::frame`]); checks the field order (35 first; header, then body,
    /// then trailer), header repeats, the required header tags and their formats.
    pub fn parse_with(raw: &'a [u8], options: ParseOptions) -> Result<Message<'a>, ParseError<'a>> {
        let mut h = Raw::default();
        let (begin_string, content) = content(raw).ok_or(ParseError {
            error: FieldError::Malformed(tags::BODY_LENGTH),
            msg_type: &[],
            msg_seq_num: None,
        })?;
        let (body_start, end) = scan(content, options, &mut h).map_err(|error| ParseError {
            error,
            msg_type: h.msg_type,
            msg_seq_num: h.seq.and_then(parse_u64).or_else(|| find_seq(raw)),
        })?;
        let fail = |error| ParseError {
            error,
            msg_type: h.msg_type,
            msg_seq_num: h.seq.and_then(parse_u64),
        };
        let required = |v: Option<&'a [u8]>, tag| v.ok_or_else(|| fail(FieldError::Missing(tag)));
        let sender_comp_id = required(h.sender, tags::SENDER_COMP_ID)?;
        let target_comp_id = required(h.target, tags::TARGET_COMP_ID)?;
        let seq = required(h.seq, tags::MSG_SEQ_NUM)?;
        let sending_time = required(h.sending_time, tags::SENDING_TIME)?;
        let msg_seq_num =
            parse_u64(seq).ok_or_else(|| fail(FieldError::Format(tags::MSG_SEQ_NUM)))?;
        let flag = |v: Option<&[u8]>, tag| match v {
            None => Ok(false),
            Some(v) => parse_bool(v).ok_or_else(|| fail(FieldError::Value(tag))),
        };
        let time =
            |v: &[u8], tag| parse_utc_timestamp(v).ok_or_else(|| fail(FieldError::Format(tag)));
        let header = StandardHeader {
            begin_string,
            msg_type: h.msg_type,
            sender_comp_id,
            target_comp_id,
            msg_seq_num,
            sending_time: time(sending_time, tags::SENDING_TIME)?,
            poss_dup: flag(h.poss_dup, tags::POSS_DUP_FLAG)?,
            poss_resend: flag(h.poss_resend, tags::POSS_RESEND)?,
            orig_sending_time: match h.orig_sending_time {
                Some(v) => Some(time(v, tags::ORIG_SENDING_TIME)?),
                None => None,
            },
        };
        let body = &content[body_start.unwrap_or(end).min(end)..end];
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

    /// The body: every field after the standard header and before the trailer (with
    /// `header_fields_first` off, header fields found among them stay in it).
    pub fn body(&self) -> &'a [u8] {
        self.body
    }

    /// The body's fields.
    pub fn fields(&self) -> Fields<'a> {
        Fields::new(self.body)
    }

    /// The routing fields of the header.
    pub fn route(&self) -> Route<'a> {
        route_of(self.raw)
    }
}

/// The routing fields of `raw` (a framed message), read up to the first field that
/// cannot be read: for routing back the Reject of a message that did not parse.
pub fn route_of(raw: &[u8]) -> Route<'_> {
    let mut route = Route::default();
    if let Some((_, content)) = content(raw) {
        for field in Fields::new(content).map_while(Result::ok) {
            route.set(field.tag, field.value);
        }
    }
    route
}

/// Reads every field of `content` into `h`; returns where the body starts (if any)
/// and where the trailer starts.
fn scan<'a>(
    content: &'a [u8],
    options: ParseOptions,
    h: &mut Raw<'a>,
) -> Result<(Option<usize>, usize), FieldError> {
    let mut seen: u32 = 0;
    let mut body_start: Option<usize> = None;
    let mut trailer_start: Option<usize> = None;
    let mut fields = Fields::new(content);
    let mut first = true;
    loop {
        let at = fields.position();
        let Some(field) = fields.next() else { break };
        let field = field?;
        let tag = field.tag;
        if first && tag != tags::MSG_TYPE {
            return Err(FieldError::OutOfOrder(tags::MSG_TYPE));
        }
        first = false;
        if matches!(tag, 8..=10) {
            return Err(FieldError::OutOfOrder(tag));
        }
        if trailer_start.is_some() && !is_trailer(tag) {
            return Err(FieldError::OutOfOrder(tag));
        }
        if is_header(tag) {
            if trailer_start.is_some() || (body_start.is_some() && options.header_fields_first) {
                return Err(FieldError::OutOfOrder(tag));
            }
            let bit = header_bit(tag);
            if bit < 24 {
                if seen & (1 << bit) != 0 {
                    return Err(FieldError::Repeated(tag));
                }
                seen |= 1 << bit;
            }
            h.set(tag, field.value);
        } else if is_trailer(tag) {
            trailer_start.get_or_insert(at);
        } else {
            body_start.get_or_insert(at);
        }
    }
    Ok((body_start, trailer_start.unwrap_or(content.len())))
}

/// BeginString's value and the bytes between `9=n␁` and `10=nnn␁`.
fn content(raw: &[u8]) -> Option<(&[u8], &[u8])> {
    let rest = raw.strip_prefix(b"8=")?;
    let bs = rest.iter().position(|&b| b == SOH)?;
    let after = rest[bs + 1..].strip_prefix(b"9=")?;
    let soh = after.iter().position(|&b| b == SOH)?;
    let start = raw.len() - after.len() + soh + 1;
    let end = raw.len().checked_sub(TRAILER_LEN)?;
    (start <= end).then(|| (&rest[..bs], &raw[start..end]))
}

/// MsgSeqNum found by a lenient scan, for a Reject of a message that did not parse.
pub(crate) fn find_seq(raw: &[u8]) -> Option<u64> {
    let at = raw.windows(4).position(|w| w == b"\x0134=")? + 4;
    let len = raw[at..].iter().position(|&b| b == SOH)?;
    parse_u64(&raw[at..at + len])
}

#[cfg(test)]
mod tests;
