//! Two example strategies: [`maker::Maker`] quotes both sides around a mid with an
//! inventory limit; [`taker::Taker`] crosses the spread at random intervals. And a
//! latency probe, [`pinger::Pinger`], for measuring the strategy↔engine round trip.
//!
//! Both draw randomness from the workspace's seeded generator
//! ([`peregrine_types::Rng`]) so runs repeat.

pub mod maker;
pub mod pinger;
pub mod taker;
