//! The floor under the strategy ↔ engine round trip: two *processes* ping-ponging
//! through two shared-memory SPSC rings carrying the engine's own messages (a 64-byte
//! [`Request`] one way, a 128-byte [`Event`] back), each busy-spinning on its own
//! core. Nothing is decided on the far side: it copies the request's client id and
//! t1 into an event and pushes it back. The engine's round trip (`scripts/engine-rt.sh`
//! runs both in one session) adds the orchestrator's work to exactly this.
//!
//! `peregrine bench engine floor` creates the rings, starts itself again as the echo
//! process (`peregrine-bench engine echo --dir D`, pinned to the other core), measures
//! `rounds` round trips (after a warm-up lap) and stops the echo.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use peregrine_queue::clock::now_ns;
use peregrine_queue::pin::{pin_current, CoreId};
use peregrine_queue::shm::ShmSpsc;
use peregrine_strategy::msg::{Event, EventKind, Request};
use peregrine_types::stamp;

/// Slots per ring (the engine's default `ring_capacity`).
const CAPACITY: usize = 4096;
/// The client id that tells the echo process to stop.
const STOP: u64 = u64::MAX;

fn paths(dir: &Path) -> (PathBuf, PathBuf) {
    (dir.join("floor.submit"), dir.join("floor.return"))
}

/// Measures `rounds` round trips against an echo process on core `echo_core`, this
/// thread on `own_core`; returns the round-trip histogram (ns).
pub fn run(
    dir: &Path,
    rounds: u64,
    own_core: Option<CoreId>,
    echo_core: Option<usize>,
) -> anyhow::Result<Histogram<u64>> {
    std::fs::create_dir_all(dir)?;
    let (submit, ret) = paths(dir);
    let s = ShmSpsc::<Request>::create(&submit, CAPACITY)?;
    let r = ShmSpsc::<Event>::create(&ret, CAPACITY)?;
    let mut tx = s.producer()?;
    let mut rx = r.consumer()?;
    let mut echo = spawn_echo(dir, echo_core)?;
    let _ = pin_current("floor", own_core);
    let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)?;
    let deadline = Instant::now() + Duration::from_secs(600);
    let mut ask = |id: u64, record: bool, h: &mut Histogram<u64>| -> anyhow::Result<()> {
        let t1 = now_ns();
        let mut req = Request::heartbeat(0, t1);
        req.client_id = id;
        while tx.try_push(req).is_err() {
            std::hint::spin_loop();
        }
        loop {
            if let Some(ev) = rx.try_pop() {
                let t8 = now_ns();
                anyhow::ensure!(ev.client_id == id, "echo out of order");
                if record {
                    h.saturating_record(t8.saturating_sub(ev.ts[stamp::STRATEGY_SEND]).max(1));
                }
                return Ok(());
            }
            if Instant::now() > deadline {
                anyhow::bail!("the echo process does not answer");
            }
            std::hint::spin_loop();
        }
    };
    let warm = (rounds / 10).max(1_000);
    for i in 0..warm {
        ask(i + 1, false, &mut h)?;
    }
    for i in 0..rounds {
        ask(warm + i + 1, true, &mut h)?;
    }
    let mut stop = Request::heartbeat(0, now_ns());
    stop.client_id = STOP;
    let _ = tx.try_push(stop);
    let _ = echo.wait();
    let _ = std::fs::remove_file(&submit);
    let _ = std::fs::remove_file(&ret);
    Ok(h)
}

fn spawn_echo(dir: &Path, core: Option<usize>) -> anyhow::Result<Child> {
    let exe = std::env::current_exe()?;
    let mut c = Command::new(exe);
    c.args(["engine", "echo", "--dir"]).arg(dir);
    if let Some(core) = core {
        c.args(["--core", &core.to_string()]);
    }
    Ok(c.spawn()?)
}

/// The echo process: answers every request with an event carrying its client id and
/// t1, busy-spinning, until the stop request.
pub fn echo(dir: &Path, core: Option<CoreId>) -> anyhow::Result<()> {
    let _ = pin_current("echo", core);
    let (submit, ret) = paths(dir);
    let mut rx = ShmSpsc::<Request>::attach(&submit)?.consumer()?;
    let mut tx = ShmSpsc::<Event>::attach(&ret)?.producer()?;
    loop {
        let Some(req) = rx.try_pop() else {
            std::hint::spin_loop();
            continue;
        };
        if req.client_id == STOP {
            return Ok(());
        }
        let mut ev = Event {
            kind: EventKind::Reject as u8,
            client_id: req.client_id,
            ..Event::default()
        };
        ev.ts[stamp::STRATEGY_SEND] = req.t1;
        while tx.try_push(ev).is_err() {
            std::hint::spin_loop();
        }
    }
}
