//! The standard `process_*` metrics (the names every Prometheus client library
//! exports), read from `/proc/self` at scrape time on the metrics thread.
//!
//! | metric | source |
//! |---|---|
//! | `process_cpu_seconds_total` | `/proc/self/stat` utime + stime, in clock ticks |
//! | `process_resident_memory_bytes` | `/proc/self/stat` rss, in pages |
//! | `process_virtual_memory_bytes` | `/proc/self/stat` vsize |
//! | `process_threads` | `/proc/self/stat` num_threads |
//! | `process_start_time_seconds` | `/proc/self/stat` starttime (ticks after boot) + `btime` of `/proc/stat` |
//! | `process_open_fds` | entries of `/proc/self/fd` |
//! | `process_max_fds` | soft `Max open files` of `/proc/self/limits` |
//!
//! A file that cannot be read or parsed is a [`ProcError`]; the scrape then leaves
//! the `process_*` families out (and logs at debug) rather than failing.

use std::path::Path;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;

use crate::families::Families;

/// Reading `/proc` failed.
#[derive(Debug, thiserror::Error)]
pub enum ProcError {
    /// A file could not be read.
    #[error("reading {path}: {source}")]
    Io {
        /// The file.
        path: &'static str,
        /// The cause.
        source: std::io::Error,
    },
    /// A file did not have the expected shape.
    #[error("parsing {path}: {what}")]
    Parse {
        /// The file.
        path: &'static str,
        /// What was missing or malformed.
        what: &'static str,
    },
}

/// One reading of the process's resources.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProcessStats {
    /// User + system CPU time, seconds.
    pub cpu_seconds: f64,
    /// Resident set size, bytes.
    pub resident_bytes: u64,
    /// Virtual memory size, bytes.
    pub virtual_bytes: u64,
    /// Threads.
    pub threads: u64,
    /// Start time, seconds since the Unix epoch.
    pub start_time_seconds: f64,
    /// Open file descriptors.
    pub open_fds: u64,
    /// The soft limit on open file descriptors (`None`: unlimited).
    pub max_fds: Option<u64>,
}

const STAT: &str = "/proc/self/stat";
const SYS_STAT: &str = "/proc/stat";
const LIMITS: &str = "/proc/self/limits";
const FD_DIR: &str = "/proc/self/fd";

fn read(path: &'static str) -> Result<String, ProcError> {
    std::fs::read_to_string(path).map_err(|source| ProcError::Io { path, source })
}

/// The fields of `/proc/PID/stat` after the command name: index 0 is field 3
/// (`state`) of proc(5).
fn stat_fields(stat: &str) -> Result<Vec<&str>, ProcError> {
    // The command name is in parentheses and may itself contain spaces and ')'.
    let (_, rest) = stat.rsplit_once(')').ok_or(ProcError::Parse {
        path: STAT,
        what: "no ')' after the command name",
    })?;
    Ok(rest.split_whitespace().collect())
}

fn field(fields: &[&str], number: usize, what: &'static str) -> Result<u64, ProcError> {
    fields
        .get(number - 3)
        .and_then(|v| v.parse().ok())
        .ok_or(ProcError::Parse { path: STAT, what })
}

/// `btime` of `/proc/stat`: boot time, seconds since the epoch.
fn boot_time(proc_stat: &str) -> Result<u64, ProcError> {
    proc_stat
        .lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())
        .ok_or(ProcError::Parse {
            path: SYS_STAT,
            what: "no btime line",
        })
}

/// The soft `Max open files` limit (`None`: unlimited).
fn max_open_files(limits: &str) -> Result<Option<u64>, ProcError> {
    let bad = ProcError::Parse {
        path: LIMITS,
        what: "no Max open files line",
    };
    let line = limits
        .lines()
        .find_map(|l| l.strip_prefix("Max open files"))
        .ok_or(bad)?;
    match line.split_whitespace().next() {
        Some("unlimited") => Ok(None),
        Some(v) => v.parse().map(Some).map_err(|_| ProcError::Parse {
            path: LIMITS,
            what: "Max open files is not a number",
        }),
        None => Err(ProcError::Parse {
            path: LIMITS,
            what: "Max open files has no value",
        }),
    }
}

/// Parses the three files (separated from [`ProcessStats::read`] for tests).
fn parse(
    stat: &str,
    proc_stat: &str,
    limits: &str,
    open_fds: u64,
    ticks_per_second: u64,
    page_size: u64,
) -> Result<ProcessStats, ProcError> {
    let f = stat_fields(stat)?;
    let ticks = ticks_per_second.max(1) as f64;
    let utime = field(&f, 14, "utime")?;
    let stime = field(&f, 15, "stime")?;
    let start_ticks = field(&f, 22, "starttime")?;
    Ok(ProcessStats {
        cpu_seconds: utime.saturating_add(stime) as f64 / ticks,
        threads: field(&f, 20, "num_threads")?,
        virtual_bytes: field(&f, 23, "vsize")?,
        resident_bytes: field(&f, 24, "rss")?.saturating_mul(page_size),
        start_time_seconds: boot_time(proc_stat)? as f64 + start_ticks as f64 / ticks,
        open_fds,
        max_fds: max_open_files(limits)?,
    })
}

