//! The node driver: raft-rs's `RawNode` over the journal-backed log, the state
//! machine, snapshots and membership. It owns no socket, thread or clock: the shell
//! (`runner.rs` with `transport/`, or the deterministic simulator in the tests) calls
//! [`Node::tick`], [`Node::step`], [`Node::propose`] and [`Node::advance`], then sends
//! [`Node::take_messages`] and acts on [`Node::take_events`].

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;

use bytes::Bytes;
use peregrine_journal::Storage;
use raft::eraftpb::{
    ConfState, Entry, EntryType, HardState, Message, MessageType, Snapshot, SnapshotMetadata,
};
use raft::{RawNode, StateRole};

use crate::entry::{self, Envelope};
use crate::error::{ClusterError, LogError};
use crate::log::{DurableLog, LogCache, LogOptions, SnapshotData, SnapshotDone};
use crate::node::membership::{self, MembershipChange};
use crate::node::options::NodeOptions;
use crate::node::status::{hex, PeerProgress, Role, Status};
use crate::sm::StateMachine;

/// Something the shell should know or act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Role, leader or term changed.
    RoleChanged {
        /// New role.
        role: Role,
        /// Known leader.
        leader: Option<u64>,
        /// Current term.
        term: u64,
    },
    /// A member's address became known or changed: connect to it.
    PeerAdded {
        /// Node id.
        id: u64,
        /// Address.
        addr: String,
    },
    /// A member left: disconnect.
    PeerRemoved {
        /// Node id.
        id: u64,
    },
    /// A snapshot was taken at `index`.
    SnapshotTaken {
        /// Index.
        index: u64,
        /// State hash.
        hash: [u8; 32],
    },
    /// The leader's snapshot replaced the local state.
    SnapshotInstalled {
        /// Index.
        index: u64,
    },
    /// The leader's state hash for `index` differed from ours: replicas diverged.
    HashMismatch {
        /// Index.
        index: u64,
    },
    /// This node was removed from the cluster.
    Removed,
}

/// Counters of one node.
#[derive(Debug, Clone, Copy, Default)]
struct Counters {
    hash_checks_ok: u64,
    hash_mismatches: u64,
    snapshots_taken: u64,
    snapshots_installed: u64,
    snapshots_skipped: u64,
    entries_applied: u64,
    bad_entries: u64,
    step_errors: u64,
}

/// How many recent snapshot-point hashes a node keeps to check the leader's.
const HASH_MEMORY: usize = 64;

/// A Ready whose entries and hard state were written and wait for a sync: its
/// acknowledgements (a follower's append responses, votes) leave only once the
/// journal is durable through `seq`.
#[derive(Debug)]
struct Persisting {
    /// raft-rs's Ready number.
    number: u64,
    /// The journal seq that must be durable (0: nothing of its own to sync; it
    /// completes with the Readies before it).
    seq: u64,
    /// Messages that may leave only after it is durable.
    msgs: Vec<Message>,
}

/// Runs a snapshot's encode and file write (the closure) somewhere: the runner's
/// snapshot thread ([`Node::set_snapshot_runner`]); without one, on the node's own
/// thread.
pub type SnapshotRunner = Box<dyn Fn(Box<dyn FnOnce() + Send>) + Send>;

/// A local snapshot whose file is being written.
struct Writing {
    index: u64,
    hash: [u8; 32],
    snap: Snapshot,
    /// The snapshot's data (made on the runner's thread) and the write's outcome.
    done: std::sync::mpsc::Receiver<(Bytes, SnapshotDone)>,
}

/// One Raft member running a [`StateMachine`].
pub struct Node<M: StateMachine> {
    raw: RawNode<LogCache>,
    log: DurableLog,
    sm: M,
    opts: NodeOptions,
    peers: BTreeMap<u64, String>,
    applied: u64,
    hashes: VecDeque<(u64, [u8; 32])>,
    /// State-hash entries the leader proposes once the current Ready is done.
    to_propose: Vec<[u8; entry::STATE_HASH_LEN]>,
    role: (StateRole, u64, u64),
    outbox: Vec<Message>,
    events: Vec<Event>,
    counters: Counters,
    removed: bool,
    scratch: Vec<u8>,
    /// Readies written and waiting for their sync, oldest first.
    persisting: VecDeque<Persisting>,
    /// Committed entries not yet applied, in index order (applied in slices:
    /// [`NodeOptions::apply_slice`]).
    to_apply: VecDeque<Entry>,
    /// Ticks since the node opened.
    ticks: u64,
    /// The tick each peer was last heard from (the leader's lease, `check_lease`).
    heard: BTreeMap<u64, u64>,
    /// Ticks as leader since the last hash point.
    since_hash_point: u64,
    /// Where snapshot files are written (`None`: on this thread).
    snapshot_runner: Option<SnapshotRunner>,
    /// The local snapshot being written, if any (at most one).
    writing: Option<Writing>,
}

