//! End-to-end runs of tiny configs. No busy-spinning (2 cores in CI), deadlines on
//! everything, no timing thresholds.

use super::candidates::Candidate;
use super::config::Config;
use super::order::{Clock, ClockKind, Work};
use super::pipeline::RunSetup;
use super::schedule::Schedule;
use super::RunOnce;

fn tiny() -> Config {
    Config::parse(
        "n_strategies: 2\nm_gateways: 2\ncapacity: 64\norders: 300\nfire_window_ms: 30\n\
         venue_delay_min_us: 100\nvenue_delay_max_us: 2000\norch_work_ns: 0, 200\nrepeats: 1\n\
         pin: false\nwait: spin-yield\ndrain_timeout_ms: 20000\n",
    )
    .unwrap()
}

#[test]
fn every_order_comes_back_once_with_ordered_stamps() {
    let config = tiny();
    let schedule = Schedule::generate(&config);
    let clock = Clock::new(ClockKind::Monotonic);
    for candidate in Candidate::ALL {
        let setup = RunSetup {
            schedule: &schedule,
            gateways: config.m_gateways,
            capacity: config.capacity,
            work_iters: Work::calibrate().iters_for(200),
            wait: config.wait,
            cores: &[],
            drain_timeout_ns: config.drain_timeout_ms * 1_000_000,
            clock: &clock,
        };
        let out = candidate.visit(RunOnce(&setup)).unwrap();
        assert!(!out.timed_out, "{candidate}");
        assert_eq!(out.orders.len(), 300, "{candidate}");
        let mut ids: Vec<(u16, u32)> = out.orders.iter().map(|o| (o.strategy, o.seq)).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 300, "{candidate}: duplicates");
        for o in &out.orders {
            assert!(o.ts.is_sorted(), "{candidate}: {o:?}");
            let fire = schedule.per_strategy[usize::from(o.strategy)][o.seq as usize];
            assert_eq!((o.venue, o.delay_ns), (fire.venue, fire.delay_ns));
            assert!(o.ts[4] - o.ts[3] >= o.delay_ns, "held for at least D");
        }
    }
}

#[test]
fn execute_and_report_a_tiny_sweep() {
    let mut config = tiny();
    config.candidates = vec![Candidate::ArrayQueue, Candidate::SpscMux];
    let outcome = super::execute(&config, &[], |_| {}).unwrap();
    assert_eq!(outcome.cells.len(), 4);
    for cell in &outcome.cells {
        assert_eq!(cell.runs.len(), 1);
        assert_eq!(cell.runs[0].missing, 0);
        assert_eq!(cell.runs[0].out_of_order, 0);
    }
    let dir = tempfile::tempdir().unwrap();
    let md = super::report::write(dir.path(), "tiny.yaml".as_ref(), &config, &outcome).unwrap();
    assert!(md.contains("rt-venue p99"));
    assert!(dir.path().join("results.json").exists());
    let svg = std::fs::read_to_string(dir.path().join("rt-venue-p99.svg")).unwrap();
    assert!(svg.contains("<polyline") && svg.ends_with("</svg>\n"));
}
