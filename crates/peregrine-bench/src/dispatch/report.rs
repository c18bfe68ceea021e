//! The dispatch bench's outputs: a Markdown report, a JSON file and an SVG chart.
//!
//! Table cells are the median over R runs of the per-run percentile, with the
//! run-to-run spread ((max − min) / median) beside it, as in seed 001.

use std::fmt::Write as _;
use std::path::Path;

use super::candidates::Candidate;
use super::config::Config;
use super::stats::{median, spread, RunStats, SEGMENTS};
use super::{Cell, Outcome};

/// The machine the numbers come from.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Machine {
    /// `available_parallelism`.
    pub nproc: usize,
    /// `model name` from /proc/cpuinfo.
    pub cpu: String,
    /// UTC date and time of the report.
    pub date: String,
    /// /proc/loadavg when the report was written (other work on a shared machine).
    pub loadavg: String,
}

impl Machine {
    /// Reads the machine facts.
    pub fn detect() -> Self {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|text| {
                text.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_owned())
            })
            .unwrap_or_else(|| "unknown".into());
        Self {
            nproc: std::thread::available_parallelism().map_or(0, usize::from),
            cpu,
            date: utc_now(),
            loadavg: std::fs::read_to_string("/proc/loadavg")
                .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
                .unwrap_or_default(),
        }
    }
}

/// Now as `YYYY-MM-DD HH:MM UTC` (from [`peregrine_types::Utc`], the one calendar
/// conversion of the workspace).
pub fn utc_now() -> String {
    let t = peregrine_types::Utc::now().to_string(); // 2026-11-28T04:26:00.125Z
    format!("{} {} UTC", &t[..10], &t[11..16])
}

/// Writes report.md, results.json and rt-venue-p99.svg into `out`; returns the Markdown.
pub fn write(
    out: &Path,
    config_path: &Path,
    config: &Config,
    outcome: &Outcome,
) -> anyhow::Result<String> {
    std::fs::create_dir_all(out)?;
    let machine = Machine::detect();
    let markdown = markdown(&machine, config_path, config, outcome);
    std::fs::write(out.join("report.md"), &markdown)?;
    let json = serde_json::json!({
        "machine": machine,
        "config_file": config_path.display().to_string(),
        "config": config,
        "comparable": outcome.comparable(),
        "outcome": outcome,
    });
    std::fs::write(
        out.join("results.json"),
        serde_json::to_string_pretty(&json)?,
    )?;
    std::fs::write(
        out.join("rt-venue-p99.svg"),
        super::svg::chart(config, &outcome.cells),
    )?;
    Ok(markdown)
}

fn us(ns: f64) -> String {
    let us = ns / 1e3;
    if us >= 100.0 {
        format!("{us:.0}")
    } else {
        format!("{us:.1}")
    }
}

fn cell(cells: &[Cell], work_ns: u64, candidate: Candidate) -> Option<&Cell> {
    cells
        .iter()
        .find(|c| c.work_ns == work_ns && c.candidate == candidate)
}

/// A W × candidate table of `metric` (ns): median over runs, spread in brackets.
fn metric_table(config: &Config, cells: &[Cell], metric: impl Fn(&RunStats) -> u64) -> String {
    let mut t = header_row("orch_work W", config);
    for &w in &config.orch_work_ns {
        let _ = write!(t, "| {w} ns |");
        for &c in &config.candidates {
            let values: Vec<f64> = cell(cells, w, c)
                .map(|cell| cell.runs.iter().map(|r| metric(r) as f64).collect())
                .unwrap_or_default();
            let _ = write!(
                t,
                " {} (±{:.0}%) |",
                us(median(&values)),
                spread(&values) * 50.0
            );
        }
        t.push('\n');
    }
    t
}

fn header_row(first: &str, config: &Config) -> String {
    let mut t = format!("| {first} |");
    for c in &config.candidates {
        let _ = write!(t, " {c} |");
    }
    t.push_str("\n|---|");
    t.push_str(&"---|".repeat(config.candidates.len()));
    t.push('\n');
    t
}

/// Segment p99 at or above this is flagged as a scheduler stall.
const STALL_NS: f64 = 1_000_000.0;

fn segment_tables(config: &Config, cells: &[Cell]) -> String {
    let mut s = String::new();
    for &w in &config.orch_work_ns {
        let _ = writeln!(s, "\n**W = {w} ns**: p50 / p99 in µs, median over runs\n");
        s.push_str(&header_row("segment (kind)", config));
        for (i, (name, _, _, kind)) in SEGMENTS.iter().enumerate() {
            let _ = write!(s, "| {name} ({kind}) |");
            for &c in &config.candidates {
                let runs = cell(cells, w, c).map_or(&[][..], |cell| &cell.runs[..]);
                let p = |f: fn(&super::stats::Pcts) -> u64| {
                    median(
                        &runs
                            .iter()
                            .map(|r| f(&r.segments[i]) as f64)
                            .collect::<Vec<_>>(),
                    )
                };
                let p99 = p(|x| x.p99);
                // A hand-off hop (not the venue, not W) whose p99 reaches 1 ms is no
                // queue operation: it is a thread waiting for a core.
                let stall = *name != "venue_service" && p99 >= STALL_NS;
                let flag = if stall { " ⚠" } else { "" };
                let _ = write!(s, " {} / {}{flag} |", us(p(|x| x.p50)), us(p99));
            }
            s.push('\n');
        }
    }
    s
}

