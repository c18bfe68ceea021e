//! The end of a batch: the journal commit that must precede every result, then the
//! feed packets, commitments and the debounced telemetry copies; and the idle-time
//! housekeeping.

use crate::feed::{Feed, FeedPosition, PacketSink};
use crate::journal::CommandLog;

use super::{Core, HELD_BATCHES};

impl<L: CommandLog> Core<L> {
    /// Ends a batch: commits the log (written, and durable now or later). The
    /// batch's reports may leave once [`Core::durable_seq`] has reached
    /// [`Core::committed_seq`] as it is now; its feed messages leave through
    /// [`Core::publish`] at that point.
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
        self.committed_seq = self.engine_seq;
        if let Some(feed) = self.feed.as_ref() {
            self.committed_queued = feed.queued();
            if self.log.durable_through() < self.committed_seq {
                self.hold(self.committed_queued);
            }
        }
        self.tell_snapshots();
        Ok(())
    }

    /// Remembers a batch whose feed messages wait for its sync.
    fn hold(&mut self, queued: u64) {
        let batch = (self.committed_seq, queued);
        let full = self.held.len() >= HELD_BATCHES;
        match self.held.back_mut() {
            Some(last) if full => *last = batch,
            _ => self.held.push_back(batch),
        }
    }

    /// The feed messages that may leave now: up to the end of the newest durable
    /// batch (everything committed when no batch waits). Messages of commands run
    /// since the last [`Core::end_batch`] (the loop's chores run a GTD expiry's tick
    /// after it) are neither committed nor durable: they wait for the next batch.
    fn releasable(&mut self, queued: u64) -> u64 {
        let queued = if self.engine_seq > self.committed_seq {
            queued.min(self.committed_queued)
        } else {
            queued
        };
        let durable = self.durable_seq();
        if durable >= self.committed_seq {
            self.held.clear();
            return queued;
        }
        let mut upto = None;
        while let Some(&(seq, end)) = self.held.front() {
            if seq > durable {
                break;
            }
            upto = Some(end);
            self.held.pop_front();
        }
        match (upto, self.held.front()) {
            (Some(end), _) => end,
            // Nothing newly durable: release what the oldest waiting batch follows.
            (None, Some(_)) => self.released_feed(),
            (None, None) => queued,
        }
    }

    /// Feed messages already released (queued minus pending).
    fn released_feed(&self) -> u64 {
        self.feed
            .as_ref()
            .map_or(0, |f| f.queued() - f.pending() as u64)
    }

    /// Tells the snapshot sink how far the log is durable (after each batch, and
    /// whenever it advanced).
    fn tell_snapshots(&mut self) {
        let durable = self.durable_seq();
        if let Some(s) = self.snapshots.as_mut() {
            s.after_commit(&self.engine, durable, &self.report_next);
            self.snapshot_durable = durable;
        }
    }

    /// Sends the batch's feed packet(s) to `out`. Called after the batch's reports
    /// are written, so the feed send is not on the order→ack path.
    pub fn publish(&mut self, out: &mut impl PacketSink) {
        if self.snapshots.is_some() && self.durable_seq() > self.snapshot_durable {
            self.tell_snapshots();
        }
        if let Some(c) = self.commits.as_mut() {
            c.flush();
        }
        self.drain_commitments();
        self.flush_feed(out, false);
        if let Some(now) = self.batch_end.take() {
            self.publish_telemetry(now);
        }
    }

    /// Housekeeping when idle: [`Core::housekeeping`], and every feed message
    /// whose batch is durable leaves now rather than when its packet is due.
    pub fn idle(&mut self, out: &mut impl PacketSink) {
        self.chores(out, true);
    }

    /// Periodic work kept off the order path (the loops call it about once a
    /// millisecond while busy, and [`Core::idle`] after each park): the journal's
    /// deferred high-water mark ([`CommandLog::housekeeping`]), commitment windows,
    /// feed heartbeats, and the debounced metrics and depth publishes (so the last
    /// batch before a quiet spell is published too). Feed packets are left to
    /// [`Core::publish`]'s own schedule: a forced send here would put a UDP send in
    /// front of whichever order arrives next.
    pub fn housekeeping(&mut self, out: &mut impl PacketSink) {
        self.chores(out, false);
    }

    fn chores(&mut self, out: &mut impl PacketSink, flush_feed: bool) {
        if let Err(e) = self.log.housekeeping() {
            // The log is poisoned too: the next commit returns the error and stops
            // the loop.
            log::warn!("journal housekeeping failed: {e}");
        }
        if let Some(c) = self.commits.as_mut() {
            c.close_if_past(self.clock.now().0);
            c.flush();
            self.drain_commitments();
        }
        if flush_feed {
            self.flush_feed(out, true);
        }
        if let Some(feed) = self.feed.as_mut() {
            feed.heartbeat_if_due(self.clock.now().0, out);
        }
        if self.metrics.attached() || self.depth.is_some() {
            let now = self.clock.now().0;
            self.publish_telemetry(now);
        }
    }

    /// Ends the feed session on a graceful stop: sends every feed message whose batch
    /// is durable, then the end-of-session packet (`first_seq` one past the last
    /// message sent). Call once the journal's sync has covered everything committed
    /// (messages of a batch that is not durable are never published). Nothing is sent
    /// on this feed session afterwards.
    pub fn end_feed(&mut self, out: &mut impl PacketSink) {
        self.flush_feed(out, true);
        let now = self.clock.now().0;
        if let Some(feed) = self.feed.as_mut() {
            feed.end_session(now, out);
        }
    }

    /// Sends every feed message whose batch is durable, without waiting for a
    /// fuller packet (before a snapshot, and when idle).
    pub fn flush_feed_now(&mut self, out: &mut impl PacketSink) {
        self.flush_feed(out, true);
    }

    /// Sends the feed messages whose batches are durable: at once when `force`,
    /// else when [`Feed::due`].
    fn flush_feed(&mut self, out: &mut impl PacketSink, force: bool) {
        let Some(queued) = self
            .feed
            .as_ref()
            .filter(|f| f.pending() > 0)
            .map(Feed::queued)
        else {
            return;
        };
        let upto = self.releasable(queued);
        let now = self.clock.now().0;
        if let Some(feed) = self.feed.as_mut() {
            let sent = feed.queued() - feed.pending() as u64;
            let count = usize::try_from(upto.saturating_sub(sent)).unwrap_or(usize::MAX);
            if force || feed.due(count, now) {
                feed.flush_until(upto, now, out);
            }
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
                .map_or(FeedPosition::default(), |f| f.position_with_pending());
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
                f.push(crate::route::commitment_message(&c), c.timestamp);
            }
        })
    }
}
