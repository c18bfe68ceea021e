//! The binary's log backend for the `log` facade the libraries write to: one line
//! per record on stderr, prefixed with the seconds since start (the format the
//! exchange has always logged in). Nothing on a per-order path logs.
//!
//! The thread that logs never waits for stderr. A record is formatted and handed to a
//! bounded queue that one writer thread drains into stderr; when the queue is full (a
//! slow or blocked stderr: a terminal paused, a pipe nobody reads) or a burst exceeds
//! [`LINES_PER_SECOND`], the record is dropped and counted, and the writer says how
//! many were dropped once it can write again. So a flood of refused connections
//! against a stalled stderr pipe costs the matching thread a failed `try_send`, never a
//! blocked `write(2)` (tests/exchange_access.rs, `a_blocked_stderr_does_not_stall_matching`).

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Lines waiting for stderr before further records are dropped.
const QUEUE: usize = 4096;
/// Lines accepted per second (a burst above it is dropped and counted).
const LINES_PER_SECOND: u64 = 2000;
/// How long [`flush`] waits for the writer (a stderr blocked for good must not hang
/// the process's exit).
const FLUSH_WAIT: Duration = Duration::from_secs(2);

static START: OnceLock<Instant> = OnceLock::new();
static LOGGER: OnceLock<Queue> = OnceLock::new();

enum Item {
    Line(String),
    Flush(SyncSender<()>),
}

struct Queue {
    tx: SyncSender<Item>,
    /// Records dropped since the writer last reported (queue full or over the rate).
    dropped: AtomicU64,
    /// The current one-second window (seconds since start) and the lines taken in it.
    window: AtomicU64,
    taken: AtomicU64,
}

impl Queue {
    /// Whether the rate budget of the current second has room for one more line.
    fn admit(&self, now_s: u64) -> bool {
        if self.window.load(Ordering::Relaxed) != now_s {
            self.window.store(now_s, Ordering::Relaxed);
            self.taken.store(0, Ordering::Relaxed);
        }
        self.taken.fetch_add(1, Ordering::Relaxed) < LINES_PER_SECOND
    }
}

impl log::Log for Queue {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }

    fn log(&self, record: &log::Record<'_>) {
        let t = START.get_or_init(Instant::now).elapsed();
        if !self.admit(t.as_secs()) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let line = format!("[{:>10.6}] {}\n", t.as_secs_f64(), record.args());
        match self.tx.try_send(Item::Line(line)) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    fn flush(&self) {
        let (tx, rx) = sync_channel(1);
        if self.tx.try_send(Item::Flush(tx)).is_ok() {
            let _ = rx.recv_timeout(FLUSH_WAIT);
        }
    }
}

/// The writer thread: stderr gets every queued line, and a count of the dropped ones
/// before the next line it can write.
fn write_lines(rx: Receiver<Item>) {
    let queue = LOGGER.get().expect("installed before the writer starts");
    for item in rx {
        let mut err = std::io::stderr().lock();
        let dropped = queue.dropped.swap(0, Ordering::Relaxed);
        if dropped > 0 {
            let t = START.get_or_init(Instant::now).elapsed().as_secs_f64();
            let _ = writeln!(
                err,
                "[{t:>10.6}] log: {dropped} line(s) dropped (stderr slow, or over {LINES_PER_SECOND}/s)"
            );
        }
        match item {
            Item::Line(line) => {
                let _ = err.write_all(line.as_bytes());
            }
            Item::Flush(done) => {
                let _ = err.flush();
                let _ = done.send(());
            }
        }
    }
}

/// Installs the logger (once; later calls do nothing), starts its clock and its writer
/// thread.
pub(crate) fn init() {
    let _ = START.get_or_init(Instant::now);
    let (tx, rx) = sync_channel(QUEUE);
    let queue = Queue {
        tx,
        dropped: AtomicU64::new(0),
        window: AtomicU64::new(0),
        taken: AtomicU64::new(0),
    };
    if LOGGER.set(queue).is_err() {
        return;
    }
    let queue = LOGGER.get().expect("just set");
    let spawned = std::thread::Builder::new()
        .name("log-writer".into())
        .spawn(move || write_lines(rx));
    if spawned.is_ok() && log::set_logger(queue).is_ok() {
        log::set_max_level(log::LevelFilter::Info);
    }
}

/// Writes out what is queued (at exit), waiting at most [`FLUSH_WAIT`].
pub(crate) fn flush() {
    log::logger().flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_budget_resets_each_second() {
        let (tx, _rx) = sync_channel(1);
        let q = Queue {
            tx,
            dropped: AtomicU64::new(0),
            window: AtomicU64::new(0),
            taken: AtomicU64::new(0),
        };
        let admitted = (0..LINES_PER_SECOND + 10).filter(|_| q.admit(5)).count() as u64;
        assert_eq!(admitted, LINES_PER_SECOND);
        assert!(q.admit(6), "a new second has a new budget");
    }

    #[test]
    fn a_full_queue_drops_and_counts_instead_of_waiting() {
        let (tx, rx) = sync_channel(2);
        let q = Queue {
            tx,
            dropped: AtomicU64::new(0),
            window: AtomicU64::new(0),
            taken: AtomicU64::new(0),
        };
        let logger: &dyn log::Log = &q;
        for i in 0..5 {
            logger.log(
                &log::Record::builder()
                    .args(format_args!("line {i}"))
                    .build(),
            );
        }
        assert_eq!(q.dropped.load(Ordering::Relaxed), 3);
        assert_eq!(rx.try_iter().count(), 2);
    }
}
