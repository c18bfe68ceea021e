//! Periodic snapshots of the engine, written by a background thread.
//!
//! Every `every` commands the matching thread encodes the engine state
//! ([`snapshot_codec::encode`], O(resting orders), one allocation) and keeps it
//! pending; after the batch's journal commit it hands the blob to the writer thread
//! with `try_send` on a one-slot channel (never blocking: if the previous snapshot is
//! still being written, this one is dropped and logged). The writer does the file
//! write, `fsync`, rename and retention through `SnapshotStore`. A snapshot is sent
//! only after the commit that made its last command durable, so a snapshot never
//! runs ahead of the journal.

use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::thread::JoinHandle;

use crate::balances::VenueEngine as MatchingEngine;
use peregrine_journal::SnapshotStore;
use peregrine_types::Timestamp;

use crate::snapshot_codec;

/// The matching thread's side of the snapshot writer.
#[derive(Debug)]
pub struct Snapshotter {
    every: u64,
    pending: Option<(u64, Vec<u8>)>,
    tx: Option<SyncSender<(u64, Vec<u8>)>>,
    writer: Option<JoinHandle<()>>,
}

impl Snapshotter {
    /// Starts the writer thread over `store`; a snapshot every `every` commands.
    pub fn spawn(mut store: SnapshotStore, every: u64) -> std::io::Result<Self> {
        let (tx, rx) = sync_channel::<(u64, Vec<u8>)>(1);
        let writer = std::thread::Builder::new()
            .name("snapshots".into())
            .spawn(move || {
                while let Ok((seq, blob)) = rx.recv() {
                    let bytes = blob.len();
                    match store.write(seq, blob) {
                        Ok(w) => {
                            crate::log!(
                                "snapshot through seq {seq} written ({bytes} bytes): {}",
                                w.path.display()
                            );
                            if !w.removed_segments.is_empty() {
                                crate::log!(
                                    "journal: pruned {} segment(s) covered by the oldest retained snapshot",
                                    w.removed_segments.len()
                                );
                            }
                        }
                        Err(e) => crate::log!("snapshot through seq {seq} failed: {e}"),
                    }
                }
            })?;
        Ok(Snapshotter {
            every: every.max(1),
            pending: None,
            tx: Some(tx),
            writer: Some(writer),
        })
    }

    /// After command `seq` ran: captures the state if a snapshot is due.
    #[inline]
    pub fn after_command(&mut self, seq: u64, engine: &MatchingEngine, ts: Timestamp) {
        if seq.is_multiple_of(self.every) {
            self.pending = Some((seq, snapshot_codec::encode(engine, seq, ts)));
        }
    }

    /// After the batch's journal commit: hands a pending snapshot to the writer.
    #[inline]
    pub fn after_commit(&mut self) {
        let (Some(p), Some(tx)) = (self.pending.take(), self.tx.as_ref()) else {
            return;
        };
        match tx.try_send(p) {
            Ok(()) => {}
            Err(TrySendError::Full((seq, _))) => {
                crate::log!(
                    "snapshot through seq {seq} skipped: the previous one is still being written"
                );
            }
            Err(TrySendError::Disconnected((seq, _))) => {
                crate::log!("snapshot through seq {seq} skipped: the writer thread is gone");
            }
        }
    }
}

impl Drop for Snapshotter {
    /// Lets the writer finish the snapshot it has, then joins it.
    fn drop(&mut self) {
        self.tx = None;
        if let Some(w) = self.writer.take() {
            let _ = w.join();
        }
    }
}
