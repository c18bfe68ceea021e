//! What a replay measured: the strategy's fills, position, cash and PnL over time, the
//! latency segments, the checks, and a deterministic hash of the fills. Printed for
//! people ([`Report::render`]), written as JSON, and drawn ([`plot`]).

pub mod plot;

use hdrhistogram::Histogram;
use peregrine_types::decimal::format_scaled;
use peregrine_types::Side;
use serde::Serialize;

use crate::outcome::StrategyFill;

/// One point of the equity curve and of the book.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Sample {
    /// Core time, ns.
    pub ts: u64,
    /// Best bid (units), if any.
    pub bid: Option<i64>,
    /// Best ask (units), if any.
    pub ask: Option<i64>,
    /// The strategy's position (units).
    pub position: i64,
    /// Cash + position × mark, price units × quantity units.
    pub equity: i128,
}

/// Percentiles of one latency segment, ns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Segment {
    /// Samples.
    pub n: u64,
    /// Median.
    pub p50: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest.
    pub max: u64,
}

impl Segment {
    fn of(h: &Histogram<u64>) -> Segment {
        Segment {
            n: h.len(),
            p50: h.value_at_quantile(0.5),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
        }
    }
}

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("static bounds")
}

/// Collects during a replay.
#[derive(Debug)]
pub struct Recorder {
    price_decimals: u32,
    qty_decimals: u32,
    position: i64,
    cash: i128,
    mark: Option<i64>,
    /// The equity curve and book samples.
    pub samples: Vec<Sample>,
    sample_every: u64,
    next_sample: u64,
    entry: Histogram<u64>,
    response: Histogram<u64>,
    round_trip: Histogram<u64>,
    feed: Histogram<u64>,
    /// Requests the strategy sent (new, cancel, replace, other).
    pub requests: [u64; 4],
    /// Events the strategy received, by SDK kind (1..=7 at index kind - 1).
    pub events: [u64; 7],
    /// Book versions and trades the strategy received.
    pub md: [u64; 2],
}

impl Recorder {
    /// A recorder for an instrument with these decimals, sampling the curve every
    /// `sample_every` ns of core time (and at every fill).
    pub fn new(price_decimals: u32, qty_decimals: u32, sample_every: u64) -> Recorder {
        Recorder {
            price_decimals,
            qty_decimals,
            position: 0,
            cash: 0,
            mark: None,
            samples: Vec::new(),
            sample_every: sample_every.max(1),
            next_sample: 0,
            entry: histogram(),
            response: histogram(),
            round_trip: histogram(),
            feed: histogram(),
            requests: [0; 4],
            events: [0; 7],
            md: [0; 2],
        }
    }

    /// A fill of the strategy's.
    pub fn fill(&mut self, f: &StrategyFill) {
        let notional = i128::from(f.price) * i128::from(f.qty);
        match f.side {
            Side::Buy => {
                self.position += f.qty;
                self.cash -= notional;
            }
            Side::Sell => {
                self.position -= f.qty;
                self.cash += notional;
            }
        }
    }

    /// Cash + position × the last mark (the mid, or the last side shown).
    pub fn equity(&self) -> i128 {
        self.cash + i128::from(self.position) * i128::from(self.mark.unwrap_or(0))
    }

    /// Whether a periodic sample is due at `ts`.
    #[inline]
    pub fn due(&self, ts: u64) -> bool {
        ts >= self.next_sample
    }

    /// Takes a sample at `ts` with the book's best bid and ask.
    pub fn sample(&mut self, ts: u64, bid: Option<i64>, ask: Option<i64>) {
        self.mark = match (bid, ask) {
            (Some(b), Some(a)) => Some((b + a).div_euclid(2)),
            (Some(p), None) | (None, Some(p)) => Some(p),
            (None, None) => self.mark,
        };
        if self.next_sample == 0 {
            self.next_sample = ts;
        }
        while self.next_sample <= ts {
            self.next_sample += self.sample_every;
        }
        self.samples.push(Sample {
            ts,
            bid,
            ask,
            position: self.position,
            equity: self.equity(),
        });
    }

