//! A three-node run: the Raft nodes' ticks and messages over the simulated network
//! (delay, loss, duplication, reordering, partitions), leader transfers, and the
//! documented disk-loss procedure (remove the node, wipe its disk, start it with
//! `join = true`, add it as a learner, promote it). Every replica that applied an
//! index must have the same state hash there.

use std::collections::{BTreeMap, BTreeSet};

use peregrine_cluster::{Event, MembershipChange, Message};

use crate::disk::Crash;
use crate::run::Sim;
use crate::venue;
use crate::world::Ev;

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

/// The membership change under way: the disk-loss procedure, or (`keep`) a node
/// removed and added back with its disk intact (restarted while out, or left
/// running), which may also be restarted while it is a learner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rejoin {
    /// `remove` proposed; waiting until the node is out.
    Removing { node: usize, since: u64, keep: bool },
    /// Wiped and started with `join = true` (or, `keep`, its disk kept); `add` as a
    /// learner next.
    Joining { node: usize, since: u64, keep: bool },
    /// A learner; `promote` it after a while (`keep`: it may be restarted first).
    Learner { node: usize, since: u64, keep: bool },
}

/// The cluster part of a run's state.
#[derive(Debug, Default)]
pub(crate) struct ClusterState {
    /// Links cut by a partition (both directions).
    pub(crate) cut: BTreeSet<(usize, usize)>,
    pub(crate) rejoin: Option<Rejoin>,
    /// Applied index → the state hash and engine seq there, and the node that first
    /// reported it.
    pub(crate) hashes: BTreeMap<u64, ([u8; 32], u64, usize)>,
    /// Rounds (serving terms) seen per node.
    pub(crate) rounds: BTreeMap<usize, u64>,
    /// Term → the node that led it (election safety: one leader per term).
    pub(crate) leaders: BTreeMap<u64, usize>,
    pub(crate) transfers: u64,
    pub(crate) partitions: u64,
    pub(crate) wipes: u64,
    /// Removals and re-additions with the disk kept.
    pub(crate) readds: u64,
}

/// The Raft id of node `n`.
pub(crate) fn raft_id(n: usize) -> u64 {
    n as u64 + 1
}

impl Sim {
    /// Ticks every running node (every `tick_ms`), then lets each advance.
    pub(crate) fn raft_tick(&mut self) {
        for n in 0..self.nodes.len() {
            if let Some(c) = self.nodes[n].cluster() {
                c.tick();
                self.advance(n);
            }
        }
        self.queue.push(self.now + 10 * MS, Ev::RaftTick);
    }

    /// A Raft message arrives at node `n`.
    pub(crate) fn raft_message(&mut self, n: usize, inc: u64, m: Message) {
        if self.nodes[n].incarnation != inc {
            return;
        }
        if let Some(c) = self.nodes[n].cluster() {
            c.receive(m);
            self.advance(n);
        }
    }

    /// Node `n`'s node-thread iteration: pump, advance, send, notice events.
    pub(crate) fn advance(&mut self, n: usize) {
        let Some(c) = self.nodes[n].cluster() else {
            return;
        };
        let released_before = c.serving_ref().map(|v| v.durable_seq());
        let applied_before = c.applied();
        let result = c.advance();
        self.drain_node_logs(n);
        let (msgs, events) = match result {
            Ok(x) => x,
            Err(e) => {
                // A node that failed is gone (the process exits): nothing more of it.
                self.note(format!("node {n} stopped: {e}"));
                self.failed(n, &e.to_string());
                self.kill(n, Crash::Process, "its node failed");
                return;
            }
        };
        let Some(c) = self.nodes[n].cluster() else {
            return;
        };
        let rounds = c.rounds();
        let released = c.serving_ref().map(|v| v.durable_seq());
        if c.applied() > applied_before {
            self.nodes[n].failures = 0;
        }
        let before = self.cluster.rounds.insert(n, rounds);
        if before.is_some_and(|b| b != rounds) {
            self.note(format!("node {n} stepped down: its sessions close"));
            self.drop_sessions(n);
        }
        for ev in events {
            self.raft_event(n, &ev);
        }
        for m in msgs {
            self.send_raft(n, m);
        }
        self.check_replica(n);
        if released.is_some() && released != released_before {
            // Handed over, or the leader's own batches committed: results to release.
            self.wake(n, self.now + 2 * US);
        }
    }

    fn raft_event(&mut self, n: usize, ev: &Event) {
        if let Event::RoleChanged {
            role: peregrine_cluster::Role::Leader,
            term,
            ..
        } = ev
        {
            match self.cluster.leaders.get(term) {
                Some(&m) if m != n => self.fail(
                    "at most one leader per term",
                    format!("nodes {m} and {n} both lead term {term}"),
                ),
                _ => {
                    self.cluster.leaders.insert(*term, n);
                }
            }
        }
        match ev {
            Event::HashMismatch { index } => self.fail(
                "the same state hash on every replica at the same applied index",
                format!("node {n}: the leader's state hash at index {index} differs"),
            ),
            Event::SnapshotTaken { .. } | Event::PeerAdded { .. } | Event::PeerRemoved { .. } => {}
            other => self.note(format!("node {n}: {other:?}")),
        }
    }

