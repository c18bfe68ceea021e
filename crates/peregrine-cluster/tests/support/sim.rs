//! A deterministic simulator: 3–5 [`Node`]s on real journals (temp dirs), an
//! in-memory network with seeded delay, loss, reordering and partitions, and crashes
//! that lose everything not yet written (the node is leaked, like `kill -9`, never
//! dropped). One thread, one seeded generator: a seed replays exactly.
//!
//! After every `advance` it checks the safety properties the exchange relies on:
//! * every node applies the same data at the same index (state-machine safety);
//! * an entry is applied (acknowledged) only once a majority of voters hold it
//!   durably (committed = majority durable);
//! * at most one leader per term (election safety).
//!
//! and at the end, after healing, that every node holds every entry any node ever
//! applied (committed entries are never lost) with equal state hashes.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use peregrine_cluster::{Message, Node, NodeOptions, StateMachine};
use peregrine_journal::FsyncPolicy;

/// A state machine that records every entry it applies.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Recorder {
    /// (index, data) in apply order.
    pub applied: Vec<(u64, Vec<u8>)>,
}

impl Recorder {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, d) in &self.applied {
            out.extend_from_slice(&i.to_le_bytes());
            out.extend_from_slice(&(d.len() as u32).to_le_bytes());
            out.extend_from_slice(d);
        }
        out
    }
}

impl StateMachine for Recorder {
    fn apply(&mut self, index: u64, data: &[u8]) {
        self.applied.push((index, data.to_vec()));
    }

    fn snapshot(&mut self) -> Vec<u8> {
        self.encode()
    }

    fn restore(&mut self, state: &[u8]) -> Result<(), String> {
        let mut applied = Vec::new();
        let mut at = 0;
        while at < state.len() {
            if state.len() - at < 12 {
                return Err("truncated".into());
            }
            let i = u64::from_le_bytes(state[at..at + 8].try_into().unwrap());
            let n = u32::from_le_bytes(state[at + 8..at + 12].try_into().unwrap()) as usize;
            at += 12;
            if state.len() - at < n {
                return Err("truncated".into());
            }
            applied.push((i, state[at..at + n].to_vec()));
            at += n;
        }
        self.applied = applied;
        Ok(())
    }

    fn state_hash(&mut self) -> [u8; 32] {
        *blake3::hash(&self.encode()).as_bytes()
    }
}

/// splitmix64: small, seedable, good enough to schedule faults.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub(crate) fn chance(&mut self, per_thousand: u64) -> bool {
        self.below(1000) < per_thousand
    }
}

/// Fault rates, per thousand, per step.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Faults {
    pub loss: u64,
    pub max_delay: u64,
    pub crash: u64,
    pub restart: u64,
    pub partition: u64,
    pub heal: u64,
    pub propose: u64,
}

impl Faults {
    pub(crate) fn none() -> Self {
        Self {
            loss: 0,
            max_delay: 1,
            crash: 0,
            restart: 0,
            partition: 0,
            heal: 0,
            propose: 300,
        }
    }
    pub(crate) fn harsh() -> Self {
        Self {
            loss: 80,
            max_delay: 4,
            crash: 4,
            restart: 30,
            partition: 6,
            heal: 20,
            propose: 300,
        }
    }
}

/// What a crashed node had durably: its snapshot index and entry data by index.
#[derive(Debug, Clone, Default)]
struct Frozen {
    snapshot_index: u64,
    data: BTreeMap<u64, Vec<u8>>,
}

pub(crate) struct SimNode {
    pub node: Option<Node<Recorder>>,
    dir: tempfile::TempDir,
    opts: NodeOptions,
    frozen: Frozen,
}

struct InFlight {
    at: u64,
    msg: Message,
}

pub(crate) struct Sim {
    pub rng: Rng,
    pub nodes: BTreeMap<u64, SimNode>,
    net: Vec<InFlight>,
    cut: BTreeSet<(u64, u64)>,
    pub now: u64,
    pub faults: Faults,
    proposals: u64,
    seed: u64,
    /// index → data of every entry any node applied.
    pub committed: BTreeMap<u64, Vec<u8>>,
    leaders: BTreeMap<u64, u64>,
    pub trace: Vec<String>,
    /// Check the majority-durable rule at every apply.
    pub check_durable: bool,
    /// Snapshot interval of every node, new ones included.
    snapshot_every: u64,
}

