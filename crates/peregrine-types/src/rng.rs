//! The one random number generator of the workspace: SplitMix64 (Steele, Lea and
//! Flood, 2014), seeded, so every workload, example strategy, simulated venue and test
//! stream repeats exactly from its seed.
//!
//! Not for anything that must be unpredictable: it is a 64-bit counter through a
//! mixing function. It is here because it is tiny, fast (a few ns a draw) and good
//! enough for sampling benchmarks and test streams; matching itself never draws.

/// SplitMix64. `Clone` copies the stream: both copies draw the same numbers.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator whose stream depends only on `seed`.
    pub const fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0), by multiply-shift: the bias is below
    /// `n / 2^64`, and no division.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `lo..=hi` (`lo` when `hi < lo`).
    #[inline]
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        let span = u128::from(hi.saturating_sub(lo)) + 1;
        lo + ((u128::from(self.next_u64()) * span) >> 64) as u64
    }

    /// True with probability `numerator / denominator` (never when the denominator
    /// is 0).
    #[inline]
    pub fn chance(&mut self, numerator: u64, denominator: u64) -> bool {
        denominator != 0 && self.below(denominator) < numerator
    }

    /// A uniformly chosen element of a non-empty slice.
    ///
    /// # Panics
    /// If `items` is empty.
    #[inline]
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_stream() {
        // The first outputs of SplitMix64 seeded with 0, as the reference C code
        // (Vigna's splitmix64.c) prints them.
        let mut rng = Rng::new(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(rng.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn ranges_stay_inside_and_cover() {
        let mut rng = Rng::new(7);
        let mut seen = [false; 5];
        for _ in 0..1_000 {
            let v = rng.range(10, 14);
            assert!((10..=14).contains(&v));
            seen[(v - 10) as usize] = true;
            assert!(rng.below(3) < 3);
        }
        assert!(
            seen.iter().all(|s| *s),
            "every value of a small range is drawn"
        );
        assert_eq!(rng.below(0), 0);
        assert_eq!(rng.range(5, 5), 5);
        assert_eq!(rng.range(9, 3), 9);
        assert!(!rng.chance(1, 0));
        assert!(rng.chance(1, 1));
        assert_eq!(rng.pick(&[4]), 4);
    }

    #[test]
    fn same_seed_same_stream() {
        let mut a = Rng::new(42);
        let mut b = a.clone();
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        assert_ne!(Rng::new(1).next_u64(), Rng::new(2).next_u64());
    }
}
