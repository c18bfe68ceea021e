//! Minimal logging: one line per event on stderr, prefixed with the time since start.
//! Only session-level events log (connects, disconnects and their reasons); nothing
//! on the per-order path does.

use std::sync::OnceLock;
use std::time::Instant;

static START: OnceLock<Instant> = OnceLock::new();

/// Seconds since the first log line (or [`init`]).
pub fn elapsed() -> f64 {
    START.get_or_init(Instant::now).elapsed().as_secs_f64()
}

/// Starts the log clock.
pub fn init() {
    let _ = elapsed();
}

/// Logs a formatted line to stderr.
#[macro_export]
macro_rules! log {
    ($($arg:tt)*) => {
        eprintln!("[{:>10.6}] {}", $crate::log::elapsed(), format_args!($($arg)*))
    };
}
