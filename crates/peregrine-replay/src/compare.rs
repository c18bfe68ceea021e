//! How far each L2 queue model's fills are from the exact ones.
//!
//! One synthetic day is replayed twice over: order by order (L3: the strategy's queue
//! positions are exact, the core's own), and as the price-level feed the same day
//! would have produced ([`L3AsL2`]: after each message the new total of every level
//! it touched, and a trade for each execution), once per queue model. The same
//! strategy (the [`Joiner`], passive at the touch, whose fills depend on nothing but
//! its queue positions) runs in each, with the same latency; the report sets each
//! model's fills, volume, fill ratio, time to fill and PnL beside the exact ones.

use std::collections::VecDeque;

use peregrine_book::{Event, Ladder, OrderBook};
use peregrine_types::InstrumentId;
use serde::Serialize;

use crate::attach::InProcess;
use crate::data::itch_l3::ItchL3;
use crate::data::stream::open;
use crate::data::{DataError, Recorded, Source, L2, L3};
use crate::joiner::{Joiner, JoinerConfig};
use crate::l2::{L2Market, QueueModel};
use crate::latency::{Latency, LatencyModel};
use crate::recorded::RecordedBook;
use crate::report::{Recorder, StrategyReport};
use crate::session::{plan, Input, Options, SessionError};
use crate::sim::gateway::StrategyFill;
use crate::sim::{self, Settings, StrategySide, Timeline};
use crate::synth::{generate, ItchWriter, SynthConfig};
use crate::venue::Venue;

/// An L3 stream as the L2 feed it implies.
#[derive(Debug)]
pub struct L3AsL2<S> {
    inner: S,
    book: RecordedBook<OrderBook<Ladder>>,
    pending: VecDeque<Recorded<L2>>,
}

impl<S: Source<Msg = L3>> L3AsL2<S> {
    /// The L2 feed of `inner`, rebuilt on a book of `spec` holding `capacity` orders.
    pub fn new(inner: S, spec: &peregrine_types::InstrumentSpec, capacity: usize) -> L3AsL2<S> {
        L3AsL2 {
            inner,
            book: RecordedBook::new(OrderBook::new(spec.clone(), capacity), spec.id),
            pending: VecDeque::new(),
        }
    }
}

impl<S: Source<Msg = L3>> Source for L3AsL2<S> {
    type Msg = L2;

    fn next_msg(&mut self) -> Result<Option<Recorded<L2>>, DataError> {
        loop {
            if let Some(r) = self.pending.pop_front() {
                return Ok(Some(r));
            }
            let Some(r) = self.inner.next_msg()? else {
                return Ok(None);
            };
            let at = |msg| Recorded {
                exch_ts: r.exch_ts,
                local_ts: r.local_ts,
                msg,
            };
            let trade = match r.msg {
                L3::Execute { order_ref, qty } => self.book.order(order_ref).map(|o| L2::Trade {
                    aggressor: o.side.opposite(),
                    price: o.price,
                    qty,
                }),
                L3::Trade {
                    aggressor,
                    price,
                    qty,
                } => Some(L2::Trade {
                    aggressor,
                    price,
                    qty,
                }),
                _ => None,
            };
            if let Some(t) = trade {
                self.pending.push_back(at(t));
            }
            self.book
                .apply(r.exch_ts, &r.msg)
                .map_err(DataError::Inconsistent)?;
            let events = self.book.events();
            for (i, ev) in events.iter().enumerate() {
                if let Event::LevelChanged(l) = ev {
                    let superseded = events[i + 1..].iter().any(|e| {
                        matches!(e, Event::LevelChanged(m) if m.side == l.side && m.price == l.price)
                    });
                    if !superseded {
                        self.pending.push_back(at(L2::Level {
                            side: l.side,
                            price: l.price.units(),
                            qty: l.qty.lots(),
                        }));
                    }
                }
            }
        }
    }
}

/// What to compare.
#[derive(Debug, Clone)]
pub struct CompareConfig {
    /// Messages of the synthetic day.
    pub events: u64,
    /// Its seed.
    pub seed: u64,
    /// The joiner's order quantity.
    pub qty: i64,
    /// Strategy → book latency in every replay, ns.
    pub entry_latency_ns: u64,
    /// The L2 models.
    pub models: Vec<QueueModel>,
}

