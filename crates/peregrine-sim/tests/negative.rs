//! The simulator's negative control (built only with the `sabotage` feature, never in
//! what users run): a venue whose command log releases results before the journal
//! has them must be flagged. `cargo test -p peregrine-sim --features sabotage --test negative`.
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
