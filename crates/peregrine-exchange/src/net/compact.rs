//! The compact topology: one thread waits for readiness on the listener and the
//! sessions, reads what is ready, decodes, matches, journals and writes. No hand-off
//! between threads sits on the order path, so an order costs its share of one
//! `epoll_wait`, one `read`, the match, the journal `write` and one `write` of the
//! batch's reports — the shape that suits a 2-core machine where the other core runs
//! the clients.
//!
//! Per iteration ([`Compact::step`]): poll (zero timeout while spinning; blocking once
//! the idler parks) → read the ready sessions → run their requests → end the batch
//! (journal write; with group commit the sync runs on its own thread) → mark the
//! batch's reports → release what is durable → timers → one `write` per session with
//! writable output → the feed's durable messages → housekeeping after a park and about
//! once a millisecond ([`Housekeeping`](crate::net::Housekeeping)).
//!
//! The iteration is generic over its I/O ([`Shell`], [`FeedPort`]): the server runs
//! it over sockets ([`run`]), a deterministic simulator over its own connections,
//! one step at a time, with the same code in between.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use peregrine_exchange_core::dispatch::Dispatch;
use peregrine_exchange_core::feed::PacketSink;
use peregrine_exchange_core::{CommandLog, Core, Request};
use peregrine_queue::WaitStrategy;
use peregrine_wire::v2::Outbound;

use crate::feed::FeedIo;
use crate::metrics::ack::AckTimer;
use crate::net::session::conn::SessionIo;
use crate::net::sockets::{Polled, Sockets};
use crate::net::table::SessionTable;
use crate::net::Housekeeping;

/// The longest a parked loop sleeps without input (timers, heartbeats and the
/// debounced metrics are checked at least this often).
pub(crate) const MAX_PARK: Duration = Duration::from_millis(10);

/// The connections around the session table: accept and read what is ready (waiting
/// up to a timeout), and write and close ([`SessionIo`]).
pub(crate) trait Shell: SessionIo {
    /// See [`Sockets::poll`].
    fn poll(
        &mut self,
        table: &mut SessionTable,
        timeout: Option<Duration>,
        read: bool,
        requests: &mut Vec<Request>,
    ) -> std::io::Result<Polled>;
}

impl Shell for Sockets {
    #[inline]
    fn poll(
        &mut self,
        table: &mut SessionTable,
        timeout: Option<Duration>,
        read: bool,
        requests: &mut Vec<Request>,
    ) -> std::io::Result<Polled> {
        Sockets::poll(self, table, timeout, read, requests)
    }
}

/// The feed's I/O: where packets go, and the recovery service.
pub(crate) trait FeedPort {
    /// Where the feed's packets are sent.
    type Sink: PacketSink;
    /// The packet sink.
    fn sink(&mut self) -> &mut Self::Sink;
    /// Answers recovery clients from the core's state.
    fn poll_recovery<L: CommandLog>(&mut self, core: &Core<L>);
    /// A snapshot request waits for the feed to catch up with the book.
    fn snapshot_waiting(&self) -> bool;
}

impl FeedPort for FeedIo {
    type Sink = Option<crate::feed::udp::UdpFeed>;

    #[inline]
    fn sink(&mut self) -> &mut Self::Sink {
        &mut self.udp
    }

    fn poll_recovery<L: CommandLog>(&mut self, core: &Core<L>) {
        FeedIo::poll_recovery(self, core);
    }

    #[inline]
    fn snapshot_waiting(&self) -> bool {
        FeedIo::snapshot_waiting(self)
    }
}

/// Everything one compact loop owns.
#[derive(Debug)]
pub(crate) struct Compact<L: CommandLog, S: Shell, F: FeedPort> {
    pub(crate) table: SessionTable,
    pub(crate) core: Core<L>,
    pub(crate) shell: S,
    pub(crate) feed: F,
    pub(crate) dispatch: Dispatch,
    /// The order→ack timer (the server's; a simulator runs without).
    pub(crate) acks: Option<AckTimer>,
    requests: Vec<Request>,
    chores: Housekeeping,
    /// Negative control of the stall test (tests only): the timers judge liveness
    /// before the iteration reads what arrived.
    #[cfg(test)]
    pub(crate) judge_first: bool,
}

impl<L: CommandLog, S: Shell, F: FeedPort> Compact<L, S, F> {
    /// A loop over these parts.
    pub(crate) fn new(
        table: SessionTable,
        core: Core<L>,
        shell: S,
        feed: F,
        dispatch: Dispatch,
        acks: Option<AckTimer>,
    ) -> Self {
        Compact {
            table,
            core,
            shell,
            feed,
            dispatch,
            acks,
            requests: Vec::with_capacity(4096),
            chores: Housekeeping::default(),
            #[cfg(test)]
            judge_first: false,
        }
    }

