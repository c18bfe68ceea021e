//! The snapshot as an [`EngineSummary`], published as one JSON line next to the text.

use crate::latency::{ROWS, WINDOW_ROWS};
use crate::summary::{
    EngineSummary, LatencyRow, MdRow, PositionRow, RejectRow, StrategyRow, VenueRejectRow, VenueRow,
};
use peregrine_risk::{RiskReject, StrategyId};

fn row(name: &str, h: &hdrhistogram::Histogram<u64>) -> LatencyRow {
    LatencyRow {
        name: name.to_owned(),
        n: h.len(),
        p50: h.value_at_quantile(0.5),
        p99: h.value_at_quantile(0.99),
        p999: h.value_at_quantile(0.999),
        max: h.max(),
    }
}

use super::report::engine_reason;
use super::Orchestrator;

impl Orchestrator {
    /// Builds the summary at `now`.
    pub fn summary(&self, now: u64) -> EngineSummary {
        let latency = ROWS
            .iter()
            .zip(self.latency.rows())
            .map(|(name, h)| LatencyRow {
                name: (*name).to_owned(),
                n: h.len(),
                p50: h.value_at_quantile(0.5),
                p99: h.value_at_quantile(0.99),
                p999: h.value_at_quantile(0.999),
                max: h.max(),
            })
            .collect();
        let strategies = self
            .slots
            .iter()
            .enumerate()
            .map(|(i, slot)| StrategyRow {
                name: slot.link.name.clone(),
                state: format!("{:?}", slot.state).to_lowercase(),
                pid: slot.pid,
                open: self.risk.open_orders(Some(StrategyId(i as u16))),
                killed: self.risk.is_killed(StrategyId(i as u16)),
            })
            .collect();
        let mut open_by_venue = vec![0u64; self.gateways.len()];
        for o in self.orders.values() {
            if let Some(n) = open_by_venue.get_mut(o.venue as usize) {
                *n += 1;
            }
        }
        let venues = self
            .gateways
            .iter()
            .zip(open_by_venue)
            .zip(&self.tally.venues)
            .map(|((gw, open), t)| VenueRow {
                name: gw.name.clone(),
                open,
                tally: *t,
            })
            .collect();
        let mut engine_rejects: Vec<RejectRow> = self
            .engine_rejects
            .iter()
            .map(|(code, n)| RejectRow {
                code: *code,
                name: engine_reason(*code).to_owned(),
                count: *n,
            })
            .collect();
        engine_rejects.sort_by_key(|r| r.code);
        let mut venue_rejects: Vec<VenueRejectRow> = self
            .venue_rejects
            .iter()
            .map(|(&(venue, code), &count)| {
                let gw = self.gateways.get(venue as usize);
                VenueRejectRow {
                    venue: gw.map_or_else(|| venue.to_string(), |g| g.name.clone()),
                    code,
                    name: gw.map_or("other", |g| (g.reason_name)(code)).to_owned(),
                    count,
                }
            })
            .collect();
        venue_rejects.sort_by(|a, b| (&a.venue, a.code).cmp(&(&b.venue, b.code)));
        EngineSummary {
            engine: self.engine.clone(),
            up_ms: now.saturating_sub(self.started_ns) / 1_000_000,
            at_ns: now,
            orders: self.tally.orders,
            acks: self.tally.acks,
            fills: self.tally.fills,
            cancels: self.tally.cancels,
            rejects: self.tally.rejects,
            open_orders: self.orders.len() as u64,
            latency,
            strategies,
            positions: self.position_rows(),
            venues,
            risk_rejects: RiskReject::ALL
                .iter()
                .map(|r| RejectRow {
                    code: r.code(),
                    name: r.as_str().to_owned(),
                    count: self.risk.reject_count(*r),
                })
                .filter(|r| r.count > 0)
                .collect(),
            engine_rejects,
            venue_rejects,
            replace_requests: self.tally.replace_requests,
            replaces: self.tally.replaces,
            window: WINDOW_ROWS
                .iter()
                .zip(self.latency.window())
                .map(|(name, h)| row(name, h))
                .collect(),
            market_data: self
                .slots
                .iter()
                .enumerate()
                .map(|(i, slot)| {
                    let c = self
                        .md_counters
                        .as_ref()
                        .map(|m| m.strategy(i))
                        .unwrap_or_default();
                    MdRow {
                        strategy: slot.link.name.clone(),
                        pushed: c.pushed,
                        skipped: c.skipped,
                    }
                })
                .collect(),
            instruments: self.instrument_info.clone(),
            queues: self.queue_rows(),
        }
    }

    fn position_rows(&self) -> Vec<PositionRow> {
        self.risk
            .positions()
            .all()
            .into_iter()
            .map(|((sid, instrument), p)| {
                let mark = self.risk.mark(sid, instrument);
                PositionRow {
                    strategy: self
                        .slots
                        .get(sid.0 as usize)
                        .map_or_else(|| "?".to_owned(), |s| s.link.name.clone()),
                    instrument: instrument.0,
                    net: p.net,
                    fills: p.fills,
                    avg: p.avg_price(),
                    realized: p.realized(),
                    unrealized: p.unrealized(mark),
                    total: p.total(mark),
                }
            })
            .collect()
    }

    /// Stores the summary as JSON for the control thread (skipped if it holds the
    /// lock right now, like the text snapshot).
    pub(super) fn publish_summary(&self, now: u64) {
        let Ok(json) = serde_json::to_string(&self.summary(now)) else {
            return; // cannot happen for these types; the previous summary stays
        };
        if let Ok(mut g) = self.shared.summary.try_lock() {
            *g = json;
        }
    }
}