pub(crate) fn options(id: u64, n: u64, seed: u64) -> NodeOptions {
    let peers: BTreeMap<u64, String> = (1..=n).map(|i| (i, format!("sim:{i}"))).collect();
    NodeOptions {
        id,
        bootstrap: peers.clone(),
        known_peers: BTreeMap::new(),
        election_tick: 10 + ((seed + id * 7) % 11) as usize,
        heartbeat_tick: 2,
        randomize_election: false,
        max_entry_bytes: 1 << 16,
        max_append_bytes: 4096,
        max_inflight: 8,
        snapshot_every: 7,
        log_retain: 3,
        fsync: FsyncPolicy::None,
        segment_bytes: 64 * 1024,
        snapshot_retain: 2,
        prune: true,
        deferred_sync: false,
        apply_slice: usize::MAX,
        hash_check_ticks: 0,
    }
}

impl Sim {
    pub(crate) fn new(n: u64, seed: u64, faults: Faults) -> Self {
        Self::with_snapshots(n, seed, faults, options(1, n, seed).snapshot_every)
    }

    /// [`Sim::new`] whose nodes snapshot every `snapshot_every` entries (0: never).
    pub(crate) fn with_snapshots(n: u64, seed: u64, faults: Faults, snapshot_every: u64) -> Self {
        let mut nodes = BTreeMap::new();
        for id in 1..=n {
            let dir = tempfile::tempdir().unwrap();
            let mut opts = options(id, n, seed);
            opts.snapshot_every = snapshot_every;
            let node = Node::open(dir.path(), opts.clone(), Recorder::default()).unwrap();
            nodes.insert(
                id,
                SimNode {
                    node: Some(node),
                    dir,
                    opts,
                    frozen: Frozen::default(),
                },
            );
        }
        Self {
            rng: Rng::new(seed),
            nodes,
            net: Vec::new(),
            cut: BTreeSet::new(),
            now: 0,
            faults,
            proposals: 0,
            seed,
            committed: BTreeMap::new(),
            leaders: BTreeMap::new(),
            trace: Vec::new(),
            check_durable: true,
            snapshot_every,
        }
    }

    /// Starts a new, empty node that waits to be added (`join`).
    pub(crate) fn add_node(&mut self, id: u64) {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = options(id, 0, self.seed);
        opts.bootstrap.clear();
        opts.snapshot_every = self.snapshot_every;
        let node = Node::open(dir.path(), opts.clone(), Recorder::default()).unwrap();
        self.nodes.insert(
            id,
            SimNode {
                node: Some(node),
                dir,
                opts,
                frozen: Frozen::default(),
            },
        );
    }

    /// Wipes a crashed node's disk and starts it empty, waiting to be re-added.
    pub(crate) fn wipe_and_join(&mut self, id: u64) {
        self.crash(id);
        self.nodes.remove(&id);
        // Messages on their way to the old process died with its connections: the new,
        // empty process never sees them (raft-rs would panic on a commit index past
        // its empty log).
        self.net.retain(|m| m.msg.to != id);
        self.add_node(id);
    }

    fn members(&self) -> Vec<u64> {
        self.nodes
            .iter()
            .filter(|(_, s)| {
                s.node
                    .as_ref()
                    .is_none_or(|n| !n.removed() && !n.voters().is_empty())
            })
            .map(|(id, _)| *id)
            .collect()
    }

    pub(crate) fn dir(&self, id: u64) -> PathBuf {
        self.nodes[&id].dir.path().to_path_buf()
    }

    pub(crate) fn leader(&self) -> Option<u64> {
        // The leader with the highest term (an old one may not know it was deposed).
        self.nodes
            .iter()
            .filter_map(|(id, s)| {
                s.node
                    .as_ref()
                    .filter(|n| n.is_leader())
                    .map(|n| (n.term(), *id))
            })
            .max()
            .map(|(_, id)| id)
    }

    pub(crate) fn node(&self, id: u64) -> &Node<Recorder> {
        self.nodes[&id].node.as_ref().expect("node is up")
    }

    pub(crate) fn node_mut(&mut self, id: u64) -> &mut Node<Recorder> {
        self.nodes
            .get_mut(&id)
            .unwrap()
            .node
            .as_mut()
            .expect("node is up")
    }

    /// Proposes fresh data on `id` if it is the leader; returns the data.
    pub(crate) fn propose_on(&mut self, id: u64) -> Option<Vec<u8>> {
        let data = format!("s{}-p{}", self.seed, self.proposals).into_bytes();
        let node = self.nodes.get_mut(&id)?.node.as_mut()?;
        if node.propose(&data).is_ok() {
            self.proposals += 1;
            self.trace
                .push(format!("{} propose {} on {id}", self.now, self.proposals));
            Some(data)
        } else {
            None
        }
    }

