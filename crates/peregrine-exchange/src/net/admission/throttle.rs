//! [`LoginThrottle`]: exponential backoff after failed logins, per source address and
//! per account.

use std::net::IpAddr;

use peregrine_types::AccountId;
use rustc_hash::FxHashMap;

/// Backoff settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ThrottleConfig {
    /// Failures allowed before any delay.
    pub free_failures: u32,
    /// Delay after the first failure beyond the free ones, milliseconds; it doubles
    /// with each further failure.
    pub base_ms: u64,
    /// Largest delay, milliseconds.
    pub max_ms: u64,
    /// Most addresses, accounts and trusted pairs tracked (each): beyond it the entry
    /// idle longest is forgotten.
    pub max_tracked: usize,
    /// How long a successful login from an address exempts it from its account's
    /// delay, milliseconds.
    pub trust_ms: u64,
}

impl Default for ThrottleConfig {
    fn default() -> Self {
        ThrottleConfig {
            free_failures: 3,
            base_ms: 250,
            max_ms: 30_000,
            max_tracked: 16_384,
            trust_ms: 24 * 3600 * 1000,
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Backoff {
    failures: u32,
    until: u64,
    last: u64,
}

/// Failure counts and delays. See the module documentation.
#[derive(Debug)]
pub(crate) struct LoginThrottle {
    config: ThrottleConfig,
    addrs: FxHashMap<IpAddr, Backoff>,
    accounts: FxHashMap<AccountId, Backoff>,
    /// (account, address) pairs that logged in, with the time they did.
    trusted: FxHashMap<(AccountId, IpAddr), u64>,
}

impl LoginThrottle {
    /// An empty throttle.
    pub(crate) fn new(config: ThrottleConfig) -> Self {
        LoginThrottle {
            config,
            addrs: FxHashMap::default(),
            accounts: FxHashMap::default(),
            trusted: FxHashMap::default(),
        }
    }

    /// `Err(retry_after_ms)` if a login for `account` from `addr` must wait at
    /// `now_ms` (answer it without checking the proof); `Ok` if it may be tried.
    pub(crate) fn check(&self, account: AccountId, addr: IpAddr, now_ms: u64) -> Result<(), u64> {
        let wait = |b: Option<&Backoff>| b.map_or(0, |b| b.until.saturating_sub(now_ms));
        let mut after = wait(self.addrs.get(&addr));
        if !self.is_trusted(account, addr, now_ms) {
            after = after.max(wait(self.accounts.get(&account)));
        }
        if after == 0 {
            Ok(())
        } else {
            Err(after)
        }
    }

    fn is_trusted(&self, account: AccountId, addr: IpAddr, now_ms: u64) -> bool {
        self.trusted
            .get(&(account, addr))
            .is_some_and(|&t| now_ms.saturating_sub(t) < self.config.trust_ms)
    }

    /// Records a failed login (an unknown account counts against the address only
    /// when `account` is `None`, so unknown ids do not fill the account table).
    pub(crate) fn failure(&mut self, account: Option<AccountId>, addr: IpAddr, now_ms: u64) {
        let c = self.config;
        bump(&mut self.addrs, addr, now_ms, c);
        if let Some(a) = account {
            if !self.is_trusted(a, addr, now_ms) {
                bump(&mut self.accounts, a, now_ms, c);
            }
        }
    }

    /// Records a successful login: the address's failures are forgiven and it is
    /// trusted for the account.
    pub(crate) fn success(&mut self, account: AccountId, addr: IpAddr, now_ms: u64) {
        self.addrs.remove(&addr);
        if self.trusted.len() >= self.config.max_tracked {
            evict_oldest(&mut self.trusted, |&t| t);
        }
        self.trusted.insert((account, addr), now_ms);
    }

    /// Addresses and accounts currently tracked (for metrics and tests).
    #[cfg(test)]
    pub(crate) fn tracked(&self) -> (usize, usize) {
        (self.addrs.len(), self.accounts.len())
    }
}

fn bump<K: std::hash::Hash + Eq + Copy>(
    map: &mut FxHashMap<K, Backoff>,
    key: K,
    now_ms: u64,
    c: ThrottleConfig,
) {
    if !map.contains_key(&key) && map.len() >= c.max_tracked {
        evict_oldest(map, |b| b.last);
    }
    let b = map.entry(key).or_default();
    // A quiet spell of the maximum delay forgives earlier failures.
    if now_ms.saturating_sub(b.last) > c.max_ms.saturating_mul(4) {
        *b = Backoff::default();
    }
    b.failures = b.failures.saturating_add(1);
    b.last = now_ms;
    if b.failures > c.free_failures {
        let doublings = (b.failures - c.free_failures - 1).min(40);
        let delay = c.base_ms.saturating_mul(1 << doublings).min(c.max_ms);
        b.until = now_ms.saturating_add(delay);
    }
}

/// Forgets the entry with the smallest `age` key (O(n), only when the table is full).
fn evict_oldest<K: std::hash::Hash + Eq + Copy, V>(
    map: &mut FxHashMap<K, V>,
    age: impl Fn(&V) -> u64,
) {
    if let Some(k) = map.iter().min_by_key(|(_, v)| age(v)).map(|(k, _)| *k) {
        map.remove(&k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    fn throttle() -> LoginThrottle {
        LoginThrottle::new(ThrottleConfig {
            free_failures: 2,
            base_ms: 100,
            max_ms: 1000,
            max_tracked: 8,
            trust_ms: 10_000,
        })
    }

    #[test]
    fn delays_double_per_failure_up_to_the_cap() {
        let mut t = throttle();
        let (a, x) = (AccountId(1), ip(9));
        let mut delays = Vec::new();
        let mut now = 0;
        for _ in 0..8 {
            t.failure(Some(a), x, now);
            delays.push(t.check(a, x, now).err().unwrap_or(0));
            now += 1;
        }
        assert_eq!(delays, [0, 0, 100, 200, 400, 800, 1000, 1000]);
        assert_eq!(t.check(a, x, now + 1000), Ok(()), "after the delay");
    }

    #[test]
    fn another_address_is_throttled_for_the_account_unless_trusted() {
        let mut t = throttle();
        let a = AccountId(1);
        t.success(a, ip(1), 0); // the owner's usual address
        for _ in 0..5 {
            t.failure(Some(a), ip(66), 10);
        }
        assert!(t.check(a, ip(66), 10).is_err(), "the guesser waits");
        assert!(t.check(a, ip(2), 10).is_err(), "so does a new address");
        assert_eq!(t.check(a, ip(1), 10), Ok(()), "the owner does not");
        assert_eq!(
            t.check(AccountId(2), ip(2), 10),
            Ok(()),
            "other accounts neither"
        );
    }

    #[test]
    fn success_forgives_the_address_and_quiet_forgives_the_account() {
        let mut t = throttle();
        let a = AccountId(3);
        for _ in 0..4 {
            t.failure(Some(a), ip(5), 0);
        }
        t.success(a, ip(5), 0);
        assert_eq!(t.check(a, ip(5), 0), Ok(()), "trusted now");
        for _ in 0..4 {
            t.failure(Some(AccountId(4)), ip(7), 0);
        }
        t.failure(Some(AccountId(4)), ip(7), 10_000);
        assert_eq!(
            t.check(AccountId(4), ip(7), 10_000),
            Ok(()),
            "one failure after a long quiet spell is free again"
        );
    }

    #[test]
    fn tracking_is_bounded() {
        let mut t = throttle();
        for i in 0..100u32 {
            t.failure(
                Some(AccountId(i)),
                IpAddr::from([10, 0, (i >> 8) as u8, i as u8]),
                u64::from(i),
            );
        }
        let (addrs, accounts) = t.tracked();
        assert!(addrs <= 8 && accounts <= 8, "{addrs} {accounts}");
    }
}
