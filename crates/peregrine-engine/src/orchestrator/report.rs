//! The stats snapshot the orchestrator publishes for `peregrine engine stats`.

use std::fmt::Write;

use crate::counters::QueueRow;
use peregrine_risk::{RiskReject, StrategyId};

use super::{Orchestrator, Slot};

impl Orchestrator {
    /// Renders the snapshot and stores it for the control thread (skipped if the
    /// control thread holds the lock right now).
    pub fn publish(&self, now: u64) {
        let text = self.render(now);
        if let Ok(mut g) = self.shared.snapshot.try_lock() {
            *g = (text, now);
        }
        self.publish_summary(now);
    }

    /// The full report.
    pub fn render(&self, now: u64) -> String {
        let mut s = String::new();
        let up = now.saturating_sub(self.started_ns) as f64 / 1e9;
        let _ = writeln!(
            s,
            "engine {}  up {up:.1} s  orders in flight {}  latency samples {}\n",
            self.engine,
            self.orders.len(),
            self.latency.samples()
        );
        s += &self.latency.render();
        s += "\n";
        self.render_strategies(&mut s);
        self.render_positions(&mut s);
        self.render_rejects(&mut s);
        self.render_queues(&mut s);
        s
    }

    fn render_strategies(&self, s: &mut String) {
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
            let in_flight = self
                .orders
                .values()
                .filter(|o| o.strategy == i as u16)
                .count();
            let _ = writeln!(
                s,
                "{:<12}{:>8}{:>9}{:>7}{:>8}{:>11}{:>5}{:>11}{:>10}",
                slot.link.name,
                format!("{:?}", slot.state).to_lowercase(),
                slot.pid.map_or("-".into(), |p| p.to_string()),
                self.risk.open_orders(Some(sid)),
                self.risk.is_killed(sid),
                slot.malformed,
                slot.generation,
                slot.after_dead,
                in_flight
            );
        }
        s.push('\n');
    }

    fn render_positions(&self, s: &mut String) {
        let _ = writeln!(
            s,
            "{:<12}{:>9}{:>8}{:>7}{:>10}{:>15}{:>15}{:>15}",
            "position", "instr", "net", "fills", "avg", "realized", "unrealized", "total"
        );
        for ((sid, instrument), p) in self.risk.positions().all() {
            let name = self
                .slots
                .get(sid.0 as usize)
                .map_or("?", |x| x.link.name.as_str());
            let info = crate::units::InstrumentInfo::find(&self.instrument_info, instrument.0);
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

    fn render_rejects(&self, s: &mut String) {
        s.push_str("rejects:");
        let mut any = false;
        for r in RiskReject::ALL {
            let n = self.risk.reject_count(r);
            if n > 0 {
                let _ = write!(s, " {}({})={n}", r.as_str(), r.code());
                any = true;
            }
        }
        let mut engine: Vec<_> = self.engine_rejects.iter().collect();
        engine.sort();
        for (code, n) in engine {
            let _ = write!(s, " {}({code})={n}", engine_reason(*code));
            any = true;
        }
        if !any {
            s.push_str(" none");
        }
        s.push_str("\n\n");
    }

    fn render_queues(&self, s: &mut String) {
        let _ = writeln!(
            s,
            "{:<24}{:>10}{:>10}{:>8}{:>7}{:>10}",
            "queue", "pushes", "pops", "full", "depth", "discarded"
        );
        for q in self.queue_rows() {
            let _ = writeln!(
                s,
                "{:<24}{:>10}{:>10}{:>8}{:>7}{:>10}",
                q.name, q.pushes, q.pops, q.full, q.depth, q.discarded
            );
        }
    }

    /// Every hand-off's counters: per strategy its submit ring (pushes, Fulls and depth
    /// from the ring header the strategy writes, pops counted here), per gateway its
    /// inbox, the completion queue, per strategy its return ring (pops from the header
    /// the strategy writes). A strategy's rows add up all its ring pairs (a restarted
    /// strategy gets fresh ones); what a retired pair still held is `discarded`. At
    /// rest, `pushes == pops + depth + discarded` on every row.
    pub fn queue_rows(&self) -> Vec<QueueRow> {
        let mut rows: Vec<QueueRow> = self.slots.iter().map(|s| self.submit_row(s)).collect();
        let mut completion = QueueRow {
            name: "completion".into(),
            pops: self.completion_pops,
            depth: self.completions.len() as u64,
            ..QueueRow::default()
        };
        for gw in &self.gateways {
            let v = gw.counters.inbox.values();
            rows.push(QueueRow {
                name: format!("inbox {}", gw.name),
                pushes: v.pushes,
                pops: v.pops,
                full: v.full,
                depth: v.pushes.saturating_sub(v.pops),
                discarded: 0,
            });
            let c = gw.counters.completion.values();
            completion.pushes += c.pushes;
            completion.full += c.full;
        }
        rows.push(completion);
        rows.extend(self.slots.iter().map(|s| self.return_row(s)));
        rows
    }

    /// A strategy's submit row: its current ring plus its earlier ones.
    pub(super) fn submit_row(&self, slot: &Slot) -> QueueRow {
        let c = slot.link.rx.counts();
        let mut row = QueueRow {
            name: format!("submit {}", slot.link.name),
            pushes: c.tail.wrapping_sub(slot.rings.submit_base),
            pops: slot.rings.submit_pops,
            full: c.full,
            depth: c.depth(),
            discarded: 0,
        };
        row.add(&slot.earlier[0]);
        row
    }

    /// A strategy's return row: its current ring plus its earlier ones.
    pub(super) fn return_row(&self, slot: &Slot) -> QueueRow {
        let c = slot.link.tx.counts();
        let mut row = QueueRow {
            name: format!("return {}", slot.link.name),
            pushes: slot.rings.ret_pushes,
            pops: c.head.wrapping_sub(slot.rings.ret_base),
            full: slot.rings.ret_full,
            depth: c.depth(),
            discarded: 0,
        };
        row.add(&slot.earlier[1]);
        row
    }
}

pub(super) fn engine_reason(code: u16) -> &'static str {
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
