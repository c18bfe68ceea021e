//! The matching mode (`mode`, `tick_us`, `tick_capacity`) and the `[commitments]`
//! section of the exchange config.

use serde::{Deserialize, Serialize};

/// How requests become commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum MatchingMode {
    /// Each request is stamped with the clock and matched on arrival. The default.
    #[default]
    Continuous,
    /// The sequencer collects requests into ticks of `tick_us`; at each tick boundary
    /// the tick's commands are journaled and executed in arrival order, all with the
    /// tick's timestamp, and their reports leave after the journal commit.
    Batch,
}

/// The optional `[commitments]` section: Blake3 state hash and Merkle root of the
/// trades of every window of matching, computed on a hasher thread, logged to
/// `<journal dir>/commitments` and published on the feed (docs/commitments.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CommitmentsSection {
    /// Compute commitments at all. Default `false`. Needs a `[journal]`.
    pub enabled: bool,
    /// Continuous mode: the commitment window, milliseconds (window `k` holds the
    /// commands with timestamp in `[k·I, (k+1)·I)`). Default 100. In batch mode the
    /// window is the tick and this is ignored.
    pub interval_ms: u64,
    /// Trades the matching thread buffers before handing a chunk of the open window
    /// to the hasher thread (the window continues in the next chunk). Default 16,384.
    pub chunk_trades: usize,
}

impl Default for CommitmentsSection {
    fn default() -> Self {
        CommitmentsSection {
            enabled: false,
            interval_ms: 100,
            chunk_trades: 16_384,
        }
    }
}

impl CommitmentsSection {
    /// Pushes every problem found onto `errs`.
    pub fn check(&self, errs: &mut Vec<String>) {
        if !(1..=3_600_000).contains(&self.interval_ms) {
            errs.push("commitments.interval_ms: must be 1..=3600000".into());
        }
        if !(1..=1 << 20).contains(&self.chunk_trades) {
            errs.push("commitments.chunk_trades: must be 1..=1048576".into());
        }
    }
}

/// The commitment window in nanoseconds: the tick in batch mode, the interval in
/// continuous mode.
pub fn window_ns(mode: MatchingMode, tick_us: u64, c: &CommitmentsSection) -> u64 {
    match mode {
        MatchingMode::Batch => tick_us.saturating_mul(1_000),
        MatchingMode::Continuous => c.interval_ms.saturating_mul(1_000_000),
    }
    .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_windows() {
        let c = CommitmentsSection::default();
        assert!(!c.enabled);
        assert_eq!(c.interval_ms, 100);
        assert_eq!(c.chunk_trades, 16_384);
        assert_eq!(window_ns(MatchingMode::Batch, 1000, &c), 1_000_000);
        assert_eq!(window_ns(MatchingMode::Continuous, 1000, &c), 100_000_000);
        let mut errs = Vec::new();
        CommitmentsSection {
            enabled: true,
            interval_ms: 0,
            chunk_trades: 0,
        }
        .check(&mut errs);
        assert_eq!(errs.len(), 2);
    }

    #[test]
    fn config_keys_parse_and_validate() {
        use crate::config::Config;
        let c = Config::parse(
            "mode = \"batch\"\ntick_us = 500\n[commitments]\nenabled = true\ninterval_ms = 5",
        )
        .unwrap();
        assert_eq!(c.mode, MatchingMode::Batch);
        assert_eq!(c.commit_window_ns(), 500_000);
        let errs = c.validate().unwrap_err();
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].contains("needs a [journal]"));
        let bad = Config {
            tick_us: 0,
            tick_capacity: 0,
            ..Config::default()
        };
        assert_eq!(bad.validate().unwrap_err().len(), 2);
        assert!(Config::parse("mode = \"sideways\"").is_err());
        assert!(Config::parse("[commitments]\ninterval = 3").is_err());
    }
}
