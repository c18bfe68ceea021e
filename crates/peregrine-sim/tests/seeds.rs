//! The simulator in CI: every regression seed, then random seeds (a fresh random start
//! each run, printed; `PEREGRINE_SIM_SEEDS` sets how many, `PEREGRINE_SIM_FROM` the
//! start, to replay a run). Any broken invariant fails the test with the seed, the
//! commit and the events that led to it. More seeds by hand: `peregrine sim --seeds N`.

use peregrine_sim::{Outcome, SimConfig};

fn report(out: &Outcome) -> String {
    let mut s = String::new();
    if let Some(v) = &out.violation {
        s.push_str(&format!(
            "seed {} ({} node(s)), commit {}: {}: {}\n  replay: peregrine sim --seed {} --nodes {}\n",
            out.config.seed,
            out.config.nodes,
            peregrine_sim::COMMIT,
            v.invariant,
            v.detail,
            out.config.seed,
            out.config.nodes
        ));
        for line in out.recent.iter().rev().take(40).rev() {
            s.push_str(&format!("    {line}\n"));
        }
    }
    s
}

fn env(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

#[test]
fn every_regression_seed_passes() {
    let all = peregrine_sim::regressions::all().unwrap();
    let mut failures = String::new();
    for r in &all {
        let out = peregrine_sim::run(r.config());
        if out.violation.is_some() {
            failures.push_str(&format!("regression ({}):\n{}", r.note, report(&out)));
        }
    }
    assert!(failures.is_empty(), "{failures}");
}

/// Random seeds: three single-venue runs for each cluster run.
#[test]
fn random_seeds_pass() {
    let n = env("PEREGRINE_SIM_SEEDS").unwrap_or(if cfg!(debug_assertions) { 12 } else { 200 });
    let from = env("PEREGRINE_SIM_FROM").unwrap_or_else(|| {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        (t ^ (t >> 29)) % 1_000_000_000
    });
    eprintln!(
        "random seeds {from}..{} (PEREGRINE_SIM_FROM={from} replays them)",
        from + n
    );
    let started = std::time::Instant::now();
    let mut failures = String::new();
    for seed in from..from + n {
        let nodes = if seed % 4 == 0 { 3 } else { 1 };
        let out = peregrine_sim::run(SimConfig::for_seed(seed, nodes));
        if out.violation.is_some() {
            failures.push_str(&report(&out));
        }
    }
    eprintln!(
        "{n} seeds in {:.1} s ({:.1} seeds/s)",
        started.elapsed().as_secs_f64(),
        n as f64 / started.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{failures}");
}

/// One seed, one run: the same events in the same order (the trace hash covers every
/// event, the bytes every client received and the production code's log lines).
#[test]
fn the_same_seed_replays_exactly() {
    for (seed, nodes) in [(7, 1), (12, 3)] {
        let a = peregrine_sim::run(SimConfig::for_seed(seed, nodes));
        let b = peregrine_sim::run(SimConfig::for_seed(seed, nodes));
        assert_eq!(a.trace_hash, b.trace_hash, "seed {seed}");
        assert_eq!(a.stats, b.stats, "seed {seed}");
        assert!(
            a.stats.commands > 100,
            "the run did something: {:?}",
            a.stats
        );
    }
}
