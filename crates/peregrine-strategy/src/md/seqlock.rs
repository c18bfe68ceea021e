//! A single-writer sequence lock over 64-bit words: the reader never blocks the
//! writer and never accepts a torn value.
//!
//! The writer (the engine, on a read-write mapping) stores into atomics; the reader
//! (a strategy, on a **read-only** mapping of the same file) reads with plain loads
//! that never write: volatile reads of raw pointers, ordered by two Acquire fences.
//! An atomic load on read-only memory is not something Rust defines, so the reader
//! makes none, and never forms a reference to the shared memory. The protocol is the
//! fence-based one of Boehm ("Can seqlocks get along with programming language
//! memory models?", 2012), with the reader's loads all unordered:
//!
//! * writer: `seq = s + 1` (odd: writing), Release fence, the data words (Relaxed),
//!   `seq = s + 2` (Release);
//! * reader: `s1 = seq`, retry if odd, Acquire fence (with the load before it, an
//!   acquire of the writer's last Release store of `seq`), the data words, Acquire
//!   fence (pairs with the writer's Release fence: a word of a newer version makes
//!   the load after it see that version's odd or later `seq`), `s2 = seq`; the copy
//!   is whole iff `s1 == s2`.
//!
//! The protocol is generic over [`AtomicWord`] (the writer's words) and
//! [`ReadWords`] (the reader's view), so that `tests/loom_seqlock.rs` runs the very
//! same code on loom's atomics (the reader's loads there are Relaxed loads: the
//! same unordered loads in the model); production uses `AtomicU64` for the writer
//! and [`VolatileWords`] for the reader.

use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{self, AtomicU64, Ordering};

/// The reader's view of one seqlock: its sequence word and its data words, read with
/// loads that have no ordering of their own and never write.
pub trait ReadWords {
    /// The sequence word.
    fn seq(&self) -> u64;
    /// Data word `i`.
    fn word(&self, i: usize) -> u64;
    /// An Acquire fence of the same memory model.
    fn acquire_fence();
}

/// One seqlock in memory another process writes and this one may only read (a
/// read-only mapping): the sequence word at `seq`, the data words right after it.
/// Every read is a volatile load of an aligned `u64` (one plain machine load here,
/// never elided, repeated or split by the compiler); no atomic operation and no
/// reference touches the memory.
#[derive(Debug, Clone, Copy)]
pub struct VolatileWords {
    seq: *const u64,
    len: usize,
}

impl VolatileWords {
    /// The seqlock whose sequence word is at `seq`, followed by `len` data words.
    ///
    /// # Safety
    ///
    /// `seq` must be 8-byte aligned and `len + 1` words from it must stay mapped and
    /// readable for as long as the value is used.
    pub unsafe fn new(seq: *const u64, len: usize) -> VolatileWords {
        VolatileWords { seq, len }
    }
}

impl ReadWords for VolatileWords {
    #[inline]
    fn seq(&self) -> u64 {
        // SAFETY: `new`'s contract: aligned and mapped; a volatile read of shared
        // memory another process writes never writes, and its value is validated by
        // the protocol before it is used.
        unsafe { self.seq.read_volatile() }
    }
    #[inline]
    fn word(&self, i: usize) -> u64 {
        if i >= self.len {
            return 0;
        }
        // SAFETY: `i < len`, so the word is within the `len + 1` words `new` was
        // promised; aligned, mapped, read only (see `seq`).
        unsafe { self.seq.add(1 + i).read_volatile() }
    }
    #[inline]
    fn acquire_fence() {
        atomic::fence(Acquire);
    }
}

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
pub fn try_read<R: ReadWords>(r: &R, out: &mut [u64]) -> Option<u64> {
    let s1 = r.seq();
    if s1 & 1 == 1 {
        return None;
    }
    // Acquire fence after the load of `s1`: pairs with the writer's final Release
    // store of `seq` (if `s1` is that version's even value, its data words are seen).
    R::acquire_fence();
    for (i, o) in out.iter_mut().enumerate() {
        // Unordered: validated by the fence and the second `seq` load below.
        *o = r.word(i);
    }
    // Acquire fence: pairs with the writer's Release fence; if any word above came from
    // a newer version, the load below sees that version's odd (or later) `seq`.
    R::acquire_fence();
    let s2 = r.seq();
    (s1 == s2).then_some(s1)
}

/// [`try_read`] until it succeeds or `attempts` have failed.
#[inline]
pub fn read<R: ReadWords>(r: &R, out: &mut [u64], attempts: u32) -> Option<u64> {
    for _ in 0..attempts {
        if let Some(s) = try_read(r, out) {
            return Some(s);
        }
        std::hint::spin_loop();
    }
    None
}

/// A seqlock's words as atomics, read with Relaxed loads: the reader's view of a
/// writable mapping or of plain memory (tests, and the writer's own checks).
#[derive(Debug, Clone, Copy)]
pub struct AtomicWords<'a, A> {
    /// The sequence word.
    pub seq: &'a A,
    /// The data words.
    pub words: &'a [A],
}

impl<A: AtomicWord> ReadWords for AtomicWords<'_, A> {
    #[inline]
    fn seq(&self) -> u64 {
        // Relaxed: the protocol's fences order it.
        self.seq.load(Relaxed)
    }
    #[inline]
    fn word(&self, i: usize) -> u64 {
        // Relaxed: the protocol's fences order it.
        self.words.get(i).map_or(0, |w| w.load(Relaxed))
    }
    #[inline]
    fn acquire_fence() {
        A::fence(Acquire);
    }
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
        let view = AtomicWords {
            seq: &cell.0,
            words: &cell.1[..],
        };
        while last < rounds {
            if let Some(s) = try_read(&view, &mut out) {
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
