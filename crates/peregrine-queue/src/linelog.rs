//! The one log queue of the binaries: threads that must never block hand text lines
//! (and small files) to a bounded queue; one writer thread writes them to stderr.
//!
//! A stderr that blocks (a terminal paused, a full pipe nobody reads, a file on a disk
//! that stalls) stops only the writer: when the queue is full, or a burst exceeds the
//! optional lines-per-second budget, the line is dropped and counted, and the writer
//! says how many were dropped before the next line it can write (or at its next idle
//! check). Pushing is a `try_send` on a bounded channel (its slots are allocated once):
//! it never waits for the writer. Used by the engine (`peregrine_engine::log`, which
//! also writes the note files it leaves for strategies through it) and by the
//! binary's backend of the `log` facade (`peregrine` `cli::logger`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often an idle writer checks its stop flag and reports drops.
const IDLE_CHECK: Duration = Duration::from_millis(50);

/// How a [`LineLog`] behaves.
#[derive(Debug, Clone, Copy)]
pub struct LineLogConfig {
    /// Lines (and files) waiting at most.
    pub capacity: usize,
    /// Lines accepted per second at most (a burst above it is dropped and counted);
    /// `None`: no budget.
    pub lines_per_second: Option<u64>,
    /// The writer thread's name.
    pub thread_name: &'static str,
    /// The line that reports `n` dropped lines, `elapsed` since the log started.
    pub dropped_note: fn(n: u64, elapsed: Duration) -> String,
}

/// What the writer writes.
#[derive(Debug)]
enum Item {
    /// A line for stderr (without its newline).
    Line(String),
    /// A whole file (written to a temporary name, then renamed).
    File(PathBuf, String),
    /// Answer once everything before it is written.
    Flush(SyncSender<()>),
}

#[derive(Debug)]
struct Shared {
    cfg: LineLogConfig,
    start: Instant,
    /// Lines dropped since the writer last reported (queue full or over the budget).
    dropped: AtomicU64,
    /// The current one-second window (seconds since start) and the lines taken in it.
    window: AtomicU64,
    taken: AtomicU64,
}

impl Shared {
    /// Whether the budget of the current second has room for one more line.
    fn admit(&self, now_s: u64) -> bool {
        let Some(max) = self.cfg.lines_per_second else {
            return true;
        };
        // Relaxed: a rate estimate; a race between two loggers at a second's edge
        // admits a line or two more or fewer.
        if self.window.load(Ordering::Relaxed) != now_s {
            self.window.store(now_s, Ordering::Relaxed);
            self.taken.store(0, Ordering::Relaxed);
        }
        self.taken.fetch_add(1, Ordering::Relaxed) < max
    }

    fn drop_one(&self) {
        // Relaxed: a statistic, read by the writer.
        self.dropped.fetch_add(1, Ordering::Relaxed);
    }
}

/// The sending end (cheap to clone, `Send + Sync`).
#[derive(Debug, Clone)]
pub struct LineLog {
    tx: SyncSender<Item>,
    shared: Arc<Shared>,
}

impl LineLog {
    /// A queue and the receiving end its writer drains.
    fn new(cfg: LineLogConfig) -> (LineLog, Receiver<Item>) {
        let (tx, rx) = sync_channel(cfg.capacity);
        let shared = Arc::new(Shared {
            cfg,
            start: Instant::now(),
            dropped: AtomicU64::new(0),
            window: AtomicU64::new(0),
            taken: AtomicU64::new(0),
        });
        (LineLog { tx, shared }, rx)
    }

    /// Starts the writer thread. It writes until every `LineLog` is dropped, or, with
    /// `stop`, until `stop` is set and the queue is empty.
    pub fn start(
        cfg: LineLogConfig,
        stop: Option<Arc<AtomicBool>>,
    ) -> std::io::Result<(LineLog, std::thread::JoinHandle<()>)> {
        let (log, rx) = LineLog::new(cfg);
        let shared = Arc::clone(&log.shared);
        let h = std::thread::Builder::new()
            .name(cfg.thread_name.into())
            .spawn(move || write_items(&shared, &rx, stop.as_deref()))?;
        Ok((log, h))
    }

    /// Time since the log started.
    pub fn elapsed(&self) -> Duration {
        self.shared.start.elapsed()
    }

