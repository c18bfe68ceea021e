//! Two-thread hand-off bench: ping-pong round trip and one-way throughput for every
//! queue candidate, plus a single-threaded mode for callgrind instruction counts.
//!
//! The candidates carry `u64` between two pinned threads: rtrb, crossbeam `ArrayQueue`,
//! crossbeam-channel, std mpsc, and peregrine-queue's SPSC ring, shared-memory SPSC
//! ring and shared-memory MPSC ring (both mapped in-process from a file under
//! `/dev/shm`). Each is measured `repeats` times; the table shows medians.

pub mod bench;
pub mod callgrind;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::str::FromStr;

use peregrine_queue::pin::CoreId;
use peregrine_queue::{available_cores, WaitStrategy};

use crate::dispatch::queues::{
    ArrayQ, CrossbeamChannel, Family, PeregrineSpsc, RtrbSpsc, ShmMpscRing, ShmSpscRing, StdMpsc,
};
use crate::dispatch::stats::median;
use bench::{Plan, RoundTrip};

/// Arguments of `peregrine bench handoff`.
#[derive(Debug, clap::Args)]
pub struct HandoffArgs {
    /// Short run (~30 s for all candidates).
    #[arg(long)]
    pub quick: bool,
    /// Write the results as JSON to this file.
    #[arg(long, default_value = "bench-out/handoff/results.json")]
    pub json: PathBuf,
    /// Measurements per candidate (default 7 quick, 15 full).
    #[arg(long)]
    pub repeats: Option<usize>,
    /// Do not pin the two threads.
    #[arg(long)]
    pub no_pin: bool,
    /// Idle behaviour: busy-spin, spin-yield or park.
    #[arg(long, default_value = "busy-spin")]
    pub wait: WaitStrategy,
    /// Comma-separated candidates (default: all).
    #[arg(long, value_delimiter = ',')]
    pub candidates: Vec<HandoffCandidate>,
    /// Instead of benchmarking, run the single-threaded push/pop rounds of this
    /// candidate for callgrind (see scripts/callgrind-queues.sh).
    #[arg(long)]
    pub callgrind_op: Option<HandoffCandidate>,
    /// Operations per callgrind round.
    #[arg(long, default_value_t = 100_000)]
    pub callgrind_ops: u64,
}

/// A 1 → 1 hand-off candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(into = "&'static str")]
pub enum HandoffCandidate {
    /// `rtrb` 0.4.
    Rtrb,
    /// `crossbeam_queue::ArrayQueue`.
    ArrayQueue,
    /// `crossbeam_channel::bounded`.
    CrossbeamChannel,
    /// `std::sync::mpsc::channel`.
    StdMpsc,
    /// `peregrine_queue::spsc`.
    PeregrineSpsc,
    /// `peregrine_queue::shm::ShmSpsc`.
    ShmSpsc,
    /// `peregrine_queue::shm::ShmMpsc`.
    ShmMpsc,
}

impl HandoffCandidate {
    /// Every candidate, in table order.
    pub const ALL: [HandoffCandidate; 7] = [
        Self::Rtrb,
        Self::ArrayQueue,
        Self::CrossbeamChannel,
        Self::StdMpsc,
        Self::PeregrineSpsc,
        Self::ShmSpsc,
        Self::ShmMpsc,
    ];

    /// CLI / table name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Rtrb => "rtrb",
            Self::ArrayQueue => "array-queue",
            Self::CrossbeamChannel => "crossbeam-channel",
            Self::StdMpsc => "std-mpsc",
            Self::PeregrineSpsc => "peregrine-spsc",
            Self::ShmSpsc => "shm-spsc",
            Self::ShmMpsc => "shm-mpsc",
        }
    }

    fn visit<V: VisitU64>(self, v: V) -> V::Out {
        match self {
            Self::Rtrb => v.visit::<RtrbSpsc>(),
            Self::ArrayQueue => v.visit::<ArrayQ>(),
            Self::CrossbeamChannel => v.visit::<CrossbeamChannel>(),
            Self::StdMpsc => v.visit::<StdMpsc>(),
            Self::PeregrineSpsc => v.visit::<PeregrineSpsc>(),
            Self::ShmSpsc => v.visit::<ShmSpscRing>(),
            Self::ShmMpsc => v.visit::<ShmMpscRing>(),
        }
    }
}

