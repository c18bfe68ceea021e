//! The compact topology: one thread polls the listener and every session, decodes,
//! matches, journals and writes. No hand-off between threads sits on the order path,
//! so an order costs one `read`, the match, and one `write` — the shape that suits a
//! 2-core machine where the other core runs the clients.

use std::sync::atomic::{AtomicBool, Ordering};

use peregrine_exchange_core::dispatch::Dispatch;
use peregrine_exchange_core::{CommandLog, Core, Idler, Request, WaitStrategy};

use crate::feed::FeedIo;
use crate::net::table::SessionTable;
use crate::net::HOUSEKEEPING_EVERY;

/// Polls until `stop` is set.
pub fn run<L: CommandLog>(
    mut table: SessionTable,
    mut core: Core<L>,
    mut feed: FeedIo,
    mut dispatch: Dispatch,
    wait: WaitStrategy,
    stop: &AtomicBool,
) -> std::io::Result<()> {
    let mut requests: Vec<Request> = Vec::with_capacity(4096);
    let mut idler = Idler::new(wait);
    let mut iteration: u64 = 0;
    // Relaxed: a stop request needs no ordering with other memory.
    while !stop.load(Ordering::Relaxed) {
        iteration = iteration.wrapping_add(1);
        // Syscalls that are not on the order path (accept, recovery, feed heartbeat)
        // run every 64th iteration only: an idle loop costs one `read` per session.
        let housekeeping = iteration.is_multiple_of(HOUSEKEEPING_EVERY);
        let mut busy = housekeeping && table.accept();
        requests.clear();
        busy |= table.read_all(&mut requests) > 0;
        dispatch.start(&core);
        for r in &requests {
            busy |= dispatch.push(*r, &mut core, &mut table)?;
        }
        busy |= dispatch.run_if_due(&mut core, &mut table)?;
        // The journal commit precedes every write of this batch's results.
        core.end_batch()?;
        table.timers();
        table.flush();
        core.publish(&mut feed.udp);
        if housekeeping {
            feed.poll_recovery(&core);
            core.idle(&mut feed.udp);
        }
        if busy {
            idler.reset();
        } else {
            idler.idle();
        }
    }
    Ok(())
}
