//! The regression seeds: every run that once broke an invariant, kept in the repository
//! (`crates/peregrine-sim/regressions.txt`) and run by CI with the random seeds. Each
//! line is `SEED NODES [balances=off] [readd=N] [md]  what it found`; a run is
//! `SimConfig::for_seed(SEED, NODES)`, with balances off when the line says so (seeds
//! found before the simulator drew balances, or found only without them).
//! A change to the simulator's generators can move what a seed exercises: a seed is
//! kept for what it once found, and the random seeds keep looking.

use crate::knobs::SimConfig;

/// The file, compiled in.
const FILE: &str = include_str!("../regressions.txt");

/// One regression seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Regression {
    /// The seed.
    pub seed: u64,
    /// Nodes: 1 or 3.
    pub nodes: usize,
    /// Balances off (`balances=off` after NODES): the run as it was found.
    pub balances_off: bool,
    /// The keep-disk membership change's rate (`readd=N` after NODES), when the
    /// seed was found with it raised.
    pub readd: Option<u64>,
    /// Market-data subscribers on (`md` after the other marks): found with them.
    pub md: bool,
    /// What it found, for the report.
    pub note: String,
}

impl Regression {
    /// The run.
    pub fn config(&self) -> SimConfig {
        let mut cfg = SimConfig::for_seed(self.seed, self.nodes);
        if self.balances_off {
            cfg.ledger = false;
        }
        if self.md {
            cfg.subscribers = 2;
        }
        if let Some(r) = self.readd {
            cfg.faults.readd = r;
        }
        cfg
    }
}

/// Every regression seed, in file order. Lines that do not parse are an error (the
/// file is the repository's; a typo must not silently drop a seed).
pub fn all() -> Result<Vec<Regression>, String> {
    let mut out = Vec::new();
    for (i, line) in FILE.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let parse = |w: Option<&str>| w.and_then(|w| w.parse::<u64>().ok());
        let (Some(seed), Some(nodes)) = (parse(words.next()), parse(words.next())) else {
            return Err(format!(
                "regressions.txt line {}: want SEED NODES NOTE",
                i + 1
            ));
        };
        if nodes != 1 && nodes != 3 {
            return Err(format!(
                "regressions.txt line {}: nodes must be 1 or 3",
                i + 1
            ));
        }
        let mut words = words.peekable();
        let balances_off = words.next_if_eq(&"balances=off").is_some();
        let readd =
            match words.next_if(|w| w.starts_with("readd=")) {
                Some(w) => Some(w["readd=".len()..].parse::<u64>().map_err(|_| {
                    format!("regressions.txt line {}: readd=N wants a number", i + 1)
                })?),
                None => None,
            };
        let md = words.next_if_eq(&"md").is_some();
        out.push(Regression {
            seed,
            nodes: nodes as usize,
            balances_off,
            readd,
            md,
            note: words.collect::<Vec<_>>().join(" "),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_file_parses() {
        let all = super::all().unwrap();
        assert!(!all.is_empty());
        let r = all.iter().find(|r| r.seed == 3001227).unwrap();
        assert!(r.balances_off && !r.config().ledger);
        let r = all.iter().find(|r| r.readd.is_some()).unwrap();
        assert_eq!(r.config().faults.readd, r.readd.unwrap());
    }
}
