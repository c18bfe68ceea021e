//! The engine's doorbell: how an idle orchestrator sleeps without missing input.
//!
//! A file of one page, `<dir>/doorbell` ([`crate::paths::doorbell`]), made by the
//! engine and mapped read-write by the engine and by every strategy, holding two words:
//!
//! * `armed`: nonzero while the orchestrator is about to sleep or sleeping;
//! * `seq`: the futex word; every ring that finds the orchestrator armed increments it
//!   and wakes the sleeper (`futex(FUTEX_WAKE)`, shared, not private: the waker may be
//!   another process).
//!
//! The handshake is Dekker's: the sleeper stores `armed`, fences (`SeqCst`), polls its
//! inputs once more and only then waits on `seq` for the value it read before arming;
//! a producer pushes into its ring, fences (`SeqCst`), and loads `armed`. One of the two
//! fences comes first, so either the sleeper's last poll sees the push or the producer
//! sees `armed` and wakes it (or bumps `seq` before the wait, which then returns at
//! once). A ring costs the producer one fence and one load of a line it only reads
//! while the orchestrator is awake; the wake syscall only when it sleeps.
//!
//! The wait is bounded by the caller's timeout (the orchestrator's housekeeping), so a
//! producer that never rings (an older SDK, a replay) is served within that timeout.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::atomic::{fence, AtomicU32, Ordering};
use std::time::Duration;

use memmap2::MmapRaw;
use rustix::thread::futex;

/// Size of the file: one page; `armed` at byte 0, `seq` at byte 64 (own cache lines).
const LEN: usize = 4096;
const ARMED: usize = 0;
const SEQ: usize = 64;

/// Why a doorbell could not be created or opened.
#[derive(Debug, thiserror::Error)]
#[error("doorbell {0}: {1}")]
pub struct DoorbellError(pub PathBuf, #[source] pub std::io::Error);

/// A mapped doorbell (either end: the engine waits on it, producers ring it).
#[derive(Debug)]
pub struct Doorbell {
    map: MmapRaw,
}

impl Doorbell {
    /// Creates (or truncates and re-creates) the doorbell at `path`: the engine, once
    /// at start.
    pub fn create(path: &Path) -> Result<Doorbell, DoorbellError> {
        let err = |e| DoorbellError(path.to_owned(), e);
        let _ = std::fs::remove_file(path);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(err)?;
        file.set_len(LEN as u64).map_err(err)?;
        Ok(Doorbell {
            map: MmapRaw::map_raw(&file).map_err(err)?,
        })
    }

    /// Maps an existing doorbell: a strategy, at attach.
    pub fn open(path: &Path) -> Result<Doorbell, DoorbellError> {
        let err = |e| DoorbellError(path.to_owned(), e);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(err)?;
        if file.metadata().map_err(err)?.len() < LEN as u64 {
            return Err(err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "shorter than one page",
            )));
        }
        Ok(Doorbell {
            map: MmapRaw::map_raw(&file).map_err(err)?,
        })
    }

    fn word(&self, offset: usize) -> &AtomicU32 {
        debug_assert!(offset + 4 <= self.map.len());
        // SAFETY: the mapping is read-write (`MmapRaw::map_raw` of a file opened
        // read-write), page aligned, at least `LEN` bytes, and lives as long as `self`;
        // `offset` is 4-byte aligned and in bounds. Every process touches these words
        // only through `AtomicU32`, which is sound for memory shared between processes.
        unsafe { &*(self.map.as_ptr().add(offset) as *const AtomicU32) }
    }

    /// After a push into a ring the orchestrator reads: wakes it if it sleeps (or is
    /// about to). One fence and one load when it is awake.
    #[inline]
    pub fn ring(&self) {
        fence(Ordering::SeqCst);
        if self.word(ARMED).load(Ordering::Relaxed) != 0 {
            self.wake();
        }
    }

    #[cold]
    fn wake(&self) {
        let seq = self.word(SEQ);
        seq.fetch_add(1, Ordering::Release);
        // An error (none is documented for a valid address) only costs the sleeper its
        // timeout.
        let _ = futex::wake(seq, futex::Flags::empty(), u32::MAX);
    }

    /// The sleeper's side, step 1: arms the bell and returns the ticket to wait on.
    /// The caller must poll its inputs once more after this and call
    /// [`Doorbell::wait`] only if they were all empty, then [`Doorbell::disarm`].
    pub fn arm(&self) -> u32 {
        let ticket = self.word(SEQ).load(Ordering::Acquire);
        self.word(ARMED).store(1, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        ticket
    }

    /// Step 2: sleeps until a ring after [`Doorbell::arm`] (returns at once if one came
    /// already), a spurious wake-up, or `timeout`.
    pub fn wait(&self, ticket: u32, timeout: Duration) {
        let ts = rustix::time::Timespec {
            tv_sec: timeout.as_secs() as _,
            tv_nsec: timeout.subsec_nanos() as _,
        };
        // EAGAIN (seq moved: a ring came), ETIMEDOUT and EINTR all mean "go poll".
        let _ = futex::wait(self.word(SEQ), futex::Flags::empty(), ticket, Some(&ts));
    }

    /// Step 3: awake again; producers stop paying for the wake syscall.
    pub fn disarm(&self) {
        self.word(ARMED).store(0, Ordering::Relaxed);
    }

    /// Whether the sleeper is armed (about to sleep or sleeping).
    pub fn armed(&self) -> bool {
        self.word(ARMED).load(Ordering::Relaxed) != 0
    }

    /// Rings that woke (or would have woken) a sleeper so far.
    pub fn wakes(&self) -> u32 {
        self.word(SEQ).load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn a_ring_wakes_a_sleeper_in_another_mapping() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("doorbell");
        let engine = Doorbell::create(&path).unwrap();
        let strategy = Arc::new(Doorbell::open(&path).unwrap());
        let ticket = engine.arm();
        let s = Arc::clone(&strategy);
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            s.ring();
        });
        let start = Instant::now();
        // Far longer than any test may take: only the ring ends this wait.
        engine.wait(ticket, Duration::from_secs(30));
        engine.disarm();
        t.join().unwrap();
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "woken by the ring"
        );
        assert_eq!(engine.wakes(), 1);
    }

    #[test]
    fn a_ring_before_the_wait_is_not_lost() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("doorbell");
        let engine = Doorbell::create(&path).unwrap();
        let strategy = Doorbell::open(&path).unwrap();
        let ticket = engine.arm();
        strategy.ring(); // between the sleeper's last poll and its wait
        let start = Instant::now();
        engine.wait(ticket, Duration::from_secs(30));
        assert!(start.elapsed() < Duration::from_secs(30));
    }

    #[test]
    fn an_unarmed_bell_costs_no_wake() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("doorbell");
        let engine = Doorbell::create(&path).unwrap();
        let strategy = Doorbell::open(&path).unwrap();
        for _ in 0..10 {
            strategy.ring();
        }
        assert_eq!(engine.wakes(), 0);
        assert!(Doorbell::open(&dir.path().join("missing")).is_err());
    }
}
