//! [`CommitSink`]: what the matching stage needs from commitments, so that the
//! exchange core (sans-IO) never owns the hasher thread: the server hands it a
//! [`crate::Committer`] (hasher thread and commitment log); a test can hand it anything
//! that follows the same window rules.

use peregrine_book::Event;

use crate::tick::Commitment;

/// The matching thread's side of commitments. Every call is cheap and never blocks
/// for long (the threaded implementation copies fills into a preallocated chunk and
/// hands full chunks over a ring).
pub trait CommitSink: Send + std::fmt::Debug {
    /// The window length, nanoseconds.
    fn window_ns(&self) -> u64;
    /// The last window index the commitment log held at start (`None`: empty log).
    fn logged_through(&self) -> Option<u64>;
    /// A command with timestamp `ts` was executed (or replayed) with `events`.
    fn command(&mut self, ts: u64, events: &[Event]);
    /// Closes the open window now (batch mode, after a tick).
    fn close_now(&mut self);
    /// Closes the open window if the clock `now` has passed its end.
    fn close_if_past(&mut self, now: u64);
    /// Hands what has been collected to the hasher if it can without waiting.
    fn flush(&mut self);
    /// Hands every finished commitment to `f` (for the feed); returns how many.
    fn drain(&mut self, f: &mut dyn FnMut(Commitment)) -> usize;
}
