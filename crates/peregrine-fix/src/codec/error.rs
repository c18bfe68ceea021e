//! Codec errors: small `Copy` values, so returning one never allocates.

use thiserror::Error;

/// Bytes that are not a message to trust: the session skips them without a Reject
/// and without taking a sequence number (FIX: a garbled message is ignored; the next
/// good one shows the gap and asks for a resend).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum Garble {
    /// Bytes before the start of a message (`8=FIX`).
    #[error("bytes before the start of a message")]
    Junk,
    /// A message start whose BeginString or BodyLength (the second field) is
    /// malformed.
    #[error("BeginString or BodyLength malformed")]
    Header,
    /// BodyLength declares more than the configured maximum; refused from its digits,
    /// before anything more is buffered.
    #[error("BodyLength {declared} above the maximum")]
    BodyLengthTooLarge {
        /// The value declared.
        declared: u64,
    },
    /// No trailer (`␁10=`) where BodyLength says, nor before the next message starts
    /// or the maximum message size is reached.
    #[error("no CheckSum trailer")]
    NoTrailer,
    /// The trailer was not where BodyLength said; it was found further on.
    #[error("BodyLength {declared} wrong: the body is {actual} bytes")]
    BodyLength {
        /// BodyLength as declared.
        declared: usize,
        /// The body length the trailer's position implies.
        actual: usize,
    },
    /// The CheckSum does not match the bytes.
    #[error("CheckSum {declared:?} wrong: computed {computed:03}")]
    CheckSum {
        /// As declared in field 10, when it is three digits.
        declared: Option<u16>,
        /// As computed.
        computed: u8,
    },
    /// BeginString, BodyLength and MsgType are not the first three fields, or
    /// CheckSum is not the last (found while reading the fields).
    #[error("BeginString, BodyLength, MsgType not first, or CheckSum not last")]
    Structure,
}

/// Why a field of a framed message is malformed; each maps to one
/// SessionRejectReason (see `session::reject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum FieldError {
    /// The tag is not a positive decimal number (SessionRejectReason 0); the number
    /// written, when it is one (`0`, `-1`), for RefTagID.
    #[error("invalid tag number")]
    InvalidTag(Option<i32>),
    /// `tag=` with nothing after it (SessionRejectReason 4).
    #[error("tag {0} has no value")]
    NoValue(u32),
    /// A field with no `=` or no closing SOH (SessionRejectReason 6).
    #[error("field after tag {0} is not tag=value")]
    Malformed(u32),
    /// A tag appears twice where it may appear once (SessionRejectReason 13).
    #[error("tag {0} appears more than once")]
    Repeated(u32),
    /// A header tag after the body began, or the standard header's first three tags
    /// out of place (SessionRejectReason 14).
    #[error("tag {0} out of the required order")]
    OutOfOrder(u32),
    /// A required tag is missing (SessionRejectReason 1).
    #[error("required tag {0} missing")]
    Missing(u32),
    /// The value does not parse as the tag's type (SessionRejectReason 6).
    #[error("tag {0} has a value of the wrong format")]
    Format(u32),
    /// The value parses but is not allowed (an unknown enum value, a negative
    /// quantity, …) (SessionRejectReason 5).
    #[error("tag {0} has a value out of range")]
    Value(u32),
    /// More header fields than the view holds (SessionRejectReason 99).
    #[error("too many fields")]
    TooManyFields,
}

impl FieldError {
    /// The tag the error is about, when there is one (RefTagID of the Reject).
    pub const fn tag(self) -> Option<u32> {
        match self {
            FieldError::InvalidTag(_) | FieldError::TooManyFields => None,
            FieldError::NoValue(t)
            | FieldError::Malformed(t)
            | FieldError::Repeated(t)
            | FieldError::OutOfOrder(t)
            | FieldError::Missing(t)
            | FieldError::Format(t)
            | FieldError::Value(t) => Some(t),
        }
    }

    /// RefTagID (371) of the Reject: the tag, or the invalid number as written.
    pub const fn ref_tag_id(self) -> Option<i64> {
        match self {
            FieldError::InvalidTag(Some(t)) => Some(t as i64),
            _ => match self.tag() {
                Some(t) => Some(t as i64),
                None => None,
            },
        }
    }
}
