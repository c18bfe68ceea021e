//! The tag=value codec: framing, a zero-copy message view, values, and the encoder.
//!
//! A FIX message is `8=BeginString␁9=BodyLength␁35=MsgType␁ … 10=CheckSum␁`, where ␁
//! is the byte 0x01 (SOH). BodyLength counts the bytes from the one after the SOH
//! that ends field 9 up to and including the SOH before `10=`; CheckSum is the sum of
//! every byte before `10=`, modulo 256, written as three digits.

mod encode;
mod error;
mod fields;
mod frame;
pub(crate) mod header;
pub use header::{route_of, ParseError, ParseOptions, Route};
pub mod tags;
pub mod time;
pub mod value;

pub use encode::{Encoder, MessageWriter};
pub use error::{FieldError, Garble};
pub use fields::{Fields, RawField};
#[cfg(test)]
pub(crate) use frame::checksum as frame_checksum;
pub use frame::{frame, Frame, FrameLimits, BEGIN_STRING};
pub use header::{Message, StandardHeader};
pub use time::Precision;

/// The field delimiter.
pub const SOH: u8 = 0x01;
