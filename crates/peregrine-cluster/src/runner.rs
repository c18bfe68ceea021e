//! The I/O shell: one thread per node that owns the [`Node`] and its
//! [`TcpTransport`], ticks the clock, and takes commands (proposals, status,
//! membership, leadership transfer) from other threads through a channel plus a
//! wake-up. A [`Pump`] lets the service propose from inside the loop, with no
//! hand-off (what the exchange's event loop does, and what the bench does).
//!
//! The node's thread never blocks on the disk: the journal's `fdatasync`s run on a
//! [`Syncer`] thread, which wakes the loop when they are done. Both threads run at
//! `[cluster] nice` (shipped −10), so heartbeats, votes and acknowledgements are
//! scheduled ahead of client work on a busy machine. Snapshots are encoded and their
//! files written on a third thread (at normal priority): the node thread only copies
//! the state (`StateMachine::snapshot_copy`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::config::ClusterConfig;
use crate::error::ClusterError;
use crate::log::Syncer;
use crate::node::{Event, MembershipChange, Node, NodeOptions, Status};
use crate::os::{set_nice, utc_now};
use crate::sm::StateMachine;
use crate::transport::{TcpTransport, TransportOptions, TransportStats, Waker};

/// Called once per loop iteration, after inbound messages were stepped and before
/// the node's `Ready` is handled: propose here. Returns when it wants to run again.
pub trait Pump<M: StateMachine>: Send {
    /// Proposes whatever is due.
    fn pump(&mut self, node: &mut Node<M>, now: Instant) -> Option<Instant>;
}

type Reply<T> = Sender<T>;

enum Command {
    Propose(Vec<u8>, Reply<Result<u64, ClusterError>>),
    Change(MembershipChange, Reply<Result<(), ClusterError>>),
    Transfer(u64),
    Campaign,
    Status(Reply<(Status, TransportStats)>),
    Stop,
}

/// A running node.
#[derive(Debug)]
pub struct RunnerHandle<M> {
    tx: Sender<Command>,
    waker: Waker,
    addr: SocketAddr,
    join: Option<JoinHandle<Result<M, ClusterError>>>,
}

/// Opens the node in `dir` with `config` and runs it on its own thread.
pub fn spawn<M: StateMachine + Send + 'static>(
    dir: PathBuf,
    config: &ClusterConfig,
    sm: M,
    pump: Option<Box<dyn Pump<M>>>,
) -> Result<RunnerHandle<M>, ClusterError> {
    config.validate().map_err(ClusterError::Config)?;
    let mut node = Node::open(&dir, NodeOptions::from_config(config), sm)?;
    let mut topts = TransportOptions::new(config.node_id, config.cluster_id);
    topts.max_frame_bytes = config.max_frame_bytes;
    topts.send_buffer_bytes = config.send_buffer_bytes;
    let transport = TcpTransport::bind(topts, &config.listen)
        .map_err(|e| ClusterError::Config(vec![format!("listen {}: {e}", config.listen)]))?;
    let addr = transport.local_addr();
    let waker = transport.waker();
    let nice = (config.nice != 0).then_some(config.nice);
    let syncer = Syncer::spawn(node.durable().journal(), waker.clone(), nice)
        .map_err(|e| ClusterError::Config(vec![format!("spawn the sync thread: {e}")]))?;
    node.set_snapshot_runner(snapshot_thread(config.node_id, waker.clone())?);
    let (tx, rx) = channel();
    let tick = config.tick();
    let election_ticks = config.election_ticks;
    let id = config.node_id;
    let join = std::thread::Builder::new()
        .name(format!("cluster-node-{id}"))
        .spawn(move || {
            if let Some(n) = nice {
                set_nice("cluster-node", n);
            }
            Loop {
                node,
                transport,
                syncer,
                rx,
                tick,
                stall_warn: tick.saturating_mul(u32::try_from(election_ticks).unwrap_or(u32::MAX))
                    / 2,
                pump,
            }
            .run()
        })
        .map_err(|e| ClusterError::Config(vec![format!("spawn: {e}")]))?;
    Ok(RunnerHandle {
        tx,
        waker,
        addr,
        join: Some(join),
    })
}

