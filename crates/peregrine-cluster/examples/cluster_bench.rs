//! Replicated append latency and throughput of the real stack: N nodes on loopback
//! (one thread each, TCP transport, journal with the chosen fsync), an open-loop load
//! on the leader that packs every due command into one entry (group commit), each
//! command timed from its *scheduled* send time to the leader applying its entry
//! (committed on a majority). `--nodes 1,3` runs a single node first: the same loop
//! and journal without replication, the floor of the same run.
//!
//! cargo run --release -p peregrine-cluster --example cluster_bench -- \
//!     --nodes 1,3 --rate 100000 --seconds 5 --max-batch 1024 --payload 72 --fsync batch

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use peregrine_cluster::{
    spawn, ClusterConfig, Node, PeerConfig, Pump, Role, RunnerHandle, StateMachine,
};
use peregrine_journal::FsyncPolicy;

/// Counts entries and remembers when the leader applied each (for the pump).
#[derive(Debug, Default)]
struct BenchSm {
    count: u64,
    applied: Vec<(u64, Instant)>,
}

impl StateMachine for BenchSm {
    fn apply(&mut self, index: u64, _data: &[u8]) {
        self.count += 1;
        self.applied.push((index, Instant::now()));
    }
    fn snapshot(&mut self) -> Vec<u8> {
        self.count.to_le_bytes().to_vec()
    }
    fn restore(&mut self, state: &[u8]) -> Result<(), String> {
        self.count = state
            .try_into()
            .map(u64::from_le_bytes)
            .map_err(|_| "bad state".to_string())?;
        Ok(())
    }
    fn state_hash(&mut self) -> [u8; 32] {
        *blake3::hash(&self.count.to_le_bytes()).as_bytes()
    }
}

#[derive(Clone)]
struct Shared {
    armed: Arc<AtomicBool>,
    acked: Arc<AtomicU64>,
    hist: Arc<Mutex<Histogram<u64>>>,
    batches: Arc<AtomicU64>,
}

struct BenchPump {
    shared: Shared,
    rate: f64,
    total: u64,
    max_batch: u64,
    payload: usize,
    start: Option<Instant>,
    next_k: u64,
    pending: BTreeMap<u64, (u64, u64)>,
    buf: Vec<u8>,
}

impl BenchPump {
    fn sched(&self, k: u64) -> Instant {
        self.start.unwrap() + Duration::from_secs_f64(k as f64 / self.rate)
    }
}

impl Pump<BenchSm> for BenchPump {
    fn pump(&mut self, node: &mut Node<BenchSm>, now: Instant) -> Option<Instant> {
        let applied = std::mem::take(&mut node.sm_mut().applied);
        if !self.shared.armed.load(Ordering::Acquire) || !node.is_leader() {
            return Some(now + Duration::from_millis(1));
        }
        let start = *self.start.get_or_insert(now);
        let mut acked = 0;
        {
            let mut h = self.shared.hist.lock().unwrap();
            for (index, t) in applied {
                if let Some((k0, n)) = self.pending.remove(&index) {
                    for k in k0..k0 + n {
                        let ns = t.saturating_duration_since(self.sched(k)).as_nanos() as u64;
                        h.saturating_record(ns.max(1));
                    }
                    acked += n;
                }
            }
        }
        self.shared.acked.fetch_add(acked, Ordering::Release);
        let elapsed = now.saturating_duration_since(start).as_secs_f64();
        let due = ((elapsed * self.rate) as u64 + 1).min(self.total);
        while self.next_k < due {
            let n = (due - self.next_k).min(self.max_batch);
            self.buf.clear();
            self.buf.resize(n as usize * self.payload, 0x5A);
            let m = self.buf.len().min(8);
            self.buf[..m].copy_from_slice(&self.next_k.to_le_bytes()[..m]);
            match node.propose(&self.buf) {
                Ok(index) => {
                    self.pending.insert(index, (self.next_k, n));
                    self.next_k += n;
                    self.shared.batches.fetch_add(1, Ordering::Relaxed);
                }
                Err(_) => break,
            }
        }
        if self.next_k < self.total {
            Some(self.sched(self.next_k))
        } else {
            Some(now + Duration::from_millis(1))
        }
    }
}

struct Args {
    nodes: Vec<u64>,
    rate: f64,
    seconds: f64,
    max_batch: u64,
    payload: usize,
    fsync: FsyncPolicy,
}

