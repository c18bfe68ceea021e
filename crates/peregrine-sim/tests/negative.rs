//! The simulator's negative control (built only with the `sabotage` feature, never in
//! what users run): a venue whose command log releases results before the journal
//! has them must be flagged, and so must a ledger that loses a fee (conservation).
//! `cargo test -p peregrine-sim --features sabotage --test negative`.
#![cfg(feature = "sabotage")]

use peregrine_sim::SimConfig;

#[test]
fn a_venue_that_acknowledges_before_durable_is_flagged() {
    let mut flagged = Vec::new();
    let mut tried = 0;
    for seed in 1..=40u64 {
        let mut cfg = SimConfig::for_seed(seed, 1);
        cfg.sabotage = true;
        tried += 1;
        let out = peregrine_sim::run(cfg);
        if let Some(v) = out.violation {
            flagged.push((seed, v.invariant));
            if flagged.len() == 3 {
                break;
            }
        }
    }
    eprintln!("sabotage flagged by seeds {flagged:?} of {tried} tried");
    assert!(
        flagged.len() == 3,
        "the simulator did not flag the sabotaged venue: {flagged:?} in {tried} seeds"
    );
}

/// The conservation invariant's negative control: a ledger that takes a fill's fee
/// from the payer and credits it to nobody must be flagged, by that invariant, and the
/// same seeds pass with the ledger intact (so it is the lost fee that is caught).
#[test]
fn a_ledger_that_loses_a_fee_is_flagged() {
    let mut flagged = Vec::new();
    let mut tried = 0;
    for seed in 1..=40u64 {
        let clean = SimConfig::for_seed(seed, if seed % 4 == 0 { 3 } else { 1 });
        if !clean.ledger {
            continue;
        }
        let mut cfg = clean.clone();
        cfg.sabotage_ledger = true;
        tried += 1;
        let out = peregrine_sim::run(cfg);
        let v = out
            .violation
            .unwrap_or_else(|| panic!("seed {seed}: the lost fee went unnoticed"));
        assert!(
            v.invariant.starts_with("balance conservation"),
            "seed {seed}: flagged by {} ({}), not conservation",
            v.invariant,
            v.detail
        );
        eprintln!("seed {seed}: {}: {}", v.invariant, v.detail);
        let control = peregrine_sim::run(clean).violation;
        assert!(
            control.is_none(),
            "seed {seed} fails without the sabotage too: {control:?}"
        );
        flagged.push(seed);
        if flagged.len() == 4 {
            break;
        }
    }
    eprintln!("the lost fee flagged by seeds {flagged:?} of {tried} tried");
    assert_eq!(flagged.len(), 4);
}
