//! Prometheus metrics: `GET /metrics` (and `GET /health`) on the address in
//! `[metrics]`, served by `peregrine-metrics` (the same endpoint as the exchange's,
//! with `peregrine_build_info` and the `process_*` families).
//!
//! Nothing here touches the order path: the orchestrator already publishes an
//! [`EngineSummary`] every `stats_interval_ms` (as JSON, for the control socket); a
//! scrape takes that snapshot, turns it into `prometheus-client` metric families and
//! encodes them. So a scrape costs the metrics thread a JSON parse and an encode, and
//! the orchestrator nothing. Before the first summary `/metrics` answers `503`.
//!
//! Families (counters end in `_total`; latencies are in seconds, the Prometheus base
//! unit, exported as quantile gauges of the engine's HdrHistograms):
//! orders, acks, fills, cancels, rejects, replaces (global and per venue), rejects
//! by reason, open orders, position and realized/unrealized PnL per strategy and
//! instrument (money in the instrument's currency), latency per segment and
//! quantile (the 7 segments, round trip, market data), queue depths, market-data
//! events pushed and skipped per strategy.

use std::net::SocketAddr;
use std::sync::Arc;

use peregrine_metrics::{labels, Labels, MetricsServer};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use serde::{Deserialize, Serialize};

use crate::control::Shared;
use crate::summary::EngineSummary;
use crate::units::InstrumentInfo;

/// `[metrics]` in `engine.toml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsConfig {
    /// Serve `/metrics`; default false.
    pub enabled: bool,
    /// Address of `/metrics` and `/health`; default `127.0.0.1:7791` (next to the
    /// exchange's 7790, clear of the exporters' 9100 range; port 0: any free port,
    /// logged).
    pub listen: SocketAddr,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            enabled: false,
            listen: SocketAddr::from(([127, 0, 0, 1], 7791)),
        }
    }
}

/// The whole document for one summary.
pub fn render(s: &EngineSummary) -> String {
    peregrine_metrics::document("engine", |reg| register(reg, s))
}

/// Registers the engine's families (prefixed `peregrine_engine_` by `reg`).
fn register(reg: &mut Registry, s: &EngineSummary) {
    let counter = |reg: &mut Registry, name: &str, help: &str, v: u64| {
        let c: Counter = Counter::default();
        c.inc_by(v);
        reg.register(name, help, c);
    };
    counter(
        reg,
        "orders",
        "New-order requests from strategies",
        s.orders,
    );
    counter(reg, "acks", "Orders acknowledged by venues", s.acks);
    counter(reg, "fills", "Fills", s.fills);
    counter(reg, "cancels", "Cancels confirmed by venues", s.cancels);
    counter(
        reg,
        "rejects",
        "Rejected new orders (every reason)",
        s.rejects,
    );
    counter(
        reg,
        "replace_requests",
        "Replace requests from strategies",
        s.replace_requests,
    );
    counter(reg, "replaces", "Replaces applied by venues", s.replaces);
    let open: Gauge = Gauge::default();
    open.set(s.open_orders as i64);
    reg.register("open_orders", "Orders open at venues", open);

    let venue: Family<Labels, Counter> = Family::default();
    for v in &s.venues {
        for (what, n) in [
            ("routed", v.tally.routed),
            ("acks", v.tally.acks),
            ("fills", v.tally.fills),
            ("cancels", v.tally.cancels),
            ("rejects", v.tally.rejects),
            ("replaces", v.tally.replaces),
        ] {
            venue
                .get_or_create(&labels(&[("venue", &v.name), ("event", what)]))
                .inc_by(n);
        }
    }
    reg.register("venue_events", "Order events per venue", venue);

    let rejects: Family<Labels, Counter> = Family::default();
    for (kind, rows) in [("risk", &s.risk_rejects), ("engine", &s.engine_rejects)] {
        for r in rows.iter() {
            let code = r.code.to_string();
            rejects
                .get_or_create(&labels(&[
                    ("kind", kind),
                    ("reason", &r.name),
                    ("code", &code),
                ]))
                .inc_by(r.count);
        }
    }
    reg.register("rejects_by_reason", "Rejects by reason code", rejects);

    let pos: Family<Labels, Gauge> = Family::default();
    let money: Family<Labels, Gauge<f64, std::sync::atomic::AtomicU64>> = Family::default();
    for p in &s.positions {
        let info = InstrumentInfo::find(&s.instruments, p.instrument);
        let l = labels(&[("strategy", &p.strategy), ("instrument", &info.symbol)]);
        pos.get_or_create(&l).set(p.net);
        let scale = 10f64.powi((info.price_decimals + info.qty_decimals) as i32);
        for (what, v) in [("realized", p.realized), ("unrealized", p.unrealized)] {
            let mut l = l.clone();
            l.push(("pnl".into(), what.into()));
            l.push(("currency".into(), info.currency.clone()));
            money.get_or_create(&l).set(v as f64 / scale);
        }
    }
    reg.register(
        "position_lots",
        "Net position per strategy and instrument",
        pos,
    );
    reg.register(
        "pnl",
        "PnL per strategy and instrument, in the instrument's currency",
        money,
    );

    let lat: Family<Labels, Gauge<f64, std::sync::atomic::AtomicU64>> = Family::default();
    for r in &s.latency {
        let name = r.name.split_whitespace().collect::<Vec<_>>().join(" ");
        for (q, v) in [
            ("0.5", r.p50),
            ("0.99", r.p99),
            ("0.999", r.p999),
            ("1", r.max),
        ] {
            lat.get_or_create(&labels(&[("segment", &name), ("quantile", q)]))
                .set(v as f64 / 1e9);
        }
    }
    reg.register(
        "latency_seconds",
        "Latency per segment since start (HdrHistogram quantiles; the 8 timestamps, round trip, market data)",
        lat,
    );

    let depth: Family<Labels, Gauge> = Family::default();
    for q in &s.queues {
        depth
            .get_or_create(&labels(&[("queue", &q.name)]))
            .set(q.depth as i64);
    }
    reg.register("queue_depth", "Messages waiting in each hand-off", depth);

    let md: Family<Labels, Counter> = Family::default();
    for m in &s.market_data {
        md.get_or_create(&labels(&[("strategy", &m.strategy), ("outcome", "pushed")]))
            .inc_by(m.pushed);
        md.get_or_create(&labels(&[
            ("strategy", &m.strategy),
            ("outcome", "skipped"),
        ]))
        .inc_by(m.skipped);
    }
    reg.register(
        "market_data_events",
        "Market-data events per strategy: pushed, or skipped (conflated or dropped: slow reader)",
        md,
    );
}