    /// Queues one line (without its newline); `false` if it was dropped. Never blocks.
    pub fn line(&self, line: String) -> bool {
        if !self.shared.admit(self.elapsed().as_secs()) {
            self.shared.drop_one();
            return false;
        }
        self.push(Item::Line(line))
    }

    /// Queues `text` to be written into the file `path` (dropped like a line when the
    /// queue is full; not counted against the lines-per-second budget).
    pub fn file(&self, path: PathBuf, text: String) -> bool {
        self.push(Item::File(path, text))
    }

    fn push(&self, item: Item) -> bool {
        match self.tx.try_send(item) {
            Ok(()) => true,
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.shared.drop_one();
                false
            }
        }
    }

    /// Waits (at most `wait`: a stderr blocked for good must not hang an exit) until
    /// what was queued before is written.
    pub fn flush(&self, wait: Duration) {
        let (tx, rx) = sync_channel(1);
        if self.tx.try_send(Item::Flush(tx)).is_ok() {
            let _ = rx.recv_timeout(wait);
        }
    }
}

/// The writer: every queued item, a count of the dropped lines before the next one.
fn write_items(shared: &Shared, rx: &Receiver<Item>, stop: Option<&AtomicBool>) {
    loop {
        // Without a stop flag the writer sleeps until a line comes (no idle wake-ups;
        // drops are reported before the next line).
        let next = match stop {
            Some(_) => rx.recv_timeout(IDLE_CHECK),
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        match next {
            Ok(item) => {
                report_dropped(shared);
                write_item(item);
            }
            Err(RecvTimeoutError::Timeout) => {
                report_dropped(shared);
                // Relaxed: a stop flag; the queue is drained once more after it.
                if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                    while let Ok(item) = rx.try_recv() {
                        write_item(item);
                    }
                    report_dropped(shared);
                    return;
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                report_dropped(shared);
                return;
            }
        }
    }
}

fn report_dropped(shared: &Shared) {
    // Relaxed: a statistic.
    let n = shared.dropped.swap(0, Ordering::Relaxed);
    if n > 0 {
        let note = (shared.cfg.dropped_note)(n, shared.start.elapsed());
        let _ = writeln!(std::io::stderr().lock(), "{note}");
    }
}

fn write_item(item: Item) {
    match item {
        Item::Line(line) => {
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "{line}");
        }
        Item::File(path, text) => write_file(&path, &text),
        Item::Flush(done) => {
            let _ = std::io::stderr().lock().flush();
            let _ = done.send(());
        }
    }
}

/// Writes `text` to `path` through a temporary file and a rename (a reader never sees
/// half of it).
pub fn write_file(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    let _ = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(capacity: usize, rate: Option<u64>) -> LineLogConfig {
        LineLogConfig {
            capacity,
            lines_per_second: rate,
            thread_name: "test-log",
            dropped_note: |n, _| format!("{n} dropped"),
        }
    }

    /// A full queue (a writer stuck on stderr) drops and counts; it never blocks.
    #[test]
    fn a_full_queue_drops_and_counts_instead_of_blocking() {
        let (log, rx) = LineLog::new(cfg(2, None));
        for i in 0..5 {
            log.line(format!("line {i}"));
        }
        assert!(!log.file(PathBuf::from("/nonexistent/x"), "dropped too".into()));
        assert_eq!(rx.try_iter().count(), 2);
        assert_eq!(log.shared.dropped.load(Ordering::Relaxed), 4);
    }

    /// The budget admits `lines_per_second` lines per one-second window, then drops;
    /// a new second starts a new budget.
    #[test]
    fn the_rate_budget_resets_each_second() {
        let (log, _rx) = LineLog::new(cfg(1, Some(20)));
        let s = &log.shared;
        assert_eq!((0..30).filter(|_| s.admit(5)).count(), 20);
        assert_eq!((0..30).filter(|_| s.admit(6)).count(), 20);
    }

    /// The writer writes what was queued, files too, and ends on its stop flag.
    #[test]
    fn the_writer_writes_and_stops() {
        let dir = tempfile::tempdir().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let (log, h) = LineLog::start(cfg(8, None), Some(Arc::clone(&stop))).unwrap();
        let path = dir.path().join("note");
        assert!(log.file(path.clone(), "why".into()));
        log.flush(Duration::from_secs(30));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "why");
        stop.store(true, Ordering::Relaxed);
        h.join().unwrap();
    }
}
