//! Logging in to a cluster ([`Connection::connect_any`]): only the leader serves order
//! entry; another node answers `LeaderRedirect` (protocol document, section 4.10).
//!
//! The choice of the next node is [`LeaderWalk`], sans-IO: it takes what an attempt
//! ended with and says where to go (or how long to wait) next. A round tries every
//! configured address once, following at most [`MAX_HOPS_PER_ROUND`] redirects on the
//! way (two nodes briefly pointing at each other during a leader change cannot make
//! it spin); after a full round it waits the largest `retry_after_ms` a node asked
//! for, else a backoff that doubles from [`BACKOFF_MIN`] to [`BACKOFF_MAX`].
//!
//! A long-lived client that reconnects (the gateways, the engine's exchange venue)
//! keeps one walk for its whole life and tells it where a login succeeded
//! ([`LeaderWalk::logged_in`]): the next round, after that session is lost, starts
//! at that address, then the configured ones in order. A node that is down or
//! refuses simply passes to the next: ask [`LeaderWalk::next`] again.

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::{Duration, Instant};

use peregrine_wire::auth::AccountKey;
use peregrine_wire::v2::client::LoginParams;

use super::{Connection, LoginInfo};
use crate::error::ClientError;

/// Redirects followed per round at most.
pub const MAX_HOPS_PER_ROUND: usize = 4;
/// The first wait after a round with no leader.
pub const BACKOFF_MIN: Duration = Duration::from_millis(20);
/// The longest wait after a round with no leader.
pub const BACKOFF_MAX: Duration = Duration::from_millis(500);

/// What to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Connect and log in there.
    Try(SocketAddr),
    /// A round is over: wait this long, then start the next one.
    Wait(Duration),
}

/// Which node of a cluster to try next; see the module documentation.
#[derive(Debug, Clone)]
pub struct LeaderWalk {
    addrs: Vec<SocketAddr>,
    /// Where the last login succeeded: the first address of every round (until
    /// another login succeeds elsewhere).
    home: Option<SocketAddr>,
    /// The next position of this round (0 is `home` when there is one).
    at: usize,
    /// A leader to try before the next position of the round.
    leader: Option<SocketAddr>,
    hops: usize,
    /// The largest `retry_after_ms` asked for this round.
    retry_after: Duration,
    backoff: Duration,
    /// The address the latest [`Next::Try`] named.
    current: Option<SocketAddr>,
}

impl LeaderWalk {
    /// A walk over `addrs` (a cluster's order-entry addresses, or one address). With
    /// none, [`LeaderWalk::next`] only ever waits.
    pub fn new(addrs: Vec<SocketAddr>) -> Self {
        LeaderWalk {
            addrs,
            home: None,
            at: 0,
            leader: None,
            hops: 0,
            retry_after: Duration::ZERO,
            backoff: BACKOFF_MIN,
            current: None,
        }
    }

    /// The configured addresses.
    pub fn addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// The address the latest [`Next::Try`] named (`None` before the first).
    pub fn current(&self) -> Option<SocketAddr> {
        self.current
    }

    /// The `i`th address of a round: `home` first (when known), then the configured
    /// addresses in order without it.
    fn round_addr(&self, i: usize) -> Option<SocketAddr> {
        match self.home {
            None => self.addrs.get(i).copied(),
            Some(h) if i == 0 => Some(h),
            Some(h) => self.addrs.iter().copied().filter(|a| *a != h).nth(i - 1),
        }
    }

    /// Where to go next: an address to connect to, or (a round over with no
    /// leader) how long to wait before the next round. After a failed attempt (a
    /// node down, refusing, closing) just ask again.
    #[allow(clippy::should_implement_trait, reason = "never ends: not an iterator")]
    pub fn next(&mut self) -> Next {
        if let Some(a) = self.leader.take() {
            self.current = Some(a);
            return Next::Try(a);
        }
        if let Some(a) = self.round_addr(self.at) {
            self.at += 1;
            self.current = Some(a);
            return Next::Try(a);
        }
        let wait = if self.retry_after.is_zero() {
            let b = self.backoff;
            self.backoff = (b * 2).min(BACKOFF_MAX);
            b
        } else {
            self.retry_after
        };
        self.new_round();
        Next::Wait(wait)
    }

    fn new_round(&mut self) {
        self.at = 0;
        self.hops = 0;
        self.leader = None;
        self.retry_after = Duration::ZERO;
    }