impl<M: StateMachine> std::fmt::Debug for Node<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("id", &self.opts.id)
            .field("applied", &self.applied)
            .finish_non_exhaustive()
    }
}

impl<M: StateMachine> Node<M> {
    /// Opens the node's log in `dir` (journal + snapshots), restores the state machine
    /// from the newest snapshot and starts raft-rs after it; committed entries after
    /// the snapshot are re-applied through the first [`Node::advance`] calls.
    ///
    /// A node with an empty log bootstraps from `opts.bootstrap` (the initial voters,
    /// written as a snapshot at index 0) unless it is joining (`bootstrap` empty): a
    /// joining node waits for a leader to send it the log.
    pub fn open(dir: &Path, opts: NodeOptions, sm: M) -> Result<Self, ClusterError> {
        Self::open_in(&Storage::os(), dir, opts, sm)
    }

    /// [`Node::open`] with the log on `storage` (a deterministic simulator's file
    /// system).
    pub fn open_in(
        storage: &Storage,
        dir: &Path,
        opts: NodeOptions,
        mut sm: M,
    ) -> Result<Self, ClusterError> {
        let log_opts = LogOptions {
            fsync: opts.fsync,
            segment_bytes: opts.segment_bytes,
            snapshot_retain: opts.snapshot_retain,
            prune: opts.prune,
        };
        let (mut log, rec) = DurableLog::open_in(storage, dir, &log_opts)?;
        let mut snapshot = rec.snapshot;
        if snapshot.is_none() && rec.entries.is_empty() && !opts.bootstrap.is_empty() {
            let data = SnapshotData {
                peers: opts.bootstrap.clone(),
                state_hash: sm.state_hash(),
                state: bytes::Bytes::new(),
            };
            let mut meta = SnapshotMetadata::default();
            meta.set_conf_state(ConfState::from((opts.bootstrap.keys().copied(), [])));
            let mut s = Snapshot {
                data: data.encode().into(),
                ..Default::default()
            };
            s.set_metadata(meta);
            log.install_snapshot(&s, &HardState::default())?;
            snapshot = Some(s);
        }
        let mut peers = BTreeMap::new();
        let mut hashes = VecDeque::new();
        let (cs, snap) = match snapshot {
            Some(s) => {
                let data = SnapshotData::decode(&s.data).map_err(LogError::Invalid)?;
                if !data.state.is_empty() {
                    sm.restore(&data.state)
                        .map_err(ClusterError::StateMachine)?;
                }
                peers = data.peers;
                hashes.push_back((s.get_metadata().index, data.state_hash));
                (s.get_metadata().get_conf_state().clone(), s)
            }
            None => (ConfState::default(), Snapshot::default()),
        };
        for (id, addr) in &opts.bootstrap {
            peers.insert(*id, addr.clone());
        }
        for (id, addr) in &opts.known_peers {
            peers.insert(*id, addr.clone());
        }
        let applied = snap.get_metadata().index;
        let mut cache = LogCache::new(rec.hard_state, cs, snap);
        let (entries, seqs): (Vec<Entry>, Vec<u64>) = rec.entries.into_iter().unzip();
        cache.append(&entries, &seqs).map_err(LogError::Invalid)?;
        let cfg = opts.raft_config(applied);
        let logger = crate::node::logger::logger(opts.id);
        let raw = RawNode::new(&cfg, cache, &logger)?;
        let mut node = Self {
            raw,
            log,
            sm,
            opts,
            peers,
            applied,
            hashes,
            to_propose: Vec::new(),
            role: (StateRole::Follower, 0, 0),
            outbox: Vec::new(),
            events: Vec::new(),
            counters: Counters::default(),
            removed: false,
            scratch: Vec::new(),
            persisting: VecDeque::new(),
            to_apply: VecDeque::new(),
            ticks: 0,
            heard: BTreeMap::new(),
            since_hash_point: 0,
            snapshot_runner: None,
            writing: None,
        };
        for (id, addr) in node.peers.clone() {
            if id != node.opts.id {
                node.events.push(Event::PeerAdded { id, addr });
            }
        }
        Ok(node)
    }

    /// Advances the logical clock by one tick (heartbeats, election timeouts).
    pub fn tick(&mut self) -> bool {
        self.ticks += 1;
        self.check_lease();
        self.hash_point_if_due();
        self.raw.tick()
    }

