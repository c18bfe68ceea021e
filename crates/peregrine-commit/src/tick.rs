//! A tick's commitment: state hash and Merkle root of its trades.

use crate::merkle::{leaf_hash, merkle_root};
use crate::trade::TradeRecord;

/// Key of the per-tick state hash.
pub const STATE_KEY: &[u8; 32] = b"peregrine commit v1 : tick state";

/// What is published for a tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Commitment {
    /// Tick sequence.
    pub tick_seq: u64,
    /// Tick timestamp.
    pub timestamp: u64,
    /// Commands processed in the tick.
    pub tx_count: u64,
    /// Trades in the tick.
    pub trade_count: u64,
    /// Blake3 state hash.
    pub state_hash: [u8; 32],
    /// Merkle root of the trade leaves.
    pub merkle_root: [u8; 32],
}

/// Computes a tick's commitment. `leaves` and `scratch` are reused buffers (cleared).
pub fn commit_tick(
    tick_seq: u64,
    timestamp: u64,
    tx_count: u64,
    trades: &[TradeRecord],
    leaves: &mut Vec<[u8; 32]>,
    scratch: &mut Vec<[u8; 32]>,
) -> Commitment {
    let mut h = blake3::Hasher::new_keyed(STATE_KEY);
    h.update(&tick_seq.to_le_bytes());
    h.update(&timestamp.to_le_bytes());
    h.update(&(trades.len() as u64).to_le_bytes());
    leaves.clear();
    for t in trades {
        let leaf = leaf_hash(t);
        h.update(&leaf);
        leaves.push(leaf);
    }
    h.update(&tx_count.to_le_bytes());
    Commitment {
        tick_seq,
        timestamp,
        tx_count,
        trade_count: trades.len() as u64,
        state_hash: *h.finalize().as_bytes(),
        merkle_root: merkle_root(leaves, scratch),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merkle::{verify_proof, Proof};

    fn trade(i: u64) -> TradeRecord {
        TradeRecord {
            trade_id: i,
            instrument: 1,
            price: 10_000 + i as i64,
            qty: 5,
            maker_order: 100 + i,
            taker_order: 200 + i,
            maker_account: 1,
            taker_account: 2,
            taker_side: (i % 2) as u8,
            timestamp: 77,
        }
    }

    #[test]
    fn layout_is_exactly_as_documented() {
        let b = trade(3).encode();
        assert_eq!(b.len(), 61);
        assert_eq!(&b[0..8], &3u64.to_le_bytes());
        assert_eq!(&b[12..20], &10_003i64.to_le_bytes());
        assert_eq!(b[52], 1);
        assert_eq!(&b[53..61], &77u64.to_le_bytes());
    }

    #[test]
    fn commitment_is_deterministic_and_sensitive() {
        let trades: Vec<_> = (0..10).map(trade).collect();
        let (mut l, mut s) = (Vec::new(), Vec::new());
        let a = commit_tick(5, 1_000, 10, &trades, &mut l, &mut s);
        let b = commit_tick(5, 1_000, 10, &trades, &mut l, &mut s);
        assert_eq!(a, b);
        assert_ne!(
            a.state_hash,
            commit_tick(6, 1_000, 10, &trades, &mut l, &mut s).state_hash
        );
        assert_ne!(
            a.state_hash,
            commit_tick(5, 1_000, 11, &trades, &mut l, &mut s).state_hash
        );
        let mut changed = trades.clone();
        changed[9].qty = 6;
        let c = commit_tick(5, 1_000, 10, &changed, &mut l, &mut s);
        assert_ne!(a.merkle_root, c.merkle_root);
        // Every trade proves against the root.
        let leaves: Vec<_> = trades.iter().map(crate::merkle::leaf_hash).collect();
        for i in 0..trades.len() {
            let p = Proof::build(&leaves, i).unwrap();
            assert!(verify_proof(&leaves[i], &p, &a.merkle_root, leaves.len()));
        }
    }

    #[test]
    fn empty_tick_has_zero_root() {
        let c = commit_tick(1, 1, 3, &[], &mut Vec::new(), &mut Vec::new());
        assert_eq!(c.merkle_root, [0; 32]);
        assert_eq!(c.trade_count, 0);
    }
}
