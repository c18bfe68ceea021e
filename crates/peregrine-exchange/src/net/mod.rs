//! The network side: the session table (sessions, logins, routing of reports; sans-IO),
//! the socket shell around it (listener, streams, epoll), each session's protocol, and
//! the polling loops of both topologies
//! ([`compact`]: one thread; [`split`]: ingestion and matching threads joined by
//! `peregrine_queue::spsc` rings).

pub(crate) mod admission;
pub(crate) mod compact;
pub(crate) mod credentials;
pub(crate) mod pressure;
pub(crate) mod report;
pub(crate) mod session;
pub(crate) mod sockets;
pub(crate) mod sources;
pub(crate) mod split;
pub(crate) mod table;

/// How often the loops do their housekeeping (recovery service, the journal's
/// deferred mark, feed heartbeat, telemetry; the split topology's ring depths),
/// besides the compact loop's after each park.
pub(crate) const HOUSEKEEPING_NS: u64 = 1_000_000;

/// The housekeeping cadence of both topologies' matching loops, by the clock.
/// Counting iterations (it was every 64th) put the chores and their UDP send (3–6.5 µs alone) in front of
/// about one order in ten in a one-session ping-pong, where an idle iteration takes
/// ~2 µs: p90 19.5 µs against p50 11.5 (11-24). By the clock it is ~1 order in 80
/// there (~77k orders/s).
#[derive(Debug, Default)]
pub(crate) struct Housekeeping {
    next_ns: u64,
}

impl Housekeeping {
    /// Whether the chores are due at `now_ns` (and if so, when they are next).
    #[inline]
    pub(crate) fn due(&mut self, now_ns: u64) -> bool {
        if now_ns < self.next_ns {
            return false;
        }
        self.next_ns = now_ns.saturating_add(HOUSEKEEPING_NS);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn housekeeping_is_due_by_the_clock_not_by_iterations() {
        let mut h = Housekeeping::default();
        assert!(h.due(5), "due at once");
        assert!(!h.due(5) && !h.due(5 + HOUSEKEEPING_NS - 1));
        assert!(h.due(5 + HOUSEKEEPING_NS));
        assert!(!h.due(5 + HOUSEKEEPING_NS + 1));
        // After a long gap: once, then a full interval again.
        assert!(h.due(100 * HOUSEKEEPING_NS));
        assert!(!h.due(100 * HOUSEKEEPING_NS + HOUSEKEEPING_NS / 2));
    }
}
