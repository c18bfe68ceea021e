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
pub mod venue;

use peregrine_types::AccountId;

pub use answer::RequestRef;

pub use crate::admin::{BalanceQuery, Deposit, Withdraw};
use crate::message::wire_family;
pub use crate::orders::{Cancel, MassCancel, NewOrder, Replace};
pub use crate::session::{ClientHeartbeat, Logout};
use crate::DecodeError;
use admin::{AdminRejected, Balance};
use queries::{OpenOrder, OpenOrdersEnd, OpenOrdersRequest, OrderStatus, OrderStatusRequest};
use reference::InstrumentDefinition;
use reports::{Accepted, CancelRejected, Cancelled, Fill, MassCancelDone, Rejected, Replaced};
use session::{
    Challenge, LeaderRedirect, Login, LoginAccepted, LoginRejected, ReplayEnd, ReplayStart,
    ServerHeartbeat,
};
use venue::{
    AcceptedExt, CancelList, ListStatus, MarketControl, MarketControlDone, MmpRequest, MmpStatus,
    NewOrderExt, NewOrderList, Triggered,
};

wire_family! {
    /// A version-2 client → exchange message.
    Inbound {
        Login, Logout, ClientHeartbeat, NewOrder, Cancel, Replace, MassCancel,
        OrderStatusRequest, OpenOrdersRequest, Deposit, Withdraw, BalanceQuery,
        NewOrderExt, NewOrderList, CancelList, MmpRequest, MarketControl,
    }
}

wire_family! {
    /// A version-2 exchange → client message. Every one carries `session_seq`,
    /// `engine_seq` and `engine_time` right after the header.
    Outbound {
        Challenge, LoginAccepted, LoginRejected, ServerHeartbeat, ReplayStart, ReplayEnd,
        InstrumentDefinition,
        Accepted, Rejected, Fill, Cancelled, Replaced, CancelRejected, MassCancelDone,
        OrderStatus, OpenOrder, OpenOrdersEnd, Balance, AdminRejected,
        LeaderRedirect,
        AcceptedExt, Triggered, ListStatus, MmpStatus, MarketControlDone,
    }
}

wire_family! {
    /// Any version-2 order-entry message, either direction.
    Message {
        Login, Logout, ClientHeartbeat, NewOrder, Cancel, Replace, MassCancel,
        OrderStatusRequest, OpenOrdersRequest, Deposit, Withdraw, BalanceQuery,
        NewOrderExt, NewOrderList, CancelList, MmpRequest, MarketControl,
        Challenge, LoginAccepted, LoginRejected, ServerHeartbeat, ReplayStart, ReplayEnd,
        InstrumentDefinition,
        Accepted, Rejected, Fill, Cancelled, Replaced, CancelRejected, MassCancelDone,
        OrderStatus, OpenOrder, OpenOrdersEnd, Balance, AdminRejected,
        LeaderRedirect,
        AcceptedExt, Triggered, ListStatus, MmpStatus, MarketControlDone,
    }
}

/// Decodes one version-2 order-entry message (either direction) from the front of a
/// TCP byte stream; see [`crate::decode`] for the contract.
#[inline]
pub fn decode(bytes: &[u8]) -> Result<(Message, usize), DecodeError> {
    Message::decode(bytes)
}

/// Applies `$body` to the three common fields of whichever outbound message.
macro_rules! with_common {
    ($self:expr, |$m:ident| $body:expr) => {
        match $self {
            Outbound::Challenge($m) => $body,
            Outbound::LoginAccepted($m) => $body,
            Outbound::LoginRejected($m) => $body,
            Outbound::ServerHeartbeat($m) => $body,
            Outbound::ReplayStart($m) => $body,
            Outbound::ReplayEnd($m) => $body,
            Outbound::LeaderRedirect($m) => $body,
            Outbound::InstrumentDefinition($m) => $body,
            Outbound::Accepted($m) => $body,
            Outbound::Rejected($m) => $body,
            Outbound::Fill($m) => $body,
            Outbound::Cancelled($m) => $body,
            Outbound::Replaced($m) => $body,
            Outbound::CancelRejected($m) => $body,
            Outbound::MassCancelDone($m) => $body,
            Outbound::OrderStatus($m) => $body,
            Outbound::OpenOrder($m) => $body,
            Outbound::OpenOrdersEnd($m) => $body,
            Outbound::Balance($m) => $body,
            Outbound::AdminRejected($m) => $body,
            Outbound::AcceptedExt($m) => $body,
            Outbound::Triggered($m) => $body,
            Outbound::ListStatus($m) => $body,
            Outbound::MmpStatus($m) => $body,
            Outbound::MarketControlDone($m) => $body,
        }
    };
}

/// Applies `$body` to the `report_seq` and `account` of a report-stream message;
/// `$other` for every other message.
macro_rules! with_report {
    ($self:expr, |$m:ident| $body:expr, $other:expr) => {
        match $self {
            Outbound::Accepted($m) => $body,
            Outbound::Rejected($m) => $body,
            Outbound::Fill($m) => $body,
            Outbound::Cancelled($m) => $body,
            Outbound::Replaced($m) => $body,
            Outbound::CancelRejected($m) => $body,
            Outbound::MassCancelDone($m) => $body,
            Outbound::Balance($m) => $body,
            Outbound::AdminRejected($m) => $body,
            Outbound::AcceptedExt($m) => $body,
            Outbound::Triggered($m) => $body,
            Outbound::ListStatus($m) => $body,
            Outbound::MmpStatus($m) => $body,
            _ => $other,
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

    /// The account and report sequence number of a report of an account's stream;
    /// `None` for session messages, query answers and unsequenced refusals
    /// (`report_seq` 0).
    pub fn report(&self) -> Option<(AccountId, u64)> {
        with_report!(
            self,
            |m| (m.report_seq != 0).then_some((m.account, m.report_seq)),
            None
        )
    }

    /// True for the message types that can belong to an account's report stream
    /// (whatever their `report_seq`).
    pub fn is_report_type(&self) -> bool {
        with_report!(self, |_m| true, false)
    }

    /// Sets the report sequence number of a report-stream message (no effect on
    /// other messages): the exchange stamps it when it sequences the report.
    pub fn set_report_seq(&mut self, seq: u64) {
        with_report!(self, |m| m.report_seq = seq, ())
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
            Inbound::OrderStatusRequest(m) => m.into(),
            Inbound::OpenOrdersRequest(m) => m.into(),
            Inbound::Deposit(m) => m.into(),
            Inbound::Withdraw(m) => m.into(),
            Inbound::BalanceQuery(m) => m.into(),
            Inbound::NewOrderExt(m) => m.into(),
            Inbound::NewOrderList(m) => m.into(),
            Inbound::CancelList(m) => m.into(),
            Inbound::MmpRequest(m) => m.into(),
            Inbound::MarketControl(m) => m.into(),
        }
    }
}

impl From<Outbound> for Message {
    fn from(m: Outbound) -> Self {
        with_common!(m, |m| m.into())
    }
}

#[cfg(test)]
mod tests;
