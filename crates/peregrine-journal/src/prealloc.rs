//! Segment files prepared ahead of need: written full of zeros and synced by a
//! helper thread, so the writer's appends land in blocks the file system has already
//! allocated and sized.
//!
//! Why: an `fdatasync` after an append that grows the file must also commit the new
//! size and block allocation to the file system's journal; after an overwrite inside
//! a file whose blocks were written before, it only flushes the data. Measured on
//! this project's 2-vCPU VM (ext4 on virtio, 4 KiB writes, C loop, 2026-11-24): an
//! append then `fdatasync`, p50 140–217 µs and p99 248–323 µs; an overwrite in a
//! pre-written file then `fdatasync`, p50 84–92 µs and p99 139–157 µs. `fallocate`
//! is not enough (unwritten extents still need converting: 150 µs p50), so the spare
//! is really written.
//!
//! The spare is one file in the journal directory, `journal-spare-<pid>-<n>.tmp`,
//! which no segment listing matches. The writer takes it with
//! `Preparer::take_into` (a hard link under the segment's name, which fails rather
//! than replace an existing file, then an unlink of the spare name); the thread then
//! prepares the next one. A new helper first unlinks every spare name it finds (left
//! by a crash), never truncating through one, so a crash between the link and the
//! unlink cannot cost a segment its records.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::segment;
use crate::storage::{Open, Storage};

const SPARE_PREFIX: &str = "journal-spare-";
const SPARE_SUFFIX: &str = ".tmp";

/// Tells the helpers of one process apart (a test that simulates a crash with
/// `mem::forget` leaves one running beside the next).
static INSTANCE: AtomicU64 = AtomicU64::new(0);

/// True for the name of a spare segment (any process's).
pub fn is_spare_name(name: &str) -> bool {
    name.starts_with(SPARE_PREFIX) && name.ends_with(SPARE_SUFFIX)
}

/// Zeros written, then synced, per step while preparing.
const CHUNK: usize = 256 << 10;

/// The helper's pace: the journal's recent rate of bytes times this, but never below
/// [`MIN_RATE`]. A spare is written on the same disk the journal commits to, and every
/// `fdatasync` of the journal that meets one of the helper's in the device queue
/// waits for it. Measured on this project's VM (C loop of 4 KiB overwrites +
/// `fdatasync`, 20,000 each, 2026-11-24): alone p99 173–179 µs, max 1.1–1.7 ms;
/// beside a helper writing 1 MiB chunks as fast as it could with a 2 ms pause
/// (~300 MB/s, this module's first pacing) p99 880–970 µs, max 13–20 ms; beside one
/// paced to ~20 MB/s in 64 KiB to 1 MiB chunks p99 173–277 µs, max 1.0–1.7 ms. So the
/// helper goes no faster than it must: four times the journal's rate keeps each
/// spare (at most twice the segment being filled) ready well before it is needed.
const RATE_MULTIPLE: u64 = 4;

/// The helper's slowest pace, bytes per second: a first 4 MiB spare in half a
/// second, a 64 MiB one in 8 s while the journal is quiet.
const MIN_RATE: u64 = 8 << 20;

/// How long the helper looks at the journal's progress before it trusts a rate.
const RATE_WINDOW: Duration = Duration::from_millis(100);

/// The writer's handle on the helper thread. Dropping it stops the thread (within one
/// chunk's write) and removes an unused spare.
///
/// On a storage that runs helper work inline ([`Storage::threads`] false: a
/// deterministic simulation) there is no thread: each spare is prepared on the
/// caller's thread, at once, when asked for (the same steps, unpaced).
#[derive(Debug)]
pub(crate) struct Preparer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Debug)]
struct Shared {
    storage: Storage,
    spare: PathBuf,
    state: Mutex<State>,
    wake: Condvar,
    /// A spare is ready (mirrors `State::ready`, for a lock-free check).
    ready: AtomicBool,
    /// Preparing failed (mirrors `State::failed`, for a lock-free check).
    failed: AtomicBool,
    stop: AtomicBool,
    /// Bytes the journal has written in all, stored by the writer after each write:
    /// the helper paces itself by its rate.
    written: AtomicU64,
}

#[derive(Debug, Default)]
struct State {
    /// Size in bytes of the next spare to prepare, once the current one is taken.
    want: Option<u64>,
    /// Size of the spare on disk, if one is ready.
    ready: Option<u64>,
    /// Why preparing failed; the writer then goes on with plain appends.
    failed: Option<String>,
}

