//! One run: the event loop over the nodes, the clients and the faults, until the
//! first broken invariant or the end of the settle phase.

mod checks;
mod cluster;
mod feed;

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Instant;

use peregrine_exchange::stepped::{
    ConnId, ConnState, Environment, StepOptions, SteppedClusterNode, SteppedVenue,
};
use peregrine_exchange::Config;
use peregrine_types::{AccountId, Rng};
use peregrine_wire::auth::AccountKey;

use crate::client::{Client, Role};
use crate::disk::{Crash, DiskFaults, SimDisk};
use crate::knobs::SimConfig;
use crate::oracle::Oracle;
use crate::trace::{take_logs, Trace};
use crate::venue;
use crate::world::{Clocks, Ev, Queue, Wire};

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

/// The invariant a panic breaks.
pub(crate) const PANIC: &str = "no panic in the venue's code";

/// The first broken invariant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Which invariant.
    pub invariant: &'static str,
    /// What was seen.
    pub detail: String,
    /// Simulated time, ns.
    pub at: u64,
}

/// How a run ended.
#[derive(Debug)]
pub struct Outcome {
    /// The run's config.
    pub config: SimConfig,
    /// `None`: every invariant held and everything recovered.
    pub violation: Option<Violation>,
    /// The last events before the end (with the violation: what led to it).
    pub recent: Vec<String>,
    /// Hash of every event: equal for two runs of one seed.
    pub trace_hash: String,
    /// Counters.
    pub stats: RunStats,
}

/// What a run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Simulated time, ms.
    pub sim_ms: u64,
    /// Events handled.
    pub events: u64,
    /// Commands the venue sequenced (the last node's engine seq).
    pub commands: u64,
    /// Reports the oracle recorded.
    pub reports: u64,
    /// Crashes, of which power losses.
    pub crashes: u64,
    /// See `crashes`.
    pub power_losses: u64,
    /// Restarts that failed (and were retried).
    pub failed_starts: u64,
    /// Client disconnects injected.
    pub disconnects: u64,
    /// Retention probes run.
    pub probes: u64,
}

/// A node's process.
pub(crate) enum Proc {
    /// A single venue.
    Single(Box<SteppedVenue>),
    /// A cluster node (serving while it leads).
    Cluster(Box<SteppedClusterNode>),
}

/// One node: its disk and, while up, its process.
pub(crate) struct Node {
    pub(crate) disk: SimDisk,
    pub(crate) proc: Option<Proc>,
    pub(crate) incarnation: u64,
    pub(crate) next_step: Option<u64>,
    /// The loop's last step found nothing to do: it parked, and its next step (the
    /// park's end, or whatever woke it) does the idle chores (the server's loop).
    pub(crate) parked: bool,
    pub(crate) sync_at: Option<u64>,
    pub(crate) config: Config,
    pub(crate) failed_starts: u32,
    /// Failures of the running process (its loop or its node) in a row.
    pub(crate) failures: u32,
    pub(crate) down_since: Option<u64>,
}

impl Node {
    /// Whether the process runs.
    pub(crate) fn up(&self) -> bool {
        self.proc.is_some()
    }

    /// The venue that serves order entry here, if any.
    pub(crate) fn venue(&mut self) -> Option<&mut SteppedVenue> {
        match self.proc.as_mut()? {
            Proc::Single(v) => Some(v),
            Proc::Cluster(c) => c.serving(),
        }
    }

    /// See [`Node::venue`].
    pub(crate) fn venue_ref(&self) -> Option<&SteppedVenue> {
        match self.proc.as_ref()? {
            Proc::Single(v) => Some(v),
            Proc::Cluster(c) => c.serving_ref(),
        }
    }

    /// The cluster node, if this is one and it runs.
    pub(crate) fn cluster(&mut self) -> Option<&mut SteppedClusterNode> {
        match self.proc.as_mut()? {
            Proc::Cluster(c) => Some(c),
            Proc::Single(_) => None,
        }
    }
}

