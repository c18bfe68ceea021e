//! A strategy's two shared-memory rings: creating them (fresh, pre-faulted) and
//! retiring them.
//!
//! A ring pair serves one *incarnation* of a strategy. The engine creates it at start;
//! when it declares the strategy dead it unlinks both files at once, so no new process
//! can attach to rings a dead (or stalled) process may still write to, and once no
//! order of that incarnation is open any more it creates a fresh pair at the same paths
//! (see `orchestrator/house.rs`). The dead process keeps its mapping of the old,
//! unlinked files: whatever it writes there is never read. A restarted process attaches
//! to the new files; its SDK runner notices a replaced file and stops (see
//! `peregrine_strategy::runner`).

use std::path::Path;

use peregrine_queue::shm::{Pod, ShmError, ShmSpsc, ShmSpscConsumer, ShmSpscProducer};
use peregrine_strategy::md::{self, MdEvent};
use peregrine_strategy::msg::{Event, Request};
use peregrine_strategy::paths;

/// The engine's end of one strategy's two rings.
#[derive(Debug)]
pub struct StrategyLink {
    /// Name.
    pub name: String,
    /// Submit ring, consumer end.
    pub rx: ShmSpscConsumer<Request>,
    /// Return ring, producer end.
    pub tx: ShmSpscProducer<Event>,
    /// Market-data ring, producer end, until the market-data thread takes it.
    pub md: Option<ShmSpscProducer<MdEvent>>,
}

/// Creates `<dir>/<name>.submit`, `<dir>/<name>.return` and the market-data ring
/// `<dir>/<name>.md` (`md_capacity` slots), removing whatever files are there, runs
/// one lap through each so their pages are allocated, and claims the engine's ends.
/// The market-data ring is created last: a strategy that finds it finds the others.
pub fn create_link(
    dir: &Path,
    name: &str,
    capacity: usize,
    md_capacity: usize,
) -> Result<StrategyLink, ShmError> {
    let submit = paths::submit_ring(dir, name);
    let ret = paths::return_ring(dir, name);
    unlink(dir, name);
    let submit_ring = ShmSpsc::<Request>::create(&submit, capacity)?;
    let return_ring = ShmSpsc::<Event>::create(&ret, capacity)?;
    let mut rx = submit_ring.consumer()?;
    let mut tx = return_ring.producer()?;
    prefault(&mut submit_ring.producer()?, &mut rx, capacity);
    prefault(&mut tx, &mut return_ring.consumer()?, capacity);
    let md_ring = ShmSpsc::<MdEvent>::create(&md::ring_path(dir, name), md_capacity)?;
    let mut md = md_ring.producer()?;
    prefault(&mut md, &mut md_ring.consumer()?, md_capacity);
    Ok(StrategyLink {
        name: name.to_owned(),
        rx,
        tx,
        md: Some(md),
    })
}

/// Removes a strategy's ring files (missing files are fine). Processes that mapped
/// them keep their mapping; nobody can attach to them any more.
pub fn unlink(dir: &Path, name: &str) {
    for f in [
        paths::submit_ring(dir, name),
        paths::return_ring(dir, name),
        md::ring_path(dir, name),
    ] {
        let _ = std::fs::remove_file(f);
    }
}

/// One lap through a fresh ring before any strategy attaches, so its pages are
/// allocated now and not on the order path (a first-touch fault costs ~2.4 µs here, as
/// the submit bench showed). The temporary handle's claim is released on drop.
fn prefault<T: Pod + Default>(
    tx: &mut ShmSpscProducer<T>,
    rx: &mut ShmSpscConsumer<T>,
    capacity: usize,
) {
    for _ in 0..capacity {
        if tx.try_push(T::default()).is_err() || rx.try_pop().is_none() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recreating_replaces_the_files_and_old_handles_write_into_the_void() {
        let dir = tempfile::tempdir().unwrap();
        let old = create_link(dir.path(), "s", 8, 8).unwrap();
        let mut old_tx = ShmSpsc::<Request>::attach(&paths::submit_ring(dir.path(), "s"))
            .unwrap()
            .producer()
            .unwrap();
        unlink(dir.path(), "s");
        assert!(ShmSpsc::<Request>::attach(&paths::submit_ring(dir.path(), "s")).is_err());
        let mut new = create_link(dir.path(), "s", 8, 8).unwrap();
        drop(old);
        old_tx.try_push(Request::heartbeat(1, 1)).unwrap();
        assert_eq!(
            new.rx.try_pop(),
            None,
            "a write to the old ring never arrives"
        );
        let mut tx = ShmSpsc::<Request>::attach(&paths::submit_ring(dir.path(), "s"))
            .unwrap()
            .producer()
            .unwrap();
        tx.try_push(Request::heartbeat(2, 2)).unwrap();
        assert_eq!(new.rx.try_pop().map(|r| r.aux), Some(2));
        let c = new.rx.counts();
        assert_eq!(c.depth(), 0);
        assert_eq!(c.tail, 8 + 1, "one prefault lap, then one push");
    }
}
