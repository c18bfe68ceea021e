//! The non-blocking dispatch bench of seed 000/001 (issue 5), rebuilt on our own code.
//!
//! N strategy threads fire a pre-sampled schedule into one orchestrator thread, which
//! does W ns of calibrated busy work per order and routes it to one of M gateway
//! threads; each gateway holds the order for its venue delay D in a min-heap and sends
//! it back, and the orchestrator returns it to its strategy. The two contended hand-offs
//! (submit N → 1 and completion M → 1) are the candidates under test
//! ([`candidates::Candidate`]); the 1 → 1 hops are `peregrine-queue` SPSC rings.
//!
//! Fixes over the seed: t1 is the *scheduled* fire time (no coordinated omission; a
//! retry after Full keeps it), rt − D is reported beside rt-venue (rt-venue subtracts the
//! measured venue time and so hides gateway lateness), Full is counted on every queue,
//! Little's law is checked from timestamps without any shared counter on the hot path,
//! and a run with more never-sleeping threads than cores is marked NOT COMPARABLE.
//!
//! Modules: [`config`] (the `key: value` file), [`schedule`], [`order`] (the order, the
//! clock, the busy work), [`queues`] and [`candidates`], [`pipeline`] (one run),
//! [`stats`], [`report`] (Markdown, JSON) and [`svg`] (the chart).

pub mod candidates;
pub mod config;
pub mod order;
pub mod pipeline;
pub mod queues;
pub mod report;
pub mod schedule;
pub mod stats;
pub mod svg;

use std::path::PathBuf;
use std::time::Instant;

use peregrine_queue::pin::CoreId;
use peregrine_queue::{available_cores, spinner_warning, PinOutcome};

use candidates::{Candidate, Visit};
use config::Config;
use order::{Clock, Order, Work};
use pipeline::{RunOutput, RunSetup};
use queues::Family;
use schedule::Schedule;
use stats::RunStats;

/// Arguments of `peregrine bench dispatch`.
#[derive(Debug, clap::Args)]
pub struct DispatchArgs {
    /// The `key: value` config file.
    #[arg(long, default_value = "config.small.yaml")]
    pub config: PathBuf,
    /// Directory for report.md, results.json and the SVG chart.
    #[arg(long, default_value = "bench-out/dispatch")]
    pub out: PathBuf,
}

/// Runs the dispatch bench.
pub fn run(args: DispatchArgs) -> anyhow::Result<()> {
    // Before any thread is pinned (shared/FACTS.md): the list is per calling thread.
    let cores = available_cores();
    let config = Config::load(&args.config)?;
    let outcome = execute(&config, &cores, |line| eprintln!("{line}"))?;
    let markdown = report::write(&args.out, &args.config, &config, &outcome)?;
    println!("{markdown}");
    eprintln!("wrote {}", args.out.display());
    Ok(())
}

/// Results of one (W, candidate) cell: one [`RunStats`] per repeat.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Cell {
    /// Orchestrator busy work per order.
    pub work_ns: u64,
    /// The candidate.
    pub candidate: Candidate,
    /// One entry per repeat.
    pub runs: Vec<RunStats>,
}

/// Clock and busy-work calibration.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Timing {
    /// Mean cost of one TSC clock read (quanta, scaled to ns), ns.
    pub tsc_read_ns: f64,
    /// Mean cost of one monotonic clock read (`Instant::elapsed`), ns.
    pub monotonic_read_ns: f64,
    /// Busy-work loop cost per iteration, ns.
    pub work_ns_per_iter: f64,
}

/// Everything a bench invocation measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Outcome {
    /// Clock and calibration.
    pub timing: Timing,
    /// Cores the main thread could use.
    pub cores: usize,
    /// Threads that poll without ever sleeping.
    pub spinning_threads: usize,
    /// Pinning outcome of every thread in the first run.
    #[serde(serialize_with = "pin_lines")]
    pub pins: Vec<PinOutcome>,
    /// Failed pins over all runs.
    pub pin_failures: usize,
    /// Problems that make the numbers not comparable with a proper machine.
    pub warnings: Vec<String>,
    /// Results, W-major then candidate.
    pub cells: Vec<Cell>,
}

fn pin_lines<S: serde::Serializer>(pins: &[PinOutcome], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(pins.iter().map(PinOutcome::describe))
}

impl Outcome {
    /// Whether the numbers are comparable (no warnings).
    pub fn comparable(&self) -> bool {
        self.warnings.is_empty()
    }
}

struct RunOnce<'a, 'b>(&'a RunSetup<'b>);

