//! Layout descriptors: what the layout tables, the layout tests and the decoders know
//! about a message without decoding one. The leaf of the crate's module graph (it
//! depends on nothing but the header size), so `header` and `message` can both use it
//! without depending on each other.

/// Bytes in the common header (re-exported as [`crate::HEADER_SIZE`]).
pub const HEADER_SIZE: usize = 8;

/// One field of a message layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldDesc {
    /// Field name (the Rust field name).
    pub name: &'static str,
    /// Byte offset from the first byte of the message (header included).
    pub offset: usize,
    /// Bytes on the wire.
    pub size: usize,
    /// Wire type as printed in the tables.
    pub wire_type: &'static str,
    /// What the field means (the field's doc comment).
    pub doc: &'static str,
}

impl FieldDesc {
    /// A descriptor.
    pub const fn new(
        name: &'static str,
        offset: usize,
        size: usize,
        wire_type: &'static str,
        doc: &'static str,
    ) -> Self {
        FieldDesc {
            name,
            offset,
            size,
            wire_type,
            doc,
        }
    }
}

/// One message type, for tables and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageDesc {
    /// The message name.
    pub name: &'static str,
    /// The header's `msg_type` code.
    pub msg_type: u8,
    /// The header's `version`: the protocol version that defined this layout.
    pub version: u8,
    /// Total size in bytes, header included.
    pub size: usize,
    /// What the message is for (its doc comment).
    pub doc: &'static str,
    /// Body fields, in wire order, with absolute offsets.
    pub fields: &'static [FieldDesc],
}

/// Lays fields out back to back after the header: fills in each `offset`.
pub const fn layout<const N: usize>(mut fields: [FieldDesc; N]) -> [FieldDesc; N] {
    let mut offset = HEADER_SIZE;
    let mut i = 0;
    while i < N {
        fields[i].offset = offset;
        offset += fields[i].size;
        i += 1;
    }
    fields
}

/// The size of a message with these body fields, header included.
pub const fn message_size(fields: &[FieldDesc]) -> usize {
    match fields.last() {
        Some(f) => f.offset + f.size,
        None => HEADER_SIZE,
    }
}