    /// The leader proposes a hash point every `hash_check_ticks` ticks: every node
    /// hashes its state there and the leader's hash is replicated for the others to
    /// compare, so divergence shows within that time, not only at snapshot points.
    fn hash_point_if_due(&mut self) {
        let every = self.opts.hash_check_ticks;
        if every == 0 || self.raw.raft.state != StateRole::Leader {
            self.since_hash_point = 0;
            return;
        }
        self.since_hash_point += 1;
        if self.since_hash_point >= every {
            self.since_hash_point = 0;
            // A refusal (a transfer under way) just waits for the next point.
            let _ = self
                .raw
                .propose(Vec::new(), entry::encode_hash_point().to_vec());
        }
    }

    /// A leader that has not heard from a majority of the voters (itself included)
    /// for an election timeout steps down at once: it could not commit anything, and
    /// its sessions should go elsewhere. (raft-rs's own `check_quorum` runs once per
    /// election timeout, so it notices between one and two timeouts after the cut.)
    fn check_lease(&mut self) {
        if self.raw.raft.state != StateRole::Leader {
            return;
        }
        let window = self.opts.election_tick as u64;
        let me = self.opts.id;
        let voters = &self.raw.store().conf_state().voters;
        let heard = voters
            .iter()
            .filter(|v| {
                **v == me
                    || self
                        .heard
                        .get(v)
                        .is_some_and(|t| self.ticks.saturating_sub(*t) <= window)
            })
            .count();
        if heard < voters.len() / 2 + 1 {
            let term = self.raw.raft.term;
            self.raw.raft.become_follower(term, raft::INVALID_ID);
        }
    }

    /// Feeds a message from a peer. Messages raft-rs refuses (from a removed peer, or
    /// local message types) are counted and dropped, as are proposals: this cluster
    /// never forwards them, so one from the network is not ours (and raft-rs would
    /// parse its conf changes with rust-protobuf: docs/cluster.md, "Supply chain").
    ///
    /// A node that is not a voter in its own configuration never grants a vote: a
    /// node that joins with an empty log (after a disk loss, under its old id), a
    /// learner, or a removed node would otherwise vote for a stale candidate that
    /// still counts it as a voter (one cut off since before the removal), which then
    /// leads a term another leader already leads (found by `peregrine sim`: two
    /// leaders of one term, replicas apart, an acknowledged order lost). raft-rs lets
    /// any node vote.
    pub fn step(&mut self, m: Message) {
        if m.msg_type == MessageType::MsgPropose {
            self.counters.step_errors += 1;
            return;
        }
        let vote = matches!(
            m.get_msg_type(),
            MessageType::MsgRequestVote | MessageType::MsgRequestPreVote
        );
        if vote && !self.raw.store().conf_state().voters.contains(&self.opts.id) {
            self.counters.step_errors += 1;
            return;
        }
        self.heard.insert(m.from, self.ticks);
        if self.raw.step(m).is_err() {
            self.counters.step_errors += 1;
        }
    }

    /// Proposes one entry of service data (one group-commit batch). Returns the index
    /// it will have if it commits; only the leader accepts proposals.
    pub fn propose(&mut self, data: &[u8]) -> Result<u64, ClusterError> {
        if self.raw.raft.state != StateRole::Leader {
            return Err(self.not_leader());
        }
        if data.len() > self.opts.max_entry_bytes {
            return Err(ClusterError::EntryTooLarge {
                len: data.len(),
                max: self.opts.max_entry_bytes,
            });
        }
        entry::encode_app(data, &mut self.scratch);
        let bytes = std::mem::take(&mut self.scratch);
        let r = self.raw.propose(Vec::new(), bytes);
        match r {
            Ok(()) => Ok(self.raw.raft.raft_log.last_index()),
            Err(raft::Error::ProposalDropped) => Err(self.not_leader()),
            Err(e) => Err(e.into()),
        }
    }

    /// Proposes a membership change (leader only; one at a time). Promoting a node
    /// (`AddVoter` of a learner or a new node) is refused until it holds the committed
    /// log ([`ClusterError::NotCaughtUp`]).
    pub fn propose_change(&mut self, change: &MembershipChange) -> Result<(), ClusterError> {
        if self.raw.raft.state != StateRole::Leader {
            return Err(self.not_leader());
        }
        if let MembershipChange::AddVoter { id, .. } = change {
            self.check_caught_up(*id)?;
        }
        // raft-rs would take the proposal and silently replace it with an empty entry
        // (one change at a time): say so instead of reporting a change that never
        // happens (found by peregrine sim, seed 3001227).
        if self.raw.raft.has_pending_conf() {
            return Err(ClusterError::ChangePending {
                index: self.raw.raft.pending_conf_index,
            });
        }
        let (cc, ctx) = change.to_raft();
        match self.raw.propose_conf_change(ctx, cc) {
            Ok(()) => Ok(()),
            Err(raft::Error::ProposalDropped) => Err(self.not_leader()),
            Err(e) => Err(e.into()),
        }
    }

