//! The message machinery: the [`WireMessage`] trait, layout descriptors, frame
//! decoding, and the two macros that declare messages and message families.
//!
//! A message is declared once, as a list of typed fields. From that one list the
//! `wire_message!` macro derives the struct, the encoder, the validating decoder, the
//! field offsets and total size ([`WireMessage::FIELDS`], [`WireMessage::SIZE`]) and
//! the documentation tables. Offsets are computed at compile time by [`layout`], so the
//! code, the layout tests and `docs/protocol.md` cannot disagree.

use crate::cursor::{Reader, Writer};
use crate::desc::HEADER_SIZE;
pub use crate::desc::{layout, message_size, FieldDesc, MessageDesc};
use crate::header::Header;
use crate::{DecodeError, EncodeError};

/// A fixed-size message. Implemented by `wire_message!`; do not implement by hand.
pub trait WireMessage: Copy + Sized {
    /// The header's `msg_type` code.
    const MSG_TYPE: u8;
    /// The header's `version`: the protocol version that defined this layout.
    const VERSION: u8;
    /// The message name.
    const NAME: &'static str;
    /// Body fields with absolute offsets.
    const FIELDS: &'static [FieldDesc];
    /// Total size in bytes, header included.
    const SIZE: usize;
    /// The descriptor used by the documentation tables.
    const DESC: MessageDesc;

