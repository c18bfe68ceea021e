//! The sequenced matching stage: stamps and numbers each command, writes it to the
//! [`CommandLog`], runs it through the engine, and turns the events into private
//! reports (routed to the owning sessions) and feed messages.
//!
//! Sans-IO: nothing here owns a socket, a thread or a clock it was not given. Reports
//! leave through an [`crate::Outbox`] (the session table in the compact topology, a ring in
//! the split one); feed packets through a [`crate::feed::PacketSink`] handed to
//! [`Core::publish`]; snapshots and commitments through the [`crate::SnapshotSink`] and
//! [`CommitSink`] the server attaches. So the same code runs in both topologies, in
//! offline replay and in unit tests. Buffers are allocated once; the per-order path
//! reuses them.
//!
//! The walk of one request is a line through the child modules: `execute.rs` (map,
//! journal, match, route), then the batch end in `batch.rs` (commit, feed, telemetry).
//! `admin.rs` holds deposits, withdrawals and balance queries; `replay.rs` re-applies
//! journaled records and snapshots on start.

mod admin;
mod batch;
mod execute;
pub(crate) mod expiry;
mod query;
mod replay;

use std::collections::VecDeque;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use peregrine_book::{Event, MatchingEngine};
use peregrine_commit::CommitSink;
use peregrine_types::{AccountId, ClientOrderId, InstrumentId, OrderId, Timestamp};
use rustc_hash::FxHashMap;

use crate::balances::{AdminPolicy, BalanceSetup, Balances, VenueEngine};
use crate::clock::Clock;
use crate::feed::Feed;
use crate::journal::CommandLog;
use crate::reports::{Counters, ReportStore};
use crate::seams::SnapshotSink;
use crate::telemetry::{CoreMetrics, DepthPublisher, Stamps, StatsSlot, Stopwatch};

/// The account owning a live order, its current client id, and whether it traded.
#[derive(Debug, Clone, Copy)]
struct Owner {
    account: AccountId,
    client_id: ClientOrderId,
    traded: bool,
}

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
    /// Accounts whose sessions may send market commands (halts, auctions).
    admins: Vec<AccountId>,
    instruments: Vec<InstrumentId>,
    owners: FxHashMap<u64, Owner>,
    events: Vec<Event>,
    engine_seq: u64,
    shared_seq: Arc<AtomicU64>,
    clock: Clock,
    log: L,
    feed: Option<Feed>,
    snapshots: Option<Box<dyn SnapshotSink>>,
    metrics: CoreMetrics,
    depth: Option<DepthPublisher>,
    /// Clock reading at the end of the last batch that ran requests, until
    /// [`Core::publish`] used it.
    batch_end: Option<u64>,
    commits: Option<Box<dyn CommitSink>>,
    /// Each account's next report sequence number (the report streams, protocol
    /// version 2): deterministic from the journal, saved in snapshots.
    report_next: Counters,
    /// While a start-up replay rebuilds the streams' retention: where the reports go
    /// ([`Core::collect_reports`]).
    retained: Option<ReportStore>,
    /// The engine sequence number at the last [`Core::end_batch`].
    committed_seq: u64,
    /// Feed messages queued by the last [`Core::end_batch`]: those of commands run
    /// since (a GTD expiry's tick in the loop's chores) are not committed yet.
    committed_queued: u64,
    /// Batches whose commands are not known durable yet: (last sequence number,
    /// feed messages queued by its end). Their feed messages wait.
    held: VecDeque<(u64, u64)>,
    /// The durable sequence number the snapshot sink was last told.
    snapshot_durable: u64,
    /// Stage timing of each order request, when on.
    stages: Option<(Stopwatch, Stamps)>,
}

/// Batches a core tracks while their `fdatasync` runs; more are merged into the
/// newest (released together, never early).
const HELD_BATCHES: usize = 1024;

