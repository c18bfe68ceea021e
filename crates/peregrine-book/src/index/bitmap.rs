//! A hierarchical occupancy bitmap: find the next or previous set bit in a few word
//! operations, whatever the distance.
//!
//! Layer 0 has one bit per slot; each higher layer has one bit per non-zero word of the
//! layer below; the top layer is a single word. With 64-bit words, three layers cover
//! 262,144 slots and four cover 16.7 M.

/// Fixed-size hierarchical bitmap.
#[derive(Debug, Clone)]
pub struct Bitmap {
    layers: Vec<Vec<u64>>,
    len: usize,
}

impl Bitmap {
    /// A bitmap of `len` clear bits.
    pub fn new(len: usize) -> Bitmap {
        let mut layers = Vec::new();
        let mut n = len.max(1);
        loop {
            let words = n.div_ceil(64);
            layers.push(vec![0u64; words]);
            if words == 1 {
                break;
            }
            n = words;
        }
        Bitmap { layers, len }
    }

    /// Number of slots.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the bitmap has no slots.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether bit `i` is set.
    #[inline]
    pub fn get(&self, i: usize) -> bool {
        self.layers[0][i / 64] & (1u64 << (i % 64)) != 0
    }

    /// Sets bit `i`.
    #[inline]
    pub fn set(&mut self, mut i: usize) {
        for layer in &mut self.layers {
            let w = &mut layer[i / 64];
            let was_zero = *w == 0;
            *w |= 1u64 << (i % 64);
            if !was_zero {
                return;
            }
            i /= 64;
        }
    }

    /// Clears bit `i`.
    #[inline]
    pub fn clear(&mut self, mut i: usize) {
        for layer in &mut self.layers {
            let w = &mut layer[i / 64];
            *w &= !(1u64 << (i % 64));
            if *w != 0 {
                return;
            }
            i /= 64;
        }
    }

    /// Lowest set bit.
    #[inline]
    pub fn first(&self) -> Option<usize> {
        self.next_from(0, 0)
    }

    /// Highest set bit.
    #[inline]
    pub fn last(&self) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        self.prev_from(0, self.len - 1)
    }

    /// Lowest set bit strictly above `i`.
    #[inline]
    pub fn next_after(&self, i: usize) -> Option<usize> {
        if i + 1 >= self.len {
            return None;
        }
        self.next_from(0, i + 1)
    }

    /// Highest set bit strictly below `i`.
    #[inline]
    pub fn prev_before(&self, i: usize) -> Option<usize> {
        if i == 0 {
            return None;
        }
        self.prev_from(0, i - 1)
    }

    /// Lowest set bit at or above `i` in `layer`.
    fn next_from(&self, layer: usize, i: usize) -> Option<usize> {
        let words = &self.layers[layer];
        let w = i / 64;
        if w >= words.len() {
            return None;
        }
        let bits = words[w] & (!0u64 << (i % 64));
        if bits != 0 {
            return Some(w * 64 + bits.trailing_zeros() as usize);
        }
        if layer + 1 == self.layers.len() {
            return None;
        }
        let nw = self.next_from(layer + 1, w + 1)?;
        Some(nw * 64 + words[nw].trailing_zeros() as usize)
    }

    /// Highest set bit at or below `i` in `layer`.
    fn prev_from(&self, layer: usize, i: usize) -> Option<usize> {
        let words = &self.layers[layer];
        let w = i / 64;
        let bit = i % 64;
        let mask = if bit == 63 {
            !0u64
        } else {
            (1u64 << (bit + 1)) - 1
        };
        let bits = words[w] & mask;
        if bits != 0 {
            return Some(w * 64 + 63 - bits.leading_zeros() as usize);
        }
        if w == 0 || layer + 1 == self.layers.len() {
            return None;
        }
        let pw = self.prev_from(layer + 1, w - 1)?;
        Some(pw * 64 + 63 - words[pw].leading_zeros() as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    #[test]
    fn empty_and_edges() {
        let mut b = Bitmap::new(300_000);
        assert_eq!(b.first(), None);
        assert_eq!(b.last(), None);
        b.set(0);
        b.set(299_999);
        assert_eq!(b.first(), Some(0));
        assert_eq!(b.last(), Some(299_999));
        assert_eq!(b.next_after(0), Some(299_999));
        assert_eq!(b.prev_before(299_999), Some(0));
        assert_eq!(b.next_after(299_999), None);
        assert_eq!(b.prev_before(0), None);
        b.clear(0);
        assert_eq!(b.first(), Some(299_999));
    }

    proptest! {
        #[test]
        fn prop_matches_btreeset(len in 1usize..20_000, ops in proptest::collection::vec((any::<bool>(), any::<usize>()), 0..300), probes in proptest::collection::vec(any::<usize>(), 1..50)) {
            let mut b = Bitmap::new(len);
            let mut s = BTreeSet::new();
            for (set, i) in ops {
                let i = i % len;
                if set { b.set(i); s.insert(i); } else { b.clear(i); s.remove(&i); }
            }
            prop_assert_eq!(b.first(), s.first().copied());
            prop_assert_eq!(b.last(), s.last().copied());
            for p in probes {
                let p = p % len;
                prop_assert_eq!(b.get(p), s.contains(&p));
                prop_assert_eq!(b.next_after(p), s.range(p + 1..).next().copied());
                prop_assert_eq!(b.prev_before(p), s.range(..p).next_back().copied());
            }
        }
    }
}
