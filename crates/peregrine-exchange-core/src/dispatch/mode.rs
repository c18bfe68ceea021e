//! The matching mode (`mode`, `tick_us`) and the commitment window it implies.

use peregrine_commit::CommitmentsSection;
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
    fn the_window_is_the_tick_in_batch_mode_and_the_interval_otherwise() {
        let c = CommitmentsSection::default();
        assert_eq!(window_ns(MatchingMode::Batch, 1000, &c), 1_000_000);
        assert_eq!(window_ns(MatchingMode::Continuous, 1000, &c), 100_000_000);
        assert_eq!(MatchingMode::default(), MatchingMode::Continuous);
    }
}
