//! The exchange driven one step at a time by a caller that owns the time, the
//! connections, the disk and the randomness: what the deterministic simulator
//! (`peregrine-sim`, `peregrine sim`) runs.
//!
//! It is the server's code, not a copy: the same start-up recovery from the journal
//! and the newest snapshot (`crate::durability::startup`), the same group commit
//! (`crate::durability::group_commit`, its sync stepped instead of on a thread), the
//! same snapshot replica (stepped), the same session table, and one iteration of the
//! same compact loop per [`SteppedVenue::step`]. What differs is only where the I/O
//! goes: the journal's files through the caller's [`Storage`], the sessions through
//! in-memory connections the caller fills and drains ([`ConnId`]), the feed's packets
//! into a list the caller takes, the clocks read the caller's nanoseconds.

mod cluster;
mod log;
mod shell;

/// The session layer's behaviour (liveness, slow readers, the per-account cap, a
/// stall) driven through the stepped venue.
#[cfg(test)]
mod session_tests;

use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};

use peregrine_exchange_core::balances::VenueEngine;
use peregrine_exchange_core::dispatch::{Dispatch, MatchingMode, Sequencer};
use peregrine_exchange_core::feed::PacketSink;
use peregrine_exchange_core::{Clock, CommandLog, Core};
use peregrine_journal::{FsyncPolicy, Storage};
use peregrine_types::Rng;

use crate::config::Config;
use crate::durability::group_commit::GroupCommit;
use crate::durability::startup::{self, Host};
use crate::error::{ExchangeError, IoContext};
use crate::net::compact::{Compact, FeedPort};
use crate::net::sources::{Nonces, SessionClock};
use crate::net::table::SessionTable;
use crate::start::{core_for, with_feed};

pub use cluster::SteppedClusterNode;
pub(crate) use log::VenueLog;
use shell::MemShell;
pub use shell::{ConnId, ConnState};

/// What the caller provides: the disk, the clocks, the seed.
#[derive(Debug, Clone)]
pub struct Environment {
    /// The file system of the journal and snapshots.
    pub storage: Storage,
    /// Engine time, epoch nanoseconds (the core's manual clock).
    pub epoch_ns: Arc<AtomicU64>,
    /// Session-layer time: nanoseconds since `base`.
    pub session_ns: Arc<AtomicU64>,
    /// The instant session nanosecond 0 stands for.
    pub base: Instant,
    /// Seeds the challenge nonces and the feed session id.
    pub seed: u64,
}

/// How a stepped venue starts.
#[derive(Debug, Clone, Copy, Default)]
pub struct StepOptions {
    /// Start even if committed journal records are missing (`--accept-loss`).
    pub accept_loss: bool,
    /// Bytes a connection's send buffer holds (a reader that stops reading fills it).
    /// 0: 64 KiB.
    pub conn_buffer: usize,
    /// The negative control of the simulator (a build with the `sabotage` feature
    /// only): results leave before the journal has them.
    #[cfg(feature = "sabotage")]
    pub sabotage: bool,
}

/// The feed's packets, kept for the caller.
#[derive(Debug, Default)]
pub struct Packets(Vec<Vec<u8>>);

impl PacketSink for Packets {
    fn send(&mut self, packet: &mut [u8]) {
        self.0.push(packet.to_vec());
    }
}

impl FeedPort for Packets {
    type Sink = Packets;
    fn sink(&mut self) -> &mut Packets {
        self
    }
    fn poll_recovery<L: CommandLog>(&mut self, _: &Core<L>) {}
    fn snapshot_waiting(&self) -> bool {
        false
    }
}

/// One exchange process, stepped. See the module documentation.
#[derive(Debug)]
pub struct SteppedVenue {
    compact: Compact<VenueLog, MemShell, Packets>,
}

