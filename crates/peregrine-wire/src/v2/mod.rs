//! Protocol version 2 of order entry: a sequenced, replayable report stream per
//! account, challenge-response login, drop-copy sessions, order queries, one terminal
//! answer per request, and instrument definitions.
//!
//! Version 2 is additive over version 1 (`docs/protocol.md`, "Changes in version
//! 2"): the requests `NewOrder`, `Cancel`, `Replace`, `MassCancel`, `Deposit`,
//! `Withdraw`, `BalanceQuery`, `Logout` and `ClientHeartbeat` are the version-1
//! messages, unchanged; every report gains the account and its report sequence
//! number, appended after the version-1 fields (header `version` 2); the version-1
//! `Login`, whose credential crossed the wire, is replaced by [`session::Login`].
//! Every message is declared in `schema/protocol.xml`; the decoders below are
//! generated from the channels each message travels on.
//!
//! | Family | Direction | Decoder |
//! |---|---|---|
//! | [`Inbound`] | client → exchange | [`Inbound::decode`] |
//! | [`Outbound`] | exchange → client | [`Outbound::decode`] |
//! | [`Message`] | either | [`decode`] |

pub mod admin;
mod answer;
pub mod client;
pub mod queries;
pub mod reference;
pub mod reports;
pub mod session;

pub use answer::RequestRef;

pub use crate::admin::{BalanceQuery, Deposit, Withdraw};
pub use crate::orders::{Cancel, MassCancel, NewOrder, Replace};
pub use crate::session::{ClientHeartbeat, Logout};
use crate::DecodeError;

include!(concat!(env!("OUT_DIR"), "/family_v2.rs"));

/// Decodes one version-2 order-entry message (either direction) from the front of a
/// TCP byte stream: the message and the bytes it used, or
/// [`DecodeError::Incomplete`] when more bytes are needed, or another
/// [`DecodeError`] for bytes that can never be valid.
///
/// ```
/// use peregrine_wire::v2::{decode, ClientHeartbeat, Message};
/// use peregrine_wire::WireMessage;
/// let mut buf = [0u8; 64];
/// let n = ClientHeartbeat {}.encode(&mut buf).unwrap();
/// assert!(decode(&buf[..n - 1]).unwrap_err().is_incomplete());
/// assert_eq!(decode(&buf), Ok((Message::ClientHeartbeat(ClientHeartbeat {}), n)));
/// ```
#[inline]
pub fn decode(bytes: &[u8]) -> Result<(Message, usize), DecodeError> {
    Message::decode(bytes)
}

#[cfg(test)]
mod tests;
