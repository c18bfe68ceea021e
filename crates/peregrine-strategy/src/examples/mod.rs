//! Example strategies that use the market: [`maker::Maker`] quotes both sides around
//! the observed mid, skewed against its inventory, re-quoting with replaces;
//! [`taker::Taker`] takes at the touch with IOC orders; [`reverter::Reverter`] trades
//! a moving average of the mid (the one to copy). And a latency probe,
//! [`pinger::Pinger`], for measuring the strategy↔engine round trip.
//!
//! Both draw randomness from the workspace's seeded generator
//! ([`peregrine_types::Rng`]) so runs repeat.

pub mod maker;
pub mod pinger;
pub mod reverter;
pub mod taker;
