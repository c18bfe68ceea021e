//! The `/metrics` document: every family the exchange exposes, rendered from the
//! [`MetricsHub`]'s last published copies (on the HTTP thread).
//!
//! Names follow the Prometheus conventions: prefix `peregrine_exchange_`, counters end
//! in `_total`, units in the name (`_seconds`, `_bytes`), base units (seconds, not
//! nanoseconds). Prices and quantities are in the instrument's decimal units.

use peregrine_book::RejectReason;
use peregrine_types::{OrderType, Side};

use peregrine_exchange_core::telemetry::{
    BookDepth, CoreStats, DepthLevel, DepthSnapshot, LogHistogram, CANCEL_REASONS, CANCEL_SLOTS,
    ORDER_TYPES, REJECT_SLOTS, REQUEST_KINDS,
};

use crate::metrics::ack_stats::{AckStats, STAGES};
use crate::metrics::hub::{InstrumentLabel, MetricsHub};
use crate::metrics::sessions::{DisconnectReason, SessionStats};
use crate::metrics::text::{Decimal, Kind, TextEncoder};

/// Latency buckets: `le` = 2^6 ns (64 ns) … 2^26 ns (67 ms).
pub const LATENCY_EXPS: std::ops::RangeInclusive<u32> = 6..=26;
/// Fsync buckets: `le` = 2^10 ns (1 µs) … 2^30 ns (1.07 s).
pub const FSYNC_EXPS: std::ops::RangeInclusive<u32> = 10..=30;

const P: &str = "peregrine_exchange_";

/// Renders everything the hub holds.
pub fn render(hub: &MetricsHub) -> String {
    let (core, sessions) = hub.read();
    let depth = hub.depth.as_ref().map(|d| d.read());
    let mut e = TextEncoder::new();
    render_core(&mut e, &core, hub);
    render_sessions(&mut e, &sessions);
    if let Some(ack) = hub.read_ack() {
        render_ack(&mut e, &ack);
    }
    if let Some(d) = depth.filter(|d| d.version > 0) {
        render_depth(&mut e, &d, hub);
    }
    e.finish()
}

fn name(suffix: &str) -> String {
    format!("{P}{suffix}")
}

fn order_type_label(t: OrderType) -> &'static str {
    match t {
        OrderType::Limit => "limit",
        OrderType::Market => "market",
        OrderType::PostOnly => "post_only",
    }
}

fn counter(e: &mut TextEncoder, suffix: &str, help: &str, value: u64) {
    e.single(&name(suffix), Kind::Counter, help, value);
}

fn gauge(e: &mut TextEncoder, suffix: &str, help: &str, value: u64) {
    e.single(&name(suffix), Kind::Gauge, help, value);
}

fn render_core(e: &mut TextEncoder, s: &CoreStats, hub: &MetricsHub) {
    let n = name("orders_received_total");
    e.family(&n, Kind::Counter, "New orders received, by order type.");
    for (i, t) in ORDER_TYPES.iter().enumerate() {
        e.sample(&n, &[("type", order_type_label(*t))], s.orders_received[i]);
    }
    let n = name("requests_received_total");
    e.family(
        &n,
        Kind::Counter,
        "Order-entry requests that reached the matching stage, by kind.",
    );
    for (i, k) in REQUEST_KINDS.iter().enumerate() {
        e.sample(&n, &[("kind", k)], s.requests[i]);
    }
    counter(e, "orders_accepted_total", "Orders accepted.", s.accepted);
    counter(
        e,
        "trades_total",
        "Fills (one per maker/taker match).",
        s.fills,
    );
    let n = name("rejects_total");
    e.family(&n, Kind::Counter, "Commands rejected, by reason.");
    for r in RejectReason::ALL {
        let code = r.code().to_string();
        let v = s.rejects[r.code() as usize % REJECT_SLOTS];
        e.sample(&n, &[("reason", r.as_str()), ("code", &code)], v);
    }
    let n = name("cancels_total");
    e.family(
        &n,
        Kind::Counter,
        "Cancel events (quantity leaving a book without trading), by reason.",
    );
    for r in CANCEL_REASONS {
        e.sample(
            &n,
            &[("reason", r.as_str())],
            s.cancels[r as usize % CANCEL_SLOTS],
        );
    }
    counter(e, "commands_total", "Engine commands executed.", s.commands);
    counter(
        e,
        "batches_total",
        "Batches that executed at least one request.",
        s.batches,
    );
    counter(e, "ticks_total", "Batch-mode ticks processed.", s.ticks);
    let n = name("matching_latency_seconds");
    e.family(
        &n,
        Kind::Histogram,
        "Per request on the matching thread, by kind: command, journal append, match, routing.",
    );
    for (i, k) in REQUEST_KINDS.iter().enumerate() {
        e.histogram(&n, &[("kind", k)], &s.latency[i], LATENCY_EXPS);
    }
    gauge(
        e,
        "engine_sequence",
        "Engine sequence number of the last command.",
        s.engine_seq,
    );
    let n = name("resting_orders");
    e.family(&n, Kind::Gauge, "Orders resting in the book.");
    for (id, count) in &s.resting {
        let label = hub
            .symbol(*id)
            .map_or_else(|| id.to_string(), |l| l.symbol.clone());
        e.sample(&n, &[("instrument", &label)], *count);
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
        counter(
            e,
            "journal_records_total",
            "Journal records appended.",
            j.records,
        );
        counter(
            e,
            "journal_written_bytes_total",
            "Bytes written to journal segments.",
            j.bytes_written,
        );
        counter(
            e,
            "journal_fsyncs_total",
            "fdatasync calls on journal segments.",
            j.syncs,
        );
        let n = name("journal_fsync_duration_seconds");
        e.family(&n, Kind::Histogram, "Duration of each journal fdatasync.");
        e.histogram(&n, &[], &LogHistogram::of_syncs(j), FSYNC_EXPS);
    }
    counter(
        e,
        "metrics_publishes_total",
        "Copies of the matching thread's counters published.",
        s.publishes,
    );
}

