//! The venue state hash with balances, and the wire's saturating amount.

use peregrine_ledger::{FeeState, Fees, LedgerState};

/// The venue state hash with balances and/or fees: Blake3 over the engine's hash,
/// the ledger's canonical state (balances by (account, asset), holds by order id,
/// supply and collected fees by asset; all little-endian) and the fee stage's
/// volumes. Without either it is the engine's hash itself.
pub fn state_hash_with(
    engine: peregrine_book::StateHash,
    ledger: Option<&LedgerState>,
    fees: Option<&FeeState>,
) -> peregrine_book::StateHash {
    if ledger.is_none() && fees.is_none() {
        return engine;
    }
    let mut h = blake3::Hasher::new();
    h.update(&engine.0);
    if let Some(l) = ledger {
        hash_ledger(&mut h, l);
    }
    if let Some(f) = fees {
        h.update(b"fees");
        Fees::hash_into(f, &mut h);
    }
    peregrine_book::StateHash(*h.finalize().as_bytes())
}

fn hash_ledger(h: &mut blake3::Hasher, ledger: &LedgerState) {
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
        if o.fee_ppm != 0 || o.fee_left != 0 {
            h.update(&o.fee_ppm.to_le_bytes());
            h.update(&o.fee_left.to_le_bytes());
        }
    }
    h.update(&(ledger.supply.len() as u64).to_le_bytes());
    for (asset, v) in &ledger.supply {
        h.update(&asset.0.to_le_bytes());
        h.update(&v.to_le_bytes());
    }
    if !ledger.fees.is_empty() {
        h.update(&(ledger.fees.len() as u64).to_le_bytes());
        for (asset, v) in &ledger.fees {
            h.update(&asset.0.to_le_bytes());
            h.update(&v.to_le_bytes());
        }
    }
}

/// Saturates an `i128` amount to the wire's `i64`.
pub fn saturate(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}