/// The run's state.
pub(crate) struct Sim {
    pub(crate) cfg: SimConfig,
    pub(crate) rng: Rng,
    pub(crate) now: u64,
    pub(crate) queue: Queue,
    pub(crate) clocks: Clocks,
    base: Instant,
    pub(crate) nodes: Vec<Node>,
    pub(crate) clients: Vec<Client>,
    pub(crate) keys: BTreeMap<AccountId, AccountKey>,
    pub(crate) oracle: Oracle,
    pub(crate) trace: Trace,
    pub(crate) wires: BTreeMap<ConnId, Wire>,
    next_conn: ConnId,
    pub(crate) violation: Option<Violation>,
    pub(crate) cluster: cluster::ClusterState,
    /// Faults stopped: everything must now recover.
    pub(crate) settling: bool,
    pub(crate) done: bool,
    pub(crate) stats: RunStats,
    /// Per asset id, what every account holds in all (balances on).
    pub(crate) supply: BTreeMap<u32, i128>,
    /// The market-data subscribers.
    pub(crate) md: feed::Md,
    /// A generator apart from `rng` for faults added later (their draws move no
    /// earlier choice of a seed).
    pub(crate) aux: Rng,
}

impl Sim {
    pub(crate) fn new(cfg: SimConfig) -> Self {
        let keys = venue::keys(&cfg);
        let mut rng = Rng::new(cfg.seed);
        let nodes = (0..cfg.nodes)
            .map(|n| Node {
                disk: SimDisk::new(rng.next_u64(), DiskFaults::default()),
                proc: None,
                incarnation: 0,
                next_step: None,
                parked: false,
                sync_at: None,
                config: venue::config(&cfg, n, &keys),
                failed_starts: 0,
                failures: 0,
                down_since: Some(0),
            })
            .collect();
        let mut clients: Vec<Client> = keys
            .iter()
            .enumerate()
            .map(|(i, (a, k))| {
                let role = if *a == venue::OPERATOR {
                    Role::DropCopy
                } else {
                    Role::Trader
                };
                Client::new(i, role, *a, k.clone(), 1)
            })
            .collect();
        for c in &mut clients {
            c.retry_at = rng.below(20 * MS);
        }
        Sim {
            oracle: Oracle::new(cfg.retain),
            rng,
            now: 0,
            queue: Queue::default(),
            clocks: Clocks::new(),
            base: Instant::now(),
            nodes,
            clients,
            keys: keys.into_iter().collect(),
            trace: {
                let mut t = Trace::default();
                t.echo = cfg.verbose || std::env::var_os("PEREGRINE_SIM_ECHO").is_some();
                t
            },
            wires: BTreeMap::new(),
            next_conn: 1,
            violation: None,
            cluster: cluster::ClusterState::default(),
            settling: false,
            done: false,
            stats: RunStats::default(),
            supply: venue::supply(&cfg),
            md: feed::Md::new(cfg.seed, cfg.subscribers),
            aux: Rng::new(cfg.seed ^ 0xADD5_BAC4_0000_0004),
            cfg,
        }
    }

    pub(crate) fn note(&mut self, what: String) {
        self.trace.event(self.now, what);
    }

    /// Records the first broken invariant (the run stops).
    pub(crate) fn fail(&mut self, invariant: &'static str, detail: String) {
        if self.violation.is_none() {
            self.note(format!("VIOLATION {invariant}: {detail}"));
            self.violation = Some(Violation {
                invariant,
                detail,
                at: self.now,
            });
        }
    }

    fn drain_logs(&mut self, node: usize) {
        for line in take_logs() {
            self.note(format!("node {node} log: {line}"));
        }
    }

