//! The engine's numbers as a struct, for programs (`peregrine up`) rather than people.
//!
//! The core keeps a [`Tally`] of what it sent back to strategies (one increment per
//! event, no atomics) and, whenever the engine publishes its text snapshot, the
//! engine also builds an [`EngineSummary`] (the core's part and its own latency and
//! queue counters) and stores it as one JSON line. The control command `summary`
//! returns that line; [`parse`] reads it (`peregrine_engine::summary::fetch` asks the
//! engine for it). Everything here is additive to the text `stats` report, which
//! stays for humans.

use peregrine_strategy::msg::{reason, Event, EventKind};
use serde::{Deserialize, Serialize};

/// Counters per venue (index = position in `[[venues]]`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VenueTally {
    /// New orders handed to this venue's gateway (passed risk).
    pub routed: u64,
    /// Acks from the venue.
    pub acks: u64,
    /// Fill reports from the venue.
    pub fills: u64,
    /// Cancels the venue confirmed.
    pub cancels: u64,
    /// Rejects by the venue itself (reason >= 1000).
    pub rejects: u64,
    /// Replaces the venue applied.
    #[serde(default)]
    pub replaces: u64,
}

/// What the orchestrator counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// New-order requests received from strategies (before any check).
    pub orders: u64,
    /// Ack events sent to strategies.
    pub acks: u64,
    /// Reject events for new orders (risk, engine and venue reasons).
    pub rejects: u64,
    /// Fill events.
    pub fills: u64,
    /// Venue-confirmed cancels.
    pub cancels: u64,
    /// Replace requests received from strategies.
    pub replace_requests: u64,
    /// Replaces applied by venues.
    pub replaces: u64,
    /// Per venue.
    pub venues: Vec<VenueTally>,
}

impl Tally {
    /// Zeroes for `venues` venues.
    pub fn new(venues: usize) -> Tally {
        Tally {
            venues: vec![VenueTally::default(); venues],
            ..Tally::default()
        }
    }

    /// Counts one event on its way to a strategy.
    #[inline]
    pub fn on_event(&mut self, ev: &Event) {
        let venue = self.venues.get_mut(ev.venue as usize);
        match ev.kind() {
            Some(EventKind::Ack) => {
                self.acks += 1;
                if let Some(v) = venue {
                    v.acks += 1;
                }
            }
            Some(EventKind::Reject) => {
                self.rejects += 1;
                if let Some(v) = venue.filter(|_| ev.reason >= reason::VENUE) {
                    v.rejects += 1;
                }
            }
            Some(EventKind::Fill) => {
                self.fills += 1;
                if let Some(v) = venue {
                    v.fills += 1;
                }
            }
            Some(EventKind::Cancelled) => {
                self.cancels += 1;
                if let Some(v) = venue {
                    v.cancels += 1;
                }
            }
            Some(EventKind::Replaced) => {
                self.replaces += 1;
                if let Some(v) = venue {
                    v.replaces += 1;
                }
            }
            Some(
                EventKind::CancelReject
                | EventKind::ReplaceReject
                | EventKind::Triggered
                | EventKind::ListStatus,
            )
            | None => {}
        }
    }

    /// Counts a new order handed to venue `venue`'s gateway.
    #[inline]
    pub fn on_routed(&mut self, venue: u32) {
        if let Some(v) = self.venues.get_mut(venue as usize) {
            v.routed += 1;
        }
    }
}

/// One row of the latency table (ns).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatencyRow {
    /// Row name, as in `latency::ROWS`.
    pub name: String,
    /// Samples.
    pub n: u64,
    /// Median.
    pub p50: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest.
    pub max: u64,
}

/// One strategy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StrategyRow {
    /// Name.
    pub name: String,
    /// `waiting`, `alive` or `dead`.
    pub state: String,
    /// Its process id, once it sent a heartbeat.
    pub pid: Option<u32>,
    /// Open orders.
    pub open: u32,
    /// Kill switch on for it (its own or the global one).
    pub killed: bool,
}

