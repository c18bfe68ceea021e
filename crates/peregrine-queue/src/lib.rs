//! Hand-off queues for Peregrine's order path.
//!
//! Every structure here is bounded, allocates all of its slots up front and never
//! allocates on `push`/`pop`:
//!
//! * [`spsc`]: a Disruptor-style single-producer single-consumer ring. Capacity is a
//!   power of two so an index maps to a slot with a mask; the head (consumer) and tail
//!   (producer) counters run freely and sit on their own cache lines
//!   ([`crossbeam_utils::CachePadded`]); each side keeps a private copy of the other
//!   side's counter and only re-reads the shared one when that copy says the ring is
//!   full (producer) or empty (consumer), so in the steady state a hand-off touches one
//!   shared cache line per side instead of two.
//! * [`mux`]: N SPSC rings, one per producer, drained by one consumer that scans them
//!   round-robin. Producers never share an atomic; the consumer pays for the scan.
//! * [`wait`]: what a polling thread does when it finds nothing to do (busy-spin,
//!   spin-then-yield, spin-then-park with a bounded timeout).
//! * [`pin`]: pin threads to cores, and warn when more threads spin than there are cores.
//! * [`shm`]: the same rings for separate processes: an SPSC ring and a bounded MPSC ring
//!   (per-slot sequence numbers, CAS on the tail, as in Vyukov's bounded queue and
//!   crossbeam's `ArrayQueue`) laid out in a memory-mapped file, for plain-old-data
//!   messages ([`shm::Pod`]). Attaching validates the header and returns a typed error
//!   on any mismatch.
//!
//! Memory-ordering comments follow one rule: every `Acquire` names the `Release` it pairs
//! with and vice versa; every `Relaxed` says why no ordering is needed.
#![allow(
    unsafe_code,
    reason = "rings hand values across threads and processes through raw slots"
)]
#![deny(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]

pub mod mux;
pub mod pin;
pub mod shm;
pub mod spsc;
pub mod wait;

pub use mux::Mux;
pub use pin::{available_cores, pin_current, spinner_warning, PinOutcome};
pub use spsc::{Consumer, Producer, PushError};
pub use wait::{WaitStrategy, Waiter};

#[cfg(test)]
pub(crate) mod test_util {
    /// Runs `body` on its own thread and fails the test if it takes longer than
    /// `secs` (a stuck lock-free loop must fail, not hang CI). No timing assertion:
    /// the limit is orders of magnitude above the expected run time.
    pub fn with_timeout<T: Send + 'static>(
        secs: u64,
        body: impl FnOnce() -> T + Send + 'static,
    ) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            // The receiver is gone only if we already timed out.
            let _ = tx.send(body());
        });
        match rx.recv_timeout(std::time::Duration::from_secs(secs)) {
            Ok(value) => value,
            Err(e) => panic!("test body did not finish in {secs} s: {e}"),
        }
    }
}