    /// A node about to become a voter must hold (nearly all of) the committed log
    /// (leader only).
    fn check_caught_up(&self, id: u64) -> Result<(), ClusterError> {
        if self.raw.store().conf_state().voters.contains(&id) {
            return Ok(()); // already a voter: nothing changes
        }
        // etcd's rule for promoting a learner: it holds at least 90% of the leader's
        // committed log (and something: a node that never acknowledged anything may be
        // one that cannot run).
        let commit = self.raw.raft.raft_log.committed;
        let matched = self.raw.raft.prs().get(id).map_or(0, |p| p.matched);
        if matched == 0 || matched.saturating_mul(10) < commit.saturating_mul(9) {
            return Err(ClusterError::NotCaughtUp {
                id,
                matched,
                commit,
            });
        }
        Ok(())
    }

    /// Asks the leader to hand leadership to `to` (it catches `to` up, then tells it
    /// to campaign at once). Ignored by followers.
    pub fn transfer_leader(&mut self, to: u64) {
        self.raw.transfer_leader(to);
    }

    /// Starts an election now (tests, operator).
    pub fn campaign(&mut self) -> Result<(), ClusterError> {
        Ok(self.raw.campaign()?)
    }

    /// The transport could not reach `id`: raft-rs probes it instead of streaming.
    pub fn report_unreachable(&mut self, id: u64) {
        self.raw.report_unreachable(id);
    }

    /// Outcome of sending a snapshot to `id`.
    pub fn report_snapshot(&mut self, id: u64, delivered: bool) {
        let status = if delivered {
            raft::SnapshotStatus::Finish
        } else {
            raft::SnapshotStatus::Failure
        };
        self.raw.report_snapshot(id, status);
    }

    fn not_leader(&self) -> ClusterError {
        let leader = self.raw.raft.leader_id;
        ClusterError::NotLeader {
            leader: (leader != raft::INVALID_ID).then_some(leader),
        }
    }

    /// Handles everything raft-rs has ready: writes new entries and the hard state
    /// to the journal (synced here, or by the shell: `deferred_sync`), queues
    /// messages (a follower's acknowledgements only once its entries are durable),
    /// and applies committed entries, at most [`NodeOptions::apply_slice`] of them
    /// per call ([`Node::apply_backlog`] says how many wait), taking snapshots at
    /// their points. Call after every tick, step or proposal batch.
    pub fn advance(&mut self) -> Result<(), ClusterError> {
        self.poll_snapshot(false)?;
        let mut budget = self.opts.apply_slice;
        loop {
            while self.raw.has_ready() {
                self.advance_once()?;
            }
            self.apply_queued(&mut budget)?;
            // Applied entries, or an installed snapshot (applied when installed).
            if self.applied > self.raw.raft.raft_log.applied {
                self.raw.advance_apply_to(self.applied);
            }
            for data in std::mem::take(&mut self.to_propose) {
                if self.raw.raft.state == StateRole::Leader {
                    let _ = self.raw.propose(Vec::new(), data.to_vec());
                }
            }
            if !self.raw.has_ready() {
                return Ok(());
            }
        }
    }

    /// Committed entries waiting to be applied.
    pub fn apply_backlog(&self) -> usize {
        self.to_apply.len()
    }

    fn advance_once(&mut self) -> Result<(), ClusterError> {
        let mut rd = self.raw.ready();
        if let Some(ss) = rd.ss() {
            self.note_role(ss.raft_state, ss.leader_id);
        }
        // A leader's appends leave before its own write (Raft thesis 10.2.1): the
        // followers sync in parallel with it; its own durability counts only once
        // its sync is done (`synced`).
        self.outbox.extend(rd.take_messages());
        let installed = !rd.snapshot().is_empty();
        if installed {
            let snap = rd.snapshot().clone();
            self.install(snap)?;
        }
        let committed = rd.take_committed_entries();
        self.queue_committed(committed);
        let entries = rd.take_entries();
        let mut seqs = Vec::with_capacity(entries.len());
        for e in &entries {
            seqs.push(self.log.append_entry(e)?);
        }
        let hs = rd.hs().cloned();
        if let Some(hs) = &hs {
            self.log.append_hard_state(hs)?;
        }
        let must_sync = !entries.is_empty() || rd.must_sync();
        let mut seq = 0;
        if must_sync || hs.is_some() {
            let written = self.log.write()?;
            if must_sync {
                seq = written;
            }
        }
        // raft-rs reads the new entries from its storage before they are durable
        // (it counts them as persisted only at `on_persist_ready`).
        let store = self.raw.mut_store();
        store.append(&entries, &seqs).map_err(LogError::Invalid)?;
        if let Some(hs) = hs {
            store.set_hard_state(hs);
        }
        let mut msgs = rd.take_persisted_messages();
        // A heartbeat response acknowledges nothing durable: it leaves at once, so a
        // slow disk never makes a leader believe it lost its followers.
        msgs.retain(|m| {
            let alive = m.msg_type == MessageType::MsgHeartbeatResponse;
            if alive {
                self.outbox.push(m.clone());
            }
            !alive
        });
        self.persisting.push_back(Persisting {
            number: rd.number(),
            seq,
            msgs,
        });
        self.raw.advance_append_async(rd);
        // An installed snapshot is applied at once, and raft-rs accepts an applied
        // index only once persisted: that Ready syncs here.
        if must_sync && (installed || !self.opts.deferred_sync) {
            self.log.commit()?;
        }
        self.complete_persisted();
        Ok(())
    }