fn render_ack(e: &mut TextEncoder, a: &AckStats) {
    let n = name("order_ack_seconds");
    e.family(
        &n,
        Kind::Histogram,
        "Server-side order to ack, from the first byte read to the ack written, by stage \
         (decode, queue, append, match, encode, batch, durable, write; total is their sum).",
    );
    for (i, stage) in STAGES.iter().enumerate() {
        e.histogram(&n, &[("stage", stage)], &a.stages[i], LATENCY_EXPS);
    }
}

fn render_sessions(e: &mut TextEncoder, s: &SessionStats) {
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
    counter(
        e,
        "connections_accepted_total",
        "Order-entry connections accepted.",
        s.accepted,
    );
    counter(
        e,
        "connections_refused_total",
        "Connections refused at max_sessions.",
        s.refused,
    );
    counter(e, "logins_total", "Successful logins.", s.logins);
    let n = name("session_disconnects_total");
    e.family(&n, Kind::Counter, "Sessions closed, by reason.");
    for (i, r) in DisconnectReason::ALL.iter().enumerate() {
        e.sample(&n, &[("reason", r.as_str())], s.disconnects[i]);
    }
    gauge(
        e,
        "session_outbound_bytes",
        "Bytes queued in session outbound buffers, not yet written.",
        s.outbound_bytes,
    );
    counter(
        e,
        "reports_undeliverable_total",
        "Reports dropped: neither the session nor its account was connected.",
        s.undeliverable,
    );
}

fn render_depth(e: &mut TextEncoder, d: &DepthSnapshot, hub: &MetricsHub) {
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
    let labelled: Vec<(&BookDepth, String, &InstrumentLabel)> = d
        .books
        .iter()
        .filter_map(|b| hub.symbol(b.instrument).map(|l| (b, l.symbol.clone(), l)))
        .collect();
    for (side, what) in [(Side::Buy, "bid"), (Side::Sell, "ask")] {
        let n = name(&format!("best_{what}_price"));
        e.family(
            &n,
            Kind::Gauge,
            &format!("Best {what} price (absent when the side is empty)."),
        );
        for (b, sym, l) in &labelled {
            if let Some(lv) = b.best(side) {
                e.sample(&n, &[("instrument", sym)], price(lv, l));
            }
        }
        let n = name(&format!("best_{what}_quantity"));
        e.family(
            &n,
            Kind::Gauge,
            &format!("Open quantity at the best {what}."),
        );
        for (b, sym, l) in &labelled {
            if let Some(lv) = b.best(side) {
                e.sample(&n, &[("instrument", sym)], qty(lv, l));
            }
        }
    }
    type Field = fn(&DepthLevel, &InstrumentLabel) -> String;
    let fields: [(&str, &str, Field); 3] = [
        (
            "book_level_price",
            "Price of the level-th best level of a side.",
            |lv, l| price(*lv, l).to_string(),
        ),
        (
            "book_level_quantity",
            "Open quantity at the level.",
            |lv, l| qty(*lv, l).to_string(),
        ),
        ("book_level_orders", "Orders at the level.", |lv, _| {
            lv.orders.to_string()
        }),
    ];
    for (suffix, help, f) in fields {
        let n = name(suffix);
        e.family(&n, Kind::Gauge, help);
        for (b, sym, l) in &labelled {
            for (side, levels) in [("bid", &b.bids), ("ask", &b.asks)] {
                for (i, lv) in levels.iter().enumerate() {
                    let level = (i + 1).to_string();
                    let labels = [
                        ("instrument", sym.as_str()),
                        ("side", side),
                        ("level", &level),
                    ];
                    e.sample(&n, &labels, f(lv, l));
                }
            }
        }
    }
}

fn price(lv: DepthLevel, l: &InstrumentLabel) -> Decimal {
    Decimal {
        units: lv.price.units(),
        decimals: l.price_decimals,
    }
}

fn qty(lv: DepthLevel, l: &InstrumentLabel) -> Decimal {
    Decimal {
        units: lv.qty.lots(),
        decimals: l.qty_decimals,
    }
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
            let metric = line.split(['{', ' ']).next().unwrap();
            assert!(metric.starts_with(P), "{line}");
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
