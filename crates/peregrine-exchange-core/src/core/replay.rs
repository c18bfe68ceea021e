//! Rebuilding the state on start: a snapshot restored into the fresh engine, then
//! journaled commands re-applied. Nothing is journaled, reported or published.

use std::sync::atomic::Ordering;

use peregrine_book::{Command, Event};

use super::{Core, Owner};
use crate::codec::snapshot::EngineSnapshot;
use crate::journal::CommandLog;
use crate::seams::SessionKey;

impl<L: CommandLog> Core<L> {
    /// Restores the state of snapshot `snap` into this core's fresh engine: books,
    /// next order id, order ownership (owned by [`SessionKey::RECOVERED`]), sequence
    /// number and clock floor.
    pub fn restore_snapshot(&mut self, snap: &EngineSnapshot) -> Result<(), String> {
        for b in &snap.books {
            let book = self
                .engine
                .book_mut(b.instrument)
                .ok_or_else(|| format!("snapshot has unknown instrument {}", b.instrument))?;
            book.restore(b.now, b.trade_seq, b.status, &b.orders)
                .map_err(|e| format!("instrument {}: {e}", b.instrument))?;
            for o in &b.orders {
                let owner = Owner {
                    key: SessionKey::RECOVERED,
                    account: o.account,
                    client_id: o.client_id,
                };
                self.owners.insert(o.id.0, owner);
            }
        }
        self.engine.set_next_order_id(snap.next_order_id);
        self.restore_ledger(snap)?;
        self.engine_seq = snap.last_seq;
        // Relaxed: a display value for the session layer; orders nothing else.
        self.shared_seq.store(snap.last_seq, Ordering::Relaxed);
        self.clock.not_before(snap.last_ts);
        Ok(())
    }

    /// Re-applies journaled command `seq` on start: runs it through the engine,
    /// rebuilds order ownership (owned by [`SessionKey::RECOVERED`]) and the
    /// sequence number, and moves the clock to at least the command's time. Writes
    /// nothing to the log, sends no report and publishes nothing.
    pub fn replay(&mut self, seq: u64, cmd: &Command) {
        self.engine_seq = seq;
        // Relaxed: a display value for the session layer; orders nothing else.
        self.shared_seq.store(seq, Ordering::Relaxed);
        self.clock.not_before(cmd.ts);
        self.events.clear();
        self.engine.execute(cmd, &mut self.events);
        self.engine.pre_match().settle(&self.events);
        if let Some(c) = self.commits.as_mut() {
            c.command(cmd.ts.0, &self.events);
        }
        for i in 0..self.events.len() {
            let ev = self.events[i];
            if let Event::Accepted(a) = ev {
                let owner = Owner {
                    key: SessionKey::RECOVERED,
                    account: a.account,
                    client_id: a.client_id,
                };
                self.owners.insert(a.id.0, owner);
            }
            self.forget_done(&ev);
        }
    }
}
