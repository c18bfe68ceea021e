//! A replay described as plain data: what `peregrine replay`'s command line parses
//! into, and what the Python package passes to its native module (as JSON), so both
//! describe a replay the same way and reach the same [`Options`].

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::data::latency::read_rows;
use crate::data::stream::open;
use crate::l2::QueueModel;
use crate::latency::{Interpolated, LatencyModel};
use crate::session::{Input, Options, SessionError};

/// The recorded data's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Nasdaq TotalView-ITCH 5.0.
    Itch,
    /// LOBSTER message (and order book) files.
    Lobster,
    /// Binance raw streams as a collector records them.
    Binance,
    /// Tardis `incremental_book_L2` (and `trades`) CSV.
    Tardis,
}

/// A replay, described.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayConfig {
    /// The data's format.
    pub format: Format,
    /// The ITCH file, LOBSTER message file, Binance file or Tardis book file.
    pub file: PathBuf,
    /// ITCH: the symbol to replay.
    #[serde(default)]
    pub symbol: Option<String>,
    /// LOBSTER: the order book file (checked against with `check`).
    #[serde(default)]
    pub book: Option<PathBuf>,
    /// Tardis: the trades file.
    #[serde(default)]
    pub trades: Option<PathBuf>,
    /// Strategy → book, ns.
    #[serde(default)]
    pub entry_latency_ns: u64,
    /// Book → strategy, ns.
    #[serde(default)]
    pub response_latency_ns: u64,
    /// Recorded order latencies (`req_ts,exch_ts,resp_ts` rows) to interpolate
    /// instead of the constant latencies.
    #[serde(default)]
    pub latency_file: Option<PathBuf>,
    /// Uniform jitter added to each order latency, ns (drawn from `seed`).
    #[serde(default)]
    pub jitter_ns: u64,
    /// Venue → strategy market-data latency, ns.
    #[serde(default)]
    pub feed_latency_ns: u64,
    /// The seed of everything random in the replay.
    #[serde(default = "one")]
    pub seed: u64,
    /// Check the book against the file's own at every step (L3, no strategy).
    #[serde(default)]
    pub check: bool,
    /// L2 queue model: `risk-averse`, `power[:N]`, `log`.
    #[serde(default = "risk_averse")]
    pub queue_model: String,
    /// Equity curve sample period, ns of simulated time.
    #[serde(default = "second")]
    pub sample_every_ns: u64,
}

fn one() -> u64 {
    1
}

fn second() -> u64 {
    1_000_000_000
}

fn risk_averse() -> String {
    "risk-averse".into()
}

impl ReplayConfig {
    /// A config for `format` and `file` with every default.
    pub fn new(format: Format, file: PathBuf) -> ReplayConfig {
        ReplayConfig {
            format,
            file,
            symbol: None,
            book: None,
            trades: None,
            entry_latency_ns: 0,
            response_latency_ns: 0,
            latency_file: None,
            jitter_ns: 0,
            feed_latency_ns: 0,
            seed: 1,
            check: false,
            queue_model: risk_averse(),
            sample_every_ns: second(),
        }
    }

    /// The replay's options; reads the latency file if one is named.
    pub fn options(&self) -> Result<Options, SessionError> {
        let bad = |s: String| SessionError::Options(s);
        let input = match self.format {
            Format::Itch => Input::Itch {
                path: self.file.clone(),
                symbol: self
                    .symbol
                    .clone()
                    .ok_or_else(|| bad("an ITCH replay needs the symbol".into()))?,
            },
            Format::Lobster => Input::Lobster {
                messages: self.file.clone(),
                book: self.book.clone(),
            },
            Format::Binance => Input::Binance {
                path: self.file.clone(),
            },
            Format::Tardis => Input::Tardis {
                book: self.file.clone(),
                trades: self.trades.clone(),
            },
        };
        let mut o = Options::new(input);
        o.latency = match &self.latency_file {
            Some(p) => {
                let rows = read_rows(open(p)?)?;
                LatencyModel::Interpolated(
                    Interpolated::new(&rows)
                        .ok_or_else(|| bad(format!("{}: no latency rows", p.display())))?,
                )
            }
            None => LatencyModel::Constant {
                entry_ns: self.entry_latency_ns,
                response_ns: self.response_latency_ns,
            },
        };
        o.jitter_ns = self.jitter_ns;
        o.settings.feed_latency_ns = self.feed_latency_ns;
        o.settings.sample_every_ns = self.sample_every_ns.max(1);
        o.seed = self.seed;
        o.check = self.check;
        o.queue = QueueModel::parse(&self.queue_model).map_err(bad)?;
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trip_defaults_and_refusals() {
        let c: ReplayConfig =
            serde_json::from_str(r#"{"format":"itch","file":"x.itch","symbol":"AAPL"}"#).unwrap();
        assert_eq!(c.seed, 1);
        assert_eq!(c.queue_model, "risk-averse");
        let o = c.options().unwrap();
        assert!(o.input.is_l3());
        let back: ReplayConfig = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
        assert_eq!(back, c);
        assert!(
            serde_json::from_str::<ReplayConfig>(r#"{"format":"itch","file":"x","oops":1}"#)
                .is_err()
        );
        let no_symbol = ReplayConfig::new(Format::Itch, "x".into());
        assert!(no_symbol.options().is_err());
        let mut q = ReplayConfig::new(Format::Binance, "x".into());
        q.queue_model = "fifo".into();
        assert!(q.options().is_err());
    }
}