    /// Completes every Ready the journal is now durable for, in order: raft-rs
    /// counts its entries as persisted (a leader's own vote towards the commit) and
    /// its acknowledgements leave.
    fn complete_persisted(&mut self) {
        let durable = self.log.durable_seq();
        let mut last = None;
        while self.persisting.front().is_some_and(|p| p.seq <= durable) {
            if let Some(p) = self.persisting.pop_front() {
                self.outbox.extend(p.msgs);
                last = Some(p.number);
            }
        }
        if let Some(number) = last {
            self.raw.on_persist_ready(number);
        }
    }

    /// The journal seq the shell's sync thread should make durable next, when
    /// anything written waits for a sync (`deferred_sync`).
    pub fn sync_target(&self) -> Option<u64> {
        let want = self.persisting.iter().map(|p| p.seq).max()?;
        (want > self.log.durable_seq()).then_some(want)
    }

    /// The shell's sync thread made the journal durable through `seq`: what waited
    /// for it completes (call [`Node::advance`] after, then send the messages).
    pub fn synced(&mut self, seq: u64) -> Result<(), ClusterError> {
        if seq > self.log.durable_seq() {
            self.log.mark_durable(seq)?;
            self.complete_persisted();
        }
        Ok(())
    }

    fn note_role(&mut self, state: StateRole, leader: u64) {
        let term = self.raw.raft.term;
        if (state, leader, term) != self.role {
            if state == StateRole::Leader && self.role.0 != StateRole::Leader {
                // A new leadership: every voter starts with a full lease window.
                for v in &self.raw.store().conf_state().voters {
                    self.heard.insert(*v, self.ticks);
                }
            }
            self.role = (state, leader, term);
            self.events.push(Event::RoleChanged {
                role: state.into(),
                leader: (leader != raft::INVALID_ID).then_some(leader),
                term,
            });
        }
    }

    /// Takes newly committed entries: tells the state machine at once
    /// ([`StateMachine::committed`]) and queues them for [`Node::advance`] to apply.
    fn queue_committed(&mut self, entries: Vec<Entry>) {
        for e in entries {
            if e.index <= self.applied
                || self
                    .to_apply
                    .back()
                    .is_some_and(|last| e.index <= last.index)
            {
                continue;
            }
            if e.entry_type == EntryType::EntryNormal {
                if let Ok(Envelope::App(data)) = entry::decode(&e.data) {
                    self.sm.committed(e.index, data);
                }
            }
            self.to_apply.push_back(e);
        }
    }

    /// Applies queued committed entries while `budget` lasts.
    fn apply_queued(&mut self, budget: &mut usize) -> Result<(), ClusterError> {
        while *budget > 0 {
            let Some(e) = self.to_apply.pop_front() else {
                return Ok(());
            };
            *budget -= 1;
            let added = match e.entry_type {
                EntryType::EntryNormal => {
                    self.apply_normal(&e);
                    false
                }
                EntryType::EntryConfChange | EntryType::EntryConfChangeV2 => {
                    self.apply_change(&e)?
                }
            };
            self.applied = e.index;
            self.counters.entries_applied += 1;
            let every = self.opts.snapshot_every;
            // Every node hashes its state at the same indices (every `snapshot_every`
            // entries) and checks the leader's hash there.
            if added || (every > 0 && e.index.is_multiple_of(every)) {
                let hash = self.sm.state_hash();
                self.remember_hash(e.index, hash);
                if self.raw.raft.state == StateRole::Leader {
                    self.to_propose
                        .push(entry::encode_state_hash(e.index, &hash));
                }
            }
            // A member was added: snapshot here, so what a new node is sent first is a
            // snapshot whose configuration includes it (the log it would otherwise get
            // from index 1 lacks the bootstrap configuration, and an older snapshot
            // lacks the node: raft-rs refuses it). Otherwise each node snapshots at
            // its own offset into the interval (`snapshot_stagger`), so the nodes of a
            // cluster never all encode and write a snapshot at once.
            if added || (every > 0 && e.index % every == self.snapshot_stagger()) {
                self.take_snapshot(e.index, e.term)?;
            }
        }
        Ok(())
    }

