//! `peregrine exchange --cluster`: the exchange replicated over Raft
//! (`peregrine-cluster`, on raft-rs). docs/cluster.md has the whole story.
//!
//! ```text
//!  leader:   sessions ─▶ compact loop: match ─▶ ReplicatedLog ──batch──▶ node thread ──▶ peers
//!                         reports held until ◀── released ◀── ExchangeSm (replica) ◀── committed
//!  follower: node thread ──committed──▶ ExchangeSm (replica: the state); order entry redirects
//! ```
//!
//! * The leader executes each batch first, exactly as the single-node exchange does,
//!   and holds its reports; the batch is one Raft entry. Committed (a majority has it
//!   durable), it is applied by every node's replica, and the leader's replica then
//!   releases the batch's reports. "Durable" in the single-node loop means
//!   "replicated" here, with no change to the loop.
//! * Every node, the leader included, replays every committed batch into a replica
//!   core, which gives snapshots and state hashes at the same indices everywhere
//!   (the cluster layer compares them).
//! * A node serves only once it leads and has applied its log up to its own term.
//!   Losing the leadership stops the serving loop; whatever it executed that was not
//!   committed is dropped with the process state, and the node reopens its log from
//!   disk as a follower (a crash-only step-down).
//! * A follower answers order entry with `LeaderRedirect` ([`redirect`]).

mod admin;
mod batch;
pub(crate) mod log;
mod offline;
pub(crate) mod pump;
mod redirect;
mod run;
pub(crate) mod sm;

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use peregrine_cluster::Node;
use rustix::event::{eventfd, EventfdFlags};

pub use batch::{fuzz_decode as fuzz_decode_batch, BatchError};
pub use offline::{replay_cluster_log, ClusterReplay};
pub use run::run as run_cluster;

/// What the node thread, the serving loop and the redirector share.
#[derive(Debug)]
pub(crate) struct Shared {
    /// Engine seq of the last batch of this leadership that is committed and applied:
    /// the release watermark of the serving loop.
    released: AtomicU64,
    /// Set to stop the serving loop (deposed, failed, or the process stops).
    pub(crate) stop_serving: Arc<AtomicBool>,
    failed: AtomicBool,
    failure: Mutex<Option<String>>,
    /// Signalled when `released` advances (the compact loop watches it).
    wake: OwnedFd,
    /// What the node last saw (0: none), for redirects and status.
    leader: AtomicU64,
    term: AtomicU64,
    commit: AtomicU64,
    applied: AtomicU64,
    /// Engine seq of the last command the node's replica applied.
    engine_seq: AtomicU64,
    /// The serving loop runs on this node.
    serving: AtomicBool,
    /// The admin endpoint asks the node thread for the replica's state hash.
    hash_wanted: AtomicBool,
    hash: Mutex<Option<(u64, String)>>,
}

impl Shared {
    pub(crate) fn new() -> std::io::Result<Self> {
        Ok(Shared {
            released: AtomicU64::new(0),
            stop_serving: Arc::new(AtomicBool::new(false)),
            failed: AtomicBool::new(false),
            failure: Mutex::new(None),
            wake: eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?,
            leader: AtomicU64::new(0),
            term: AtomicU64::new(0),
            commit: AtomicU64::new(0),
            applied: AtomicU64::new(0),
            engine_seq: AtomicU64::new(0),
            serving: AtomicBool::new(false),
            hash_wanted: AtomicBool::new(false),
            hash: Mutex::new(None),
        })
    }

    /// Wakes the compact loop (the watermark advanced).
    fn signal(&self) {
        let _ = rustix::io::write(&self.wake, &1u64.to_ne_bytes());
    }

    fn wake_fd(&self) -> BorrowedFd<'_> {
        self.wake.as_fd()
    }

    /// Stops the serving loop; its unreleased reports never leave.
    fn depose(&self) {
        // Relaxed: the flag orders nothing else; the loop polls it.
        self.stop_serving.store(true, Ordering::Relaxed);
        self.signal();
    }

    /// The state machine cannot go on: stop serving and report `why`.
    fn fail(&self, why: String) {
        let mut f = self.failure.lock().unwrap_or_else(PoisonError::into_inner);
        if f.is_none() {
            *f = Some(why);
        }
        // Release: pairs with the Acquire in `failed`, after the reason is stored.
        self.failed.store(true, Ordering::Release);
        self.depose();
    }

    fn failed(&self) -> bool {
        // Acquire: pairs with the Release in `fail`.
        self.failed.load(Ordering::Acquire)
    }

    pub(crate) fn failure(&self) -> Option<String> {
        if !self.failed() {
            return None;
        }
        self.failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Records what the node knows now (the pump calls it every iteration).
    fn observe(&self, node: &Node<sm::ExchangeSm>) {
        // Relaxed: display values for redirects and status; they order nothing.
        self.leader
            .store(node.leader().unwrap_or(0), Ordering::Relaxed);
        self.term.store(node.term(), Ordering::Relaxed);
        self.commit.store(node.commit(), Ordering::Relaxed);
        self.applied.store(node.applied(), Ordering::Relaxed);
        self.engine_seq
            .store(node.sm().engine_seq(), Ordering::Relaxed);
    }

    fn serving(&self) -> bool {
        // Relaxed: a display value.
        self.serving.load(Ordering::Relaxed)
    }

    fn request_hash(&self) {
        *self.hash.lock().unwrap_or_else(PoisonError::into_inner) = None;
        // Release: the node thread sees the cleared slot before the request.
        self.hash_wanted.store(true, Ordering::Release);
    }

    fn take_hash(&self) -> Option<(u64, String)> {
        self.hash
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// On the node thread: answers a pending hash request.
    fn answer_hash(&self, node: &mut Node<sm::ExchangeSm>) {
        // Acquire: pairs with the Release in `request_hash`.
        if self.hash_wanted.swap(false, Ordering::Acquire) {
            let seq = node.sm().engine_seq();
            let hash = peregrine_cluster::hex(&node.sm_mut().state_hash_now());
            *self.hash.lock().unwrap_or_else(PoisonError::into_inner) = Some((seq, hash));
        }
    }

    fn engine_seq(&self) -> u64 {
        // Relaxed: see `observe`.
        self.engine_seq.load(Ordering::Relaxed)
    }

    fn leader(&self) -> u64 {
        // Relaxed: see `observe`.
        self.leader.load(Ordering::Relaxed)
    }
}
