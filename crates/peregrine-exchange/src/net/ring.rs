//! The bounded SPSC hand-off of the split topology, behind a small alias so the
//! `peregrine-queue` ring can replace rtrb without touching the pipeline code.

/// Producer half.
pub type Producer<T> = rtrb::Producer<T>;
/// Consumer half.
pub type Consumer<T> = rtrb::Consumer<T>;

/// A ring of `capacity` slots, allocated up front.
pub fn ring<T>(capacity: usize) -> (Producer<T>, Consumer<T>) {
    rtrb::RingBuffer::new(capacity)
}
