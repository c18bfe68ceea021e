//! Codec errors: small `Copy` values, so returning one never allocates.

use thiserror::Error;

/// A byte stream that cannot be framed at all: the connection cannot continue (the
/// session answers with a Logout naming the reason, then disconnects).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum FrameError {
    /// The stream does not start with `8=FIX.4.4␁9=`.
    #[error("message does not start with 8=FIX.4.4 then 9=BodyLength")]
    BadBeginString,
    /// BodyLength is not 1 to 9 digits ended by SOH.
    #[error("BodyLength (9) is not a number")]
    BadBodyLength,
    /// BodyLength declares more than the configured maximum; refused from its digits,
    /// before anything more is buffered.
    #[error("BodyLength {declared} above the maximum {max}")]
    BodyLengthTooLarge {
        /// The value declared (saturated).
        declared: u64,
        /// The configured maximum body length.
        max: usize,
    },
    /// BodyLength was wrong and no trailer (`10=nnn␁`) was found within the maximum
    /// message size: the stream cannot be resynchronised.
    #[error("no CheckSum trailer within {max} bytes")]
    NoTrailer {
        /// The configured maximum message size.
        max: usize,
    },
}

/// A message that could be delimited but not trusted: the session skips its bytes,
/// answers with a Reject (SessionRejectReason 5, RefTagID 9 or 10) and does not
/// advance the inbound sequence number, so the next message asks for a resend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum Garble {
    /// The trailer was not where BodyLength said; it was found further on.
    #[error("BodyLength {declared} wrong: the body is {actual} bytes")]
    BodyLength {
        /// BodyLength as declared.
        declared: usize,
        /// The body length the trailer's position implies.
        actual: usize,
    },
    /// The CheckSum does not match the bytes.
    #[error("CheckSum {declared:03} wrong: computed {computed:03}")]
    CheckSum {
        /// As declared in field 10 (three digits, so up to 999).
        declared: u16,
        /// As computed.
        computed: u8,
    },
}

/// Why a field of a framed message is malformed; each maps to one
/// SessionRejectReason (see `session::reject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum FieldError {
    /// The tag is not a positive decimal number (SessionRejectReason 0).
    #[error("invalid tag number")]
    InvalidTag,
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
            FieldError::InvalidTag | FieldError::TooManyFields => None,
            FieldError::NoValue(t)
            | FieldError::Malformed(t)
            | FieldError::Repeated(t)
            | FieldError::OutOfOrder(t)
            | FieldError::Missing(t)
            | FieldError::Format(t)
            | FieldError::Value(t) => Some(t),
        }
    }
}
