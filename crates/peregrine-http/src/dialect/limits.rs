//! Rate limits as Binance applies them: request weight per IP per minute, new
//! orders per account per 10 seconds and per day, in fixed windows aligned to the
//! clock. Every answer carries the usage (`X-MBX-USED-WEIGHT-1M`,
//! `X-MBX-ORDER-COUNT-10S`, `X-MBX-ORDER-COUNT-1D`); over a limit the request is
//! answered 429 with `Retry-After` (-1003 weight, -1015 orders) and does nothing.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

use super::error::ApiError;
use crate::config::LimitsSection;

/// Fixed-window counters for one kind of key.
#[derive(Debug)]
struct Windows<K> {
    len_ms: u64,
    map: Mutex<HashMap<K, (u64, u32)>>,
}

impl<K: std::hash::Hash + Eq + Copy> Windows<K> {
    fn new(len_ms: u64) -> Self {
        Windows {
            len_ms,
            map: Mutex::new(HashMap::new()),
        }
    }

    /// Adds `n` to `key`'s current window unless that passes `limit`; returns the
    /// count after (or the count and the ms until the window ends, refused).
    fn charge(&self, key: K, n: u32, limit: u32, now_ms: u64) -> Result<u32, (u32, u64)> {
        let window = now_ms / self.len_ms;
        let mut map = self
            .map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if map.len() > 100_000 {
            map.retain(|_, (w, _)| *w == window);
        }
        let entry = map.entry(key).or_insert((window, 0));
        if entry.0 != window {
            *entry = (window, 0);
        }
        if entry.1.saturating_add(n) > limit {
            return Err((entry.1, (window + 1) * self.len_ms - now_ms));
        }
        entry.1 += n;
        Ok(entry.1)
    }

    fn peek(&self, key: K, now_ms: u64) -> u32 {
        let window = now_ms / self.len_ms;
        let map = self
            .map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match map.get(&key) {
            Some((w, n)) if *w == window => *n,
            _ => 0,
        }
    }
}

/// Every limit of the gateway.
#[derive(Debug)]
pub struct RateLimits {
    config: LimitsSection,
    weight: Windows<IpAddr>,
    orders_10s: Windows<u32>,
    orders_day: Windows<u32>,
}

/// Order counts to report after an order request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderCounts {
    /// In the current 10 s window.
    pub ten_s: u32,
    /// In the current day.
    pub day: u32,
}

fn retry_secs(ms: u64) -> u64 {
    ms.div_ceil(1000).max(1)
}

impl RateLimits {
    /// Limits from the config.
    pub fn new(config: &LimitsSection) -> RateLimits {
        RateLimits {
            config: config.clone(),
            weight: Windows::new(60_000),
            orders_10s: Windows::new(10_000),
            orders_day: Windows::new(86_400_000),
        }
    }

    /// The configured limits.
    pub fn config(&self) -> &LimitsSection {
        &self.config
    }

    /// Charges `weight` to `ip`; the weight used this minute, or -1003.
    pub fn charge_weight(&self, ip: IpAddr, weight: u32, now_ms: u64) -> Result<u32, ApiError> {
        let limit = self.config.request_weight_per_minute;
        self.weight
            .charge(ip, weight, limit, now_ms)
            .map_err(|(_, wait)| ApiError::too_many_requests(limit, retry_secs(wait)))
    }

    /// The weight `ip` used this minute.
    pub fn used_weight(&self, ip: IpAddr, now_ms: u64) -> u32 {
        self.weight.peek(ip, now_ms)
    }

    /// Counts one new order of `account`; the counts, or -1015.
    pub fn charge_order(&self, account: u32, now_ms: u64) -> Result<OrderCounts, ApiError> {
        let c = &self.config;
        let ten_s = self
            .orders_10s
            .charge(account, 1, c.orders_per_10s, now_ms)
            .map_err(|(_, wait)| {
                ApiError::too_many_orders(c.orders_per_10s, "10SECOND", retry_secs(wait))
            })?;
        let day = match self.orders_day.charge(account, 1, c.orders_per_day, now_ms) {
            Ok(n) => n,
            Err((_, wait)) => {
                return Err(ApiError::too_many_orders(
                    c.orders_per_day,
                    "1DAY",
                    retry_secs(wait),
                ))
            }
        };
        Ok(OrderCounts { ten_s, day })
    }

    /// The order counts of `account` now.
    pub fn order_counts(&self, account: u32, now_ms: u64) -> OrderCounts {
        OrderCounts {
            ten_s: self.orders_10s.peek(account, now_ms),
            day: self.orders_day.peek(account, now_ms),
        }
    }
}