impl<L: CommandLog> Core<L> {
    /// A core over `engine`, journaling to `log`, reading time from `clock`, with
    /// room to track `owner_capacity` live orders without growing.
    pub fn new(engine: MatchingEngine, owner_capacity: usize, log: L, clock: Clock) -> Self {
        let instruments = engine.books().map(|b| b.spec().id).collect();
        Core {
            engine: engine.with_stage(Balances::off()),
            admin: None,
            admins: Vec::new(),
            instruments,
            owners: FxHashMap::with_capacity_and_hasher(owner_capacity, Default::default()),
            events: Vec::with_capacity(4096),
            engine_seq: 0,
            shared_seq: Arc::new(AtomicU64::new(0)),
            clock,
            log,
            feed: None,
            snapshots: None,
            metrics: CoreMetrics::default(),
            depth: None,
            batch_end: None,
            commits: None,
            report_next: Counters::default(),
            retained: None,
            committed_seq: 0,
            committed_queued: 0,
            held: VecDeque::with_capacity(HELD_BATCHES),
            snapshot_durable: 0,
            stages: None,
        }
    }

    /// Keeps every report made from now on (live or replayed) in `store` too, until
    /// [`Core::take_reports`]: start-up replays the journal through this so the
    /// sessions can replay retained reports to clients that reconnect.
    pub fn collect_reports(&mut self, mut store: ReportStore, engine_floor: u64) {
        store.resume(&self.report_counters(), engine_floor);
        self.retained = Some(store);
    }

    /// The store filled since [`Core::collect_reports`] (the session layer keeps it
    /// up to date from then on).
    pub fn take_reports(&mut self) -> Option<ReportStore> {
        self.retained.take()
    }

    /// The report streams collected so far, while collecting (what a snapshot of this
    /// core saves with the state).
    pub fn reports(&self) -> Option<&ReportStore> {
        self.retained.as_ref()
    }

    /// Each account's next report sequence number, sorted by account.
    pub fn report_counters(&self) -> Vec<(AccountId, u64)> {
        self.report_next.sorted()
    }

    /// `account`'s next report sequence number.
    pub fn next_report_seq(&self, account: AccountId) -> u64 {
        self.report_next.next(account)
    }

    /// Stamps every order request's stages on `stopwatch` (four reads per request;
    /// [`Core::stamps`] returns them).
    pub fn with_stage_timing(mut self, stopwatch: Stopwatch) -> Self {
        self.stages = Some((stopwatch, Stamps::default()));
        self
    }

    /// The stage stamps of the last request handled, when stage timing is on.
    pub fn stamps(&self) -> Option<Stamps> {
        self.stages.map(|(_, s)| s)
    }

    /// The same core over another command log (the server wraps the journal it
    /// recovered from in its group commit); the core is dropped if `f` fails.
    pub fn try_map_log<M: CommandLog, E>(
        self,
        f: impl FnOnce(L) -> Result<M, E>,
    ) -> Result<Core<M>, E> {
        Ok(Core {
            engine: self.engine,
            admin: self.admin,
            admins: self.admins,
            instruments: self.instruments,
            owners: self.owners,
            events: self.events,
            engine_seq: self.engine_seq,
            shared_seq: self.shared_seq,
            clock: self.clock,
            log: f(self.log)?,
            feed: self.feed,
            snapshots: self.snapshots,
            metrics: self.metrics,
            depth: self.depth,
            batch_end: self.batch_end,
            commits: self.commits,
            report_next: self.report_next,
            retained: self.retained,
            committed_seq: self.committed_seq,
            committed_queued: self.committed_queued,
            held: self.held,
            snapshot_durable: self.snapshot_durable,
            stages: self.stages,
        })
    }

    /// Publishes the market-data feed (see [`crate::feed`]): every event's feed
    /// message is queued, and [`Core::publish`] packs and hands them out.
    pub fn with_feed(mut self, feed: Feed) -> Self {
        self.feed = Some(feed);
        self
    }

    /// Publishes the counters to `slot` at most once per `interval_ns` (see
    /// [`crate::telemetry`]).
    pub fn with_metrics(mut self, slot: Arc<StatsSlot>, interval_ns: u64) -> Self {
        self.metrics
            .attach(slot, interval_ns, self.instruments.len());
        self
    }