    pub(crate) fn crash(&mut self, id: u64) {
        let s = self.nodes.get_mut(&id).unwrap();
        if let Some(node) = s.node.take() {
            let st = node.status();
            let mut data = BTreeMap::new();
            for i in st.first_index..=st.last_index {
                if let Some(d) = node.log_data(i) {
                    data.insert(i, d.to_vec());
                }
            }
            s.frozen = Frozen {
                snapshot_index: node.snapshot_index(),
                data,
            };
            // kill -9: whatever the journal buffered is lost, nothing is flushed.
            std::mem::forget(node);
            // Its connections break: what was on the way to it never arrives (a
            // restarted process, or a wiped one, never sees the old incarnation's
            // traffic, as over TCP).
            self.net.retain(|f| f.msg.to != id);
            self.trace.push(format!("{} crash {id}", self.now));
        }
    }

    pub(crate) fn restart(&mut self, id: u64) {
        let s = self.nodes.get_mut(&id).unwrap();
        if s.node.is_none() {
            let node = Node::open(s.dir.path(), s.opts.clone(), Recorder::default())
                .unwrap_or_else(|e| panic!("node {id} failed to recover: {e}"));
            s.node = Some(node);
            self.trace.push(format!("{} restart {id}", self.now));
        }
    }

    pub(crate) fn isolate(&mut self, group: &[u64]) {
        let ids: Vec<u64> = self.nodes.keys().copied().collect();
        for a in group {
            for b in &ids {
                if !group.contains(b) {
                    self.cut.insert((*a, *b));
                    self.cut.insert((*b, *a));
                }
            }
        }
        self.trace.push(format!("{} isolate {group:?}", self.now));
    }

    pub(crate) fn heal(&mut self) {
        self.cut.clear();
    }

    fn random_faults(&mut self) {
        let f = self.faults;
        let ids: Vec<u64> = self.nodes.keys().copied().collect();
        let n = ids.len() as u64;
        if self.rng.chance(f.crash) {
            let id = ids[self.rng.below(n) as usize];
            // Keep a majority up so the run makes progress.
            let down = self.nodes.values().filter(|s| s.node.is_none()).count() as u64;
            if down < (n - 1) / 2 {
                self.crash(id);
            }
        }
        if self.rng.chance(f.restart) {
            let down: Vec<u64> = self
                .nodes
                .iter()
                .filter(|(_, s)| s.node.is_none())
                .map(|(i, _)| *i)
                .collect();
            if !down.is_empty() {
                let id = down[self.rng.below(down.len() as u64) as usize];
                self.restart(id);
            }
        }
        if self.cut.is_empty() && self.rng.chance(f.partition) {
            let k = 1 + self.rng.below(n / 2);
            let mut group = Vec::new();
            while (group.len() as u64) < k {
                let id = ids[self.rng.below(n) as usize];
                if !group.contains(&id) {
                    group.push(id);
                }
            }
            self.isolate(&group);
        } else if !self.cut.is_empty() && self.rng.chance(f.heal) {
            self.heal();
            self.trace.push(format!("{} heal", self.now));
        }
    }

    /// One step: faults, deliveries, ticks, proposals, readies, checks.
    pub(crate) fn step(&mut self) {
        self.now += 1;
        self.random_faults();
        // Deliver what is due, in random order (reordering).
        let now = self.now;
        let mut due = Vec::new();
        let mut later = Vec::new();
        for m in self.net.drain(..) {
            if m.at <= now {
                due.push(m.msg);
            } else {
                later.push(m);
            }
        }
        self.net = later;
        for i in (1..due.len()).rev() {
            let j = self.rng.below(i as u64 + 1) as usize;
            due.swap(i, j);
        }
        for m in due {
            let (from, to) = (m.from, m.to);
            let snap = m.msg_type == raft::eraftpb::MessageType::MsgSnapshot;
            let delivered = match self.nodes.get_mut(&to).and_then(|s| s.node.as_mut()) {
                Some(node) => {
                    node.step(m);
                    true
                }
                None => false,
            };
            // What the TCP transport does: a snapshot written out is reported sent, one
            // that could not be is reported failed (raft-rs waits for either).
            if snap {
                self.report_snapshot(from, to, delivered);
            }
        }
        let ids: Vec<u64> = self.nodes.keys().copied().collect();
        for id in &ids {
            if self.rng.chance(500) {
                if let Some(node) = self.nodes.get_mut(id).and_then(|s| s.node.as_mut()) {
                    node.tick();
                }
            }
        }
        if self.rng.chance(self.faults.propose) {
            if let Some(l) = self.leader() {
                self.propose_on(l);
            }
        }
        for id in ids {
            self.advance(id);
        }
    }

