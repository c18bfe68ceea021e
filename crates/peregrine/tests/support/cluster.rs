//! Three real `peregrine exchange --cluster` processes on loopback, each with its
//! own config, Raft log, admin endpoint and log file; killed when dropped.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use peregrine_client::order_entry::Connection;
use peregrine_types::AccountId;
use peregrine_wire::v2::client::LoginParams;

use super::{accounts_toml, free_port, key};

/// How a test cluster is started.
#[derive(Debug, Default, Clone)]
pub(crate) struct Opts {
    /// Environment of every node process.
    pub env: Vec<(String, String)>,
    /// The feed's UDP target (every node publishes there while it leads); `None`:
    /// market data off.
    pub market_data: Option<String>,
    /// More config sections for every node (e.g. `[backpressure]`).
    pub extra: String,
    /// `[cluster] election_ticks` (default: `CLUSTER_ELECTION_TICKS`, else 20).
    pub election_ticks: Option<usize>,
    /// `[cluster] snapshot_every` (default 64: snapshots, log compaction and
    /// catch-up by snapshot within seconds of a test).
    pub snapshot_every: Option<u64>,
    /// Run with no other cluster of this test binary alive (a load test: the
    /// binary's tests run in parallel, and three more nodes on two cores starve
    /// this one's).
    pub exclusive: bool,
}