/// The models the report compares by default.
pub fn default_models() -> Vec<QueueModel> {
    vec![
        QueueModel::RiskAverse,
        QueueModel::Power(2.0),
        QueueModel::Power(3.0),
        QueueModel::Log,
    ]
}

/// One replay's line of the comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Line {
    /// `L3 (exact)` or the model's name.
    pub replay: String,
    /// Fills.
    pub fills: u64,
    /// Quantity filled.
    pub volume: i64,
    /// Orders sent.
    pub orders: u64,
    /// Filled quantity over ordered quantity.
    pub fill_ratio: f64,
    /// Median time from an order's ack to its first fill, µs (orders that filled).
    pub median_time_to_fill_us: f64,
    /// PnL at the end (decimal text).
    pub pnl: String,
    /// Volume relative to the exact replay's (1.0: the same).
    pub volume_vs_exact: f64,
    /// Fills hash.
    pub fills_hash: String,
}

/// The comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// The day.
    pub day: String,
    /// Exact first, then each model.
    pub lines: Vec<Line>,
}

impl Comparison {
    /// A table for people.
    pub fn render(&self) -> String {
        let mut s = format!(
            "{}\n| replay | fills | volume | orders | fill ratio | median ack→fill | PnL | volume / exact |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
            self.day
        );
        for l in &self.lines {
            s += &format!(
                "| {} | {} | {} | {} | {:.3} | {:.0} µs | {} | {:.2} |\n",
                l.replay,
                l.fills,
                l.volume,
                l.orders,
                l.fill_ratio,
                l.median_time_to_fill_us,
                l.pnl,
                l.volume_vs_exact
            );
        }
        s
    }
}

fn joiner(qty: i64, tick: i64) -> Joiner {
    Joiner::new(JoinerConfig {
        venue: 0,
        instrument: InstrumentId(1),
        qty,
        tolerance: 2 * tick,
        max_position: 10 * qty,
    })
}

/// Median of ack → first fill per order, µs.
fn time_to_fill(fills: &[StrategyFill], acks: &[(u64, u64)]) -> f64 {
    let mut first: rustc_hash::FxHashMap<u64, u64> = Default::default();
    for f in fills {
        first.entry(f.client_id).or_insert(f.ts);
    }
    let mut d: Vec<u64> = acks
        .iter()
        .filter_map(|(cid, ack)| first.get(cid).map(|f| f.saturating_sub(*ack)))
        .collect();
    d.sort_unstable();
    d.get(d.len() / 2).map_or(0.0, |v| *v as f64 / 1e3)
}

fn line(
    name: &str,
    st: &StrategyReport,
    fills: &[StrategyFill],
    acks: &[(u64, u64)],
    qty: i64,
) -> Line {
    let volume: i64 = fills.iter().map(|f| f.qty).sum();
    let orders = st.requests[0];
    Line {
        replay: name.into(),
        fills: st.fills,
        volume,
        orders,
        fill_ratio: volume as f64 / (orders as f64 * qty as f64).max(1.0),
        median_time_to_fill_us: time_to_fill(fills, acks),
        pnl: st.pnl.clone(),
        volume_vs_exact: 0.0,
        fills_hash: st.fills_hash.clone(),
    }
}

/// One replay's outcome: the strategy's report, its fills, and its acks (client id,
/// time).
type OneReplay = (StrategyReport, Vec<StrategyFill>, Vec<(u64, u64)>);

/// Runs one replay of `source` (L3 or L2) with the joiner; returns its report, fills
/// and the acks' times.
fn replay_one<S, M>(
    source: &mut S,
    market: &mut M,
    spec: &peregrine_types::InstrumentSpec,
    capacity: usize,
    cfg: &CompareConfig,
) -> Result<OneReplay, SessionError>
where
    S: Source,
    M: sim::Market<Msg = S::Msg>,
{
    let mut venue = Venue::new(spec.clone(), capacity)?;
    let mut s = InProcess::new(joiner(cfg.qty, spec.tick_size), 0, spec.id)?;
    let latency = Latency::new(
        LatencyModel::Constant {
            entry_ns: cfg.entry_latency_ns,
            response_ns: cfg.entry_latency_ns,
        },
        0,
        cfg.seed,
    );
    let side = StrategySide::new(
        0,
        latency,
        Recorder::new(spec.price_decimals, spec.qty_decimals, 1_000_000_000),
    );
    let settings = Settings {
        timeline: Timeline::Exchange,
        ..Settings::default()
    };
    let out = sim::run(
        source,
        market,
        &mut venue,
        Some((&mut s, side)),
        None,
        &settings,
    )?;
    let side = out
        .strategy
        .ok_or_else(|| SessionError::Options("no strategy side".into()))?;
    let acks = side.gateway.acks.clone();
    Ok((
        side.recorder.finish(&side.gateway.fills),
        side.gateway.fills,
        acks,
    ))
}

