//! The engine's log: threads that must never block (the orchestrator, the gateways,
//! the market-data thread) hand their lines to a bounded lock-free queue; the `log`
//! thread writes them to stderr. A stderr that blocks (a full pipe, a file on a disk
//! that stalls) stops only the log thread: when the queue is full, lines are dropped
//! and counted, and the count is logged once there is room again. The same thread
//! writes the small note files the orchestrator leaves for strategies (why one was
//! declared dead), so those never block the orchestrator either.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_queue::ArrayQueue;

/// Lines waiting at most.
const QUEUE: usize = 4_096;

/// The sending end (cheap to clone).
#[derive(Debug, Clone)]
pub struct EngineLog {
    inner: Option<Arc<Inner>>,
}

#[derive(Debug)]
struct Inner {
    lines: ArrayQueue<Item>,
    dropped: AtomicU64,
}

/// What the log thread writes.
#[derive(Debug)]
enum Item {
    /// A line for stderr.
    Line(String),
    /// A whole file (written to a temporary name, then renamed).
    File(PathBuf, String),
}

impl EngineLog {
    /// A log that writes each line to stderr at once, on the calling thread: for
    /// tests and for code that runs before the log thread starts.
    pub fn stderr_direct() -> EngineLog {
        EngineLog { inner: None }
    }

    /// Logs one line (without its newline). Never blocks, unless this is
    /// [`EngineLog::stderr_direct`].
    pub fn line(&self, line: String) {
        match &self.inner {
            None => eprintln!("{line}"),
            Some(i) => {
                if i.lines.push(Item::Line(line)).is_err() {
                    // Relaxed: a statistic, read by the log thread.
                    i.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// Writes `text` into the file `path` (off this thread unless this is
    /// [`EngineLog::stderr_direct`]); dropped like a line when the queue is full.
    pub fn file(&self, path: PathBuf, text: String) {
        match &self.inner {
            None => write_file(&path, &text),
            Some(i) => {
                if i.lines.push(Item::File(path, text)).is_err() {
                    // Relaxed: a statistic, read by the log thread.
                    i.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// Starts the `log` thread; it writes until `stop` is set and the queue is empty.
    pub fn start(
        stop: Arc<AtomicBool>,
    ) -> std::io::Result<(EngineLog, std::thread::JoinHandle<()>)> {
        let inner = Arc::new(Inner {
            lines: ArrayQueue::new(QUEUE),
            dropped: AtomicU64::new(0),
        });
        let theirs = Arc::clone(&inner);
        let h = std::thread::Builder::new()
            .name("log".into())
            .spawn(move || write_lines(&theirs, &stop))?;
        Ok((EngineLog { inner: Some(inner) }, h))
    }
}

fn write_lines(inner: &Inner, stop: &AtomicBool) {
    loop {
        let mut wrote = false;
        while let Some(item) = inner.lines.pop() {
            match item {
                Item::Line(line) => {
                    let mut err = std::io::stderr().lock();
                    let _ = writeln!(err, "{line}");
                }
                Item::File(path, text) => write_file(&path, &text),
            }
            wrote = true;
        }
        // Relaxed: a statistic.
        let dropped = inner.dropped.swap(0, Ordering::Relaxed);
        if dropped > 0 {
            eprintln!("engine: {dropped} log lines dropped (stderr was not keeping up)");
        }
        // Relaxed: a stop flag; the queue is drained once more after it.
        if stop.load(Ordering::Relaxed) && inner.lines.is_empty() {
            return;
        }
        if !wrote {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

fn write_file(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    let _ = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_drops_and_counts_instead_of_blocking() {
        let inner = Arc::new(Inner {
            lines: ArrayQueue::new(2),
            dropped: AtomicU64::new(0),
        });
        let log = EngineLog {
            inner: Some(Arc::clone(&inner)),
        };
        for i in 0..5 {
            log.line(format!("line {i}"));
        }
        log.file(PathBuf::from("/nonexistent/x"), "dropped too".into());
        assert_eq!(inner.lines.len(), 2);
        assert_eq!(inner.dropped.load(Ordering::Relaxed), 4);
    }
}
