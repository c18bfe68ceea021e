//! What the core's state looks like to people and programs: the sections of the
//! `stats` text it owns (strategies, positions, rejects) and its part of the
//! [`EngineSummary`]. The shell adds the latency table and the queue counters.

use std::fmt::Write;

use peregrine_risk::{RiskReject, StrategyId};

use crate::state::Orchestrator;
use crate::summary::{
    EngineSummary, PositionRow, RejectRow, StrategyRow, VenueRejectRow, VenueRow,
};
use crate::units::InstrumentInfo;

impl Orchestrator {
    /// The strategy table: state, pid, open orders, kill switch, malformed requests,
    /// incarnation, requests after death, orders in flight.
    pub fn render_strategies(&self, s: &mut String) {
        let _ = writeln!(
            s,
            "{:<12}{:>8}{:>9}{:>7}{:>8}{:>11}{:>5}{:>11}{:>10}",
            "strategy",
            "state",
            "pid",
            "open",
            "killed",
            "malformed",
            "gen",
            "after_dead",
            "in_flight"
        );
        for (i, slot) in self.slots.iter().enumerate() {
            let sid = StrategyId(i as u16);
            let _ = writeln!(
                s,
                "{:<12}{:>8}{:>9}{:>7}{:>8}{:>11}{:>5}{:>11}{:>10}",
                slot.name,
                format!("{:?}", slot.state).to_lowercase(),
                slot.pid.map_or("-".into(), |p| p.to_string()),
                self.risk.open_orders(Some(sid)),
                self.risk.is_killed(sid),
                slot.malformed,
                slot.generation,
                slot.after_dead,
                self.in_flight_of(i as u16)
            );
        }
        s.push('\n');
    }

    /// Positions and PnL per strategy and instrument.
    pub fn render_positions(&self, s: &mut String) {
        let _ = writeln!(
            s,
            "{:<12}{:>9}{:>8}{:>7}{:>10}{:>15}{:>15}{:>15}",
            "position", "instr", "net", "fills", "avg", "realized", "unrealized", "total"
        );
        for ((sid, instrument), p) in self.risk.positions().all() {
            let name = self
                .slots
                .get(sid.0 as usize)
                .map_or("?", |x| x.name.as_str());
            let info = InstrumentInfo::find(&self.cfg.instrument_info, instrument.0);
            let mark = self.risk.mark(sid, instrument);
            let avg = p.avg_price().map_or("-".into(), |a| info.price(a));
            let _ = writeln!(
                s,
                "{name:<12}{:>9}{:>8}{:>7}{avg:>10}{:>15}{:>15}{:>15}",
                info.symbol,
                info.qty(i128::from(p.net)),
                p.fills,
                info.money(p.realized()),
                info.money(p.unrealized(mark)),
                info.money(p.total(mark))
            );
        }
        s.push('\n');
    }

    /// Every reject reason given so far.
    pub fn render_rejects(&self, s: &mut String) {
        s.push_str("rejects:");
        let mut any = false;
        for r in RiskReject::ALL {
            let n = self.risk.reject_count(r);
            if n > 0 {
                let _ = write!(s, " {}({})={n}", r.as_str(), r.code());
                any = true;
            }
        }
        for (code, n) in self.rejects.engine_counts() {
            let _ = write!(s, " {}({code})={n}", engine_reason(code));
            any = true;
        }
        if !any {
            s.push_str(" none");
        }
        s.push_str("\n\n");
    }

    /// The core's part of the summary at `now` (the shell fills `latency`, `window`,
    /// `market_data` and `queues`).
    pub fn summary(&self, now: u64) -> EngineSummary {
        let strategies = self
            .slots
            .iter()
            .enumerate()
            .map(|(i, slot)| StrategyRow {
                name: slot.name.clone(),
                state: format!("{:?}", slot.state).to_lowercase(),
                pid: slot.pid,
                open: self.risk.open_orders(Some(StrategyId(i as u16))),
                killed: self.risk.is_killed(StrategyId(i as u16)),
            })
            .collect();
        let venues = self
            .cfg
            .venues
            .iter()
            .zip(self.open_by_venue())
            .zip(&self.tally.venues)
            .map(|((v, open), t)| VenueRow {
                name: v.name.clone(),
                open,
                tally: *t,
            })
            .collect();
        let engine_rejects = self
            .rejects
            .engine_counts()
            .map(|(code, count)| RejectRow {
                code,
                name: engine_reason(code).to_owned(),
                count,
            })
            .collect();
        let venue_rejects = self
            .rejects
            .venue_counts()
            .into_iter()
            .map(|((venue, code), count)| {
                let v = self.cfg.venues.get(venue as usize);
                VenueRejectRow {
                    venue: v.map_or_else(|| venue.to_string(), |v| v.name.clone()),
                    code,
                    name: v.map_or("other", |v| (v.reason_name)(code)).to_owned(),
                    count,
                }
            })
            .collect();
        EngineSummary {
            engine: self.cfg.name.clone(),
            up_ms: now.saturating_sub(self.started_ns) / 1_000_000,
            at_ns: now,
            orders: self.tally.orders,
            acks: self.tally.acks,
            fills: self.tally.fills,
            cancels: self.tally.cancels,
            rejects: self.tally.rejects,
            open_orders: self.orders.len() as u64,
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
            instruments: self.cfg.instrument_info.clone(),
            ..EngineSummary::default()
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
                        .map_or_else(|| "?".to_owned(), |s| s.name.clone()),
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
}

/// The name of an engine reject reason (201..).
pub fn engine_reason(code: u16) -> &'static str {
    use peregrine_strategy::msg::reason::*;
    match code {
        MALFORMED => "malformed",
        UNKNOWN_VENUE => "unknown_venue",
        UNKNOWN_INSTRUMENT => "unknown_instrument",
        UNKNOWN_ORDER => "unknown_order",
        GATEWAY_BUSY => "gateway_busy",
        STRATEGY_DOWN => "strategy_down",
        VENUE_DOWN => "venue_down",
        REPLACE_PENDING => "replace_pending",
        _ => "other",
    }
}
