//! A cluster node driven one step at a time (the simulator's): the same rounds as
//! [`crate::cluster::run_cluster`] — follow until the node leads with its log applied, serve with the
//! exchange's loop until deposed, then reopen the log from disk and follow again —
//! with the node thread's work (ticks, inbound messages, the pump, `advance`) and the
//! serving loop's iterations called by the caller, the Raft messages handed to it,
//! the log on its [`Environment`]'s storage.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender};
use std::sync::Arc;
use std::time::Instant;

use peregrine_cluster::transport::Waker;
use peregrine_cluster::{Event, MembershipChange, Message, Node, NodeOptions, Pump};
use peregrine_exchange_core::reports::Retention;
use peregrine_exchange_core::Clock;

use super::{Environment, StepOptions, SteppedVenue, VenueLog};
use crate::cluster::log::ReplicatedLog;
use crate::cluster::pump::{Handover, LeaderPump};
use crate::cluster::sm::ExchangeSm;
use crate::cluster::Shared;
use crate::config::Config;
use crate::error::ExchangeError;

fn err(e: impl std::fmt::Display) -> ExchangeError {
    ExchangeError::Cluster(e.to_string())
}

/// One round: the node, its pump, and the serving venue once handed over.
struct Round {
    node: Node<ExchangeSm>,
    pump: LeaderPump,
    shared: Arc<Shared>,
    handover: Receiver<Handover>,
    to_node: Sender<Vec<u8>>,
    serving: Option<SteppedVenue>,
}

/// One cluster node, stepped. See the module documentation.
pub struct SteppedClusterNode {
    config: Config,
    env: Environment,
    opts: NodeOptions,
    step_opts: StepOptions,
    /// Always `Some` between calls (taken only while a round is replaced).
    round: Option<Round>,
    rounds: u64,
}

impl std::fmt::Debug for SteppedClusterNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SteppedClusterNode")
            .field("id", &self.opts.id)
            .field("rounds", &self.rounds)
            .finish_non_exhaustive()
    }
}

impl SteppedClusterNode {
    /// Opens the node of `config`'s `[cluster]` section on `env`: its Raft log from
    /// the journal directory, elections after exactly `election_ticks` (the caller
    /// gives nodes different values; nothing is drawn from a thread RNG).
    pub fn open(
        config: &Config,
        env: &Environment,
        opts: StepOptions,
    ) -> Result<Self, ExchangeError> {
        let Some(cc) = config.cluster.as_ref() else {
            return Err(ExchangeError::Config(vec![
                "a [cluster] section is needed".into()
            ]));
        };
        cc.validate().map_err(ExchangeError::Config)?;
        let mut node_opts = NodeOptions::from_config(cc);
        node_opts.randomize_election = false;
        // No sync thread here: the node syncs the (simulated) disk inline in
        // `advance`, deterministically.
        node_opts.deferred_sync = false;
        let round = open_round(config, env, &node_opts)?;
        Ok(SteppedClusterNode {
            config: config.clone(),
            env: env.clone(),
            opts: node_opts,
            step_opts: opts,
            round: Some(round),
            rounds: 1,
        })
    }

    fn r(&mut self) -> &mut Round {
        self.round.as_mut().expect("a round between calls")
    }

    fn r_ref(&self) -> &Round {
        self.round.as_ref().expect("a round between calls")
    }

    /// One Raft tick.
    pub fn tick(&mut self) {
        self.r().node.tick();
    }

    /// A message from a peer.
    pub fn receive(&mut self, m: Message) {
        self.r().node.step(m);
    }

    /// The transport's outcome of sending a snapshot to `id`.
    pub fn report_snapshot(&mut self, id: u64, delivered: bool) {
        self.r().node.report_snapshot(id, delivered);
    }

    /// The node thread's iteration after inbound messages and ticks: the pump (hand
    /// over, propose the serving loop's batches, notice a deposition), then `advance`.
    /// Returns the messages to send and the node's events; a deposed node has
    /// reopened its log from disk as a follower when this returns. After an error the
    /// node is done (the server's process exits): drop it.
    pub fn advance(&mut self) -> Result<(Vec<Message>, Vec<Event>), ExchangeError> {
        let r = self.r();
        r.pump.pump(&mut r.node, Instant::now());
        r.node.advance().map_err(err)?;
        let msgs = r.node.take_messages();
        let events = r.node.take_events();
        let handed = r.handover.try_recv().ok();
        if let Some(h) = handed {
            self.serve(h)?;
        }
        let r = self.r();
        if let Some(why) = r.shared.failure() {
            return Err(ExchangeError::Cluster(why));
        }
        // Relaxed: one thread.
        if r.serving.is_some() && r.shared.stop_serving.load(Ordering::Relaxed) {
            self.reopen()?;
        }
        Ok((msgs, events))
    }