    /// The node just tried redirected to `leader` (`None`: no leader known, or an
    /// address that does not resolve). The next [`LeaderWalk::next`] names the
    /// leader at once, unless this round has followed [`MAX_HOPS_PER_ROUND`]
    /// redirects already. Returns whether it will (the redirect is followed).
    pub fn redirected(&mut self, leader: Option<SocketAddr>, retry_after_ms: u32) -> bool {
        self.retry_after = self
            .retry_after
            .max(Duration::from_millis(u64::from(retry_after_ms)));
        match leader {
            Some(a) if self.hops < MAX_HOPS_PER_ROUND => {
                self.hops += 1;
                self.leader = Some(a);
                true
            }
            _ => false,
        }
    }

    /// [`LeaderWalk::redirected`] with the redirect's `host:port` text as it came
    /// (resolved with [`resolve_leader`]); returns the leader's address when the
    /// redirect is followed.
    pub fn redirected_to(
        &mut self,
        address: Option<&str>,
        retry_after_ms: u32,
    ) -> Option<SocketAddr> {
        let to = address.and_then(resolve_leader);
        self.redirected(to, retry_after_ms).then_some(to).flatten()
    }

    /// An attempt failed with `e`: a [`ClientError::Redirected`] (order entry's
    /// `LeaderRedirect`, or the recovery channel's) goes to
    /// [`LeaderWalk::redirected_to`]; anything else passes to the next address.
    /// Returns the leader's address when a redirect is followed.
    pub fn failed(&mut self, e: &ClientError) -> Option<SocketAddr> {
        match e {
            ClientError::Redirected {
                address,
                retry_after_ms,
                ..
            } => self.redirected_to(address.as_deref(), *retry_after_ms),
            _ => None,
        }
    }

    /// A login succeeded at `at`: the round ends, the backoff starts over, and the
    /// next round (once this session is lost) starts at `at`, then the configured
    /// addresses in order.
    pub fn logged_in(&mut self, at: SocketAddr) {
        self.home = Some(at);
        self.current = Some(at);
        self.backoff = BACKOFF_MIN;
        self.new_round();
    }
}

/// Parses an address list: one `IP:port`, or several separated by commas (blanks
/// around each allowed), as gateways and venues configure a cluster's nodes.
pub fn parse_addrs(text: &str) -> Result<Vec<SocketAddr>, BadAddress> {
    if text.trim().is_empty() {
        return Err(BadAddress(text.to_owned()));
    }
    text.split(',')
        .map(|a| {
            a.trim()
                .parse()
                .map_err(|_| BadAddress(a.trim().to_owned()))
        })
        .collect()
}

/// An entry of an address list that is not `IP:port`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not an IP:port address (give one, or several separated by commas)")]
pub struct BadAddress(pub String);

/// True for a failure another node (or a later attempt) may not have: the node is
/// down, refuses connections, closes or stops answering.
fn transient(e: &ClientError) -> bool {
    matches!(e, ClientError::Io { .. } | ClientError::Closed(_))
}

/// The first address a redirect's `host:port` resolves to (`None`: it does not):
/// how every client of a cluster reads `LeaderRedirect.address`.
pub fn resolve_leader(text: &str) -> Option<SocketAddr> {
    text.to_socket_addrs().ok()?.next()
}

impl Connection {
    /// Logs in to whichever node of a cluster leads: tries `addrs` in turn and
    /// follows `LeaderRedirect`s (see the module documentation); a node that refuses,
    /// fails or knows no leader passes to the next address. Gives up with the last
    /// error once `deadline` has passed (checked before each attempt and wait; each
    /// attempt has `timeout`, as in [`Connection::connect`]). A login rejection or a
    /// protocol violation ends it at once. Returns the connection, the login and the
    /// address it logged in at.
    pub fn connect_any(
        addrs: &[SocketAddr],
        params: LoginParams,
        key: AccountKey,
        timeout: Duration,
        deadline: Duration,
    ) -> Result<(Connection, LoginInfo, SocketAddr), ClientError> {
        if addrs.is_empty() {
            return Err(ClientError::Invalid("no order-entry address".into()));
        }
        let end = Instant::now() + deadline;
        let mut walk = LeaderWalk::new(addrs.to_vec());
        let mut last = None;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match walk.next() {
                Next::Wait(d) => match last.take() {
                    Some(e) if d > left => return Err(e),
                    kept => {
                        last = kept;
                        std::thread::sleep(d);
                    }
                },
                Next::Try(addr) => {
                    if let (true, Some(e)) = (left.is_zero(), last.take()) {
                        return Err(e);
                    }
                    match Connection::connect(addr, params, key.clone(), timeout) {
                        Ok((c, info)) => return Ok((c, info, addr)),
                        Err(e @ ClientError::Redirected { .. }) => {
                            walk.failed(&e);
                            last = Some(e);
                        }
                        Err(e) if transient(&e) => last = Some(e),
                        Err(e) => return Err(e),
                    }
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "redirect_tests.rs"]
mod tests;
