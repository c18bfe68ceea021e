//! Who gets a recovery connection when the service is full: a pure decision over the
//! connections held, so it is tested without sockets or a clock.
//!
//! A connection is **in flight** once it has sent a whole, valid request that is not
//! yet fully written back (held for a consistent book, or its answer waiting for the
//! socket): it is never closed for a newcomer. Any other connection may be: first one
//! that has **sent nothing** (idle longest first), then one whose requests were all
//! **answered** (idle longest first: a subscriber's fetch closes its connection once
//! answered, so one held open afterwards is idle). A connection accepted in the same
//! poll is not closed for a later newcomer of that poll: it has not been read yet,
//! and a burst of connections must not sweep out a subscriber before its request is
//! seen. When nobody may be closed the newcomer is refused.
//!
//! The per-address share is checked first and only the address's own connections
//! make room for it; then the total, where any address's connections may.

use std::net::IpAddr;
use std::time::Instant;

/// What a held connection is doing, for admission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Accepted in this poll, not read yet.
    Fresh,
    /// No whole request received yet.
    Silent,
    /// Every request received was answered.
    Answered,
    /// A request is being answered: never closed for a newcomer.
    InFlight,
}

/// One held connection as admission sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Held {
    pub(crate) peer: IpAddr,
    pub(crate) phase: Phase,
    /// Last request read or answer byte written.
    pub(crate) active: Instant,
}

/// The decision for a newcomer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admit {
    /// There is room.
    Take,
    /// Close the held connection at this index, then take the newcomer.
    Evict(usize),
    /// Close the newcomer.
    Refuse,
}

/// Decides for a newcomer from `peer`, with at most `clients` connections in all and
/// `per_address` from one address.
pub(crate) fn admit(held: &[Held], peer: IpAddr, clients: usize, per_address: usize) -> Admit {
    let mine = held.iter().filter(|h| h.peer == peer).count();
    if mine >= per_address.max(1) {
        return victim(held, |h| h.peer == peer).map_or(Admit::Refuse, Admit::Evict);
    }
    if held.len() >= clients.max(1) {
        return victim(held, |_| true).map_or(Admit::Refuse, Admit::Evict);
    }
    Admit::Take
}

/// The connection to close among `eligible` ones: silent before answered, idle
/// longest first; never fresh or in flight.
fn victim(held: &[Held], eligible: impl Fn(&Held) -> bool) -> Option<usize> {
    let rank = |p: Phase| match p {
        Phase::Silent => Some(0u8),
        Phase::Answered => Some(1),
        Phase::Fresh | Phase::InFlight => None,
    };
    held.iter()
        .enumerate()
        .filter(|(_, h)| eligible(h))
        .filter_map(|(i, h)| rank(h.phase).map(|r| (r, h.active, i)))
        .min()
        .map(|(_, _, i)| i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;
    use std::time::Duration;

    fn ip(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))
    }

    /// Connection `i` of a list: from `ip(peer)`, active `age` ms before `t0 + 1 s`.
    fn held(t0: Instant, peer: u8, phase: Phase, age_ms: u64) -> Held {
        Held {
            peer: ip(peer),
            phase,
            active: t0 + Duration::from_secs(1) - Duration::from_millis(age_ms),
        }
    }

    #[test]
    fn room_is_taken_without_closing_anyone() {
        let t0 = Instant::now();
        let h = [held(t0, 1, Phase::Silent, 500)];
        assert_eq!(admit(&h, ip(2), 4, 2), Admit::Take);
        assert_eq!(admit(&[], ip(2), 1, 1), Admit::Take);
    }

    #[test]
    fn a_full_service_closes_the_silent_one_idle_longest_before_any_answered_one() {
        let t0 = Instant::now();
        let h = [
            held(t0, 1, Phase::Answered, 900),
            held(t0, 2, Phase::Silent, 100),
            held(t0, 3, Phase::Silent, 300),
            held(t0, 4, Phase::InFlight, 999),
        ];
        assert_eq!(admit(&h, ip(9), 4, 4), Admit::Evict(2));
        // Without silent ones, the answered one idle longest goes.
        let h = [
            held(t0, 1, Phase::Answered, 100),
            held(t0, 2, Phase::Answered, 700),
            held(t0, 3, Phase::InFlight, 999),
        ];
        assert_eq!(admit(&h, ip(9), 3, 3), Admit::Evict(1));
    }

    #[test]
    fn in_flight_and_fresh_connections_are_never_closed_so_the_newcomer_is_refused() {
        let t0 = Instant::now();
        let h = [
            held(t0, 1, Phase::InFlight, 900),
            held(t0, 2, Phase::Fresh, 0),
            held(t0, 3, Phase::InFlight, 10),
        ];
        assert_eq!(admit(&h, ip(9), 3, 3), Admit::Refuse);
    }

    #[test]
    fn an_address_over_its_share_makes_room_only_from_its_own_connections() {
        let t0 = Instant::now();
        let h = [
            held(t0, 1, Phase::Silent, 900), // another address, idle longest
            held(t0, 5, Phase::Silent, 100),
            held(t0, 5, Phase::Silent, 200),
        ];
        assert_eq!(admit(&h, ip(5), 8, 2), Admit::Evict(2));
        let busy = [
            held(t0, 1, Phase::Silent, 900),
            held(t0, 5, Phase::InFlight, 100),
            held(t0, 5, Phase::Fresh, 0),
        ];
        assert_eq!(admit(&busy, ip(5), 8, 2), Admit::Refuse);
    }

    /// The flood of the integration test in miniature: every slot but one is held
    /// by silent sockets of many addresses; a subscriber whose request is in flight
    /// survives any number of newcomers, each of which replaces a silent socket.
    #[test]
    fn a_subscriber_in_flight_survives_a_flood_from_many_addresses() {
        let t0 = Instant::now();
        let mut h: Vec<Held> = (0..7)
            .map(|i| held(t0, 10 + i, Phase::Silent, 100 + u64::from(i)))
            .collect();
        h.push(held(t0, 1, Phase::InFlight, 999));
        for n in 0..100u8 {
            let Admit::Evict(i) = admit(&h, ip(20 + n % 50), 8, 2) else {
                panic!("a silent socket can always be closed");
            };
            assert_ne!(h[i].phase, Phase::InFlight);
            h[i] = held(t0, 20 + n % 50, Phase::Silent, 0);
        }
        assert!(h.iter().any(|x| x.phase == Phase::InFlight));
    }
}
