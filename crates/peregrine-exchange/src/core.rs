//! The sequenced matching stage: stamps and numbers each command, writes it to the
//! [`CommandLog`], runs it through the [`MatchingEngine`], and turns the events into
//! private reports (routed to the owning sessions) and feed messages.
//!
//! Nothing here touches a socket: reports leave through an [`Outbox`] (the session
//! table in the compact topology, a ring in the split one), so the same code runs in
//! both topologies and in unit tests. Buffers are allocated once; the per-order path
//! reuses them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use peregrine_book::{Action, Command, Event, MatchingEngine};
use peregrine_types::{AccountId, ClientOrderId, InstrumentId, OrderId};
use peregrine_wire::{Inbound, Outbound};
use rustc_hash::FxHashMap;

use crate::balances::{AdminPolicy, BalanceSetup, Balances, VenueEngine};
use crate::clock::Clock;
use crate::depth::{DepthPublisher, FeedPosition};
use crate::hasher::Committer;
use crate::journal::CommandLog;
use crate::mapping::{self, Ctx, Dest};
use crate::md::MdPublisher;
use crate::metrics::{CoreMetrics, MetricsHub};
use crate::recovery::RecoveryServer;
use crate::snapshot_codec::EngineSnapshot;
use crate::snapshotter::Snapshotter;

/// Identifies a session across topologies: slot index in the low 32 bits, the slot's
/// generation in the high 32 (so a report for a closed session is never delivered to
/// the slot's next occupant).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SessionKey(pub u64);

