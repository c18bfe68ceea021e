//! Log lines an adapter or a feed produced: kept here, bounded, until whoever drives
//! it takes them ([`crate::Venue::drain_log`], [`crate::feed::MarketFeed::drain_log`]).
//! An adapter never writes to stderr itself: the thread that drives it must not block
//! on a slow terminal, pipe or disk (the engine hands the lines to its log thread).

use std::collections::VecDeque;

/// Lines kept at most; beyond, they are counted and dropped.
const KEEP: usize = 256;

/// The buffer.
#[derive(Debug, Default)]
pub struct LogLines {
    lines: VecDeque<String>,
    dropped: u64,
}

impl LogLines {
    /// Keeps one line (without its newline).
    pub fn push(&mut self, line: String) {
        if self.lines.len() < KEEP {
            self.lines.push_back(line);
        } else {
            self.dropped += 1;
        }
    }

    /// Hands every line to `out`, oldest first (and a count of the dropped ones).
    pub fn drain(&mut self, out: &mut dyn FnMut(String)) {
        while let Some(line) = self.lines.pop_front() {
            out(line);
        }
        if self.dropped > 0 {
            out(format!("({} more log lines dropped)", self.dropped));
            self.dropped = 0;
        }
    }

    /// No line waiting.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty() && self.dropped == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_a_bounded_number_and_counts_the_rest() {
        let mut l = LogLines::default();
        for i in 0..KEEP + 3 {
            l.push(format!("{i}"));
        }
        let mut got = Vec::new();
        l.drain(&mut |s| got.push(s));
        assert_eq!(got.len(), KEEP + 1);
        assert_eq!(got[0], "0");
        assert_eq!(got[KEEP], "(3 more log lines dropped)");
        assert!(l.is_empty());
    }
}
