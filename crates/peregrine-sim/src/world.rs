//! The simulated world's plumbing: the event queue ordered by simulated time, the
//! connections between clients and nodes (in order per direction, with delay), and
//! the shared clocks the venue reads.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use peregrine_exchange::stepped::ConnId;

/// Epoch nanoseconds at simulated time 0 (2027-01-15): engine times are real dates.
pub const EPOCH0: u64 = 1_800_000_000_000_000_000;

/// What happens at a point of simulated time.
#[derive(Debug)]
pub enum Ev {
    /// One iteration of node `.0`'s loop (incarnation `.1`).
    Step(usize, u64),
    /// Node `.0`'s group-commit `fdatasync` completes.
    Sync(usize, u64),
    /// Node `.0` restarts.
    Restart(usize),
    /// A client's connection attempt reaches node `.1`.
    Open(ConnId, usize),
    /// Bytes of a client reach its node.
    ToNode(ConnId, Vec<u8>),
    /// Bytes of a node reach its client.
    ToClient(ConnId, Vec<u8>),
    /// A client learns that its connection is gone.
    Gone(ConnId),
    /// Client `.0` decides what to do.
    Act(usize),
    /// The fault generator runs.
    Fault,
    /// Periodic checks (and, once faults stopped, the end of the run).
    Check,
    /// Cluster: Raft ticks every node.
    RaftTick,
    /// Cluster: a Raft message reaches node `.0` (sent while it was incarnation
    /// `.1`: a message for a process that died since is lost with its connection).
    Raft(usize, u64, Box<peregrine_cluster::Message>),
    /// Cluster: a partition heals.
    Heal,
    /// Subscriber `.0` joins the feed.
    MdJoin(usize),
    /// A feed packet reaches subscriber `.0`.
    MdPacket(usize, Vec<u8>),
    /// Subscriber `.0`'s recovery request (generation `.1`) reaches node `.2`.
    MdAsk(usize, u64, usize, Vec<u8>),
    /// The answer to subscriber `.0`'s request `.1` arrives (`None`: refused).
    MdAnswer(usize, u64, Option<Vec<u8>>),
    /// Subscriber `.0`'s backoff after failed request `.1` is over.
    MdRetry(usize, u64),
}

/// The event queue: earliest first, then in insertion order.
#[derive(Debug, Default)]
pub struct Queue {
    heap: BinaryHeap<Reverse<(u64, u64)>>,
    events: BTreeMap<u64, Ev>,
    seq: u64,
}

impl Queue {
    /// Schedules `ev` at `at`.
    pub fn push(&mut self, at: u64, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq)));
        self.events.insert(self.seq, ev);
    }

    /// The next event and its time.
    pub fn pop(&mut self) -> Option<(u64, Ev)> {
        let Reverse((at, seq)) = self.heap.pop()?;
        self.events.remove(&seq).map(|ev| (at, ev))
    }

    /// Events waiting.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

/// The clocks the venue reads, moved by the run.
#[derive(Debug, Clone)]
pub struct Clocks {
    /// Engine time, epoch ns.
    pub epoch: Arc<AtomicU64>,
    /// Session-layer time, ns since the run started.
    pub session: Arc<AtomicU64>,
}

impl Clocks {
    /// Both at simulated time 0.
    pub fn new() -> Self {
        Clocks {
            epoch: Arc::new(AtomicU64::new(EPOCH0)),
            session: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Simulated time is `now` ns.
    pub fn set(&self, now: u64) {
        // Relaxed: one thread; the values are the time.
        self.epoch.store(EPOCH0 + now, Ordering::Relaxed);
        self.session.store(now, Ordering::Relaxed);
    }
}

impl Default for Clocks {
    fn default() -> Self {
        Self::new()
    }
}

/// One client connection.
#[derive(Debug, Clone, Copy)]
pub struct Wire {
    /// The client.
    pub client: usize,
    /// The node.
    pub node: usize,
    /// The node's incarnation when it was opened.
    pub incarnation: u64,
    /// Latest delivery time scheduled towards the node / the client (TCP keeps
    /// order: nothing is delivered before what was sent earlier).
    pub to_node: u64,
    /// See `to_node`.
    pub to_client: u64,
    /// The client closed it (bytes from the node are dropped).
    pub closed: bool,
}
