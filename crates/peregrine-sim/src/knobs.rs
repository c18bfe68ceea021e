//! What a run simulates: the venue's shape, the clients, and the faults (rates drawn
//! from the seed). [`SimConfig::for_seed`] varies the shape with the seed too, so a
//! few hundred random seeds cover journal policies, snapshot intervals, retention and
//! fault mixes; a run given on the command line can pin any of them.

use peregrine_journal::FsyncPolicy;
use peregrine_types::Rng;

/// Fault rates. Each is per thousand, per fault tick (every [`Faults::tick_ms`] of
/// simulated time), unless it says otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Faults {
    /// Simulated milliseconds between fault ticks.
    pub tick_ms: u64,
    /// A node crashes.
    pub crash: u64,
    /// Of crashes, how many are power losses (the rest: `kill -9`), per thousand.
    pub power: u64,
    /// Milliseconds a crashed node stays down, at most.
    pub down_ms: u64,
    /// A client drops its connection (and reconnects later, resuming its stream).
    pub disconnect: u64,
    /// A client stops reading for a while (a slow reader).
    pub slow_reader: u64,
    /// A fresh session logs in from an old report position (the retention probe).
    pub audit: u64,
    /// Disk: an `fdatasync` fails with `EIO` (per thousand syncs).
    pub sync_eio: u64,
    /// Disk: a read returns a flipped bit (per thousand reads).
    pub read_flip: u64,
    /// Disk: the disk fills up for a while.
    pub disk_full: u64,
    /// Disk, at a power loss: a dirty page reached the disk anyway / torn (per
    /// thousand pages).
    pub writeback: u64,
    /// See `writeback`.
    pub torn: u64,
    /// Cluster: a partition between nodes (and its heal).
    pub partition: u64,
    /// Cluster: the leader hands over to another node.
    pub transfer: u64,
    /// Cluster: a node's disk is lost; it is removed, wiped, rejoined as a learner and
    /// promoted.
    pub wipe: u64,
    /// Cluster: a node is removed and added back (learner, then promoted) with its
    /// disk intact, restarted while out or as a learner, or left running.
    pub readd: u64,
    /// Network: a message between nodes, or a feed packet, is lost / duplicated /
    /// delayed out of order (per thousand messages).
    pub loss: u64,
    /// See `loss`.
    pub dup: u64,
    /// See `loss`.
    pub reorder: u64,
}

impl Faults {
    /// No faults at all (a run that must simply work).
    pub fn none() -> Self {
        Faults {
            tick_ms: 10,
            crash: 0,
            power: 0,
            down_ms: 0,
            disconnect: 0,
            slow_reader: 0,
            audit: 50,
            sync_eio: 0,
            read_flip: 0,
            disk_full: 0,
            writeback: 0,
            torn: 0,
            partition: 0,
            transfer: 0,
            wipe: 0,
            readd: 0,
            loss: 0,
            dup: 0,
            reorder: 0,
        }
    }

    /// The default mix.
    pub fn standard() -> Self {
        Faults {
            tick_ms: 10,
            crash: 12,
            power: 500,
            down_ms: 300,
            disconnect: 40,
            slow_reader: 10,
            audit: 50,
            sync_eio: 2,
            read_flip: 1,
            disk_full: 3,
            writeback: 300,
            torn: 150,
            partition: 10,
            transfer: 8,
            wipe: 3,
            readd: 3,
            loss: 20,
            dup: 10,
            reorder: 30,
        }
    }
}

/// One run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimConfig {
    /// The seed everything derives from.
    pub seed: u64,
    /// Exchange nodes: 1 (single venue) or 3 (a Raft cluster).
    pub nodes: usize,
    /// Simulated milliseconds of traffic and faults.
    pub duration_ms: u64,
    /// Simulated milliseconds after the faults stop in which everything must
    /// recover: a leader, every client logged in, every request answered.
    pub settle_ms: u64,
    /// Trading clients (one account each).
    pub traders: usize,
    /// The journal's fsync policy.
    pub fsync: FsyncPolicy,
    /// Snapshot every this many commands (0: none).
    pub snapshot_every: u64,
    /// Reports retained per account (`[reports] retain_per_account`).
    pub retain: usize,
    /// Journal segment size, bytes (small, to rotate often).
    pub segment_bytes: u64,
    /// Cluster: a Raft snapshot every this many entries.
    pub raft_snapshot_every: u64,
    /// Cluster: entries kept behind the newest Raft snapshot.
    pub raft_log_retain: u64,
    /// The faults.
    pub faults: Faults,
    /// Balances on: every trader funded, fills settled through the ledger with maker
    /// and taker fees paid to the operator's account (the conservation invariant).
    pub ledger: bool,
    /// The negative control: a build with the `sabotage` feature releases results
    /// before they are durable, and the simulator must say so.
    pub sabotage: bool,
    /// The conservation invariant's negative control (a build with the `sabotage`
    /// feature): the ledger credits a fill's fee to nobody.
    pub sabotage_ledger: bool,
    /// Market-data subscribers (0: the feed is off). The first joins at the start,
    /// the others late.
    pub subscribers: usize,
    /// The feed's negative control (a build with the `sabotage` feature): one level
    /// update in 25 never reaches the subscribers, with no gap to say so.
    pub sabotage_feed: bool,
    /// Print every event as it happens (on stderr).
    pub verbose: bool,
}

impl SimConfig {
    /// The shape of a random run: everything but the seed's own choices fixed.
    pub fn for_seed(seed: u64, nodes: usize) -> Self {
        let mut r = Rng::new(seed ^ 0x5EED_C0F1_6000_0001);
        let fsync = match r.below(10) {
            0 => FsyncPolicy::EveryCommand,
            _ => FsyncPolicy::Batch,
        };
        let snapshot_every = [0, 25, 60, 150][r.below(4) as usize];
        let retain = [50, 200, 100_000][r.below(3) as usize];
        // Drawn apart from the rest (so adding it moved no other choice of a seed).
        let ledger = Rng::new(seed ^ 0x1ED6_E500_0000_0002).below(4) != 0;
        SimConfig {
            seed,
            nodes,
            duration_ms: 3_000,
            settle_ms: 8_000,
            traders: 4,
            fsync,
            snapshot_every,
            retain,
            segment_bytes: [8 << 10, 64 << 10][r.below(2) as usize],
            raft_snapshot_every: [20, 200, 100_000][r.below(3) as usize],
            raft_log_retain: [5, 1_000][r.below(2) as usize],
            faults: Faults::standard(),
            ledger,
            sabotage: false,
            sabotage_ledger: false,
            subscribers: 2,
            sabotage_feed: false,
            verbose: false,
        }
    }
}
