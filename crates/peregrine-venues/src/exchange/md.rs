//! The exchange venue's market data: the Peregrine exchange's UDP feed, with its gap
//! detection and recovery (replay, snapshots), as a [`MarketFeed`] the engine's
//! market-data thread polls.
//!
//! It is `peregrine md`'s subscriber ([`peregrine_client::md::Subscriber`]), shared
//! code: non-blocking, so a gap or a slow recovery service never stalls the
//! market-data thread (packets that arrive meanwhile are held and applied after).
//! Its events become [`MdUpdate`]s:
//!
//! * a level change is a [`MdUpdate::Level`]; the end of each packet's changes to a
//!   book is an [`MdUpdate::End`], so a strategy sees one version per packet;
//! * a snapshot (at start, after a gap the exchange no longer retains, after an
//!   exchange restart) is a [`MdUpdate::Clear`] and the snapshot's levels, then `End`;
//! * a new feed session clears every book at once (snapshots follow).
//!
//! **Timestamps.** The `ts` of every update is the feed packet's `send_time` (the
//! exchange's clock when it handed the packet to its socket), moved onto this
//! engine's `CLOCK_MONOTONIC`: the book's `exchange_ts` is when the exchange
//! published that version, so the engine's `md venue -> engine` row is the feed's
//! wire latency and `md venue -> on_book` the feed-to-strategy latency of the
//! issue. The exchange clock is its wall clock at start advanced monotonically; the
//! conversion subtracts (wall clock − monotonic clock) as read here, refreshed every
//! 100 ms, which is exact on one host up to clock adjustments between the two
//! processes' starts. Levels from a snapshot or a replay have no send time (`ts` 0:
//! no latency sample).

use std::net::SocketAddr;

use peregrine_client::md::{MdEvent, Subscriber, SubscriberConfig};
use peregrine_types::{InstrumentId, Price, Qty, Side};
use serde::{Deserialize, Serialize};

use crate::feed::{MarketFeed, MdUpdate};
use crate::log::LogLines;

/// `feed = { ... }` in an exchange venue: where its market data comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeedConfig {
    /// The feed's address: the exchange's `[market_data] target` (a unicast
    /// `IP:port` this engine binds, or a multicast group it joins).
    pub addr: String,
    /// The exchange's recovery service (its `recovery_listen`), for snapshots and
    /// gap replays; for a cluster, every node's, comma-separated (a node that does
    /// not lead redirects to the one that does); none: gaps are only logged and
    /// books heal as levels change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<String>,
    /// Instruments to follow; default (empty): every instrument of the engine.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instruments: Vec<u32>,
    /// For a multicast `addr`: the IPv4 address of the interface to join the group
    /// on (the exchange's `multicast_interface`); default the routing table's choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<std::net::Ipv4Addr>,
}

impl FeedConfig {
    /// Every problem, each prefixed with `at`.
    pub fn problems(&self, at: &str) -> Vec<String> {
        let mut p = Vec::new();
        if self.addr.parse::<SocketAddr>().is_err() {
            p.push(format!("{at}.addr {:?}: expected IP:port", self.addr));
        }
        if let Some(r) = &self.recovery {
            if peregrine_client::order_entry::parse_addrs(r).is_err() {
                p.push(format!(
                    "{at}.recovery {r:?}: expected IP:port[,IP:port...]"
                ));
            }
        }

        if self.instruments.len() > peregrine_client::md::subscriber::MAX_INSTRUMENTS {
            p.push(format!(
                "{at}.instruments: at most {}",
                peregrine_client::md::subscriber::MAX_INSTRUMENTS
            ));
        }
        p
    }
}

/// What the feed counted (logged as it happens).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FeedStats {
    /// Datagrams read.
    pub packets: u64,
    /// Sequence gaps seen.
    pub gaps: u64,
    /// Gaps healed by replay.
    pub replays: u64,
    /// Snapshot installs (start, fallback, new session).
    pub snapshots: u64,
    /// Recoveries that failed.
    pub failures: u64,
    /// Packets that did not parse.
    pub malformed: u64,
    /// New feed sessions (exchange restarts).
    pub sessions: u64,
}

/// The exchange feed as a [`MarketFeed`].
#[derive(Debug)]
pub struct ExchangeFeed {
    name: String,
    sub: Subscriber,
    instruments: Vec<InstrumentId>,
    started: bool,
    /// Wall clock − monotonic clock, ns.
    offset: u64,
    next_refresh_ns: u64,
    stats: FeedStats,
    errors: u64,
    log: LogLines,
}

/// How often the wall-clock offset is read again.
const REFRESH_NS: u64 = 100_000_000;

impl ExchangeFeed {
    /// Binds the feed of venue `name` for `cfg.instruments` (or `engine_instruments`
    /// when that list is empty).
    pub fn bind(
        name: &str,
        cfg: &FeedConfig,
        engine_instruments: &[u32],
    ) -> Result<ExchangeFeed, String> {
        let problems = cfg.problems("feed");
        if !problems.is_empty() {
            return Err(problems.join("; "));
        }
        let ids = if cfg.instruments.is_empty() {
            engine_instruments
        } else {
            &cfg.instruments
        };
        let instruments: Vec<InstrumentId> = ids.iter().map(|i| InstrumentId(*i)).collect();
        let sub = Subscriber::bind(SubscriberConfig {
            feed: cfg.addr.parse().map_err(|_| "feed.addr".to_owned())?,
            recovery: cfg
                .recovery
                .as_deref()
                .and_then(|r| peregrine_client::order_entry::parse_addrs(r).ok())
                .unwrap_or_default(),
            instruments: instruments.clone(),
            simulate_loss: None,
            interface: cfg.interface.unwrap_or(std::net::Ipv4Addr::UNSPECIFIED),
        })
        .map_err(|e| format!("feed {}: {e}", cfg.addr))?;
        Ok(ExchangeFeed {
            name: name.to_owned(),
            sub,
            instruments,
            started: false,
            offset: 0,
            next_refresh_ns: 0,
            stats: FeedStats::default(),
            errors: 0,
            log: LogLines::default(),
        })
    }