impl SessionKey {
    /// The owner key of orders rebuilt from the journal: never a live slot, so their
    /// reports go to the account's current session.
    pub const RECOVERED: SessionKey = SessionKey(u64::MAX);
    /// Builds a key.
    pub const fn new(slot: u32, generation: u32) -> Self {
        SessionKey(((generation as u64) << 32) | slot as u64)
    }
    /// Slot index.
    pub const fn slot(self) -> usize {
        (self.0 & 0xFFFF_FFFF) as usize
    }
    /// Generation.
    pub const fn generation(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

/// Where reports go. `account` lets the session layer redirect a report for a closed
/// session to the account's current session (reconnect).
pub trait Outbox {
    /// Queues one report (its `session_seq` is stamped by the session layer).
    fn send(&mut self, to: SessionKey, account: AccountId, msg: Outbound);
}

/// The session and account owning a live order, and its current client id.
#[derive(Debug, Clone, Copy)]
struct Owner {
    key: SessionKey,
    account: AccountId,
    client_id: ClientOrderId,
}

#[path = "core_admin.rs"]
mod admin;

/// The matching stage.
///
/// With balances on ([`Core::with_balances`]) the engine's pre-match stage is the
/// ledger ([`Balances`]) and every command's events are settled right after it runs;
/// off, both are a single branch (see [`Balances`] for why it is not a type
/// parameter).
#[derive(Debug)]
pub struct Core<L: CommandLog> {
    engine: VenueEngine,
    admin: Option<AdminPolicy>,
    instruments: Vec<InstrumentId>,
    owners: FxHashMap<u64, Owner>,
    events: Vec<Event>,
    engine_seq: u64,
    shared_seq: Arc<AtomicU64>,
    clock: Clock,
    log: L,
    md: Option<MdPublisher>,
    recovery: Option<RecoveryServer>,
    snapshots: Option<Snapshotter>,
    metrics: CoreMetrics,
    depth: Option<DepthPublisher>,
    /// Clock reading at the end of the last batch that ran requests, until
    /// [`Core::publish`] used it.
    batch_end: Option<u64>,
    commits: Option<Committer>,
}

impl<L: CommandLog> Core<L> {
    /// A core over `engine`. `shared_seq` publishes the engine sequence number to the
    /// session layer (for `LoginAccepted` and heartbeats).
    pub fn new(
        engine: MatchingEngine,
        owner_capacity: usize,
        shared_seq: Arc<AtomicU64>,
        log: L,
        md: Option<MdPublisher>,
    ) -> Self {
        let instruments = engine.books().map(|b| b.spec().id).collect();
        Core {
            engine: engine.with_stage(Balances::off()),
            admin: None,
            instruments,
            owners: FxHashMap::with_capacity_and_hasher(owner_capacity, Default::default()),
            events: Vec::with_capacity(4096),
            engine_seq: 0,
            shared_seq,
            clock: Clock::new(),
            log,
            md,
            recovery: None,
            snapshots: None,
            metrics: CoreMetrics::default(),
            depth: None,
            batch_end: None,
            commits: None,
        }
    }

    /// Publishes the counters to `hub` at most once per `interval_ns` (see
    /// [`crate::metrics`]).
    pub fn with_metrics(mut self, hub: Arc<MetricsHub>, interval_ns: u64) -> Self {
        self.metrics
            .attach(hub, interval_ns, self.instruments.len());
        self
    }

    /// Publishes depth snapshots through `depth` (see [`crate::depth`]).
    pub fn with_depth(mut self, depth: DepthPublisher) -> Self {
        self.depth = Some(depth);
        self
    }

    /// The counters (batch mode counts its ticks here; split sets ring depths).
    pub fn metrics_mut(&mut self) -> &mut CoreMetrics {
        &mut self.metrics
    }

    /// The counters.
    pub fn metrics(&self) -> &CoreMetrics {
        &self.metrics
    }

    /// Turns balances on: orders reserve through a fresh ledger for `setup`'s
    /// instruments, and admin requests follow `setup.policy`.
    pub fn with_balances(mut self, setup: &BalanceSetup) -> Self {
        let mut ledger = setup.ledger();
        let pairs = setup.policy.accounts.len() * setup.policy.assets.len();
        ledger.reserve(self.owners.capacity(), pairs);
        *self.engine.pre_match() = Balances::on(ledger);
        self.admin = Some(setup.policy.clone());
        self
    }

    /// The ledger, when balances are on.
    pub fn ledger(&self) -> Option<&peregrine_ledger::Ledger> {
        self.engine.pre_match_ref().ledger()
    }

    /// The state hash recovery logs and `peregrine journal replay` prints: the
    /// engine's, combined with the ledger's state when balances are on.
    pub fn state_hash(&self) -> peregrine_book::StateHash {
        let engine = self.engine.state_hash();
        match self.ledger() {
            Some(l) => crate::balances::state_hash_with(engine, &l.export()),
            None => engine,
        }
    }

    /// Serves book snapshots from this core (see [`crate::recovery`]).
    pub fn with_recovery(mut self, recovery: RecoveryServer) -> Self {
        self.recovery = Some(recovery);
        self
    }

    /// Takes a snapshot every N commands (see [`crate::snapshotter`]). Attach after
    /// recovery: a replica snapshotter is seeded here with the current state (one
    /// encode, before the first order).
    pub fn with_snapshots(mut self, mut snapshots: Snapshotter) -> Self {
        snapshots.seed(&self.engine, self.engine_seq, self.clock.now());
        self.snapshots = Some(snapshots);
        self
    }

    /// Computes commitments on a hasher thread (see [`crate::hasher`]). Attach before
    /// recovery, so that replayed commands rebuild the open window and any window the
    /// log lacks is committed.
    pub fn with_commitments(mut self, commits: Committer) -> Self {
        self.commits = Some(commits);
        self
    }

    /// After recovery: moves the clock past the last window the commitment log holds,
    /// so a new command never joins a window that was already committed (matters only
    /// if the wall clock stepped back across a restart).
    pub fn commitments_floor(&mut self) {
        if let Some(c) = self.commits.as_ref() {
            if let Some(k) = c.logged_through() {
                let end = k.saturating_add(1).saturating_mul(c.window_ns());
                self.clock = self.clock.not_before(peregrine_types::Timestamp(end));
            }
        }
    }

    /// The clock.
    pub fn now(&self) -> peregrine_types::Timestamp {
        self.clock.now()
    }

    /// Batch mode: the tick just run is complete; closes its commitment window.
    pub fn end_tick(&mut self) {
        if let Some(c) = self.commits.as_mut() {
            c.close_now();
        }
    }

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
        self.clock = self.clock.not_before(snap.last_ts);
        Ok(())
    }

    /// Answers recovery clients. Call between batches, after [`Core::publish`].
    pub fn poll_recovery(&mut self) {
        let Some(r) = self.recovery.as_mut() else {
            return;
        };
        let md = self.md.as_ref();
        r.poll(crate::recovery::Source {
            engine: &self.engine,
            session_id: md.map_or(0, |m| m.session_id()),
            as_of_seq: md.map_or(0, |m| m.next_seq() - 1),
            now: self.clock.now(),
            retained: md.map(|m| m.retained()),
        });
    }

    /// The published engine sequence number (the session layer reads it).
    pub fn shared_seq(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.shared_seq)
    }

    /// The engine (for tests and state hashes).
    pub fn engine(&self) -> &VenueEngine {
        &self.engine
    }

    /// The command log.
    pub fn log(&self) -> &L {
        &self.log
    }

    /// The command log, mutably (recovery reads the journal through it).
    pub fn log_mut(&mut self) -> &mut L {
        &mut self.log
    }