impl Preparer {
    /// Starts the helper thread, which prepares a first spare of `bytes` bytes (or,
    /// inline, prepares it now).
    pub(crate) fn start(storage: &Storage, dir: &Path, bytes: u64) -> std::io::Result<Self> {
        for name in storage.list(dir)? {
            if is_spare_name(&name) {
                storage.remove_file(&dir.join(name))?;
            }
        }
        let threads = storage.threads();
        let name = if threads {
            let n = INSTANCE.fetch_add(1, Ordering::Relaxed);
            format!("{SPARE_PREFIX}{}-{n}{SPARE_SUFFIX}", std::process::id())
        } else {
            // One journal per directory, no helper: a name that replays identically.
            format!("{SPARE_PREFIX}inline{SPARE_SUFFIX}")
        };
        let shared = Arc::new(Shared {
            storage: storage.clone(),
            spare: dir.join(name),
            state: Mutex::new(State {
                want: Some(bytes),
                ..State::default()
            }),
            wake: Condvar::new(),
            ready: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            written: AtomicU64::new(0),
        });
        if !threads {
            shared.prepare_inline();
            return Ok(Self {
                shared,
                thread: None,
            });
        }
        let worker = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("journal-prealloc".into())
            .spawn(move || worker.run())?;
        Ok(Self {
            shared,
            thread: Some(thread),
        })
    }

    /// Tells the helper how many bytes the journal has written in all (one relaxed
    /// store; the helper paces itself by the rate).
    #[inline]
    pub(crate) fn note_written(&self, total: u64) {
        // Relaxed: a rate estimate; nothing else is read through it.
        self.shared.written.store(total, Ordering::Relaxed);
    }

    /// True if a spare is ready to take (one atomic load).
    #[inline]
    pub(crate) fn ready(&self) -> bool {
        self.shared.ready.load(Ordering::Acquire)
    }

    /// Gives the ready spare the name `to` and asks for the next one, of `next_bytes`.
    /// `Ok(None)`: no spare is ready. Fails, leaving the spare in place, if `to`
    /// already exists.
    pub(crate) fn take_into(&self, to: &Path, next_bytes: u64) -> std::io::Result<Option<u64>> {
        let mut state = self.shared.lock();
        let Some(bytes) = state.ready else {
            return Ok(None);
        };
        let storage = &self.shared.storage;
        storage.hard_link(&self.shared.spare, to)?;
        storage.remove_file(&self.shared.spare)?;
        state.ready = None;
        self.shared.ready.store(false, Ordering::Release);
        state.want = Some(next_bytes);
        self.shared.wake.notify_one();
        drop(state);
        if self.thread.is_none() {
            self.shared.prepare_inline();
        }
        Ok(Some(bytes))
    }

    /// True once the thread has stopped preparing after an error (one atomic load).
    #[inline]
    pub(crate) fn failed(&self) -> bool {
        self.shared.failed.load(Ordering::Acquire)
    }

    /// Why the thread stopped preparing, if it failed.
    #[cfg(test)]
    pub(crate) fn failure(&self) -> Option<String> {
        self.shared.lock().failed.clone()
    }
}