impl ProcessStats {
    /// Reads `/proc/self`.
    pub fn read() -> Result<Self, ProcError> {
        let open_fds = std::fs::read_dir(Path::new(FD_DIR))
            .map_err(|source| ProcError::Io {
                path: FD_DIR,
                source,
            })?
            .count() as u64;
        parse(
            &read(STAT)?,
            &read(SYS_STAT)?,
            &read(LIMITS)?,
            open_fds,
            rustix::param::clock_ticks_per_second(),
            rustix::param::page_size() as u64,
        )
    }

    /// The families, named without a prefix.
    pub fn families(&self) -> Families {
        let mut f = Families::new();
        f.family(
            "process_cpu_seconds",
            crate::families::Kind::Counter,
            "Total user and system CPU time spent in seconds.",
        );
        f.counter_f64(Vec::new(), self.cpu_seconds);
        let gauge = |f: &mut Families, name: &str, help: &str, v: u64| {
            f.single_gauge(name, help, i64::try_from(v).unwrap_or(i64::MAX));
        };
        gauge(
            &mut f,
            "process_resident_memory_bytes",
            "Resident memory size in bytes.",
            self.resident_bytes,
        );
        gauge(
            &mut f,
            "process_virtual_memory_bytes",
            "Virtual memory size in bytes.",
            self.virtual_bytes,
        );
        f.single_gauge_f64(
            "process_start_time_seconds",
            "Start time of the process since unix epoch in seconds.",
            self.start_time_seconds,
        );
        gauge(
            &mut f,
            "process_open_fds",
            "Number of open file descriptors.",
            self.open_fds,
        );
        match self.max_fds {
            Some(max) => gauge(
                &mut f,
                "process_max_fds",
                "Maximum number of open file descriptors.",
                max,
            ),
            None => f.single_gauge_f64(
                "process_max_fds",
                "Maximum number of open file descriptors.",
                f64::INFINITY,
            ),
        }
        gauge(
            &mut f,
            "process_threads",
            "Number of OS threads in the process.",
            self.threads,
        );
        f
    }
}

/// Reads `/proc/self` on every scrape.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ProcessCollector;

impl Collector for ProcessCollector {
    fn encode(&self, encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        match ProcessStats::read() {
            Ok(s) => s.families().encode(encoder),
            Err(e) => {
                log::debug!("process metrics left out: {e}");
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT_LINE: &str = "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 1000 0 0 0 \
        250 50 0 0 20 0 7 0 12345 104857600 2560 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";

    #[test]
    fn a_stat_line_parses() {
        let s = parse(
            STAT_LINE,
            "cpu  1 2 3\nbtime 1700000000\nprocesses 9\n",
            "Limit Soft Limit Hard Limit Units\nMax open files            1024                 524288               files\n",
            12,
            100,
            4096,
        )
        .unwrap();
        assert_eq!(s.cpu_seconds, 3.0);
        assert_eq!(s.threads, 7);
        assert_eq!(s.virtual_bytes, 104_857_600);
        assert_eq!(s.resident_bytes, 2560 * 4096);
        assert_eq!(s.start_time_seconds, 1_700_000_000.0 + 123.45);
        assert_eq!((s.open_fds, s.max_fds), (12, Some(1024)));
    }

    #[test]
    fn malformed_files_are_typed_errors() {
        let limits = "Max open files unlimited unlimited files\n";
        let e = parse("no parens", "btime 1\n", limits, 0, 100, 4096).unwrap_err();
        assert!(matches!(e, ProcError::Parse { path: STAT, .. }), "{e}");
        let e = parse("1 (x) S 1 2", "btime 1\n", limits, 0, 100, 4096).unwrap_err();
        assert!(matches!(e, ProcError::Parse { what: "utime", .. }), "{e}");
        let e = parse(STAT_LINE, "cpu 1\n", limits, 0, 100, 4096).unwrap_err();
        assert!(matches!(e, ProcError::Parse { path: SYS_STAT, .. }), "{e}");
        let e = parse(STAT_LINE, "btime 1\n", "nothing\n", 0, 100, 4096).unwrap_err();
        assert!(matches!(e, ProcError::Parse { path: LIMITS, .. }), "{e}");
        let s = parse(STAT_LINE, "btime 1\n", limits, 0, 100, 4096).unwrap();
        assert_eq!(s.max_fds, None);
    }

    #[test]
    fn this_process_reads() {
        let s = ProcessStats::read().unwrap();
        assert!(s.threads >= 1 && s.open_fds >= 1 && s.resident_bytes > 0);
        assert!(s.start_time_seconds > 1_000_000_000.0);
    }
}
