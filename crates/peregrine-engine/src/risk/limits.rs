//! Risk limits: one set per strategy and one global set, all optional.

use serde::{Deserialize, Serialize};

/// Limits applied before an order leaves the engine. `None` switches a limit off.
/// Prices are price units, quantities lots, notional price units × lots.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Largest quantity of one order.
    pub max_order_qty: Option<i64>,
    /// Largest price × quantity of one order.
    pub max_order_notional: Option<i128>,
    /// Largest distance of a limit price from the instrument's reference price (last
    /// trade, or mid when the engine has one). No reference yet: not checked.
    pub price_collar: Option<i64>,
    /// Most orders open at once.
    pub max_open_orders: Option<u32>,
    /// Largest absolute position per instrument, counting open orders on the side of
    /// the new order: `|position + open same-side qty + qty| <= max_position`.
    pub max_position: Option<i64>,
    /// Sustained orders per second (token bucket refill).
    pub max_orders_per_sec: Option<u32>,
    /// Token bucket size (burst); defaults to one second's worth.
    pub burst: Option<u32>,
    /// Kill the strategy when its total PnL (realized + unrealized at the reference)
    /// falls below minus this.
    pub max_loss: Option<i128>,
}

/// Orders-per-second limit as a token bucket with integer arithmetic: the level is
/// kept in token-nanoseconds so refills need no fractions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenBucket {
    level: u128,
    last_ns: u64,
}

const NS: u128 = 1_000_000_000;

impl TokenBucket {
    /// A full bucket at time `now_ns`.
    pub fn full(limits: &Limits, now_ns: u64) -> TokenBucket {
        let cap = capacity(limits);
        TokenBucket {
            level: cap,
            last_ns: now_ns,
        }
    }

    /// Takes one token if there is one (refilling first); `true` if allowed.
    pub fn try_take(&mut self, limits: &Limits, now_ns: u64) -> bool {
        let Some(rate) = limits.max_orders_per_sec else {
            return true;
        };
        let elapsed = now_ns.saturating_sub(self.last_ns) as u128;
        self.last_ns = self.last_ns.max(now_ns);
        self.level = (self.level + elapsed * rate as u128).min(capacity(limits));
        if self.level >= NS {
            self.level -= NS;
            true
        } else {
            false
        }
    }

    /// Whether a token is available now, without taking it.
    pub fn peek(&self, limits: &Limits, now_ns: u64) -> bool {
        let mut copy = *self;
        copy.try_take(limits, now_ns)
    }
}

fn capacity(limits: &Limits) -> u128 {
    let burst = limits
        .burst
        .or(limits.max_orders_per_sec)
        .unwrap_or(0)
        .max(1);
    burst as u128 * NS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_allows_burst_then_rate() {
        let l = Limits {
            max_orders_per_sec: Some(10),
            burst: Some(3),
            ..Limits::default()
        };
        let mut b = TokenBucket::full(&l, 0);
        assert!(b.try_take(&l, 0) && b.try_take(&l, 0) && b.try_take(&l, 0));
        assert!(!b.try_take(&l, 0));
        assert!(!b.try_take(&l, 99_999_999)); // 0.99 token
        assert!(b.try_take(&l, 100_000_000)); // one token after 100 ms
        assert!(!b.peek(&l, 100_000_000));
        // A long pause refills only up to the burst.
        assert!(b.try_take(&l, 10_000_000_000));
        assert!(b.try_take(&l, 10_000_000_000));
        assert!(b.try_take(&l, 10_000_000_000));
        assert!(!b.try_take(&l, 10_000_000_000));
    }

    #[test]
    fn no_rate_limit_always_allows() {
        let l = Limits::default();
        let mut b = TokenBucket::full(&l, 0);
        assert!((0..1_000).all(|_| b.try_take(&l, 0)));
    }

    #[test]
    fn limits_parse_with_every_limit_off_by_default() {
        let l: Limits = serde_json::from_str(r#"{"max_order_qty": 5}"#).unwrap();
        assert_eq!(
            l,
            Limits {
                max_order_qty: Some(5),
                ..Limits::default()
            }
        );
        assert!(serde_json::from_str::<Limits>(r#"{"max_qty": 5}"#).is_err());
    }
}