    /// Every connection of node `n` is gone (its serving loop stopped).
    fn drop_sessions(&mut self, n: usize) {
        self.nodes[n].incarnation += 1;
        self.nodes[n].next_step = None;
        self.nodes[n].parked = false;
        let dead: Vec<_> = self
            .wires
            .iter()
            .filter(|(_, w)| w.node == n)
            .map(|(c, _)| *c)
            .collect();
        for conn in dead {
            let at = self.client_delay(conn, false);
            self.queue.push(at, Ev::Gone(conn));
        }
    }

    fn send_raft(&mut self, from: usize, m: Message) {
        let to = m.to.saturating_sub(1) as usize;
        let snapshot = m.get_msg_type() == raft_snapshot_type();
        let f = self.cfg.faults;
        let lossy = !self.settling;
        let lost = to >= self.nodes.len()
            || self.cluster.cut.contains(&(from, to))
            || (lossy && self.rng.below(1000) < f.loss);
        if snapshot {
            if let Some(c) = self.nodes[from].cluster() {
                c.report_snapshot(m.to, !lost);
            }
        }
        if lost {
            return;
        }
        let mut at = self.now + self.rng.range(100 * US, 1500 * US);
        if lossy && self.rng.below(1000) < f.reorder {
            at += self.rng.range(MS, 20 * MS);
        }
        let inc = self.nodes[to].incarnation;
        if lossy && self.rng.below(1000) < f.dup {
            let again = at + self.rng.range(US, 10 * MS);
            self.queue
                .push(again, Ev::Raft(to, inc, Box::new(m.clone())));
        }
        self.queue.push(at, Ev::Raft(to, inc, Box::new(m)));
    }

    /// Replicas at the same applied index have the same state.
    fn check_replica(&mut self, n: usize) {
        let Some(c) = self.nodes[n].cluster() else {
            return;
        };
        let (hash, engine, applied) = c.state();
        if applied == 0 {
            return;
        }
        match self.cluster.hashes.get(&applied) {
            Some((h, e, m)) if *h != hash => {
                let (e, m) = (*e, *m);
                self.fail(
                    "the same state hash on every replica at the same applied index",
                    format!(
                        "nodes {m} and {n} differ at applied index {applied} (engine seq {e} \
                         and {engine})"
                    ),
                );
            }
            Some(_) => {}
            None => {
                self.cluster.hashes.insert(applied, (hash, engine, n));
            }
        }
    }

    /// Partitions, heals, leader transfers and disk losses.
    pub(crate) fn cluster_faults(&mut self) {
        if self.nodes.len() < 2 {
            return;
        }
        let f = self.cfg.faults;
        if self.rng.below(1000) < f.partition && self.cluster.cut.is_empty() {
            let a = self.rng.below(3) as usize;
            self.note(format!("fault: node {a} is cut off"));
            for b in 0..self.nodes.len() {
                if b != a {
                    self.cluster.cut.insert((a, b));
                    self.cluster.cut.insert((b, a));
                }
            }
            self.cluster.partitions += 1;
            let heal = self.now + self.rng.range(50 * MS, 800 * MS);
            self.queue.push(heal, Ev::Heal);
        }
        if self.rng.below(1000) < f.transfer {
            if let Some(l) = self.leader() {
                let to = self.rng.pick(&others(l, self.nodes.len()));
                self.note(format!("fault: leader {l} transfers to node {to}"));
                self.cluster.transfers += 1;
                if let Some(c) = self.nodes[l].cluster() {
                    c.transfer_leader(raft_id(to));
                }
                self.advance(l);
            }
        }
        if self.cluster.rejoin.is_none() && self.rng.below(1000) < f.wipe {
            self.start_rejoin(false);
        }
        // Drawn from a generator of its own, so seeds without it kept their runs.
        if self.cluster.rejoin.is_none() && self.aux.below(1000) < f.readd {
            self.start_rejoin(true);
        }
        self.step_rejoin();
    }

    /// The node that leads (the highest term's), if any.
    pub(crate) fn leader(&self) -> Option<usize> {
        (0..self.nodes.len())
            .filter_map(|n| match self.nodes[n].proc.as_ref()? {
                crate::run::Proc::Cluster(c) if c.is_leader() => Some((c.status().term, n)),
                _ => None,
            })
            .max()
            .map(|(_, n)| n)
    }