impl From<HandoffCandidate> for &'static str {
    fn from(c: HandoffCandidate) -> Self {
        c.name()
    }
}

impl FromStr for HandoffCandidate {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| format!("unknown hand-off candidate {s:?}"))
    }
}

/// Code generic over a `u64` queue family.
trait VisitU64 {
    type Out;
    fn visit<F: Family<u64>>(self) -> Self::Out;
}

/// Sizes of one bench invocation.
#[derive(Debug, Clone, Copy, serde::Serialize)]
struct Sizes {
    warmup: u64,
    pings: u64,
    messages: u64,
    capacity: usize,
}

/// One candidate's results: per repeat, then medians.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CandidateResult {
    /// Candidate name.
    pub candidate: &'static str,
    /// Round trips, one per repeat.
    pub round_trips: Vec<RoundTrip>,
    /// Throughput in M msgs/s, one per repeat.
    pub throughput_mps: Vec<f64>,
    /// Pinning outcome lines (first repeat).
    pub pins: Vec<String>,
}

struct Measure<'a> {
    plan: Plan<'a>,
    sizes: Sizes,
}

impl VisitU64 for Measure<'_> {
    type Out = anyhow::Result<(RoundTrip, Vec<String>, f64)>;
    fn visit<F: Family<u64>>(self) -> Self::Out {
        let (rt, pins) = bench::ping_pong::<F>(&self.plan, self.sizes.warmup, self.sizes.pings)?;
        let mps = bench::throughput::<F>(&self.plan, self.sizes.messages)?;
        Ok((rt, pins.iter().map(|p| p.describe()).collect(), mps))
    }
}

struct Callgrind(u64);

impl VisitU64 for Callgrind {
    type Out = anyhow::Result<(u64, u64)>;
    fn visit<F: Family<u64>>(self) -> Self::Out {
        callgrind::run::<F>(self.0)
    }
}

/// Runs the hand-off bench.
pub fn run(args: HandoffArgs) -> anyhow::Result<()> {
    if let Some(candidate) = args.callgrind_op {
        let (refused, sum) = candidate.visit(Callgrind(args.callgrind_ops))?;
        println!(
            "callgrind-op {} ops={} refused={refused} checksum={sum}",
            candidate.name(),
            args.callgrind_ops
        );
        return Ok(());
    }
    // Listed once, on the main thread, before anything is pinned (shared/FACTS.md).
    let cores: Vec<CoreId> = if args.no_pin {
        Vec::new()
    } else {
        available_cores()
    };
    let sizes = if args.quick {
        Sizes {
            warmup: 5_000,
            pings: 150_000,
            messages: 3_000_000,
            capacity: 1024,
        }
    } else {
        Sizes {
            warmup: 50_000,
            pings: 300_000,
            messages: 10_000_000,
            capacity: 1024,
        }
    };
    // Many short rounds rather than a few long ones: the host moves vCPUs and round
    // trips shift up to 4x between phases (shared/FACTS.md); medians over many rounds
    // interleaved across candidates are what stays comparable.
    let repeats = args.repeats.unwrap_or(if args.quick { 7 } else { 15 });
    let candidates = if args.candidates.is_empty() {
        HandoffCandidate::ALL.to_vec()
    } else {
        args.candidates.clone()
    };
    if cores.len() < 2 && !args.no_pin {
        eprintln!(
            "WARNING: only {} core(s) available: both threads share one",
            cores.len()
        );
    }
    let plan = Plan {
        capacity: sizes.capacity,
        cores: &cores,
        wait: args.wait,
    };
    let results = measure_all(&candidates, plan, sizes, repeats)?;
    write_outputs(&args, &results, sizes, repeats, !cores.is_empty())
}

