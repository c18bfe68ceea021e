//! Test support shared by Peregrine's crates; used only as a dev-dependency.
//!
//! * [`alloc`]: the counting allocator behind every no-allocation test.
//! * [`wait`]: [`with_timeout`] (a stuck test fails instead of hanging CI) and
//!   [`wait_until`] (a bounded wait on a condition, the replacement for sleeping and
//!   hoping).
//! * [`net`]: [`free_port`], a loopback port to hand to a child process, outside the
//!   kernel's ephemeral range so a parallel test's connect cannot take it first.
#![deny(unsafe_code)]
#![warn(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]

pub mod alloc;
pub mod net;
pub mod wait;

pub use alloc::{allocations, allocations_during, CountingAllocator};
pub use net::free_port;
pub use wait::{eventually, wait_until, with_timeout};