/// A thread that encodes the node's snapshots and writes their files (one at a time: the node starts
/// the next only after the last is done) and wakes the node's loop after each.
/// It ends when the node is dropped.
fn snapshot_thread(id: u64, waker: Waker) -> Result<crate::node::SnapshotRunner, ClusterError> {
    let (tx, rx) = channel::<Box<dyn FnOnce() + Send>>();
    std::thread::Builder::new()
        .name(format!("cluster-snap-{id}"))
        .spawn(move || {
            for job in rx {
                job();
                waker.wake();
            }
        })
        .map_err(|e| ClusterError::Config(vec![format!("spawn the snapshot thread: {e}")]))?;
    Ok(Box::new(move |job| {
        let _ = tx.send(job);
    }))
}

impl<M> RunnerHandle<M> {
    /// The peer address the node listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    fn call<T>(&self, make: impl FnOnce(Reply<T>) -> Command) -> Option<T> {
        let (tx, rx) = channel();
        self.tx.send(make(tx)).ok()?;
        self.waker.wake();
        rx.recv_timeout(Duration::from_secs(30)).ok()
    }

    /// Wakes the node's loop (a [`Pump`] has something to propose).
    pub fn waker(&self) -> Waker {
        self.waker.clone()
    }

    /// Proposes `data` (leader only); the index it will have.
    pub fn propose(&self, data: Vec<u8>) -> Result<u64, ClusterError> {
        self.call(|r| Command::Propose(data, r))
            .unwrap_or(Err(ClusterError::NotLeader { leader: None }))
    }

    /// Proposes a membership change (leader only).
    pub fn change(&self, change: MembershipChange) -> Result<(), ClusterError> {
        self.call(|r| Command::Change(change, r))
            .unwrap_or(Err(ClusterError::NotLeader { leader: None }))
    }

    /// Asks the leader to hand over to `to`.
    pub fn transfer_leader(&self, to: u64) {
        let _ = self.tx.send(Command::Transfer(to));
        self.waker.wake();
    }

    /// Starts an election on this node.
    pub fn campaign(&self) {
        let _ = self.tx.send(Command::Campaign);
        self.waker.wake();
    }

    /// The node's status and transport counters (`None` if the node stopped).
    pub fn status(&self) -> Option<(Status, TransportStats)> {
        self.call(Command::Status)
    }

    /// Stops the node and returns its state machine (or the error that stopped it).
    pub fn stop(mut self) -> Result<M, ClusterError> {
        let _ = self.tx.send(Command::Stop);
        self.waker.wake();
        match self.join.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            _ => Err(ClusterError::StateMachine("node thread panicked".into())),
        }
    }
}

struct Loop<M: StateMachine> {
    node: Node<M>,
    transport: TcpTransport,
    syncer: Syncer,
    rx: Receiver<Command>,
    tick: Duration,
    /// A pass of the loop longer than this (half the shortest election timeout) is
    /// logged: the node read and answered nothing meanwhile.
    stall_warn: Duration,
    pump: Option<Box<dyn Pump<M>>>,
}