/// One strategy's position in one instrument (money in price units × lots).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PositionRow {
    /// Strategy name.
    pub strategy: String,
    /// Instrument id.
    pub instrument: u32,
    /// Signed lots.
    pub net: i64,
    /// Fills applied.
    pub fills: u64,
    /// Average open price, if any position is open.
    pub avg: Option<i128>,
    /// Realized PnL.
    pub realized: i128,
    /// Unrealized PnL at the mark.
    pub unrealized: i128,
    /// Realized + unrealized.
    pub total: i128,
}

/// One venue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VenueRow {
    /// Name from the config.
    pub name: String,
    /// Orders open there now.
    pub open: u64,
    /// Counters.
    pub tally: VenueTally,
}

/// A reject reason and how often it was given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RejectRow {
    /// Reason code.
    pub code: u16,
    /// Its name (`kill_switch`, `max_position`, ...).
    pub name: String,
    /// Count.
    pub count: u64,
}

/// New orders one venue rejected for one of its reasons.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VenueRejectRow {
    /// The venue's name from the config.
    pub venue: String,
    /// The venue's reason code (the exchange's and the simulator's are
    /// `peregrine_book::RejectReason` codes).
    pub code: u16,
    /// Its name, when the code is one of those.
    pub name: String,
    /// Count.
    pub count: u64,
}

/// Everything `peregrine up` shows, from one orchestrator snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineSummary {
    /// Engine name.
    pub engine: String,
    /// Time since start, ms.
    pub up_ms: u64,
    /// When the snapshot was taken (`CLOCK_MONOTONIC` ns).
    pub at_ns: u64,
    /// New-order requests received.
    pub orders: u64,
    /// Acks.
    pub acks: u64,
    /// Fills.
    pub fills: u64,
    /// Venue-confirmed cancels.
    pub cancels: u64,
    /// Rejects of new orders, every reason.
    pub rejects: u64,
    /// Orders open at venues now.
    pub open_orders: u64,
    /// The latency table (the 7 segments, round trip and two derived rows).
    pub latency: Vec<LatencyRow>,
    /// Strategies in config order.
    pub strategies: Vec<StrategyRow>,
    /// Positions and PnL.
    pub positions: Vec<PositionRow>,
    /// Venues in config order.
    pub venues: Vec<VenueRow>,
    /// Risk rejects (codes 101..=110) with a non-zero count.
    pub risk_rejects: Vec<RejectRow>,
    /// Engine rejects (codes 201..) with a non-zero count.
    pub engine_rejects: Vec<RejectRow>,
    /// New orders the venues rejected, by venue and the venue's own reason.
    #[serde(default)]
    pub venue_rejects: Vec<VenueRejectRow>,
    /// Replace requests received.
    #[serde(default)]
    pub replace_requests: u64,
    /// Replaces applied by venues.
    #[serde(default)]
    pub replaces: u64,
    /// Round trip and market-data latency over the last whole second only.
    #[serde(default)]
    pub window: Vec<LatencyRow>,
    /// Market data per strategy: events pushed, skipped (conflated or dropped).
    #[serde(default)]
    pub market_data: Vec<MdRow>,
    /// How to show each instrument.
    #[serde(default)]
    pub instruments: Vec<crate::units::InstrumentInfo>,
    /// Every hand-off's counters (as in `stats`).
    #[serde(default)]
    pub queues: Vec<QueueRow>,
}

/// One row of the queue table in `peregrine engine stats`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct QueueRow {
    /// `submit <strategy>`, `inbox <venue>`, `completion`, `return <strategy>`.
    pub name: String,
    /// Successful pushes.
    pub pushes: u64,
    /// Successful pops.
    pub pops: u64,
    /// Pushes refused because the queue was full.
    pub full: u64,
    /// Messages in the queue now.
    pub depth: u64,
    /// Messages left unread in a strategy's rings when they were retired (the strategy
    /// died; see `rings`); 0 for the in-process queues. Always
    /// `pushes == pops + depth + discarded` at rest.
    pub discarded: u64,
}

impl QueueRow {
    /// Adds another row's counts (not its name) to this one.
    pub fn add(&mut self, o: &QueueRow) {
        self.pushes += o.pushes;
        self.pops += o.pops;
        self.full += o.full;
        self.depth += o.depth;
        self.discarded += o.discarded;
    }
}

