//! The binary's log backend for the `log` facade the libraries write to: one line
//! per record on stderr, prefixed with the seconds since start (the format the
//! exchange has always logged in). Nothing on a per-order path logs.

use std::io::Write;
use std::sync::OnceLock;
use std::time::Instant;

static START: OnceLock<Instant> = OnceLock::new();

struct Stderr;

impl log::Log for Stderr {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }

    fn log(&self, record: &log::Record<'_>) {
        let t = START.get_or_init(Instant::now).elapsed().as_secs_f64();
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "[{t:>10.6}] {}", record.args());
    }

    fn flush(&self) {}
}

/// Installs the logger (once; later calls do nothing) and starts its clock.
pub(crate) fn init() {
    let _ = START.get_or_init(Instant::now);
    if log::set_logger(&Stderr).is_ok() {
        log::set_max_level(log::LevelFilter::Info);
    }
}
