//! Session state that must survive a restart: the next sequence numbers and every
//! application message sent (for resends).
//!
//! [`MessageStore`] is what the session layer calls; [`FileStore`] keeps it in one
//! append-only file per session (records with a CRC-32C, torn tail cut on open,
//! damage anywhere else refused) and [`MemoryStore`] in memory (tests, and initiators
//! that reset every logon). The session never owns the file: the caller builds the
//! store and hands it in.

mod file;
mod memory;
mod record;

pub use file::{Durability, FileStore};
pub use memory::MemoryStore;
pub use record::{scan, RecordKind, ScanError, Scanned};

use thiserror::Error;

/// Why the store failed. A session whose store fails stops (it cannot promise
/// resends), so these are rare and loud.
#[derive(Debug, Error)]
pub enum StoreError {
    /// Another process has the store open (a second gateway on the same files).
    #[error("message store: {0}")]
    Locked(#[from] peregrine_types::lock::LockError),
    /// The operating system refused a read, write or sync.
    #[error("message store I/O on {path}: {source}")]
    Io {
        /// The store file.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The file is damaged before its last record (not a torn tail): refusing to
    /// guess which messages were sent.
    #[error("message store {path} damaged at byte {offset}: {error}")]
    Corrupt {
        /// The store file.
        path: String,
        /// Where the damaged record starts.
        offset: u64,
        /// What is wrong.
        error: ScanError,
    },
    /// A message was stored out of sequence (a bug in the caller).
    #[error("message {seq} stored out of sequence (next is {next})")]
    OutOfSequence {
        /// The sequence number given.
        seq: u64,
        /// The next one expected.
        next: u64,
    },
}

/// What the session layer needs from persistent storage.
pub trait MessageStore: std::fmt::Debug {
    /// The sequence number the next outbound message takes.
    fn next_sender_seq(&self) -> u64;
    /// The sequence number expected on the next inbound message.
    fn next_target_seq(&self) -> u64;
    /// When the current sequence (since the last reset) began, in ns since the epoch.
    fn creation_time(&self) -> u64;
    /// Records that outbound message `seq` was sent. `message` is the whole
    /// application message to resend later, or `None` for an administrative message
    /// (gap-filled on resend). `seq` must be [`MessageStore::next_sender_seq`].
    fn store_outbound(&mut self, seq: u64, message: Option<&[u8]>) -> Result<(), StoreError>;
    /// Moves the next outbound sequence number forward without storing messages
    /// (the range in between will be gap-filled on resend).
    fn advance_sender_seq(&mut self, next: u64) -> Result<(), StoreError>;
    /// Records the next expected inbound sequence number.
    fn set_next_target_seq(&mut self, next: u64) -> Result<(), StoreError>;
    /// Calls `f(seq, message)` for every stored application message with
    /// `begin <= seq <= end`, in order.
    fn outbound_range(
        &mut self,
        begin: u64,
        end: u64,
        f: &mut dyn FnMut(u64, &[u8]),
    ) -> Result<(), StoreError>;
    /// Starts a new sequence: both numbers back to 1, stored messages dropped.
    fn reset(&mut self, now_ns: u64) -> Result<(), StoreError>;
    /// Makes every record so far durable (per the store's policy). The session calls
    /// it before any byte it produced may reach the network.
    fn flush(&mut self) -> Result<(), StoreError>;
}

/// A boxed store is a store (a caller that picks file or memory at run time).
impl<S: MessageStore + ?Sized> MessageStore for Box<S> {
    fn next_sender_seq(&self) -> u64 {
        (**self).next_sender_seq()
    }
    fn next_target_seq(&self) -> u64 {
        (**self).next_target_seq()
    }
    fn creation_time(&self) -> u64 {
        (**self).creation_time()
    }
    fn store_outbound(&mut self, seq: u64, message: Option<&[u8]>) -> Result<(), StoreError> {
        (**self).store_outbound(seq, message)
    }
    fn advance_sender_seq(&mut self, next: u64) -> Result<(), StoreError> {
        (**self).advance_sender_seq(next)
    }
    fn set_next_target_seq(&mut self, next: u64) -> Result<(), StoreError> {
        (**self).set_next_target_seq(next)
    }
    fn outbound_range(
        &mut self,
        begin: u64,
        end: u64,
        f: &mut dyn FnMut(u64, &[u8]),
    ) -> Result<(), StoreError> {
        (**self).outbound_range(begin, end, f)
    }
    fn reset(&mut self, now_ns: u64) -> Result<(), StoreError> {
        (**self).reset(now_ns)
    }
    fn flush(&mut self) -> Result<(), StoreError> {
        (**self).flush()
    }
}