    fn start_rejoin(&mut self, keep: bool) {
        let Some(l) = self.leader() else {
            return;
        };
        let node = if keep {
            self.aux.pick(&others(l, self.nodes.len()))
        } else {
            self.rng.pick(&others(l, self.nodes.len()))
        };
        if keep {
            self.note(format!(
                "fault: node {node} is removed, to be added back with its disk (on leader {l})"
            ));
        } else {
            self.note(format!(
                "fault: node {node}'s disk is lost: remove it (on leader {l})"
            ));
        }
        let change = MembershipChange::Remove { id: raft_id(node) };
        let proposed = self.nodes[l].cluster().map(|c| c.propose_change(&change));
        if let Some(Ok(())) = proposed {
            if keep {
                self.cluster.readds += 1;
            } else {
                self.cluster.wipes += 1;
            }
            self.cluster.rejoin = Some(Rejoin::Removing {
                node,
                since: self.now,
                keep,
            });
            self.advance(l);
        }
    }

    /// Moves the disk-loss procedure on, the way an operator following
    /// docs/cluster.md would (also once the faults stopped: the operator finishes).
    pub(crate) fn step_rejoin(&mut self) {
        let Some(step) = self.cluster.rejoin else {
            return;
        };
        let Some(l) = self.leader() else {
            return;
        };
        let (voters, learners) = match self.nodes[l].proc.as_ref() {
            Some(crate::run::Proc::Cluster(c)) => {
                let st = c.status();
                (st.voters, st.learners)
            }
            _ => return,
        };
        match step {
            Rejoin::Removing { node, since, keep } => {
                // Out of the configuration as a voter and as a learner (a learner's
                // pending promotion would make a wiped node a voter the leader
                // believes holds its log: seed 3001227).
                if voters.contains(&raft_id(node)) || learners.contains(&raft_id(node)) {
                    if self.now > since + 2_000 * MS {
                        self.cluster.rejoin = None; // the removal was lost: try later
                    }
                    return;
                }
                if keep {
                    if self.aux.chance(1, 2) {
                        self.kill(node, Crash::Process, "restarted while out, its disk kept");
                    }
                    self.note(format!("readd: node {node} removed; its disk kept"));
                    self.cluster.rejoin = Some(Rejoin::Joining {
                        node,
                        since: self.now,
                        keep,
                    });
                    return;
                }
                self.note(format!(
                    "rejoin: node {node} removed; wiped; starts with join = true"
                ));
                self.kill(node, Crash::Power, "its disk is lost");
                self.nodes[node].disk.wipe();
                if let Some(cc) = self.nodes[node].config.cluster.as_mut() {
                    cc.join = true;
                }
                self.cluster.rejoin = Some(Rejoin::Joining {
                    node,
                    since: self.now,
                    keep,
                });
            }
            Rejoin::Joining { node, since, keep } => {
                if self.now < since + 50 * MS || !self.nodes[node].up() {
                    return;
                }
                let change = MembershipChange::AddLearner {
                    id: raft_id(node),
                    addr: venue::peer_addr(node),
                };
                self.note(format!("rejoin: add node {node} as a learner"));
                if let Some(Ok(())) = self.nodes[l].cluster().map(|c| c.propose_change(&change)) {
                    self.cluster.rejoin = Some(Rejoin::Learner {
                        node,
                        since: self.now,
                        keep,
                    });
                    self.advance(l);
                }
            }
            Rejoin::Learner { node, since, keep } => {
                if keep && self.now >= since + 100 * MS && self.nodes[node].up() {
                    // Restarted mid-change (a learner, not promoted yet), its disk kept.
                    if self.aux.chance(1, 2) {
                        self.kill(node, Crash::Process, "restarted as a learner");
                    }
                    self.cluster.rejoin = Some(Rejoin::Learner {
                        node,
                        since: self.now,
                        keep: false,
                    });
                    return;
                }
                if self.now < since + 300 * MS {
                    return;
                }
                if !learners.contains(&raft_id(node)) && !voters.contains(&raft_id(node)) {
                    // The addition was lost with a leader: add it again.
                    self.cluster.rejoin = Some(Rejoin::Joining {
                        node,
                        since: 0,
                        keep: false,
                    });
                    return;
                }
                let change = MembershipChange::AddVoter {
                    id: raft_id(node),
                    addr: venue::peer_addr(node),
                };
                let r = self.nodes[l].cluster().map(|c| c.propose_change(&change));
                match r {
                    Some(Ok(())) => {
                        self.note(format!("rejoin: node {node} promoted"));
                        self.cluster.rejoin = None;
                        self.advance(l);
                    }
                    Some(Err(e)) => self.note(format!("rejoin: promote refused: {e}")),
                    None => {}
                }
            }
        }
    }

    /// Heals every partition.
    pub(crate) fn heal_all(&mut self) {
        if !self.cluster.cut.is_empty() {
            self.note("partition healed".into());
        }
        self.cluster.cut.clear();
    }

    fn drain_node_logs(&mut self, n: usize) {
        for line in crate::trace::take_logs() {
            self.note(format!("node {n} log: {line}"));
        }
    }
}

fn others(n: usize, count: usize) -> Vec<usize> {
    (0..count).filter(|&m| m != n).collect()
}

fn raft_snapshot_type() -> peregrine_cluster::MessageType {
    peregrine_cluster::MessageType::MsgSnapshot
}