impl SteppedVenue {
    /// Starts the exchange of `config` (which must have a `[journal]`) on `env`:
    /// recovers from the journal and the newest snapshot exactly as the server does.
    pub fn start(
        config: &Config,
        env: &Environment,
        opts: StepOptions,
    ) -> Result<Self, ExchangeError> {
        let Some(section) = config.journal.clone() else {
            return Err(ExchangeError::Config(vec![
                "a stepped venue needs a [journal]".into(),
            ]));
        };
        let clock = Clock::manual(Arc::clone(&env.epoch_ns));
        let host = Host {
            storage: env.storage.clone(),
            clock: clock.clone(),
            stepped: true,
        };
        let venue = config.venue().map_err(ExchangeError::Config)?;
        let log = startup::open(&host, &section, opts.accept_loss)?;
        let mut rng = Rng::new(env.seed);
        let core = core_for(config, &venue, log, clock.clone())?;
        let core = with_feed(config, core, rng.next_u64());
        let (core, reports) = startup::recover(&host, config, &section, &venue, core)?;
        let core = core.try_map_log(|l| VenueLog::for_section(l, &section, config, opts))?;
        Self::serve(config, env, core, reports, opts)
    }

    /// Serves `core` (recovered, or handed over by a cluster node that leads) with
    /// the report streams `reports` (or the core's own collection).
    pub(crate) fn serve(
        config: &Config,
        env: &Environment,
        core: Core<VenueLog>,
        reports: Option<peregrine_exchange_core::reports::ReportStore>,
        opts: StepOptions,
    ) -> Result<Self, ExchangeError> {
        // A cluster node serves one round after another on one environment: each
        // round's feed session (and nonces) must differ, as the server's
        // `feed_session_id` (clock and randomness) does. The engine time and seq
        // at the handover differ between rounds.
        let round = core.now().0 ^ core.engine_seq().rotate_left(29);
        let mut rng = Rng::new(env.seed ^ 0x5E55_1045 ^ round);
        let mut core = core;
        if core.feed().is_none() {
            core = with_feed(config, core, rng.next_u64());
        }
        let reports = reports.or_else(|| core.take_reports());
        let clock = Clock::manual(Arc::clone(&env.epoch_ns));
        let table = SessionTable::new(
            config,
            core.shared_seq(),
            reports,
            clock,
            SessionClock::Manual {
                base: env.base,
                ns: Arc::clone(&env.session_ns),
            },
            Nonces::Seeded(Rng::new(rng.next_u64())),
        );
        let buffer = if opts.conn_buffer == 0 {
            64 << 10
        } else {
            opts.conn_buffer
        };
        let shell = MemShell::new(SessionTable::slots_for(config), buffer);
        let dispatch = Dispatch::new(match config.mode {
            MatchingMode::Continuous => None,
            MatchingMode::Batch => Some(Sequencer::new(
                config.tick_us.saturating_mul(1_000),
                config.tick_capacity,
            )),
        });
        Ok(SteppedVenue {
            compact: Compact::new(table, core, shell, Packets::default(), dispatch, None),
        })
    }

    /// One iteration of the exchange's loop. `parked`: the loop had gone idle and
    /// parked (it then does its idle chores). Returns whether it did work. An error
    /// stops the exchange (the server exits with it).
    pub fn step(&mut self, parked: bool) -> std::io::Result<bool> {
        let timeout = if parked {
            self.compact.park_for().max(Duration::from_nanos(1))
        } else {
            Duration::ZERO
        };
        self.compact.step(timeout)
    }

    /// How long the loop would park after a step that found nothing: until its next
    /// deadline (a GTD expiry, a book timer, a batch tick), at most 10 ms.
    pub fn park_for(&mut self) -> Duration {
        self.compact.park_for()
    }

    /// A client connects (accepted at the next step, or refused).
    pub fn connect(&mut self, conn: ConnId, peer: SocketAddr) {
        self.compact.shell.connect(conn, peer);
    }

    /// Bytes from the client of `conn` arrive.
    pub fn send(&mut self, conn: ConnId, bytes: &[u8]) {
        self.compact.shell.send(conn, bytes);
    }

    /// The client of `conn` closes its side.
    pub fn close(&mut self, conn: ConnId) {
        self.compact.shell.close(conn);
    }

    /// Up to `max` bytes the exchange wrote to `conn`.
    pub fn take_output(&mut self, conn: ConnId, max: usize) -> Vec<u8> {
        self.compact.shell.take_output(conn, max)
    }

    /// Parked steps that found nothing ready (a real loop sleeps its whole park
    /// there, up to 10 ms).
    pub fn idle_parks(&self) -> u64 {
        self.compact.shell.idle_parks
    }