/// Binds `cfg.listen` and serves `/metrics` from `shared`'s latest summary until
/// `shared.stop`; returns the bound address.
pub fn serve(
    cfg: &MetricsConfig,
    shared: Arc<Shared>,
) -> std::io::Result<(SocketAddr, std::thread::JoinHandle<()>)> {
    let server = MetricsServer::bind(cfg.listen)?;
    let addr = server.local_addr()?;
    let stop = Arc::clone(&shared.stop);
    let h = server.spawn(Box::new(move || render_latest(&shared)), stop)?;
    Ok((addr, h))
}

/// The document of the latest published summary (`None` before the first).
fn render_latest(shared: &Shared) -> Option<String> {
    let json = shared
        .summary
        .lock()
        .map(|g| g.clone())
        .unwrap_or_else(|p| p.into_inner().clone());
    serde_json::from_str::<EngineSummary>(&json)
        .ok()
        .map(|s| render(&s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::{LatencyRow, PositionRow};

    #[test]
    fn a_summary_renders_as_prometheus_text() {
        let s = EngineSummary {
            orders: 5,
            fills: 2,
            latency: vec![LatencyRow {
                name: "round trip  t8-t1".into(),
                n: 1,
                p50: 1_500,
                p99: 2_000,
                p999: 2_000,
                max: 2_000,
            }],
            positions: vec![PositionRow {
                strategy: "maker".into(),
                instrument: 1,
                net: -3,
                fills: 2,
                avg: Some(10_000),
                realized: 1_234,
                unrealized: -5,
                total: 1_229,
            }],
            instruments: vec![InstrumentInfo {
                id: 1,
                symbol: "PGN-USD".into(),
                price_decimals: 2,
                qty_decimals: 0,
                currency: "USD".into(),
            }],
            ..EngineSummary::default()
        };
        let text = render(&s);
        assert!(text.contains("peregrine_engine_orders_total 5"), "{text}");
        assert!(
            text.contains(
                "peregrine_engine_position_lots{strategy=\"maker\",instrument=\"PGN-USD\"} -3"
            ),
            "{text}"
        );
        assert!(
            text.contains("pnl=\"realized\",currency=\"USD\"} 12.34"),
            "{text}"
        );
        assert!(
            text.contains("segment=\"round trip t8-t1\",quantile=\"0.5\"} 0.0000015"),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"));
    }
}
