//! Group commit off the matching thread (the LMAX / Aeron pattern).
//!
//! The matching thread appends every command to the journal's buffer before it
//! executes it and, at the end of each batch, `write`s the buffer to the segment
//! ([`GroupCommit::commit`]) and asks the **sync thread** to make it durable. It does
//! not wait: it goes on with the next batch. The sync thread `fdatasync`s the
//! segment and publishes how far the journal is durable ([`CommandLog::durable_through`]);
//! the core and the session table release each batch's reports and feed messages
//! only once that has reached the batch's last sequence number. So `kill -9` or a
//! power loss never loses a result a client could have seen, and a 0.2–1 ms sync
//! never stops matching.
//!
//! One sync covers every batch written before it started: under load the syncs
//! group many batches each. The sync thread parks when it has nothing to do; the
//! matching thread unparks it after a write, and the sync thread signals an
//! eventfd after each sync, which the polling loop watches, so a parked loop wakes
//! when results become releasable.
//!
//! A failed `fdatasync` leaves the page cache in an unknown state (fsyncgate): the
//! sync thread stops, durability never advances, and the next commit returns the
//! error, which stops the exchange.
//!
//! [`GroupCommit::stepped`] runs the same commit with no thread: a deterministic
//! simulator calls [`GroupCommit::sync_now`] (one pass of the sync thread's loop)
//! when its simulated `fdatasync` completes.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use peregrine_book::Command;
use peregrine_exchange_core::balances::AdminCommand;
use peregrine_exchange_core::codec::command::MassCancelRequest;
use peregrine_exchange_core::journal::JournalLog;
use peregrine_exchange_core::CommandLog;
use peregrine_journal::stats::{log2_bucket, SYNC_BUCKETS};
use peregrine_journal::{FileHandle, JournalStats};
use rustix::event::{eventfd, EventfdFlags};

/// What the two threads share.
#[derive(Debug)]
struct Shared {
    /// The last sequence number written and to be synced (matching → sync).
    requested: AtomicU64,
    /// The last sequence number durable (sync → matching).
    durable: AtomicU64,
    /// A sync failed: nothing more becomes durable.
    failed: AtomicBool,
    stop: AtomicBool,
    /// The active segment's handle (replaced after a rotation).
    file: Mutex<Option<FileHandle>>,
    /// Signalled after each sync (watched by the polling loop; none when stepped).
    wake: Option<OwnedFd>,
    syncs: AtomicU64,
    sync_ns_sum: AtomicU64,
    sync_ns_buckets: [AtomicU64; SYNC_BUCKETS],
}

/// A [`JournalLog`] whose `fdatasync`s run on a sync thread.
#[derive(Debug)]
pub(crate) struct GroupCommit {
    log: JournalLog,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    /// First sequence number of the segment whose handle the sync thread has.
    segment: Option<u64>,
    /// Last sequence number appended.
    appended: u64,
}

impl GroupCommit {
    /// Starts the sync thread for `log` (recovered, positioned at its end), at nice
    /// value `nice` if given (`journal.sync_nice`). Its first sync covers what
    /// recovery found in the page cache.
    pub(crate) fn spawn(log: JournalLog, nice: Option<i32>) -> std::io::Result<Self> {
        let wake = eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?;
        let mut g = Self::new(log, Some(wake))?;
        let s = Arc::clone(&g.shared);
        let thread = std::thread::Builder::new()
            .name("journal-sync".into())
            .spawn(move || {
                if let Some(nice) = nice {
                    set_nice(nice);
                }
                sync_loop(&s);
            })?;
        g.thread = Some(thread);
        Ok(g)
    }

    /// The same commit with no sync thread: the caller runs each sync
    /// ([`GroupCommit::sync_now`]) when it decides the `fdatasync` happens.
    pub(crate) fn stepped(log: JournalLog) -> std::io::Result<Self> {
        Self::new(log, None)
    }

