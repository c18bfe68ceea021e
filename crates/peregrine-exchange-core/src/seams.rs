//! The seams between the sans-IO core and the I/O around it: who a report is for
//! ([`SessionKey`], [`Outbox`]), what the session layer hands the core ([`Request`]),
//! and where the snapshot machinery plugs in ([`SnapshotSink`]). The command log
//! ([`crate::CommandLog`]), the feed's packet output ([`crate::feed::PacketSink`]) and
//! commitments ([`peregrine_commit::CommitSink`]) are the other seams.

use peregrine_types::{AccountId, Timestamp};
use peregrine_wire::{Inbound, Outbound};

use crate::balances::VenueEngine;
use crate::codec::command::Record;

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

/// Where reports go. `account` lets the session layer redirect a report for a closed
/// session to the account's current session (reconnect).
pub trait Outbox {
    /// Queues one report (its `session_seq` is stamped by the session layer).
    fn send(&mut self, to: SessionKey, account: AccountId, msg: Outbound);
}

/// An order-entry request of a logged-in session.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    /// Sender.
    pub key: SessionKey,
    /// Sender's account.
    pub account: AccountId,
    /// The request.
    pub msg: Inbound,
    /// When its bytes were read, and when its frame was decoded (stopwatch
    /// nanoseconds, for stage timing; 0 when not timed).
    pub read_ns: u64,
    /// See `read_ns`.
    pub decoded_ns: u64,
}

/// The matching stage's side of periodic snapshots. The server's implementation
/// feeds a replica on a snapshot thread ([`crate::replica`]), so the matching thread
/// never encodes a snapshot on the order path.
pub trait SnapshotSink: Send + std::fmt::Debug {
    /// Once, when attached (after recovery, before the first order): the live state
    /// after command `seq`.
    fn seed(&mut self, engine: &VenueEngine, seq: u64, ts: Timestamp);
    /// After journaled record `seq` ran on the live engine.
    fn after_command(&mut self, seq: u64, rec: Record, engine: &VenueEngine, ts: Timestamp);
    /// After each batch's journal commit, and whenever more became durable:
    /// everything through `durable` is durable (a snapshot may cover it).
    fn after_commit(&mut self, engine: &VenueEngine, durable: u64);
}
