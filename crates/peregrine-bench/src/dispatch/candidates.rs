//! The candidates swapped into the two contended hand-offs (submit and completion).

use std::fmt;
use std::str::FromStr;

use super::order::Order;
use super::queues::{ArrayQ, CrossbeamChannel, Family, RtrbMux, ShmMpscRing, SpscMux, StdMpsc};

/// One MPSC technique under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(into = "&'static str")]
pub enum Candidate {
    /// `std::sync::mpsc`, unbounded linked blocks.
    StdMpsc,
    /// `crossbeam-channel` bounded.
    CrossbeamChannel,
    /// `crossbeam_queue::ArrayQueue`.
    ArrayQueue,
    /// Per-producer `peregrine-queue` SPSC rings + round-robin mux.
    SpscMux,
    /// Per-producer `rtrb` rings + round-robin mux.
    RtrbMux,
    /// `peregrine-queue`'s shared-memory Vyukov MPSC ring, mapped in-process.
    ShmMpsc,
}

/// Code generic over a queue family, called once the candidate is known.
pub trait Visit {
    /// What the visit returns.
    type Out;
    /// Runs with the candidate's family as a type parameter.
    fn visit<F: Family<Order>>(self) -> Self::Out;
}

impl Candidate {
    /// Every candidate, in table order.
    pub const ALL: [Candidate; 6] = [
        Candidate::StdMpsc,
        Candidate::CrossbeamChannel,
        Candidate::ArrayQueue,
        Candidate::SpscMux,
        Candidate::RtrbMux,
        Candidate::ShmMpsc,
    ];

    /// The config / table name.
    pub fn name(self) -> &'static str {
        match self {
            Candidate::StdMpsc => "std-mpsc",
            Candidate::CrossbeamChannel => "crossbeam-channel",
            Candidate::ArrayQueue => "array-queue",
            Candidate::SpscMux => "spsc-mux",
            Candidate::RtrbMux => "rtrb-mux",
            Candidate::ShmMpsc => "shm-mpsc",
        }
    }

    /// Calls `visitor` with this candidate's queue family.
    pub fn visit<V: Visit>(self, visitor: V) -> V::Out {
        match self {
            Candidate::StdMpsc => visitor.visit::<StdMpsc>(),
            Candidate::CrossbeamChannel => visitor.visit::<CrossbeamChannel>(),
            Candidate::ArrayQueue => visitor.visit::<ArrayQ>(),
            Candidate::SpscMux => visitor.visit::<SpscMux>(),
            Candidate::RtrbMux => visitor.visit::<RtrbMux>(),
            Candidate::ShmMpsc => visitor.visit::<ShmMpscRing>(),
        }
    }
}

impl From<Candidate> for &'static str {
    fn from(c: Candidate) -> Self {
        c.name()
    }
}

impl fmt::Display for Candidate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Candidate {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Candidate::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Candidate::ALL.iter().map(|c| c.name()).collect();
                format!(
                    "unknown candidate {s:?} (expected one of {})",
                    names.join(", ")
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for c in Candidate::ALL {
            assert_eq!(c.name().parse::<Candidate>(), Ok(c));
            assert_eq!(c.to_string(), c.name());
        }
    }
}
