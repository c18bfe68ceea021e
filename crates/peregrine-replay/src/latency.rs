//! Order latency models: how long a strategy's request takes to reach the book
//! (entry) and how long the venue's answer takes to reach the strategy (response).
//!
//! * [`LatencyModel::Constant`]: fixed entry and response times.
//! * [`LatencyModel::Interpolated`]: from recorded round trips ([`LatencyRow`]s:
//!   request sent, processed by the venue, answer received), interpolated linearly in
//!   time between the two rows around the moment asked (the first or last row's values
//!   outside the recorded span), as hftbacktest's `IntpOrderLatency` does. Entry is
//!   `exch_ts − req_ts` at the request's time; response is `resp_ts − exch_ts` at the
//!   venue's time. Clocks of the two sides need not agree: a negative difference
//!   (clock skew) counts as zero.
//!
//! An optional uniform jitter drawn from the replay's seed is added to both.

use peregrine_types::Rng;

use crate::data::latency::LatencyRow;

/// Entry and response latencies.
#[derive(Debug, Clone)]
pub enum LatencyModel {
    /// Fixed times, ns.
    Constant {
        /// Strategy → book.
        entry_ns: u64,
        /// Book → strategy.
        response_ns: u64,
    },
    /// Interpolated from recorded round trips (sorted by request time, non-empty).
    Interpolated(Interpolated),
}

/// Recorded round trips, ready to interpolate.
#[derive(Debug, Clone)]
pub struct Interpolated {
    /// (request time, entry latency), by request time.
    entry: Vec<(i64, i64)>,
    /// (venue time, response latency), by venue time.
    response: Vec<(i64, i64)>,
}

impl Interpolated {
    /// From recorded rows; `None` if there are none.
    pub fn new(rows: &[LatencyRow]) -> Option<Interpolated> {
        if rows.is_empty() {
            return None;
        }
        let mut entry: Vec<(i64, i64)> = rows
            .iter()
            .map(|r| (r.req_ts, r.exch_ts.saturating_sub(r.req_ts).max(0)))
            .collect();
        let mut response: Vec<(i64, i64)> = rows
            .iter()
            .map(|r| (r.exch_ts, r.resp_ts.saturating_sub(r.exch_ts).max(0)))
            .collect();
        entry.sort_unstable();
        response.sort_unstable();
        Some(Interpolated { entry, response })
    }
}

/// Linear interpolation of `points` (sorted by x) at `x`.
fn interpolate(points: &[(i64, i64)], x: i64) -> u64 {
    let i = points.partition_point(|p| p.0 <= x);
    let y = match (i.checked_sub(1).map(|j| points[j]), points.get(i)) {
        (Some(a), Some(b)) if b.0 > a.0 => {
            let span = i128::from(b.0) - i128::from(a.0);
            let t = i128::from(x) - i128::from(a.0);
            i128::from(a.1) + (i128::from(b.1) - i128::from(a.1)).saturating_mul(t) / span
        }
        (Some(a), _) => i128::from(a.1),
        (None, Some(b)) => i128::from(b.1),
        (None, None) => 0,
    };
    u64::try_from(y.max(0)).unwrap_or(u64::MAX)
}

/// A latency model with its jitter.
#[derive(Debug, Clone)]
pub struct Latency {
    model: LatencyModel,
    jitter_ns: u64,
    rng: Rng,
}

impl Latency {
    /// `model` plus a uniform jitter in `0..=jitter_ns` drawn from `seed`.
    pub fn new(model: LatencyModel, jitter_ns: u64, seed: u64) -> Latency {
        Latency {
            model,
            jitter_ns,
            rng: Rng::new(seed),
        }
    }

    fn jitter(&mut self) -> u64 {
        if self.jitter_ns == 0 {
            0
        } else {
            self.rng.range(0, self.jitter_ns)
        }
    }

    /// Entry latency of a request sent at `t`.
    pub fn entry(&mut self, t: u64) -> u64 {
        let base = match &self.model {
            LatencyModel::Constant { entry_ns, .. } => *entry_ns,
            LatencyModel::Interpolated(i) => interpolate(&i.entry, clamp(t)),
        };
        base.saturating_add(self.jitter())
    }

    /// Response latency of an answer the venue made at `t`.
    pub fn response(&mut self, t: u64) -> u64 {
        let base = match &self.model {
            LatencyModel::Constant { response_ns, .. } => *response_ns,
            LatencyModel::Interpolated(i) => interpolate(&i.response, clamp(t)),
        };
        base.saturating_add(self.jitter())
    }
}

fn clamp(t: u64) -> i64 {
    i64::try_from(t).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_and_jitter_from_the_seed() {
        let m = LatencyModel::Constant {
            entry_ns: 100,
            response_ns: 50,
        };
        let mut a = Latency::new(m.clone(), 0, 1);
        assert_eq!((a.entry(5), a.response(5)), (100, 50));
        let mut b = Latency::new(m.clone(), 10, 7);
        let mut c = Latency::new(m, 10, 7);
        for t in 0..100 {
            let e = b.entry(t);
            assert!((100..=110).contains(&e));
            assert_eq!(e, c.entry(t), "same seed, same draws");
        }
    }

    #[test]
    fn interpolates_between_rows_and_clamps_outside() {
        let rows = [
            LatencyRow {
                req_ts: 1_000,
                exch_ts: 1_100,
                resp_ts: 1_150,
            },
            LatencyRow {
                req_ts: 2_000,
                exch_ts: 2_300,
                resp_ts: 2_450,
            },
            // Skewed clocks: the venue's stamp is before the request.
            LatencyRow {
                req_ts: 3_000,
                exch_ts: 2_900,
                resp_ts: 3_100,
            },
        ];
        let i = Interpolated::new(&rows).unwrap();
        let mut l = Latency::new(LatencyModel::Interpolated(i), 0, 0);
        assert_eq!(l.entry(0), 100, "before the first row");
        assert_eq!(l.entry(1_000), 100);
        assert_eq!(l.entry(1_500), 200, "halfway between 100 and 300");
        assert_eq!(l.entry(2_500), 150, "halfway between 300 and 0 (skew)");
        assert_eq!(l.entry(9_000), 0, "after the last row");
        assert_eq!(l.response(1_100), 50);
        assert_eq!(l.response(1_700), 100);
        assert!(Interpolated::new(&[]).is_none());
    }
}
