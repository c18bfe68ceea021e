//! The submit hand-off across the process boundary, measured: one shared-memory SPSC
//! ring per strategy scanned round-robin by the orchestrator (what the engine uses)
//! against one shared-memory bounded MPSC ring (Vyukov/`ArrayQueue` family) all
//! strategies push into.
//!
//! Two threads in one process share the mapping exactly as two processes would (the
//! rings are files under the given directory). Round trip: a "strategy" thread pushes a
//! 64-byte [`Request`] into its submit ring and spins until the "orchestrator" thread
//! answers through a return SPSC ring; `rings - 1` other strategies are connected and
//! idle, so the SPSC candidate pays its scan. Throughput: the strategy pushes `rounds`
//! requests back to back. Only one producer is active: a 2-core machine cannot run more
//! spinning producers without measuring the scheduler (shared/FACTS.md).

use std::path::Path;
use std::time::Instant;

use hdrhistogram::Histogram;
use peregrine_queue::clock::now_ns;
use peregrine_queue::pin::{pin_current, CoreId};
use peregrine_queue::shm::{ShmError, ShmMpsc, ShmSpsc};
use peregrine_queue::WaitStrategy;
use peregrine_strategy::msg::{Event, Request};

/// One candidate's numbers.
#[derive(Debug, Clone)]
pub struct SubmitResult {
    /// Candidate name.
    pub name: &'static str,
    /// Connected strategies.
    pub rings: usize,
    /// Round trip p50, p99, p99.9, ns.
    pub rt: [u64; 3],
    /// One-way pushes per second, one producer.
    pub throughput: f64,
}

/// A submit queue the bench's orchestrator pops from.
trait Submit: Send {
    fn pop(&mut self) -> Option<Request>;
}

struct Scan(Vec<peregrine_queue::shm::ShmSpscConsumer<Request>>, usize);

impl Submit for Scan {
    fn pop(&mut self) -> Option<Request> {
        let n = self.0.len();
        for step in 0..n {
            let i = (self.1 + step) % n;
            if let Some(r) = self.0[i].try_pop() {
                self.1 = (i + 1) % n;
                return Some(r);
            }
        }
        None
    }
}

struct One(peregrine_queue::shm::ShmMpscConsumer<Request>);

impl Submit for One {
    fn pop(&mut self) -> Option<Request> {
        self.0.try_pop()
    }
}

/// Runs both candidates with `rings` connected strategies.
pub fn run(
    dir: &Path,
    rings: usize,
    rounds: u64,
    wait: WaitStrategy,
    cores: &[CoreId],
) -> Result<Vec<SubmitResult>, ShmError> {
    let rings = rings.max(1);
    let mut out = Vec::new();
    // Per-strategy SPSC rings + scan.
    let files: Vec<_> = (0..rings).map(|i| dir.join(format!("spsc{i}"))).collect();
    let made: Vec<ShmSpsc<Request>> = files
        .iter()
        .map(|f| ShmSpsc::create(f, 4096))
        .collect::<Result<_, _>>()?;
    let consumers = made
        .iter()
        .map(|r| r.consumer())
        .collect::<Result<_, _>>()?;
    let mut tx = made[0].producer()?;
    let push = move |r: Request| tx.try_push(r).is_ok();
    out.push(measure(
        "spsc-per-strategy+scan",
        rings,
        Scan(consumers, 0),
        push,
        rounds,
        wait,
        cores,
        dir,
    )?);
    // One MPSC ring.
    let mpsc = ShmMpsc::<Request>::create(&dir.join("mpsc"), 4096)?;
    let consumer = mpsc.consumer()?;
    let producers: Vec<_> = (0..rings).map(|_| mpsc.producer()).collect();
    let push = move |r: Request| producers[0].try_push(r).is_ok();
    out.push(measure(
        "mpsc-shared",
        rings,
        One(consumer),
        push,
        rounds,
        wait,
        cores,
        dir,
    )?);
    for f in files.iter().chain([&dir.join("mpsc")]) {
        let _ = std::fs::remove_file(f);
    }
    Ok(out)
}

#[allow(
    clippy::too_many_arguments,
    reason = "a bench harness: all knobs are explicit"
)]
fn measure<S: Submit + 'static>(
    name: &'static str,
    rings: usize,
    mut submit: S,
    mut push: impl FnMut(Request) -> bool + Send + 'static,
    rounds: u64,
    wait: WaitStrategy,
    cores: &[CoreId],
    dir: &Path,
) -> Result<SubmitResult, ShmError> {
    let ret_path = dir.join(format!("{name}.return"));
    let _ = std::fs::remove_file(&ret_path);
    let ret = ShmSpsc::<Event>::create(&ret_path, 4096)?;
    let mut ret_tx = ret.producer()?;
    let mut ret_rx = ret.consumer()?;
    // Two untimed laps of the 4096-slot rings first: a fresh mapping page-faults on its
    // first lap (~2.4 µs per fault here), which would otherwise show up as the p99.9.
    let warm = 8_192;
    let total = warm + rounds * 2; // warm-up, round-trip phase, then throughput phase
    let orch_core = cores.first().copied();
    let orch = std::thread::spawn(move || {
        pin_current("bench-orchestrator", orch_core);
        let mut waiter = wait.idler();
        let mut seen = 0;
        while seen < total {
            match submit.pop() {
                Some(r) => {
                    seen += 1;
                    if seen <= warm + rounds {
                        let ev = Event {
                            client_id: r.client_id,
                            ..Event::default()
                        };
                        while ret_tx.try_push(ev).is_err() {
                            waiter.idle();
                        }
                    }
                    waiter.reset();
                }
                None => waiter.idle(),
            }
        }
    });
    pin_current("bench-strategy", cores.get(1).copied());
    let mut h = Histogram::<u64>::new_with_bounds(1, 10_000_000_000, 3).expect("static bounds");
    let mut waiter = wait.idler();
    for i in 0..warm + rounds {
        let t0 = now_ns();
        while !push(Request::cancel(i, t0)) {
            waiter.idle();
        }
        while ret_rx.try_pop().is_none() {
            waiter.idle();
        }
        waiter.reset();
        if i >= warm {
            h.saturating_record(now_ns().saturating_sub(t0).max(1));
        }
    }
    let start = Instant::now();
    for i in 0..rounds {
        while !push(Request::cancel(i, 0)) {
            waiter.idle();
        }
    }
    let _ = orch.join();
    let throughput = rounds as f64 / start.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(&ret_path);
    Ok(SubmitResult {
        name,
        rings,
        rt: [0.5, 0.99, 0.999].map(|q| h.value_at_quantile(q)),
        throughput,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn both_candidates_complete() {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let dir = tempfile::tempdir().unwrap();
            let wait = peregrine_queue::WaitStrategy::SpinThenYield;
            let _ = tx.send(super::run(dir.path(), 3, 2_000, wait, &[]).unwrap());
        });
        let r = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("bench finished in 60 s");
        assert_eq!(r.len(), 2);
        assert!(r.iter().all(|x| x.rt[0] > 0 && x.throughput > 0.0));
    }
}
