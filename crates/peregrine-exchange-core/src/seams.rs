//! The seams between the sans-IO core and the I/O around it: who a report is for
//! ([`SessionKey`], [`Outbox`]), what the session layer hands the core ([`Request`]),
//! and where the snapshot machinery plugs in ([`SnapshotSink`]). The command log
//! ([`crate::CommandLog`]), the feed's packet output ([`crate::feed::PacketSink`]) and
//! commitments ([`peregrine_commit::CommitSink`]) are the other seams.

use peregrine_types::{AccountId, Timestamp};
use peregrine_wire::v2::{Inbound, Outbound};

use crate::balances::VenueEngine;
use crate::codec::command::Record;
use crate::reports::{Counters, ReportStore};

/// Identifies a session across topologies: slot index in the low 32 bits, the slot's
/// generation in the high 32 (so a report for a closed session is never delivered to
/// the slot's next occupant).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SessionKey(pub u64);

impl SessionKey {
    /// The owner key of orders rebuilt from the journal: never a live slot, so their
    /// reports go to the account's current session.
    pub const RECOVERED: SessionKey = SessionKey(u64::MAX);
    /// Builds a key.
    pub const fn new(slot: u32, generation: u32) -> Self {
        SessionKey(((generation as u64) << 32) | slot as u64)
    }
    /// Slot index.
    pub const fn slot(self) -> usize {
        (self.0 & 0xFFFF_FFFF) as usize
    }
    /// Generation.
    pub const fn generation(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

/// Where reports go (protocol version 2, `docs/protocol.md` 4.2).
pub trait Outbox {
    /// A report of `account`'s stream, `report_seq` stamped: every session following
    /// the account gets it (in stream order); an admin answer (`Balance`,
    /// `AdminRejected`) about another account also goes to `requester` (the session
    /// whose request caused it). The counterparty of a fill never gets the other
    /// side's report.
    fn report(&mut self, account: AccountId, msg: Outbound, requester: SessionKey);
    /// An answer outside the stream (`report_seq` 0: query answers, refusals before
    /// sequencing), to the requesting session only.
    fn answer(&mut self, to: SessionKey, msg: Outbound);
    /// Whether this outbox takes order reports at all. One that does not (a replay
    /// of recorded data, which reads the book events instead) gets none, and the
    /// accounts' report streams are not numbered for it: the core skips building them.
    #[inline]
    fn wants_reports(&self) -> bool {
        true
    }
}

/// Whose orders a session may see and query.
pub use crate::queries::Scope;

/// An order-entry request of a logged-in session.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    /// Sender.
    pub key: SessionKey,
    /// Sender's account.
    pub account: AccountId,
    /// The sender's scope: its own account, another (a drop copy) or every account.
    pub scope: Scope,
    /// The request.
    pub msg: Inbound,
    /// When its bytes were read, and when its frame was decoded (stopwatch
    /// nanoseconds, for stage timing; 0 when not timed).
    pub read_ns: u64,
    /// See `read_ns`.
    pub decoded_ns: u64,
}

impl Request {
    /// A request of a trading session of `account`.
    pub fn trading(key: SessionKey, account: AccountId, msg: Inbound) -> Self {
        Request {
            key,
            account,
            scope: Scope::Account(account),
            msg,
            read_ns: 0,
            decoded_ns: 0,
        }
    }

    /// Cancel-on-disconnect: the mass cancel of every open order of `account` (every
    /// instrument, both sides, resting and parked) that the session layer hands the
    /// matching stage when a session that asked for it ends without a `Logout`. It
    /// comes from no session ([`SessionKey::RECOVERED`]: its `MassCancelDone` reaches
    /// the account's stream only), with client order id
    /// `crate::reports::CANCEL_ON_DISCONNECT`; it is sequenced and journaled like
    /// any mass cancel (in batch mode, in the next tick).
    pub fn cancel_on_disconnect(account: AccountId) -> Self {
        let msg = Inbound::MassCancel(peregrine_wire::orders::MassCancel {
            client_order_id: crate::route::reports::CANCEL_ON_DISCONNECT,
            instrument: None,
            side: None,
        });
        Request::trading(SessionKey::RECOVERED, account, msg)
    }
}

/// The matching stage's side of periodic snapshots. The server's implementation
/// feeds a replica on a snapshot thread ([`crate::replica`]), so the matching thread
/// never encodes a snapshot on the order path.
pub trait SnapshotSink: Send + std::fmt::Debug {
    /// Once, when attached (after recovery, before the first order): the live state
    /// after command `seq`, with each account's next report sequence number and the
    /// report streams' retained reports (when the core still collects them).
    fn seed(
        &mut self,
        engine: &VenueEngine,
        seq: u64,
        ts: Timestamp,
        reports: &Counters,
        retained: Option<&ReportStore>,
    );
    /// After journaled record `seq` ran on the live engine (with the report counters
    /// after it).
    fn after_command(
        &mut self,
        seq: u64,
        rec: Record,
        engine: &VenueEngine,
        ts: Timestamp,
        reports: &Counters,
    );
    /// After each batch's journal commit, and whenever more became durable:
    /// everything through `durable` is durable (a snapshot may cover it). A sink that
    /// encodes the live state here takes the report counters too.
    fn after_commit(&mut self, engine: &VenueEngine, durable: u64, reports: &Counters);
}
