//! The stats snapshot the orchestrator thread publishes for `peregrine engine stats`
//! and `summary`: the core's sections plus the latency table and the queue counters.

use std::fmt::Write;

use crate::counters::QueueRow;
use crate::latency::{ROWS, WINDOW_ROWS};
use crate::summary::{EngineSummary, LatencyRow, MdRow};

use super::{Orchestrator, Slot};

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

impl Orchestrator {
    /// Renders the snapshot and the summary and stores them for the control thread
    /// (each skipped if the control or metrics thread holds its lock right now).
    pub fn publish(&self, now: u64) {
        let text = self.render(now);
        if let Ok(mut g) = self.shared.snapshot.try_lock() {
            *g = (text, now);
        }
        let Ok(json) = serde_json::to_string(&self.summary(now)) else {
            return; // cannot happen for these types; the previous summary stays
        };
        if let Ok(mut g) = self.shared.summary.try_lock() {
            *g = json;
        }
    }

    /// The full report.
    pub fn render(&self, now: u64) -> String {
        let mut s = String::new();
        let up = now.saturating_sub(self.core.started_ns()) as f64 / 1e9;
        let _ = writeln!(
            s,
            "engine {}  up {up:.1} s  orders in flight {}  latency samples {}\n",
            self.core.config().name,
            self.core.in_flight(),
            self.latency.samples()
        );
        s += &self.latency.render();
        s += "\n";
        self.core.render_strategies(&mut s);
        self.core.render_positions(&mut s);
        self.core.render_rejects(&mut s);
        self.render_queues(&mut s);
        s
    }

    /// Builds the summary at `now`.
    pub fn summary(&self, now: u64) -> EngineSummary {
        let mut sum = self.core.summary(now);
        sum.latency = ROWS
            .iter()
            .zip(self.latency.rows())
            .map(|(name, h)| row(name, h))
            .collect();
        sum.window = WINDOW_ROWS
            .iter()
            .zip(self.latency.window())
            .map(|(name, h)| row(name, h))
            .collect();
        sum.market_data = self
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
            .collect();
        sum.queues = self.queue_rows();
        sum
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
