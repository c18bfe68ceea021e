//! Runs seeds while developing:
//! `cargo run --example seed -- SEED [nodes] [quiet]` or `-- batch FROM TO [nodes]`.

use std::collections::BTreeMap;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).is_some_and(|a| a == "batch") {
        let from: u64 = args[2].parse().unwrap();
        let to: u64 = args[3].parse().unwrap();
        let nodes: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(1);
        // `batch FROM TO NODES readd`: the keep-disk membership change 10x as often.
        let readd = args.get(5).is_some_and(|s| s == "readd");
        let mut tally: BTreeMap<&'static str, (u64, Vec<u64>)> = BTreeMap::new();
        let t = std::time::Instant::now();
        for seed in from..=to {
            let mut cfg = peregrine_sim::SimConfig::for_seed(seed, nodes);
            if readd {
                cfg.faults.readd *= 10;
            }
            let o = peregrine_sim::run(cfg);
            if let Some(v) = o.violation {
                let e = tally.entry(v.invariant).or_default();
                e.0 += 1;
                if e.1.len() < 8 {
                    e.1.push(seed);
                }
            }
        }
        println!("{} seeds in {:?}", to - from + 1, t.elapsed());
        for (inv, (n, seeds)) in tally {
            println!("{n:5}  {inv}  (first: {seeds:?})");
        }
        return;
    }
    let seed: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let nodes: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut cfg = peregrine_sim::SimConfig::for_seed(seed, nodes);
    if args.get(3).is_some_and(|s| s == "quiet") {
        cfg.faults = peregrine_sim::Faults::none();
    }
    if args.get(3).is_some_and(|s| s == "readd") {
        cfg.faults.readd *= 10;
    }
    let t = std::time::Instant::now();
    let o = peregrine_sim::run(cfg.clone());
    println!("{cfg:?}");
    println!("{:?} in {:?}, trace {}", o.stats, t.elapsed(), o.trace_hash);
    if let Some(v) = &o.violation {
        for l in &o.recent {
            println!("{l}");
        }
        println!(
            "VIOLATION {}: {} at {} ms",
            v.invariant,
            v.detail,
            v.at / 1_000_000
        );
    }
}
