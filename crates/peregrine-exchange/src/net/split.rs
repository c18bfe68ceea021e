//! The split topology: an ingestion thread (accept, read, decode, login, heartbeats,
//! writes) and a matching thread, joined by two SPSC rings: requests in, reports out.
//!
//! The matching thread releases a batch's reports to the out ring only once the
//! batch is durable ([`Core::durable_seq`]); with group commit it goes on matching
//! while earlier batches wait for their sync. Neither thread ever blocks on the other:
//! ingestion stops reading sockets while the in ring is full (TCP back-pressure), and
//! keeps draining the out ring, so the matching thread's wait on a full out ring
//! always ends.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use peregrine_exchange_core::dispatch::Dispatch;
use peregrine_exchange_core::{CommandLog, Core, Outbox, Request, SessionKey};
use peregrine_queue::spsc::{Consumer, Producer, PushError};
use peregrine_queue::WaitStrategy;
use peregrine_types::AccountId;
use peregrine_wire::v2::Outbound;

use crate::feed::FeedIo;
use crate::net::report::Report;
use crate::net::sockets::Sockets;
use crate::net::table::SessionTable;
use crate::net::Housekeeping;

/// Collects a batch's reports until the batch is committed.
#[derive(Debug)]
struct Batch(Vec<Report>);

impl Outbox for Batch {
    #[inline]
    fn report(&mut self, account: AccountId, msg: Outbound, requester: SessionKey) {
        self.0.push(Report::Stream {
            account,
            requester,
            msg,
        });
    }
    #[inline]
    fn answer(&mut self, to: SessionKey, msg: Outbound) {
        self.0.push(Report::Answer { to, msg });
    }
}

/// The ingestion loop.
pub(crate) fn ingest(
    mut table: SessionTable,
    mut sockets: Sockets,
    mut to_core: Producer<Request>,
    mut from_core: Consumer<Report>,
    wait: WaitStrategy,
    stop: &AtomicBool,
) {
    let mut requests: Vec<Request> = Vec::with_capacity(4096);
    let mut next = 0;
    let mut idler = wait.idler();
    // Relaxed: a stop request needs no ordering with other memory.
    while !stop.load(Ordering::Relaxed) {
        let mut busy = false;
        if next == requests.len() {
            requests.clear();
            next = 0;
            // The report ring has no descriptor to wait on: poll without blocking.
            match sockets.poll(&mut table, Some(Duration::ZERO), true, &mut requests) {
                Ok(p) => busy |= p.events > 0,
                Err(e) => log::warn!("ingestion: poll failed: {e}"),
            }
        }
        while next < requests.len() && to_core.try_push(requests[next]).is_ok() {
            next += 1;
        }
        while let Some(r) = from_core.try_pop() {
            match r {
                Report::Stream {
                    account,
                    requester,
                    msg,
                } => table.deliver_report(account, msg, requester),
                Report::Answer { to, msg } => table.deliver_answer(to, msg),
            }
            busy = true;
        }
        table.timers(&mut sockets);
        busy |= table.flush(&mut sockets);
        if busy {
            idler.reset();
        } else {
            idler.idle();
        }
    }
    // A graceful stop: what the matching thread released, then a `Disconnect`
    // (shutdown) to every session.
    while let Some(r) = from_core.try_pop() {
        match r {
            Report::Stream {
                account,
                requester,
                msg,
            } => table.deliver_report(account, msg, requester),
            Report::Answer { to, msg } => table.deliver_answer(to, msg),
        }
    }
    table.flush(&mut sockets);
    table.shutdown(&mut sockets);
}

/// How long a stopping matching thread waits for the journal's sync before it ends
/// the feed.
const STOP_SYNC_WAIT: Duration = Duration::from_secs(2);

/// The matching loop.
pub(crate) fn matching<L: CommandLog>(
    mut core: Core<L>,
    mut feed: FeedIo,
    mut dispatch: Dispatch,
    mut from_ingest: Consumer<Request>,
    mut to_ingest: Producer<Report>,
    wait: WaitStrategy,
    stop: &AtomicBool,
) -> std::io::Result<()> {
    let mut batch = Batch(Vec::with_capacity(8192));
    // Ends of committed batches in `batch` whose sync is pending: (last seq, end).
    let mut held: VecDeque<(u64, usize)> = VecDeque::with_capacity(1024);
    let mut idler = wait.idler();
    let mut chores = Housekeeping::default();
    // Relaxed: a stop request needs no ordering with other memory.
    while !stop.load(Ordering::Relaxed) {
        let mut ran = false;
        if chores.due(core.now().0) {
            // GTD expiries first: a book snapshot never shows an expired order.
            ran |= dispatch.expire_due(&mut core, &mut batch)?;
            // Samples each ring's backlog (two atomic loads) for the metrics that
            // housekeeping may publish.
            let queued_reports = to_ingest.capacity() - to_ingest.free_slots();
            core.metrics_mut()
                .set_ring_depths(from_ingest.len() as u64, queued_reports as u64);
            core.housekeeping(&mut feed.udp);
            feed.poll_recovery(&core);
        }
        let mut n = 0;
        // A snapshot request waits for the feed to catch up with the book: take no
        // new requests until it has (at most one sync).
        let barrier = feed.snapshot_waiting();
        dispatch.start(&core);
        while n < 256 && !barrier {
            let Some(r) = from_ingest.try_pop() else {
                break;
            };
            ran |= dispatch.push(r, &mut core, &mut batch)?;
            n += 1;
        }
        ran |= dispatch.run_if_due(&mut core, &mut batch)?;
        if ran {
            core.end_batch()?;
            let end = batch.0.len();
            if held.back().is_none_or(|&(_, e)| e < end) {
                if held.len() == held.capacity() {
                    held.pop_back(); // merged into the newer end: released later, never early
                }
                held.push_back((core.committed_seq(), end));
            }
        }
        // The reports of every durable batch leave now.
        let durable = core.durable_seq();
        let mut upto = 0;
        while let Some(&(seq, end)) = held.front() {
            if seq > durable {
                break;
            }
            upto = end;
            held.pop_front();
        }
        if upto > 0 {
            for h in held.iter_mut() {
                h.1 -= upto;
            }
            if !release(&mut batch, upto, &mut to_ingest, stop) {
                return Ok(());
            }
        }
        core.publish(&mut feed.udp);
        if barrier {
            core.flush_feed_now(&mut feed.udp);
            feed.poll_recovery(&core);
        }
        if ran || upto > 0 {
            idler.reset();
        } else if n == 0 {
            // Nothing ran (no request, or every one waits in a batch tick).
            idler.idle();
        }
    }
    // A graceful stop: the feed's messages of what is durable (waiting up to
    // STOP_SYNC_WAIT for the sync), then its end of session.
    core.end_batch()?;
    let deadline = std::time::Instant::now() + STOP_SYNC_WAIT;
    while core.durable_seq() < core.committed_seq() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    core.end_feed(&mut feed.udp);
    Ok(())
}

/// Pushes the first `upto` reports (of durable batches) to the ingestion thread;
/// false if stopped while the ring was full.
fn release(
    batch: &mut Batch,
    upto: usize,
    to_ingest: &mut Producer<Report>,
    stop: &AtomicBool,
) -> bool {
    for r in batch.0.drain(..upto) {
        let mut r = r;
        loop {
            match to_ingest.try_push(r) {
                Ok(()) => break,
                Err(PushError::Full(back)) => {
                    if stop.load(Ordering::Relaxed) {
                        return false;
                    }
                    r = back;
                    std::thread::yield_now();
                }
            }
        }
    }
    true
}