impl<M: StateMachine> Loop<M> {
    fn run(mut self) -> Result<M, ClusterError> {
        let mut next_tick = Instant::now() + self.tick;
        let mut pump_at: Option<Instant> = None;
        let mut inbox = Vec::new();
        let mut out = Vec::new();
        self.events(Duration::ZERO);
        loop {
            let now = Instant::now();
            let deadline = pump_at.map_or(next_tick, |p| p.min(next_tick));
            // Committed entries left to apply: look at the network, do not wait.
            let wait = if self.node.apply_backlog() > 0 {
                Duration::ZERO
            } else {
                deadline.saturating_duration_since(now)
            };
            self.transport
                .poll(wait, &mut inbox)
                .map_err(|e| ClusterError::Config(vec![format!("poll: {e}")]))?;
            let pass = Instant::now();
            for m in inbox.drain(..) {
                self.node.step(m);
            }
            while let Ok(cmd) = self.rx.try_recv() {
                if !self.command(cmd) {
                    self.node.advance()?;
                    self.node.poll_snapshot(true)?;
                    return Ok(self.into_sm());
                }
            }
            if self.syncer.failed() {
                return Err(ClusterError::StateMachine(
                    "the journal's fdatasync failed: stopping".into(),
                ));
            }
            self.node.synced(self.syncer.durable())?;
            let now = Instant::now();
            if now >= next_tick {
                self.node.tick();
                next_tick += self.tick;
                if next_tick < now {
                    next_tick = now + self.tick; // stalled: do not replay missed ticks
                }
            }
            if let Some(p) = self.pump.as_mut() {
                pump_at = p.pump(&mut self.node, now);
            }
            loop {
                self.node.advance()?;
                self.node.drain_messages(&mut out);
                for m in out.drain(..) {
                    self.transport.send(&m);
                }
                self.transport.flush();
                let unreachable = self.transport.take_unreachable();
                let reports = self.transport.take_snapshot_reports();
                if unreachable.is_empty() && reports.is_empty() {
                    break;
                }
                for id in unreachable {
                    self.node.report_unreachable(id);
                }
                for (id, ok) in reports {
                    self.node.report_snapshot(id, ok);
                }
            }
            if let Some(seq) = self.node.sync_target() {
                self.syncer
                    .request(self.node.durable().journal(), seq)
                    .map_err(|e| ClusterError::Config(vec![format!("sync request: {e}")]))?;
            }
            self.events(pass.elapsed());
        }
    }

    fn into_sm(self) -> M {
        self.node.into_sm()
    }

    fn command(&mut self, cmd: Command) -> bool {
        match cmd {
            Command::Propose(data, r) => {
                let _ = r.send(self.node.propose(&data));
            }
            Command::Change(c, r) => {
                let _ = r.send(self.node.propose_change(&c));
            }
            Command::Transfer(to) => self.node.transfer_leader(to),
            Command::Campaign => {
                let _ = self.node.campaign();
            }
            Command::Status(r) => {
                let _ = r.send((self.node.status(), self.transport.stats().clone()));
            }
            Command::Stop => return false,
        }
        true
    }

    /// Acts on the node's events; `busy`: how long this pass of the loop kept the
    /// node from the network.
    fn events(&mut self, busy: Duration) {
        let id = self.node.id();
        let mut snapshot = None;
        for ev in self.node.take_events() {
            match ev {
                Event::PeerAdded { id, addr } => self.transport.set_peer(id, &addr),
                Event::PeerRemoved { id } => self.transport.remove_peer(id),
                Event::RoleChanged { role, leader, term } => {
                    eprintln!(
                        "{} cluster[{id}]: {role:?} in term {term}, leader {leader:?}",
                        utc_now()
                    );
                }
                Event::HashMismatch { index } => {
                    eprintln!(
                        "{} cluster[{id}]: STATE HASH MISMATCH at index {index}: replicas diverged",
                        utc_now()
                    );
                }
                Event::Removed => {
                    eprintln!("{} cluster[{id}]: removed from the cluster", utc_now())
                }
                Event::SnapshotInstalled { index } => {
                    eprintln!(
                        "{} cluster[{id}]: installed the leader's snapshot at index {index}",
                        utc_now()
                    );
                }
                Event::SnapshotTaken { index, .. } => snapshot = Some(index),
            }
        }
        if busy > self.stall_warn {
            let what = snapshot.map_or(String::new(), |i| format!(", snapshot at index {i}"));
            eprintln!(
                "{} cluster[{id}]: busy {} ms without reading the network (applied to {}{what}): \
                 peers heard nothing from this node meanwhile",
                utc_now(),
                busy.as_millis(),
                self.node.applied()
            );
        }
    }
}
