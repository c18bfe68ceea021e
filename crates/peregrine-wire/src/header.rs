//! The common message header and stream framing.
//!
//! Every message, in every family, starts with the same 8 bytes:
//!
//! | offset | size | type | field    |
//! |-------:|-----:|------|----------|
//! | 0      | 2    | u16  | length   |
//! | 2      | 1    | u8   | msg_type |
//! | 3      | 1    | u8   | version  |
//! | 4      | 4    | u32  | reserved |
//!
//! `length` counts the whole message, header included, so a reader that knows nothing
//! about a type can still skip it, and a stream decoder knows after two bytes how many
//! to wait for. The header is 8 bytes so that every 8-byte body field sits at an
//! offset that is a multiple of 8.

use crate::cursor::Reader;
use crate::desc::FieldDesc;
pub use crate::desc::HEADER_SIZE;
use crate::DecodeError;

/// The newest protocol version this crate speaks.
///
/// The header's `version` byte names the protocol version that defined the message's
/// layout: messages unchanged since version 1 carry 1, messages added or extended by
/// version 2 carry 2, by version 3 (the venue's order types) 3. Versioning is additive: a later version adds message types or
/// appends fields to a message (raising its size, and its version), never moves,
/// resizes or reinterprets a field. A decoder accepts, per message type, only the
/// version its family knows ([`crate::DecodeError::BadVersion`] otherwise).
pub const PROTOCOL_VERSION: u8 = 3;

/// Upper bound on any message's `length` field. Larger values are treated as garbage
/// before any type lookup, so a stream reader never buffers more than this per frame.
/// Well above the largest version-1 message, to leave room for additive growth.
pub const MAX_MESSAGE_SIZE: usize = 512;

/// The header fields, for layout tables and tests.
pub const HEADER_FIELDS: [FieldDesc; 4] = [
    FieldDesc::new(
        "length",
        0,
        2,
        "u16",
        "Total message length in bytes, header included.",
    ),
    FieldDesc::new(
        "msg_type",
        2,
        1,
        "u8",
        "Message type code (see the message tables).",
    ),
    FieldDesc::new(
        "version",
        3,
        1,
        "u8",
        "Protocol version that defined this message's layout: 1, 2 or 3.",
    ),
    FieldDesc::new(
        "reserved",
        4,
        4,
        "u32",
        "Must be zero; receivers reject other values.",
    ),
];

/// A parsed header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Total message length, header included.
    pub length: u16,
    /// Message type code.
    pub msg_type: u8,
    /// Protocol version.
    pub version: u8,
}

impl Header {
    /// A header.
    #[inline]
    pub const fn new(msg_type: u8, version: u8, length: u16) -> Self {
        Header {
            length,
            msg_type,
            version,
        }
    }

    /// Reads a header from the start of a stream buffer.
    ///
    /// Checks the length field as soon as two bytes are present, so garbage is reported
    /// before the caller buffers more. Returns [`DecodeError::Incomplete`] if fewer than
    /// [`HEADER_SIZE`] bytes are available, [`DecodeError::BadLength`] for a length
    /// outside `HEADER_SIZE..=MAX_MESSAGE_SIZE`, [`DecodeError::BadVersion`] for a
    /// version outside `1..=PROTOCOL_VERSION` and [`DecodeError::InvalidField`]
    /// (`reserved`). Whether the version suits the message type is the family
    /// decoder's check.
    pub fn peek(bytes: &[u8]) -> Result<Header, DecodeError> {
        if let Some(&[lo, hi]) = bytes.get(..2) {
            check_length(u16::from_le_bytes([lo, hi]))?;
        }
        if bytes.len() < HEADER_SIZE {
            return Err(DecodeError::Incomplete {
                needed: HEADER_SIZE,
                available: bytes.len(),
            });
        }
        let mut r = Reader::new(bytes);
        let header = Header {
            length: r.u16()?,
            msg_type: r.u8()?,
            version: r.u8()?,
        };
        if !(1..=PROTOCOL_VERSION).contains(&header.version) {
            return Err(DecodeError::BadVersion {
                msg_type: header.msg_type,
                version: header.version,
            });
        }
        match r.u32()? {
            0 => Ok(header),
            v => Err(DecodeError::InvalidField {
                field: "reserved",
                value: u64::from(v),
            }),
        }
    }
}

fn check_length(length: u16) -> Result<(), DecodeError> {
    let len = usize::from(length);
    if (HEADER_SIZE..=MAX_MESSAGE_SIZE).contains(&len) {
        Ok(())
    } else {
        Err(DecodeError::BadLength { length })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peek_reads_a_header() {
        let bytes = [48, 0, 0x10, 1, 0, 0, 0, 0, 0xaa];
        assert_eq!(Header::peek(&bytes), Ok(Header::new(0x10, 1, 48)));
    }

    #[test]
    fn peek_waits_for_eight_bytes() {
        assert_eq!(
            Header::peek(&[48, 0, 0x10]),
            Err(DecodeError::Incomplete {
                needed: 8,
                available: 3
            })
        );
        assert_eq!(
            Header::peek(&[]),
            Err(DecodeError::Incomplete {
                needed: 8,
                available: 0
            })
        );
    }

    #[test]
    fn peek_rejects_garbage_lengths_after_two_bytes() {
        assert_eq!(
            Header::peek(&[7, 0]),
            Err(DecodeError::BadLength { length: 7 })
        );
        assert_eq!(
            Header::peek(&[1, 2]),
            Err(DecodeError::BadLength { length: 513 })
        );
    }

    #[test]
    fn peek_rejects_version_and_reserved() {
        for version in [0, 4, 0xFF] {
            let bytes = [8, 0, 3, version, 0, 0, 0, 0];
            assert_eq!(
                Header::peek(&bytes),
                Err(DecodeError::BadVersion {
                    msg_type: 3,
                    version
                })
            );
        }
        let v2 = [8, 0, 3, 2, 0, 0, 0, 0];
        assert_eq!(Header::peek(&v2), Ok(Header::new(3, 2, 8)));
        let bytes = [8, 0, 3, 1, 0, 0, 1, 0];
        assert_eq!(
            Header::peek(&bytes),
            Err(DecodeError::InvalidField {
                field: "reserved",
                value: 0x1_0000
            })
        );
    }

    #[test]
    fn header_fields_are_contiguous() {
        let end = HEADER_FIELDS.iter().fold(0, |off, f| {
            assert_eq!(f.offset, off, "{}", f.name);
            off + f.size
        });
        assert_eq!(end, HEADER_SIZE);
    }
}
