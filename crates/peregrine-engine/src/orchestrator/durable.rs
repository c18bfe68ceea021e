//! The orchestrator's side of restart recovery: journaling state changes, and taking
//! over the state a replay rebuilt.

use peregrine_queue::clock::now_ns;

use super::{Live, Orchestrator};
use crate::durable::{EngineJournal, Rec, Recovered};
use crate::gateway::{Completion, CompletionKind};
use peregrine_venues::Report;

impl Orchestrator {
    /// Journals from now on into `journal`.
    pub fn with_journal(mut self, journal: EngineJournal) -> Orchestrator {
        self.journal = Some(journal);
        self
    }

    /// Takes over a replayed state: positions, PnL, limits, kill switches, the next
    /// order id, and the orders still open (orphans the venues now reconcile).
    /// `settled` are reports the venue adapters gave at once for restored orders
    /// (the simulated venue restarted with the engine, so its orders are gone).
    pub fn restore(mut self, rec: Recovered, settled: Vec<Completion>) -> Orchestrator {
        self.risk = rec.risk;
        self.next_engine_id = self.next_engine_id.max(rec.next_engine_id);
        for o in &rec.orders {
            let live = Live {
                strategy: o.strategy,
                client_id: o.client_key,
                venue: o.venue,
                instrument: o.instrument.0,
                side: o.side,
                price: o.price.units(),
                qty: o.qty.lots(),
                leaves: o.leaves.lots(),
                ts: [0; 8],
                cancel_sent: true, // the venue reconciles it: nothing else to send
                replace_pending: false,
            };
            self.orders.insert(o.engine_id, live);
            self.by_client
                .insert((o.strategy, o.client_key), o.engine_id);
        }
        let t = now_ns();
        for c in settled {
            self.on_completion(c, t);
        }
        self.commit_journal();
        self
    }

    /// Appends a record; a journal that fails switches the global kill switch on (the
    /// engine must not trade on what it could forget).
    pub(super) fn log(&mut self, rec: &Rec) {
        let Some(j) = self.journal.as_mut() else {
            return;
        };
        if !j.append(rec, now_ns()) {
            self.journal_failed();
        }
    }

    /// Writes what was appended (before an order leaves, and after each busy turn).
    pub(super) fn commit_journal(&mut self) {
        let Some(j) = self.journal.as_mut() else {
            return;
        };
        if j.pending() && !j.commit() {
            self.journal_failed();
        }
    }

    fn journal_failed(&mut self) {
        if !self.risk.is_global_killed() {
            self.risk.kill(None);
            eprintln!(
                "engine {}: JOURNAL FAILED ({}); global kill switch on: no new orders until \
                 the engine is restarted",
                self.engine,
                self.journal
                    .as_ref()
                    .and_then(|j| j.failed.clone())
                    .unwrap_or_default()
            );
        }
    }

    /// Journals what a venue report changes about order `engine_id`.
    pub(super) fn log_report(&mut self, c: &Completion) {
        let engine_id = c.engine_id;
        let rec = match c.kind {
            CompletionKind::Report(Report::Ack { venue_id, .. }) => Rec::Ack {
                engine_id,
                venue_id,
            },
            CompletionKind::Report(Report::Fill {
                price, qty, leaves, ..
            }) => Rec::Fill {
                engine_id,
                price: price.units(),
                qty: qty.lots(),
                leaves: leaves.lots(),
            },
            CompletionKind::Report(Report::Cancelled { qty, leaves, .. }) => Rec::Cancelled {
                engine_id,
                qty: qty.lots(),
                leaves: leaves.lots(),
            },
            CompletionKind::Report(Report::Rejected { .. }) | CompletionKind::SubmitFailed(_) => {
                Rec::Rejected { engine_id }
            }
            CompletionKind::Report(Report::Replaced { price, qty, .. }) => Rec::Replaced {
                engine_id,
                price: price.units(),
                qty: qty.lots(),
            },
            _ => return,
        };
        self.log(&rec);
    }

    /// Whether an order belongs to a previous incarnation (restored from the journal).
    pub(super) fn is_orphan(client_id: u64) -> bool {
        client_id & crate::durable::ORPHAN != 0
    }
}
