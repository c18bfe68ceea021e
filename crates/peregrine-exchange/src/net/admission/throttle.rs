//! [`LoginThrottle`]: exponential backoff after failed logins, per source address and
//! per account id, whether the account exists or not: an unknown id is throttled
//! exactly like a real one, so the throttle does not reveal which accounts exist (a
//! real account's id, tried from fresh addresses, used to be refused on the 5th try
//! and an unknown one never).
//!
//! Every table is bounded (`max_tracked`); when one is full the older half of it is
//! forgotten at once, so a flood of made-up ids costs O(1) per failure, amortised.

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

    /// Records a failed login for `account` (known or not: the same treatment)
    /// from `addr`.
    pub(crate) fn failure(&mut self, account: AccountId, addr: IpAddr, now_ms: u64) {
        let c = self.config;
        bump(&mut self.addrs, addr, now_ms, c);
        if !self.is_trusted(account, addr, now_ms) {
            bump(&mut self.accounts, account, now_ms, c);
        }
    }

    /// Records a successful login: the address's failures are forgiven and it is
    /// trusted for the account.
    pub(crate) fn success(&mut self, account: AccountId, addr: IpAddr, now_ms: u64) {
        self.addrs.remove(&addr);
        if self.trusted.len() >= self.config.max_tracked {
            forget_older_half(&mut self.trusted, |&t| t);
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
        forget_older_half(map, |b| b.last);
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

/// Forgets the older half of a full table (by `age`, the last time an entry was
/// touched): O(n) once per n/2 insertions, so O(1) amortised, however many made-up
/// ids or addresses a flood brings; the recent entries, which throttle, stay.
fn forget_older_half<K: std::hash::Hash + Eq + Copy, V>(
    map: &mut FxHashMap<K, V>,
    age: impl Fn(&V) -> u64,
) {
    let mut ages: Vec<u64> = map.values().map(&age).collect();
    let mid = ages.len() / 2;
    let (_, &mut median, _) = ages.select_nth_unstable(mid);
    map.retain(|_, v| age(v) > median);
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
            t.failure(a, x, now);
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
            t.failure(a, ip(66), 10);
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
            t.failure(a, ip(5), 0);
        }
        t.success(a, ip(5), 0);
        assert_eq!(t.check(a, ip(5), 0), Ok(()), "trusted now");
        for _ in 0..4 {
            t.failure(AccountId(4), ip(7), 0);
        }
        t.failure(AccountId(4), ip(7), 10_000);
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
                AccountId(i),
                IpAddr::from([10, 0, (i >> 8) as u8, i as u8]),
                u64::from(i),
            );
        }
        let (addrs, accounts) = t.tracked();
        assert!(addrs <= 8 && accounts <= 8, "{addrs} {accounts}");
    }

    /// The same tries from fresh addresses are throttled at the same attempt for a
    /// real account and for an id that does not exist (the throttle does not know
    /// which exist, and must not behave differently).
    #[test]
    fn an_unknown_account_is_throttled_exactly_like_a_real_one() {
        let attempts = |account: u32| {
            let mut t = throttle();
            let mut first_refused = None;
            for i in 0..10u8 {
                let from = ip(100 + i); // a fresh address each time
                if t.check(AccountId(account), from, 0).is_err() {
                    first_refused.get_or_insert(i);
                    continue;
                }
                t.failure(AccountId(account), from, 0);
            }
            first_refused
        };
        assert_eq!(
            attempts(1),
            Some(3),
            "2 free failures, a delay after the 3rd"
        );
        assert_eq!(attempts(1), attempts(999_999));
    }

    #[test]
    fn a_full_table_forgets_its_older_half_and_keeps_the_recent() {
        let mut t = throttle();
        for i in 0..8u32 {
            t.failure(AccountId(i), ip(1), u64::from(i));
        }
        t.failure(AccountId(100), ip(1), 100);
        let (_, accounts) = t.tracked();
        assert!(accounts <= 5, "{accounts}");
        assert!(t.accounts.contains_key(&AccountId(7)), "recent ones stay");
        assert!(!t.accounts.contains_key(&AccountId(0)), "old ones go");
    }
}
