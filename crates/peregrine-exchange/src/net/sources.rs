//! What the session layer reads from its environment besides the connections: the
//! time (for heartbeats, liveness, login timeouts and throttling) and randomness (the
//! login challenge's nonce). The server reads the monotonic clock and the operating
//! system's randomness; a deterministic simulator gives both from its own clock and
//! seed, so a run replays exactly.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use peregrine_types::Rng;

/// The session layer's clock.
#[derive(Debug, Clone)]
pub(crate) enum SessionClock {
    /// `Instant::now()`.
    Monotonic,
    /// `base` plus the nanoseconds the caller set (a simulator's time).
    Manual {
        /// The instant that nanosecond 0 stands for.
        base: Instant,
        /// Nanoseconds since `base`.
        ns: Arc<AtomicU64>,
    },
}

impl SessionClock {
    /// Now.
    #[inline]
    pub(crate) fn now(&self) -> Instant {
        match self {
            SessionClock::Monotonic => Instant::now(),
            // Relaxed: the value is the time; it orders nothing else.
            SessionClock::Manual { base, ns } => {
                *base + Duration::from_nanos(ns.load(Ordering::Relaxed))
            }
        }
    }
}

/// Where challenge nonces come from.
#[derive(Debug)]
pub(crate) enum Nonces {
    /// The operating system's randomness (`getrandom`).
    Os,
    /// A seeded generator (a simulator's).
    Seeded(Rng),
}

impl Nonces {
    /// A fresh nonce.
    pub(crate) fn fill(&mut self, nonce: &mut [u8; 32]) -> Result<(), String> {
        match self {
            Nonces::Os => getrandom::fill(nonce).map_err(|e| e.to_string()),
            Nonces::Seeded(rng) => {
                for chunk in nonce.chunks_mut(8) {
                    chunk.copy_from_slice(&rng.next_u64().to_le_bytes());
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_reads_what_it_was_set_to_and_seeded_nonces_repeat() {
        let ns = Arc::new(AtomicU64::new(5));
        let base = Instant::now();
        let c = SessionClock::Manual {
            base,
            ns: Arc::clone(&ns),
        };
        assert_eq!(c.now(), base + Duration::from_nanos(5));
        ns.store(1_000, Ordering::Relaxed);
        assert_eq!(c.now() - base, Duration::from_nanos(1_000));
        let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
        Nonces::Seeded(Rng::new(7)).fill(&mut a).unwrap();
        Nonces::Seeded(Rng::new(7)).fill(&mut b).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, [0u8; 32]);
    }
}
