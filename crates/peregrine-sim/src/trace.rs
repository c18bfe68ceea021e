//! What a run did: the last events (printed with a failure, so the first broken
//! invariant comes with what led to it), a hash of every event (two runs of one seed
//! must hash the same), and the log lines the production code wrote, captured per
//! thread instead of printed.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt::Write as _;

/// Events kept for the failure report.
const KEEP: usize = 400;

/// The run's trace.
#[derive(Debug)]
pub struct Trace {
    recent: VecDeque<String>,
    hasher: blake3::Hasher,
    /// Events recorded.
    pub events: u64,
    /// Print every event as it happens (`--verbose`).
    pub echo: bool,
}

impl Default for Trace {
    fn default() -> Self {
        Trace {
            recent: VecDeque::with_capacity(KEEP),
            hasher: blake3::Hasher::new(),
            events: 0,
            echo: false,
        }
    }
}

impl Trace {
    /// Records one event at simulated time `now_ns`.
    pub fn event(&mut self, now_ns: u64, what: String) {
        self.hasher.update(&now_ns.to_le_bytes());
        self.hasher.update(what.as_bytes());
        self.events += 1;
        let line = format!("{:>10.3} ms  {what}", now_ns as f64 / 1e6);
        if self.echo {
            eprintln!("{line}");
        }
        if self.recent.len() == KEEP {
            self.recent.pop_front();
        }
        self.recent.push_back(line);
    }

    /// Folds data into the hash without keeping a line (bytes moved, hashes seen).
    pub fn fold(&mut self, bytes: &[u8]) {
        self.hasher.update(bytes);
    }

    /// The hash of everything recorded so far (16 hex digits).
    pub fn hash(&self) -> String {
        let h = self.hasher.finalize();
        h.as_bytes()[..8].iter().fold(String::new(), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
    }

    /// The last events, oldest first.
    pub fn recent(&self) -> impl Iterator<Item = &String> {
        self.recent.iter()
    }
}

thread_local! {
    static LOG: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// Captures the `log` records of this thread (the production code's logs) from now
/// on; [`take_logs`] hands them out. Installs the capturing logger once per process.
pub fn capture_logs() {
    static LOGGER: Capture = Capture;
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(log::LevelFilter::Info);
    }
    LOG.with(|l| *l.borrow_mut() = Some(Vec::new()));
}

/// The log lines captured on this thread since the last call.
pub fn take_logs() -> Vec<String> {
    LOG.with(|l| {
        l.borrow_mut()
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    })
}

/// Units after which a number in a log line is a wall-clock measurement (the
/// production code times its start-up: "replayed 12 record(s) in 0.232 ms (51697
/// records/s)"), which differs between two runs of one seed.
const WALL_UNITS: [&str; 5] = [" ms", " records/s", " µs", " us", " ns"];

/// `line` with every wall-clock number replaced by `#`, so that the trace of a seed
/// hashes the same on every run.
pub(crate) fn mask_wall_clock(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        let len = after
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(after.len());
        let (number, tail) = after.split_at(len);
        if WALL_UNITS.iter().any(|u| tail.starts_with(u)) {
            out.push('#');
        } else {
            out.push_str(number);
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

#[derive(Debug)]
struct Capture;

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &log::Record<'_>) {
        LOG.with(|l| {
            if let Some(v) = l.borrow_mut().as_mut() {
                v.push(mask_wall_clock(&format!("{}", record.args())));
            }
        });
    }
    fn flush(&self) {}
}

#[cfg(test)]
mod tests {
    use super::mask_wall_clock;

    #[test]
    fn wall_clock_numbers_are_masked_and_nothing_else() {
        assert_eq!(
            mask_wall_clock(
                "journal: replayed 12 record(s) to seq 212 in 0.232 ms (51697 records/s); \
                 state hash 24125efc"
            ),
            "journal: replayed 12 record(s) to seq 212 in # ms (# records/s); state hash 24125efc"
        );
        assert_eq!(
            mask_wall_clock("snapshot-00000000000000000200.snap loaded: seq 200, 4.066 ms"),
            "snapshot-00000000000000000200.snap loaded: seq 200, # ms"
        );
    }
}