    /// Bytes the exchange wrote to `conn` that the client has not taken yet.
    pub fn output_len(&self, conn: ConnId) -> usize {
        self.compact.shell.output_len(conn)
    }

    /// Where `conn` is.
    pub fn conn_state(&self, conn: ConnId) -> ConnState {
        self.compact.shell.state(conn)
    }

    /// Every connection the exchange knows.
    pub fn conns(&self) -> Vec<ConnId> {
        self.compact.shell.conns()
    }

    /// The feed packets sent since the last call.
    pub fn take_packets(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.compact.feed.0)
    }

    /// Where the feed is: (session id, the last sequence number sent, whether the
    /// book matches it: no feed message waits). `None`: market data off.
    pub fn feed_position(&self) -> Option<(u64, u64, bool)> {
        let f = self.compact.core.feed()?;
        Some((f.session_id(), f.next_seq() - 1, f.pending() == 0))
    }

    /// The recovery service's answer to one request (`SnapshotRequest` or
    /// `ReplayRequest`, encoded), built by the server's own code from this venue's
    /// book and replay ring: the bytes it would write to the subscriber. `None`: a
    /// snapshot asked while a feed message waits (the server defers it; ask again
    /// after the next step), or bytes that are not one such request.
    pub fn recovery_answer(&self, request: &[u8]) -> Option<Vec<u8>> {
        let (req, _) = peregrine_wire::md::recovery::Recovery::decode(request).ok()?;
        let core = &self.compact.core;
        let feed = core.feed()?;
        crate::feed::recovery::answer(
            &req,
            crate::feed::recovery::Source {
                engine: core.engine(),
                session_id: feed.session_id(),
                as_of_seq: feed.next_seq() - 1,
                now: core.now(),
                engine_seq: core.engine_seq(),
                retained: Some(feed.retained()),
                consistent: feed.pending() == 0,
            },
        )
    }

    /// Whether the group commit has written records a sync has not covered yet.
    pub fn sync_wanted(&self) -> bool {
        self.compact.core.log().sync_wanted()
    }

    /// The group commit's `fdatasync` happens now (what its thread does).
    pub fn sync_now(&mut self) -> bool {
        self.compact.core.log().sync_now()
    }

    /// The engine.
    pub fn engine(&self) -> &VenueEngine {
        self.compact.core.engine()
    }

    /// The state hash (engine, and ledger when balances are on).
    pub fn state_hash(&self) -> [u8; 32] {
        self.compact.core.state_hash().0
    }

    /// The engine sequence number of the last command.
    pub fn engine_seq(&self) -> u64 {
        self.compact.core.engine_seq()
    }

    /// `account`'s next report sequence number (its stream so far, durable or not).
    pub fn next_report_seq(&self, account: peregrine_types::AccountId) -> u64 {
        self.compact.core.next_report_seq(account)
    }

    /// The last sequence number whose results may leave.
    pub fn durable_seq(&self) -> u64 {
        self.compact.core.durable_seq()
    }

    /// The negative control of the session layer's stall test (tests only): liveness
    /// judged before reading, on the clock alone.
    #[cfg(test)]
    pub(crate) fn sabotage_liveness(&mut self) {
        self.compact.judge_first = true;
        self.compact.table.naive_liveness = true;
    }

    /// The ledger, when balances are on.
    pub fn ledger(&self) -> Option<&peregrine_ledger::Ledger> {
        self.compact.core.ledger()
    }
}

impl VenueLog {
    /// The command log the server would run for `section` (group commit under
    /// `batch` without commitments; the journal's own commit otherwise), stepped.
    fn for_section(
        log: peregrine_exchange_core::journal::JournalLog,
        section: &peregrine_exchange_core::journal::JournalSection,
        config: &Config,
        opts: StepOptions,
    ) -> Result<Self, ExchangeError> {
        #[cfg(feature = "sabotage")]
        if opts.sabotage {
            return Ok(VenueLog::Sabotaged(
                crate::durability::sabotage::ReleaseBeforeDurable::every_commits(log, 16),
            ));
        }
        let _ = opts;
        if section.fsync == FsyncPolicy::Batch && !config.commitments.enabled {
            let g = GroupCommit::stepped(log).doing(|| "starting the group commit".into())?;
            return Ok(VenueLog::Group(g));
        }
        Ok(VenueLog::Sync(log))
    }
}
