//! The binary wire protocol of the Peregrine exchange (placeholder docs, see below).
#![deny(unsafe_code)]

pub mod cursor;
pub mod error;
pub mod field;
pub mod header;
pub mod md;
pub mod message;
pub mod order_entry;
pub mod orders;
pub mod reports;
pub mod session;
pub mod spec;

pub use error::{DecodeError, EncodeError};
pub use field::{Credential, LiquidityRole, ReasonCode, RequestKind, WireField};
pub use header::{Header, HEADER_SIZE, MAX_MESSAGE_SIZE, PROTOCOL_VERSION};
pub use message::{FieldDesc, MessageDesc, WireMessage};
pub use order_entry::{decode, Inbound, Message, Outbound};
