//! Connection slots: at most `max_connections` open connections, and
//! `max_connections_per_ip` per client address. A [`ConnGuard`] holds one of each
//! until it is dropped.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Open connections per client address.
#[derive(Debug, Default)]
pub struct PerIp(Mutex<HashMap<IpAddr, usize>>);

/// One connection's slot (global and per address), held by the connection task
/// and, for a WebSocket, by the upgraded connection's task: released when both end.
#[derive(Debug)]
pub struct ConnGuard {
    _permit: OwnedSemaphorePermit,
    ip: IpAddr,
    per_ip: Arc<PerIp>,
}

impl Drop for ConnGuard {
    fn drop(&mut self) {
        self.per_ip.leave(self.ip);
    }
}

impl ConnGuard {
    /// Takes a slot for a connection from `ip`: one of `slots` and one of the
    /// address's `max_per_ip`; `None` when either is used up.
    pub fn take(
        slots: &Arc<Semaphore>,
        per_ip: &Arc<PerIp>,
        ip: IpAddr,
        max_per_ip: usize,
    ) -> Option<ConnGuard> {
        let permit = Arc::clone(slots).try_acquire_owned().ok()?;
        if !per_ip.enter(ip, max_per_ip) {
            return None;
        }
        Some(ConnGuard {
            _permit: permit,
            ip,
            per_ip: Arc::clone(per_ip),
        })
    }
}

impl PerIp {
    fn enter(&self, ip: IpAddr, max: usize) -> bool {
        let mut m = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let n = m.entry(ip).or_insert(0);
        if *n >= max {
            return false;
        }
        *n += 1;
        true
    }

    fn leave(&self, ip: IpAddr) {
        let mut m = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(n) = m.get_mut(&ip) {
            *n -= 1;
            if *n == 0 {
                m.remove(&ip);
            }
        }
    }
}
