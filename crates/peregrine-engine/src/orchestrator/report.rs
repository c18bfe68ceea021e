//! The stats snapshot the orchestrator publishes for `peregrine engine stats`.

use std::fmt::Write;

use crate::counters::CounterValues;
use crate::risk::{RiskReject, StrategyId};

use super::Orchestrator;

impl Orchestrator {
    /// Renders the snapshot and stores it for the control thread (skipped if the
    /// control thread holds the lock right now).
    pub fn publish(&self, now: u64) {
        let text = self.render(now);
        if let Ok(mut g) = self.shared.snapshot.try_lock() {
            *g = (text, now);
        }
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
            "{:<12}{:>8}{:>9}{:>7}{:>8}{:>11}",
            "strategy", "state", "pid", "open", "killed", "malformed"
        );
        for (i, slot) in self.slots.iter().enumerate() {
            let sid = StrategyId(i as u16);
            let _ = writeln!(
                s,
                "{:<12}{:>8}{:>9}{:>7}{:>8}{:>11}",
                slot.link.name,
                format!("{:?}", slot.state).to_lowercase(),
                slot.pid.map_or("-".into(), |p| p.to_string()),
                self.risk.open_orders(Some(sid)),
                self.risk.is_killed(sid),
                slot.malformed
            );
        }
        s.push('\n');
    }

    fn render_positions(&self, s: &mut String) {
        let _ = writeln!(
            s,
            "{:<12}{:>6}{:>8}{:>7}{:>10}{:>12}{:>12}{:>12}",
            "position", "instr", "net", "fills", "avg", "realized", "unrealized", "total"
        );
        for ((sid, instrument), p) in self.risk.positions().all() {
            let name = self
                .slots
                .get(sid.0 as usize)
                .map_or("?", |x| x.link.name.as_str());
            let mark = self.risk.reference(instrument).unwrap_or(p.last_price);
            let avg = p.avg_price().map_or("-".into(), |a| a.to_string());
            let _ = writeln!(
                s,
                "{name:<12}{:>6}{:>8}{:>7}{avg:>10}{:>12}{:>12}{:>12}",
                instrument.0,
                p.net,
                p.fills,
                p.realized(),
                p.unrealized(mark),
                p.total(mark)
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
            "{:<24}{:>10}{:>10}{:>8}{:>7}",
            "queue", "pushes", "pops", "full", "depth"
        );
        let mut row = |name: String, v: CounterValues, depth: Option<u64>| {
            let depth = depth.map_or("-".into(), |d| d.to_string());
            let push = if v.pushes == u64::MAX {
                "-".into()
            } else {
                v.pushes.to_string()
            };
            let pops = if v.pops == u64::MAX {
                "-".into()
            } else {
                v.pops.to_string()
            };
            let _ = writeln!(s, "{name:<24}{push:>10}{pops:>10}{:>8}{depth:>7}", v.full);
        };
        for slot in &self.slots {
            let mut v = slot.submit.values();
            v.pushes = u64::MAX; // counted in the strategy process
            row(format!("submit {}", slot.link.name), v, None);
            let mut v = slot.ret.values();
            v.pops = u64::MAX; // counted in the strategy process
            row(format!("return {}", slot.link.name), v, None);
        }
        let mut completion = CounterValues::default();
        for gw in &self.gateways {
            let v = gw.counters.inbox.values();
            row(
                format!("inbox {}", gw.name),
                v,
                Some(v.pushes.saturating_sub(v.pops)),
            );
            let c = gw.counters.completion.values();
            completion.pushes += c.pushes;
            completion.full += c.full;
        }
        completion.pops = self.completion_pops;
        row(
            "completion".into(),
            completion,
            Some(self.completions.len() as u64),
        );
    }
}

fn engine_reason(code: u16) -> &'static str {
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