/// Runs the comparison.
pub fn run(cfg: &CompareConfig) -> Result<Comparison, SessionError> {
    let dir = tempfile::tempdir().map_err(|e| SessionError::Options(e.to_string()))?;
    let synth = SynthConfig {
        seed: cfg.seed,
        events: cfg.events,
        ..SynthConfig::default()
    };
    let path = dir.path().join("day.itch");
    let f = std::fs::File::create(&path).map_err(|e| SessionError::Options(e.to_string()))?;
    generate(&synth, &mut ItchWriter::new(std::io::BufWriter::new(f)))
        .map_err(|e| SessionError::Options(e.to_string()))?;
    let p = plan(Options::new(Input::Itch {
        path: path.clone(),
        symbol: synth.symbol.clone(),
    }))?;
    let cap = (p.profile.max_live * 8 + 4_096).next_power_of_two();
    let mut lines = Vec::new();
    let mut src = ItchL3::new(open(&path)?, &synth.symbol);
    let mut market = crate::l3::L3Market::new(p.profile.max_live);
    let (st, fills, acks) = replay_one(&mut src, &mut market, &p.spec, cap, cfg)?;
    lines.push(line("L3 (exact)", &st, &fills, &acks, cfg.qty));
    for model in &cfg.models {
        let mut src = L3AsL2::new(ItchL3::new(open(&path)?, &synth.symbol), &p.spec, cap);
        let mut market = L2Market::new(*model);
        let (st, fills, acks) = replay_one(&mut src, &mut market, &p.spec, cap, cfg)?;
        lines.push(line(
            &format!("L2, {}", model.name()),
            &st,
            &fills,
            &acks,
            cfg.qty,
        ));
    }
    let exact = lines[0].volume.max(1) as f64;
    for l in &mut lines {
        l.volume_vs_exact = l.volume as f64 / exact;
    }
    Ok(Comparison {
        day: format!(
            "synthetic day: {} messages, seed {}; joiner {} shares at the touch; entry and response latency {} µs",
            cfg.events,
            cfg.seed,
            cfg.qty,
            cfg.entry_latency_ns / 1_000
        ),
        lines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::SynthConfig;
    use peregrine_types::Side;

    /// The L2 feed of an L3 day rebuilds the same levels: replayed through the L2
    /// market without a strategy, every level of the core equals the L3 replay's.
    #[test]
    fn l2_feed_of_an_l3_day_rebuilds_its_levels() {
        let cfg = SynthConfig {
            seed: 4,
            events: 20_000,
            ..SynthConfig::default()
        };
        let mut w = ItchWriter::new(Vec::new());
        generate(&cfg, &mut w).unwrap();
        let bytes = w.into_inner();
        let spec = cfg.spec();
        let mut l3 = Venue::new(spec.clone(), 1 << 16).unwrap();
        let mut m3 = crate::l3::L3Market::new(1 << 12);
        let mut src = ItchL3::new(&bytes[..], &cfg.symbol);
        sim::run(&mut src, &mut m3, &mut l3, None, None, &Settings::default()).unwrap();
        let mut l2 = Venue::new(spec.clone(), 1 << 16).unwrap();
        let mut m2 = L2Market::new(QueueModel::RiskAverse);
        let mut src = L3AsL2::new(ItchL3::new(&bytes[..], &cfg.symbol), &spec, 1 << 16);
        sim::run(&mut src, &mut m2, &mut l2, None, None, &Settings::default()).unwrap();
        for side in [Side::Buy, Side::Sell] {
            let mut a = Vec::new();
            let mut b = Vec::new();
            l3.book()
                .visit_depth(side, usize::MAX, &mut |p, q, _| a.push((p, q)));
            l2.book()
                .visit_depth(side, usize::MAX, &mut |p, q, _| b.push((p, q)));
            assert_eq!(a, b);
            assert!(!a.is_empty());
        }
        assert_eq!(m2.counts.refused, 0);
    }
}