fn validity_tables(config: &Config, cells: &[Cell]) -> String {
    let mut s = String::from(
        "| W | candidate | Full submit | Full inbox | Full completion | Full return | missing | \
         out-of-order (max backstep ns) | timed out | λ (orders/s) | L = λ·mean rt-venue | measured in flight | ratio |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for cell in cells {
        let sum = |f: fn(&RunStats) -> u64| cell.runs.iter().map(f).sum::<u64>();
        let med = |f: fn(&RunStats) -> f64| median(&cell.runs.iter().map(f).collect::<Vec<_>>());
        let ratio = med(|r| r.little.ratio());
        let flag = if (ratio - 1.0).abs() > 0.1 {
            " ⚠"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "| {} ns | {} | {} | {} | {} | {} | {} | {} ({}) | {} | {:.0} | {:.2} | {:.2} | {:.3}{flag} |",
            cell.work_ns,
            cell.candidate,
            sum(|r| r.full.submit),
            sum(|r| r.full.inbox),
            sum(|r| r.full.completion),
            sum(|r| r.full.ret),
            sum(|r| r.missing as u64),
            sum(|r| r.out_of_order as u64),
            cell.runs.iter().map(|r| r.max_backstep_ns).max().unwrap_or(0),
            sum(|r| u64::from(r.timed_out)),
            med(|r| r.little.throughput_per_s),
            med(|r| r.little.predicted_in_flight),
            med(|r| r.little.measured_in_flight),
            ratio,
        );
    }
    let _ = config;
    s
}

fn preamble(machine: &Machine, config_path: &Path, config: &Config, outcome: &Outcome) -> String {
    let mut s = String::from("# Dispatch bench (seed 000/001, Peregrine rebuild)\n\n");
    if !outcome.comparable() {
        s.push_str("> **NOT COMPARABLE**: ");
        s.push_str(&outcome.warnings.join("; "));
        s.push_str(".\n\n");
    }
    let t = outcome.timing;
    let _ = writeln!(
        s,
        "Machine: {} cores ({}), load average {} at the end, {}. Command: `peregrine bench dispatch --config {}`.\n\n\
         Setup: N = {} strategies, M = {} gateways, capacity {}, {} orders per run over {} ms, \
         D ~ U({} µs, {} µs), W sweep {:?} ns, R = {}, wait {}, pin {}, seed {}.\n\n\
         Timer: quanta TSC read {:.1} ns, CLOCK_MONOTONIC read {:.1} ns; orders stamped with \
         {:?}. Busy work: {:.3} ns per loop \
         iteration (calibrated once). Polling threads that never sleep: {} on {} cores.\n",
        machine.nproc,
        machine.cpu,
        machine.loadavg,
        machine.date,
        config_path.display(),
        config.n_strategies,
        config.m_gateways,
        config.capacity,
        config.orders,
        config.fire_window_ms,
        config.venue_delay_min_us,
        config.venue_delay_max_us,
        config.orch_work_ns,
        config.repeats,
        config.wait.name(),
        config.pin,
        config.seed,
        t.tsc_read_ns,
        t.monotonic_read_ns,
        config.clock,
        t.work_ns_per_iter,
        outcome.spinning_threads,
        outcome.cores,
    );
    s.push_str("Pinning (first run):\n\n");
    for pin in &outcome.pins {
        let _ = writeln!(s, "- {}", pin.describe());
    }
    let _ = writeln!(
        s,
        "\nFailed pins over all runs: {}.\n",
        outcome.pin_failures
    );
    s
}

/// Picks one number out of a run.
type Metric = fn(&RunStats) -> u64;

/// The whole Markdown report.
pub fn markdown(
    machine: &Machine,
    config_path: &Path,
    config: &Config,
    outcome: &Outcome,
) -> String {
    let cells = &outcome.cells;
    let mut s = preamble(machine, config_path, config, outcome);
    s.push_str(
        "Cells: median over runs of the per-run percentile, in µs; (±x%) is half the \
                run-to-run range over the median.\n",
    );
    let tables: [(&str, Metric); 6] = [
        ("rt-venue p50", |r| r.rt_venue.p50),
        ("rt-venue p99", |r| r.rt_venue.p99),
        ("rt-venue p99.9", |r| r.rt_venue.p999),
        ("rt − D p50 (includes gateway lateness)", |r| {
            r.rt_minus_d.p50
        }),
        ("rt − D p99", |r| r.rt_minus_d.p99),
        ("rt − D p99.9", |r| r.rt_minus_d.p999),
    ];
    for (title, metric) in tables {
        let _ = writeln!(s, "\n## {title}\n");
        s.push_str(&metric_table(config, cells, metric));
    }
    s.push_str(
        "\n## Segments\n\nKinds: *MPSC, candidate* are the two contended hand-offs under \
                test; *SPSC, fixed* are peregrine-queue SPSC rings in every run. ⚠ marks a p99 \
                of 1 ms or more outside the venue: a thread waiting for a core, not a queue \
                cost.\n",
    );
    s.push_str(&segment_tables(config, cells));
    s.push_str(
        "\n## Validity: Full counts (sum over runs), completeness, Little's law \
                (median over runs; ⚠ when off by more than 10%)\n\n",
    );
    s.push_str(&validity_tables(config, cells));
    s.push_str("\nChart: `rt-venue-p99.svg` (rt-venue p99 − W against W).\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_is_well_formed() {
        let d = utc_now();
        assert_eq!(d.len(), "2026-11-22 03:04 UTC".len());
        assert!(d.starts_with("20"));
    }

    #[test]
    fn microsecond_formatting() {
        assert_eq!(us(1234.0), "1.2");
        assert_eq!(us(123_456.0), "123");
    }
}