    /// Publishes depth snapshots through `depth` (see [`crate::telemetry`]).
    pub fn with_depth(mut self, depth: DepthPublisher) -> Self {
        self.depth = Some(depth);
        self
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

    /// Lets the sessions of `admins` send market commands (halt, resume, auctions).
    pub fn with_admins(mut self, admins: &[AccountId]) -> Self {
        self.admins = admins.to_vec();
        self
    }

    /// Turns fees on (`fees`: the instruments' schedules): charged into `account`'s
    /// balances when balances are on, priced and reported only when they are off.
    pub fn with_fees(mut self, mut fees: peregrine_ledger::Fees, account: AccountId) -> Self {
        // Room for every (account, instrument) volume the config knows of, so the
        // order path does not grow the map.
        let accounts = self.admin.as_ref().map_or(1024, |p| p.accounts.len() + 1);
        fees.reserve(accounts * self.instruments.len().max(1));
        self.engine.pre_match().set_fees(fees, account);
        self
    }

    /// Takes snapshots through `snapshots` (the server's snapshot thread). Attach
    /// after recovery and before the report streams are taken: the sink is seeded here
    /// with the current state and the streams' retained reports (one encode, before
    /// the first order).
    pub fn with_snapshots(mut self, mut snapshots: Box<dyn SnapshotSink>) -> Self {
        snapshots.seed(
            &self.engine,
            self.engine_seq,
            self.clock.now(),
            &self.report_next,
            self.retained.as_ref(),
        );
        self.snapshots = Some(snapshots);
        self
    }

    /// Computes commitments through `commits` (the hasher thread). Attach before
    /// recovery, so that replayed commands rebuild the open window and any window the
    /// log lacks is committed.
    pub fn with_commitments(mut self, commits: Box<dyn CommitSink>) -> Self {
        self.commits = Some(commits);
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

    /// The ledger, when balances are on.
    pub fn ledger(&self) -> Option<&peregrine_ledger::Ledger> {
        self.engine.pre_match_ref().ledger()
    }

    /// The state hash recovery logs and `peregrine journal replay` prints: the
    /// engine's, combined with the ledger's state when balances are on.
    pub fn state_hash(&self) -> peregrine_book::StateHash {
        let engine = self.engine.state_hash();
        let stage = self.engine.pre_match_ref();
        let ledger = stage.ledger().map(peregrine_ledger::Ledger::export);
        let fees = stage.fees().map(peregrine_ledger::Fees::export);
        crate::balances::state_hash_with(engine, ledger.as_ref(), fees.as_ref())
    }

    /// The clock.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    /// The feed, if one is attached (the recovery service reads its retained
    /// messages and position).
    pub fn feed(&self) -> Option<&Feed> {
        self.feed.as_ref()
    }

    /// The published engine sequence number (the session layer reads it for
    /// `LoginAccepted` and heartbeats).
    pub fn shared_seq(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.shared_seq)
    }

    /// The engine (for the recovery service, tests and state hashes).
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

    /// The events of the last command executed or replayed.
    pub fn last_events(&self) -> &[Event] {
        &self.events
    }

    /// Live orders tracked for routing (resting orders, mostly).
    pub fn tracked_orders(&self) -> usize {
        self.owners.len()
    }

    /// The engine sequence number of the last command.
    pub fn engine_seq(&self) -> u64 {
        self.engine_seq
    }

    /// The engine sequence number at the end of the last batch.
    pub fn committed_seq(&self) -> u64 {
        self.committed_seq
    }

    /// The last sequence number whose results may leave: the end of the last batch,
    /// or less while the log's sync has not reached it.
    pub fn durable_seq(&self) -> u64 {
        self.committed_seq.min(self.log.durable_through())
    }

    /// The account owning a live order (tests).
    pub fn owner_of(&self, id: OrderId) -> Option<AccountId> {
        self.owners.get(&id.0).map(|o| o.account)
    }
}