/// One strategy's market-data ring.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MdRow {
    /// Strategy.
    pub strategy: String,
    /// Events pushed.
    pub pushed: u64,
    /// Book changes conflated and trades dropped because its ring was full.
    pub skipped: u64,
}

impl EngineSummary {
    /// The latency row called `name` (see `latency::ROWS`), if present.
    pub fn latency_row(&self, name: &str) -> Option<&LatencyRow> {
        self.latency.iter().find(|r| r.name.trim() == name)
    }

    /// The round-trip row (t8 − t1).
    pub fn round_trip(&self) -> Option<&LatencyRow> {
        self.latency
            .iter()
            .find(|r| r.name.starts_with("round trip"))
    }

    /// How many new orders the kill switch refused (reason 103).
    pub fn kill_switch_rejects(&self) -> u64 {
        self.risk_rejects
            .iter()
            .filter(|r| r.code == peregrine_risk::RiskReject::KillSwitch.code())
            .map(|r| r.count)
            .sum()
    }
}

/// Why a summary could not be had.
#[derive(Debug, thiserror::Error)]
pub enum SummaryError {
    /// The socket could not be reached or read.
    #[error("control socket: {0}")]
    Io(#[from] std::io::Error),
    /// The engine answered something else (an older engine: `error: unknown command`).
    #[error("unexpected reply {0:?}")]
    Reply(String),
    /// The JSON did not parse.
    #[error("bad summary: {0}")]
    Json(#[from] serde_json::Error),
}

/// Parses a `summary` reply.
pub fn parse(reply: &str) -> Result<EngineSummary, SummaryError> {
    let line = reply.trim();
    if !line.starts_with('{') {
        let mut shown: String = line.chars().take(200).collect();
        if shown.len() < line.len() {
            shown.push_str("...");
        }
        return Err(SummaryError::Reply(shown));
    }
    Ok(serde_json::from_str(line)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(kind: EventKind, venue: u32, reason: u16) -> Event {
        Event {
            kind: kind as u8,
            venue,
            reason,
            ..Event::default()
        }
    }

    #[test]
    fn tally_counts_by_kind_and_venue() {
        let mut t = Tally::new(2);
        t.on_routed(1);
        t.on_routed(7); // unknown venue: totals only
        t.on_event(&ev(EventKind::Ack, 1, 0));
        t.on_event(&ev(EventKind::Fill, 1, 0));
        t.on_event(&ev(EventKind::Cancelled, 0, 0));
        t.on_event(&ev(EventKind::Reject, 0, 103)); // risk: not the venue's
        t.on_event(&ev(EventKind::Reject, 0, 1001));
        t.on_event(&ev(EventKind::Reject, 9, 202));
        t.on_event(&Event {
            kind: 250,
            ..Event::default()
        });
        assert_eq!((t.acks, t.fills, t.cancels, t.rejects), (1, 1, 1, 3));
        assert_eq!(
            t.venues[1],
            VenueTally {
                routed: 1,
                acks: 1,
                fills: 1,
                cancels: 0,
                rejects: 0,
                replaces: 0
            }
        );
        assert_eq!((t.venues[0].cancels, t.venues[0].rejects), (1, 1));
    }

    #[test]
    fn summary_round_trips_through_json() {
        let s = EngineSummary {
            engine: "e".into(),
            orders: 5,
            positions: vec![PositionRow {
                strategy: "m".into(),
                instrument: 1,
                net: -3,
                fills: 4,
                avg: Some(10_005),
                realized: -12,
                unrealized: i128::from(i64::MAX) * 4,
                total: 7,
            }],
            risk_rejects: vec![RejectRow {
                code: 103,
                name: "kill_switch".into(),
                count: 9,
            }],
            ..EngineSummary::default()
        };
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(parse(&format!("{text}\n")).unwrap(), s);
        assert_eq!(s.kill_switch_rejects(), 9);
    }

    #[test]
    fn parse_refuses_other_replies() {
        assert!(matches!(
            parse("error: unknown command \"summary\"\n"),
            Err(SummaryError::Reply(_))
        ));
        assert!(matches!(parse("{not json"), Err(SummaryError::Json(_))));
    }
}
