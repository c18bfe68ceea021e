//! Codec errors. Small `Copy` enums: they carry only integers and static names, so
//! returning one never allocates and a caller can keep it in a queue or a log ring.

use thiserror::Error;

/// Why a byte sequence could not be decoded.
///
/// [`DecodeError::Incomplete`] is the only variant that is not a protocol violation:
/// on a byte stream it means "read more and call again". Every other variant means the
/// peer sent bytes this decoder will never accept; a session should be dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum DecodeError {
    /// The buffer ends before the frame does. On a TCP stream, read at least
    /// `needed` bytes in total and decode again.
    #[error("incomplete frame: need {needed} bytes, have {available}")]
    Incomplete {
        /// Bytes the frame needs, counted from its first byte.
        needed: usize,
        /// Bytes available.
        available: usize,
    },
    /// A datagram or a declared region ends before what it declares (unlike
    /// [`DecodeError::Incomplete`], no more bytes will ever arrive).
    #[error("truncated: need {needed} bytes, have {available}")]
    Truncated {
        /// Bytes the declared structure needs.
        needed: usize,
        /// Bytes available.
        available: usize,
    },
    /// The header's length field is below the header size or above
    /// [`crate::MAX_MESSAGE_SIZE`]: garbage or a desynchronised stream.
    #[error("frame length {length} outside the legal range")]
    BadLength {
        /// The length field as received.
        length: u16,
    },
    /// The message type byte names no message of this family.
    #[error("unknown message type {0:#04x}")]
    UnknownType(u8),
    /// The version byte is not one this decoder speaks.
    #[error("message type {msg_type:#04x}: unsupported version {version}")]
    BadVersion {
        /// The message type byte.
        msg_type: u8,
        /// The version byte as received.
        version: u8,
    },
    /// The length field disagrees with the fixed size of the message type.
    #[error("message type {msg_type:#04x}: length {actual}, expected {expected}")]
    LengthMismatch {
        /// The message type byte.
        msg_type: u8,
        /// The fixed size of that type in this version.
        expected: u16,
        /// The length field as received.
        actual: u16,
    },
    /// A field holds a value outside its domain (an enum byte, a flag, a reserved
    /// field that must be zero).
    #[error("field `{field}` holds invalid value {value}")]
    InvalidField {
        /// The field's name, as in the layout tables.
        field: &'static str,
        /// The raw value, widened.
        value: u64,
    },
    /// A market-data packet holds bytes after its last declared message.
    #[error("{extra} trailing bytes after the last message of the packet")]
    TrailingBytes {
        /// How many bytes are left over.
        extra: usize,
    },
}

impl DecodeError {
    /// True for [`DecodeError::Incomplete`]: wait for more bytes, the stream is fine.
    #[inline]
    pub const fn is_incomplete(&self) -> bool {
        matches!(self, DecodeError::Incomplete { .. })
    }
}

/// Why a message could not be encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum EncodeError {
    /// The output buffer is shorter than the message.
    #[error("buffer too small: need {needed} bytes, have {available}")]
    BufferTooSmall {
        /// Bytes the message needs.
        needed: usize,
        /// Bytes the buffer offers.
        available: usize,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_incomplete_is_incomplete() {
        assert!(DecodeError::Incomplete {
            needed: 8,
            available: 0
        }
        .is_incomplete());
        assert!(!DecodeError::Truncated {
            needed: 8,
            available: 0
        }
        .is_incomplete());
        assert!(!DecodeError::UnknownType(0).is_incomplete());
    }

    #[test]
    fn messages_name_the_problem() {
        let e = DecodeError::InvalidField {
            field: "side",
            value: 7,
        };
        assert_eq!(e.to_string(), "field `side` holds invalid value 7");
        let e = DecodeError::LengthMismatch {
            msg_type: 0x10,
            expected: 48,
            actual: 40,
        };
        assert_eq!(e.to_string(), "message type 0x10: length 40, expected 48");
    }
}