    fn serve(&mut self, h: Handover) -> Result<(), ExchangeError> {
        let Handover { core, stamp } = h;
        let (config, env, opts) = (self.config.clone(), self.env.clone(), self.step_opts);
        let r = self.r();
        let waker = Waker::detached().map_err(err)?;
        let log = ReplicatedLog::new(stamp, r.to_node.clone(), waker, Arc::clone(&r.shared));
        let mut core = core.try_map_log(|_| Ok::<_, ExchangeError>(VenueLog::Replicated(log)))?;
        let venue = config.venue().map_err(ExchangeError::Config)?;
        // Funded while the streams are collected (the store holds those reports).
        crate::durability::startup::fund(&mut core, venue.balances.as_ref())?;
        let reports = core.take_reports();
        r.serving = Some(SteppedVenue::serve(&config, &env, core, reports, opts)?);
        Ok(())
    }

    /// The crash-only step-down: the serving loop stops, the node is closed, and a
    /// new round reopens its log from disk.
    fn reopen(&mut self) -> Result<(), ExchangeError> {
        log::warn!(
            "cluster: reopening the log in {} as a follower",
            self.opts_dir().display()
        );
        // The old round (its serving loop, node and journal) is dropped before the
        // log is opened again.
        self.round = None;
        self.round = Some(open_round(&self.config, &self.env, &self.opts)?);
        self.rounds += 1;
        Ok(())
    }

    fn opts_dir(&self) -> std::path::PathBuf {
        self.config
            .journal
            .as_ref()
            .map(|j| j.dir.clone())
            .unwrap_or_default()
    }

    /// The serving venue, while this node leads and serves.
    pub fn serving(&mut self) -> Option<&mut SteppedVenue> {
        self.r().serving.as_mut()
    }

    /// The serving venue, read only.
    pub fn serving_ref(&self) -> Option<&SteppedVenue> {
        self.r_ref().serving.as_ref()
    }

    /// The Raft node's status.
    pub fn status(&self) -> peregrine_cluster::Status {
        self.r_ref().node.status()
    }

    /// Whether this node is the Raft leader.
    pub fn is_leader(&self) -> bool {
        self.r_ref().node.is_leader()
    }

    /// This node's applied index.
    pub fn applied(&self) -> u64 {
        self.r_ref().node.applied()
    }

    /// Asks the leader to hand over to `to`.
    pub fn transfer_leader(&mut self, to: u64) {
        self.r().node.transfer_leader(to);
    }

    /// Proposes a membership change (leader only).
    pub fn propose_change(&mut self, change: &MembershipChange) -> Result<(), ExchangeError> {
        self.r().node.propose_change(change).map_err(err)
    }

    /// The replica's state hash and engine sequence number now, with the applied
    /// index they belong to.
    pub fn state(&mut self) -> ([u8; 32], u64, u64) {
        let node = &mut self.r().node;
        let applied = node.applied();
        let sm = node.sm_mut();
        (sm.state_hash_now(), sm.engine_seq(), applied)
    }

    /// Rounds so far (1 + step-downs).
    pub fn rounds(&self) -> u64 {
        self.rounds
    }
}

fn open_round(
    config: &Config,
    env: &Environment,
    opts: &NodeOptions,
) -> Result<Round, ExchangeError> {
    let Some(journal) = config.journal.as_ref() else {
        return Err(ExchangeError::Config(vec![
            "cluster: needs [journal] (its dir holds the node's Raft log)".into(),
        ]));
    };
    let venue = config.venue().map_err(ExchangeError::Config)?;
    let shared = Arc::new(Shared::new().map_err(err)?);
    let retention = Retention {
        per_account: config.reports.retain_per_account,
    };
    let clock = Clock::manual(Arc::clone(&env.epoch_ns));
    let sm = ExchangeSm::with_clock(&venue, retention, Arc::clone(&shared), clock).map_err(err)?;
    let (to_node, proposals) = channel();
    let (handover_tx, handover) = sync_channel(1);
    let pump = LeaderPump::new(
        proposals,
        handover_tx,
        Arc::clone(&shared),
        Arc::new(AtomicBool::new(false)),
    );
    let node = Node::open_in(&env.storage, &journal.dir, opts.clone(), sm).map_err(err)?;
    Ok(Round {
        node,
        pump,
        shared,
        handover,
        to_node,
        serving: None,
    })
}
