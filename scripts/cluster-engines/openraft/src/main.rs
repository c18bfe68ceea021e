//! Three openraft 0.9 nodes in one process (in-memory store from `openraft-memstore`,
//! in-process network that calls the target node directly). Measures client_write
//! latency from one writer, and throughput with many writers and with large entries.
use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use openraft::error::{InstallSnapshotError, RPCError, RaftError, RemoteError};
use openraft::network::{RPCOption, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    VoteRequest, VoteResponse,
};
use openraft::storage::Adaptor;
use openraft::{Config, Raft};
use openraft_memstore::{ClientRequest, MemNodeId, MemStore, TypeConfig};

type Node = Raft<TypeConfig>;
type Nodes = Arc<Mutex<BTreeMap<MemNodeId, Node>>>;

#[derive(Clone)]
struct Router(Nodes);
struct Conn {
    target: MemNodeId,
    nodes: Nodes,
}

impl RaftNetworkFactory<TypeConfig> for Router {
    type Network = Conn;
    async fn new_client(&mut self, target: MemNodeId, _node: &()) -> Conn {
        Conn { target, nodes: self.0.clone() }
    }
}

impl Conn {
    fn node(&self) -> Node {
        self.nodes.lock().unwrap().get(&self.target).unwrap().clone()
    }
}

impl RaftNetwork<TypeConfig> for Conn {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        _o: RPCOption,
    ) -> Result<AppendEntriesResponse<MemNodeId>, RPCError<MemNodeId, (), RaftError<MemNodeId>>> {
        self.node().append_entries(rpc).await.map_err(|e| RPCError::RemoteError(RemoteError::new(self.target, e)))
    }
    async fn install_snapshot(
        &mut self,
        rpc: InstallSnapshotRequest<TypeConfig>,
        _o: RPCOption,
    ) -> Result<
        InstallSnapshotResponse<MemNodeId>,
        RPCError<MemNodeId, (), RaftError<MemNodeId, InstallSnapshotError>>,
    > {
        self.node().install_snapshot(rpc).await.map_err(|e| RPCError::RemoteError(RemoteError::new(self.target, e)))
    }
    async fn vote(
        &mut self,
        rpc: VoteRequest<MemNodeId>,
        _o: RPCOption,
    ) -> Result<VoteResponse<MemNodeId>, RPCError<MemNodeId, (), RaftError<MemNodeId>>> {
        self.node().vote(rpc).await.map_err(|e| RPCError::RemoteError(RemoteError::new(self.target, e)))
    }
}

fn req(serial: u64, bytes: usize) -> ClientRequest {
    ClientRequest { client: "c".into(), serial, status: "x".repeat(bytes) }
}

fn print(name: &str, h: &Histogram<u64>, n: u64, secs: f64, per_entry: u64) {
    println!(
        "{name:<34} n={n:<7} p50={:>7.1}us p90={:>7.1}us p99={:>7.1}us p99.9={:>7.1}us max={:>8.1}us  {:>9.0} entries/s {:>10.0} cmds/s",
        h.value_at_quantile(0.5) as f64 / 1e3,
        h.value_at_quantile(0.9) as f64 / 1e3,
        h.value_at_quantile(0.99) as f64 / 1e3,
        h.value_at_quantile(0.999) as f64 / 1e3,
        h.max() as f64 / 1e3,
        n as f64 / secs,
        (n * per_entry) as f64 / secs
    );
    println!(
        "{{\"engine\":\"openraft-0.9.25\",\"case\":\"{name}\",\"n\":{n},\"p50_ns\":{},\"p99_ns\":{},\"p999_ns\":{},\"max_ns\":{},\"entries_per_s\":{:.0},\"cmds_per_s\":{:.0}}}",
        h.value_at_quantile(0.5), h.value_at_quantile(0.99), h.value_at_quantile(0.999), h.max(), n as f64 / secs, (n * per_entry) as f64 / secs
    );
}

async fn writers(leader: &Node, writers: u64, per_writer: u64, bytes: usize, per_entry: u64, name: &str) {
    let hist = Arc::new(Mutex::new(Histogram::<u64>::new(3).unwrap()));
    let t0 = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..writers {
        let leader = leader.clone();
        let hist = hist.clone();
        tasks.push(tokio::spawn(async move {
            let mut local = Histogram::<u64>::new(3).unwrap();
            for i in 0..per_writer {
                let t = Instant::now();
                leader.client_write(req(w * 1_000_000 + i, bytes)).await.unwrap();
                local.record(t.elapsed().as_nanos() as u64).unwrap();
            }
            hist.lock().unwrap().add(local).unwrap();
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let secs = t0.elapsed().as_secs_f64();
    let h = hist.lock().unwrap();
    print(name, &h, writers * per_writer, secs, per_entry);
}

fn main() {
    let workers: usize = std::env::var("WORKERS").ok().and_then(|v| v.parse().ok()).unwrap_or(2);
    let scale: u64 = std::env::var("SCALE").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(workers).enable_all().build().unwrap();
    rt.block_on(async move {
        let config = Arc::new(
            Config { heartbeat_interval: 50, election_timeout_min: 300, election_timeout_max: 600, ..Default::default() }
                .validate()
                .unwrap(),
        );
        let nodes: Nodes = Arc::new(Mutex::new(BTreeMap::new()));
        for id in 1..=3u64 {
            let (log, sm) = Adaptor::new(MemStore::new_async().await);
            let raft = Raft::new(id, config.clone(), Router(nodes.clone()), log, sm).await.unwrap();
            nodes.lock().unwrap().insert(id, raft);
        }
        let leader = nodes.lock().unwrap().get(&1).unwrap().clone();
        leader.initialize(BTreeSet::from([1u64, 2, 3])).await.unwrap();
        leader.wait(Some(Duration::from_secs(10))).current_leader(1, "leader").await.unwrap();
        // warm-up
        writers(&leader, 1, 2_000, 16, 1, "warmup").await;
        writers(&leader, 1, 20_000 * scale, 100, 1, "1 writer, 100 B entries").await;
        writers(&leader, 64, 1_000 * scale, 100, 1, "64 writers, 100 B entries").await;
        writers(&leader, 1, 5_000 * scale, 6_400, 64, "1 writer, 6.4 KB entries (64 cmds)").await;
        writers(&leader, 8, 1_000 * scale, 6_400, 64, "8 writers, 6.4 KB entries (64 cmds)").await;
    });
}