/// Clusters alive in this test binary take it shared; an exclusive one takes it
/// alone (`Opts::exclusive`).
static RUNNING: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// A cluster's hold on [`RUNNING`].
#[allow(dead_code)] // held for its Drop only
enum Hold {
    Shared(std::sync::RwLockReadGuard<'static, ()>),
    Alone(std::sync::RwLockWriteGuard<'static, ()>),
}

/// Nodes in a test cluster.
pub(crate) const N: usize = 3;

struct Ports {
    client: u16,
    peer: u16,
    admin: u16,
    recovery: u16,
}

/// One node: its files, addresses and (while running) its process.
pub(crate) struct Node {
    pub id: u64,
    pub config: PathBuf,
    pub log: PathBuf,
    pub raft: PathBuf,
    pub peer: String,
    pub client: SocketAddr,
    pub admin: SocketAddr,
    /// Its market-data recovery service (served while it leads, redirecting else).
    pub recovery: SocketAddr,
    pub child: Option<Child>,
    env: Vec<(String, String)>,
}

impl Node {
    pub(crate) fn start(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_peregrine"))
            .args(["exchange", "--cluster", "--config"])
            .arg(&self.config)
            .env("RUST_LOG", "info")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .unwrap();
        let mut line = String::new();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        out.read_line(&mut line).unwrap();
        assert!(
            line.starts_with("listening on "),
            "node {}: {line:?}\n{}",
            self.id,
            self.log_text()
        );
        // Drain the rest of stdout (the summary at the stop) so the pipe never fills.
        std::thread::spawn(move || {
            let mut sink = String::new();
            let _ = out.read_to_string(&mut sink);
        });
        self.child = Some(child);
    }

    pub(crate) fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub(crate) fn signal(&self, sig: rustix::process::Signal) {
        if let Some(c) = &self.child {
            rustix::process::kill_process(rustix::process::Pid::from_child(c), sig).unwrap();
        }
    }

    /// Stops the node with SIGSTOP and returns once every one of its threads is
    /// stopped (how long that took). kill(2) only queues the signal and wakes one
    /// thread, which stops the others once it is scheduled: on a loaded machine the
    /// node's other threads run on meanwhile (they can take an append, sync it and
    /// answer it), so a test that acts right after the signal races them.
    pub(crate) fn pause(&self) -> Duration {
        let started = Instant::now();
        self.signal(rustix::process::Signal::STOP);
        let pid = self.child.as_ref().expect("a running node").id();
        let until = started + Duration::from_secs(30);
        loop {
            if all_threads_stopped(pid) {
                return started.elapsed();
            }
            assert!(Instant::now() < until, "node {} never stopped", self.id);
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    pub(crate) fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub(crate) fn status(&self) -> Option<serde_json::Value> {
        self.admin_call("GET", "/cluster/status").map(|(_, v)| v)
    }

    /// One admin request: the status code and the JSON body.
    pub(crate) fn admin_call(&self, method: &str, path: &str) -> Option<(u16, serde_json::Value)> {
        let mut s = TcpStream::connect_timeout(&self.admin, Duration::from_secs(2)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        s.write_all(req.as_bytes()).ok()?;
        let mut raw = String::new();
        s.read_to_string(&mut raw).ok()?;
        let (head, body) = raw.split_once("\r\n\r\n")?;
        let code = head.split(' ').nth(1)?.parse().ok()?;
        Some((code, serde_json::from_str(body).ok()?))
    }

    /// Rewrites this node's config for a node that joins an existing cluster.
    pub(crate) fn set_join(&self) {
        let text = std::fs::read_to_string(&self.config).unwrap();
        let text = text.replacen("[cluster]\n", "[cluster]\njoin = true\n", 1);
        std::fs::write(&self.config, text).unwrap();
    }
}

/// Whether every thread of process `pid` is stopped (`T` in `/proc/pid/task/*/stat`).
fn all_threads_stopped(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    let mut any = false;
    for t in tasks.flatten() {
        let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
        // The state is the field after the command name, which ends with the last ')'.
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, r)| r.trim_start().chars().next());
        match state {
            Some('T') => any = true,
            None => {} // the thread exited meanwhile
            Some(_) => return false,
        }
    }
    any
}

impl Drop for Node {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// Three nodes of `peregrine exchange --cluster` on loopback.
pub(crate) struct Cluster {
    pub nodes: Vec<Node>,
    _dir: tempfile::TempDir,
    // Dropped after the nodes (fields drop in order): they are killed first.
    _hold: Hold,
}

impl Cluster {
    pub(crate) fn start() -> Cluster {
        Cluster::start_with(&Opts::default())
    }

    pub(crate) fn start_with_env(env: &[(&str, &str)]) -> Cluster {
        Cluster::start_with(&Opts {
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Opts::default()
        })
    }

    pub(crate) fn start_with(opts: &Opts) -> Cluster {
        use std::sync::PoisonError;
        let hold = if opts.exclusive {
            Hold::Alone(RUNNING.write().unwrap_or_else(PoisonError::into_inner))
        } else {
            Hold::Shared(RUNNING.read().unwrap_or_else(PoisonError::into_inner))
        };
        let dir = tempfile::tempdir().unwrap();
        let ports: Vec<Ports> = (0..N)
            .map(|_| Ports {
                client: free_port(),
                peer: free_port(),
                admin: free_port(),
                recovery: free_port(),
            })
            .collect();
        let peers: String = ports
            .iter()
            .enumerate()
            .map(|(i, p)| {
                format!(
                    "[[cluster.peers]]\nid = {}\naddr = \"127.0.0.1:{}\"\nclient = \"127.0.0.1:{}\"\n\
                     recovery = \"127.0.0.1:{}\"\n",
                    i + 1,
                    p.peer,
                    p.client,
                    p.recovery
                )
            })
            .collect();
        // 20 ticks (200-400 ms) keeps the tests quick; `CLUSTER_ELECTION_TICKS=30`
        // measures failover with the shipped default.
        let election: usize = opts.election_ticks.unwrap_or_else(|| {
            std::env::var("CLUSTER_ELECTION_TICKS")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(20)
        });
        let snapshot_every = opts.snapshot_every.unwrap_or(64);
        let mut nodes = Vec::new();
        for (i, p) in ports.iter().enumerate() {
            let id = i as u64 + 1;
            let home = dir.path().join(format!("node{id}"));
            std::fs::create_dir_all(&home).unwrap();
            let config = home.join("exchange.toml");
            let raft = home.join("raft");
            let toml = format!(
                "listen = \"127.0.0.1:{}\"\nrecovery_listen = \"127.0.0.1:{}\"\nwait = \"park\"\n\
                 {}{}\
                 [journal]\ndir = {:?}\n\
                 [cluster]\nnode_id = {id}\nlisten = \"127.0.0.1:{}\"\nadmin_listen = \"127.0.0.1:{}\"\n\
                 election_ticks = {election}\nsnapshot_every = {snapshot_every}\nlog_retain = 32\n{peers}{}",
                p.client,
                p.recovery,
                opts.market_data
                    .as_ref()
                    .map_or("[market_data]\nenabled = false\n".to_string(), |t| {
                        format!("[market_data]\ntarget = \"{t}\"\n")
                    }),
                opts.extra,
                raft.display().to_string(),
                p.peer,
                p.admin,
                accounts_toml()
            );
            std::fs::write(&config, toml).unwrap();
            nodes.push(Node {
                id,
                config,
                log: home.join("exchange.log"),
                raft,
                peer: format!("127.0.0.1:{}", p.peer),
                client: SocketAddr::from(([127, 0, 0, 1], p.client)),
                admin: SocketAddr::from(([127, 0, 0, 1], p.admin)),
                recovery: SocketAddr::from(([127, 0, 0, 1], p.recovery)),
                child: None,
                env: opts.env.clone(),
            });
        }
        for n in &mut nodes {
            n.start();
        }
        Cluster {
            nodes,
            _dir: dir,
            _hold: hold,
        }
    }

    pub(crate) fn addrs(&self) -> Vec<SocketAddr> {
        self.nodes.iter().map(|n| n.client).collect()
    }

    /// The index of the node serving at `addr`.
    pub(crate) fn at(&self, addr: SocketAddr) -> usize {
        self.nodes.iter().position(|n| n.client == addr).unwrap()
    }

    pub(crate) fn login(&self, account: u32, resume_from: u64) -> (Connection, usize) {
        let (c, _, at) = Connection::connect_any(
            &self.addrs(),
            LoginParams::trading(AccountId(account), resume_from),
            key(account),
            Duration::from_secs(5),
            Duration::from_secs(30),
        )
        .unwrap_or_else(|e| panic!("no leader to log in at: {e}\n{}", self.logs()));
        (c, self.at(at))
    }

    pub(crate) fn logs(&self) -> String {
        self.nodes
            .iter()
            .map(|n| format!("--- node {} ---\n{}", n.id, n.log_text()))
            .collect()
    }

    /// Waits until every running node has applied the same engine seq with the same
    /// state hash; returns that seq.
    pub(crate) fn converged(&self, timeout: Duration) -> u64 {
        let until = Instant::now() + timeout;
        let mut last = Vec::new();
        while Instant::now() < until {
            last = self
                .nodes
                .iter()
                .filter(|n| n.child.is_some())
                .map(|n| {
                    n.status().and_then(|s| {
                        let c = s.get("current_state")?;
                        Some((c["engine_seq"].as_u64()?, c["hash"].as_str()?.to_string()))
                    })
                })
                .collect();
            if last.len() == N && last.iter().all(|s| s.is_some() && *s == last[0]) {
                return last[0].as_ref().unwrap().0;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("nodes did not converge: {last:?}\n{}", self.logs());
    }
}

impl Cluster {
    /// How many times a node took the leadership, from the logs ("Leader in term").
    pub(crate) fn leaderships(&self) -> usize {
        self.nodes
            .iter()
            .map(|n| n.log_text().matches(": Leader in term").count())
            .sum()
    }
}
