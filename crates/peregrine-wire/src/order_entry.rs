//! Order-entry message families and the stream decoder.
//!
//! [`Inbound`] is what an exchange gateway decodes, [`Outbound`] what a client
//! decodes; [`Message`] spans both (for tools, logs and captures). Each has a
//! `decode(bytes) -> Result<(msg, consumed), DecodeError>` for framing a TCP stream.

use crate::admin::{AdminRejected, Balance, BalanceQuery, Deposit, Withdraw};
use crate::message::wire_family;
use crate::orders::{Cancel, MassCancel, NewOrder, Replace};
use crate::reports::{Accepted, CancelRejected, Cancelled, Fill, Rejected, Replaced};
use crate::session::{
    ClientHeartbeat, Login, LoginAccepted, LoginRejected, Logout, ServerHeartbeat,
};
use crate::DecodeError;

wire_family! {
    /// A client → exchange message.
    Inbound {
        Login, Logout, ClientHeartbeat, NewOrder, Cancel, Replace, MassCancel,
        Deposit, Withdraw, BalanceQuery,
    }
}

wire_family! {
    /// An exchange → client message. Every one carries `session_seq`, `engine_seq`
    /// and `engine_time` right after the header.
    Outbound {
        LoginAccepted, LoginRejected, ServerHeartbeat,
        Accepted, Rejected, Fill, Cancelled, Replaced, CancelRejected,
        Balance, AdminRejected,
    }
}

wire_family! {
    /// Any order-entry message, either direction.
    Message {
        Login, Logout, ClientHeartbeat, NewOrder, Cancel, Replace, MassCancel,
        Deposit, Withdraw, BalanceQuery,
        LoginAccepted, LoginRejected, ServerHeartbeat,
        Accepted, Rejected, Fill, Cancelled, Replaced, CancelRejected,
        Balance, AdminRejected,
    }
}

/// Decodes one order-entry message (either direction) from the front of a TCP byte
/// stream: the message and the bytes it used, or [`DecodeError::Incomplete`] when more
/// bytes are needed, or another [`DecodeError`] for bytes that can never be valid.
///
/// ```
/// use peregrine_wire::{decode, session::ClientHeartbeat, Message, WireMessage};
/// let mut buf = [0u8; 64];
/// let n = ClientHeartbeat {}.encode(&mut buf).unwrap();
/// assert!(decode(&buf[..n - 1]).unwrap_err().is_incomplete());
/// assert_eq!(decode(&buf), Ok((Message::ClientHeartbeat(ClientHeartbeat {}), n)));
/// ```
#[inline]
pub fn decode(bytes: &[u8]) -> Result<(Message, usize), DecodeError> {
    Message::decode(bytes)
}

/// Applies `$body` to the three common fields of whichever outbound message.
macro_rules! with_common {
    ($self:expr, |$m:ident| $body:expr) => {
        match $self {
            Outbound::LoginAccepted($m) => $body,
            Outbound::LoginRejected($m) => $body,
            Outbound::ServerHeartbeat($m) => $body,
            Outbound::Accepted($m) => $body,
            Outbound::Rejected($m) => $body,
            Outbound::Fill($m) => $body,
            Outbound::Cancelled($m) => $body,
            Outbound::Replaced($m) => $body,
            Outbound::CancelRejected($m) => $body,
            Outbound::Balance($m) => $body,
            Outbound::AdminRejected($m) => $body,
        }
    };
}

impl Outbound {
    /// The per-session sequence number.
    pub fn session_seq(&self) -> u64 {
        with_common!(self, |m| m.session_seq)
    }

    /// The engine's global sequence number.
    pub fn engine_seq(&self) -> u64 {
        with_common!(self, |m| m.engine_seq)
    }

    /// The engine timestamp.
    pub fn engine_time(&self) -> peregrine_types::Timestamp {
        with_common!(self, |m| m.engine_time)
    }

    /// Sets the per-session sequence number: the session layer stamps each message
    /// just before sending it.
    pub fn set_session_seq(&mut self, seq: u64) {
        with_common!(self, |m| m.session_seq = seq)
    }
}

impl From<Inbound> for Message {
    fn from(m: Inbound) -> Self {
        match m {
            Inbound::Login(m) => m.into(),
            Inbound::Logout(m) => m.into(),
            Inbound::ClientHeartbeat(m) => m.into(),
            Inbound::NewOrder(m) => m.into(),
            Inbound::Cancel(m) => m.into(),
            Inbound::Replace(m) => m.into(),
            Inbound::MassCancel(m) => m.into(),
            Inbound::Deposit(m) => m.into(),
            Inbound::Withdraw(m) => m.into(),
            Inbound::BalanceQuery(m) => m.into(),
        }
    }
}

impl From<Outbound> for Message {
    fn from(m: Outbound) -> Self {
        match m {
            Outbound::LoginAccepted(m) => m.into(),
            Outbound::LoginRejected(m) => m.into(),
            Outbound::ServerHeartbeat(m) => m.into(),
            Outbound::Accepted(m) => m.into(),
            Outbound::Rejected(m) => m.into(),
            Outbound::Fill(m) => m.into(),
            Outbound::Cancelled(m) => m.into(),
            Outbound::Replaced(m) => m.into(),
            Outbound::CancelRejected(m) => m.into(),
            Outbound::Balance(m) => m.into(),
            Outbound::AdminRejected(m) => m.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WireMessage;

    #[test]
    fn families_partition_message() {
        assert_eq!(
            Inbound::MESSAGES.len() + Outbound::MESSAGES.len(),
            Message::MESSAGES.len()
        );
        for d in Inbound::MESSAGES {
            assert!(
                d.msg_type < 0x80,
                "{} inbound codes have the top bit clear",
                d.name
            );
            assert_eq!(Outbound::size_of_type(d.msg_type), None);
        }
        for d in Outbound::MESSAGES {
            assert!(
                d.msg_type >= 0x80,
                "{} outbound codes have the top bit set",
                d.name
            );
        }
    }

    #[test]
    fn inbound_decoder_refuses_outbound_types() {
        let mut buf = [0u8; 64];
        let n = ServerHeartbeat::sample(&[1]).encode(&mut buf).unwrap();
        assert_eq!(
            Inbound::decode(&buf[..n]),
            Err(DecodeError::UnknownType(0x83))
        );
    }

    #[test]
    fn set_session_seq_stamps_any_outbound() {
        for i in 0..Outbound::MESSAGES.len() {
            let mut m = Outbound::sample(i, &[7, 8, 9]);
            m.set_session_seq(42);
            assert_eq!(m.session_seq(), 42);
            assert_eq!(m.engine_seq(), 8);
            assert_eq!(m.engine_time().0, 9);
            assert_eq!(Message::from(m).msg_type(), m.msg_type());
        }
    }
}
