//! A single-writer sequence lock over words of atomics: the reader never blocks the
//! writer and never sees a torn value.
//!
//! The protected data are `u64` words stored in atomics (relaxed loads and stores), so
//! a reader racing the writer reads stale or mixed words, never undefined behaviour;
//! the sequence word tells it whether what it read is one whole version. This is the
//! fence-based protocol of Boehm ("Can seqlocks get along with programming language
//! memory models?", 2012):
//!
//! * writer: `seq = s + 1` (odd: writing), Release fence, the data words (Relaxed),
//!   `seq = s + 2` (Release);
//! * reader: `s1 = seq` (Acquire), retry if odd, the data words (Relaxed), Acquire
//!   fence, `s2 = seq` (Relaxed); the copy is whole iff `s1 == s2`.
//!
//! The protocol is generic over [`AtomicWord`] so that `tests/loom` (the `loom` model
//! checker) runs the very same code on loom's atomics; production uses
//! `std::sync::atomic::AtomicU64`, on a shared-memory mapping in [`super::board`].

use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{self, AtomicU64, Ordering};

/// A 64-bit atomic the seqlock can use.
pub trait AtomicWord {
    /// Atomic load.
    fn load(&self, order: Ordering) -> u64;
    /// Atomic store.
    fn store(&self, value: u64, order: Ordering);
    /// A memory fence of the same atomics family.
    fn fence(order: Ordering);
}

impl AtomicWord for AtomicU64 {
    #[inline]
    fn load(&self, order: Ordering) -> u64 {
        AtomicU64::load(self, order)
    }
    #[inline]
    fn store(&self, value: u64, order: Ordering) {
        AtomicU64::store(self, value, order);
    }
    #[inline]
    fn fence(order: Ordering) {
        atomic::fence(order);
    }
}

/// Publishes `data` into `words` under `seq`. Only one thread (or process) may ever
/// write a given seqlock; `words` and `data` have the same length.
#[inline]
pub fn write<A: AtomicWord>(seq: &A, words: &[A], data: &[u64]) {
    // Relaxed: the single writer is the only one that stores `seq`.
    let s = seq.load(Relaxed);
    // Relaxed + the Release fence below: the odd value is ordered before the data
    // stores for any reader that sees one of them (pairs with the reader's Acquire
    // fence).
    seq.store(s.wrapping_add(1), Relaxed);
    A::fence(Release);
    for (w, v) in words.iter().zip(data) {
        // Relaxed: ordered by the fence above and the Release store below.
        w.store(*v, Relaxed);
    }
    // Release: pairs with the reader's Acquire load of `seq`: a reader that sees this
    // even value sees every data store of this version.
    seq.store(s.wrapping_add(2), Release);
}

/// One attempt to copy a whole version into `out`; returns its (even) sequence
/// number, or `None` if the writer was busy (retry).
#[inline]
pub fn try_read<A: AtomicWord>(seq: &A, words: &[A], out: &mut [u64]) -> Option<u64> {
    // Acquire: pairs with the writer's final Release store of `seq`.
    let s1 = seq.load(Acquire);
    if s1 & 1 == 1 {
        return None;
    }
    for (o, w) in out.iter_mut().zip(words) {
        // Relaxed: validated by the fence and the second `seq` load below.
        *o = w.load(Relaxed);
    }
    // Acquire fence: pairs with the writer's Release fence; if any word above came from
    // a newer version, the load below sees that version's odd (or later) `seq`.
    A::fence(Acquire);
    // Relaxed: ordered after the data loads by the fence above.
    let s2 = seq.load(Relaxed);
    (s1 == s2).then_some(s1)
}

/// [`try_read`] until it succeeds or `attempts` have failed.
#[inline]
pub fn read<A: AtomicWord>(seq: &A, words: &[A], out: &mut [u64], attempts: u32) -> Option<u64> {
    for _ in 0..attempts {
        if let Some(s) = try_read(seq, words, out) {
            return Some(s);
        }
        std::hint::spin_loop();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Two threads, a writer publishing versions whose words all equal the version
    /// number and a reader that must never see a mix. Many rounds, no timing assumptions.
    #[test]
    fn readers_never_see_a_torn_version() {
        const WORDS: usize = 16;
        let cell: Arc<(AtomicU64, Vec<AtomicU64>)> = Arc::new((
            AtomicU64::new(0),
            (0..WORDS).map(|_| AtomicU64::new(0)).collect(),
        ));
        let rounds: u64 = if cfg!(miri) { 100 } else { 200_000 };
        let w = Arc::clone(&cell);
        let writer = std::thread::spawn(move || {
            for v in 1..=rounds {
                write(&w.0, &w.1, &[v; WORDS]);
            }
        });
        let mut out = [0u64; WORDS];
        let (mut whole, mut last) = (0u64, 0u64);
        while last < rounds {
            if let Some(s) = try_read(&cell.0, &cell.1, &mut out) {
                assert!(out.iter().all(|x| *x == out[0]), "torn read {out:?}");
                assert_eq!(out[0], s / 2, "version and sequence disagree");
                assert!(out[0] >= last, "went backwards");
                last = out[0];
                whole += 1;
            }
        }
        writer.join().unwrap();
        assert!(whole > 0);
    }
}
