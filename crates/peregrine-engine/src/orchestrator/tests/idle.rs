//! The idle orchestrator: it sleeps on the doorbell, and a strategy's push that rings
//! it (and the gateway's completion, which rings it too) is served at once, not after
//! the sleep's timeout.

use super::*;

/// Far longer than any of these tests may take: only a ring ends such a sleep.
const LONG_SLEEP: Duration = Duration::from_secs(120);
/// How long a test waits for an answer before it fails.
const ANSWER_WITHIN: Duration = Duration::from_secs(30);

/// Runs the orchestrator's own loop (park: 100 spins, 10 yields, then the bell) on a
/// thread, waits until it sleeps, and returns the rig's remaining ends.
fn sleeping(mut r: Rig) -> (Rig, std::thread::JoinHandle<Orchestrator>) {
    let placeholder = {
        // The rig keeps a second orchestrator it never drives, so it can lend this
        // one to the thread.
        let cfg = EngineConfig {
            shm_dir: Some(r._dir.path().to_owned()),
            ..EngineConfig::default()
        };
        Orchestrator::new(
            &cfg,
            Vec::new(),
            Vec::new(),
            Arc::new(ArrayQueue::new(1)),
            Arc::new(Shared::new(Arc::new(AtomicBool::new(false)))),
        )
    };
    let mut orch = std::mem::replace(&mut r.orch, placeholder).with_doorbell(Arc::clone(&r.bell));
    orch.wait = WaitStrategy::SpinThenPark.policy();
    orch.bell_timeout = LONG_SLEEP;
    let h = std::thread::spawn(move || orch.run());
    let deadline = Instant::now() + ANSWER_WITHIN;
    while !r.bell.armed() {
        assert!(Instant::now() < deadline, "the orchestrator never slept");
        std::thread::sleep(Duration::from_millis(1));
    }
    (r, h)
}

/// Stops the orchestrator thread (rings until it has seen `stop`: a ring just
/// before it armed would not wake it).
fn stop(r: &Rig, h: std::thread::JoinHandle<Orchestrator>) {
    r.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let deadline = Instant::now() + ANSWER_WITHIN;
    while !h.is_finished() {
        assert!(Instant::now() < deadline, "the orchestrator did not stop");
        r.bell.ring();
        std::thread::sleep(Duration::from_millis(1));
    }
    h.join().unwrap();
}

#[test]
fn a_ring_wakes_the_sleeping_orchestrator_for_an_order_and_its_fill() {
    let (mut r, h) = sleeping(rig(FillModel::Full));
    // What the SDK's Api does: push, then ring (a mapping of its own).
    let strategy_bell =
        Doorbell::open(&peregrine_strategy::paths::doorbell(r._dir.path())).unwrap();
    let wakes = strategy_bell.wakes();
    r.send(1, 5);
    strategy_bell.ring();
    let deadline = Instant::now() + ANSWER_WITHIN;
    let mut kinds = Vec::new();
    while kinds.len() < 2 {
        assert!(
            Instant::now() < deadline,
            "the sleeping orchestrator did not answer: {kinds:?}"
        );
        match r.rx.try_pop() {
            Some(ev) => kinds.push(ev.kind()),
            None => std::thread::sleep(Duration::from_millis(1)),
        }
    }
    assert_eq!(kinds, vec![Some(EventKind::Ack), Some(EventKind::Fill)]);
    assert!(strategy_bell.wakes() > wakes, "the ring woke it");
    stop(&r, h);
}
