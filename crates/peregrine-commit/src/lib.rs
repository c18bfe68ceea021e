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

mod merkle;
mod tick;

pub use merkle::{
    leaf_hash, merkle_root, node_hash, verify_proof, Proof, ProofStep, LEAF_KEY, NODE_KEY,
};
pub use tick::STATE_KEY;
pub use tick::{commit_tick, Commitment, TradeRecord};