    fn apply_normal(&mut self, e: &Entry) {
        match entry::decode(&e.data) {
            Ok(Envelope::Empty) => {}
            Ok(Envelope::App(data)) => self.sm.apply(e.index, data),
            Ok(Envelope::StateHash { index, hash }) => self.check_hash(index, &hash),
            Ok(Envelope::HashPoint) => {
                let hash = self.sm.state_hash();
                self.remember_hash(e.index, hash);
                if self.raw.raft.state == StateRole::Leader {
                    self.to_propose
                        .push(entry::encode_state_hash(e.index, &hash));
                }
            }
            Err(_) => self.counters.bad_entries += 1,
        }
    }

    fn check_hash(&mut self, index: u64, hash: &[u8; 32]) {
        let Some((_, mine)) = self.hashes.iter().find(|(i, _)| *i == index) else {
            return; // not a snapshot point here (installed past it): nothing to compare
        };
        if mine == hash {
            self.counters.hash_checks_ok += 1;
        } else {
            self.counters.hash_mismatches += 1;
            self.events.push(Event::HashMismatch { index });
        }
    }

    /// Applies a conf-change entry; returns whether it added a member (a voter or a
    /// learner).
    fn apply_change(&mut self, e: &Entry) -> Result<bool, ClusterError> {
        let change = match membership::decode(e) {
            Ok(c) => c,
            Err(_) => {
                self.counters.bad_entries += 1;
                return Ok(false);
            }
        };
        let added = change.cc.changes.iter().any(|c| {
            matches!(
                c.change_type,
                raft::eraftpb::ConfChangeType::AddNode
                    | raft::eraftpb::ConfChangeType::AddLearnerNode
            )
        });
        let cs = self.raw.apply_conf_change(&change.cc)?;
        self.raw.mut_store().set_conf_state(cs);
        for single in change.cc.changes.iter() {
            let id = single.node_id;
            match single.change_type {
                raft::eraftpb::ConfChangeType::RemoveNode => {
                    self.peers.remove(&id);
                    if id == self.opts.id {
                        self.removed = true;
                        self.events.push(Event::Removed);
                    } else {
                        self.events.push(Event::PeerRemoved { id });
                    }
                }
                _ => {
                    let addr = self
                        .opts
                        .known_peers
                        .get(&id)
                        .cloned()
                        .or_else(|| change.addr.clone());
                    if let Some(addr) = addr {
                        if self.peers.insert(id, addr.clone()).as_ref() != Some(&addr)
                            && id != self.opts.id
                        {
                            self.events.push(Event::PeerAdded { id, addr });
                        }
                    }
                }
            }
        }
        Ok(added)
    }

    /// Where in each `snapshot_every` interval this node takes its snapshot: node
    /// ids 1, 2, 3, 4 at 0, 1/4, 1/2, 3/4 of it (then again from 0).
    fn snapshot_stagger(&self) -> u64 {
        let every = self.opts.snapshot_every;
        (self.opts.id.saturating_sub(1) % 4) * (every / 4)
    }

    /// Takes a snapshot: hashes the state and copies it here
    /// ([`StateMachine::snapshot_copy`]); the copy is encoded and the file written by
    /// the snapshot runner (another thread in the runner). Only once the file is
    /// durable ([`Node::poll_snapshot`]) does raft-rs see the snapshot and the log
    /// behind it get dropped. One write at a time: a snapshot due while the previous
    /// one is still being written is skipped (the next interval takes it).
    fn take_snapshot(&mut self, index: u64, term: u64) -> Result<(), ClusterError> {
        if self.writing.is_some() {
            self.counters.snapshots_skipped += 1;
            return Ok(());
        }
        let Some(seq) = self.raw.store().seq_of(index) else {
            return Ok(()); // applied straight from a snapshot: nothing to name it by
        };
        let hash = match self.hashes.back() {
            Some((i, h)) if *i == index => *h, // hashed at this index just now
            _ => self.sm.state_hash(),
        };
        let mut meta = SnapshotMetadata {
            index,
            term,
            ..Default::default()
        };
        meta.set_conf_state(self.raw.store().conf_state().clone());
        // The data is made on the runner's thread and set there (and here once done).
        let mut snap = Snapshot::default();
        snap.set_metadata(meta);
        let hs = self.raw.store().hard_state().clone();
        let Some(mut write) = self.log.begin_snapshot(seq, &snap, &hs)? else {
            return Ok(());
        };
        let encode = self.sm.snapshot_copy();
        let peers = self.peers.clone();
        let (tx, done) = std::sync::mpsc::channel();
        let job: Box<dyn FnOnce() + Send> = Box::new(move || {
            let data: Bytes = SnapshotData {
                peers,
                state_hash: hash,
                state: encode().into(),
            }
            .encode()
            .into();
            write.set_data(data.clone());
            let _ = tx.send((data, write.run()));
        });
        match &self.snapshot_runner {
            Some(run) => run(job),
            None => job(),
        }
        self.writing = Some(Writing {
            index,
            hash,
            snap,
            done,
        });
        self.poll_snapshot(false)
    }

