//! Cryptographic commitments to what the matching engine did, so that anyone holding a
//! trade can prove it was part of a tick, and anyone holding the journal can recompute
//! every commitment.
//!
//! # Exact bytes hashed (all integers little-endian)
//!
//! **Trade record** ([`TradeRecord::encode`], 61 bytes): `trade_id u64 | instrument u32 |
//! price i64 | qty i64 | maker_order u64 | taker_order u64 | maker_account u32 |
//! taker_account u32 | taker_side u8 (0 buy, 1 sell) | timestamp u64`.
//!
//! **Leaf** = `blake3::keyed_hash(LEAF_KEY, trade record)`. **Inner node** =
//! `blake3::keyed_hash(NODE_KEY, left | right)` (exactly one 64-byte block). The two
//! keys ([`LEAF_KEY`], [`NODE_KEY`], 32 ASCII bytes each) separate the domains, so a leaf
//! can never be mistaken for a node, without the extra block a prefix byte would cost.
//! A level with an odd number of hashes pairs its last hash with itself. The root of
//! zero trades is 32 zero bytes.
//!
//! **State hash** of a tick = `blake3::keyed_hash(STATE_KEY, tick_seq u64 | timestamp
//! u64 | trade_count u64 | leaf × trade_count | tx_count u64)`: it covers every trade
//! through its leaf hash.
//!
//! A [`Commitment`] is `(tick_seq, timestamp, tx_count, trade_count, state_hash,
//! merkle_root)`.

//!
//! # Parts
//!
//! * The hashing itself: [`commit_tick`], [`merkle_root`], [`Proof`] (pure functions).
//! * **Windows** ([`WindowState`], [`Recomputer`]): which commands a commitment covers,
//!   a pure function of the command journal, shared by the live path and
//!   `peregrine verify`.
//! * The **hasher thread** ([`Committer`]): the matching thread's side collects the
//!   trades of each window and hands them over rings; the hasher hashes, appends to the
//!   [`CommitLog`] and hands the commitment back for the feed. The exchange core sees
//!   it only through the [`CommitSink`] seam.
//! * The **commitment log** ([`commit_log`]): its record codec and files.
//! * The `[commitments]` config section ([`CommitmentsSection`]).

pub mod commit_log;
mod config;
mod hasher;
mod merkle;
mod sink;
mod tick;
mod trade;
mod window;

pub use commit_log::{CommitLog, CommitLogError, LoggedCommitment};
pub use config::CommitmentsSection;
pub use hasher::{Committer, CLOSES_PER_CHUNK, DONE_CAPACITY, POOL};
pub use merkle::{
    leaf_hash, merkle_root, node_hash, verify_proof, Proof, ProofStep, LEAF_KEY, NODE_KEY,
};
pub use sink::CommitSink;
pub use tick::STATE_KEY;
pub use tick::{commit_tick, Commitment};
pub use trade::TradeRecord;
pub use window::{trades_of, window_of, Closed, Recomputer, WindowState};
