//! What makes the exchange survive a crash: start-up recovery from the journal and
//! the newest snapshot ([`startup`]), the snapshot thread ([`snapshots`]) and the
//! hasher thread with its commitment log ([`commitments`]). The journal append and
//! group commit themselves are the core's [`peregrine_exchange_core::CommandLog`]
//! seam, implemented by [`peregrine_exchange_core::journal::JournalLog`].

pub mod commitments;
pub mod snapshots;
pub mod startup;
