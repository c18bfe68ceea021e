//! Three nodes on loopback, each on its own thread with the real TCP transport and
//! journals: replication, a leader stopped and restarted, leadership transfer,
//! garbage on the peer port, and where snapshots are encoded.

mod support;

use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use peregrine_cluster::{
    spawn, ClusterConfig, PeerConfig, Role, RunnerHandle, SnapshotEncode, StateMachine,
};
use peregrine_journal::FsyncPolicy;
use support::sim::Recorder;

fn free_ports(n: usize) -> Vec<u16> {
    let ls: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    ls.iter().map(|l| l.local_addr().unwrap().port()).collect()
}

fn config(id: u64, ports: &[u16]) -> ClusterConfig {
    ClusterConfig {
        node_id: id,
        listen: format!("127.0.0.1:{}", ports[id as usize - 1]),
        peers: ports
            .iter()
            .enumerate()
            .map(|(i, p)| PeerConfig {
                id: i as u64 + 1,
                addr: format!("127.0.0.1:{p}"),
                client: None,
                recovery: None,
            })
            .collect(),
        tick_ms: 10,
        election_ticks: 20,
        heartbeat_ticks: 3,
        snapshot_every: 50,
        log_retain: 20,
        fsync: FsyncPolicy::Batch,
        ..ClusterConfig::default()
    }
}

fn start(dir: &Path, id: u64, ports: &[u16]) -> RunnerHandle<Recorder> {
    spawn(
        dir.join(format!("n{id}")),
        &config(id, ports),
        Recorder::default(),
        None,
    )
    .unwrap()
}

fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let Some(v) = f() {
            return v;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("timed out waiting for {what}");
}

fn leader<M>(nodes: &[Option<RunnerHandle<M>>]) -> Option<usize> {
    nodes.iter().position(|n| {
        n.as_ref()
            .and_then(|h| h.status())
            .is_some_and(|(s, _)| s.role == Role::Leader)
    })
}

fn applied<M>(h: &RunnerHandle<M>) -> u64 {
    h.status().map_or(0, |(s, _)| s.applied)
}

#[test]
fn three_nodes_replicate_fail_over_and_catch_up() {
    let dir = tempfile::tempdir().unwrap();
    let ports = free_ports(3);
    let mut nodes: Vec<Option<RunnerHandle<Recorder>>> = (1..=3)
        .map(|id| Some(start(dir.path(), id, &ports)))
        .collect();
    let l = wait_for("a leader", || leader(&nodes));
    let mut last = 0;
    for i in 0..300u32 {
        last = nodes[l]
            .as_ref()
            .unwrap()
            .propose(format!("a{i}").into_bytes())
            .unwrap();
    }
    wait_for("all applied", || {
        nodes
            .iter()
            .all(|n| applied(n.as_ref().unwrap()) >= last)
            .then_some(())
    });

    // Stop the leader: the other two elect a new one and keep committing.
    let old = nodes[l].take().unwrap().stop().unwrap();
    assert!(old.applied.len() >= 300);
    let l2 = wait_for("a new leader", || leader(&nodes));
    assert_ne!(l2, l);
    for i in 0..200u32 {
        last = nodes[l2]
            .as_ref()
            .unwrap()
            .propose(format!("b{i}").into_bytes())
            .unwrap();
    }
    // The old leader comes back on its journal and catches up (log or snapshot).
    nodes[l] = Some(start(dir.path(), l as u64 + 1, &ports));
    wait_for("caught up", || {
        nodes
            .iter()
            .all(|n| applied(n.as_ref().unwrap()) >= last)
            .then_some(())
    });

    // Hand leadership to the restarted node.
    nodes[l2].as_ref().unwrap().transfer_leader(l as u64 + 1);
    wait_for("transfer", || (leader(&nodes) == Some(l)).then_some(()));
    last = nodes[l]
        .as_ref()
        .unwrap()
        .propose(b"after transfer".to_vec())
        .unwrap();
    wait_for("applied everywhere", || {
        nodes
            .iter()
            .all(|n| applied(n.as_ref().unwrap()) >= last)
            .then_some(())
    });

    let statuses: Vec<_> = nodes
        .iter()
        .map(|n| n.as_ref().unwrap().status().unwrap().0)
        .collect();
    for s in &statuses {
        assert_eq!(s.hash_mismatches, 0);
    }
    assert!(statuses.iter().map(|s| s.hash_checks_ok).sum::<u64>() > 0);
    let sms: Vec<Recorder> = nodes
        .into_iter()
        .map(|n| n.unwrap().stop().unwrap())
        .collect();
    assert_eq!(sms[0], sms[1]);
    assert_eq!(sms[1], sms[2]);
    let datas: Vec<&[u8]> = sms[0].applied.iter().map(|(_, d)| d.as_slice()).collect();
    for i in 0..300u32 {
        assert!(datas.contains(&format!("a{i}").as_bytes()));
    }
    for i in 0..200u32 {
        assert!(datas.contains(&format!("b{i}").as_bytes()));
    }
}

