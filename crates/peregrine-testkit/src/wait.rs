//! Deadlines for tests: nothing that could hang may hang, and nothing waits on a
//! sleep that "should be long enough".

use std::time::{Duration, Instant};

/// Runs `body` on its own thread and fails the test if it takes longer than `secs`
/// seconds: a stuck loop must fail, not hang CI. No timing assertion: the limit is
/// orders of magnitude above the expected run time. A panic in `body` fails the test
/// with `body`'s own message.
pub fn with_timeout<T: Send + 'static>(secs: u64, body: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = std::thread::spawn(move || {
        let value = body();
        // The receiver is gone only if we already timed out.
        let _ = tx.send(());
        value
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        // Sent just before returning: the join is immediate.
        Ok(()) => handle
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e)),
        // The body panicked before sending: re-raise its panic.
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => match handle.join() {
            Err(e) => std::panic::resume_unwind(e),
            Ok(value) => value,
        },
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("test body did not finish in {secs} s")
        }
    }
}

/// Polls `cond` until it holds and fails the test, naming `what`, if it still does not
/// after `timeout` (see [`eventually`]).
pub fn wait_until(what: &str, timeout: Duration, cond: impl FnMut() -> bool) {
    assert!(
        eventually(timeout, cond),
        "timed out after {timeout:?} waiting for {what}"
    );
}

/// Polls `cond` until it holds (true) or `timeout` passes (false), for a test that
/// wants to say more than [`wait_until`] can when it fails. Polls every millisecond at
/// first, backing off to every 50 ms, so a condition that holds quickly is seen
/// quickly and a slow one costs little CPU.
pub fn eventually(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(1);
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returns_the_value() {
        assert_eq!(with_timeout(10, || 7), 7);
    }

    #[test]
    #[should_panic(expected = "inner message")]
    fn a_panic_keeps_its_message() {
        with_timeout(10, || panic!("inner message"));
    }

    #[test]
    #[should_panic(expected = "did not finish in 1 s")]
    fn a_stuck_body_fails() {
        with_timeout(1, std::thread::park);
    }

    #[test]
    fn waits_for_a_condition() {
        let start = Instant::now();
        wait_until("two polls", Duration::from_secs(10), || {
            start.elapsed() > Duration::from_millis(3)
        });
    }

    #[test]
    #[should_panic(expected = "waiting for never")]
    fn a_condition_that_never_holds_fails() {
        wait_until("never", Duration::from_millis(20), || false);
    }
}
