//! Load-generator results: counters, latency histograms, text and JSON output.

use hdrhistogram::Histogram;
use serde::Serialize;

/// Counters and histograms of one run (latencies in nanoseconds).
#[derive(Debug)]
pub(super) struct Stats {
    /// Order → Accepted/Rejected.
    pub ack: Histogram<u64>,
    /// Order → first taker Fill (crossing orders).
    pub fill: Histogram<u64>,
    /// Order → `Rejected` with reason `busy` (the exchange at capacity).
    pub busy_ack: Histogram<u64>,
    /// Open loop: an order's due time → the client queued it (the client's own lag:
    /// a generator short of CPU falls behind its schedule).
    pub send_lag: Histogram<u64>,
    /// Rejected orders (business reasons; `busy` apart).
    pub rejects: u64,
    /// Orders refused `busy`.
    pub busy: u64,
    /// Sessions ended by a `LeaderRedirect` (a cluster leader that lost its quorum).
    pub redirected: u64,
    /// Fills received (maker and taker).
    pub fills: u64,
    /// Cancelled reports received.
    pub cancels: u64,
    /// Protocol errors, sequence gaps, disconnects, unexpected reports.
    pub errors: u64,
}

impl Stats {
    /// Empty stats; histograms cover 1 ns ..= 60 s at 3 significant digits.
    pub(super) fn new() -> Self {
        let h =
            || Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("static bounds are valid");
        Stats {
            ack: h(),
            fill: h(),
            busy_ack: h(),
            send_lag: h(),
            rejects: 0,
            busy: 0,
            redirected: 0,
            fills: 0,
            cancels: 0,
            errors: 0,
        }
    }
}

impl Default for Stats {
    fn default() -> Self {
        Self::new()
    }
}

/// Percentiles of one histogram, in microseconds.
#[derive(Debug, Clone, Serialize)]
pub struct Percentiles {
    /// Samples.
    pub count: u64,
    /// Median.
    pub p50_us: f64,
    /// 90th.
    pub p90_us: f64,
    /// 99th.
    pub p99_us: f64,
    /// 99.9th.
    pub p999_us: f64,
    /// 99.99th.
    pub p9999_us: f64,
    /// Maximum.
    pub max_us: f64,
}

impl Percentiles {
    /// From a nanosecond histogram.
    pub fn of(h: &Histogram<u64>) -> Self {
        let us = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
        Percentiles {
            count: h.len(),
            p50_us: us(0.50),
            p90_us: us(0.90),
            p99_us: us(0.99),
            p999_us: us(0.999),
            p9999_us: us(0.9999),
            max_us: h.max() as f64 / 1000.0,
        }
    }

    fn row(&self, name: &str) -> String {
        format!(
            "{name:<12} {:>9} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1}",
            self.count,
            self.p50_us,
            self.p90_us,
            self.p99_us,
            self.p999_us,
            self.p9999_us,
            self.max_us
        )
    }
}

/// The summary printed and written as JSON.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// `open` or `closed`.
    pub mode: String,
    /// Connections.
    pub connections: usize,
    /// Target rate (open loop), orders per second.
    pub target_rate: Option<u64>,
    /// Seconds of sending.
    pub duration_s: f64,
    /// Orders sent.
    pub sent: u64,
    /// Orders answered (Accepted, Rejected, or refused `busy`).
    pub answered: u64,
    /// Orders answered `Accepted` or `Rejected` for a business reason, per second of
    /// sending (`busy` refusals apart).
    pub throughput_per_s: f64,
    /// Rejected orders (business reasons; `busy` apart).
    pub rejects: u64,
    /// Orders refused `busy` (the exchange at capacity: nothing entered).
    pub busy: u64,
    /// Sessions a cluster leader ended with `LeaderRedirect` (it lost its quorum).
    pub redirected: u64,
    /// Fill reports received.
    pub fills: u64,
    /// Cancelled reports received.
    pub cancels: u64,
    /// Protocol errors, sequence gaps, disconnects, unexpected reports.
    pub errors: u64,
    /// Orders sent that never got an answer.
    pub lost: u64,
    /// Of `lost`: orders never written to the socket, still in the client's buffer
    /// at the end (the exchange had not read what came before them, and TCP flow
    /// control held them here). The rest of `lost` reached the exchange's socket.
    pub unsent: u64,
    /// Order → ack latency (`Accepted` or a business `Rejected`).
    pub ack: Percentiles,
    /// Order → `busy` refusal latency.
    pub busy_ack: Percentiles,
    /// Order → taker fill latency.
    pub fill: Percentiles,
    /// Open loop: due → queued by the client (its own lag behind the schedule, part
    /// of every latency above).
    pub send_lag: Percentiles,
}

impl Summary {
    /// Human-readable table.
    pub fn text(&self) -> String {
        let rate = self
            .target_rate
            .map_or("max (closed loop)".to_string(), |r| {
                format!("{r}/s (open loop)")
            });
        format!(
            "loadgen: {} connections, rate {rate}, {:.2} s\n\
             sent {}  answered {}  throughput {:.0}/s  rejects {}  busy {}  fills {}  cancels {}  errors {}  redirected {}  lost {} (never written {})\n\
             {:<12} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n{}\n{}\n{}\n{}\n",
            self.connections,
            self.duration_s,
            self.sent,
            self.answered,
            self.throughput_per_s,
            self.rejects,
            self.busy,
            self.fills,
            self.cancels,
            self.errors,
            self.redirected,
            self.lost,
            self.unsent,
            "latency µs",
            "count",
            "p50",
            "p90",
            "p99",
            "p99.9",
            "p99.99",
            "max",
            self.ack.row("order→ack"),
            self.fill.row("order→fill"),
            self.busy_ack.row("order→busy"),
            self.send_lag.row("client lag"),
        )
    }
}
