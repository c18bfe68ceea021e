//! The binary's log backend for the `log` facade the libraries write to: one line
//! per record on stderr, prefixed with the seconds since start (the format the
//! exchange has always logged in). Nothing on a per-order path logs.
//!
//! The thread that logs never waits for stderr: a record is formatted and handed to
//! the bounded queue of [`peregrine_queue::linelog`] (the engine's log queue too), which
//! one writer thread drains into stderr; when the queue is full (a slow or blocked
//! stderr: a terminal paused, a pipe nobody reads) or a burst exceeds
//! [`LINES_PER_SECOND`], the record is dropped and counted, and the writer says how
//! many were dropped once it can write again. So a flood of refused connections
//! against a stalled stderr pipe costs the matching thread a failed `try_send`, never a
//! blocked `write(2)` (tests/cli/logging.rs, `a_blocked_stderr_does_not_stall_matching`).

use std::sync::OnceLock;
use std::time::Duration;

use peregrine_queue::linelog::{LineLog, LineLogConfig};

/// Lines accepted per second (a burst above it is dropped and counted).
const LINES_PER_SECOND: u64 = 2000;
/// How long [`flush`] waits for the writer (a stderr blocked for good must not hang
/// the process's exit).
const FLUSH_WAIT: Duration = Duration::from_secs(2);

const CONFIG: LineLogConfig = LineLogConfig {
    capacity: 4096,
    lines_per_second: Some(LINES_PER_SECOND),
    thread_name: "log-writer",
    dropped_note: |n, t| {
        stamped(
            t,
            format_args!("log: {n} line(s) dropped (stderr slow, or over {LINES_PER_SECOND}/s)"),
        )
    },
};

static LOGGER: OnceLock<Backend> = OnceLock::new();

struct Backend(LineLog);

/// `[   seconds] text`.
fn stamped(t: Duration, text: std::fmt::Arguments<'_>) -> String {
    format!("[{:>10.6}] {text}", t.as_secs_f64())
}

impl log::Log for Backend {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }

    fn log(&self, record: &log::Record<'_>) {
        self.0.line(stamped(self.0.elapsed(), *record.args()));
    }

    fn flush(&self) {
        self.0.flush(FLUSH_WAIT);
    }
}

/// Installs the logger (once; later calls do nothing), starts its clock and its writer
/// thread.
pub(crate) fn init() {
    if LOGGER.get().is_some() {
        return;
    }
    // The writer ends with the process (the static sender is never dropped).
    let Ok((log, _writer)) = LineLog::start(CONFIG, None) else {
        return;
    };
    if LOGGER.set(Backend(log)).is_err() {
        return;
    }
    if let Some(backend) = LOGGER.get() {
        if log::set_logger(backend).is_ok() {
            log::set_max_level(log::LevelFilter::Info);
        }
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
    fn lines_are_stamped_with_seconds_since_start() {
        assert_eq!(
            stamped(Duration::from_millis(1500), format_args!("hello")),
            "[  1.500000] hello"
        );
    }
}
