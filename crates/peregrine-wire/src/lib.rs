//! The binary wire protocol of the Peregrine exchange: order entry over TCP, a
//! MoldUDP64-style market-data feed over UDP, and the feed's TCP recovery channel.
//! The normative specification, with every byte layout, is `docs/protocol.md`.
//!
//! # Design
//!
//! * **Fixed-size little-endian messages.** Every message starts with the same 8-byte
//!   [`Header`] (`length: u16`, `msg_type: u8`, `version: u8`, `reserved: u32`) and has
//!   one fixed size per version. Body fields are ordered by decreasing width, so each
//!   is naturally aligned; there are no variable-length fields, so there is nothing to
//!   cap beyond [`MAX_MESSAGE_SIZE`].
//! * **One schema.** Every message, field, enumeration and reason code is declared
//!   once, in `schema/protocol.xml` (machine-readable, in the spirit of SBE's XML).
//!   The build script generates from it, per message, a plain `Copy` struct and its
//!   [`WireMessage`] implementation (through the `wire_message!` macro): encoder,
//!   validating decoder, compile-time field offsets ([`WireMessage::FIELDS`]) and
//!   size; per channel, the decoder enum ([`v2::Inbound`], ...); and the reason-code
//!   enums ([`reason`]). The tables of `docs/protocol.md` are rendered from the same
//!   schema, and `tests/schema.rs` checks the codec against it with an independent,
//!   schema-driven encoder and decoder, so the code, the schema and the document
//!   cannot drift apart.
//! * **Typed fields.** Fields use `peregrine-types` ([`peregrine_types::Price`],
//!   [`peregrine_types::Qty`], ids, [`peregrine_types::Side`], order kinds); each field
//!   type knows its wire form through [`WireField`]. Enum bytes are validated with the
//!   types' own `from_u8`; business rules (positive quantities, ticks) are left to the
//!   exchange, which answers with [`ReasonCode`]s: plain `u16`s whose table the
//!   exchange owns.
//! * **Safe, bounded, allocation-free.** No `unsafe`: bytes move through
//!   `to_le_bytes`/`from_le_bytes` in [`cursor::Reader`] and [`cursor::Writer`], which
//!   check every bound and return errors instead of panicking. Encoding writes into a
//!   caller-provided buffer; decoding borrows the input; errors ([`DecodeError`],
//!   [`EncodeError`]) are small `Copy` enums. `tests/alloc.rs` proves with a counting
//!   global allocator that encoding and decoding never allocate.
//! * **Stream framing.** `decode` (and each family's `decode`) takes the bytes
//!   received so far and returns the message and the bytes consumed, or
//!   [`DecodeError::Incomplete`] for a partial frame, or a protocol error. Garbage is
//!   reported as early as possible: a bad length after two bytes.
//!   [`stream::RecvBuffer`] wraps that loop around a fixed receive array.
//!
//! * **Version 2** ([`v2`]): the order-entry families of protocol version 2 (report
//!   stream, replay, drop copy, queries, instrument definitions), the login proof
//!   ([`auth`]) and the reason-code tables ([`reason`]). The header's `version` byte
//!   names the protocol version that defined each layout, so version-1 messages that
//!   version 2 kept (the requests) are version 2's too; the version-1 layouts it
//!   replaced are refused by every decoder.
//! * **Acyclic modules.** Layout descriptors live in `desc`, a leaf that `header` and
//!   `message` both use, so neither depends on the other.
//!
//! # Message families
//!
//! | Family | Direction | Decoder |
//! |---|---|---|
//! | [`v2::Inbound`] | client → exchange order entry | [`v2::Inbound::decode`] |
//! | [`v2::Outbound`] | exchange → client order entry | [`v2::Outbound::decode`] |
//! | [`v2::Message`] | either order-entry direction | [`v2::decode`] |
//! | [`md::MdMessage`] | feed messages, inside [`md::packet`]s | [`md::packet::PacketReader`] |
//! | [`md::recovery::Recovery`] | recovery channel, both directions | [`md::recovery::Recovery::decode`] |
//!
//! # Example
//!
//! ```
//! use peregrine_types::{ClientOrderId, InstrumentId, OrderType, Price, Qty, Side, StpMode,
//!     TimeInForce, Timestamp};
//! use peregrine_wire::v2::{decode, Message};
//! use peregrine_wire::{orders::NewOrder, WireMessage};
//!
//! let order = NewOrder {
//!     client_order_id: ClientOrderId(1),
//!     price: Price::from_raw(10_050),
//!     qty: Qty::from_raw(3),
//!     expire_at: Timestamp(0),
//!     instrument: InstrumentId(7),
//!     side: Side::Buy,
//!     order_type: OrderType::Limit,
//!     tif: TimeInForce::Gtc,
//!     stp: StpMode::None,
//! };
//! let mut buf = [0u8; NewOrder::SIZE];
//! let n = order.encode(&mut buf).unwrap();
//! assert_eq!(decode(&buf[..n]), Ok((Message::NewOrder(order), NewOrder::SIZE)));
//! ```
#![deny(unsafe_code)]

pub mod admin;
pub mod auth;
pub mod cursor;
mod desc;
pub mod error;
pub mod field;
pub mod header;
pub mod md;
pub mod message;
pub mod orders;
pub mod reason;
pub mod session;
pub mod stream;
pub mod v2;

pub use error::{DecodeError, EncodeError};
pub use field::{LiquidityRole, ReasonCode, RequestKind, WireField};
pub use header::{Header, HEADER_SIZE, MAX_MESSAGE_SIZE, PROTOCOL_VERSION};
pub use message::{FieldDesc, MessageDesc, WireMessage};
