//! The pre-sampled fire schedule, replayed identically for every candidate and repeat.
//!
//! Each strategy gets `orders / N` orders (the first `orders % N` strategies one more)
//! with fire times uniform over the window, sorted; each order picks a venue uniformly
//! and a delay D ~ Uniform(min, max). Strategy `s` draws from its own [`Rng`] stream
//! seeded from `(seed, s)`, so the schedule depends only on the config.

use peregrine_types::Rng;

use super::config::Config;

/// One scheduled order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fire {
    /// Fire time in ns from the run start.
    pub at_ns: u64,
    /// Destination gateway.
    pub venue: u16,
    /// Venue delay D in ns.
    pub delay_ns: u64,
}

/// Per-strategy lists of fires, each sorted by time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// `per_strategy[s]` is strategy `s`'s list.
    pub per_strategy: Vec<Vec<Fire>>,
}

impl Schedule {
    /// Samples the schedule for `config`.
    pub fn generate(config: &Config) -> Self {
        let n = config.n_strategies;
        let window_ns = config.fire_window_ms * 1_000_000;
        let (d_lo, d_hi) = (
            config.venue_delay_min_us * 1_000,
            config.venue_delay_max_us * 1_000,
        );
        let per_strategy = (0..n)
            .map(|s| {
                let count = config.orders / n + usize::from(s < config.orders % n);
                let mut rng =
                    Rng::new(config.seed ^ (s as u64).wrapping_mul(0xA24B_AED4_963E_E407));
                let mut fires: Vec<Fire> = (0..count)
                    .map(|_| Fire {
                        at_ns: rng.range(0, window_ns - 1),
                        venue: rng.range(0, config.m_gateways as u64 - 1) as u16,
                        delay_ns: rng.range(d_lo, d_hi),
                    })
                    .collect();
                fires.sort_by_key(|f| f.at_ns);
                fires
            })
            .collect();
        Self { per_strategy }
    }

    /// Total orders.
    pub fn len(&self) -> usize {
        self.per_strategy.iter().map(Vec::len).sum()
    }

    /// Whether there are no orders.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Orders routed to each venue.
    pub fn per_venue(&self, venues: usize) -> Vec<usize> {
        let mut counts = vec![0; venues];
        for fire in self.per_strategy.iter().flatten() {
            counts[usize::from(fire.venue)] += 1;
        }
        counts
    }

    /// The largest venue delay D.
    pub fn max_delay_ns(&self) -> u64 {
        self.per_strategy
            .iter()
            .flatten()
            .map(|f| f.delay_ns)
            .max()
            .unwrap_or(0)
    }

    /// The latest time an order is due back from its venue, in ns from the run start.
    pub fn last_due_ns(&self) -> u64 {
        self.per_strategy
            .iter()
            .flatten()
            .map(|f| f.at_ns + f.delay_ns)
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Config {
        Config {
            n_strategies: 3,
            m_gateways: 2,
            orders: 30_001,
            fire_window_ms: 100,
            venue_delay_min_us: 5,
            venue_delay_max_us: 50,
            ..Config::default()
        }
    }

    #[test]
    fn deterministic_for_a_seed() {
        let a = Schedule::generate(&config());
        assert_eq!(a, Schedule::generate(&config()));
        let other = Schedule::generate(&Config {
            seed: 2,
            ..config()
        });
        assert_ne!(a, other);
    }

    #[test]
    fn counts_bounds_and_order() {
        let c = config();
        let s = Schedule::generate(&c);
        assert_eq!(s.len(), c.orders);
        let lens: Vec<_> = s.per_strategy.iter().map(Vec::len).collect();
        assert_eq!(lens, vec![10_001, 10_000, 10_000]);
        for fires in &s.per_strategy {
            assert!(fires.windows(2).all(|w| w[0].at_ns <= w[1].at_ns));
            for f in fires {
                assert!(f.at_ns < 100_000_000);
                assert!((5_000..=50_000).contains(&f.delay_ns));
                assert!(f.venue < 2);
            }
        }
        assert_eq!(s.per_venue(2).iter().sum::<usize>(), c.orders);
        assert!(s.last_due_ns() < 100_000_000 + 50_000);
    }

    #[test]
    fn rates_and_distributions_match_config() {
        let s = Schedule::generate(&config());
        let all: Vec<Fire> = s.per_strategy.concat();
        let n = all.len() as f64;
        // Fire times uniform over 100 ms: each 10 ms decile holds ~10% of the orders.
        for decile in 0..10u64 {
            let lo = decile * 10_000_000;
            let share = all
                .iter()
                .filter(|f| (lo..lo + 10_000_000).contains(&f.at_ns))
                .count() as f64
                / n;
            assert!((share - 0.1).abs() < 0.01, "decile {decile}: {share}");
        }
        let mean_d = all.iter().map(|f| f.delay_ns as f64).sum::<f64>() / n;
        assert!((mean_d - 27_500.0).abs() < 500.0, "mean D {mean_d}");
        let venue0 = s.per_venue(2)[0] as f64 / n;
        assert!((venue0 - 0.5).abs() < 0.02, "venue share {venue0}");
    }

    #[test]
    fn range_covers_both_ends() {
        let mut rng = Rng::new(7);
        let draws: Vec<u64> = (0..1000).map(|_| rng.range(3, 5)).collect();
        for v in 3..=5 {
            assert!(draws.contains(&v));
        }
        assert!(draws.iter().all(|v| (3..=5).contains(v)));
    }
}
