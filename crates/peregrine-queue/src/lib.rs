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
//! * [`wait`]: what a polling thread does when it finds nothing to do (spin, then
//!   yield, then park with a bounded timeout; three named presets).
//! * [`clock`]: `CLOCK_MONOTONIC` nanoseconds, comparable across processes.
//! * [`pin`]: pin threads to cores, and warn when more threads spin than there are cores.
//! * [`shm`]: the same rings for separate processes: an SPSC ring and a bounded MPSC ring
//!   (per-slot sequence numbers, CAS on the tail, as in Vyukov's bounded queue and
//!   crossbeam's `ArrayQueue`) laid out in a memory-mapped file, for plain-old-data
//!   messages ([`shm::Pod`], bytemuck's). Attaching validates the header and returns a
//!   typed error on any mismatch.
//!
//! Memory-ordering comments follow one rule: every `Acquire` names the `Release` it pairs
//! with and vice versa; every `Relaxed` says why no ordering is needed.
#![allow(
    unsafe_code,
    reason = "rings hand values across threads and processes through raw slots"
)]
#![deny(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]

pub mod clock;
pub mod linelog;
pub mod mux;
pub mod pin;
pub mod poller;
pub mod shm;
pub mod spsc;
mod sync;
pub mod wait;

#[cfg(all(test, loom))]
mod loom_models;

pub use mux::Mux;
pub use pin::{available_cores, pin_current, spinner_warning, PinOutcome};
pub use spsc::{Consumer, Producer, PushError};
pub use wait::{IdlePolicy, Idler, WaitStrategy};
