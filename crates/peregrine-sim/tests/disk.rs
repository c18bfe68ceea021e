//! The journal over the simulated disk: what a power loss after a failed `fdatasync`
//! does to records a restarted process read back from the page cache.

use std::path::Path;

use peregrine_journal::{FsyncPolicy, Journal, JournalConfig, LossPolicy, Timestamps};
use peregrine_sim::disk::{Crash, DiskFaults, SimDisk};

fn config() -> JournalConfig {
    JournalConfig {
        fsync: FsyncPolicy::Batch,
        segment_bytes: 64 << 10,
        preallocate: false,
        ..JournalConfig::default()
    }
}

fn append(j: &mut Journal, from: u64, to: u64) {
    for seq in from..=to {
        j.append(seq, Timestamps::default(), 1, &seq.to_le_bytes())
            .unwrap();
    }
}

/// Found by `peregrine sim` (a hole in a sealed segment, then a mark ahead of the
/// records): after an `fdatasync` fails, the kernel may mark the pages it could not
/// write clean (fsyncgate). A restarted process reads them back from the page cache
/// and, before the fix, counted them durable at its first commit; the next power loss
/// lost them with the mark already past them, and the journal refused to start. Open
/// now writes every record past the mark again and syncs it.
#[test]
fn records_past_the_mark_after_a_failed_sync_survive_the_next_power_loss() {
    let disk = SimDisk::new(1, DiskFaults::default());
    let storage = disk.storage();
    let dir = Path::new("/j");
    {
        let (mut j, _) = Journal::open_in(&storage, dir, config(), LossPolicy::Refuse).unwrap();
        append(&mut j, 1, 5);
        j.commit().unwrap();
        disk.set_faults(DiskFaults {
            sync_eio: 1000,
            ..DiskFaults::default()
        });
        // Several pages of records (about 90 a page).
        append(&mut j, 6, 300);
        assert!(j.commit().is_err(), "the sync fails: the process stops");
    }
    disk.crash(Crash::Process);
    disk.set_faults(DiskFaults::default());
    {
        let (mut j, report) =
            Journal::open_in(&storage, dir, config(), LossPolicy::Refuse).unwrap();
        assert_eq!(report.last_seq, Some(300), "read back from the page cache");
        append(&mut j, 301, 301);
        j.commit().unwrap();
    }
    disk.crash(Crash::Power);
    let (_, report) = Journal::open_in(&storage, dir, config(), LossPolicy::Refuse)
        .expect("nothing acknowledged is missing");
    assert_eq!(report.last_seq, Some(301));
}
