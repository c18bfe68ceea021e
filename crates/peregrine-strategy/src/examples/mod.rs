//! Example strategies that use the market: [`maker::Maker`] quotes both sides around
//! the observed mid, skewed against its inventory, re-quoting with replaces;
//! [`taker::Taker`] takes at the touch with IOC orders; [`reverter::Reverter`] trades
//! a moving average of the mid (the one to copy). And a latency probe,
//! [`pinger::Pinger`], for measuring the strategy↔engine round trip.
//!
//! Both draw randomness from a small seeded generator ([`Rng`]) so runs repeat.

pub mod maker;
pub mod pinger;
pub mod reverter;
pub mod taker;

/// SplitMix64: tiny, seeded, good enough for example strategies.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi.saturating_sub(lo) + 1)
    }
}
