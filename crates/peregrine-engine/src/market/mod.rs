//! Market data: the market-data thread that keeps the engine's L2 book per (venue,
//! instrument) from every venue's feed (`peregrine_venues::feed`) and publishes them to
//! strategies.
//!
//! ```text
//!  SimVenue (gateway thread) ──SPSC of MdUpdate──┐
//!  ExchangeVenue feed (UDP, on the md thread) ───┼─▶ md thread: L2Book per (venue, instrument)
//!                                                │     ├─▶ book board (shm, seqlock per book)
//!                                                │     └─▶ per-strategy md ring (shm SPSC),
//!                                                │          conflating when a strategy is slow
//! ```
//!
//! * [`book::L2Book`]: price levels of one book, bounded, no allocation per update.
//! * [`fanout`]: one strategy's outbox: subscriptions, conflation, skip counts.
//! * [`thread::MdThread`]: the thread.

pub mod book;
pub mod fanout;
#[cfg(test)]
mod tests;
pub mod thread;
