//! The server-side order→ack time: from the first byte of an order read off its
//! socket to its ack written back, split into stages. Measured by the compact loop
//! on every order request (a few clock reads per order, ~25 ns each), published to
//! `/metrics` with the other counters and printed as a summary when the exchange
//! stops.
//!
//! | stage | from → to |
//! |---|---|
//! | `decode` | `read` returned → the read's frames decoded |
//! | `queue` | decoded → the core takes the request (requests read before it run first) |
//! | `append` | → its command appended to the journal's buffer |
//! | `match` | → executed by the engine (and settled by the ledger) |
//! | `encode` | → its reports encoded into the sessions' buffers |
//! | `batch` | → the batch ended: the requests after it, and the journal `write` |
//! | `durable` | → the loop saw the batch durable (the `fdatasync` on the sync thread; ~0 without one) |
//! | `write` | → the ack's session written (`write` returned) |
//! | `total` | `read` returned → ack written: the sum of the above |

use std::sync::Arc;

use hdrhistogram::Histogram;
use peregrine_exchange_core::telemetry::{Debounce, Stamps, Stopwatch};
use peregrine_exchange_core::Request;

use crate::metrics::ack_stats::{AckStats, STAGES};
use crate::metrics::hub::MetricsHub;

/// Orders whose ack is not written yet, at most (beyond, new ones are not timed).
const PENDING: usize = 1 << 16;

/// One order on its way to its ack.
#[derive(Debug, Clone, Copy)]
struct Pending {
    slot: usize,
    read: u64,
    decoded: u64,
    stamps: Stamps,
    /// The batch's last engine sequence number, once it ended (0 before).
    seq: u64,
    committed: u64,
    /// When the loop saw the batch durable (0 before).
    released: u64,
}

/// The loop's recorder.
#[derive(Debug)]
pub(crate) struct AckTimer {
    stopwatch: Stopwatch,
    pending: Vec<Pending>,
    /// Index of the first pending order whose batch has not ended.
    open_from: usize,
    hdr: Vec<Histogram<u64>>,
    stats: AckStats,
    hub: Option<(Arc<MetricsHub>, Debounce)>,
}

impl AckTimer {
    /// A recorder on `stopwatch` (the one the session table and the core stamp with).
    pub(crate) fn new(stopwatch: Stopwatch) -> Self {
        let h = || Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("static bounds");
        AckTimer {
            stopwatch,
            pending: Vec::with_capacity(PENDING),
            open_from: 0,
            hdr: (0..STAGES.len()).map(|_| h()).collect(),
            stats: AckStats::default(),
            hub: None,
        }
    }

    /// Publishes to `hub` at most once per `interval_ns`.
    pub(crate) fn with_hub(mut self, hub: Arc<MetricsHub>, interval_ns: u64) -> Self {
        self.hub = Some((hub, Debounce::new(interval_ns)));
        self
    }

    /// The core handled order request `r` with stage stamps `s`.
    #[inline]
    pub(crate) fn handled(&mut self, r: &Request, s: Stamps) {
        if r.read_ns == 0 || self.pending.len() >= PENDING {
            return;
        }
        self.pending.push(Pending {
            slot: r.key.slot(),
            read: r.read_ns,
            decoded: r.decoded_ns,
            stamps: s,
            seq: 0,
            committed: 0,
            released: 0,
        });
    }

    /// The batch ending at `seq` was committed.
    #[inline]
    pub(crate) fn committed(&mut self, seq: u64) {
        if self.open_from == self.pending.len() {
            return;
        }
        let now = self.stopwatch.now_ns();
        for p in &mut self.pending[self.open_from..] {
            p.seq = seq;
            p.committed = now;
        }
        self.open_from = self.pending.len();
    }

    /// Everything through `durable` is durable (the loop released it).
    #[inline]
    pub(crate) fn released(&mut self, durable: u64) {
        let mut now = None;
        for p in &mut self.pending[..self.open_from] {
            if p.released == 0 && p.seq <= durable {
                p.released = *now.get_or_insert_with(|| self.stopwatch.now_ns());
            }
        }
    }

    /// The sessions were written: `written(slot)` is when session `slot` last was.
    /// Records every released order and forgets it.
    pub(crate) fn written(&mut self, written: impl Fn(usize) -> u64) {
        let mut i = 0;
        while i < self.open_from {
            let p = self.pending[i];
            if p.released == 0 {
                i += 1;
                continue;
            }
            let w = written(p.slot).max(p.released);
            let s = p.stamps;
            let marks = [
                p.read,
                p.decoded,
                s.start,
                s.appended,
                s.matched,
                s.routed,
                p.committed,
                p.released,
                w,
            ];
            for k in 0..8 {
                self.record(k, marks[k + 1].saturating_sub(marks[k]));
            }
            self.record(8, w.saturating_sub(p.read));
            self.pending.swap_remove(i);
            self.open_from -= 1;
            if self.open_from < self.pending.len() {
                // swap_remove moved an open (not yet committed) order into `i`:
                // swap it with the last committed one, so the committed ones stay
                // first (the one now at `i` is examined next).
                self.pending.swap(i, self.open_from);
            }
        }
        self.publish();
    }

