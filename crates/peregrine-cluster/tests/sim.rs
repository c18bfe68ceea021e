//! Deterministic simulation of 3 and 5 nodes (real journals, in-memory network):
//! Raft's safety properties under loss, reordering, delay, partitions and crashes.

mod support;

use peregrine_cluster::MembershipChange;
use support::sim::{Faults, Sim};

fn seeds(n: u64) -> impl Iterator<Item = u64> {
    let base: u64 = std::env::var("SIM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    base..base + n
}

/// Many seeds of random faults: every check in `Sim::advance` (same data at every
/// index, applied only when a majority holds it durably, one leader per term) holds
/// at every step, and after healing every node holds every entry ever applied.
#[test]
fn prop_safety_under_faults_three_nodes() {
    for seed in seeds(24) {
        let mut sim = Sim::new(3, seed, Faults::harsh());
        sim.run(1_500);
        sim.settle(20_000);
        sim.check_converged();
        assert!(
            sim.committed.len() > 20,
            "seed {seed}: only {} committed",
            sim.committed.len()
        );
    }
}

#[test]
fn prop_safety_under_faults_five_nodes() {
    for seed in seeds(12) {
        let mut sim = Sim::new(5, 1000 + seed, Faults::harsh());
        sim.run(1_500);
        sim.settle(20_000);
        sim.check_converged();
        assert!(
            sim.committed.len() > 20,
            "seed {seed}: only {} committed",
            sim.committed.len()
        );
    }
}

#[test]
fn the_same_seed_replays_the_same_run() {
    let run = |seed| {
        let mut sim = Sim::new(3, seed, Faults::harsh());
        sim.run(800);
        sim.settle(20_000);
        (sim.trace.clone(), sim.committed.clone())
    };
    assert_eq!(run(77), run(77));
    assert_ne!(run(77).1, run(78).1);
}

fn elect(sim: &mut Sim) -> u64 {
    for _ in 0..5_000 {
        sim.step();
        if let Some(l) = sim.leader() {
            return l;
        }
    }
    panic!("no leader");
}

/// A leader cut off with a minority keeps accepting proposals but never applies
/// (acknowledges) any of them; the majority elects a new leader that does.
#[test]
fn a_partitioned_leader_acknowledges_nothing() {
    let mut sim = Sim::new(
        5,
        5,
        Faults {
            propose: 0,
            ..Faults::none()
        },
    );
    let old = elect(&mut sim);
    for _ in 0..5 {
        sim.propose_on(old).unwrap();
        sim.run(20);
    }
    let committed_before = sim.committed.len();
    let buddy = if old == 1 { 2 } else { 1 };
    sim.isolate(&[old, buddy]);
    let applied_before = sim.node(old).sm().applied.len();
    let mut stranded = Vec::new();
    for _ in 0..30 {
        if let Some(d) = sim.propose_on(old) {
            stranded.push(d);
        }
        sim.run(10);
    }
    assert!(
        !stranded.is_empty(),
        "the old leader took proposals before stepping down"
    );
    assert_eq!(
        sim.node(old).sm().applied.len(),
        applied_before,
        "the minority applied nothing"
    );
    let new = sim.leader().expect("the majority elected a leader");
    assert_ne!(new, old);
    assert!(
        !sim.node(old).is_leader(),
        "check_quorum made the old leader step down"
    );
    for _ in 0..5 {
        sim.propose_on(new).unwrap();
        sim.run(20);
    }
    assert!(sim.committed.len() > committed_before);
    sim.settle(20_000);
    sim.check_converged();
    for d in &stranded {
        assert!(
            !sim.committed.values().any(|v| v == d),
            "a stranded proposal was applied"
        );
    }
}

/// Snapshots every 7 entries with 3 kept in the log: a node down for a while catches
/// up from the leader's snapshot, and the replicated state-hash checks pass.
#[test]
fn a_lagging_node_catches_up_from_a_snapshot() {
    let mut sim = Sim::new(
        3,
        9,
        Faults {
            propose: 0,
            ..Faults::none()
        },
    );
    let leader = elect(&mut sim);
    let lagger = if leader == 3 { 2 } else { 3 };
    sim.crash(lagger);
    for _ in 0..40 {
        sim.propose_on(leader);
        sim.run(5);
    }
    sim.settle(20_000);
    sim.check_converged();
    let st = sim.node(lagger).status();
    assert!(st.snapshots_installed >= 1, "{st:?}");
    let leader_st = sim.node(sim.leader().unwrap()).status();
    assert!(leader_st.snapshots_taken >= 5);
    let checks: u64 = (1..=3).map(|i| sim.node(i).status().hash_checks_ok).sum();
    assert!(checks >= 5, "followers compared state hashes: {checks}");
}

fn run_until(sim: &mut Sim, what: &str, mut done: impl FnMut(&Sim) -> bool) {
    for _ in 0..10_000 {
        sim.step();
        if done(sim) {
            return;
        }
    }
    panic!("never reached: {what}");
}

/// Promotes learner `id` on leader `on` as an operator does: again until the leader
/// has seen it catch up (a promote before that is refused).
fn promote(sim: &mut Sim, on: u64, id: u64) {
    for _ in 0..1_000 {
        let r = sim
            .node_mut(on)
            .propose_change(&MembershipChange::AddVoter {
                id,
                addr: format!("sim:{id}"),
            });
        match r {
            Ok(()) => return,
            Err(peregrine_cluster::ClusterError::NotCaughtUp { .. }) => sim.run(10),
            Err(e) => panic!("promote {id}: {e}"),
        }
    }
    panic!("{id} never caught up");
}

/// One membership change at a time: a second one proposed before the first is applied
/// is refused (raft-rs would drop it silently, and `cluster remove` would report a
/// change that never happens: a wiped node promoted instead; peregrine sim, seed
/// 3001227). Once the first is applied the next is taken.
#[test]
fn a_membership_change_while_one_is_pending_is_refused() {
    let mut sim = Sim::new(3, 23, Faults::none());
    let leader = elect(&mut sim);
    sim.run(50);
    sim.add_node(4);
    sim.node_mut(leader)
        .propose_change(&MembershipChange::AddLearner {
            id: 4,
            addr: "sim:4".into(),
        })
        .unwrap();
    let second = sim
        .node_mut(leader)
        .propose_change(&MembershipChange::Remove { id: 4 });
    assert!(
        matches!(
            second,
            Err(peregrine_cluster::ClusterError::ChangePending { .. })
        ),
        "{second:?}"
    );
    run_until(&mut sim, "learner 4 added", |s| {
        s.node(leader).status().learners == vec![4]
    });
    run_until(&mut sim, "the addition applied", |s| {
        s.node(leader).applied() == s.node(leader).status().commit
    });
    sim.node_mut(leader)
        .propose_change(&MembershipChange::Remove { id: 4 })
        .unwrap();
    run_until(&mut sim, "learner 4 removed", |s| {
        s.node(leader).status().learners.is_empty()
    });
}

/// Add a learner, promote it, hand it the leadership, remove the old leader; a wiped
/// node re-joins as a new member and catches up from a snapshot.
#[test]
fn membership_changes_and_leadership_transfer() {
    let mut sim = Sim::new(
        3,
        21,
        Faults {
            propose: 200,
            ..Faults::none()
        },
    );
    let old = elect(&mut sim);
    sim.run(100);
    sim.add_node(4);
    sim.node_mut(old)
        .propose_change(&MembershipChange::AddLearner {
            id: 4,
            addr: "sim:4".into(),
        })
        .unwrap();
    run_until(&mut sim, "learner 4 caught up", |s| {
        s.node(4).applied() > 0 && s.node(4).applied() + 2 >= s.node(old).applied()
    });
    assert_eq!(
        sim.node(4).status().learners,
        vec![4],
        "4 knows it is a learner"
    );
    assert_eq!(sim.node(old).status().learners, vec![4]);
    promote(&mut sim, old, 4);
    run_until(&mut sim, "4 is a voter everywhere", |s| {
        (1..=4).all(|i| s.node(i).voters() == vec![1, 2, 3, 4])
    });
    sim.node_mut(old).transfer_leader(4);
    run_until(&mut sim, "4 leads", |s| s.node(4).is_leader());
    // A new leader takes no membership change until it applied its own log (raft-rs
    // would turn it into an empty entry): it is refused, and the operator retries.
    for _ in 0..100 {
        match sim
            .node_mut(4)
            .propose_change(&MembershipChange::Remove { id: old })
        {
            Ok(()) | Err(peregrine_cluster::ClusterError::ChangePending { .. }) => {}
            Err(e) => panic!("remove {old}: {e}"),
        }
        sim.run(100);
        if sim.node(4).voters().len() == 3 {
            break;
        }
    }
    run_until(&mut sim, "old leader removed", |s| s.node(old).removed());
    let rest: Vec<u64> = (1..=4).filter(|i| *i != old).collect();
    run_until(&mut sim, "three voters left", |s| {
        rest.iter().all(|i| s.node(*i).voters() == rest)
    });
    // A member loses its disk: remove it, wipe it, add it back as a learner, promote.
    let victim = rest.iter().copied().find(|i| *i != 4).unwrap();
    sim.node_mut(4)
        .propose_change(&MembershipChange::Remove { id: victim })
        .unwrap();
    run_until(&mut sim, "victim removed", |s| {
        s.node(4).voters().len() == 2
    });
    sim.wipe_and_join(victim);
    sim.run(200);
    sim.node_mut(4)
        .propose_change(&MembershipChange::AddLearner {
            id: victim,
            addr: format!("sim:{victim}"),
        })
        .unwrap();
    run_until(&mut sim, "wiped node caught up", |s| {
        s.node(victim).applied() + 2 >= s.node(4).applied() && s.node(victim).applied() > 50
    });
    assert!(sim.node(victim).status().snapshots_installed >= 1);
    promote(&mut sim, 4, victim);
    run_until(&mut sim, "victim voter again", |s| {
        s.node(4).voters().len() == 3
    });
    sim.settle(20_000);
    sim.check_converged();
}

/// Defect 4 (issue 27): the documented disk-loss procedure on a cluster younger than
/// its first snapshot. The leader held its log from index 1, so the wiped node was
/// sent entries from 1 without the bootstrap configuration and failed applying the
/// first membership change ("raft: removed all voters") on every start, while the
/// promote still succeeded. Now a membership change that adds a node snapshots there
/// (the new node gets a snapshot that includes it), and a promote waits for the node
/// to hold the committed log.
#[test]
fn a_wiped_node_rejoins_a_cluster_younger_than_its_first_snapshot() {
    let mut sim = Sim::with_snapshots(
        3,
        33,
        Faults {
            propose: 200,
            ..Faults::none()
        },
        0, // never a periodic snapshot
    );
    let leader = elect(&mut sim);
    sim.run(100);
    let victim = (1..=3).find(|i| *i != leader).unwrap();
    sim.node_mut(leader)
        .propose_change(&MembershipChange::Remove { id: victim })
        .unwrap();
    run_until(&mut sim, "victim removed", |s| {
        s.node(leader).voters().len() == 2
    });
    sim.wipe_and_join(victim);
    let addr = format!("sim:{victim}");
    sim.node_mut(leader)
        .propose_change(&MembershipChange::AddLearner {
            id: victim,
            addr: addr.clone(),
        })
        .unwrap();
    let early = sim
        .node_mut(leader)
        .propose_change(&MembershipChange::AddVoter {
            id: victim,
            addr: addr.clone(),
        });
    assert!(
        matches!(
            early,
            Err(peregrine_cluster::ClusterError::NotCaughtUp { .. })
        ),
        "a promote before the node caught up is refused: {early:?}"
    );
    run_until(&mut sim, "wiped node caught up", |s| {
        s.node(victim).applied() + 2 >= s.node(leader).applied() && s.node(victim).applied() > 20
    });
    assert!(sim.node(victim).status().snapshots_installed >= 1);
    promote(&mut sim, leader, victim);
    let _ = addr;
    run_until(&mut sim, "victim voter again", |s| {
        s.node(leader).voters().len() == 3
    });
    sim.settle(20_000);
    sim.check_converged();
}

/// Found by `peregrine sim`: a node that is not a voter in its own configuration (a
/// wiped node rejoining under its old id, before it is added; a learner; a removed
/// node) granted votes, so a stale candidate (cut off since before the removal,
/// still counting that node as a voter) could lead a term another leader led. Such a
/// node now never votes.
#[test]
fn a_node_outside_the_voters_never_grants_a_vote() {
    use raft::eraftpb::{Message, MessageType};
    let mut sim = Sim::new(3, 5, Faults::none());
    sim.add_node(9); // joins with an empty log, waiting to be added
    for kind in [MessageType::MsgRequestVote, MessageType::MsgRequestPreVote] {
        let mut m = Message::default();
        m.set_msg_type(kind);
        m.from = 1;
        m.to = 9;
        m.term = 7;
        m.index = 100;
        m.log_term = 6;
        let node = sim.node_mut(9);
        node.step(m);
        node.advance().unwrap();
        let granted = node.take_messages().iter().any(|r| r.to == 1 && !r.reject);
        assert!(!granted, "{kind:?} granted by a node outside the voters");
    }
}

/// Three nodes driven by hand: the test decides which node's journal becomes
/// durable (`deferred_sync`: the node writes, the shell syncs and calls `synced`).
mod deferred {
    use std::collections::BTreeMap;

    use peregrine_cluster::{Message, Node};
    use peregrine_journal::FsyncPolicy;
    use raft::eraftpb::MessageType;

    use super::support::sim::{options, Recorder};

    pub(super) struct Trio {
        pub nodes: BTreeMap<u64, Node<Recorder>>,
        _dirs: Vec<tempfile::TempDir>,
        /// Every message sent, in order.
        pub sent: Vec<Message>,
    }

    impl Trio {
        pub(super) fn new() -> Self {
            Self::with_hash_points(0)
        }

        /// With a hash point every `ticks` ticks of the leader.
        pub(super) fn with_hash_points(ticks: u64) -> Self {
            let mut nodes = BTreeMap::new();
            let mut dirs = Vec::new();
            for id in 1..=3 {
                let dir = tempfile::tempdir().unwrap();
                let mut o = options(id, 3, 5);
                o.deferred_sync = true;
                o.fsync = FsyncPolicy::Batch;
                o.snapshot_every = 0;
                o.hash_check_ticks = ticks;
                nodes.insert(id, Node::open(dir.path(), o, Recorder::default()).unwrap());
                dirs.push(dir);
            }
            Trio {
                nodes,
                _dirs: dirs,
                sent: Vec::new(),
            }
        }

        /// Advances every node, delivers every message to the nodes in `reach`,
        /// and completes the syncs of the nodes in `sync`, until nothing moves.
        pub(super) fn settle(&mut self, reach: &[u64], sync: &[u64]) {
            for _ in 0..1_000 {
                let mut moved = false;
                for id in 1..=3 {
                    let n = self.nodes.get_mut(&id).unwrap();
                    if sync.contains(&id) {
                        if let Some(t) = n.sync_target() {
                            n.synced(t).unwrap();
                            moved = true;
                        }
                    }
                    n.advance().unwrap();
                    let out = n.take_messages();
                    moved |= !out.is_empty() || (sync.contains(&id) && n.sync_target().is_some());
                    for m in out {
                        self.sent.push(m.clone());
                        if reach.contains(&m.to) && reach.contains(&m.from) {
                            self.nodes.get_mut(&m.to).unwrap().step(m);
                        }
                    }
                }
                if !moved {
                    return;
                }
            }
            panic!("the trio never settled");
        }

        /// Appends responses node `id` sent since message `from` (accepting ones).
        pub(super) fn acks_from(&self, id: u64, since: usize) -> usize {
            self.sent[since..]
                .iter()
                .filter(|m| {
                    m.from == id && m.msg_type == MessageType::MsgAppendResponse && !m.reject
                })
                .count()
        }
    }
}

/// A follower acknowledges an entry only once its journal is durable, the leader
/// sends it before its own sync, and the entry commits once a majority (the leader
/// counted only after its own sync) has it durable: with `deferred_sync`, the
/// runner's sync thread decides when.
#[test]
fn acknowledgements_wait_for_the_sync_and_a_majority_of_syncs_commits() {
    let mut t = deferred::Trio::new();
    t.nodes.get_mut(&1).unwrap().campaign().unwrap();
    t.settle(&[1, 2, 3], &[1, 2, 3]);
    assert!(t.nodes[&1].is_leader());
    let base = t.nodes[&1].commit();
    let index = t.nodes.get_mut(&1).unwrap().propose(b"x").unwrap();
    // Nobody syncs: the followers receive the entry but do not acknowledge it.
    let before = t.sent.len();
    t.settle(&[1, 2, 3], &[]);
    assert!(
        t.sent[before..]
            .iter()
            .any(|m| m.from == 1 && m.msg_type == raft::eraftpb::MessageType::MsgAppend),
        "the leader sent the entry before its own sync"
    );
    assert_eq!((t.acks_from(2, before), t.acks_from(3, before)), (0, 0));
    assert_eq!(t.nodes[&1].commit(), base);
    // One follower syncs: with the leader not yet durable, one of three is no
    // majority.
    t.settle(&[1, 2, 3], &[2]);
    assert!(t.acks_from(2, before) >= 1 && t.acks_from(3, before) == 0);
    assert_eq!(t.nodes[&1].commit(), base, "committed on one sync of three");
    // The leader's own sync makes two of three: committed and applied.
    t.settle(&[1, 2, 3], &[1, 2]);
    assert!(t.nodes[&1].commit() >= index);
    assert!(t.nodes[&1]
        .sm()
        .applied
        .iter()
        .any(|(i, d)| *i == index && d == b"x"));
    // The third follower, synced last, applies it too.
    t.settle(&[1, 2, 3], &[1, 2, 3]);
    assert!(t.nodes[&3].sm().applied.iter().any(|(i, _)| *i == index));
}

/// A leader that hears from no majority steps down within one election timeout
/// (plus a tick), not the one to two timeouts of raft-rs's own check.
#[test]
fn a_leader_cut_off_steps_down_within_one_election_timeout() {
    let mut t = deferred::Trio::new();
    t.nodes.get_mut(&1).unwrap().campaign().unwrap();
    t.settle(&[1, 2, 3], &[1, 2, 3]);
    assert!(t.nodes[&1].is_leader());
    let timeout = support::sim::options(1, 3, 5).election_tick;
    let mut ticks = 0;
    while t.nodes[&1].is_leader() {
        assert!(ticks <= timeout + 1, "still leading after {ticks} ticks");
        t.nodes.get_mut(&1).unwrap().tick();
        t.settle(&[1], &[1, 2, 3]); // it reaches nobody, nobody reaches it
        ticks += 1;
    }
    assert!(
        ticks > timeout / 2,
        "stepped down after {ticks} ticks: too early"
    );
    // With a majority it stays: 1 and 2 talk, 3 is cut off.
    let mut t = deferred::Trio::new();
    t.nodes.get_mut(&1).unwrap().campaign().unwrap();
    t.settle(&[1, 2, 3], &[1, 2, 3]);
    for _ in 0..5 * timeout {
        t.nodes.get_mut(&1).unwrap().tick();
        t.nodes.get_mut(&2).unwrap().tick();
        t.settle(&[1, 2], &[1, 2, 3]);
    }
    assert!(
        t.nodes[&1].is_leader(),
        "a leader with its majority stepped down"
    );
}

/// Proposals from the network are dropped: this cluster never forwards them (and
/// raft-rs would parse their conf changes with rust-protobuf).
#[test]
fn a_proposal_from_the_network_is_dropped() {
    let mut t = deferred::Trio::new();
    t.nodes.get_mut(&1).unwrap().campaign().unwrap();
    t.settle(&[1, 2, 3], &[1, 2, 3]);
    let last = t.nodes[&1].status().last_index;
    let mut m = peregrine_cluster::Message {
        msg_type: raft::eraftpb::MessageType::MsgPropose,
        from: 2,
        to: 1,
        ..Default::default()
    };
    m.entries = vec![raft::eraftpb::Entry {
        entry_type: raft::eraftpb::EntryType::EntryConfChangeV2,
        data: vec![0x13; 64].into(), // a start-group wire type, repeated
        ..Default::default()
    }]
    .into();
    let node = t.nodes.get_mut(&1).unwrap();
    node.step(m);
    node.advance().unwrap();
    assert_eq!(node.status().last_index, last);
    assert_eq!(node.error_counts().0, 1);
}

/// The leader's timer puts hash points in the log: with no snapshot point at all,
/// every follower compares its state hash with the leader's; a replica whose state
/// diverged is reported at the next point.
#[test]
fn hash_points_on_the_leaders_timer_compare_every_replica() {
    let mut t = deferred::Trio::with_hash_points(5);
    t.nodes.get_mut(&1).unwrap().campaign().unwrap();
    t.settle(&[1, 2, 3], &[1, 2, 3]);
    let all = [1, 2, 3];
    let run = |t: &mut deferred::Trio, ticks: u32| {
        for k in 0..ticks {
            let _ = t
                .nodes
                .get_mut(&1)
                .unwrap()
                .propose(format!("d{k}").as_bytes());
            for id in all {
                t.nodes.get_mut(&id).unwrap().tick();
            }
            t.settle(&all, &all);
        }
    };
    run(&mut t, 12);
    for id in [2, 3] {
        let s = t.nodes[&id].status();
        assert!(s.hash_checks_ok >= 2, "node {id}: {s:?}");
        assert_eq!(s.hash_mismatches, 0);
    }
    // Node 3's state diverges (a bug): the next hash point shows it there.
    t.nodes
        .get_mut(&3)
        .unwrap()
        .sm_mut()
        .applied
        .push((0, b"diverged".to_vec()));
    run(&mut t, 6);
    assert!(t.nodes[&3].status().hash_mismatches >= 1);
    assert_eq!(t.nodes[&2].status().hash_mismatches, 0);
}
