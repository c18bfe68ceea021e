//! The engine's log: threads that must never block (the orchestrator, the gateways,
//! the market-data thread) hand their lines to the bounded queue of
//! [`peregrine_queue::linelog`]; its `log` thread writes them to stderr. A stderr that
//! blocks (a full pipe, a file on a disk that stalls) stops only the log thread: when
//! the queue is full, lines are dropped and counted, and the count is logged once there
//! is room again. The same thread writes the small note files the orchestrator leaves
//! for strategies (why one was declared dead), so those never block the orchestrator
//! either.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use peregrine_queue::linelog::{write_file, LineLog, LineLogConfig};

/// The engine's queue: 4,096 lines, no rate budget.
const CONFIG: LineLogConfig = LineLogConfig {
    capacity: 4_096,
    lines_per_second: None,
    thread_name: "log",
    dropped_note: |n, _| format!("engine: {n} log lines dropped (stderr was not keeping up)"),
};

/// The sending end (cheap to clone).
#[derive(Debug, Clone)]
pub struct EngineLog {
    inner: Option<LineLog>,
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
            Some(log) => {
                log.line(line);
            }
        }
    }

    /// Writes `text` into the file `path` (off this thread unless this is
    /// [`EngineLog::stderr_direct`]); dropped like a line when the queue is full.
    pub fn file(&self, path: PathBuf, text: String) {
        match &self.inner {
            None => write_file(&path, &text),
            Some(log) => {
                log.file(path, text);
            }
        }
    }

    /// Starts the `log` thread; it writes until `stop` is set and the queue is empty.
    pub fn start(
        stop: Arc<AtomicBool>,
    ) -> std::io::Result<(EngineLog, std::thread::JoinHandle<()>)> {
        let (log, h) = LineLog::start(CONFIG, Some(stop))?;
        Ok((EngineLog { inner: Some(log) }, h))
    }
}
