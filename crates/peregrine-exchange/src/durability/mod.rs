//! What makes the exchange survive a crash: start-up recovery from the journal and
//! the newest snapshot ([`startup`]), the snapshot thread ([`snapshots`]) and the
//! hasher thread with its commitment log ([`commitments`]), and the group commit
//! whose `fdatasync`s run off the matching thread ([`group_commit`]). The journal
//! append itself is the core's [`peregrine_exchange_core::CommandLog`] seam,
//! implemented by [`peregrine_exchange_core::journal::JournalLog`].

pub(crate) mod commitments;
pub(crate) mod group_commit;
#[cfg(feature = "sabotage")]
pub(crate) mod sabotage;
pub(crate) mod snapshots;
pub(crate) mod startup;
