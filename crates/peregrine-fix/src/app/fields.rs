//! Collecting a message's known body fields in one pass, with typed errors.

use crate::codec::time::parse_utc_timestamp;
use crate::codec::value::{parse_decimal, parse_u64};
use crate::codec::{FieldError, Message};

/// Why an application message cannot be acted on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AppError {
    /// Malformed at the field level: answered with a session-level Reject
    /// (SessionRejectReason from the field error).
    #[error("{0}")]
    Field(#[from] FieldError),
    /// Well formed but not something Peregrine does (an OrdType, a TimeInForce, a
    /// conditionally required field missing): answered at business level (an
    /// ExecutionReport reject, an OrderCancelReject, or a BusinessMessageReject).
    #[error("tag {tag}: {text}")]
    Unsupported {
        /// The tag at fault.
        tag: u32,
        /// Why, for Text (58).
        text: &'static str,
    },
}

/// The values of `TAGS` in the body (first and only occurrence each); a repeated
/// known tag is an error, unknown tags are ignored.
pub(crate) fn collect<'a, const N: usize>(
    msg: &Message<'a>,
    tags: [u32; N],
) -> Result<[Option<&'a [u8]>; N], FieldError> {
    let mut values = [None; N];
    for field in msg.fields() {
        let field = field?;
        if let Some(i) = tags.iter().position(|&t| t == field.tag) {
            if values[i].is_some() {
                return Err(FieldError::Repeated(field.tag));
            }
            values[i] = Some(field.value);
        }
    }
    Ok(values)
}

/// A required field.
pub(crate) fn req(v: Option<&[u8]>, tag: u32) -> Result<&[u8], FieldError> {
    v.ok_or(FieldError::Missing(tag))
}

/// A required one-character enumeration.
pub(crate) fn req_enum<T>(
    v: Option<&[u8]>,
    tag: u32,
    parse: fn(&[u8]) -> Option<T>,
) -> Result<T, FieldError> {
    parse(req(v, tag)?).ok_or(FieldError::Value(tag))
}

/// An optional one-character enumeration.
pub(crate) fn opt_enum<T>(
    v: Option<&[u8]>,
    tag: u32,
    parse: fn(&[u8]) -> Option<T>,
) -> Result<Option<T>, FieldError> {
    v.map(|v| parse(v).ok_or(FieldError::Value(tag)))
        .transpose()
}

/// An optional UTCTimestamp (ns since the epoch).
pub(crate) fn opt_time(v: Option<&[u8]>, tag: u32) -> Result<Option<u64>, FieldError> {
    v.map(|v| parse_utc_timestamp(v).ok_or(FieldError::Format(tag)))
        .transpose()
}

/// A required UTCTimestamp.
pub(crate) fn req_time(v: Option<&[u8]>, tag: u32) -> Result<u64, FieldError> {
    opt_time(v, tag)?.ok_or(FieldError::Missing(tag))
}

/// An optional non-negative integer.
pub(crate) fn opt_u64(v: Option<&[u8]>, tag: u32) -> Result<Option<u64>, FieldError> {
    v.map(|v| parse_u64(v).ok_or(FieldError::Format(tag)))
        .transpose()
}

/// An identifier (ClOrdID and the like): at most 64 printable bytes.
pub(crate) fn id(v: Option<&[u8]>, tag: u32) -> Result<&[u8], FieldError> {
    let v = req(v, tag)?;
    if v.len() > 64 || !v.iter().all(|b| b.is_ascii_graphic()) {
        return Err(FieldError::Value(tag));
    }
    Ok(v)
}

/// A decimal field as units of `10^-decimals`: an inexact or malformed value is a
/// Format error (SessionRejectReason 6) when it is not a number at all, else a Value
/// error (more decimals than the instrument has, or out of range).
pub fn decimal_units(v: &[u8], decimals: u32, tag: u32) -> Result<i64, FieldError> {
    use peregrine_types::DecimalError as E;
    parse_decimal(v, decimals).map_err(|e| match e {
        E::TooPrecise { .. } | E::Overflow | E::BadScale(_) => FieldError::Value(tag),
        E::Empty | E::InvalidChar(_) => FieldError::Format(tag),
    })
}
