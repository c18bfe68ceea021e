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
//! **Leaf** = `blake3(0x00 | trade record)`. **Inner node** =
//! `blake3(0x01 | left | right)`. The prefixes keep a leaf from ever being mistaken for a
//! node. A level with an odd number of hashes pairs its last hash with itself. The root
//! of zero trades is 32 zero bytes.
//!
//! **State hash** of a tick = `blake3("peregrine-tick-v1" | tick_seq u64 | timestamp u64
//! | trade_count u64 | trade record × trade_count | tx_count u64)`.
//!
//! A [`Commitment`] is `(tick_seq, timestamp, tx_count, trade_count, state_hash,
//! merkle_root)`.

mod merkle;
mod tick;

pub use merkle::{leaf_hash, merkle_root, node_hash, verify_proof, Proof, ProofStep};
pub use tick::{commit_tick, Commitment, TradeRecord};
