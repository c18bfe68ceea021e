//! The simulator's negative control (built only with the `sabotage` feature, never in
//! what users run): a venue whose command log releases results before the journal
//! has them must be flagged, and so must a ledger that loses a fee (conservation).
//! `cargo test -p peregrine-sim --features sabotage --test negative`.
#![cfg(feature = "sabotage")]

use peregrine_sim::{SimConfig, Violation};

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
        caught_by(seed, &v, "balance conservation", clean);
        flagged.push(seed);
        if flagged.len() == 4 {
            break;
        }
    }
    eprintln!("the lost fee flagged by seeds {flagged:?} of {tried} tried");
    assert_eq!(flagged.len(), 4);
}

/// The feed invariant's negative control: a feed that drops one level update in 25
/// with no gap to say so (the sequence numbers still run on) must be flagged by the
/// subscribers' comparison with the venue's books, and the same seeds pass with the
/// feed intact (so it is the lost update that is caught, not the fault mix).
#[test]
fn a_feed_that_drops_an_update_without_a_gap_is_flagged() {
    let mut flagged = Vec::new();
    let mut tried = 0;
    for seed in 1..=20u64 {
        let mut clean = SimConfig::for_seed(seed, 1);
        clean.subscribers = 2;
        let mut cfg = clean.clone();
        cfg.sabotage_feed = true;
        tried += 1;
        let out = peregrine_sim::run(cfg);
        let Some(v) = out.violation else { continue };
        caught_by(seed, &v, "feed recovery", clean);
        flagged.push(seed);
        if flagged.len() == 3 {
            break;
        }
    }
    eprintln!("the dropped update flagged by seeds {flagged:?} of {tried} tried");
    assert_eq!(flagged.len(), 3);
}

/// A sabotaged run's violation `v` of `seed` is the named invariant's (`invariant`
/// starts its name), and the same seed without the sabotage (`clean`) passes: it is
/// the sabotage that is caught, not the fault mix.
fn caught_by(seed: u64, v: &Violation, invariant: &str, clean: SimConfig) {
    assert!(
        v.invariant.starts_with(invariant),
        "seed {seed}: flagged by {} ({}), not {invariant}",
        v.invariant,
        v.detail
    );
    eprintln!("seed {seed}: {}: {}", v.invariant, v.detail);
    let control = peregrine_sim::run(clean).violation;
    assert!(
        control.is_none(),
        "seed {seed} fails without the sabotage too: {control:?}"
    );
}
