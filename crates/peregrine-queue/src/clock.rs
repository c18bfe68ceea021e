//! The clock every timestamp of the order path is read from (strategies, the order
//! engine, the benches).
//!
//! `CLOCK_MONOTONIC` in nanoseconds: one clock for every process on the machine, so a
//! `t1` stamped by a strategy process and a `t2` stamped by the engine subtract to a
//! real interval. `std::time::Instant` uses the same clock on Linux but does not expose
//! its value, so it cannot cross a process boundary. A call costs ~23 ns here (vDSO,
//! shared/FACTS.md).

/// Nanoseconds of `CLOCK_MONOTONIC`.
#[inline]
pub fn now_ns() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    // The monotonic clock starts near boot and is never negative.
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

#[cfg(all(test, not(loom)))]
mod tests {
    #[test]
    fn monotonic_and_close_to_instant() {
        let a = super::now_ns();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = super::now_ns();
        assert!(b >= a + 2_000_000, "{a} {b}");
    }
}