    fn new(log: JournalLog, wake: Option<OwnedFd>) -> std::io::Result<Self> {
        let last = log.journal().last_seq().unwrap_or(0);
        let handle = log.journal().sync_handle().map_err(std::io::Error::other)?;
        let segment = handle.as_ref().map(|(first, _)| *first);
        let shared = Arc::new(Shared {
            requested: AtomicU64::new(last),
            durable: AtomicU64::new(0),
            failed: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            file: Mutex::new(handle.map(|(_, f)| f)),
            wake,
            syncs: AtomicU64::new(0),
            sync_ns_sum: AtomicU64::new(0),
            sync_ns_buckets: std::array::from_fn(|_| AtomicU64::new(0)),
        });
        Ok(GroupCommit {
            log,
            shared,
            thread: None,
            segment,
            appended: last,
        })
    }

    /// The eventfd signalled after every sync, for the polling loop to watch (none
    /// when stepped).
    pub(crate) fn wake_fd(&self) -> Option<BorrowedFd<'_>> {
        self.shared.wake.as_ref().map(AsFd::as_fd)
    }

    /// Stepped: whether a sync has something to cover.
    pub(crate) fn sync_wanted(&self) -> bool {
        // Relaxed: stepped, one thread.
        !self.shared.failed.load(Ordering::Relaxed)
            && self.shared.requested.load(Ordering::Relaxed)
                > self.shared.durable.load(Ordering::Relaxed)
    }

    /// Stepped: one pass of the sync thread's loop, on the caller's thread (syncs
    /// what was written and publishes it durable). Returns whether it synced.
    pub(crate) fn sync_now(&self) -> bool {
        sync_once(&self.shared) == Synced::Yes
    }

    fn check(&self) -> std::io::Result<()> {
        // Acquire: pairs with the Release store of `failed` in the sync thread.
        if self.shared.failed.load(Ordering::Acquire) {
            return Err(std::io::Error::other(
                "journal fdatasync failed on the sync thread: refusing to go on",
            ));
        }
        Ok(())
    }
}

impl CommandLog for GroupCommit {
    #[inline]
    fn append(&mut self, seq: u64, cmd: &Command) -> std::io::Result<()> {
        self.log.append(seq, cmd)?;
        self.appended = seq;
        Ok(())
    }

    fn append_admin(&mut self, seq: u64, cmd: &AdminCommand) -> std::io::Result<()> {
        self.log.append_admin(seq, cmd)?;
        self.appended = seq;
        Ok(())
    }

    fn append_mass_cancel(&mut self, seq: u64, m: &MassCancelRequest) -> std::io::Result<()> {
        self.log.append_mass_cancel(seq, m)?;
        self.appended = seq;
        Ok(())
    }

    fn commit(&mut self) -> std::io::Result<()> {
        self.check()?;
        // Relaxed: only this thread stores `requested`.
        if self.appended <= self.shared.requested.load(Ordering::Relaxed) {
            return Ok(());
        }
        let journal = self.log.journal_mut();
        journal.write().map_err(std::io::Error::other)?;
        if journal.active_segment() != self.segment {
            // A rotation (or the first segment): the sync thread needs the new
            // segment's handle; the sealed one was synced by the rotation.
            let handle = journal.sync_handle().map_err(std::io::Error::other)?;
            self.segment = handle.as_ref().map(|(first, _)| *first);
            let mut file = self
                .shared
                .file
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            *file = handle.map(|(_, f)| f);
        }
        // Release: the sync thread's Acquire load of `requested` sees the written
        // bytes and the file handle set above.
        self.shared
            .requested
            .store(self.appended, Ordering::Release);
        if let Some(t) = &self.thread {
            t.thread().unpark();
        }
        Ok(())
    }

    /// Moves the high-water mark up to what the sync thread has made durable (one
    /// `pwrite`, off the order path; never ahead of the synced records).
    fn housekeeping(&mut self) -> std::io::Result<()> {
        let durable = self.durable_through();
        self.log
            .journal_mut()
            .write_mark(durable)
            .map_err(std::io::Error::other)
    }

    #[inline]
    fn durable_through(&self) -> u64 {
        // Acquire: pairs with the Release store after each fdatasync.
        self.shared.durable.load(Ordering::Acquire)
    }

