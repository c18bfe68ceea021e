//! The `[commitments]` section of the exchange config.

use serde::{Deserialize, Serialize};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_pinned_and_checked() {
        let c = CommitmentsSection::default();
        assert!(!c.enabled);
        assert_eq!(c.interval_ms, 100);
        assert_eq!(c.chunk_trades, 16_384);
        let mut errs = Vec::new();
        CommitmentsSection {
            enabled: true,
            interval_ms: 0,
            chunk_trades: 0,
        }
        .check(&mut errs);
        assert_eq!(errs.len(), 2);
    }
}