impl Drop for Preparer {
    fn drop(&mut self) {
        self.shared.request_stop();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        // An unused spare is only zeros: not worth its disk space between runs.
        let _ = self.shared.storage.remove_file(&self.shared.spare);
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Asks the thread to stop, waking it if it waits for work or sits in a pause.
    fn request_stop(&self) {
        self.stop.store(true, Ordering::Release);
        let _state = self.lock();
        self.wake.notify_one();
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    /// Without a thread: prepares the spare asked for, now, on the caller's thread.
    fn prepare_inline(&self) {
        let Some(bytes) = self.lock().want.take() else {
            return;
        };
        let zeros = vec![0u8; CHUNK];
        match self.prepare(bytes, &zeros, None) {
            Ok(true) => {
                self.lock().ready = Some(bytes);
                self.ready.store(true, Ordering::Release);
            }
            Ok(false) => {}
            Err(e) => self.give_up(&e),
        }
    }

    /// Preparing failed: the writer goes on with plain appends.
    fn give_up(&self, e: &std::io::Error) {
        let why = format!("{}: {e}", self.spare.display());
        log::warn!(
            "journal: preparing a spare segment failed ({why}); appends go on \
             into plain segments"
        );
        self.lock().failed = Some(why);
        self.failed.store(true, Ordering::Release);
        let _ = self.storage.remove_file(&self.spare);
    }

    fn run(&self) {
        let zeros = vec![0u8; CHUNK];
        let mut pace = Pace::new(self.written.load(Ordering::Relaxed));
        loop {
            let bytes = {
                let mut state = self.lock();
                loop {
                    if self.stopping() {
                        return;
                    }
                    if state.ready.is_none() {
                        if let Some(bytes) = state.want.take() {
                            break bytes;
                        }
                    }
                    state = self
                        .wake
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            };
            match self.prepare(bytes, &zeros, Some(&mut pace)) {
                Ok(true) => {
                    self.lock().ready = Some(bytes);
                    self.ready.store(true, Ordering::Release);
                }
                Ok(false) => return,
                Err(e) => {
                    self.give_up(&e);
                    return;
                }
            }
        }
    }

    /// Sleeps `wait`, or less if asked to stop.
    fn pause(&self, wait: Duration) {
        let deadline = Instant::now() + wait;
        let mut state = self.lock();
        while !self.stopping() {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return;
            };
            state = self
                .wake
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Writes a segment header and zeros up to `bytes`, then syncs data and size,
    /// at the pace `pace` sets (none: as fast as the storage goes). `Ok(false)`: asked
    /// to stop midway.
    fn prepare(
        &self,
        bytes: u64,
        zeros: &[u8],
        mut pace: Option<&mut Pace>,
    ) -> std::io::Result<bool> {
        match self.storage.remove_file(&self.spare) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let file = self.storage.open(&self.spare, Open::CreateNew)?;
        let header = segment::header_bytes();
        file.write_all_at(&header, 0)?;
        let mut at = header.len() as u64;
        let mut left = bytes.saturating_sub(at);
        let mut next = Instant::now();
        while left > 0 {
            if self.stopping() {
                return Ok(false);
            }
            let n = left.min(zeros.len() as u64) as usize;
            file.write_all_at(&zeros[..n], at)?;
            file.sync_data()?;
            at += n as u64;
            left -= n as u64;
            let Some(pace) = pace.as_deref_mut() else {
                continue;
            };
            // Relaxed: a rate estimate.
            let rate = pace.rate(Instant::now(), self.written.load(Ordering::Relaxed));
            next += Duration::from_nanos(n as u64 * 1_000_000_000 / rate);
            let now = Instant::now();
            match next.checked_duration_since(now) {
                // Not ahead of the pace: no debt is carried (a slow disk is not
                // made up for in a burst).
                None => next = now,
                Some(wait) => self.pause(wait),
            }
        }
        file.sync_all()?;
        Ok(!self.stopping())
    }
}

/// The journal's recent rate of bytes, and the helper's pace from it.
#[derive(Debug)]
struct Pace {
    since: Instant,
    written: u64,
    /// The journal's rate, bytes per second: up at once when it rises, halved per
    /// window when it falls.
    journal: u64,
}

impl Pace {
    fn new(written: u64) -> Self {
        Pace {
            since: Instant::now(),
            written,
            journal: 0,
        }
    }

    /// The helper's pace, bytes per second, given the journal's total `written`
    /// bytes at `now`.
    fn rate(&mut self, now: Instant, written: u64) -> u64 {
        let span = now.saturating_duration_since(self.since);
        if span >= RATE_WINDOW {
            let bytes = written.saturating_sub(self.written);
            let rate = u64::try_from(u128::from(bytes) * 1_000_000_000 / span.as_nanos().max(1))
                .unwrap_or(u64::MAX);
            self.journal = rate.max(self.journal / 2);
            self.since = now;
            self.written = written;
        }
        self.journal.saturating_mul(RATE_MULTIPLE).max(MIN_RATE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pace_follows_the_journal_up_at_once_and_down_by_halves() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut pace = Pace {
            since: t0,
            written: 0,
            journal: 0,
        };
        // Quiet: the floor.
        assert_eq!(pace.rate(at(50), 0), MIN_RATE);
        assert_eq!(pace.rate(at(100), 0), MIN_RATE);
        // 10 MB in 100 ms is 100 MB/s: four times that at once.
        assert_eq!(pace.rate(at(200), 10_000_000), 4 * 100_000_000);
        // Within the window nothing changes.
        assert_eq!(pace.rate(at(250), 10_000_000), 4 * 100_000_000);
        // Quiet again: halved per window, down to the floor.
        assert_eq!(pace.rate(at(300), 10_000_000), 4 * 50_000_000);
        assert_eq!(pace.rate(at(400), 10_000_000), 4 * 25_000_000);
        let mut ms = 400;
        while pace.journal > 0 {
            ms += 100;
            pace.rate(at(ms), 10_000_000);
        }
        assert_eq!(pace.rate(at(ms + 100), 10_000_000), MIN_RATE);
    }

    #[test]
    fn dropping_a_helper_mid_spare_stops_it_and_removes_the_spare() {
        let dir = tempfile::tempdir().unwrap();
        // 64 MiB at the quiet pace would take 8 s.
        let p = Preparer::start(&Storage::os(), dir.path(), 64 << 20).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let t = Instant::now();
        drop(p);
        assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
        assert_eq!(spares(dir.path()), 0);
    }

    #[test]
    fn a_stop_ends_a_pause_at_once() {
        let shared = Arc::new(Shared {
            storage: Storage::os(),
            spare: PathBuf::from("unused"),
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            ready: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            written: AtomicU64::new(0),
        });
        let pausing = Arc::clone(&shared);
        let t = Instant::now();
        let thread = std::thread::spawn(move || pausing.pause(Duration::from_secs(60)));
        std::thread::sleep(Duration::from_millis(50));
        shared.request_stop();
        thread.join().unwrap();
        // A pause that ignored the stop would last its 60 s.
        assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    }

    fn spares(dir: &Path) -> usize {
        std::fs::read_dir(dir)
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                is_spare_name(name.to_str().unwrap())
            })
            .count()
    }

    fn wait_ready(p: &Preparer) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !p.ready() {
            assert!(p.failure().is_none(), "{:?}", p.failure());
            assert!(std::time::Instant::now() < deadline, "spare never ready");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    #[test]
    fn prepares_a_zeroed_spare_with_a_header_then_the_next_one() {
        let dir = tempfile::tempdir().unwrap();
        let p = Preparer::start(&Storage::os(), dir.path(), 3 << 20).unwrap();
        wait_ready(&p);
        let first = dir.path().join(segment::file_name(1));
        assert_eq!(p.take_into(&first, 5000).unwrap(), Some(3 << 20));
        let bytes = std::fs::read(&first).unwrap();
        assert_eq!(bytes.len(), 3 << 20);
        assert_eq!(bytes[..16], segment::header_bytes());
        assert!(bytes[16..].iter().all(|&b| b == 0));
        wait_ready(&p);
        let second = dir.path().join(segment::file_name(2));
        assert_eq!(p.take_into(&second, 5000).unwrap(), Some(5000));
        assert_eq!(std::fs::metadata(&second).unwrap().len(), 5000);
        assert!(segment::list(dir.path()).unwrap().len() == 2);
    }

    #[test]
    fn never_replaces_an_existing_file_and_removes_its_spare_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let taken = dir.path().join(segment::file_name(7));
        std::fs::write(&taken, b"data").unwrap();
        let p = Preparer::start(&Storage::os(), dir.path(), 8192).unwrap();
        wait_ready(&p);
        assert!(p.take_into(&taken, 8192).is_err());
        assert_eq!(std::fs::read(&taken).unwrap(), b"data");
        assert!(p.ready(), "the spare stays ready after a failed take");
        drop(p);
        assert_eq!(spares(dir.path()), 0);
    }

    #[test]
    fn a_stale_spare_name_linked_to_a_segment_is_unlinked_not_truncated() {
        // A crash between `take_into`'s link and unlink leaves both names on one file.
        let dir = tempfile::tempdir().unwrap();
        let seg = dir.path().join(segment::file_name(1));
        std::fs::write(&seg, b"records").unwrap();
        std::fs::hard_link(&seg, dir.path().join("journal-spare-1-0.tmp")).unwrap();
        let p = Preparer::start(&Storage::os(), dir.path(), 8192).unwrap();
        wait_ready(&p);
        assert_eq!(std::fs::read(&seg).unwrap(), b"records");
        assert!(!dir.path().join("journal-spare-1-0.tmp").exists());
        assert_eq!(spares(dir.path()), 1);
    }
}
