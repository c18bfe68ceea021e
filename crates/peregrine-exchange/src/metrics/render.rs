//! The exchange's `/metrics` families, built from the [`MetricsHub`]'s last
//! published copies on the metrics thread and encoded by `prometheus-client`
//! (through [`peregrine_metrics`], which adds `peregrine_build_info` and the
//! `process_*` families and serves the document).
//!
//! Names follow the Prometheus conventions: prefix `peregrine_exchange_`, counters end
//! in `_total` (the encoder appends it), units in the name (`_seconds`, `_bytes`),
//! base units (seconds, not nanoseconds). Prices and quantities are in the
//! instrument's decimal units; they become floating point only here, at the edge
//! (Prometheus stores every sample as a float64).

use peregrine_book::RejectReason;
use peregrine_metrics::{labels, Families, HistogramValue, Kind, Labels};
use peregrine_types::{OrderType, Side};

use peregrine_exchange_core::telemetry::{
    BookDepth, CoreStats, DepthLevel, DepthSnapshot, LogHistogram, CANCEL_REASONS, CANCEL_SLOTS,
    ORDER_TYPES, REJECT_SLOTS, REQUEST_KINDS,
};

use crate::metrics::ack_stats::{AckStats, STAGES};
use crate::metrics::hub::{InstrumentLabel, MetricsHub};
use crate::metrics::sessions::{DisconnectReason, SessionStats};

/// Latency buckets: `le` = 2^6 ns (64 ns) … 2^26 ns (67 ms).
pub(crate) const LATENCY_EXPS: std::ops::RangeInclusive<u32> = 6..=26;
/// Fsync buckets: `le` = 2^10 ns (1 µs) … 2^30 ns (1.07 s).
pub(crate) const FSYNC_EXPS: std::ops::RangeInclusive<u32> = 10..=30;

/// The whole document (`peregrine_build_info`, `process_*` and the exchange's own).
pub(crate) fn render(hub: &MetricsHub) -> String {
    peregrine_metrics::document("exchange", |reg| {
        reg.register_collector(Box::new(families(hub)));
    })
}

/// The exchange's own families (names without the `peregrine_exchange_` prefix).
pub(crate) fn families(hub: &MetricsHub) -> Families {
    let (core, sessions) = hub.read();
    let depth = hub.depth.as_ref().map(|d| d.read());
    let mut e = Families::new();
    render_core(&mut e, &core, hub);
    render_sessions(&mut e, &sessions);
    if let Some(ack) = hub.read_ack() {
        render_ack(&mut e, &ack);
    }
    if let Some(d) = depth.filter(|d| d.version > 0) {
        render_depth(&mut e, &d, hub);
    }
    e
}

fn order_type_label(t: OrderType) -> &'static str {
    match t {
        OrderType::Limit => "limit",
        OrderType::Market => "market",
        OrderType::PostOnly => "post_only",
    }
}

fn gauge(e: &mut Families, name: &str, help: &str, value: u64) {
    e.single_gauge(name, help, i64::try_from(value).unwrap_or(i64::MAX));
}