fn args() -> Args {
    let mut a = Args {
        nodes: vec![1, 3],
        rate: 100_000.0,
        seconds: 5.0,
        max_batch: 1024,
        payload: 72,
        fsync: FsyncPolicy::Batch,
    };
    let v: Vec<String> = std::env::args().skip(1).collect();
    for pair in v.chunks(2) {
        let val = pair.get(1).map(String::as_str).unwrap_or("");
        match pair[0].as_str() {
            "--nodes" => {
                a.nodes = val
                    .split(',')
                    .map(|x| x.parse().expect("--nodes 1,3"))
                    .collect()
            }
            "--rate" => a.rate = val.parse().expect("--rate"),
            "--seconds" => a.seconds = val.parse().expect("--seconds"),
            "--max-batch" => a.max_batch = val.parse().expect("--max-batch"),
            "--payload" => a.payload = val.parse().expect("--payload"),
            "--fsync" => {
                a.fsync = match val {
                    "batch" => FsyncPolicy::Batch,
                    "none" => FsyncPolicy::None,
                    _ => panic!("--fsync batch|none"),
                }
            }
            other => panic!("unknown argument {other}"),
        }
    }
    a
}

fn run(n: u64, a: &Args) {
    let dir = tempfile::tempdir().unwrap();
    let ports: Vec<u16> = {
        let ls: Vec<TcpListener> = (0..n)
            .map(|_| TcpListener::bind("127.0.0.1:0").unwrap())
            .collect();
        ls.iter().map(|l| l.local_addr().unwrap().port()).collect()
    };
    let shared = Shared {
        armed: Arc::new(AtomicBool::new(false)),
        acked: Arc::new(AtomicU64::new(0)),
        hist: Arc::new(Mutex::new(
            Histogram::new_with_bounds(1, 60_000_000_000, 3).unwrap(),
        )),
        batches: Arc::new(AtomicU64::new(0)),
    };
    let total = (a.rate * a.seconds) as u64;
    let nodes: Vec<RunnerHandle<BenchSm>> = (1..=n)
        .map(|id| {
            let cfg = ClusterConfig {
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
                fsync: a.fsync,
                max_entry_bytes: (a.max_batch as usize * a.payload).max(1024),
                max_append_bytes: 4 << 20,
                max_frame_bytes: 64 << 20,
                snapshot_every: 0,
                ..ClusterConfig::default()
            };
            let pump = BenchPump {
                shared: shared.clone(),
                rate: a.rate,
                total,
                max_batch: a.max_batch,
                payload: a.payload,
                start: None,
                next_k: 0,
                pending: BTreeMap::new(),
                buf: Vec::new(),
            };
            spawn(
                dir.path().join(format!("n{id}")),
                &cfg,
                BenchSm::default(),
                Some(Box::new(pump)),
            )
            .unwrap()
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !nodes
        .iter()
        .any(|h| h.status().is_some_and(|(s, _)| s.role == Role::Leader))
    {
        assert!(Instant::now() < deadline, "no leader");
        std::thread::sleep(Duration::from_millis(5));
    }
    let t0 = Instant::now();
    shared.armed.store(true, Ordering::Release);
    let end = t0 + Duration::from_secs_f64(a.seconds + 10.0);
    while shared.acked.load(Ordering::Acquire) < total && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(5));
    }
    let secs = t0.elapsed().as_secs_f64();
    let acked = shared.acked.load(Ordering::Acquire);
    for h in nodes {
        let _ = h.stop();
    }
    let h = shared.hist.lock().unwrap();
    let batches = shared.batches.load(Ordering::Relaxed);
    let q = |p: f64| h.value_at_quantile(p) as f64 / 1e3;
    println!(
        "nodes={n} fsync={:?} rate={} acked={acked}/{total} p50={:.1}us p90={:.1}us p99={:.1}us p99.9={:.1}us max={:.1}us throughput={:.0}/s entries={batches} avg_batch={:.1}",
        a.fsync,
        a.rate,
        q(0.5),
        q(0.9),
        q(0.99),
        q(0.999),
        h.max() as f64 / 1e3,
        acked as f64 / secs,
        acked as f64 / batches.max(1) as f64
    );
    println!(
        "{{\"nodes\":{n},\"fsync\":\"{:?}\",\"rate\":{},\"acked\":{acked},\"total\":{total},\"p50_ns\":{},\"p90_ns\":{},\"p99_ns\":{},\"p999_ns\":{},\"max_ns\":{},\"throughput\":{:.0},\"entries\":{batches}}}",
        a.fsync,
        a.rate,
        h.value_at_quantile(0.5),
        h.value_at_quantile(0.9),
        h.value_at_quantile(0.99),
        h.value_at_quantile(0.999),
        h.max(),
        acked as f64 / secs
    );
}

fn main() {
    let a = args();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("# cluster_bench: load {}", load.trim());
    for n in a.nodes.clone() {
        run(n, &a);
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("# load after: {}", load.trim());
}