#[test]
fn garbage_on_the_peer_port_closes_only_that_connection() {
    let dir = tempfile::tempdir().unwrap();
    let ports = free_ports(3);
    let nodes: Vec<Option<RunnerHandle<Recorder>>> = (1..=3)
        .map(|id| Some(start(dir.path(), id, &ports)))
        .collect();
    let l = wait_for("a leader", || leader(&nodes));
    let victim = (l + 1) % 3;
    let addr = nodes[victim].as_ref().unwrap().addr();
    // Random bytes, a valid hello from a stranger cluster, a valid hello then a bad frame.
    let mut junk: Vec<Vec<u8>> = vec![(0..200u32).map(|i| (i * 37 % 251) as u8).collect()];
    let stranger = peregrine_cluster::wire::Hello {
        cluster_id: 99,
        from: 1,
        to: victim as u64 + 1,
    };
    junk.push(stranger.encode().to_vec());
    let mut bad_frame = peregrine_cluster::wire::Hello {
        cluster_id: 1,
        from: 7,
        to: victim as u64 + 1,
    }
    .encode()
    .to_vec();
    bad_frame.extend_from_slice(&[16, 0, 0, 0, 1, 2, 3, 4]);
    bad_frame.extend_from_slice(&[0xAB; 16]);
    junk.push(bad_frame);
    for j in &junk {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.write_all(j).unwrap();
    }
    wait_for("bad input counted", || {
        let (_, t) = nodes[victim].as_ref().unwrap().status()?;
        (t.bad_input >= 3).then_some(())
    });
    let last = nodes[l]
        .as_ref()
        .unwrap()
        .propose(b"still fine".to_vec())
        .unwrap();
    wait_for("applied", || {
        nodes
            .iter()
            .all(|n| applied(n.as_ref().unwrap()) >= last)
            .then_some(())
    });
    for n in nodes {
        n.unwrap().stop().unwrap();
    }
}

/// A [`Recorder`] that notes the name of the thread each snapshot encode runs on.
struct Traced {
    inner: Recorder,
    encodes: Arc<Mutex<Vec<String>>>,
}

fn note(encodes: &Mutex<Vec<String>>) {
    let name = std::thread::current().name().unwrap_or("?").to_string();
    encodes.lock().unwrap().push(name);
}

impl StateMachine for Traced {
    fn apply(&mut self, index: u64, data: &[u8]) {
        self.inner.apply(index, data);
    }

    fn snapshot(&mut self) -> Vec<u8> {
        note(&self.encodes);
        self.inner.snapshot()
    }

    fn snapshot_copy(&mut self) -> SnapshotEncode {
        let mut copy = self.inner.clone();
        let encodes = self.encodes.clone();
        Box::new(move || {
            note(&encodes);
            copy.snapshot()
        })
    }

    fn restore(&mut self, state: &[u8]) -> Result<(), String> {
        self.inner.restore(state)
    }

    fn state_hash(&mut self) -> [u8; 32] {
        self.inner.state_hash()
    }
}

/// The node's thread only copies the state for a snapshot: the encode runs on the
/// node's snapshot thread (`cluster-snap-<id>`), never on `cluster-node-<id>`, and
/// the snapshots it makes are the nodes' (taken, hashes equal everywhere).
#[test]
fn snapshots_are_encoded_on_the_snapshot_thread() {
    let dir = tempfile::tempdir().unwrap();
    let ports = free_ports(3);
    let encodes = Arc::new(Mutex::new(Vec::new()));
    let nodes: Vec<Option<RunnerHandle<Traced>>> = (1..=3)
        .map(|id| {
            let sm = Traced {
                inner: Recorder::default(),
                encodes: encodes.clone(),
            };
            let dir = dir.path().join(format!("n{id}"));
            Some(spawn(dir, &config(id, &ports), sm, None).unwrap())
        })
        .collect();
    let mut last = 0;
    for i in 0..160u32 {
        // Through whichever node leads now (an election on a loaded machine is fine).
        last = wait_for("a proposal taken", || {
            let l = leader(&nodes)?;
            let data = format!("s{i}").into_bytes();
            nodes[l].as_ref().unwrap().propose(data).ok()
        });
    }
    // Every node passes a snapshot point of its own (every 50, staggered).
    wait_for("applied and a snapshot on every node", || {
        nodes
            .iter()
            .map(|n| n.as_ref().unwrap().status())
            .all(|s| s.is_some_and(|(s, _)| s.applied >= last && s.snapshots_taken >= 1))
            .then_some(())
    });
    let statuses: Vec<_> = nodes
        .iter()
        .map(|n| n.as_ref().unwrap().status().unwrap().0)
        .collect();
    for n in nodes {
        n.unwrap().stop().unwrap();
    }
    for s in &statuses {
        assert_eq!(s.hash_mismatches, 0, "node {}", s.id);
    }
    let encodes = encodes.lock().unwrap().clone();
    assert!(!encodes.is_empty());
    for name in &encodes {
        assert!(
            name.starts_with("cluster-snap-"),
            "a snapshot was encoded on {name}: {encodes:?}"
        );
    }
}