/// The weight of a request (Binance's table), from its path and parameters.
pub fn weight(method: &str, path: &str, query: &str) -> u32 {
    let has = |k: &str| {
        form_urlencoded::parse(query.as_bytes()).any(|(name, v)| name == k && !v.is_empty())
    };
    let limit = || {
        form_urlencoded::parse(query.as_bytes())
            .find(|(k, _)| k == "limit")
            .and_then(|(_, v)| v.parse::<u32>().ok())
    };
    match (method, path) {
        ("GET", "/api/v3/exchangeInfo") => 20,
        ("GET", "/api/v3/depth") => match limit().unwrap_or(100) {
            0..=100 => 5,
            101..=500 => 25,
            501..=1000 => 50,
            _ => 250,
        },
        ("GET", "/api/v3/trades" | "/api/v3/historicalTrades") => 25,
        (
            "GET",
            "/api/v3/aggTrades" | "/api/v3/klines" | "/api/v3/uiKlines" | "/api/v3/avgPrice",
        ) => 2,
        ("GET", "/api/v3/ticker/24hr") => {
            if has("symbol") {
                2
            } else {
                80
            }
        }
        ("GET", "/api/v3/ticker/price" | "/api/v3/ticker/bookTicker") => {
            if has("symbol") {
                2
            } else {
                4
            }
        }
        ("GET", "/api/v3/order") => 4,
        ("GET", "/api/v3/openOrders") => {
            if has("symbol") {
                6
            } else {
                80
            }
        }
        ("GET", "/api/v3/allOrders" | "/api/v3/account" | "/api/v3/myTrades") => 20,
        ("GET", "/api/v3/orderList") => 4,
        ("GET", "/api/v3/openOrderList") => 6,
        ("GET", "/api/v3/allOrderList") => 20,
        (_, "/api/v3/userDataStream") => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weight_window_refuses_and_resets() {
        let cfg = LimitsSection {
            request_weight_per_minute: 10,
            ..Default::default()
        };
        let l = RateLimits::new(&cfg);
        let ip: IpAddr = [127, 0, 0, 1].into();
        let other: IpAddr = [127, 0, 0, 2].into();
        let t = 60_000 * 1000 + 59_500;
        assert_eq!(l.charge_weight(ip, 6, t).unwrap(), 6);
        let e = l.charge_weight(ip, 5, t).unwrap_err();
        assert_eq!(
            (e.code, e.status.as_u16(), e.retry_after),
            (-1003, 429, Some(1))
        );
        assert_eq!(l.used_weight(ip, t), 6, "a refused request costs nothing");
        assert_eq!(l.charge_weight(other, 10, t).unwrap(), 10, "per IP");
        assert_eq!(l.charge_weight(ip, 10, t + 500).unwrap(), 10, "next minute");
    }

    #[test]
    fn order_counts() {
        let cfg = LimitsSection {
            orders_per_10s: 2,
            orders_per_day: 3,
            ..Default::default()
        };
        let l = RateLimits::new(&cfg);
        assert_eq!(
            l.charge_order(1, 0).unwrap(),
            OrderCounts { ten_s: 1, day: 1 }
        );
        assert_eq!(
            l.charge_order(1, 1).unwrap(),
            OrderCounts { ten_s: 2, day: 2 }
        );
        assert_eq!(l.charge_order(1, 2).unwrap_err().code, -1015);
        assert_eq!(l.charge_order(2, 2).unwrap().ten_s, 1, "per account");
        assert_eq!(
            l.charge_order(1, 10_000).unwrap(),
            OrderCounts { ten_s: 1, day: 3 }
        );
        let e = l.charge_order(1, 10_001).unwrap_err();
        assert!(e.msg.contains("1DAY"), "{}", e.msg);
    }

    #[test]
    fn weights_follow_the_table() {
        assert_eq!(weight("GET", "/api/v3/depth", "symbol=X"), 5);
        assert_eq!(weight("GET", "/api/v3/depth", "symbol=X&limit=5000"), 250);
        assert_eq!(weight("GET", "/api/v3/openOrders", ""), 80);
        assert_eq!(weight("GET", "/api/v3/openOrders", "symbol=X"), 6);
        assert_eq!(weight("GET", "/api/v3/exchangeInfo", ""), 20);
        assert_eq!(weight("POST", "/api/v3/order", ""), 1);
    }
}
