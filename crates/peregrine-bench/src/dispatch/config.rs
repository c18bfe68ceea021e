//! The dispatch bench's config: one `key: value` per line, `#` starts a comment.
//!
//! Read at run time, so changing a value needs no rebuild. Every key is optional and
//! defaults to the seed's full setup (see [`Config::default`]); an unknown key, a
//! repeated key or a bad value is an error that names the line. Checks that involve
//! two keys name the line of the second.
//!
//! | key | meaning | default |
//! | --- | --- | --- |
//! | `n_strategies` | strategy threads (N) | 8 |
//! | `m_gateways` | gateway threads (M), one per venue | 4 |
//! | `capacity` | slots per bounded queue, power of two | 8192 |
//! | `orders` | orders per run, split evenly over strategies | 4000000 |
//! | `fire_window_ms` | fire times are uniform over this window | 10000 |
//! | `venue_delay_min_us` / `venue_delay_max_us` | D ~ Uniform(min, max) | 5000 / 500000 |
//! | `orch_work_ns` | comma-separated W sweep (busy work per order) | 0,500,1000,1500 |
//! | `repeats` | R runs per (W, candidate); cells are medians | 5 |
//! | `pin` | pin threads to cores (`true`/`false`) | true |
//! | `wait` | `busy-spin`, `spin-yield` or `park` | busy-spin |
//! | `seed` | schedule RNG seed | 1 |
//! | `candidates` | comma-separated subset of the candidates | all |
//! | `clock` | `monotonic` (ordered across threads) or `tsc` (cheaper, unordered) | monotonic |
//! | `drain_timeout_ms` | give up this long after the last order is due back | 10000 |

use std::collections::HashMap;
use std::str::FromStr;

use peregrine_queue::WaitStrategy;

use super::candidates::Candidate;
use super::order::ClockKind;

/// A config problem, with the 1-based line it is on (0 when it is not on a line).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("config line {line}: {message}")]
pub struct ConfigError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Every setting of one bench invocation.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Config {
    /// Strategy threads (N).
    pub n_strategies: usize,
    /// Gateway threads (M).
    pub m_gateways: usize,
    /// Slots per bounded queue.
    pub capacity: usize,
    /// Orders per run.
    pub orders: usize,
    /// Fire window.
    pub fire_window_ms: u64,
    /// Lower bound of the venue delay D.
    pub venue_delay_min_us: u64,
    /// Upper bound of the venue delay D.
    pub venue_delay_max_us: u64,
    /// The W sweep.
    pub orch_work_ns: Vec<u64>,
    /// Runs per (W, candidate).
    pub repeats: usize,
    /// Pin threads to cores.
    pub pin: bool,
    /// Wait strategy of every polling thread.
    #[serde(serialize_with = "wait_name")]
    pub wait: WaitStrategy,
    /// Schedule RNG seed.
    pub seed: u64,
    /// Which candidates to run, in order.
    pub candidates: Vec<Candidate>,
    /// Give up this long after the last order is due back.
    pub drain_timeout_ms: u64,
    /// Time source of the order stamps.
    pub clock: ClockKind,
}

fn wait_name<S: serde::Serializer>(wait: &WaitStrategy, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(wait.name())
}

impl Default for Config {
    /// The seed's full setup (000/001).
    fn default() -> Self {
        Self {
            n_strategies: 8,
            m_gateways: 4,
            capacity: 8192,
            orders: 4_000_000,
            fire_window_ms: 10_000,
            venue_delay_min_us: 5_000,
            venue_delay_max_us: 500_000,
            orch_work_ns: vec![0, 500, 1000, 1500],
            repeats: 5,
            pin: true,
            wait: WaitStrategy::BusySpin,
            seed: 1,
            candidates: Candidate::ALL.to_vec(),
            drain_timeout_ms: 10_000,
            clock: ClockKind::Monotonic,
        }
    }
}

fn err(line: usize, message: impl Into<String>) -> ConfigError {
    ConfigError {
        line,
        message: message.into(),
    }
}

