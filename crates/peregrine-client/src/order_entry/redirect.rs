//! Logging in to a cluster ([`Connection::connect_any`]): only the leader serves order
//! entry; another node answers `LeaderRedirect` (protocol document, section 4.10).
//!
//! The choice of the next node is [`Walk`], sans-IO: it takes what an attempt ended
//! with and says where to go (or how long to wait) next. A round tries every
//! configured address once, following at most [`MAX_HOPS_PER_ROUND`] redirects on the
//! way (two nodes briefly pointing at each other during a leader change cannot make
//! it spin); after a full round it waits the largest `retry_after_ms` a node asked
//! for, else a backoff that doubles from [`BACKOFF_MIN`] to [`BACKOFF_MAX`].

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::{Duration, Instant};

use peregrine_wire::auth::AccountKey;
use peregrine_wire::v2::client::LoginParams;

use super::{Connection, LoginInfo};
use crate::error::ClientError;

/// Redirects followed per round at most.
pub(crate) const MAX_HOPS_PER_ROUND: usize = 4;
/// The first wait after a round with no leader.
pub(crate) const BACKOFF_MIN: Duration = Duration::from_millis(20);
/// The longest wait after a round with no leader.
pub(crate) const BACKOFF_MAX: Duration = Duration::from_millis(500);

/// What to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// Connect and log in there.
    Try(SocketAddr),
    /// A round is over: wait this long, then start the next one.
    Wait(Duration),
}

/// Which node to try next; see the module documentation.
#[derive(Debug)]
pub(crate) struct Walk<'a> {
    addrs: &'a [SocketAddr],
    /// The next configured address of this round.
    at: usize,
    /// A leader to try before the next configured address.
    leader: Option<SocketAddr>,
    hops: usize,
    /// The largest `retry_after_ms` asked for this round.
    retry_after: Duration,
    backoff: Duration,
}

impl<'a> Walk<'a> {
    pub(crate) fn new(addrs: &'a [SocketAddr]) -> Self {
        Walk {
            addrs,
            at: 0,
            leader: None,
            hops: 0,
            retry_after: Duration::ZERO,
            backoff: BACKOFF_MIN,
        }
    }

    pub(crate) fn next(&mut self) -> Next {
        if let Some(a) = self.leader.take() {
            return Next::Try(a);
        }
        if let Some(&a) = self.addrs.get(self.at) {
            self.at += 1;
            return Next::Try(a);
        }
        let wait = if self.retry_after.is_zero() {
            let b = self.backoff;
            self.backoff = (b * 2).min(BACKOFF_MAX);
            b
        } else {
            self.retry_after
        };
        self.at = 0;
        self.hops = 0;
        self.retry_after = Duration::ZERO;
        Next::Wait(wait)
    }

    /// The node just tried redirected to `leader` (`None`: no leader known, or an
    /// address that does not resolve).
    pub(crate) fn redirected(&mut self, leader: Option<SocketAddr>, retry_after_ms: u32) {
        self.retry_after = self
            .retry_after
            .max(Duration::from_millis(u64::from(retry_after_ms)));
        if let Some(a) = leader {
            if self.hops < MAX_HOPS_PER_ROUND {
                self.hops += 1;
                self.leader = Some(a);
            }
        }
    }
}

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
        let mut walk = Walk::new(addrs);
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
                        Err(ClientError::Redirected {
                            leader_id,
                            address,
                            retry_after_ms,
                        }) => {
                            let to = address.as_deref().and_then(resolve_leader);
                            walk.redirected(to, retry_after_ms);
                            last = Some(ClientError::Redirected {
                                leader_id,
                                address,
                                retry_after_ms,
                            });
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