/// Measures every candidate `repeats` times. Repeat-major: every candidate once per
/// round, so drift in the host (vCPUs move, shared/FACTS.md) hits all candidates alike.
fn measure_all(
    candidates: &[HandoffCandidate],
    plan: Plan<'_>,
    sizes: Sizes,
    repeats: usize,
) -> anyhow::Result<Vec<CandidateResult>> {
    let mut results: Vec<CandidateResult> = candidates
        .iter()
        .map(|c| CandidateResult {
            candidate: c.name(),
            round_trips: Vec::new(),
            throughput_mps: Vec::new(),
            pins: Vec::new(),
        })
        .collect();
    for repeat in 0..repeats {
        for (candidate, result) in candidates.iter().zip(results.iter_mut()) {
            let (rt, pins, mps) = candidate.visit(Measure { plan, sizes })?;
            eprintln!(
                "[{} {}/{repeats}] round trip p50 {} ns p99 {} ns, {mps:.1} M msgs/s",
                candidate.name(),
                repeat + 1,
                rt.p50,
                rt.p99
            );
            if result.pins.is_empty() {
                result.pins = pins;
            }
            result.round_trips.push(rt);
            result.throughput_mps.push(mps);
        }
    }
    Ok(results)
}

/// Prints the table and writes the JSON file.
fn write_outputs(
    args: &HandoffArgs,
    results: &[CandidateResult],
    sizes: Sizes,
    repeats: usize,
    pinned: bool,
) -> anyhow::Result<()> {
    let table = table(results);
    let machine = crate::dispatch::report::Machine::detect();
    println!(
        "{} cores ({}), load average {}, {}, wait {}, pinned {}\n\n{table}",
        machine.nproc,
        machine.cpu,
        machine.loadavg,
        machine.date,
        args.wait.name(),
        pinned
    );
    if let Some(dir) = args.json.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let json = serde_json::json!({
        "machine": machine,
        "quick": args.quick,
        "wait": args.wait.name(),
        "pinned": pinned,
        "sizes": sizes,
        "repeats": repeats,
        "results": results,
        "table": table,
    });
    std::fs::write(&args.json, serde_json::to_string_pretty(&json)?)?;
    eprintln!("wrote {}", args.json.display());
    Ok(())
}

/// The Markdown table: medians over repeats.
pub fn table(results: &[CandidateResult]) -> String {
    let mut t = String::from(
        "| candidate | best rt p50 ns | rt p50 ns | rt p90 ns | rt p99 ns | rt p99.9 ns | rt max ns | M msgs/s (min–max) |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for r in results {
        let med = |f: fn(&RoundTrip) -> u64| {
            median(
                &r.round_trips
                    .iter()
                    .map(|x| f(x) as f64)
                    .collect::<Vec<_>>(),
            )
        };
        let min = r
            .throughput_mps
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let max = r.throughput_mps.iter().copied().fold(0.0, f64::max);
        let _ = writeln!(
            t,
            "| {} | {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.1} ({min:.1}–{max:.1}) |",
            r.candidate,
            r.round_trips.iter().map(|x| x.p50).min().unwrap_or(0),
            med(|x| x.p50),
            med(|x| x.p90),
            med(|x| x.p99),
            med(|x| x.p999),
            med(|x| x.max),
            median(&r.throughput_mps),
        );
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse() {
        for c in HandoffCandidate::ALL {
            assert_eq!(c.name().parse::<HandoffCandidate>(), Ok(c));
        }
        assert!("nope".parse::<HandoffCandidate>().is_err());
    }

    #[test]
    fn every_candidate_measures_tiny() {
        peregrine_testkit::with_timeout(120, || {
            let plan = Plan {
                capacity: 16,
                cores: &[],
                wait: WaitStrategy::SpinThenYield,
            };
            let sizes = Sizes {
                warmup: 5,
                pings: 50,
                messages: 1000,
                capacity: 16,
            };
            let mut results = Vec::new();
            for c in HandoffCandidate::ALL {
                let (rt, pins, mps) = c.visit(Measure { plan, sizes }).unwrap();
                assert_eq!(pins.len(), 2);
                assert!(c.visit(Callgrind(100)).unwrap().0 == 0, "{}", c.name());
                results.push(CandidateResult {
                    candidate: c.name(),
                    round_trips: vec![rt],
                    throughput_mps: vec![mps],
                    pins,
                });
            }
            assert_eq!(
                table(&results).lines().count(),
                2 + HandoffCandidate::ALL.len()
            );
        });
    }
}
