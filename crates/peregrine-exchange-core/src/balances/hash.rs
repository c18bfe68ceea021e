//! The venue state hash with balances, and the wire's saturating amount.

use peregrine_ledger::LedgerState;

/// The venue state hash with balances: Blake3 over the engine's hash and the ledger's
/// canonical state (balances by (account, asset), holds by order id, supply by asset;
/// all little-endian).
pub fn state_hash_with(
    engine: peregrine_book::StateHash,
    ledger: &LedgerState,
) -> peregrine_book::StateHash {
    let mut h = blake3::Hasher::new();
    h.update(&engine.0);
    h.update(&(ledger.balances.len() as u64).to_le_bytes());
    for (account, asset, b) in &ledger.balances {
        h.update(&account.0.to_le_bytes());
        h.update(&asset.0.to_le_bytes());
        h.update(&b.available.to_le_bytes());
        h.update(&b.reserved.to_le_bytes());
    }
    h.update(&(ledger.holds.len() as u64).to_le_bytes());
    for o in &ledger.holds {
        h.update(&o.order.0.to_le_bytes());
        h.update(&o.account.0.to_le_bytes());
        h.update(&[o.side as u8]);
        h.update(&o.price.to_le_bytes());
        h.update(&o.leaves.to_le_bytes());
        h.update(&o.assets.base.0.to_le_bytes());
        h.update(&o.assets.quote.0.to_le_bytes());
    }
    h.update(&(ledger.supply.len() as u64).to_le_bytes());
    for (asset, v) in &ledger.supply {
        h.update(&asset.0.to_le_bytes());
        h.update(&v.to_le_bytes());
    }
    peregrine_book::StateHash(*h.finalize().as_bytes())
}

/// Saturates an `i128` amount to the wire's `i64`.
pub fn saturate(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}
