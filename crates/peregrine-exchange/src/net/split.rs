//! The split topology: an ingestion thread (accept, read, decode, login, heartbeats,
//! writes) and a matching thread, joined by two SPSC rings: requests in, reports out.
//!
//! The matching thread releases a batch's reports to the out ring only after
//! [`Core::end_batch`] (the journal commit). Neither thread ever blocks on the other:
//! ingestion stops reading sockets while the in ring is full (TCP back-pressure), and
//! keeps draining the out ring, so the matching thread's wait on a full out ring
//! always ends.

use std::sync::atomic::{AtomicBool, Ordering};

use peregrine_exchange_core::dispatch::Dispatch;
use peregrine_exchange_core::{CommandLog, Core, Idler, Outbox, Request, SessionKey, WaitStrategy};
use peregrine_types::AccountId;
use peregrine_wire::v2::Outbound;

use crate::feed::FeedIo;
use crate::net::ring::{Consumer, Producer};
use crate::net::table::SessionTable;
use crate::net::HOUSEKEEPING_EVERY;

/// A report or an answer on its way back to the session layer.
#[derive(Debug, Clone, Copy)]
pub enum Report {
    /// A report of `account`'s stream, caused by `requester`'s request.
    Stream {
        /// The account.
        account: AccountId,
        /// The requesting session.
        requester: SessionKey,
        /// The report.
        msg: Outbound,
    },
    /// An answer to session `to` only.
    Answer {
        /// The session.
        to: SessionKey,
        /// The answer.
        msg: Outbound,
    },
}

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
pub fn ingest(
    mut table: SessionTable,
    mut to_core: Producer<Request>,
    mut from_core: Consumer<Report>,
    wait: WaitStrategy,
    stop: &AtomicBool,
) {
    let mut requests: Vec<Request> = Vec::with_capacity(4096);
    let mut next = 0;
    let mut idler = Idler::new(wait);
    let mut iteration: u64 = 0;
    // Relaxed: a stop request needs no ordering with other memory.
    while !stop.load(Ordering::Relaxed) {
        iteration = iteration.wrapping_add(1);
        let mut busy = iteration.is_multiple_of(HOUSEKEEPING_EVERY) && table.accept();
        if next == requests.len() {
            requests.clear();
            next = 0;
            busy |= table.read_all(&mut requests) > 0;
        }
        while next < requests.len() && to_core.push(requests[next]).is_ok() {
            next += 1;
        }
        while let Ok(r) = from_core.pop() {
            match r {
                Report::Stream {
                    account,
                    requester,
                    msg,
                } => table.report(account, msg, requester),
                Report::Answer { to, msg } => table.answer(to, msg),
            }
            busy = true;
        }
        table.timers();
        table.flush();
        if busy {
            idler.reset();
        } else {
            idler.idle();
        }
    }
}

/// The matching loop.
pub fn matching<L: CommandLog>(
    mut core: Core<L>,
    mut feed: FeedIo,
    mut dispatch: Dispatch,
    mut from_ingest: Consumer<Request>,
    mut to_ingest: Producer<Report>,
    wait: WaitStrategy,
    stop: &AtomicBool,
) -> std::io::Result<()> {
    let mut batch = Batch(Vec::with_capacity(8192));
    let mut idler = Idler::new(wait);
    let mut iteration: u64 = 0;
    // Relaxed: a stop request needs no ordering with other memory.
    while !stop.load(Ordering::Relaxed) {
        iteration = iteration.wrapping_add(1);
        if iteration.is_multiple_of(HOUSEKEEPING_EVERY) {
            // Samples each ring's backlog (two atomic loads every 64 iterations) for
            // the metrics that `idle` may publish.
            let queued_reports = to_ingest.buffer().capacity() - to_ingest.slots();
            core.metrics_mut()
                .set_ring_depths(from_ingest.slots() as u64, queued_reports as u64);
            core.idle(&mut feed.udp);
            feed.poll_recovery(&core);
        }
        let mut n = 0;
        let mut ran = false;
        dispatch.start(&core);
        while n < 256 {
            let Ok(r) = from_ingest.pop() else { break };
            ran |= dispatch.push(r, &mut core, &mut batch)?;
            n += 1;
        }
        ran |= dispatch.run_if_due(&mut core, &mut batch)?;
        if !ran {
            // Nothing ran (no request, or every one waits in a batch tick).
            if n == 0 {
                idler.idle();
            }
            continue;
        }
        idler.reset();
        core.end_batch()?;
        let released = release(&mut batch, &mut to_ingest, stop);
        core.publish(&mut feed.udp);
        if !released {
            return Ok(());
        }
    }
    Ok(())
}

/// Pushes a committed batch's reports to the ingestion thread; false if stopped
/// while the ring was full.
fn release(batch: &mut Batch, to_ingest: &mut Producer<Report>, stop: &AtomicBool) -> bool {
    for r in batch.0.drain(..) {
        let mut r = r;
        loop {
            match to_ingest.push(r) {
                Ok(()) => break,
                Err(rtrb::PushError::Full(back)) => {
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
