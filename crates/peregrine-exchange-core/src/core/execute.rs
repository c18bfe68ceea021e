//! One request's walk: map it to a command, sequence and journal it, execute it, and
//! route each event's reports (into the accounts' streams) and feed message. Queries
//! are answered without a sequence number ([`super::query`]).

use std::sync::atomic::Ordering;

use peregrine_book::{Action, Command, CommandKind, Event, MarketCommand, MarketOp};
use peregrine_types::{AccountId, ClientOrderId, OrderId, Timestamp};
use peregrine_wire::field::{MarketAction, Pad};
use peregrine_wire::v2::venue::{MarketControl, MarketControlDone};
use peregrine_wire::v2::Inbound;
use peregrine_wire::RequestKind;

use super::admin::request_of;
use super::{Core, Owner};
use crate::codec::command::{ListRecord, MassCancelRequest, Record};
use crate::journal::CommandLog;
use crate::route;
use crate::route::reports::{self as reports, Ctx};
use crate::seams::{Outbox, Request, Scope, SessionKey};

impl<L: CommandLog> Core<L> {
    /// Executes one order-entry request from a trading session of `account`.
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
        let req = Request {
            key: from,
            account,
            scope: Scope::Account(account),
            msg: *msg,
            read_ns: 0,
            decoded_ns: 0,
        };
        self.handle_request_at(&req, ts, out)
    }

    /// Executes `req` at `ts`: the general form, with the session's scope (which
    /// orders its queries may see).
    pub fn handle_request_at(
        &mut self,
        req: &Request,
        ts: Timestamp,
        out: &mut impl Outbox,
    ) -> std::io::Result<()> {
        let (from, account, msg) = (req.key, req.account, &req.msg);
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
        if let Some(admin) = request_of(msg) {
            return self.handle_admin(from, account, &admin, ts, out);
        }
        match msg {
            // A query never shows an order whose expiry has passed: expire first.
            Inbound::OrderStatusRequest(q) => {
                self.expire_due(ts, out)?;
                self.answer_status(from, req.scope, q, ts, out);
                return Ok(());
            }
            Inbound::OpenOrdersRequest(q) => {
                self.expire_due(ts, out)?;
                self.answer_open_orders(from, req.scope, q, ts, out);
                return Ok(());
            }
            Inbound::MassCancel(m) => {
                let rec = MassCancelRequest {
                    ts,
                    instrument: m.instrument,
                    account,
                    side: m.side,
                    client_id: m.client_order_id,
                };
                return self.execute_mass_cancel(from, &rec, out);
            }
            Inbound::NewOrderList(m) => {
                let rec = reports::order_list(m, account, ts);
                return self.execute_list(from, &rec, out);
            }
            Inbound::MarketControl(m) => return self.execute_market(from, account, m, ts, out),
            _ => {}
        }
        match route::to_command(msg, account, ts) {
            Some(cmd) => self.execute(from, &cmd, out),
            None => Ok(()),
        }
    }

    fn next_seq(&mut self) -> u64 {
        self.engine_seq += 1;
        // Relaxed: a display value for the session layer; orders nothing else.
        self.shared_seq.store(self.engine_seq, Ordering::Relaxed);
        self.engine_seq
    }

    pub(super) fn execute(
        &mut self,
        from: SessionKey,
        cmd: &Command,
        out: &mut impl Outbox,
    ) -> std::io::Result<()> {
        let seq = self.next_seq();
        self.log.append(seq, cmd)?;
        if let Some((sw, s)) = self.stages.as_mut() {
            s.appended = sw.now_ns();
        }
        self.events.clear();
        let ctx = self.context(cmd, self.engine.next_order_id());
        self.run_command(cmd);
        if let Some((sw, s)) = self.stages.as_mut() {
            s.matched = sw.now_ns();
        }
        self.metrics.on_command();
        self.after_record(seq, Record::Command(*cmd), cmd.ts);
        self.emit(&ctx, cmd.ts, from, out);
        if let Some((sw, s)) = self.stages.as_mut() {
            s.routed = sw.now_ns();
        }
        Ok(())
    }

    /// Sequences, journals and runs a mass cancel over every instrument of its scope
    /// under one sequence number; its one terminal answer is `MassCancelDone` with the
    /// count (or the `CancelRejected` of an unknown instrument).
    fn execute_mass_cancel(
        &mut self,
        from: SessionKey,
        rec: &MassCancelRequest,
        out: &mut impl Outbox,
    ) -> std::io::Result<()> {
        let seq = self.next_seq();
        self.log.append_mass_cancel(seq, rec)?;
        self.events.clear();
        self.run_mass_cancel(rec);
        self.metrics.on_command();
        let ctx = mass_cancel_ctx(rec, seq);
        self.emit(&ctx, rec.ts, from, out);
        self.finish_mass_cancel(rec, &ctx, from, out);
        self.after_record(seq, Record::MassCancel(*rec), rec.ts);
        Ok(())
    }

    /// Sequences, journals and runs an order list (one record: all legs or none).
    fn execute_list(
        &mut self,
        from: SessionKey,
        rec: &ListRecord,
        out: &mut impl Outbox,
    ) -> std::io::Result<()> {
        let seq = self.next_seq();
        let record = Record::List(*rec);
        self.log.append_record(seq, &record)?;
        self.events.clear();
        let first_id = self.engine.next_order_id();
        self.run_list(rec);
        self.metrics.on_command();
        self.after_record(seq, record, rec.ts);
        let ctx = Ctx::of_list(rec, seq, first_id);
        self.emit(&ctx, rec.ts, from, out);
        Ok(())
    }

    /// Runs an order list into `self.events` (settled as it runs).
    pub(super) fn run_list(&mut self, rec: &ListRecord) {
        self.engine
            .execute_list(rec.ts, &rec.list, &mut self.events);
    }

    /// An admin's market command: refused without sequencing for a session that is
    /// not an admin's; else sequenced, journaled and run, and answered to the
    /// requester (`MarketControlDone` with the phase it led to, or `CancelRejected`).
    fn execute_market(
        &mut self,
        from: SessionKey,
        account: AccountId,
        m: &MarketControl,
        ts: Timestamp,
        out: &mut impl Outbox,
    ) -> std::io::Result<()> {
        let refuse = |core: &Self, reason: peregrine_book::RejectReason| {
            peregrine_wire::v2::reports::CancelRejected {
                session_seq: 0,
                engine_seq: core.engine_seq,
                engine_time: ts,
                client_order_id: ClientOrderId(m.request_id),
                order_id: OrderId(0),
                instrument: Some(m.instrument),
                reason: reports::reject_code(reason),
                request_kind: RequestKind::MarketControl,
                reserved: Pad,
                report_seq: 0,
                account,
            }
        };
        if !self.admins.contains(&account) {
            let msg = refuse(self, peregrine_book::RejectReason::InvalidPhase);
            out.answer(from, msg.into());
            return Ok(());
        }
        let op = match m.action {
            MarketAction::Halt => MarketOp::Halt,
            MarketAction::Resume => MarketOp::Resume,
            MarketAction::StartAuction => MarketOp::StartAuction {
                kind: m.auction_kind,
                duration_ns: m.duration_ns,
            },
            MarketAction::Uncross => MarketOp::Uncross,
        };
        let cmd = Command {
            ts,
            action: Action::Market(MarketCommand {
                instrument: m.instrument,
                op,
            }),
        };
        self.execute(from, &cmd, out)?;
        let refused = self.events.iter().find_map(|e| match e {
            Event::Rejected(r) if r.command == CommandKind::Market => Some(r.reason),
            _ => None,
        });
        let answer = match (refused, self.engine.book(m.instrument)) {
            (Some(reason), _) => refuse(self, reason).into(),
            (None, None) => refuse(self, peregrine_book::RejectReason::UnknownInstrument).into(),
            (None, Some(book)) => MarketControlDone {
                session_seq: 0,
                engine_seq: self.engine_seq,
                engine_time: ts,
                request_id: m.request_id,
                ends_at: ends_at_of(&self.events),
                instrument: m.instrument,
                phase: book.phase(),
                reserved: Pad,
            }
            .into(),
        };
        out.answer(from, answer);
        Ok(())
    }

    /// When the books' next timer (a thaw, an auction's end, the schedule) is due.
    pub fn next_timer(&self) -> Option<Timestamp> {
        self.engine.next_timer()
    }

    /// Whether a timer of the books (a thaw, an auction's end, the schedule) is due:
    /// the loop then calls [`Core::run_timers`].
    pub fn timers_due(&self) -> bool {
        self.engine
            .next_timer()
            .is_some_and(|t| t <= self.clock.now())
    }

    /// Sequences and journals a `Tick` at the clock's time, so the books run their due
    /// timers as a command (deterministic on replay); its reports go to the accounts'
    /// sessions. Does nothing when no timer is due. Returns whether it ran.
    pub fn run_timers(&mut self, out: &mut impl Outbox) -> std::io::Result<bool> {
        let now = self.clock.now();
        self.run_timers_at(now, out)
    }

    /// [`Core::run_timers`] at a given time (batch mode: a tick's timestamp): runs
    /// the timers due at `ts`, if any.
    pub fn run_timers_at(&mut self, ts: Timestamp, out: &mut impl Outbox) -> std::io::Result<bool> {
        if self.engine.next_timer().is_none_or(|t| t > ts) {
            return Ok(false);
        }
        let cmd = Command {
            ts,
            action: Action::Tick,
        };
        self.execute(SessionKey::RECOVERED, &cmd, out)?;
        Ok(true)
    }

    /// Cancel-on-disconnect, at once: runs [`Request::cancel_on_disconnect`] (the
    /// serving loops hand that request to their dispatch instead, so batch mode runs
    /// it in a tick).
    pub fn cancel_on_disconnect(
        &mut self,
        account: AccountId,
        out: &mut impl Outbox,
    ) -> std::io::Result<()> {
        let r = crate::seams::Request::cancel_on_disconnect(account);
        self.handle(r.key, r.account, &r.msg, out)
    }

    /// Runs one book command into `self.events` (appending; the engine's pre-match
    /// stage settles each event as it comes).
    pub(super) fn run_command(&mut self, cmd: &Command) {
        self.engine.execute(cmd, &mut self.events);
    }

    /// Runs the book commands of a mass cancel: one instrument, or each configured
    /// instrument in id order.
    pub(super) fn run_mass_cancel(&mut self, rec: &MassCancelRequest) {
        match rec.instrument {
            Some(i) => self.run_command(&rec.book_command(i)),
            None => {
                for k in 0..self.instruments.len() {
                    let cmd = rec.book_command(self.instruments[k]);
                    self.run_command(&cmd);
                }
            }
        }
    }

    /// After a journaled record ran: commitments and the snapshot replica see it.
    fn after_record(&mut self, seq: u64, rec: Record, ts: Timestamp) {
        if let Some(c) = self.commits.as_mut() {
            c.command(ts.0, &self.events);
        }
        if let Some(s) = self.snapshots.as_mut() {
            s.after_command(seq, rec, &self.engine, ts, &self.report_next);
        }
    }

    /// The report context of `cmd`, taken before it runs (`first_id`: the engine's
    /// next order id).
    #[inline]
    pub(super) fn context<'c>(&self, cmd: &'c Command, first_id: OrderId) -> Ctx<'c> {
        let orig = match &cmd.action {
            Action::Replace(r) => self
                .owners
                .get(&r.id.0)
                .map_or(ClientOrderId(0), |o| o.client_id),
            _ => ClientOrderId(0),
        };
        let ctx = Ctx::of_with_id(cmd, self.engine_seq, orig, first_id);
        match &cmd.action {
            Action::CancelList(c) => ctx.with_target(
                self.engine
                    .book(c.instrument)
                    .and_then(|b| b.list_state(c.list_id)),
            ),
            _ => ctx,
        }
    }

    /// Routes every event of the command just run: ownership, each report into its
    /// account's stream (stamped with the account's next report sequence number), the
    /// feed.
    fn emit(&mut self, ctx: &Ctx<'_>, ts: Timestamp, from: SessionKey, out: &mut impl Outbox) {
        let reporting = out.wants_reports();
        for i in 0..self.events.len() {
            let ev = self.events[i];
            self.metrics.on_event(&ev);
            self.track(&ev);
            if reporting {
                for (account, msg) in reports::reports_for(&ev, ctx).into_iter().flatten() {
                    let msg = self.stamp(account, msg);
                    out.report(account, msg, from);
                }
            }
            self.forget_done(&ev);
            if let (Some(feed), Some(m)) = (self.feed.as_mut(), route::feed_for(&ev, ts)) {
                feed.push(m, ts.0);
            }
        }
    }

    /// The `MassCancelDone` of a mass cancel that was not refused.
    fn finish_mass_cancel(
        &mut self,
        rec: &MassCancelRequest,
        ctx: &Ctx<'_>,
        from: SessionKey,
        out: &mut impl Outbox,
    ) {
        if let Some(done) = self.mass_cancel_done(rec, ctx) {
            let msg = self.stamp(rec.account, done.1);
            out.report(rec.account, msg, from);
        }
    }

    /// The terminal answer of a mass cancel from its events, unless the engine
    /// refused it (then its `CancelRejected` is the answer).
    pub(super) fn mass_cancel_done(
        &self,
        rec: &MassCancelRequest,
        ctx: &Ctx<'_>,
    ) -> Option<reports::Report> {
        let mut cancelled = 0u32;
        for ev in &self.events {
            match ev {
                Event::Rejected(_) => return None,
                Event::MassCancelled(m) => cancelled = cancelled.saturating_add(m.count),
                _ => {}
            }
        }
        Some(reports::mass_cancel_done(
            ctx,
            rec.account,
            rec.client_id,
            rec.instrument,
            rec.side,
            cancelled,
        ))
    }

    /// Stamps `msg` with `account`'s next report sequence number (and retains it,
    /// while a start-up replay collects the streams).
    pub(super) fn stamp(
        &mut self,
        account: AccountId,
        mut msg: peregrine_wire::v2::Outbound,
    ) -> peregrine_wire::v2::Outbound {
        msg.set_report_seq(self.report_next.take(account));
        if let peregrine_wire::v2::Outbound::Fill(f) = &mut msg {
            f.fee_asset = self.engine.pre_match_ref().fee_asset(f.instrument);
        }
        if let Some(store) = self.retained.as_mut() {
            store.append(account, msg);
        }
        msg
    }

    /// Records a new order's owner, and fills for the order-status answer.
    pub(super) fn track(&mut self, ev: &Event) {
        match ev {
            Event::Accepted(a) => {
                let owner = Owner {
                    account: a.account,
                    client_id: a.client_id,
                    traded: false,
                };
                self.owners.insert(a.id.0, owner);
            }
            Event::Fill(f) => {
                for id in [f.maker_id, f.taker_id] {
                    if let Some(o) = self.owners.get_mut(&id.0) {
                        o.traded = true;
                    }
                }
            }
            _ => {}
        }
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

/// The report context of a mass cancel: its client order id is the `request_id` of
/// every `Cancelled` it causes.
pub(super) fn mass_cancel_ctx(rec: &MassCancelRequest, engine_seq: u64) -> Ctx<'static> {
    Ctx {
        engine_seq,
        ts: rec.ts,
        request_id: rec.client_id,
        orig_client_id: ClientOrderId(0),
        new: None,
        ext: None,
        kind: Some(CommandKind::MassCancel),
        target: None,
    }
}

/// When the call auction a command started uncrosses by itself (0: not timed).
fn ends_at_of(events: &[Event]) -> Timestamp {
    events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::PhaseChanged(p) => Some(p.ends_at),
            _ => None,
        })
        .unwrap_or(Timestamp(0))
}