    /// Finishes the snapshot write under way if it is done (`wait`: waits for it).
    /// A durable file becomes raft-rs's snapshot, and the log behind it is dropped.
    pub fn poll_snapshot(&mut self, wait: bool) -> Result<(), ClusterError> {
        let Some(w) = &self.writing else {
            return Ok(());
        };
        let done = if wait {
            w.done.recv().ok()
        } else {
            match w.done.try_recv() {
                Ok(d) => Some(d),
                Err(std::sync::mpsc::TryRecvError::Empty) => return Ok(()),
                Err(std::sync::mpsc::TryRecvError::Disconnected) => None,
            }
        };
        let mut w = self.writing.take().expect("checked above");
        let Some((data, done)) = done else {
            return Err(ClusterError::StateMachine(
                "the snapshot writer stopped mid-write".into(),
            ));
        };
        self.log.finish_snapshot(done)?;
        w.snap.data = data;
        let index = w.index;
        let store = self.raw.mut_store();
        if index > store.snapshot_ref().get_metadata().index {
            store.set_snapshot(w.snap);
            // Never keep the log from index 1 once a snapshot exists: a node joining
            // with an empty log would be sent entries from 1 without the bootstrap
            // configuration (snapshot 0, which raft-rs never sends) and fail applying
            // the first membership change ("removed all voters").
            store.compact((index + 1).saturating_sub(self.opts.log_retain).max(2));
        }
        self.counters.snapshots_taken += 1;
        self.events.push(Event::SnapshotTaken {
            index,
            hash: w.hash,
        });
        Ok(())
    }

    /// Encodes snapshots and writes their files through `runner` (another thread)
    /// instead of on the node's thread.
    pub fn set_snapshot_runner(&mut self, runner: SnapshotRunner) {
        self.snapshot_runner = Some(runner);
    }

    fn remember_hash(&mut self, index: u64, hash: [u8; 32]) {
        if self.hashes.len() == HASH_MEMORY {
            self.hashes.pop_front();
        }
        self.hashes.push_back((index, hash));
    }

    /// Replaces the local state by the leader's snapshot.
    fn install(&mut self, snap: Snapshot) -> Result<(), ClusterError> {
        // A local snapshot file being written finishes first (it holds the snapshot
        // store; the leader's, at a later index, then supersedes it).
        self.poll_snapshot(true)?;
        let index = snap.get_metadata().index;
        let data = SnapshotData::decode(&snap.data).map_err(LogError::Invalid)?;
        self.sm
            .restore(&data.state)
            .map_err(ClusterError::StateMachine)?;
        if self.sm.state_hash() != data.state_hash {
            return Err(ClusterError::StateMachine(format!(
                "snapshot {index} restored to a different state hash"
            )));
        }
        let mut hs = self.raw.store().hard_state().clone();
        hs.term = hs.term.max(snap.get_metadata().term);
        hs.commit = hs.commit.max(index);
        self.log.install_snapshot(&snap, &hs)?;
        self.raw.mut_store().install(snap);
        // Committed entries still queued are inside the snapshot.
        self.to_apply.retain(|e| e.index > index);
        for (id, addr) in data.peers {
            let addr = self.opts.known_peers.get(&id).cloned().unwrap_or(addr);
            if self.peers.insert(id, addr.clone()).as_ref() != Some(&addr) && id != self.opts.id {
                self.events.push(Event::PeerAdded { id, addr });
            }
        }
        self.applied = index;
        self.remember_hash(index, data.state_hash);
        self.counters.snapshots_installed += 1;
        self.events.push(Event::SnapshotInstalled { index });
        Ok(())
    }

    /// Moves out the messages to send (append them to `out`).
    pub fn drain_messages(&mut self, out: &mut Vec<Message>) {
        out.append(&mut self.outbox);
    }