    /// Writes the body fields (not the header).
    fn encode_body(&self, w: &mut Writer<'_>);

    /// Reads and validates the body fields (not the header).
    fn decode_body(r: &mut Reader<'_>) -> Result<Self, DecodeError>;

    /// A valid message built from arbitrary seeds, one per field (cycled if short).
    /// For property tests and fuzzers.
    fn sample(seeds: &[u64]) -> Self;

    /// Encodes header and body into the front of `buf`; returns the bytes written
    /// ([`Self::SIZE`]).
    #[inline]
    fn encode(&self, buf: &mut [u8]) -> Result<usize, EncodeError> {
        let too_small = EncodeError::BufferTooSmall {
            needed: Self::SIZE,
            available: buf.len(),
        };
        let out = buf.get_mut(..Self::SIZE).ok_or(too_small)?;
        let mut w = Writer::new(out);
        // SIZE <= MAX_MESSAGE_SIZE (512) < u16::MAX: a const assertion in `wire_message!`.
        w.u16(Self::SIZE as u16);
        w.u8(Self::MSG_TYPE);
        w.u8(Self::VERSION);
        w.u32(0);
        self.encode_body(&mut w);
        if w.overflowed() || w.position() != Self::SIZE {
            return Err(too_small);
        }
        Ok(Self::SIZE)
    }

    /// Decodes one message of exactly this type from the front of `bytes`; returns it
    /// and the bytes consumed. Stream semantics as [`decode_frame`].
    #[inline]
    fn decode(bytes: &[u8]) -> Result<(Self, usize), DecodeError> {
        let size_of = |t: u8| (t == Self::MSG_TYPE).then_some((Self::SIZE, Self::VERSION));
        decode_frame(bytes, size_of, |_, r| Self::decode_body(r))
    }
}

/// The seed for field `i`: seeds are cycled, an empty slice gives zeros.
#[inline]
pub fn seed_at(seeds: &[u64], i: usize) -> u64 {
    match seeds.len() {
        0 => 0,
        n => seeds[i % n],
    }
}

/// Decodes one frame from the front of a byte stream.
///
/// `size_of` maps a type code to its fixed size and version (`None`: unknown type);
/// `body` decodes the body of a known type. Returns the message and the bytes
/// consumed, or [`DecodeError::Incomplete`] when the buffer holds only part of a frame
/// (read more, call again), or another [`DecodeError`] when the bytes can never become
/// a valid frame. Checks run in this order: length range, header completeness,
/// version range, reserved, type, the type's version, length against the type's size,
/// frame completeness, fields.
pub fn decode_frame<M>(
    bytes: &[u8],
    size_of: impl Fn(u8) -> Option<(usize, u8)>,
    body: impl FnOnce(u8, &mut Reader<'_>) -> Result<M, DecodeError>,
) -> Result<(M, usize), DecodeError> {
    let header = Header::peek(bytes)?;
    let (expected, version) =
        size_of(header.msg_type).ok_or(DecodeError::UnknownType(header.msg_type))?;
    if header.version != version {
        return Err(DecodeError::BadVersion {
            msg_type: header.msg_type,
            version: header.version,
        });
    }
    let length = usize::from(header.length);
    if length != expected {
        return Err(DecodeError::LengthMismatch {
            msg_type: header.msg_type,
            // Message sizes are at most MAX_MESSAGE_SIZE (const-asserted by
            // `wire_message!`); saturate for a caller-supplied `size_of` that is not.
            expected: u16::try_from(expected).unwrap_or(u16::MAX),
            actual: header.length,
        });
    }
    let frame = bytes.get(..length).ok_or(DecodeError::Incomplete {
        needed: length,
        available: bytes.len(),
    })?;
    let mut r = Reader::new(frame);
    r.take::<HEADER_SIZE>()?;
    let msg = body(header.msg_type, &mut r)?;
    debug_assert_eq!(
        r.remaining(),
        0,
        "body decoder must consume the declared fields"
    );
    Ok((msg, length))
}

/// Declares a fixed-size message: the struct and its [`WireMessage`] implementation.
///
/// ```text
/// wire_message! {
///     /// What the message is for.
///     Cancel = 0x11;
///     /// What the field means.
///     client_order_id: ClientOrderId,
/// }
/// ```
///
/// `Fill = 0x92, version 2;` declares a layout defined by protocol version 2 (the
/// header's `version` byte); without it the version is 1.
macro_rules! wire_message {
    (
        $(#[doc = $sdoc:literal])+
        $name:ident = $code:literal;
        $( $(#[doc = $doc:literal])+ $field:ident : $fty:ty ),* $(,)?
    ) => {
        wire_message! {
            $(#[doc = $sdoc])+
            $name = $code, version 1;
            $( $(#[doc = $doc])+ $field : $fty ),*
        }
    };
    (
        $(#[doc = $sdoc:literal])+
        $name:ident = $code:literal, version $version:literal;
        $( $(#[doc = $doc:literal])+ $field:ident : $fty:ty ),* $(,)?
    ) => {
        $(#[doc = $sdoc])+
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name {
            $( $(#[doc = $doc])+ pub $field: $fty, )*
        }

        impl $crate::message::WireMessage for $name {
            const MSG_TYPE: u8 = $code;
            const VERSION: u8 = $version;
            const NAME: &'static str = stringify!($name);
            const FIELDS: &'static [$crate::message::FieldDesc] = &$crate::message::layout([
                $( $crate::message::FieldDesc::new(
                    stringify!($field),
                    0,
                    <$fty as $crate::field::WireField>::WIDTH,
                    <$fty as $crate::field::WireField>::WIRE_TYPE,
                    concat!($($doc),+),
                ), )*
            ]);
            const SIZE: usize = $crate::message::message_size(Self::FIELDS);
            const DESC: $crate::message::MessageDesc = $crate::message::MessageDesc {
                name: Self::NAME,
                msg_type: Self::MSG_TYPE,
                version: Self::VERSION,
                size: Self::SIZE,
                doc: concat!($($sdoc),+),
                fields: Self::FIELDS,
            };

            #[inline]
            #[allow(unused_variables)] // `w` is unused by header-only messages
            fn encode_body(&self, w: &mut $crate::cursor::Writer<'_>) {
                $( $crate::field::WireField::put(self.$field, w); )*
            }

            #[inline]
            #[allow(unused_variables)] // `r` is unused by header-only messages
            fn decode_body(
                r: &mut $crate::cursor::Reader<'_>,
            ) -> Result<Self, $crate::DecodeError> {
                Ok($name {
                    $( $field: $crate::field::WireField::get(r, stringify!($field))?, )*
                })
            }

            #[allow(unused_variables, unused_mut, unused_assignments)] // header-only messages
            fn sample(seeds: &[u64]) -> Self {
                let mut i = 0usize;
                $name {
                    $( $field: {
                        i += 1;
                        $crate::field::WireField::sample($crate::message::seed_at(seeds, i - 1))
                    }, )*
                }
            }
        }

        // The size fits the length field and the cap, so `SIZE as u16` is exact.
        const _: () = assert!(
            <$name as $crate::message::WireMessage>::SIZE <= $crate::MAX_MESSAGE_SIZE,
            concat!(stringify!($name), " exceeds MAX_MESSAGE_SIZE")
        );
    };
}

/// Declares a message family: an enum over message types with a stream decoder.
macro_rules! wire_family {
    (
        $(#[doc = $doc:literal])+
        $fam:ident { $($v:ident : $t:path),+ $(,)? }
    ) => {
        $(#[doc = $doc])+
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $fam {
            $( #[doc = concat!("A [`", stringify!($v), "`](", stringify!($t), ").")] $v($t), )+
        }

        impl $fam {
            /// Every message type of the family, in declaration order.
            pub const MESSAGES: &'static [$crate::message::MessageDesc] =
                &[ $( <$t as $crate::message::WireMessage>::DESC ),+ ];

            /// Decodes one message from the front of a byte stream; returns it and the
            /// bytes consumed. [`DecodeError::Incomplete`](crate::DecodeError) means
            /// "read more and call again"; any other error is a protocol violation.
            pub fn decode(bytes: &[u8]) -> Result<(Self, usize), $crate::DecodeError> {
                $crate::message::decode_frame(bytes, Self::size_of_type, Self::decode_body)
            }

            /// The fixed size and version of a message type of this family, or `None`.
            pub fn size_of_type(msg_type: u8) -> Option<(usize, u8)> {
                $( if msg_type == <$t as $crate::message::WireMessage>::MSG_TYPE {
                    return Some((
                        <$t as $crate::message::WireMessage>::SIZE,
                        <$t as $crate::message::WireMessage>::VERSION,
                    ));
                } )+
                None
            }

            fn decode_body(
                msg_type: u8,
                r: &mut $crate::cursor::Reader<'_>,
            ) -> Result<Self, $crate::DecodeError> {
                $( if msg_type == <$t as $crate::message::WireMessage>::MSG_TYPE {
                    return <$t as $crate::message::WireMessage>::decode_body(r).map(Self::$v);
                } )+
                Err($crate::DecodeError::UnknownType(msg_type))
            }

            /// Encodes into the front of `buf`; returns the bytes written.
            pub fn encode(&self, buf: &mut [u8]) -> Result<usize, $crate::EncodeError> {
                match self {
                    $( Self::$v(m) => $crate::message::WireMessage::encode(m, buf), )+
                }
            }

            /// The descriptor of this message's type.
            pub const fn desc(&self) -> &'static $crate::message::MessageDesc {
                match self {
                    $( Self::$v(_) => &<$t as $crate::message::WireMessage>::DESC, )+
                }
            }

            /// The header's `msg_type` code.
            pub const fn msg_type(&self) -> u8 {
                self.desc().msg_type
            }

            /// Encoded size in bytes.
            pub const fn size(&self) -> usize {
                self.desc().size
            }

            /// A valid message of type `MESSAGES[index % MESSAGES.len()]` built from
            /// arbitrary seeds. For property tests and fuzzers.
            pub fn sample(index: usize, seeds: &[u64]) -> Self {
                let k = index % Self::MESSAGES.len();
                let mut i = 0usize;
                $(
                    if k == i {
                        return Self::$v(<$t as $crate::message::WireMessage>::sample(seeds));
                    }
                    i += 1;
                )+
                unreachable!("k = {k} < MESSAGES.len() = {i}, so one arm matched")
            }
        }

        $( impl From<$t> for $fam {
            #[inline]
            fn from(m: $t) -> Self {
                Self::$v(m)
            }
        } )+
    };
}

pub(crate) use {wire_family, wire_message};
