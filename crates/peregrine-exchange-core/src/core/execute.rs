//! One request's walk: map it to a command, sequence and journal it, execute it,
//! and route each event's reports and feed message.

use std::sync::atomic::Ordering;

use peregrine_book::{Action, Command, Event};
use peregrine_types::{AccountId, ClientOrderId, Timestamp};
use peregrine_wire::Inbound;

use super::admin::request_of;
use super::{Core, Owner};
use crate::codec::command::Record;
use crate::journal::CommandLog;
use crate::route::{self, Ctx, Dest};
use crate::seams::{Outbox, SessionKey};

impl<L: CommandLog> Core<L> {
    /// Executes one order-entry request from an authenticated session.
    pub fn handle(
        &mut self,
        from: SessionKey,
        account: AccountId,
        msg: &Inbound,
        out: &mut impl Outbox,
    ) -> std::io::Result<()> {
        let ts = self.clock.now();
        self.handle_at(from, account, msg, ts, out)
    }

    /// [`Core::handle`] at a given time (batch mode: the tick's timestamp, which is
    /// then also what the metrics' per-request latency is measured from).
    pub fn handle_at(
        &mut self,
        from: SessionKey,
        account: AccountId,
        msg: &Inbound,
        ts: Timestamp,
        out: &mut impl Outbox,
    ) -> std::io::Result<()> {
        self.metrics.on_request(msg, ts.0);
        if let Some((sw, s)) = self.stages.as_mut() {
            let now = sw.now_ns();
            *s = crate::telemetry::Stamps {
                start: now,
                appended: now,
                matched: now,
                routed: now,
            };
        }
        if let Some(req) = request_of(msg) {
            return self.handle_admin(from, account, &req, ts, out);
        }
        if let Some(cmd) = route::to_command(msg, account, ts) {
            return self.execute(from, account, msg, &cmd, out);
        }
        if let Inbound::MassCancel(m) = msg {
            for i in 0..self.instruments.len() {
                let cmd = route::mass_cancel_of(m, self.instruments[i], account, ts);
                self.execute(from, account, msg, &cmd, out)?;
            }
        }
        Ok(())
    }

    fn execute(
        &mut self,
        from: SessionKey,
        account: AccountId,
        msg: &Inbound,
        cmd: &Command,
        out: &mut impl Outbox,
    ) -> std::io::Result<()> {
        self.engine_seq += 1;
        // Relaxed: a display value for the session layer; orders nothing else.
        self.shared_seq.store(self.engine_seq, Ordering::Relaxed);
        self.log.append(self.engine_seq, cmd)?;
        if let Some((sw, s)) = self.stages.as_mut() {
            s.appended = sw.now_ns();
        }
        let ctx = self.context(msg, cmd);
        self.events.clear();
        self.engine.execute(cmd, &mut self.events);
        self.engine.pre_match().settle(&self.events);
        if let Some((sw, s)) = self.stages.as_mut() {
            s.matched = sw.now_ns();
        }
        self.metrics.on_command();
        if let Some(c) = self.commits.as_mut() {
            c.command(cmd.ts.0, &self.events);
        }
        if let Some(s) = self.snapshots.as_mut() {
            s.after_command(self.engine_seq, Record::Command(*cmd), &self.engine, cmd.ts);
        }
        for i in 0..self.events.len() {
            let ev = self.events[i];
            self.metrics.on_event(&ev);
            self.route(&ev, &ctx, from, account, out);
            if let (Some(feed), Some(m)) = (self.feed.as_mut(), route::feed_for(&ev, cmd.ts)) {
                feed.push(m, cmd.ts.0);
            }
        }
        if let Some((sw, s)) = self.stages.as_mut() {
            s.routed = sw.now_ns();
        }
        Ok(())
    }

    fn context(&self, msg: &Inbound, cmd: &Command) -> Ctx {
        let (new_order, request_id) = match msg {
            Inbound::NewOrder(o) => (Some(*o), ClientOrderId(0)),
            Inbound::Cancel(c) => (None, c.client_order_id),
            Inbound::MassCancel(m) => (None, m.client_order_id),
            _ => (None, ClientOrderId(0)),
        };
        let orig_client_id = match &cmd.action {
            Action::Replace(r) => self
                .owners
                .get(&r.id.0)
                .map_or(ClientOrderId(0), |o| o.client_id),
            _ => ClientOrderId(0),
        };
        Ctx {
            engine_seq: self.engine_seq,
            ts: cmd.ts,
            new_order,
            request_id,
            orig_client_id,
        }
    }

    fn route(
        &mut self,
        ev: &Event,
        ctx: &Ctx,
        from: SessionKey,
        account: AccountId,
        out: &mut impl Outbox,
    ) {
        if let Event::Accepted(a) = ev {
            let owner = Owner {
                key: from,
                account,
                client_id: a.client_id,
            };
            self.owners.insert(a.id.0, owner);
        }
        for (dest, msg) in route::reports_for(ev, ctx).into_iter().flatten() {
            match dest {
                Dest::Requester => out.send(from, account, msg),
                Dest::OwnerOf(id) => match self.owners.get(&id.0) {
                    Some(o) => out.send(o.key, o.account, msg),
                    None => out.send(from, account, msg),
                },
            }
        }
        self.forget_done(ev);
    }

    /// Drops the owner of an order that is done; follows a replace's new client id.
    pub(super) fn forget_done(&mut self, ev: &Event) {
        match ev {
            Event::Fill(f) => {
                if f.maker_leaves.is_zero() {
                    self.owners.remove(&f.maker_id.0);
                }
                if f.taker_leaves.is_zero() {
                    self.owners.remove(&f.taker_id.0);
                }
            }
            Event::Cancelled(c) if c.leaves.is_zero() => {
                self.owners.remove(&c.id.0);
            }
            Event::Replaced(r) => {
                if let Some(o) = self.owners.get_mut(&r.id.0) {
                    o.client_id = r.client_id;
                }
            }
            _ => {}
        }
    }
}
