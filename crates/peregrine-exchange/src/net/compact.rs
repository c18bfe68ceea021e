//! The compact topology: one thread waits for readiness on the listener and the
//! sessions, reads what is ready, decodes, matches, journals and writes. No hand-off
//! between threads sits on the order path, so an order costs its share of one
//! `epoll_wait`, one `read`, the match, the journal `write` and one `write` of the
//! batch's reports — the shape that suits a 2-core machine where the other core runs
//! the clients.
//!
//! Per iteration: poll (zero timeout while spinning; blocking once the idler parks)
//! → read the ready sessions → run their requests → end the batch (journal write;
//! with group commit the sync runs on its own thread) → mark the batch's reports →
//! release what is durable → timers → one `write` per session with writable output →
//! the feed's durable messages → housekeeping after a park and about once a
//! millisecond ([`Housekeeping`](crate::net::Housekeeping)).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use peregrine_exchange_core::dispatch::Dispatch;
use peregrine_exchange_core::{CommandLog, Core, Request};
use peregrine_queue::WaitStrategy;
use peregrine_wire::v2::Outbound;

use crate::feed::FeedIo;
use crate::metrics::ack::AckTimer;
use crate::net::table::SessionTable;
use crate::net::Housekeeping;

/// The longest a parked loop sleeps without input (timers, heartbeats and the
/// debounced metrics are checked at least this often).
pub(crate) const MAX_PARK: Duration = Duration::from_millis(10);

/// Polls until `stop` is set; returns the order→ack timer (its summary is printed
/// at the stop). Stage timing needs the core and the table on `acks`'s stopwatch
/// (continuous mode; in batch mode requests wait for their tick and are not timed).
/// At the stop, `farewell` may name a last message for every session (a cluster
/// leader that lost its quorum tells them where to go: [`SessionTable::farewell`]).
#[allow(
    clippy::too_many_arguments,
    reason = "the loop's parts, each used once"
)]
pub(crate) fn run<L: CommandLog>(
    mut table: SessionTable,
    mut core: Core<L>,
    mut feed: FeedIo,
    mut dispatch: Dispatch,
    mut acks: AckTimer,
    wait: WaitStrategy,
    stop: &AtomicBool,
    farewell: &dyn Fn() -> Option<Outbound>,
) -> std::io::Result<AckTimer> {
    let mut requests: Vec<Request> = Vec::with_capacity(4096);
    let mut idler = wait.idler();
    let mut chores = Housekeeping::default();
    let mut timeout = Duration::ZERO;
    // Relaxed: a stop request needs no ordering with other memory.
    while !stop.load(Ordering::Relaxed) {
        let parked = !timeout.is_zero();
        requests.clear();
        // A snapshot request waits for the feed to catch up with the book: take no
        // new orders until it has (at most one sync).
        let barrier = feed.snapshot_waiting();
        let polled = table.poll(Some(timeout), !barrier, &mut requests)?;
        let mut busy = polled.events > 0;
        dispatch.start(&core);
        for r in &requests {
            busy |= dispatch.push(*r, &mut core, &mut table)?;
            if let (Dispatch::Continuous, Some(s)) = (&dispatch, core.stamps()) {
                acks.handled(r, s);
            }
        }
        busy |= dispatch.run_if_due(&mut core, &mut table)?;
        // The journal write precedes every write of this batch's results, and the
        // results wait until the sync has covered them.
        core.end_batch()?;
        table.mark_batch(core.committed_seq());
        acks.committed(core.committed_seq());
        let durable = core.durable_seq();
        busy |= table.release(durable);
        acks.released(durable);
        table.timers();
        busy |= table.flush();
        acks.written(|slot| table.written_ns(slot));
        core.publish(&mut feed.udp);
        if barrier {
            core.flush_feed_now(&mut feed.udp);
            feed.poll_recovery(&core);
        }
        // Work off the order path (recovery service, the journal's mark, feed
        // heartbeat, telemetry): after each park, and about once a millisecond.
        if parked {
            feed.poll_recovery(&core);
            core.idle(&mut feed.udp);
        } else if chores.due(core.now().0) {
            feed.poll_recovery(&core);
            core.housekeeping(&mut feed.udp);
        }
        timeout = Duration::ZERO;
        if busy {
            idler.reset();
        } else if idler.idle_or_block() {
            timeout = park_for(&core, &dispatch);
        }
    }
    if let Some(notice) = farewell() {
        table.farewell(notice, FAREWELL);
    }
    Ok(acks)
}

/// How long the sessions of a deposed leader get to read its last message.
const FAREWELL: Duration = Duration::from_millis(200);

/// How long a parked loop may block: until input, a durability signal, or the open
/// batch tick, and at most [`MAX_PARK`].
fn park_for<L: CommandLog>(core: &Core<L>, dispatch: &Dispatch) -> Duration {
    match dispatch.due_in(core.now()) {
        Some(ns) => Duration::from_nanos(ns.max(1_000)).min(MAX_PARK),
        None => MAX_PARK,
    }
}