    /// An order's entry latency (send → book).
    pub fn entry(&mut self, ns: u64) {
        self.entry.saturating_record(ns.max(1));
    }

    /// A response latency (book → strategy).
    pub fn response(&mut self, ns: u64) {
        self.response.saturating_record(ns.max(1));
    }

    /// A round trip (t8 − t1 of a first answer).
    pub fn round_trip(&mut self, ns: u64) {
        self.round_trip.saturating_record(ns.max(1));
    }

    /// A market-data latency (venue → strategy).
    pub fn feed(&mut self, ns: u64) {
        self.feed.saturating_record(ns.max(1));
    }

    /// The strategy's position.
    pub fn position(&self) -> i64 {
        self.position
    }

    /// The summary of the run.
    pub fn finish(&self, fills: &[StrategyFill]) -> StrategyReport {
        let money = self.price_decimals + self.qty_decimals;
        let bought: i64 = fills
            .iter()
            .filter(|f| f.side == Side::Buy)
            .map(|f| f.qty)
            .sum();
        let sold: i64 = fills
            .iter()
            .filter(|f| f.side == Side::Sell)
            .map(|f| f.qty)
            .sum();
        StrategyReport {
            fills: fills.len() as u64,
            maker_fills: fills.iter().filter(|f| f.maker).count() as u64,
            bought: format_scaled(bought, self.qty_decimals),
            sold: format_scaled(sold, self.qty_decimals),
            position: format_scaled(self.position, self.qty_decimals),
            cash: format_scaled(self.cash, money),
            mark: self.mark.map(|m| format_scaled(m, self.price_decimals)),
            pnl: format_scaled(self.equity(), money),
            requests: self.requests,
            events: self.events,
            book_updates: self.md[0],
            trades_seen: self.md[1],
            fills_hash: fills_hash(fills),
            latency: Latency {
                entry: Segment::of(&self.entry),
                response: Segment::of(&self.response),
                round_trip: Segment::of(&self.round_trip),
                feed: Segment::of(&self.feed),
            },
        }
    }
}

/// The latency segments of a replay (simulated, from the model and the data).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Latency {
    /// Strategy sends → the book has it (t4 − t1).
    pub entry: Segment,
    /// The book answers → the strategy has it (t8 − t5).
    pub response: Segment,
    /// Send → first answer received (t8 − t1).
    pub round_trip: Segment,
    /// The venue's change → the strategy's `on_book` / `on_trade`.
    pub feed: Segment,
}

/// The strategy's side of a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StrategyReport {
    /// Fills.
    pub fills: u64,
    /// Fills of resting orders.
    pub maker_fills: u64,
    /// Quantity bought.
    pub bought: String,
    /// Quantity sold.
    pub sold: String,
    /// Position at the end.
    pub position: String,
    /// Cash at the end (sales − purchases).
    pub cash: String,
    /// The last mark price.
    pub mark: Option<String>,
    /// Cash + position × mark.
    pub pnl: String,
    /// Requests sent: new, cancel, replace, other.
    pub requests: [u64; 4],
    /// Events received by SDK kind (ack, reject, fill, cancelled, cancel-reject,
    /// replaced, replace-reject).
    pub events: [u64; 7],
    /// `on_book` calls.
    pub book_updates: u64,
    /// `on_trade` calls.
    pub trades_seen: u64,
    /// Blake3 of every fill (time, order, side, price, quantity, leaves, maker), hex:
    /// the same data, config and seed give the same hash.
    pub fills_hash: String,
    /// Simulated latency segments.
    pub latency: Latency,
}

