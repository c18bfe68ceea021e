//! The polling loops of batch mode (`mode = "batch"`): the same two topologies as
//! continuous mode, with a [`Sequencer`] between reading requests and executing them.
//!
//! Per iteration: read requests into the open tick (a full tick runs at once), run
//! the tick if its boundary has passed, then — exactly as in continuous mode — commit
//! the journal before any report of the tick is written, write, publish the feed.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::compact::HOUSEKEEPING_EVERY;
use crate::core::Core;
use crate::journal::CommandLog;
use crate::ring::{Consumer, Producer};
use crate::sequencer::Sequencer;
use crate::split::{release, Batch, Report};
use crate::table::{Request, SessionTable};
use crate::wait::{Idler, WaitStrategy};

/// Compact topology, batch mode: polls until `stop` is set.
pub fn run_compact<L: CommandLog>(
    mut table: SessionTable,
    mut core: Core<L>,
    mut seq: Sequencer,
    wait: WaitStrategy,
    stop: &AtomicBool,
) -> std::io::Result<()> {
    let mut requests: Vec<Request> = Vec::with_capacity(4096);
    let mut idler = Idler::new(wait);
    let mut iteration: u64 = 0;
    // Relaxed: a stop request needs no ordering with other memory.
    while !stop.load(Ordering::Relaxed) {
        iteration = iteration.wrapping_add(1);
        let housekeeping = iteration.is_multiple_of(HOUSEKEEPING_EVERY);
        let mut busy = housekeeping && table.accept();
        requests.clear();
        busy |= table.read_all(&mut requests) > 0;
        let now = core.now();
        for r in &requests {
            busy |= seq.push(*r, now, &mut core, &mut table)?;
        }
        busy |= seq.run_if_due(core.now(), &mut core, &mut table)?;
        // The journal commit precedes every write of this iteration's ticks.
        core.end_batch()?;
        table.timers();
        table.flush();
        core.publish();
        if housekeeping {
            core.poll_recovery();
            core.idle();
        }
        if busy {
            idler.reset();
        } else {
            idler.idle();
        }
    }
    Ok(())
}

/// Split topology, batch mode: the matching loop (the ingestion loop is
/// [`crate::split::ingest`], unchanged).
pub fn matching<L: CommandLog>(
    mut core: Core<L>,
    mut seq: Sequencer,
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
            core.idle();
            core.poll_recovery();
        }
        let mut n = 0;
        let mut ran = false;
        let now = core.now();
        while n < 256 {
            let Ok(r) = from_ingest.pop() else { break };
            ran |= seq.push(r, now, &mut core, &mut batch)?;
            n += 1;
        }
        ran |= seq.run_if_due(core.now(), &mut core, &mut batch)?;
        if !ran {
            if n == 0 {
                idler.idle();
            }
            continue;
        }
        idler.reset();
        core.end_batch()?;
        let released = release(&mut batch, &mut to_ingest, stop);
        core.publish();
        if !released {
            return Ok(());
        }
    }
    Ok(())
}
