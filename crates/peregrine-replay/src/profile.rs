//! A first pass over recorded data: the price range and grid, and how many orders or
//! levels are live at once, so the replay's core is sized once and never grows (its
//! ladder spans the band, its arena holds the most orders the day needs).

use peregrine_types::{InstrumentId, InstrumentSpec, InstrumentStatus};
use rustc_hash::FxHashMap;

use crate::data::{DataError, Source, L2, L3};

/// What the first pass found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Profile {
    /// Messages.
    pub messages: u64,
    /// Lowest and highest price seen (units).
    pub min_price: i64,
    /// Highest price seen.
    pub max_price: i64,
    /// Greatest common divisor of the prices: the tick the data uses.
    pub tick: i64,
    /// Most orders (L3) or levels (L2) live at once.
    pub max_live: usize,
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

struct Scan {
    p: Profile,
}

impl Scan {
    fn new() -> Scan {
        Scan {
            p: Profile {
                messages: 0,
                min_price: i64::MAX,
                max_price: i64::MIN,
                tick: 0,
                max_live: 0,
            },
        }
    }

    fn price(&mut self, price: i64) {
        if price <= 0 {
            return;
        }
        self.p.min_price = self.p.min_price.min(price);
        self.p.max_price = self.p.max_price.max(price);
        self.p.tick = gcd(self.p.tick, price);
    }

    fn done(mut self) -> Profile {
        if self.p.min_price > self.p.max_price {
            self.p.min_price = 1;
            self.p.max_price = 1;
        }
        self.p.tick = self.p.tick.max(1);
        self.p
    }
}

/// Profiles an L3 stream.
pub fn l3<S: Source<Msg = L3>>(source: &mut S) -> Result<Profile, DataError> {
    let mut scan = Scan::new();
    let mut live: FxHashMap<u64, i64> = FxHashMap::default();
    while let Some(r) = source.next_msg()? {
        scan.p.messages += 1;
        match r.msg {
            L3::Add {
                order_ref,
                price,
                qty,
                ..
            } => {
                scan.price(price);
                live.insert(order_ref, qty);
            }
            L3::Cancel { order_ref, qty }
            | L3::Execute { order_ref, qty }
            | L3::ExecuteAt { order_ref, qty, .. } => {
                if let Some(l) = live.get_mut(&order_ref) {
                    *l -= qty;
                    if *l <= 0 {
                        live.remove(&order_ref);
                    }
                }
            }
            L3::Delete { order_ref } => {
                live.remove(&order_ref);
            }
            L3::Replace {
                old_ref,
                new_ref,
                price,
                qty,
            } => {
                scan.price(price);
                live.remove(&old_ref);
                live.insert(new_ref, qty);
            }
            L3::Trade { .. } | L3::Halt(_) => {}
        }
        scan.p.max_live = scan.p.max_live.max(live.len());
    }
    Ok(scan.done())
}

/// Profiles an L2 stream (`max_live`: levels live at once).
pub fn l2<S: Source<Msg = L2>>(source: &mut S) -> Result<Profile, DataError> {
    let mut scan = Scan::new();
    let mut levels: FxHashMap<(u8, i64), ()> = FxHashMap::default();
    while let Some(r) = source.next_msg()? {
        scan.p.messages += 1;
        match r.msg {
            L2::Clear => levels.clear(),
            L2::Level { side, price, qty } => {
                scan.price(price);
                if qty == 0 {
                    levels.remove(&(side as u8, price));
                } else {
                    levels.insert((side as u8, price), ());
                }
            }
            L2::Trade { price, .. } => scan.price(price),
        }
        scan.p.max_live = scan.p.max_live.max(levels.len());
    }
    Ok(scan.done())
}

/// The instrument a replay of data with `profile` runs: id 1, the data's tick (or
/// `tick` if given), a band around the recorded range with room on both sides
/// (`margin_per_mille` of the range's midpoint, at least 20 ticks), quantities of one
/// unit and up.
pub fn spec(
    profile: &Profile,
    symbol: &str,
    price_decimals: u32,
    qty_decimals: u32,
    margin_per_mille: i64,
) -> InstrumentSpec {
    let tick = profile.tick.max(1);
    let mid = (profile.min_price / 2 + profile.max_price / 2) / tick * tick;
    let half = (profile.max_price - profile.min_price) / 2;
    let margin = (mid / 1_000 * margin_per_mille).max(20 * tick);
    let band = ((half + margin) / tick + 1) * tick;
    InstrumentSpec {
        id: InstrumentId(1),
        symbol: symbol.to_owned(),
        price_decimals,
        qty_decimals,
        tick_size: tick,
        lot_size: 1,
        min_qty: 1,
        max_qty: i64::MAX / 4,
        reference_price: mid.max(tick),
        band,
        status: InstrumentStatus::Active,
        base: None,
        quote: None,
        volatility: None,
        schedule: None,
        fees: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Recorded;
    use peregrine_types::Side;

    struct Vec3(std::vec::IntoIter<L3>);
    impl Source for Vec3 {
        type Msg = L3;
        fn next_msg(&mut self) -> Result<Option<Recorded<L3>>, DataError> {
            Ok(self.0.next().map(|msg| Recorded {
                exch_ts: 0,
                local_ts: 0,
                msg,
            }))
        }
    }

    #[test]
    fn range_tick_and_live_orders() {
        let add = |order_ref, price| L3::Add {
            order_ref,
            side: Side::Buy,
            price,
            qty: 10,
        };
        let mut s = Vec3(
            vec![
                add(1, 1_500_100),
                add(2, 1_500_300),
                add(3, 1_499_900),
                L3::Execute {
                    order_ref: 1,
                    qty: 10,
                },
                L3::Delete { order_ref: 2 },
                add(4, 1_500_000),
            ]
            .into_iter(),
        );
        let p = l3(&mut s).unwrap();
        assert_eq!(
            (p.min_price, p.max_price, p.tick, p.max_live),
            (1_499_900, 1_500_300, 100, 3)
        );
        let spec = spec(&p, "X", 4, 0, 100);
        spec.validate().unwrap();
        assert!(spec.band_low() < 1_499_900 && spec.band_high() > 1_500_300);
        assert_eq!(spec.tick_size, 100);
        assert_eq!(spec.reference_price % 100, 0);
    }
}
