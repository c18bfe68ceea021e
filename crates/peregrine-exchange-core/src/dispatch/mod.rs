//! How the polling loops hand requests to the core: on arrival (continuous mode) or
//! through a [`Sequencer`] that holds them until their tick (`mode = "batch"`).
//!
//! Both topologies' polling loops (in the server) take a
//! [`Dispatch`], so batch mode reuses them whole: per iteration, read requests (into
//! the open tick in batch mode, where a full tick runs at once), run the tick if its
//! boundary has passed, then commit the journal before any report is written, write,
//! publish the feed.

use peregrine_types::Timestamp;

mod mode;
mod sequencer;

pub use mode::{window_ns, MatchingMode};
pub use sequencer::Sequencer;

use crate::core::Core;
use crate::journal::CommandLog;
use crate::seams::{Outbox, Request};

/// Continuous or batch matching, as the polling loops see it.
#[derive(Debug)]
pub enum Dispatch {
    /// Each request runs on arrival.
    Continuous,
    /// Requests wait in the sequencer's open tick.
    Batch {
        /// The tick buffer.
        seq: Sequencer,
        /// The clock read once per loop iteration ([`Dispatch::start`]).
        now: Timestamp,
    },
}

impl Dispatch {
    /// Continuous without a sequencer, batch with one.
    pub fn new(seq: Option<Sequencer>) -> Dispatch {
        match seq {
            Some(seq) => Dispatch::Batch {
                seq,
                now: Timestamp(0),
            },
            None => Dispatch::Continuous,
        }
    }

    /// Starts a loop iteration: batch mode reads the clock once for the requests
    /// about to be pushed (continuous mode reads it per command, in the core).
    #[inline]
    pub fn start<L: CommandLog>(&mut self, core: &Core<L>) {
        if let Dispatch::Batch { now, .. } = self {
            *now = core.now();
        }
    }

    /// Hands over one request; returns whether commands ran (always in continuous
    /// mode; in batch mode only when a full tick closed early).
    #[inline]
    pub fn push<L: CommandLog>(
        &mut self,
        r: Request,
        core: &mut Core<L>,
        out: &mut impl Outbox,
    ) -> std::io::Result<bool> {
        match self {
            Dispatch::Continuous => {
                core.handle(r.key, r.account, &r.msg, out)?;
                Ok(true)
            }
            Dispatch::Batch { seq, now } => seq.push(r, *now, core, out),
        }
    }

    /// Nanoseconds from `now` until the open tick is due (batch mode with an open
    /// tick only): how long a parked loop may sleep.
    pub fn due_in(&self, now: Timestamp) -> Option<u64> {
        match self {
            Dispatch::Continuous => None,
            Dispatch::Batch { seq, .. } => seq.due_at().map(|t| t.0.saturating_sub(now.0)),
        }
    }

    /// Expires the GTD orders that are due (a journaled `Tick`; in batch mode at a
    /// tick boundary, and only while no tick is open, since an open tick expires when
    /// it runs). The loops call it from their housekeeping and before answering a
    /// book snapshot. Returns whether a tick ran.
    pub fn expire_due<L: CommandLog>(
        &mut self,
        core: &mut Core<L>,
        out: &mut impl Outbox,
    ) -> std::io::Result<bool> {
        match self {
            Dispatch::Continuous => core.expire_due(core.now(), out),
            Dispatch::Batch { seq, .. } => seq.expire_if_due(core.now(), core, out),
        }
    }

    /// Runs the open tick if its boundary has passed; returns whether it ran (never
    /// in continuous mode).
    #[inline]
    pub fn run_if_due<L: CommandLog>(
        &mut self,
        core: &mut Core<L>,
        out: &mut impl Outbox,
    ) -> std::io::Result<bool> {
        match self {
            Dispatch::Continuous => Ok(false),
            Dispatch::Batch { seq, .. } => seq.run_if_due(core.now(), core, out),
        }
    }
}