    pub(crate) fn advance(&mut self, id: u64) {
        let Some(node) = self.nodes.get_mut(&id).and_then(|s| s.node.as_mut()) else {
            return;
        };
        let before = node.sm().applied.len();
        let was_snapshot = node.status().snapshots_installed;
        node.advance().unwrap_or_else(|e| panic!("node {id}: {e}"));
        let term = node.term();
        let is_leader = node.is_leader();
        let installed = node.status().snapshots_installed != was_snapshot;
        let voters = node.voters();
        let new: Vec<(u64, Vec<u8>)> = if installed {
            node.sm().applied.clone()
        } else {
            node.sm().applied[before..].to_vec()
        };
        let msgs = node.take_messages();
        let _ = node.take_events();
        if is_leader {
            if let Some(prev) = self.leaders.insert(term, id) {
                assert_eq!(prev, id, "two leaders in term {term} (seed {})", self.seed);
            }
        }
        for (index, data) in new {
            match self.committed.get(&index) {
                Some(d) => assert_eq!(
                    d, &data,
                    "node {id} applied different data at {index} (seed {})",
                    self.seed
                ),
                None => {
                    self.committed.insert(index, data.clone());
                }
            }
            if self.check_durable && !installed {
                let holders = self.durable_holders(index, &data);
                let majority = voters.len() / 2 + 1;
                assert!(
                    holders >= majority,
                    "node {id} applied {index} held durably by {holders} of {} (seed {}, step {})",
                    voters.len(),
                    self.seed,
                    self.now
                );
            }
        }
        for msg in msgs {
            let (a, b) = (msg.from, msg.to);
            if self.cut.contains(&(a, b)) || self.rng.chance(self.faults.loss) {
                if msg.msg_type == raft::eraftpb::MessageType::MsgSnapshot {
                    self.report_snapshot(a, b, false);
                }
                continue;
            }
            let at = self.now + self.rng.below(self.faults.max_delay + 1);
            self.net.push(InFlight { at, msg });
        }
    }

    fn report_snapshot(&mut self, from: u64, to: u64, delivered: bool) {
        if let Some(node) = self.nodes.get_mut(&from).and_then(|s| s.node.as_mut()) {
            node.report_snapshot(to, delivered);
        }
    }

    fn durable_holders(&self, index: u64, data: &[u8]) -> usize {
        self.nodes
            .values()
            .filter(|s| match &s.node {
                Some(n) => n.snapshot_index() >= index || n.log_data(index) == Some(data),
                None => {
                    s.frozen.snapshot_index >= index
                        || s.frozen.data.get(&index).map(Vec::as_slice) == Some(data)
                }
            })
            .count()
    }

    pub(crate) fn run(&mut self, steps: u64) {
        for _ in 0..steps {
            self.step();
        }
    }

    /// Heals everything, restarts every node, and runs without faults until every
    /// node applied everything the leader committed (bounded).
    pub(crate) fn settle(&mut self, max_steps: u64) {
        self.heal();
        let ids: Vec<u64> = self.nodes.keys().copied().collect();
        for id in &ids {
            self.restart(*id);
        }
        self.faults = Faults {
            propose: 0,
            ..Faults::none()
        };
        let ids = self.members();
        let mut probe_done = false;
        for _ in 0..max_steps {
            self.step();
            let Some(l) = self.leader() else { continue };
            if !probe_done {
                // A fresh proposal commits only once the new leader's term is established
                // everywhere, which also commits everything before it.
                if self.propose_on(l).is_some() {
                    probe_done = true;
                }
                continue;
            }
            let target = self.node(l).commit();
            let all = ids.iter().all(|id| {
                let n = self.node(*id);
                n.applied() >= target && n.commit() >= target
            });
            if all {
                return;
            }
        }
        let st: Vec<String> = ids
            .iter()
            .map(|id| {
                format!(
                    "{:?} errors {:?}",
                    self.node(*id).status(),
                    self.node(*id).error_counts()
                )
            })
            .collect();
        panic!(
            "did not settle within {max_steps} steps (seed {}):\n{}",
            self.seed,
            st.join("\n")
        );
    }

    /// Every node holds exactly every entry ever applied anywhere, with equal hashes.
    pub(crate) fn check_converged(&mut self) {
        let want: Vec<(u64, Vec<u8>)> = self
            .committed
            .iter()
            .map(|(i, d)| (*i, d.clone()))
            .collect();
        let ids = self.members();
        let mut hashes = BTreeSet::new();
        for id in ids {
            let node = self.node_mut(id);
            assert_eq!(
                node.sm().applied,
                want,
                "node {id} lost or reordered committed entries"
            );
            hashes.insert(node.sm_mut().state_hash());
            assert_eq!(
                node.status().hash_mismatches,
                0,
                "node {id} saw a hash mismatch"
            );
        }
        assert_eq!(hashes.len(), 1);
    }
}