/// Nanoseconds as seconds.
fn seconds(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// A [`LogHistogram`] with `le = 2^e` ns (in seconds) for every `e` in `exps`, and
/// `+Inf`.
fn histogram(h: &LogHistogram, exps: std::ops::RangeInclusive<u32>) -> HistogramValue {
    let mut buckets = Vec::with_capacity(exps.clone().count() + 1);
    let mut below = 0;
    for e in exps {
        let cumulative = h.cumulative(e);
        let le = seconds(1u64.checked_shl(e).unwrap_or(u64::MAX));
        buckets.push((le, cumulative.saturating_sub(below)));
        below = cumulative;
    }
    buckets.push((f64::INFINITY, h.count.saturating_sub(below)));
    HistogramValue {
        sum: seconds(h.sum_ns),
        count: h.count,
        buckets,
    }
}

fn render_core(e: &mut Families, s: &CoreStats, hub: &MetricsHub) {
    e.family(
        "orders_received",
        Kind::Counter,
        "New orders received, by order type.",
    );
    for (i, t) in ORDER_TYPES.iter().enumerate() {
        e.counter(
            labels(&[("type", order_type_label(*t))]),
            s.orders_received[i],
        );
    }
    e.family(
        "requests_received",
        Kind::Counter,
        "Order-entry requests that reached the matching stage, by kind.",
    );
    for (i, k) in REQUEST_KINDS.iter().enumerate() {
        e.counter(labels(&[("kind", k)]), s.requests[i]);
    }
    e.single_counter("orders_accepted", "Orders accepted.", s.accepted);
    e.single_counter("trades", "Fills (one per maker/taker match).", s.fills);
    e.family("rejects", Kind::Counter, "Commands rejected, by reason.");
    for r in RejectReason::ALL {
        let code = r.code().to_string();
        let v = s.rejects[r.code() as usize % REJECT_SLOTS];
        e.counter(labels(&[("reason", r.as_str()), ("code", &code)]), v);
    }
    e.family(
        "cancels",
        Kind::Counter,
        "Cancel events (quantity leaving a book without trading), by reason.",
    );
    for r in CANCEL_REASONS {
        e.counter(
            labels(&[("reason", r.as_str())]),
            s.cancels[r as usize % CANCEL_SLOTS],
        );
    }
    e.single_counter("commands", "Engine commands executed.", s.commands);
    e.single_counter(
        "batches",
        "Batches that executed at least one request.",
        s.batches,
    );
    e.single_counter("ticks", "Batch-mode ticks processed.", s.ticks);
    e.family(
        "matching_latency_seconds",
        Kind::Histogram,
        "Per request on the matching thread, by kind: command, journal append, match, routing.",
    );
    for (i, k) in REQUEST_KINDS.iter().enumerate() {
        e.histogram(
            labels(&[("kind", k)]),
            histogram(&s.latency[i], LATENCY_EXPS),
        );
    }
    gauge(
        e,
        "engine_sequence",
        "Engine sequence number of the last command.",
        s.engine_seq,
    );
    e.family("resting_orders", Kind::Gauge, "Orders resting in the book.");
    for (id, count) in &s.resting {
        let label = hub
            .symbol(*id)
            .map_or_else(|| id.to_string(), |l| l.symbol.clone());
        e.gauge(
            labels(&[("instrument", &label)]),
            i64::try_from(*count).unwrap_or(i64::MAX),
        );
    }
    if let (Some(req), Some(rep)) = (s.request_ring_depth, s.report_ring_depth) {
        gauge(
            e,
            "request_ring_depth",
            "Split topology: requests queued for the matching thread.",
            req,
        );
        gauge(
            e,
            "report_ring_depth",
            "Split topology: reports queued for the session thread.",
            rep,
        );
    }
    if let Some(j) = &s.journal {
        e.single_counter("journal_records", "Journal records appended.", j.records);
        e.single_counter(
            "journal_written_bytes",
            "Bytes written to journal segments.",
            j.bytes_written,
        );
        e.single_counter(
            "journal_fsyncs",
            "fdatasync calls on journal segments.",
            j.syncs,
        );
        e.family(
            "journal_fsync_duration_seconds",
            Kind::Histogram,
            "Duration of each journal fdatasync.",
        );
        e.histogram(
            Labels::new(),
            histogram(&LogHistogram::of_syncs(j), FSYNC_EXPS),
        );
        e.single_counter(
            "journal_segments_prepared",
            "Journal segments started in a spare prepared ahead (zeros written and synced).",
            j.segments_prepared,
        );
        e.single_counter(
            "journal_segments_plain",
            "Journal segments started as plain files that grow with each append.",
            j.segments_plain,
        );
        gauge(
            e,
            "journal_prepare_failed",
            "1 if the helper preparing segments failed (logged); appends then go into plain segments.",
            u64::from(j.prepare_failed),
        );
    }
    e.single_counter(
        "metrics_publishes",
        "Copies of the matching thread's counters published.",
        s.publishes,
    );
}

fn render_ack(e: &mut Families, a: &AckStats) {
    e.family(
        "order_ack_seconds",
        Kind::Histogram,
        "Server-side order to ack, from the first byte read to the ack written, by stage \
         (decode, queue, append, match, encode, batch, durable, write; total is their sum).",
    );
    for (i, stage) in STAGES.iter().enumerate() {
        e.histogram(
            labels(&[("stage", stage)]),
            histogram(&a.stages[i], LATENCY_EXPS),
        );
    }
}

fn render_sessions(e: &mut Families, s: &SessionStats) {
    gauge(
        e,
        "sessions_connected",
        "Order-entry connections open.",
        s.connected,
    );
    gauge(
        e,
        "sessions_logged_in",
        "Order-entry sessions logged in.",
        s.logged_in,
    );
    e.single_counter(
        "connections_accepted",
        "Order-entry connections accepted.",
        s.accepted,
    );
    e.single_counter(
        "connections_refused",
        "Connections refused at max_sessions.",
        s.refused,
    );
    e.single_counter("logins", "Successful logins.", s.logins);
    e.family(
        "session_disconnects",
        Kind::Counter,
        "Sessions closed, by reason.",
    );
    for (i, r) in DisconnectReason::ALL.iter().enumerate() {
        e.counter(labels(&[("reason", r.as_str())]), s.disconnects[i]);
    }
    gauge(
        e,
        "session_outbound_bytes",
        "Bytes queued in session outbound buffers, not yet written.",
        s.outbound_bytes,
    );
    e.single_counter(
        "reports_undeliverable",
        "Reports dropped: neither the session nor its account was connected.",
        s.undeliverable,
    );
    e.single_counter(
        "requests_refused_busy",
        "Requests refused busy: the results waiting for their sync (replication) were past [backpressure]'s limits.",
        s.busy,
    );
}

fn render_depth(e: &mut Families, d: &DepthSnapshot, hub: &MetricsHub) {
    gauge(
        e,
        "depth_engine_sequence",
        "Engine sequence number of the depth snapshot.",
        d.engine_seq,
    );
    gauge(
        e,
        "depth_feed_sequence",
        "Last feed sequence number the depth snapshot reflects.",
        d.feed_seq,
    );
    let labelled: Vec<(&BookDepth, &InstrumentLabel)> = d
        .books
        .iter()
        .filter_map(|b| hub.symbol(b.instrument).map(|l| (b, l)))
        .collect();
    for (side, what) in [(Side::Buy, "bid"), (Side::Sell, "ask")] {
        e.family(
            &format!("best_{what}_price"),
            Kind::Gauge,
            &format!("Best {what} price (absent when the side is empty)."),
        );
        for (b, l) in &labelled {
            if let Some(lv) = b.best(side) {
                e.gauge_f64(labels(&[("instrument", &l.symbol)]), price(lv, l));
            }
        }
        e.family(
            &format!("best_{what}_quantity"),
            Kind::Gauge,
            &format!("Open quantity at the best {what}."),
        );
        for (b, l) in &labelled {
            if let Some(lv) = b.best(side) {
                e.gauge_f64(labels(&[("instrument", &l.symbol)]), qty(lv, l));
            }
        }
    }
    // Prices and quantities are decimals (floats here); order counts stay integers.
    type Field = fn(&mut Families, Labels, &DepthLevel, &InstrumentLabel);
    let fields: [(&str, &str, Field); 3] = [
        (
            "book_level_price",
            "Price of the level-th best level of a side.",
            |e, labels, lv, l| e.gauge_f64(labels, price(*lv, l)),
        ),
        (
            "book_level_quantity",
            "Open quantity at the level.",
            |e, labels, lv, l| e.gauge_f64(labels, qty(*lv, l)),
        ),
        (
            "book_level_orders",
            "Orders at the level.",
            |e, labels, lv, _| e.gauge(labels, i64::from(lv.orders)),
        ),
    ];
    for (name, help, f) in fields {
        e.family(name, Kind::Gauge, help);
        for (b, l) in &labelled {
            for (side, levels) in [("bid", &b.bids), ("ask", &b.asks)] {
                for (i, lv) in levels.iter().enumerate() {
                    let level = (i + 1).to_string();
                    let labels = labels(&[
                        ("instrument", l.symbol.as_str()),
                        ("side", side),
                        ("level", &level),
                    ]);
                    f(e, labels, lv, l);
                }
            }
        }
    }
}

/// `units / 10^decimals` as a float (exact for the prices and sizes a venue quotes:
/// up to 15 significant digits).
fn decimal(units: i64, decimals: u32) -> f64 {
    units as f64 / 10f64.powi(decimals.min(18) as i32)
}

fn price(lv: DepthLevel, l: &InstrumentLabel) -> f64 {
    decimal(lv.price.units(), l.price_decimals)
}

fn qty(lv: DepthLevel, l: &InstrumentLabel) -> f64 {
    decimal(lv.qty.lots(), l.qty_decimals)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use peregrine_book::MatchingEngine;
    use peregrine_types::InstrumentSpec;

    use peregrine_exchange_core::feed::FeedPosition;
    use peregrine_exchange_core::telemetry::{CoreMetrics, DepthPublisher};

    /// Every sample line is `name{labels} value` with a valid name, every family has
    /// HELP and TYPE before its samples, and no family appears twice.
    #[test]
    fn the_document_is_well_formed() {
        let spec = InstrumentSpec::example(1);
        let engine: MatchingEngine = MatchingEngine::new(std::slice::from_ref(&spec), 16).unwrap();
        let mut depth = DepthPublisher::new(&engine, 3, 0);
        assert!(depth.publish(1, 0, FeedPosition::default(), &engine));
        let hub = Arc::new(MetricsHub::new(
            std::slice::from_ref(&spec),
            Some(depth.slot()),
        ));
        let mut m = CoreMetrics::default();
        m.attach(hub.core_slot(), 0, 1);
        assert!(m.publish(1, |s| {
            s.journal = Some(Default::default());
            s.resting = vec![(spec.id, 3)];
        }));
        let text = render(&hub);
        let mut families = Vec::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let fam = rest.split(' ').next().unwrap().to_string();
                assert!(!families.contains(&fam), "{fam} twice");
                families.push(fam);
                continue;
            }
            if line.starts_with("# HELP ") {
                continue;
            }
            if line == "# EOF" {
                continue;
            }
            let metric = line.split(['{', ' ']).next().unwrap();
            assert!(
                metric.starts_with("peregrine_") || metric.starts_with("process_"),
                "{line}"
            );
            assert!(
                metric
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_'),
                "{line}"
            );
            let fam = families.last().unwrap();
            assert!(metric.starts_with(fam.as_str()), "{line} outside {fam}");
            assert!(
                line.rsplit(' ').next().unwrap().parse::<f64>().is_ok(),
                "{line}"
            );
        }
        assert!(text.contains(
            "peregrine_exchange_rejects_total{reason=\"price_out_of_band\",code=\"4\"} 0\n"
        ));
        assert!(text.contains(
            "peregrine_exchange_journal_fsync_duration_seconds_bucket{le=\"1.073741824\"} 0\n"
        ));
        assert!(text.contains("peregrine_exchange_resting_orders{instrument=\"TEST1\"} 3\n"));
        assert!(text.contains("peregrine_exchange_depth_feed_sequence 0\n"));
        assert!(
            !text.contains("best_bid_price{"),
            "empty book: no best bid sample"
        );
    }
}