    /// One iteration; `timeout` non-zero means the loop parked (blocks in the poll
    /// for at most that, then does the idle chores). Returns whether it did work.
    pub(crate) fn step(&mut self, timeout: Duration) -> std::io::Result<bool> {
        let parked = !timeout.is_zero();
        #[cfg(test)]
        if self.judge_first {
            self.table.timers(&mut self.shell);
        }
        let (table, core, feed) = (&mut self.table, &mut self.core, &mut self.feed);
        self.requests.clear();
        // A snapshot request waits for the feed to catch up with the book: take no
        // new orders until it has (at most one sync).
        let barrier = feed.snapshot_waiting();
        let polled = self
            .shell
            .poll(table, Some(timeout), !barrier, &mut self.requests)?;
        let mut busy = polled.events > 0;
        if !barrier {
            // Cancel-on-disconnect: the mass cancels of sessions that ended.
            busy |= table.take_disconnects(&mut self.requests) > 0;
        }
        self.dispatch.start(core);
        for r in &self.requests {
            busy |= self.dispatch.push(*r, core, table)?;
            if let (Dispatch::Continuous, Some(s), Some(acks)) =
                (&self.dispatch, core.stamps(), self.acks.as_mut())
            {
                acks.handled(r, s);
            }
        }
        if !barrier {
            // The books' timers (a thaw, an auction's end, the schedule).
            busy |= self.dispatch.timers(core, table)?;
        }
        busy |= self.dispatch.run_if_due(core, table)?;
        // The journal write precedes every write of this batch's results, and the
        // results wait until the sync has covered them.
        core.end_batch()?;
        table.mark_batch(core.committed_seq());
        if let Some(acks) = self.acks.as_mut() {
            acks.committed(core.committed_seq());
        }
        let durable = core.durable_seq();
        busy |= table.release(durable);
        if let Some(acks) = self.acks.as_mut() {
            acks.released(durable);
        }
        table.timers(&mut self.shell);
        busy |= table.flush(&mut self.shell);
        if let Some(acks) = self.acks.as_mut() {
            acks.written(|slot| table.written_ns(slot));
        }
        core.publish(feed.sink());
        if barrier {
            core.flush_feed_now(feed.sink());
            feed.poll_recovery(core);
        }
        // Work off the order path (GTD expiries, recovery service, the journal's
        // mark, feed heartbeat, telemetry): after each park, and about once a
        // millisecond. Expiry first: a book snapshot never shows an expired order
        // (its tick's feed messages make the snapshot wait until they are out).
        if parked {
            busy |= self.dispatch.expire_due(core, table)?;
            feed.poll_recovery(core);
            core.idle(feed.sink());
        } else if self.chores.due(core.now().0) {
            busy |= self.dispatch.expire_due(core, table)?;
            feed.poll_recovery(core);
            core.housekeeping(feed.sink());
        }
        Ok(busy)
    }

    /// How long a parked loop may block: until input, a durability signal, the open
    /// batch tick, the next GTD expiry or the books' next timer, and at most
    /// [`MAX_PARK`].
    pub(crate) fn park_for(&mut self) -> Duration {
        let now = self.core.now();
        let expiry = self.core.next_expiry().map(|t| t.0.saturating_sub(now.0));
        let timer = self.core.next_timer().map(|t| t.0.saturating_sub(now.0));
        match self
            .dispatch
            .due_in(now)
            .into_iter()
            .chain(expiry)
            .chain(timer)
            .min()
        {
            Some(ns) => Duration::from_nanos(ns.max(1_000)).min(MAX_PARK),
            None => MAX_PARK,
        }
    }

    /// A graceful stop, once the journal's sync covers what was committed (the
    /// caller waits for that): releases the durable results to the sessions, sends
    /// the feed's durable messages and its end-of-session packet, and ends every
    /// session (`Disconnect`, reason `shutdown`, to each logged-in one).
    pub(crate) fn finish(&mut self) {
        let (table, core, feed) = (&mut self.table, &mut self.core, &mut self.feed);
        table.mark_batch(core.committed_seq());
        table.release(core.durable_seq());
        table.flush(&mut self.shell);
        core.end_feed(feed.sink());
        table.shutdown(&mut self.shell);
    }
}

/// How long a stopping exchange waits for the journal's sync to cover the last
/// batch before it ends the feed and the sessions (what is not durable by then is
/// not sent; a client resumes it after the restart).
const STOP_SYNC_WAIT: Duration = Duration::from_secs(2);

/// Polls until `stop` is set; returns the order→ack timer (its summary is printed
/// at the stop). Stage timing needs the core and the table on `acks`'s stopwatch
/// (continuous mode; in batch mode requests wait for their tick and are not timed).
/// At the stop, `farewell` may name a last message for every session (a cluster
/// leader that lost its quorum tells them where to go: [`Sockets::farewell`]).
#[allow(clippy::too_many_arguments)] // the parts of one loop, from its one caller
pub(crate) fn run<L: CommandLog>(
    table: SessionTable,
    sockets: Sockets,
    core: Core<L>,
    feed: FeedIo,
    dispatch: Dispatch,
    acks: AckTimer,
    wait: WaitStrategy,
    stop: &AtomicBool,
    farewell: &dyn Fn() -> Option<Outbound>,
) -> std::io::Result<AckTimer> {
    let mut c = Compact::new(table, core, sockets, feed, dispatch, Some(acks));
    let mut idler = wait.idler();
    let mut timeout = Duration::ZERO;
    // Relaxed: a stop request needs no ordering with other memory.
    while !stop.load(Ordering::Relaxed) {
        let busy = c.step(timeout)?;
        timeout = Duration::ZERO;
        if busy {
            idler.reset();
        } else if idler.idle_or_block() {
            timeout = c.park_for();
        }
    }
    if let Some(notice) = farewell() {
        // A deposed leader: its sessions' last message is where to go (no end of
        // feed, no Disconnect after it; what it has not committed never will be).
        c.shell.farewell(&mut c.table, notice, FAREWELL);
    } else {
        c.core.end_batch()?;
        let deadline = Instant::now() + STOP_SYNC_WAIT;
        while c.core.durable_seq() < c.core.committed_seq() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        c.finish();
    }
    Ok(c.acks.take().expect("run gave its loop a timer"))
}

/// How long the sessions of a deposed leader get to read its last message.
const FAREWELL: Duration = Duration::from_millis(200);
