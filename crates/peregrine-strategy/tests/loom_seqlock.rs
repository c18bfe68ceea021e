//! The book board's seqlock protocol under the `loom` model checker: every
//! interleaving (and every load loom lets return a stale value) of one writer
//! publishing two versions and one reader copying a version. A copy the protocol
//! accepts is never torn and always matches its sequence number. The reader's loads
//! are Relaxed here, as unordered as the volatile reads production makes on its
//! read-only mapping: only the two Acquire fences order them.

use loom::sync::atomic::{AtomicU64, Ordering};
use loom::sync::Arc;
use peregrine_strategy::md::seqlock::{self, AtomicWord, AtomicWords};

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
        let view = AtomicWords {
            seq: &cell.0,
            words: &cell.1[..],
        };
        if let Some(s) = seqlock::try_read(&view, &mut out) {
            assert_eq!(out[0], out[1], "torn: {out:?}");
            assert_eq!(out[0], s / 2, "data {out:?} is not version {s}");
        }
        writer.join().unwrap();
    });
}
