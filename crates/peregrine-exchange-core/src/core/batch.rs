//! The end of a batch: the journal commit that must precede every result, then the
//! feed packets, commitments and the debounced telemetry copies; and the idle-time
//! housekeeping.

use crate::feed::{FeedPosition, PacketSink};
use crate::journal::CommandLog;

use super::Core;

impl<L: CommandLog> Core<L> {
    /// Ends a batch: makes the log durable. Call before writing any report of the
    /// batch to a socket.
    pub fn end_batch(&mut self) -> std::io::Result<()> {
        if self.metrics.in_batch() {
            // With metrics or depth on, the one clock read per batch: it ends the last
            // request's latency, and `publish` reuses it for the debounces. Without
            // them, no clock read.
            let now = (self.metrics.timing() || self.depth.is_some()).then(|| self.clock.now().0);
            self.metrics.end_batch(now);
            self.batch_end = now;
        }
        self.log.commit()?;
        if let Some(s) = self.snapshots.as_mut() {
            s.after_commit(&self.engine, &self.report_next);
        }
        Ok(())
    }

    /// Sends the batch's feed packet(s) to `out`. Called after the batch's reports
    /// are written, so the feed send is not on the order→ack path.
    pub fn publish(&mut self, out: &mut impl PacketSink) {
        if let Some(c) = self.commits.as_mut() {
            c.flush();
        }
        self.drain_commitments();
        if let Some(feed) = self.feed.as_mut() {
            if feed.pending() > 0 {
                feed.flush(self.clock.now().0, out);
            }
        }
        if let Some(now) = self.batch_end.take() {
            self.publish_telemetry(now);
        }
    }

    /// Housekeeping when idle: feed heartbeats, and the debounced metrics and depth
    /// publishes (so the last batch before a quiet spell is published too).
    pub fn idle(&mut self, out: &mut impl PacketSink) {
        if let Some(c) = self.commits.as_mut() {
            c.close_if_past(self.clock.now().0);
            c.flush();
            if self.drain_commitments() > 0 {
                if let Some(feed) = self.feed.as_mut() {
                    feed.flush(self.clock.now().0, out);
                }
            }
        }
        if let Some(feed) = self.feed.as_mut() {
            feed.heartbeat_if_due(self.clock.now().0, out);
        }
        if self.metrics.attached() || self.depth.is_some() {
            let now = self.clock.now().0;
            self.publish_telemetry(now);
        }
    }

    /// Batch mode: the tick just run is complete; closes its commitment window.
    pub fn end_tick(&mut self) {
        if let Some(c) = self.commits.as_mut() {
            c.close_now();
        }
    }

    /// After recovery: moves the clock past the last window the commitment log holds,
    /// so a new command never joins a window that was already committed (matters only
    /// if the wall clock stepped back across a restart).
    pub fn commitments_floor(&mut self) {
        if let Some(c) = self.commits.as_ref() {
            if let Some(k) = c.logged_through() {
                let end = k.saturating_add(1).saturating_mul(c.window_ns());
                self.clock.not_before(peregrine_types::Timestamp(end));
            }
        }
    }

    /// Copies depth and counters for readers, each at most once per its interval.
    /// Runs after the feed flush, so the depth snapshot matches the feed sequence.
    fn publish_telemetry(&mut self, now: u64) {
        if let Some(d) = self.depth.as_mut() {
            let feed = self
                .feed
                .as_ref()
                .map_or(FeedPosition::default(), |f| f.position());
            d.publish(now, self.engine_seq, feed, &self.engine);
        }
        let (engine, log, seq) = (&self.engine, &self.log, self.engine_seq);
        self.metrics.publish(now, |s| {
            s.engine_seq = seq;
            s.journal = log.stats();
            s.resting.clear();
            s.resting
                .extend(engine.books().map(|b| (b.spec().id, b.len() as u64)));
        });
    }

    /// Queues the hasher's finished commitments on the feed.
    fn drain_commitments(&mut self) -> usize {
        let (Some(c), feed) = (self.commits.as_mut(), self.feed.as_mut()) else {
            return 0;
        };
        let mut feed = feed;
        c.drain(&mut |c| {
            if let Some(f) = feed.as_mut() {
                f.push(crate::route::commitment_message(&c));
            }
        })
    }
}