/// Blake3 over the fills, each as little-endian fields in a fixed order.
pub fn fills_hash(fills: &[StrategyFill]) -> String {
    let mut h = blake3::Hasher::new();
    for f in fills {
        h.update(&f.ts.to_le_bytes());
        h.update(&f.client_id.to_le_bytes());
        h.update(&[f.side as u8, u8::from(f.maker)]);
        h.update(&f.price.to_le_bytes());
        h.update(&f.qty.to_le_bytes());
        h.update(&f.leaves.to_le_bytes());
    }
    h.finalize().to_hex().to_string()
}

/// A whole replay's report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Data format.
    pub format: String,
    /// Input file(s).
    pub input: String,
    /// Recorded messages replayed.
    pub messages: u64,
    /// Requests the recorded messages became.
    pub requests: u64,
    /// Wall time of the replay, seconds.
    pub wall_s: f64,
    /// Messages per second of wall time.
    pub messages_per_s: f64,
    /// Simulated time covered, first and last message (ns).
    pub span: (u64, u64),
    /// The venue's state hash at the end.
    pub state_hash: String,
    /// Recorded messages that named unknown orders, were refused, or acted on orders
    /// a strategy had taken (L3).
    pub l3: Option<crate::outcome::L3Counts>,
    /// The L2 market's counts.
    pub l2: Option<crate::outcome::L2Counts>,
    /// The book checks, if on.
    pub check: Option<crate::outcome::CheckReport>,
    /// The strategy, if one was attached.
    pub strategy: Option<StrategyReport>,
    /// The strategy's fills.
    pub fills: Vec<StrategyFill>,
    /// The equity curve and book samples.
    pub samples: Vec<Sample>,
    /// Price and quantity decimals of the instrument.
    pub decimals: (u32, u32),
}

impl Report {
    /// A few lines for people.
    pub fn render(&self) -> String {
        let mut s = format!(
            "replayed {} {} messages ({} requests to the core) in {:.3} s: {:.2} M messages/s\n\
             simulated span {:.3} s; venue state hash {}\n",
            self.messages,
            self.format,
            self.requests,
            self.wall_s,
            self.messages_per_s / 1e6,
            (self.span.1.saturating_sub(self.span.0)) as f64 / 1e9,
            &self.state_hash[..16.min(self.state_hash.len())],
        );
        if let Some(l3) = &self.l3 {
            s += &format!(
                "recorded orders: unknown references {}, refused by the core {}, taken by the strategy first {}\n",
                l3.unknown_refs, l3.refused, l3.gone
            );
        }
        if let Some(l2) = &self.l2 {
            s += &format!(
                "L2 market: levels added {} removed {} (from ahead of the strategy {}) trades {}\n",
                l2.added, l2.removed, l2.removed_ahead, l2.trades
            );
        }
        if let Some(c) = &self.check {
            s += &c.render();
        }
        if let Some(st) = &self.strategy {
            s += &format!(
                "strategy: {} fills ({} as maker), bought {} sold {}, position {}, cash {}, mark {}, PnL {}\n\
                 requests: new {} cancel {} replace {}; on_book {} on_trade {}\n\
                 fills hash {}\n",
                st.fills,
                st.maker_fills,
                st.bought,
                st.sold,
                st.position,
                st.cash,
                st.mark.as_deref().unwrap_or("-"),
                st.pnl,
                st.requests[0],
                st.requests[1],
                st.requests[2],
                st.book_updates,
                st.trades_seen,
                st.fills_hash
            );
            for (name, seg) in [
                ("entry (t4-t1)", st.latency.entry),
                ("response (t8-t5)", st.latency.response),
                ("round trip (t8-t1)", st.latency.round_trip),
                ("feed", st.latency.feed),
            ] {
                s += &format!(
                    "  {name:<20} n={:<8} p50={}ns p99={}ns p99.9={}ns max={}ns\n",
                    seg.n, seg.p50, seg.p99, seg.p999, seg.max
                );
            }
        }
        s
    }
}