fn num<T: FromStr>(line: usize, key: &str, value: &str) -> Result<T, ConfigError> {
    value.replace('_', "").parse().map_err(|_| {
        err(
            line,
            format!("{key}: {value:?} is not a non-negative integer"),
        )
    })
}

fn positive(line: usize, key: &str, value: &str) -> Result<usize, ConfigError> {
    match num(line, key, value)? {
        0 => Err(err(line, format!("{key} must be at least 1"))),
        n => Ok(n),
    }
}

fn list<T>(
    line: usize,
    value: &str,
    item: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>, ConfigError> {
    let items: Vec<T> = value
        .split(',')
        .map(|s| item(s.trim()).map_err(|m| err(line, m)))
        .collect::<Result<_, _>>()?;
    Ok(items)
}

impl Config {
    /// Parses config text; keys not given keep their defaults.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let mut config = Self::default();
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let content = raw.split('#').next().unwrap_or("").trim();
            if content.is_empty() {
                continue;
            }
            let (key, value) = content
                .split_once(':')
                .ok_or_else(|| err(line, format!("expected `key: value`, got {content:?}")))?;
            let (key, value) = (key.trim(), value.trim());
            if value.is_empty() {
                return Err(err(line, format!("{key}: missing value")));
            }
            if let Some(first) = seen.insert(key.to_owned(), line) {
                return Err(err(line, format!("{key} repeated (first on line {first})")));
            }
            config.set(line, key, value)?;
        }
        config.validate(&seen)?;
        Ok(config)
    }

    fn set(&mut self, line: usize, key: &str, value: &str) -> Result<(), ConfigError> {
        match key {
            "n_strategies" => self.n_strategies = positive(line, key, value)?,
            "m_gateways" => self.m_gateways = positive(line, key, value)?,
            "capacity" => self.capacity = positive(line, key, value)?,
            "orders" => self.orders = positive(line, key, value)?,
            "fire_window_ms" => self.fire_window_ms = positive(line, key, value)? as u64,
            "venue_delay_min_us" => self.venue_delay_min_us = num(line, key, value)?,
            "venue_delay_max_us" => self.venue_delay_max_us = num(line, key, value)?,
            "orch_work_ns" => {
                self.orch_work_ns = list(line, value, |s| {
                    s.parse()
                        .map_err(|_| format!("orch_work_ns: {s:?} is not an integer"))
                })?
            }
            "repeats" => self.repeats = positive(line, key, value)?,
            "pin" => {
                self.pin = value
                    .parse()
                    .map_err(|_| err(line, format!("pin: {value:?} is not true or false")))?
            }
            "wait" => self.wait = value.parse().map_err(|e| err(line, format!("wait: {e}")))?,
            "seed" => self.seed = num(line, key, value)?,
            "candidates" => self.candidates = list(line, value, Candidate::from_str)?,
            "drain_timeout_ms" => self.drain_timeout_ms = num(line, key, value)?,
            "clock" => self.clock = value.parse().map_err(|e: String| err(line, e))?,
            other => return Err(err(line, format!("unknown key {other:?}"))),
        }
        Ok(())
    }

    fn validate(&self, lines: &HashMap<String, usize>) -> Result<(), ConfigError> {
        let at = |key: &str| lines.get(key).copied().unwrap_or(0);
        if !self.capacity.is_power_of_two() || self.capacity < 2 {
            return Err(err(at("capacity"), "capacity must be a power of two >= 2"));
        }
        if self.venue_delay_min_us > self.venue_delay_max_us {
            let line = at("venue_delay_min_us").max(at("venue_delay_max_us"));
            return Err(err(line, "venue_delay_min_us is above venue_delay_max_us"));
        }
        if self.orders < self.n_strategies {
            let line = at("orders").max(at("n_strategies"));
            return Err(err(line, "orders must be at least n_strategies"));
        }
        if self.n_strategies > usize::from(u16::MAX) || self.m_gateways > usize::from(u16::MAX) {
            return Err(err(
                at("n_strategies").max(at("m_gateways")),
                "too many threads",
            ));
        }
        if self.orders > u32::MAX as usize {
            return Err(err(at("orders"), "orders must fit in u32"));
        }
        Ok(())
    }

    /// Reads and parses a config file.
    pub fn load(path: &std::path::Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }

    /// Polling threads per run: N strategies, the orchestrator, M gateways.
    pub fn polling_threads(&self) -> usize {
        self.n_strategies + 1 + self.m_gateways
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &str = "\
# every key
n_strategies: 2
m_gateways: 3
capacity: 64
orders: 1_000   # underscores allowed
fire_window_ms: 50
venue_delay_min_us: 10
venue_delay_max_us: 20
orch_work_ns: 0, 250
repeats: 2
pin: false
wait: spin-yield
seed: 42
candidates: array-queue, spsc-mux
drain_timeout_ms: 300
clock: tsc
";

    #[test]
    fn parses_every_key() {
        let c = Config::parse(FULL).unwrap();
        let expected = Config {
            n_strategies: 2,
            m_gateways: 3,
            capacity: 64,
            orders: 1000,
            fire_window_ms: 50,
            venue_delay_min_us: 10,
            venue_delay_max_us: 20,
            orch_work_ns: vec![0, 250],
            repeats: 2,
            pin: false,
            wait: WaitStrategy::SpinThenYield,
            seed: 42,
            candidates: vec![Candidate::ArrayQueue, Candidate::SpscMux],
            drain_timeout_ms: 300,
            clock: ClockKind::Tsc,
        };
        assert_eq!(c, expected);
    }

    #[test]
    fn empty_gives_seed_defaults() {
        let c = Config::parse("# nothing\n\n").unwrap();
        assert_eq!(c, Config::default());
        assert_eq!(c.orders, c.n_strategies * 500_000);
        assert_eq!(c.polling_threads(), 13);
    }

    #[test]
    fn shipped_configs_parse() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let full = Config::load(&std::path::Path::new(root).join("config.yaml")).unwrap();
        assert_eq!(
            full,
            Config {
                seed: full.seed,
                ..Config::default()
            }
        );
        Config::load(&std::path::Path::new(root).join("config.small.yaml")).unwrap();
    }

    fn line_of(text: &str) -> (usize, String) {
        let e = Config::parse(text).unwrap_err();
        (e.line, e.message)
    }

    #[test]
    fn every_error_names_its_line() {
        let cases = [
            ("\nbogus: 1", 2, "unknown key"),
            ("no colon here", 1, "expected"),
            ("repeats:", 1, "missing value"),
            ("seed: 1\nseed: 2", 2, "repeated"),
            ("n_strategies: 0", 1, "at least 1"),
            ("m_gateways: -1", 1, "not a non-negative integer"),
            ("capacity: 100", 1, "power of two"),
            ("orders: x", 1, "not a non-negative"),
            ("fire_window_ms: 0", 1, "at least 1"),
            ("venue_delay_min_us: 5\nvenue_delay_max_us: 4", 2, "above"),
            ("venue_delay_max_us: 1.5", 1, "not a non-negative"),
            ("orch_work_ns: 0, x", 1, "not an integer"),
            ("repeats: 0", 1, "at least 1"),
            ("pin: yes", 1, "true or false"),
            ("wait: sleepy", 1, "unknown wait strategy"),
            ("seed: -3", 1, "not a non-negative"),
            ("candidates: array-queue, nope", 1, "unknown candidate"),
            ("drain_timeout_ms: soon", 1, "not a non-negative"),
            ("clock: wall", 1, "unknown clock"),
            ("n_strategies: 4\norders: 3", 2, "at least n_strategies"),
            ("orders: 5000000000", 1, "fit in u32"),
        ];
        for (text, line, needle) in cases {
            let (got_line, message) = line_of(text);
            assert_eq!(got_line, line, "{text:?}: {message}");
            assert!(message.contains(needle), "{text:?}: {message}");
        }
    }
}