    /// Re-applies journaled command `seq` on start: runs it through the engine,
    /// rebuilds order ownership (owned by [`SessionKey::RECOVERED`]) and the
    /// sequence number, and moves the clock to at least the command's time. Writes
    /// nothing to the log, sends no report and publishes nothing.
    pub fn replay(&mut self, seq: u64, cmd: &Command) {
        self.engine_seq = seq;
        // Relaxed: a display value for the session layer; orders nothing else.
        self.shared_seq.store(seq, Ordering::Relaxed);
        self.clock = self.clock.not_before(cmd.ts);
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

    /// The events of the last command executed or replayed.
    pub fn last_events(&self) -> &[Event] {
        &self.events
    }

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
        ts: peregrine_types::Timestamp,
        out: &mut impl Outbox,
    ) -> std::io::Result<()> {
        self.metrics.on_request(msg, ts.0);
        if let Some(req) = admin::request_of(msg) {
            return self.handle_admin(from, account, &req, ts, out);
        }
        if let Some(cmd) = mapping::to_command(msg, account, ts) {
            return self.execute(from, account, msg, &cmd, out);
        }
        if let Inbound::MassCancel(m) = msg {
            for i in 0..self.instruments.len() {
                let cmd = mapping::mass_cancel_of(m, self.instruments[i], account, ts);
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
        let ctx = self.context(msg, cmd);
        self.events.clear();
        self.engine.execute(cmd, &mut self.events);
        self.engine.pre_match().settle(&self.events);
        self.metrics.on_command();
        if let Some(c) = self.commits.as_mut() {
            c.command(cmd.ts.0, &self.events);
        }
        if let Some(s) = self.snapshots.as_mut() {
            let rec = crate::command_codec::Record::Command(*cmd);
            s.after_command(self.engine_seq, rec, &self.engine, cmd.ts);
        }
        for i in 0..self.events.len() {
            let ev = self.events[i];
            self.metrics.on_event(&ev);
            self.route(&ev, &ctx, from, account, out);
            if let (Some(md), Some(m)) = (self.md.as_mut(), mapping::feed_for(&ev, cmd.ts)) {
                md.push(m);
            }
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
        for (dest, msg) in mapping::reports_for(ev, ctx).into_iter().flatten() {
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

    fn forget_done(&mut self, ev: &Event) {
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

    /// Ends a batch: makes the log durable. Call before writing any report of the
    /// batch to a socket.
    pub fn end_batch(&mut self) -> std::io::Result<()> {
        if self.metrics.in_batch() {
            // With metrics or depth on, the one clock read per batch: it ends the last
            // request's latency, and `publish` reuses it for the debounces. Without
            // them, no clock read.
            let now = (self.metrics.timing() || self.depth.is_some()).then(|| self.clock.now().0);
            self.metrics.end_batch(now);
            self.batch_end = now;
        }
        self.log.commit()?;
        if let Some(s) = self.snapshots.as_mut() {
            s.after_commit(&self.engine);
        }
        Ok(())
    }

    /// Sends the batch's feed packet(s). Called after the batch's reports are written,
    /// so the UDP send is not on the order→ack path.
    pub fn publish(&mut self) {
        if let Some(c) = self.commits.as_mut() {
            c.flush();
        }
        self.drain_commitments();
        if let Some(md) = self.md.as_mut() {
            md.flush();
        }
        if let Some(now) = self.batch_end.take() {
            self.publish_telemetry(now);
        }
    }

    /// Housekeeping when idle: feed heartbeats, and the debounced metrics and depth
    /// publishes (so the last batch before a quiet spell is published too).
    pub fn idle(&mut self) {
        if let Some(c) = self.commits.as_mut() {
            c.close_if_past(self.clock.now().0);
            c.flush();
            if self.drain_commitments() > 0 {
                if let Some(md) = self.md.as_mut() {
                    md.flush();
                }
            }
        }
        if let Some(md) = self.md.as_mut() {
            md.heartbeat_if_due();
        }
        if self.metrics.attached() || self.depth.is_some() {
            let now = self.clock.now().0;
            self.publish_telemetry(now);
        }
    }

    /// Copies depth and counters for readers, each at most once per its interval.
    /// Runs after the feed flush, so the depth snapshot matches the feed sequence.
    fn publish_telemetry(&mut self, now: u64) {
        if let Some(d) = self.depth.as_mut() {
            let feed = self
                .md
                .as_ref()
                .map_or(FeedPosition::default(), |m| FeedPosition {
                    session: m.session_id(),
                    last_seq: m.next_seq() - 1,
                });
            d.publish(now, self.engine_seq, feed, &self.engine);
        }
        let (engine, log, seq) = (&self.engine, &self.log, self.engine_seq);
        self.metrics.publish(now, |s| {
            s.engine_seq = seq;
            s.journal = log.stats();
            s.resting.clear();
            s.resting
                .extend(engine.books().map(|b| (b.spec().id, b.len() as u64)));
        });
    }

    /// Queues the hasher's finished commitments on the feed.
    fn drain_commitments(&mut self) -> usize {
        let (Some(c), mut md) = (self.commits.as_mut(), self.md.as_mut()) else {
            return 0;
        };
        c.drain(|c| {
            if let Some(md) = md.as_mut() {
                md.push(mapping::commitment_message(&c));
            }
        })
    }

    /// Live orders tracked for routing (resting orders, mostly).
    pub fn tracked_orders(&self) -> usize {
        self.owners.len()
    }

    /// The engine sequence number of the last command.
    pub fn engine_seq(&self) -> u64 {
        self.engine_seq
    }

    /// Unused order ids are fine; a helper for tests.
    pub fn owner_of(&self, id: OrderId) -> Option<AccountId> {
        self.owners.get(&id.0).map(|o| o.account)
    }
}
