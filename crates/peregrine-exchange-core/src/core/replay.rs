//! Rebuilding the state on start: a snapshot restored into the fresh engine, then
//! journaled records re-applied. Nothing is journaled, sent or published; the report
//! streams are renumbered exactly as they were live (and retained when
//! [`Core::collect_reports`] is on), because every report is a function of the
//! journaled records.

use std::sync::atomic::Ordering;

use peregrine_book::Command;

use super::execute::mass_cancel_ctx;
use super::{Core, Owner};
use crate::codec::command::{ListRecord, MassCancelRequest, Record};
use crate::codec::snapshot::EngineSnapshot;
use crate::journal::CommandLog;
use crate::route::reports::{self as reports, Ctx};

impl<L: CommandLog> Core<L> {
    /// Restores the state of snapshot `snap` into this core's fresh engine: books,
    /// next order id, order ownership, report stream counters, sequence number and
    /// clock floor; and, when the core collects reports ([`Core::collect_reports`]),
    /// the report streams' retained reports.
    pub fn restore_snapshot(&mut self, snap: &EngineSnapshot) -> Result<(), String> {
        for (i, b) in snap.books.iter().enumerate() {
            let book = self
                .engine
                .book_mut(b.instrument)
                .ok_or_else(|| format!("snapshot has unknown instrument {}", b.instrument))?;
            book.restore(b.now, b.trade_seq, b.status, &b.orders)
                .map_err(|e| format!("instrument {}: {e}", b.instrument))?;
            if let Some(v) = snap.venue.as_ref().and_then(|v| v.books.get(i)) {
                book.restore_venue(v)
                    .map_err(|e| format!("instrument {}: {e}", b.instrument))?;
                for p in &v.parked {
                    let owner = Owner {
                        account: p.order.order.account,
                        client_id: p.order.order.client_id,
                        traded: false,
                    };
                    self.owners.insert(p.order.order.id.0, owner);
                }
            }
            for o in &b.orders {
                let owner = Owner {
                    account: o.account,
                    client_id: o.client_id,
                    traded: false,
                };
                self.owners.insert(o.id.0, owner);
            }
        }
        self.engine.set_next_order_id(snap.next_order_id);
        self.restore_ledger(snap)?;
        let fees = snap.venue.as_ref().and_then(|v| v.fees.as_ref());
        match (self.engine.pre_match().fees_mut(), fees) {
            (Some(f), Some(state)) => f.restore(state),
            (None, None) | (Some(_), None) => {}
            (None, Some(_)) => {
                return Err("the snapshot has fee volumes but fees are off \
                     (turn fees off only with a fresh journal)"
                    .into())
            }
        }
        self.report_next = crate::reports::Counters::from_sorted(&snap.report_next);
        if let Some(collecting) = self.retained.take() {
            // The report streams' retention: the snapshot's retained reports (kept
            // within the retention in force now), or, from an older snapshot, only
            // the numbering, the streams retained from the replay on.
            let retention = collecting.retention();
            self.retained = Some(match &snap.reports {
                Some(saved) => saved.clone().with_retention(retention),
                None => {
                    let mut fresh = crate::reports::ReportStore::new(retention);
                    fresh.resume(&snap.report_next, snap.last_seq.saturating_add(1));
                    fresh
                }
            });
        }
        self.engine_seq = snap.last_seq;
        // Relaxed: a display value for the session layer; orders nothing else.
        self.shared_seq.store(snap.last_seq, Ordering::Relaxed);
        self.clock.not_before(snap.last_ts);
        Ok(())
    }

    fn replay_seq(&mut self, seq: u64, ts: peregrine_types::Timestamp) {
        self.engine_seq = seq;
        // Relaxed: a display value for the session layer; orders nothing else.
        self.shared_seq.store(seq, Ordering::Relaxed);
        self.clock.not_before(ts);
        self.events.clear();
    }

    /// Re-applies journaled command `seq` on start: runs it through the engine,
    /// rebuilds order ownership, the sequence number and the report streams, and
    /// moves the clock to at least the command's time.
    pub fn replay(&mut self, seq: u64, cmd: &Command) {
        self.replay_seq(seq, cmd.ts);
        let first_id = self.engine.next_order_id();
        let ctx = self.context(cmd, first_id);
        self.run_command(cmd);
        self.replay_events(cmd.ts, &ctx);
    }

    /// Re-applies a journaled order list.
    pub fn replay_list(&mut self, seq: u64, rec: &ListRecord) {
        self.replay_seq(seq, rec.ts);
        let first_id = self.engine.next_order_id();
        self.run_list(rec);
        self.replay_events(rec.ts, &Ctx::of_list(rec, seq, first_id));
    }

    /// Re-applies a journaled mass cancel request.
    pub fn replay_mass_cancel(&mut self, seq: u64, rec: &MassCancelRequest) {
        self.replay_seq(seq, rec.ts);
        self.run_mass_cancel(rec);
        let ctx = mass_cancel_ctx(rec, seq);
        self.replay_events(rec.ts, &ctx);
        if let Some((account, msg)) = self.mass_cancel_done(rec, &ctx) {
            self.stamp(account, msg);
        }
    }

    /// Ownership and report numbering for the events of a replayed record.
    fn replay_events(&mut self, ts: peregrine_types::Timestamp, ctx: &Ctx<'_>) {
        if let Some(c) = self.commits.as_mut() {
            c.command(ts.0, &self.events);
        }
        for i in 0..self.events.len() {
            let ev = self.events[i];
            self.track(&ev);
            for (account, msg) in reports::reports_for(&ev, ctx).into_iter().flatten() {
                self.stamp(account, msg);
            }
            self.forget_done(&ev);
        }
    }

    /// Re-applies journaled record `seq` of any kind.
    pub fn replay_record(&mut self, seq: u64, rec: &Record) {
        match rec {
            Record::Command(c) => self.replay(seq, c),
            Record::Admin(a) => self.replay_admin(seq, a),
            Record::MassCancel(m) => self.replay_mass_cancel(seq, m),
            Record::List(l) => self.replay_list(seq, l),
        }
    }
}
