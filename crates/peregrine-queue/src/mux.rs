//! Per-producer SPSC rings drained by one consumer.
//!
//! Each producer owns its own [`spsc`] ring, so producers never write the
//! same atomic. The consumer scans the rings round-robin, starting after the ring it
//! last took a value from, so a busy producer cannot starve a quiet one. The price is
//! the scan: an empty poll reads N tails.

use crate::spsc::{self, Consumer, Producer};

/// The consumer side of N SPSC rings.
#[derive(Debug)]
pub struct Mux<T> {
    rings: Vec<Consumer<T>>,
    /// The ring the next scan starts at.
    next: usize,
}

/// Creates `producers` rings of `capacity` each; returns one producer per ring and the
/// mux that drains them.
pub fn mux<T>(producers: usize, capacity: usize) -> (Vec<Producer<T>>, Mux<T>) {
    let (txs, rxs) = (0..producers.max(1)).map(|_| spsc::ring(capacity)).unzip();
    (txs, Mux::new(rxs))
}

impl<T> Mux<T> {
    /// A mux over existing rings.
    pub fn new(rings: Vec<Consumer<T>>) -> Self {
        Self { rings, next: 0 }
    }

    /// Number of rings.
    pub fn rings(&self) -> usize {
        self.rings.len()
    }

    /// Pops one value, scanning the rings round-robin from where the last pop left off.
    #[inline]
    pub fn try_pop(&mut self) -> Option<T> {
        let n = self.rings.len();
        for step in 0..n {
            let mut index = self.next + step;
            if index >= n {
                index -= n;
            }
            if let Some(value) = self.rings[index].try_pop() {
                self.next = if index + 1 == n { 0 } else { index + 1 };
                return Some(value);
            }
        }
        None
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn round_robin_is_fair() {
        let (mut txs, mut rx) = mux::<(usize, u32)>(3, 8);
        for (p, tx) in txs.iter_mut().enumerate() {
            for i in 0..3 {
                tx.try_push((p, i)).unwrap();
            }
        }
        let order: Vec<usize> = std::iter::from_fn(|| rx.try_pop())
            .map(|(p, _)| p)
            .collect();
        assert_eq!(order, vec![0, 1, 2, 0, 1, 2, 0, 1, 2]);
    }

    #[test]
    fn quiet_producer_not_starved() {
        let (mut txs, mut rx) = mux::<usize>(2, 16);
        for _ in 0..10 {
            txs[0].try_push(0).unwrap();
        }
        assert_eq!(rx.try_pop(), Some(0));
        txs[1].try_push(1).unwrap();
        assert_eq!(rx.try_pop(), Some(1));
    }

    #[test]
    fn stress_many_producers() {
        peregrine_testkit::with_timeout(120, || {
            let per: u64 = if cfg!(miri) { 50 } else { 200_000 };
            let (txs, mut rx) = mux::<(usize, u64)>(4, 32);
            let handles: Vec<_> = txs
                .into_iter()
                .enumerate()
                .map(|(p, mut tx)| {
                    std::thread::spawn(move || {
                        for i in 0..per {
                            let mut value = (p, i);
                            while let Err(e) = tx.try_push(value) {
                                value = e.into_inner();
                                std::thread::yield_now();
                            }
                        }
                    })
                })
                .collect();
            let mut next = [0u64; 4];
            let mut seen = 0;
            while seen < 4 * per {
                match rx.try_pop() {
                    Some((p, i)) => {
                        assert_eq!(next[p], i, "per-producer FIFO");
                        next[p] += 1;
                        seen += 1;
                    }
                    None => std::thread::yield_now(),
                }
            }
            for handle in handles {
                handle.join().unwrap();
            }
            assert_eq!(rx.try_pop(), None);
        });
    }
}
