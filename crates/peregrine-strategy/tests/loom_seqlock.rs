//! The book board's seqlock protocol under the `loom` model checker: every
//! interleaving (and every load loom lets return a stale value) of one writer
//! publishing two versions and one reader copying a version. A copy the protocol
//! accepts is never torn and always matches its sequence number.

use loom::sync::atomic::{AtomicU64, Ordering};
use loom::sync::Arc;
use peregrine_strategy::md::seqlock::{self, AtomicWord};

/// loom's atomics behind the same trait the production code uses.
struct Word(AtomicU64);

impl AtomicWord for Word {
    fn load(&self, order: Ordering) -> u64 {
        self.0.load(order)
    }
    fn store(&self, value: u64, order: Ordering) {
        self.0.store(value, order);
    }
    fn fence(order: Ordering) {
        loom::sync::atomic::fence(order);
    }
}

#[test]
fn loom_reader_never_accepts_a_torn_version() {
    loom::model(|| {
        let cell = Arc::new((
            Word(AtomicU64::new(0)),
            [Word(AtomicU64::new(0)), Word(AtomicU64::new(0))],
        ));
        let w = Arc::clone(&cell);
        let writer = loom::thread::spawn(move || {
            seqlock::write(&w.0, &w.1, &[1, 1]);
            seqlock::write(&w.0, &w.1, &[2, 2]);
        });
        let mut out = [0u64; 2];
        if let Some(s) = seqlock::try_read(&cell.0, &cell.1, &mut out) {
            assert_eq!(out[0], out[1], "torn: {out:?}");
            assert_eq!(out[0], s / 2, "data {out:?} is not version {s}");
        }
        writer.join().unwrap();
    });
}
