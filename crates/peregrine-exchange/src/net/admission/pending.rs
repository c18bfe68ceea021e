//! [`PendingPool`]: the bounded pool of connections that have not logged in.

use std::collections::VecDeque;
use std::net::IpAddr;

use rustc_hash::FxHashMap;

/// Limits of the pending pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PendingConfig {
    /// Connections waiting to log in, over every address.
    pub capacity: usize,
    /// Connections waiting to log in from one address.
    pub per_address: usize,
    /// Milliseconds a connection may take to log in.
    pub timeout_ms: u64,
}

/// What admitting a connection did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admit<K> {
    /// Admitted; nothing else changed.
    Admitted,
    /// Admitted; this older pending connection was evicted to make room (close it).
    Evicted(K),
}

#[derive(Debug, Clone, Copy)]
struct Entry<K> {
    key: K,
    addr: IpAddr,
    deadline: u64,
}

/// Pending connections in arrival order. `K` names a connection (a session key).
#[derive(Debug)]
pub(crate) struct PendingPool<K> {
    config: PendingConfig,
    entries: VecDeque<Entry<K>>,
    per_addr: FxHashMap<IpAddr, usize>,
}

impl<K: Copy + PartialEq> PendingPool<K> {
    /// An empty pool.
    pub(crate) fn new(config: PendingConfig) -> Self {
        PendingPool {
            config,
            entries: VecDeque::with_capacity(config.capacity),
            per_addr: FxHashMap::default(),
        }
    }

    /// Admits a new connection from `addr` at `now_ms`. When the address already has
    /// its share, its oldest pending connection is evicted; else when the pool is
    /// full, the oldest pending connection of all.
    pub(crate) fn admit(&mut self, key: K, addr: IpAddr, now_ms: u64) -> Admit<K> {
        let mut out = Admit::Admitted;
        let mine = self.per_addr.get(&addr).copied().unwrap_or(0);
        let victim = if mine >= self.config.per_address.max(1) {
            self.entries.iter().position(|e| e.addr == addr)
        } else if self.entries.len() >= self.config.capacity.max(1) {
            Some(0)
        } else {
            None
        };
        if let Some(i) = victim {
            if let Some(e) = self.take(i) {
                out = Admit::Evicted(e.key);
            }
        }
        self.entries.push_back(Entry {
            key,
            addr,
            deadline: now_ms.saturating_add(self.config.timeout_ms),
        });
        *self.per_addr.entry(addr).or_insert(0) += 1;
        out
    }

    fn take(&mut self, i: usize) -> Option<Entry<K>> {
        let e = self.entries.remove(i)?;
        if let Some(n) = self.per_addr.get_mut(&e.addr) {
            *n -= 1;
            if *n == 0 {
                self.per_addr.remove(&e.addr);
            }
        }
        Some(e)
    }

    /// Removes a connection (it logged in, or closed). False if it was not pending.
    pub(crate) fn remove(&mut self, key: K) -> bool {
        match self.entries.iter().position(|e| e.key == key) {
            Some(i) => self.take(i).is_some(),
            None => false,
        }
    }

    /// Removes and returns the next connection whose login time ran out at `now_ms`.
    /// Call until `None`.
    pub(crate) fn pop_expired(&mut self, now_ms: u64) -> Option<K> {
        // Deadlines grow with arrival order (one timeout for all), so only the front
        // can be due.
        if self.entries.front()?.deadline <= now_ms {
            self.take(0).map(|e| e.key)
        } else {
            None
        }
    }

    /// Connections pending.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// True if none is pending.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Connections pending from `addr`.
    #[cfg(test)]
    pub(crate) fn pending_from(&self, addr: IpAddr) -> usize {
        self.per_addr.get(&addr).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(capacity: usize, per_address: usize) -> PendingConfig {
        PendingConfig {
            capacity,
            per_address,
            timeout_ms: 100,
        }
    }

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    #[test]
    fn a_full_pool_evicts_the_oldest() {
        let mut p = PendingPool::new(cfg(3, 10));
        for k in 0..3 {
            assert_eq!(p.admit(k, ip(1), 0), Admit::Admitted);
        }
        assert_eq!(p.admit(3, ip(2), 1), Admit::Evicted(0));
        assert_eq!(p.admit(4, ip(2), 1), Admit::Evicted(1));
        assert_eq!(
            (p.len(), p.pending_from(ip(1)), p.pending_from(ip(2))),
            (3, 1, 2)
        );
    }

    #[test]
    fn an_address_over_its_share_evicts_its_own_oldest() {
        let mut p = PendingPool::new(cfg(100, 2));
        p.admit(1, ip(9), 0);
        p.admit(2, ip(1), 0);
        p.admit(3, ip(9), 0);
        assert_eq!(p.admit(4, ip(9), 0), Admit::Evicted(1));
        assert_eq!(p.pending_from(ip(9)), 2);
        assert_eq!(p.pending_from(ip(1)), 1, "another address is untouched");
    }

    #[test]
    fn logins_leave_and_timeouts_expire_in_order() {
        let mut p = PendingPool::new(cfg(10, 10));
        p.admit(1, ip(1), 0);
        p.admit(2, ip(1), 50);
        p.admit(3, ip(2), 60);
        assert!(p.remove(2));
        assert!(!p.remove(2));
        assert_eq!(p.pop_expired(99), None);
        assert_eq!(p.pop_expired(100), Some(1));
        assert_eq!(p.pop_expired(159), None);
        assert_eq!(p.pop_expired(160), Some(3));
        assert!(p.is_empty());
        assert_eq!(p.pending_from(ip(1)), 0);
    }

    /// 1,000 idle connections arrive while legitimate clients connect and log in
    /// within `rtt` ms: none of the legitimate ones is evicted while pending.
    #[test]
    fn a_flood_of_idle_sockets_never_evicts_a_prompt_login() {
        let mut p = PendingPool::new(cfg(256, 64));
        let mut now = 0;
        let mut evicted_legit = 0;
        for i in 0..1000u32 {
            now += 1; // one idle connection per ms from a few addresses
            if let Admit::Evicted(k) = p.admit(i, ip((i % 4) as u8 + 10), now) {
                evicted_legit += u32::from(k >= 1_000_000);
            }
            if i % 10 == 0 {
                let legit = 1_000_000 + i;
                if let Admit::Evicted(k) = p.admit(legit, ip(1), now) {
                    evicted_legit += u32::from(k >= 1_000_000);
                }
                assert!(p.remove(legit), "logged in within the same millisecond");
            }
        }
        assert_eq!(evicted_legit, 0);
    }
}
