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
    /// Largest distance (price units) of a limit or protection price from the
    /// reference price: the last trade the engine saw in the instrument on the order's
    /// venue (one instrument trades at different prices on different venues). No
    /// trade there yet: not checked.
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

/// Why a limit change was refused (nothing was changed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    /// No such limit.
    #[error("unknown limit {0:?} (known: {keys})", keys = Limits::KEYS.join(", "))]
    UnknownKey(String),
    /// The value is not `off` nor a positive integer in the limit's range.
    #[error("bad value {value:?} for {key}: {why}")]
    BadValue {
        /// The limit.
        key: String,
        /// The text given.
        value: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// Not `key=value`.
    #[error("expected key=value, got {0:?}")]
    Syntax(String),
}

/// Parses a positive integer of type `T`, or `off`/`none` for "no limit".
fn parse_limit<T>(key: &str, value: &str) -> Result<Option<T>, LimitError>
where
    T: std::str::FromStr + PartialOrd + Default,
{
    if value == "off" || value == "none" {
        return Ok(None);
    }
    let bad = |why| LimitError::BadValue {
        key: key.to_owned(),
        value: value.to_owned(),
        why,
    };
    let v: T = value
        .parse()
        .map_err(|_| bad("not an integer in the limit's range (or `off`)"))?;
    if v <= T::default() {
        return Err(bad("must be > 0 (use `off` to switch the limit off)"));
    }
    Ok(Some(v))
}

/// Renders one optional limit as `key=value` or `key=off`.
fn show<T: std::fmt::Display>(key: &str, v: Option<T>) -> String {
    match v {
        Some(v) => format!("{key}={v}"),
        None => format!("{key}=off"),
    }
}

impl Limits {
    /// The names [`Limits::set`] accepts, in field order.
    pub const KEYS: [&'static str; 8] = [
        "max_order_qty",
        "max_order_notional",
        "price_collar",
        "max_open_orders",
        "max_position",
        "max_orders_per_sec",
        "burst",
        "max_loss",
    ];

    /// Sets one limit from text: `off` (or `none`) switches it off, anything else must
    /// be a positive integer that fits the field. On error nothing changes.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), LimitError> {
        match key {
            "max_order_qty" => self.max_order_qty = parse_limit(key, value)?,
            "max_order_notional" => self.max_order_notional = parse_limit(key, value)?,
            "price_collar" => self.price_collar = parse_limit(key, value)?,
            "max_open_orders" => self.max_open_orders = parse_limit(key, value)?,
            "max_position" => self.max_position = parse_limit(key, value)?,
            "max_orders_per_sec" => self.max_orders_per_sec = parse_limit(key, value)?,
            "burst" => self.burst = parse_limit(key, value)?,
            "max_loss" => self.max_loss = parse_limit(key, value)?,
            _ => return Err(LimitError::UnknownKey(key.to_owned())),
        }
        Ok(())
    }

    /// These limits with every `(key, value)` change applied, or the first error (and
    /// `self` untouched): a change is all or nothing.
    pub fn with_changes(&self, changes: &[(String, String)]) -> Result<Limits, LimitError> {
        let mut next = *self;
        for (k, v) in changes {
            next.set(k, v)?;
        }
        Ok(next)
    }

    /// Splits `key=value` words into pairs, checking each key and value (against a
    /// default set, so the result applies to any limits without error).
    pub fn parse_changes<'a>(
        words: impl IntoIterator<Item = &'a str>,
    ) -> Result<Vec<(String, String)>, LimitError> {
        let mut out = Vec::new();
        for w in words {
            let (k, v) = w
                .split_once('=')
                .ok_or_else(|| LimitError::Syntax(w.to_owned()))?;
            Limits::default().set(k.trim(), v.trim())?;
            out.push((k.trim().to_owned(), v.trim().to_owned()));
        }
        Ok(out)
    }

    /// `key=value` for every limit, in [`Limits::KEYS`] order, space separated.
    pub fn render(&self) -> String {
        [
            show("max_order_qty", self.max_order_qty),
            show("max_order_notional", self.max_order_notional),
            show("price_collar", self.price_collar),
            show("max_open_orders", self.max_open_orders),
            show("max_position", self.max_position),
            show("max_orders_per_sec", self.max_orders_per_sec),
            show("burst", self.burst),
            show("max_loss", self.max_loss),
        ]
        .join(" ")
    }
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
    fn set_parses_every_key_and_refuses_bad_input() {
        let mut l = Limits::default();
        for (i, k) in Limits::KEYS.iter().enumerate() {
            l.set(k, &(i + 1).to_string()).unwrap();
        }
        assert_eq!(
            l.render(),
            "max_order_qty=1 max_order_notional=2 price_collar=3 max_open_orders=4 \
             max_position=5 max_orders_per_sec=6 burst=7 max_loss=8"
        );
        l.set("price_collar", "off").unwrap();
        assert_eq!(l.price_collar, None);
        let before = l;
        assert!(matches!(
            l.set("max_qty", "5"),
            Err(LimitError::UnknownKey(_))
        ));
        for bad in ["0", "-3", "abc", "1.5", "", "99999999999"] {
            let e = l.set("max_open_orders", bad).unwrap_err();
            assert!(matches!(e, LimitError::BadValue { .. }), "{bad}: {e}");
        }
        assert_eq!(l, before, "a refused change changes nothing");
        // All or nothing.
        let changes = vec![
            ("max_order_qty".to_owned(), "7".to_owned()),
            ("nope".to_owned(), "1".to_owned()),
        ];
        assert!(l.with_changes(&changes).is_err());
        assert_eq!(l, before);
        let ok = Limits::parse_changes(["max_order_qty=7", "burst = off"]).unwrap();
        assert_eq!(l.with_changes(&ok).unwrap().max_order_qty, Some(7));
        assert!(matches!(
            Limits::parse_changes(["max_order_qty"]),
            Err(LimitError::Syntax(_))
        ));
        let e = Limits::parse_changes(["max_order_qty=-1"]).unwrap_err();
        assert!(e.to_string().contains("must be > 0"), "{e}");
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