    fn stats(&self) -> Option<JournalStats> {
        let mut s = self.log.stats()?;
        let sh = &self.shared;
        // Relaxed: statistics, each counter on its own.
        s.syncs += sh.syncs.load(Ordering::Relaxed);
        s.sync_ns_sum = s
            .sync_ns_sum
            .saturating_add(sh.sync_ns_sum.load(Ordering::Relaxed));
        for (b, a) in s.sync_ns_buckets.iter_mut().zip(&sh.sync_ns_buckets) {
            *b += a.load(Ordering::Relaxed);
        }
        Some(s)
    }
}

impl Drop for GroupCommit {
    fn drop(&mut self) {
        // Release: pairs with the Acquire load in `sync_loop`.
        self.shared.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

/// Sets this thread's nice value (Linux: per thread); a refusal is logged, not fatal:
/// durability does not depend on it, only how soon a sync runs on a busy machine.
fn set_nice(nice: i32) {
    let me = rustix::thread::gettid();
    match rustix::process::setpriority_process(Some(me), nice) {
        Ok(()) => log::info!("journal-sync thread at nice {nice}"),
        Err(e) => log::warn!(
            "journal.sync_nice = {nice} refused ({e}): the sync thread keeps the process's \
             priority; allow it with CAP_SYS_NICE or RLIMIT_NICE (systemd LimitNICE=)"
        ),
    }
}

fn sync_loop(s: &Shared) {
    loop {
        match sync_once(s) {
            Synced::Yes => {}
            Synced::Failed => return,
            Synced::Nothing => {
                // Acquire: pairs with the Release store in `Drop`.
                if s.stop.load(Ordering::Acquire) {
                    return;
                }
                std::thread::park_timeout(Duration::from_millis(10));
            }
        }
    }
}

/// What one pass of the sync loop did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Synced {
    /// Nothing was waiting.
    Nothing,
    /// Synced and published.
    Yes,
    /// The `fdatasync` failed: nothing more becomes durable.
    Failed,
}

/// One pass: `fdatasync` what was requested and publish it durable.
fn sync_once(s: &Shared) -> Synced {
    // Acquire: pairs with the Release store in `commit`.
    let target = s.requested.load(Ordering::Acquire);
    // Relaxed: only this thread stores `durable`; Acquire: the stepped caller reads
    // `failed` on its own thread.
    if target <= s.durable.load(Ordering::Relaxed) || s.failed.load(Ordering::Acquire) {
        return Synced::Nothing;
    }
    let started = Instant::now();
    let result = {
        let file = s.file.lock().unwrap_or_else(PoisonError::into_inner);
        file.as_ref().map_or(Ok(()), FileHandle::sync_data)
    };
    if let Err(e) = result {
        log::warn!(
            "journal: fdatasync failed ({e}): nothing after seq {} is released; stopping",
            s.durable.load(Ordering::Relaxed)
        );
        // Release: pairs with the Acquire load in `GroupCommit::check`.
        s.failed.store(true, Ordering::Release);
        return Synced::Failed;
    }
    let ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    // Relaxed: statistics.
    s.syncs.fetch_add(1, Ordering::Relaxed);
    s.sync_ns_sum.fetch_add(ns, Ordering::Relaxed);
    s.sync_ns_buckets[log2_bucket(ns)].fetch_add(1, Ordering::Relaxed);
    // Release: the matching thread's Acquire load of `durable` releases results.
    s.durable.store(target, Ordering::Release);
    if let Some(wake) = &s.wake {
        let _ = rustix::io::write(wake, &1u64.to_ne_bytes());
    }
    Synced::Yes
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_book::{Action, Cancel};
    use peregrine_exchange_core::journal::JournalSection;
    use peregrine_exchange_core::replay::open_journal;
    use peregrine_types::{AccountId, ClientOrderId, InstrumentId, OrderId, Timestamp};

    fn cmd(i: u64) -> Command {
        Command {
            ts: Timestamp(i),
            action: Action::Cancel(Cancel {
                instrument: InstrumentId(1),
                id: OrderId(i),
                account: AccountId(1),
                client_id: ClientOrderId(i),
            }),
        }
    }

    #[test]
    fn durability_follows_commits_and_survives_rotations() {
        let dir = tempfile::tempdir().unwrap();
        let section = JournalSection {
            segment_bytes: 8192,
            ..JournalSection::new(dir.path())
        };
        let (journal, _) = open_journal(&section, peregrine_journal::LossPolicy::Refuse).unwrap();
        let mut g = GroupCommit::spawn(JournalLog::new(journal), None).unwrap();
        assert_eq!(g.durable_through(), 0);
        for i in 1..=500 {
            g.append(i, &cmd(i)).unwrap();
            if i % 7 == 0 {
                g.commit().unwrap();
            }
        }
        g.commit().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while g.durable_through() < 500 {
            assert!(
                Instant::now() < deadline,
                "durable stuck at {}",
                g.durable_through()
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        let stats = g.stats().unwrap();
        assert!(stats.syncs >= 1 && stats.records == 500, "{stats:?}");
        drop(g);
        let (journal, report) =
            open_journal(&section, peregrine_journal::LossPolicy::Refuse).unwrap();
        assert_eq!(journal.last_seq(), Some(500));
        assert!(report.segments > 1, "the test crossed rotations");
    }

    #[test]
    fn housekeeping_moves_the_mark_up_to_what_is_durable_and_no_further() {
        let dir = tempfile::tempdir().unwrap();
        let section = JournalSection::new(dir.path());
        let (journal, _) = open_journal(&section, peregrine_journal::LossPolicy::Refuse).unwrap();
        let mut g = GroupCommit::spawn(JournalLog::new(journal), None).unwrap();
        let mark = || {
            peregrine_journal::hwm::read(dir.path())
                .unwrap()
                .map_or(0, |m| m.committed_seq)
        };
        for i in 1..=20 {
            g.append(i, &cmd(i)).unwrap();
        }
        g.commit().unwrap();
        assert_eq!(mark(), 0, "a commit leaves the mark to housekeeping");
        let deadline = Instant::now() + Duration::from_secs(30);
        while g.durable_through() < 20 {
            assert!(Instant::now() < deadline, "durable stuck");
            std::thread::sleep(Duration::from_millis(1));
        }
        // Written but not yet synced: the sync thread is held off the file, so
        // 21..=25 reach the page cache and stay undurable; then 26..=27 are only
        // appended. Housekeeping must cover neither.
        let shared = Arc::clone(&g.shared);
        let stall = shared.file.lock().unwrap();
        for i in 21..=25 {
            g.append(i, &cmd(i)).unwrap();
        }
        g.commit().unwrap();
        for i in 26..=27 {
            g.append(i, &cmd(i)).unwrap();
        }
        g.housekeeping().unwrap();
        assert_eq!(mark(), 20, "the mark follows the sync, not the appends");
        drop(stall);
        while g.durable_through() < 25 {
            assert!(Instant::now() < deadline, "durable stuck");
            std::thread::sleep(Duration::from_millis(1));
        }
        g.housekeeping().unwrap();
        assert_eq!(mark(), 25, "and catches up once the sync has run");
    }

    /// Nice values of this process's `journal-sync` threads (Linux `/proc`).
    fn sync_thread_nices() -> Vec<i64> {
        let mut nices = Vec::new();
        for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
            let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
                continue; // the thread ended meanwhile
            };
            // "tid (comm) state ...": fields after the comm, nice is the 19th field.
            let Some((head, rest)) = stat.rsplit_once(") ") else {
                continue;
            };
            if head.ends_with("(journal-sync") {
                nices.push(rest.split(' ').nth(16).unwrap().parse().unwrap());
            }
        }
        nices
    }

    #[test]
    fn the_sync_thread_runs_at_the_configured_nice() {
        let dir = tempfile::tempdir().unwrap();
        let section = JournalSection::new(dir.path());
        let (journal, _) = open_journal(&section, peregrine_journal::LossPolicy::Refuse).unwrap();
        // 19, the highest nice: never below the process's, so allowed without privileges.
        let g = GroupCommit::spawn(JournalLog::new(journal), Some(19)).unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while !sync_thread_nices().contains(&19) {
            assert!(Instant::now() < deadline, "{:?}", sync_thread_nices());
            std::thread::sleep(Duration::from_millis(1));
        }
        drop(g);
    }
}