    /// The messages to send.
    pub fn take_messages(&mut self) -> Vec<Message> {
        std::mem::take(&mut self.outbox)
    }

    /// Events since the last call.
    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    /// This node's id.
    pub fn id(&self) -> u64 {
        self.opts.id
    }

    /// Whether this node is the leader.
    pub fn is_leader(&self) -> bool {
        self.raw.raft.state == StateRole::Leader
    }

    /// The leader this node knows of.
    pub fn leader(&self) -> Option<u64> {
        let l = self.raw.raft.leader_id;
        (l != raft::INVALID_ID).then_some(l)
    }

    /// Address of a member, if known.
    pub fn peer_addr(&self, id: u64) -> Option<&str> {
        self.peers.get(&id).map(String::as_str)
    }

    /// Term of the entry at `index` in this node's durable log (`None` if not held).
    /// What a majority must hold before the entry is committed.
    pub fn log_term(&self, index: u64) -> Option<u64> {
        self.raw.store().term_of(index).filter(|_| index > 0)
    }

    /// The service data of the entry at `index` in this node's log (`None` if not
    /// held, or not service data).
    pub fn log_data(&self, index: u64) -> Option<&[u8]> {
        match entry::decode(&self.raw.store().entry(index)?.data) {
            Ok(Envelope::App(d)) => Some(d),
            _ => None,
        }
    }

    /// Index of the newest snapshot (what the log starts after).
    pub fn snapshot_index(&self) -> u64 {
        self.raw.store().snapshot_ref().get_metadata().index
    }

    /// Current voters.
    pub fn voters(&self) -> Vec<u64> {
        let mut v = self.raw.store().conf_state().voters.clone();
        v.sort_unstable();
        v
    }

    /// Highest applied index.
    pub fn applied(&self) -> u64 {
        self.applied
    }

    /// Current term.
    pub fn term(&self) -> u64 {
        self.raw.raft.term
    }

    /// Highest committed index.
    pub fn commit(&self) -> u64 {
        self.raw.raft.raft_log.committed
    }

    /// The state machine.
    pub fn sm(&self) -> &M {
        &self.sm
    }

    /// The state machine, mutably (the service's own reads and session bookkeeping).
    pub fn sm_mut(&mut self) -> &mut M {
        &mut self.sm
    }

    /// Consumes the node, returning the state machine (the journal is committed and
    /// closed on drop).
    pub fn into_sm(self) -> M {
        self.sm
    }

    /// The durable log (journal counters).
    pub fn durable(&self) -> &DurableLog {
        &self.log
    }

    /// Whether this node was removed.
    pub fn removed(&self) -> bool {
        self.removed
    }

    /// Entries raft-rs refused to step, and entries that did not decode.
    pub fn error_counts(&self) -> (u64, u64) {
        (self.counters.step_errors, self.counters.bad_entries)
    }

    /// Everything `peregrine admin cluster status` shows.
    pub fn status(&self) -> Status {
        let raft = &self.raw.raft;
        let store = self.raw.store();
        let cs = store.conf_state();
        let mut progress = Vec::new();
        if raft.state == StateRole::Leader {
            for (id, pr) in raft.prs().iter() {
                progress.push(PeerProgress {
                    id: *id,
                    matched: pr.matched,
                    next: pr.next_idx,
                    state: format!("{:?}", pr.state).to_lowercase(),
                    voter: cs.voters.contains(id),
                });
            }
            progress.sort_by_key(|p| p.id);
        }
        Status {
            id: self.opts.id,
            role: raft.state.into(),
            term: raft.term,
            leader: self.leader(),
            commit: raft.raft_log.committed,
            applied: self.applied,
            first_index: store.first(),
            last_index: raft.raft_log.last_index(),
            snapshot_index: store.snapshot_ref().get_metadata().index,
            voters: sorted(&cs.voters),
            learners: sorted(&cs.learners),
            peers: self.peers.iter().map(|(i, a)| (*i, a.clone())).collect(),
            progress,
            state_hash: self.hashes.back().map(|(i, h)| (*i, hex(h))),
            hash_checks_ok: self.counters.hash_checks_ok,
            hash_mismatches: self.counters.hash_mismatches,
            snapshots_taken: self.counters.snapshots_taken,
            snapshots_installed: self.counters.snapshots_installed,
            snapshots_skipped: self.counters.snapshots_skipped,
            entries_applied: self.counters.entries_applied,
            removed: self.removed,
        }
    }
}

fn sorted(ids: &[u64]) -> Vec<u64> {
    let mut v = ids.to_vec();
    v.sort_unstable();
    v
}
