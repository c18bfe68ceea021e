//! The node's `fdatasync` thread: the Raft log's records are written to the page
//! cache on the node's thread (`DurableLog::write`), and made durable here, so the
//! node thread never blocks in a sync: heartbeats, votes and append responses keep
//! flowing while the disk works, and a leader's appends reach the followers while
//! its own sync runs (they sync in parallel; an entry commits once a majority has
//! it durable).
//!
//! The shell ([`crate::runner`]) asks for a sync through the last written seq
//! ([`Syncer::request`]); the thread syncs the active segment, publishes how far the
//! journal is durable ([`Syncer::durable`]) and wakes the node's loop, which then
//! sends the acknowledgements that waited for it ([`crate::Node::synced`]). One sync
//! covers every record written before it started, so under load each sync covers
//! many Readies. A failed `fdatasync` leaves the page cache in an unknown state
//! (fsyncgate): the thread stops, nothing more becomes durable, and
//! [`Syncer::failed`] stops the node.
//!
//! The same pattern as the single-node exchange's group commit
//! (`peregrine-exchange`'s `durability/group_commit.rs`), over the cluster's journal.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use peregrine_journal::{FileHandle, Journal};

use crate::transport::Waker;

/// What the node thread and the sync thread share.
#[derive(Debug)]
struct Shared {
    /// The last journal seq written and to be synced (node → sync).
    requested: AtomicU64,
    /// The last journal seq durable (sync → node).
    durable: AtomicU64,
    /// A sync failed: nothing more becomes durable.
    failed: AtomicBool,
    stop: AtomicBool,
    /// The active segment's handle (replaced after a rotation).
    file: Mutex<Option<FileHandle>>,
    syncs: AtomicU64,
    sync_ns_max: AtomicU64,
}

/// The sync thread of one node's journal.
#[derive(Debug)]
pub struct Syncer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    /// First seq of the segment whose handle the sync thread holds.
    segment: Option<u64>,
}

impl Syncer {
    /// Starts the thread for `journal` (recovered: what it holds is durable or was
    /// synced at open), waking `waker` after each sync; at nice `nice` if given.
    pub fn spawn(journal: &Journal, waker: Waker, nice: Option<i32>) -> std::io::Result<Self> {
        let last = journal.last_seq().unwrap_or(0);
        let handle = journal.sync_handle().map_err(std::io::Error::other)?;
        let segment = handle.as_ref().map(|(first, _)| *first);
        let shared = Arc::new(Shared {
            requested: AtomicU64::new(last),
            durable: AtomicU64::new(last),
            failed: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            file: Mutex::new(handle.map(|(_, f)| f)),
            syncs: AtomicU64::new(0),
            sync_ns_max: AtomicU64::new(0),
        });
        let s = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("cluster-sync".into())
            .spawn(move || {
                if let Some(nice) = nice {
                    crate::os::set_nice("cluster-sync", nice);
                }
                sync_loop(&s, &waker);
            })?;
        Ok(Syncer {
            shared,
            thread: Some(thread),
            segment,
        })
    }

    /// Asks for everything through `seq` (written to `journal`'s active segment, or
    /// to segments a rotation sealed and synced) to be made durable.
    pub fn request(&mut self, journal: &Journal, seq: u64) -> std::io::Result<()> {
        // Relaxed: only this thread stores `requested`.
        if seq <= self.shared.requested.load(Ordering::Relaxed) {
            return Ok(());
        }
        if journal.active_segment() != self.segment {
            // A rotation: the sealed segment was synced by it; the thread needs the
            // new segment's handle.
            let handle = journal.sync_handle().map_err(std::io::Error::other)?;
            self.segment = handle.as_ref().map(|(first, _)| *first);
            *self
                .shared
                .file
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = handle.map(|(_, f)| f);
        }
        // Release: the sync thread's Acquire load of `requested` sees the written
        // bytes and the handle stored above.
        self.shared.requested.store(seq, Ordering::Release);
        if let Some(t) = &self.thread {
            t.thread().unpark();
        }
        Ok(())
    }

    /// The last journal seq known durable.
    pub fn durable(&self) -> u64 {
        // Acquire: pairs with the Release store after each fdatasync.
        self.shared.durable.load(Ordering::Acquire)
    }

    /// Whether a sync failed (the node must stop: nothing more becomes durable).
    pub fn failed(&self) -> bool {
        // Acquire: pairs with the Release store in `sync_loop`.
        self.shared.failed.load(Ordering::Acquire)
    }

    /// Syncs done, and the longest one in nanoseconds.
    pub fn stats(&self) -> (u64, u64) {
        // Relaxed: statistics.
        (
            self.shared.syncs.load(Ordering::Relaxed),
            self.shared.sync_ns_max.load(Ordering::Relaxed),
        )
    }
}

impl Drop for Syncer {
    fn drop(&mut self) {
        // Release: pairs with the Acquire load in `sync_loop`.
        self.shared.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

fn sync_loop(s: &Shared, waker: &Waker) {
    loop {
        // Acquire: pairs with the Release store in `request`.
        let target = s.requested.load(Ordering::Acquire);
        // Relaxed: only this thread stores `durable`.
        if target <= s.durable.load(Ordering::Relaxed) {
            // Acquire: pairs with the Release store in `Drop`.
            if s.stop.load(Ordering::Acquire) {
                return;
            }
            std::thread::park_timeout(Duration::from_millis(10));
            continue;
        }
        let started = Instant::now();
        let result = {
            let file = s.file.lock().unwrap_or_else(PoisonError::into_inner);
            file.as_ref().map_or(Ok(()), FileHandle::sync_data)
        };
        if let Err(e) = result {
            eprintln!(
                "{} cluster: journal fdatasync failed ({e}): nothing after seq {} becomes durable; stopping",
                crate::os::utc_now(),
                s.durable.load(Ordering::Relaxed)
            );
            // Release: pairs with the Acquire load in `Syncer::failed`.
            s.failed.store(true, Ordering::Release);
            waker.wake();
            return;
        }
        let ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        // Relaxed: statistics.
        s.syncs.fetch_add(1, Ordering::Relaxed);
        s.sync_ns_max.fetch_max(ns, Ordering::Relaxed);
        // Release: the node thread's Acquire load of `durable` then sends what waited.
        s.durable.store(target, Ordering::Release);
        waker.wake();
    }
}