    #[inline]
    fn record(&mut self, stage: usize, ns: u64) {
        let _ = self.hdr[stage].record(ns.max(1));
        self.stats.stages[stage].record(ns);
    }

    fn publish(&mut self) {
        let Some((hub, debounce)) = self.hub.as_mut() else {
            return;
        };
        let now = self.stopwatch.now_ns();
        if debounce.is_due(now) && hub.publish_ack(&self.stats) {
            debounce.done(now);
        }
    }

    /// The summary so far.
    pub(crate) fn summary(&self) -> AckSummary {
        AckSummary {
            stages: STAGES
                .iter()
                .zip(&self.hdr)
                .map(|(name, h)| StageSummary {
                    stage: name,
                    count: h.len(),
                    mean_us: h.mean() / 1e3,
                    p50_us: h.value_at_quantile(0.50) as f64 / 1e3,
                    p90_us: h.value_at_quantile(0.90) as f64 / 1e3,
                    p99_us: h.value_at_quantile(0.99) as f64 / 1e3,
                    p999_us: h.value_at_quantile(0.999) as f64 / 1e3,
                    max_us: h.max() as f64 / 1e3,
                })
                .collect(),
        }
    }
}

/// One stage's percentiles, microseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct StageSummary {
    /// The stage (one of `STAGES`).
    pub stage: &'static str,
    /// Orders timed.
    pub count: u64,
    /// Mean.
    pub mean_us: f64,
    /// Median.
    pub p50_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
    /// Maximum.
    pub max_us: f64,
}

/// The server-side order→ack time by stage, printed when the exchange stops.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AckSummary {
    /// Every stage, `total` last.
    pub stages: Vec<StageSummary>,
}

impl AckSummary {
    /// One line per stage (`ack stage NAME count .. p50 .. µs`).
    pub fn text(&self) -> String {
        let mut out =
            String::from("server order->ack (first byte read -> ack written), microseconds:\n");
        for s in &self.stages {
            out.push_str(&format!(
                "ack stage {:<8} count {:>9} mean {:>9.2} p50 {:>9.2} p90 {:>9.2} p99 {:>9.2} p99.9 {:>9.2} max {:>10.2}\n",
                s.stage, s.count, s.mean_us, s.p50_us, s.p90_us, s.p99_us, s.p999_us, s.max_us
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_exchange_core::SessionKey;
    use peregrine_types::AccountId;
    use peregrine_wire::v2::ClientHeartbeat;
    use peregrine_wire::v2::Inbound;

    fn req(read: u64) -> Request {
        Request {
            key: SessionKey::new(3, 0),
            account: AccountId(1),
            scope: peregrine_exchange_core::queries::Scope::Account(AccountId(1)),
            msg: Inbound::ClientHeartbeat(ClientHeartbeat {}),
            read_ns: read,
            decoded_ns: read + 10,
        }
    }

    #[test]
    fn stages_add_up_and_wait_for_durability() {
        let mut t = AckTimer::new(Stopwatch::new());
        let s = Stamps {
            start: 130,
            appended: 140,
            matched: 170,
            routed: 200,
        };
        t.handled(&req(100), s);
        t.handled(&req(0), s); // not timed
        t.committed(5);
        t.released(4);
        t.written(|_| u64::MAX);
        assert_eq!(t.summary().stages[8].count, 0, "batch 5 is not durable yet");
        t.released(5);
        let committed = t.pending[0].committed;
        let released = t.pending[0].released;
        t.written(|slot| {
            assert_eq!(slot, 3);
            released + 50
        });
        let sum = t.summary();
        let total = &sum.stages[8];
        assert_eq!(total.count, 1);
        assert!(t.pending.is_empty());
        let st = &t.stats.stages;
        assert_eq!(st[0].sum_ns, 10, "decode");
        assert_eq!(st[1].sum_ns, 20, "queue");
        assert_eq!(st[2].sum_ns, 10, "append");
        assert_eq!(st[3].sum_ns, 30, "match");
        assert_eq!(st[4].sum_ns, 30, "encode");
        assert_eq!(st[5].sum_ns, committed - 200, "batch");
        assert_eq!(st[6].sum_ns, released - committed, "durable");
        assert_eq!(st[7].sum_ns, 50, "write");
        let parts: u64 = st[..8].iter().map(|h| h.sum_ns).sum();
        assert_eq!(st[8].sum_ns, parts, "the stages add up to the total");
        assert!(sum.text().contains("ack stage total"));
    }
}