    /// The counts so far.
    pub fn stats(&self) -> FeedStats {
        self.stats
    }

    fn refresh_offset(&mut self, now_ns: u64) {
        if now_ns < self.next_refresh_ns {
            return;
        }
        self.next_refresh_ns = now_ns + REFRESH_NS;
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        self.offset = wall.saturating_sub(now_ns);
    }
}

/// Moves an exchange timestamp onto the monotonic clock (0 stays 0: unknown).
fn to_mono(ts: u64, offset: u64) -> u64 {
    if ts == 0 {
        0
    } else {
        ts.saturating_sub(offset).max(1)
    }
}

impl MarketFeed for ExchangeFeed {
    fn poll(&mut self, now_ns: u64, out: &mut dyn FnMut(MdUpdate)) -> usize {
        self.refresh_offset(now_ns);
        let (offset, name) = (self.offset, &self.name);
        let (stats, instruments, log) = (&mut self.stats, &self.instruments, &mut self.log);
        let mut n = 0;
        let mut on = |e: MdEvent<'_>| {
            n += 1;
            translate(e, offset, instruments, stats, (name, log), out);
        };
        if !self.started {
            self.started = true;
            self.sub.start(&mut on);
        }
        match self.sub.poll(&mut on) {
            Ok(k) => self.stats.packets += k as u64,
            Err(e) => {
                self.errors += 1;
                if self.errors.is_power_of_two() {
                    self.log.push(format!(
                        "venue {}: market data: {e} ({} so far)",
                        self.name, self.errors
                    ));
                }
            }
        }
        n
    }

    fn drain_log(&mut self, out: &mut dyn FnMut(String)) {
        self.log.drain(out);
    }
}

fn translate(
    e: MdEvent<'_>,
    offset: u64,
    instruments: &[InstrumentId],
    stats: &mut FeedStats,
    (name, log): (&str, &mut LogLines),
    out: &mut dyn FnMut(MdUpdate),
) {
    match e {
        MdEvent::Level {
            update, send_time, ..
        } => out(MdUpdate::Level {
            instrument: update.instrument,
            side: update.side,
            price: update.price,
            qty: update.qty,
            orders: update.order_count,
            ts: to_mono(send_time, offset),
        }),
        MdEvent::Book { .. } => out(MdUpdate::End),
        MdEvent::Trade {
            trade, send_time, ..
        } => out(MdUpdate::Trade {
            instrument: trade.instrument,
            trade_id: trade.trade_id,
            price: trade.price,
            qty: trade.qty,
            aggressor: trade.aggressor_side,
            ts: to_mono(send_time, offset),
        }),
        MdEvent::Snapshot {
            instrument,
            as_of_seq,
            book,
        } => {
            stats.snapshots += 1;
            log.push(format!(
                "venue {name}: market data: instrument {instrument} from a snapshot as of #{as_of_seq}"
            ));
            out(MdUpdate::Clear { instrument });
            for side in [Side::Buy, Side::Sell] {
                for (price, qty) in book.levels(side) {
                    out(MdUpdate::Level {
                        instrument,
                        side,
                        price: Price::from_raw(price),
                        qty: Qty::from_raw(qty),
                        orders: 0,
                        ts: 0,
                    });
                }
            }
            out(MdUpdate::End);
        }
        MdEvent::NewSession { session_id } => {
            stats.sessions += 1;
            log.push(format!(
                "venue {name}: market data: new feed session {session_id}, books reset"
            ));
            for &instrument in instruments {
                out(MdUpdate::Clear { instrument });
            }
            out(MdUpdate::End);
        }
        MdEvent::Gap { from, to } => {
            stats.gaps += 1;
            log.push(format!(
                "venue {name}: market data: messages {from}..{to} lost, recovering"
            ));
        }
        MdEvent::RecoveredByReplay { .. } => stats.replays += 1,
        MdEvent::RecoveryFailed { error, retry_in } => {
            stats.failures += 1;
            log.push(format!(
                "venue {name}: market data: recovery failed: {error}; retrying in {} ms",
                retry_in.as_millis()
            ));
        }
        MdEvent::Malformed { .. } => stats.malformed += 1,
        MdEvent::Redirected { to } => {
            log.push(format!(
                "venue {name}: market data: recovery at the leader's service {to}"
            ));
        }
        MdEvent::RecoveredBySnapshot { .. }
        | MdEvent::Commitment { .. }
        | MdEvent::Phase { .. }
        | MdEvent::Indicative { .. }
        | MdEvent::EndOfSession => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exchange_time_moves_onto_the_monotonic_clock_and_zero_stays_unknown() {
        assert_eq!(to_mono(0, 5), 0);
        assert_eq!(to_mono(1_000_000, 400_000), 600_000);
        assert_eq!(to_mono(3, 5), 1, "never 0 (unknown) for a known time");
    }
}
