//! Backpressure (`[backpressure]`): when the commands the exchange has executed but
//! not yet made durable (on a cluster: replicated to a majority) exceed a limit in
//! number or in age, new requests are refused at once with reason `busy` instead of
//! queueing without bound behind the disk or the network, where clients would see
//! nothing until their own timeouts. Orders and replaces are refused at the limit;
//! cancels and mass cancels, which shrink what is at risk, only at twice the limit.
//!
//! Sans-IO: the session table feeds it the batches it marks and the durable
//! watermark it releases, and asks once per poll and per request.

use std::collections::VecDeque;

use peregrine_wire::v2::Inbound;

/// The limits (`[backpressure]` in the exchange config).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Commands executed and not yet durable, at most (0: no limit).
    pub max_in_flight: u64,
    /// Age of the oldest of them, nanoseconds, at most (0: no limit).
    pub max_delay_ns: u64,
}

impl From<&crate::config::BackpressureConfig> for Limits {
    fn from(c: &crate::config::BackpressureConfig) -> Self {
        Limits {
            max_in_flight: c.max_in_flight,
            max_delay_ns: c.max_delay_ms.saturating_mul(1_000_000),
        }
    }
}

/// What the exchange refuses now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    /// Nothing.
    Open,
    /// Orders and replaces.
    Orders,
    /// Everything sequenced: orders, replaces, cancels, mass cancels.
    All,
}

/// The pipeline's state as the session table sees it.
#[derive(Debug)]
pub(crate) struct Pressure {
    limits: Limits,
    /// The durable (released) watermark.
    durable: u64,
    /// Batches not yet durable: last engine seq and when it was marked, oldest first.
    batches: VecDeque<(u64, u64)>,
    /// The level at the start of this poll (age-based part).
    aged: Level,
    /// Requests admitted since the poll started (executed after it).
    admitted: u64,
    /// Requests refused `busy`, for the counters.
    refused: u64,
}

impl Pressure {
    pub(crate) fn new(limits: Limits) -> Self {
        Pressure {
            limits,
            durable: 0,
            batches: VecDeque::with_capacity(1024),
            aged: Level::Open,
            admitted: 0,
            refused: 0,
        }
    }

    /// A batch ending at engine seq `seq` was executed at `now_ns`.
    pub(crate) fn marked(&mut self, seq: u64, now_ns: u64) {
        if seq > self.durable && self.batches.back().is_none_or(|(s, _)| seq > *s) {
            self.batches.push_back((seq, now_ns));
        }
    }

    /// Everything through `durable` is durable.
    pub(crate) fn released(&mut self, durable: u64) {
        self.durable = self.durable.max(durable);
        while self
            .batches
            .front()
            .is_some_and(|(s, _)| *s <= self.durable)
        {
            self.batches.pop_front();
        }
    }

    /// A poll starts at `now_ns`: the age of the oldest batch sets the level for it.
    pub(crate) fn poll_started(&mut self, now_ns: u64) {
        self.admitted = 0;
        let max = self.limits.max_delay_ns;
        let age = self
            .batches
            .front()
            .map_or(0, |(_, t)| now_ns.saturating_sub(*t));
        self.aged = if max == 0 || age <= max {
            Level::Open
        } else if age <= max.saturating_mul(2) {
            Level::Orders
        } else {
            Level::All
        };
    }

    /// Whether `msg` (from a session, with the engine at seq `executed`) must be
    /// refused `busy`; counts it admitted otherwise.
    pub(crate) fn refuses(&mut self, msg: &Inbound, executed: u64) -> bool {
        let needs = match msg {
            Inbound::NewOrder(_) | Inbound::Replace(_) => Level::Orders,
            Inbound::Cancel(_) | Inbound::MassCancel(_) => Level::All,
            _ => return false, // queries, heartbeats, balances: never refused here
        };
        let max = self.limits.max_in_flight;
        let depth = executed
            .saturating_sub(self.durable)
            .saturating_add(self.admitted);
        let counted = if max == 0 || depth < max {
            Level::Open
        } else if depth < max.saturating_mul(2) {
            Level::Orders
        } else {
            Level::All
        };
        if self.aged.max(counted) >= needs {
            self.refused += 1;
            return true;
        }
        self.admitted += 1;
        false
    }