    /// Runs to the end.
    pub(crate) fn run(mut self) -> Outcome {
        #[cfg(feature = "sabotage")]
        peregrine_ledger::sabotage::leak_fees(self.cfg.sabotage_ledger);
        for n in 0..self.nodes.len() {
            self.queue.push(0, Ev::Restart(n));
        }
        for c in 0..self.clients.len() {
            let at = self.clients[c].retry_at;
            self.queue.push(at, Ev::Act(c));
        }
        self.queue.push(self.cfg.faults.tick_ms * MS, Ev::Fault);
        self.queue.push(50 * MS, Ev::Check);
        self.md_start();
        if self.nodes.len() > 1 {
            self.queue.push(10 * MS, Ev::RaftTick);
        }
        while let Some((at, ev)) = self.queue.pop() {
            self.now = at;
            self.clocks.set(at);
            self.stats.events += 1;
            // A panic in the production code (or raft-rs under it) is a finding like
            // any other: reported with the seed and the events before it.
            let handled =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.handle(ev)));
            if let Err(p) = handled {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_string()))
                    .unwrap_or_else(|| "a panic".into());
                self.fail(PANIC, msg);
            }
            if self.violation.is_some() || self.done {
                break;
            }
        }
        self.finish()
    }

    fn finish(mut self) -> Outcome {
        #[cfg(feature = "sabotage")]
        peregrine_ledger::sabotage::leak_fees(false);
        self.stats.sim_ms = self.now / MS;
        self.stats.reports = self.oracle.reports;
        self.stats.commands = self
            .nodes
            .iter()
            .filter_map(|n| n.venue_ref().map(SteppedVenue::engine_seq))
            .max()
            .unwrap_or(0);
        Outcome {
            violation: self.violation.take(),
            recent: self.trace.recent().cloned().collect(),
            trace_hash: self.trace.hash(),
            stats: self.stats,
            config: self.cfg,
        }
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::Step(n, inc) => self.step(n, inc),
            Ev::Sync(n, inc) => self.sync(n, inc),
            Ev::Restart(n) => self.restart(n),
            Ev::Open(conn, n) => self.open(conn, n),
            Ev::ToNode(conn, bytes) => self.deliver_to_node(conn, &bytes),
            Ev::ToClient(conn, bytes) => self.deliver_to_client(conn, &bytes),
            Ev::Gone(conn) => self.gone(conn),
            Ev::Act(c) => self.act(c),
            Ev::Fault => self.fault(),
            Ev::Check => self.check(),
            Ev::RaftTick => self.raft_tick(),
            Ev::Raft(n, inc, m) => self.raft_message(n, inc, *m),
            Ev::Heal => self.heal_all(),
            Ev::MdJoin(s) => self.md_join(s),
            Ev::MdPacket(s, p) => self.md_packet(s, &p),
            Ev::MdAsk(s, gen, n, req) => self.md_ask(s, gen, n, req),
            Ev::MdAnswer(s, gen, a) => self.md_answer(s, gen, a),
            Ev::MdRetry(s, gen) => self.md_retry(s, gen),
        }
    }

    /// Schedules a step of node `n` at `at` unless one is due earlier.
    pub(crate) fn wake(&mut self, n: usize, at: u64) {
        let node = &mut self.nodes[n];
        if node.venue_ref().is_none() || node.next_step.is_some_and(|t| t <= at) {
            return;
        }
        node.next_step = Some(at);
        self.queue.push(at, Ev::Step(n, node.incarnation));
    }

    fn step(&mut self, n: usize, inc: u64) {
        let node = &mut self.nodes[n];
        if node.incarnation != inc || node.next_step != Some(self.now) {
            return;
        }
        node.next_step = None;
        let parked = node.parked;
        let Some(v) = node.venue() else {
            return;
        };
        // As the server's loop: a step that found nothing parks until input, a
        // sync, or the loop's own next deadline (an expiry, a book timer; at most
        // 10 ms); the step that ends the park does the idle chores (the feed's
        // forced flush among them).
        let result = v.step(parked);
        let park = v.park_for();
        self.drain_logs(n);
        match result {
            Ok(busy) => {
                self.nodes[n].parked = !busy;
                self.after_step(n);
                let park = u64::try_from(park.as_nanos()).unwrap_or(10 * MS);
                let next = if busy {
                    5 * US
                } else {
                    park.clamp(US, 10 * MS)
                };
                self.wake(n, self.now + next);
                if busy && self.nodes.len() > 1 {
                    // The batch went to the node thread: it proposes it.
                    self.advance(n);
                }
            }
            Err(e) => {
                self.note(format!("node {n} stopped: {e}"));
                self.failed(n, &e.to_string());
                self.kill(n, Crash::Process, "its loop failed");
            }
        }
    }

    /// After a step: the output goes out, a sync is scheduled, the books are checked.
    fn after_step(&mut self, n: usize) {
        let Some(v) = self.nodes[n].venue() else {
            return;
        };
        let conns = v.conns();
        for conn in conns {
            let Some(w) = self.wires.get(&conn).copied() else {
                continue;
            };
            let v = self.nodes[n].venue().expect("up");
            let deaf = self.clients[w.client].deaf_until > self.now;
            let bytes = if deaf || w.closed {
                Vec::new()
            } else {
                v.take_output(conn, 64 << 10)
            };
            let closed = v.conn_state(conn) == ConnState::Closed;
            if !bytes.is_empty() {
                let at = self.client_delay(conn, false);
                self.queue.push(at, Ev::ToClient(conn, bytes));
            }
            if closed && !deaf {
                let at = self.client_delay(conn, false);
                self.queue.push(at, Ev::Gone(conn));
                if let Some(w) = self.wires.get_mut(&conn) {
                    w.closed = true;
                }
            }
        }
        let v = self.nodes[n].venue_ref().expect("up");
        if v.sync_wanted() && self.nodes[n].sync_at.is_none() {
            let latency = if self.rng.chance(1, 100) {
                self.rng.range(2 * MS, 20 * MS)
            } else {
                self.rng.range(50 * US, 600 * US)
            };
            let at = self.now + latency;
            self.nodes[n].sync_at = Some(at);
            let inc = self.nodes[n].incarnation;
            self.queue.push(at, Ev::Sync(n, inc));
        }
        checks::books(self, n);
        checks::conservation(self, n);
        self.feed_out(n);
    }

    fn sync(&mut self, n: usize, inc: u64) {
        let node = &mut self.nodes[n];
        if node.incarnation != inc {
            return;
        }
        node.sync_at = None;
        if let Some(v) = node.venue() {
            v.sync_now();
        }
        self.drain_logs(n);
        self.wake(n, self.now);
    }

    /// Delivery time of the next bytes of `conn`, in order with earlier ones.
    pub(crate) fn client_delay(&mut self, conn: ConnId, to_node: bool) -> u64 {
        let d = self.now + self.rng.range(20 * US, 200 * US);
        let Some(w) = self.wires.get_mut(&conn) else {
            return d;
        };
        let last = if to_node {
            &mut w.to_node
        } else {
            &mut w.to_client
        };
        *last = (*last).max(d);
        *last
    }

    /// Node `n`'s process failed on its own (not a crash injected): many failures in
    /// a row with no fault that explains them is a node that cannot run.
    pub(crate) fn failed(&mut self, n: usize, why: &str) {
        self.nodes[n].failures += 1;
        if self.nodes[n].failures > 20 {
            self.fail(
                "liveness: a node that restarts",
                format!("node {n} fails every time it runs: {why}"),
            );
        }
    }

    /// Node `n` dies (`how`), its connections with it.
    pub(crate) fn kill(&mut self, n: usize, how: Crash, why: &str) {
        let node = &mut self.nodes[n];
        if !node.up() {
            return;
        }
        node.disk.crash(how);
        node.incarnation += 1;
        node.proc = None;
        node.next_step = None;
        node.parked = false;
        node.sync_at = None;
        node.down_since = Some(self.now);
        self.drain_logs(n);
        self.note(format!("node {n} crashed ({how:?}): {why}"));
        checks::tail_guard(self, n);
        let dead: Vec<ConnId> = self
            .wires
            .iter()
            .filter(|(_, w)| w.node == n)
            .map(|(c, _)| *c)
            .collect();
        for conn in dead {
            let at = self.client_delay(conn, false);
            self.queue.push(at, Ev::Gone(conn));
        }
        let down = if self.settling {
            10 * MS
        } else {
            self.rng.range(MS, self.cfg.faults.down_ms.max(1) * MS)
        };
        self.queue.push(self.now + down, Ev::Restart(n));
    }

    fn restart(&mut self, n: usize) {
        if self.nodes[n].up() {
            return;
        }
        let env = Environment {
            storage: self.nodes[n].disk.storage(),
            epoch_ns: self.clocks.epoch.clone(),
            session_ns: self.clocks.session.clone(),
            base: self.base,
            seed: self.rng.next_u64(),
        };
        let opts = StepOptions {
            #[cfg(feature = "sabotage")]
            sabotage: self.cfg.sabotage,
            ..StepOptions::default()
        };
        let started = if self.cfg.nodes == 1 {
            SteppedVenue::start(&self.nodes[n].config, &env, opts)
                .map(|v| Proc::Single(Box::new(v)))
        } else {
            SteppedClusterNode::open(&self.nodes[n].config, &env, opts)
                .map(|c| Proc::Cluster(Box::new(c)))
        };
        self.drain_logs(n);
        match started {
            Ok(p) => {
                let node = &mut self.nodes[n];
                node.proc = Some(p);
                node.failed_starts = 0;
                node.down_since = None;
                self.note(format!("node {n} started"));
                self.wake(n, self.now);
            }
            Err(e) => {
                self.stats.failed_starts += 1;
                self.nodes[n].failed_starts += 1;
                self.note(format!("node {n} failed to start: {e}"));
                if self.nodes[n].failed_starts > 20 {
                    self.fail(
                        "liveness: a node that restarts",
                        format!("node {n} cannot start: {e}"),
                    );
                    return;
                }
                self.queue.push(self.now + 50 * MS, Ev::Restart(n));
            }
        }
    }

    /// A client's attempt reaches node `n`.
    fn open(&mut self, conn: ConnId, n: usize) {
        let Some(v) = self.nodes[n].venue() else {
            let at = self.client_delay(conn, false);
            self.queue.push(at, Ev::Gone(conn));
            return;
        };
        let client = self.wires[&conn].client;
        let peer = SocketAddr::from((Ipv4Addr::new(10, 0, 0, client as u8), 40_000));
        v.connect(conn, peer);
        self.wake(n, self.now);
    }

    fn deliver_to_node(&mut self, conn: ConnId, bytes: &[u8]) {
        let Some(w) = self.wires.get(&conn).copied() else {
            return;
        };
        if self.nodes[w.node].incarnation != w.incarnation {
            return;
        }
        if let Some(v) = self.nodes[w.node].venue() {
            v.send(conn, bytes);
            self.wake(w.node, self.now + 2 * US);
        }
    }

    fn deliver_to_client(&mut self, conn: ConnId, bytes: &[u8]) {
        let Some(w) = self.wires.get(&conn).copied() else {
            return;
        };
        let c = w.client;
        let owned = self.clients[c]
            .link
            .as_ref()
            .is_some_and(|l| l.conn == conn);
        if !owned {
            return;
        }
        self.trace.fold(bytes);
        let out = self.clients[c].on_bytes(bytes, &mut self.oracle, self.now);
        match out {
            Ok(out) => self.client_out(c, out),
            Err((invariant, e)) => self.fail(invariant, e),
        }
    }

    /// Sends what a client produced; closes if it asked to.
    pub(crate) fn client_out(&mut self, c: usize, out: crate::client::Out) {
        for n in out.notes {
            self.note(n);
        }
        let Some(conn) = self.clients[c].link.as_ref().map(|l| l.conn) else {
            return;
        };
        if !out.send.is_empty() {
            let at = self.client_delay(conn, true);
            self.queue.push(at, Ev::ToNode(conn, out.send));
        }
        if out.close {
            self.client_close(c);
        }
    }

    /// Client `c` closes its connection.
    pub(crate) fn client_close(&mut self, c: usize) {
        let Some(link) = self.clients[c].link.take() else {
            return;
        };
        self.clients[c].disconnected();
        if let Some(w) = self.wires.get_mut(&link.conn) {
            w.closed = true;
            let (n, inc) = (w.node, w.incarnation);
            if self.nodes[n].incarnation == inc {
                if let Some(v) = self.nodes[n].venue() {
                    v.close(link.conn);
                    self.wake(n, self.now + 2 * US);
                }
            }
        }
        self.clients[c].retry_at = if self.clients[c].role == Role::Probe {
            u64::MAX
        } else {
            self.now + self.rng.range(MS, 30 * MS)
        };
    }

    fn gone(&mut self, conn: ConnId) {
        let Some(w) = self.wires.remove(&conn) else {
            return;
        };
        let c = w.client;
        if self.clients[c]
            .link
            .as_ref()
            .is_some_and(|l| l.conn == conn)
        {
            self.note(format!("client {c}: connection {conn} closed"));
            self.clients[c].disconnected();
            self.clients[c].retry_at = if self.clients[c].role == Role::Probe {
                u64::MAX
            } else {
                self.now + self.rng.range(MS, 30 * MS)
            };
        }
    }

    /// Opens a connection for client `c` to node `n`.
    pub(crate) fn connect(&mut self, c: usize, n: usize) {
        let conn = self.next_conn;
        self.next_conn += 1;
        let inc = self.nodes[n].incarnation;
        self.wires.insert(
            conn,
            Wire {
                client: c,
                node: n,
                incarnation: inc,
                to_node: 0,
                to_client: 0,
                closed: false,
            },
        );
        self.clients[c].connected(n, conn);
        let at = self.client_delay(conn, true);
        self.queue.push(at, Ev::Open(conn, n));
    }

    fn act(&mut self, c: usize) {
        let client = &self.clients[c];
        if client.retry_at == u64::MAX {
            return;
        }
        if client.link.is_none() {
            if self.now >= client.retry_at {
                let n = self.pick_node(c);
                self.connect(c, n);
            }
        } else {
            let epoch = crate::world::EPOCH0 + self.now;
            let trade = !self.settling;
            let out = self.clients[c].act(&mut self.rng, &mut self.oracle, self.now, epoch, trade);
            self.client_out(c, out);
        }
        let next = match self.clients[c].role {
            Role::Trader => self.rng.range(200 * US, 4 * MS),
            _ => 20 * MS,
        };
        self.queue.push(self.now + next, Ev::Act(c));
    }

    /// Which node a client tries.
    pub(crate) fn pick_node(&mut self, _c: usize) -> usize {
        if self.nodes.len() == 1 {
            0
        } else {
            self.rng.below(self.nodes.len() as u64) as usize
        }
    }
}