impl Visit for RunOnce<'_, '_> {
    type Out = anyhow::Result<RunOutput>;
    fn visit<F: Family<Order>>(self) -> Self::Out {
        pipeline::run::<F>(self.0)
    }
}

/// Runs the whole sweep: for every W, R repeats, each running every candidate on the
/// same schedule (candidates interleaved so slow drift hits them alike).
pub fn execute(
    config: &Config,
    cores: &[CoreId],
    mut log: impl FnMut(&str),
) -> anyhow::Result<Outcome> {
    let clock = Clock::new(config.clock);
    let (tsc_read_ns, monotonic_read_ns) = Clock::overhead_ns(1_000_000);
    let work = Work::calibrate();
    let timing = Timing {
        tsc_read_ns,
        monotonic_read_ns,
        work_ns_per_iter: work.ns_per_iter(),
    };
    log(&format!(
        "timer: quanta TSC read {tsc_read_ns:.1} ns, CLOCK_MONOTONIC read {monotonic_read_ns:.1} ns \
         (stamping with {:?}); busy work {:.3} ns/iteration",
        config.clock,
        timing.work_ns_per_iter
    ));
    let schedule = Schedule::generate(config);
    let spinning_threads = if config.wait.occupies_core() {
        config.polling_threads()
    } else {
        0
    };
    let mut outcome = Outcome {
        timing,
        cores: cores.len(),
        spinning_threads,
        pins: Vec::new(),
        pin_failures: 0,
        warnings: spinner_warning(spinning_threads, cores.len())
            .into_iter()
            .collect(),
        cells: Vec::new(),
    };
    for warning in &outcome.warnings {
        log(&format!("WARNING: {warning}"));
    }
    let pin_cores = if config.pin { cores } else { &[] };
    for &work_ns in &config.orch_work_ns {
        let first = outcome.cells.len();
        for &candidate in &config.candidates {
            outcome.cells.push(Cell {
                work_ns,
                candidate,
                runs: Vec::new(),
            });
        }
        let setup = RunSetup {
            schedule: &schedule,
            gateways: config.m_gateways,
            capacity: config.capacity,
            work_iters: work.iters_for(work_ns),
            wait: config.wait,
            cores: pin_cores,
            drain_timeout_ns: config.drain_timeout_ms * 1_000_000,
            clock: &clock,
        };
        for repeat in 0..config.repeats {
            for (i, &candidate) in config.candidates.iter().enumerate() {
                let started = Instant::now();
                let output = candidate.visit(RunOnce(&setup))?;
                record_pins(&mut outcome, &output.pins, &mut log);
                let stats = RunStats::of(
                    &output.orders,
                    output.scheduled,
                    output.full,
                    output.timed_out,
                );
                log(&progress_line(
                    work_ns,
                    candidate,
                    repeat,
                    config.repeats,
                    &stats,
                    started,
                ));
                outcome.cells[first + i].runs.push(stats);
            }
        }
    }
    if config.pin && outcome.pin_failures > 0 {
        outcome
            .warnings
            .push(format!("{} thread pins FAILED", outcome.pin_failures));
    }
    Ok(outcome)
}

fn record_pins(outcome: &mut Outcome, pins: &[PinOutcome], log: &mut impl FnMut(&str)) {
    let failed: Vec<&PinOutcome> = pins
        .iter()
        .filter(|p| p.core.is_some() && !p.pinned)
        .collect();
    outcome.pin_failures += failed.len();
    for pin in failed {
        log(&format!("WARNING: {}", pin.describe()));
    }
    if outcome.pins.is_empty() {
        outcome.pins = pins.to_vec();
        for pin in pins {
            log(&format!("pin: {}", pin.describe()));
        }
    }
}

fn progress_line(
    work_ns: u64,
    candidate: Candidate,
    repeat: usize,
    repeats: usize,
    stats: &RunStats,
    started: Instant,
) -> String {
    let full = stats.full;
    format!(
        "[W={work_ns} ns {candidate:<17} run {}/{repeats}] {} orders back, {} missing, \
         rt-venue p50 {:.1} µs p99 {:.1} µs, Full {}/{}/{}/{}, {:.1} s",
        repeat + 1,
        stats.completed,
        stats.missing,
        stats.rt_venue.p50 as f64 / 1e3,
        stats.rt_venue.p99 as f64 / 1e3,
        full.submit,
        full.inbox,
        full.completion,
        full.ret,
        started.elapsed().as_secs_f64()
    )
}

#[cfg(test)]
pub(crate) mod tests;