    /// Requests refused `busy` so far.
    pub(crate) fn refused(&self) -> u64 {
        self.refused
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_types::{
        ClientOrderId, InstrumentId, OrderId, OrderType, Price, Qty, Side, StpMode, TimeInForce,
        Timestamp,
    };
    use peregrine_wire::orders::{Cancel, NewOrder};

    fn order() -> Inbound {
        Inbound::NewOrder(NewOrder {
            client_order_id: ClientOrderId(1),
            price: Price::from_raw(100),
            qty: Qty::from_raw(1),
            expire_at: Timestamp(0),
            instrument: InstrumentId(1),
            side: Side::Buy,
            order_type: OrderType::Limit,
            tif: TimeInForce::Gtc,
            stp: StpMode::None,
        })
    }

    fn cancel() -> Inbound {
        Inbound::Cancel(Cancel {
            client_order_id: ClientOrderId(1),
            order_id: OrderId(1),
            instrument: InstrumentId(1),
        })
    }

    #[test]
    fn orders_are_refused_at_the_count_limit_and_cancels_at_twice_it() {
        let mut p = Pressure::new(Limits {
            max_in_flight: 4,
            max_delay_ns: 0,
        });
        p.poll_started(0);
        // 3 executed, none durable: one more order fits, the fifth does not.
        assert!(!p.refuses(&order(), 3));
        assert!(p.refuses(&order(), 3));
        // Cancels go on until twice the limit (8).
        for _ in 0..4 {
            assert!(!p.refuses(&cancel(), 3));
        }
        assert!(p.refuses(&cancel(), 3));
        assert_eq!(p.refused(), 2);
        // Durable through 3: room again.
        p.released(3);
        p.poll_started(0);
        assert!(!p.refuses(&order(), 3));
        // Queries are never refused.
        let q = Inbound::ClientHeartbeat(peregrine_wire::session::ClientHeartbeat {});
        p.released(0);
        assert!(!p.refuses(&q, 1_000));
    }

    #[test]
    fn the_age_of_the_oldest_undurable_batch_sets_the_level() {
        let ms = 1_000_000;
        let mut p = Pressure::new(Limits {
            max_in_flight: 0,
            max_delay_ns: 100 * ms,
        });
        p.marked(10, 0);
        p.marked(20, 50 * ms);
        p.marked(20, 60 * ms); // no new commands: not a new batch
        p.poll_started(100 * ms);
        assert!(
            !p.refuses(&order(), 20),
            "100 ms old: at the limit, not past it"
        );
        p.poll_started(150 * ms);
        assert!(p.refuses(&order(), 20));
        assert!(!p.refuses(&cancel(), 20));
        p.poll_started(201 * ms);
        assert!(p.refuses(&cancel(), 20));
        // The old batch becomes durable: the next one is 151 ms old.
        p.released(10);
        p.poll_started(201 * ms);
        assert!(p.refuses(&order(), 20) && !p.refuses(&cancel(), 20));
        p.released(20);
        p.poll_started(10_000 * ms);
        assert!(!p.refuses(&order(), 20), "nothing waits: open");
    }

    #[test]
    fn no_limits_refuse_nothing() {
        let mut p = Pressure::new(Limits {
            max_in_flight: 0,
            max_delay_ns: 0,
        });
        p.marked(1_000_000, 0);
        p.poll_started(u64::MAX);
        assert!(!p.refuses(&order(), u64::MAX));
        assert!(!p.refuses(&cancel(), u64::MAX));
    }
}
