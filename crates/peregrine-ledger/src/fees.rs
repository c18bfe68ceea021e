//! Fees: each instrument's maker and taker rates with volume tiers, each account's
//! 30-day traded volume, and the fee of every fill (`docs/fees.md`).
//!
//! * **Rates** are millionths of the trade's notional (`price × qty`, in quote units:
//!   price unit × quantity unit); a negative maker rate is a rebate. An auction's
//!   uncross has no maker: both sides pay the taker rate.
//! * **Rounding**: a fee is `notional × rate / 1,000,000` truncated towards zero, in
//!   `i128`: a charge never exceeds the exact amount, a rebate never exceeds it
//!   either, and each fill's fees are exact integers the ledger moves as they are.
//! * **Tiers** are chosen by the account's volume on the instrument over the 30
//!   complete UTC days of the engine clock before the fill's day (so an account's
//!   tier changes only at midnight): the tier with the highest `min_volume` not above
//!   it. Each side of a fill adds its notional to its account's volume.
//!
//! The state (every account's daily volumes) is deterministic from the journal: it
//! is in snapshots and the venue's state hash.

use peregrine_book::event::Fill;
use peregrine_types::rules::{ResolvedTier, DAY_NS};
use peregrine_types::{AccountId, InstrumentId, InstrumentSpec, SpecError};
use rustc_hash::FxHashMap;

/// Days in the volume window.
pub const WINDOW_DAYS: usize = 30;

/// One account's daily volumes on one instrument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Volume {
    /// The day (`time / DAY_NS`) `today` counts.
    pub day: u64,
    /// Volume of the day in progress.
    pub today: i128,
    /// Volumes of the 30 days before `day`, oldest first.
    pub days: [i128; WINDOW_DAYS],
}

impl Volume {
    fn new(day: u64) -> Self {
        Volume {
            day,
            today: 0,
            days: [0; WINDOW_DAYS],
        }
    }

    /// The 30-day volume the tier is chosen by.
    pub fn window(&self) -> i128 {
        self.days.iter().sum()
    }

    /// Moves to `day`: the day in progress and any skipped days enter the window.
    fn roll(&mut self, day: u64) {
        if day <= self.day {
            return;
        }
        let gap = (day - self.day).min(WINDOW_DAYS as u64 + 1) as usize;
        for i in 0..gap {
            self.days.rotate_left(1);
            self.days[WINDOW_DAYS - 1] = if i == 0 { self.today } else { 0 };
        }
        self.today = 0;
        self.day = day;
    }
}

/// One instrument's resolved schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Schedule {
    tiers: Vec<ResolvedTier>,
    max_charge_ppm: i64,
}

impl Schedule {
    fn tier(&self, volume: i128) -> &ResolvedTier {
        let i = self
            .tiers
            .iter()
            .rposition(|t| t.min_volume <= volume)
            .unwrap_or(0);
        &self.tiers[i]
    }
}

/// Every account's volume, as exported for snapshots and hashes (sorted by
/// (account, instrument)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FeeState {
    /// (account, instrument, volume).
    pub volumes: Vec<(AccountId, InstrumentId, Volume)>,
}

/// The fee stage (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct Fees {
    schedules: Vec<Option<Schedule>>,
    volumes: FxHashMap<(AccountId, InstrumentId), Volume>,
    now: u64,
}

/// A fee: `notional × ppm / 1,000,000`, truncated towards zero, saturated to `i64`.
pub fn fee_of(notional: i128, ppm: i64) -> i64 {
    let f = notional * i128::from(ppm) / 1_000_000;
    i64::try_from(f).unwrap_or(if f < 0 { i64::MIN } else { i64::MAX })
}

impl Fees {
    /// The fee stage of `specs`; `None` when no instrument has fees. Errors name the
    /// first schedule that does not resolve (a spec's `validate` reports them too).
    pub fn from_specs(specs: &[InstrumentSpec]) -> Result<Option<Fees>, SpecError> {
        let mut fees = Fees::default();
        for spec in specs {
            let Some(f) = &spec.fees else { continue };
            let tiers = f.resolve(spec.price_decimals + spec.qty_decimals)?;
            let i = spec.id.0 as usize;
            if fees.schedules.len() <= i {
                fees.schedules.resize(i + 1, None);
            }
            fees.schedules[i] = Some(Schedule {
                tiers,
                max_charge_ppm: f.max_charge_ppm(),
            });
        }
        Ok((!fees.schedules.is_empty()).then_some(fees))
    }

    /// Room for `pairs` (account, instrument) volumes without growing the map.
    pub fn reserve(&mut self, pairs: usize) {
        self.volumes.reserve(pairs);
    }

    /// The time of the command whose fills come next (the day decides the tiers).
    #[inline]
    pub fn set_time(&mut self, now: u64) {
        self.now = self.now.max(now);
    }

    fn schedule(&self, instrument: InstrumentId) -> Option<&Schedule> {
        self.schedules
            .get(instrument.0 as usize)
            .and_then(Option::as_ref)
    }

    /// The largest rate an instrument's schedule charges (what a buy reserves for).
    pub fn max_charge_ppm(&self, instrument: InstrumentId) -> i64 {
        self.schedule(instrument).map_or(0, |s| s.max_charge_ppm)
    }

    /// The (maker, taker) rates `account` pays on `instrument` now.
    pub fn rates(&self, account: AccountId, instrument: InstrumentId) -> (i64, i64) {
        let Some(s) = self.schedule(instrument) else {
            return (0, 0);
        };
        let t = s.tier(self.window(account, instrument));
        (t.maker_ppm, t.taker_ppm)
    }

    /// `account`'s 30-day volume on `instrument` as of the current day.
    pub fn window(&self, account: AccountId, instrument: InstrumentId) -> i128 {
        let day = self.now / DAY_NS;
        self.volumes.get(&(account, instrument)).map_or(0, |v| {
            let mut v = *v;
            v.roll(day);
            v.window()
        })
    }

    /// Prices a fill (sets `maker_fee` and `taker_fee`) and adds its notional to both
    /// accounts' volumes. A fill on an instrument without fees is left at 0.
    pub fn price(&mut self, fill: &mut Fill) {
        if self.schedule(fill.instrument).is_none() {
            return;
        }
        let notional = i128::from(fill.price.units()) * i128::from(fill.qty.lots());
        let day = self.now / DAY_NS;
        let maker_window = self.rolled(fill.maker_account, fill.instrument, day);
        let taker_window = self.rolled(fill.taker_account, fill.instrument, day);
        let Some(s) = self.schedule(fill.instrument) else {
            return;
        };
        let (mt, tt) = (s.tier(maker_window), s.tier(taker_window));
        let maker_ppm = if fill.auction {
            mt.taker_ppm
        } else {
            mt.maker_ppm
        };
        fill.maker_fee = fee_of(notional, maker_ppm);
        fill.taker_fee = fee_of(notional, tt.taker_ppm);
        for account in [fill.maker_account, fill.taker_account] {
            if let Some(v) = self.volumes.get_mut(&(account, fill.instrument)) {
                v.today += notional;
            }
        }
    }

    /// The account's 30-day volume at `day`, creating and rolling its entry.
    fn rolled(&mut self, account: AccountId, instrument: InstrumentId, day: u64) -> i128 {
        let v = self
            .volumes
            .entry((account, instrument))
            .or_insert_with(|| Volume::new(day));
        v.roll(day);
        v.window()
    }

    /// The volumes, sorted (allocates: snapshots and hashes).
    pub fn export(&self) -> FeeState {
        let mut volumes: Vec<_> = self.volumes.iter().map(|(&(a, i), &v)| (a, i, v)).collect();
        volumes.sort_unstable_by_key(|&(a, i, _)| (a, i));
        FeeState { volumes }
    }

    /// Replaces the volumes with `state` (restoring a snapshot).
    pub fn restore(&mut self, state: &FeeState) {
        self.volumes = state.volumes.iter().map(|&(a, i, v)| ((a, i), v)).collect();
    }

    /// Feeds the canonical state into `h` (little-endian).
    pub fn hash_into(state: &FeeState, h: &mut blake3::Hasher) {
        h.update(&(state.volumes.len() as u64).to_le_bytes());
        for (a, i, v) in &state.volumes {
            h.update(&a.0.to_le_bytes());
            h.update(&i.0.to_le_bytes());
            h.update(&v.day.to_le_bytes());
            h.update(&v.today.to_le_bytes());
            for d in v.days {
                h.update(&d.to_le_bytes());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_types::{ClientOrderId, FeeSchedule, FeeTier, OrderId, Price, Qty, Side};

    fn spec() -> InstrumentSpec {
        InstrumentSpec {
            fees: Some(FeeSchedule {
                maker_ppm: -100,
                taker_ppm: 1_000,
                tiers: vec![FeeTier {
                    min_volume: "1000".into(),
                    maker_ppm: -200,
                    taker_ppm: 500,
                }],
            }),
            ..InstrumentSpec::example(1)
        }
    }

    fn fill(maker: u32, taker: u32, price: i64, qty: i64, auction: bool) -> Fill {
        Fill {
            instrument: InstrumentId(1),
            trade_id: 1,
            maker_id: OrderId(1),
            taker_id: OrderId(2),
            maker_client_id: ClientOrderId(1),
            taker_client_id: ClientOrderId(2),
            maker_account: AccountId(maker),
            taker_account: AccountId(taker),
            taker_side: Side::Buy,
            price: Price::from_raw(price),
            qty: Qty::from_raw(qty),
            maker_leaves: Qty::ZERO,
            taker_leaves: Qty::ZERO,
            auction,
            maker_fee: 0,
            taker_fee: 0,
        }
    }

    #[test]
    fn fees_truncate_towards_zero() {
        assert_eq!(fee_of(12_345, 1_000), 12);
        assert_eq!(fee_of(12_345, -100), -1);
        assert_eq!(fee_of(9_999, -100), 0);
        assert_eq!(fee_of(1_000_000, 1), 1);
    }

    #[test]
    fn a_fill_is_priced_by_tier_and_adds_volume() {
        let mut fees = Fees::from_specs(&[spec()]).unwrap().unwrap();
        fees.set_time(5);
        let mut f = fill(1, 2, 10_000, 3, false);
        fees.price(&mut f);
        assert_eq!((f.maker_fee, f.taker_fee), (-3, 30));
        // 30,000 units (300.00 at 2 decimals) today; the tier needs 1000.00 over the
        // 30 days before today.
        for _ in 0..3 {
            fees.price(&mut fill(1, 2, 10_000, 4, false));
        }
        assert_eq!(fees.rates(AccountId(1), InstrumentId(1)), (-100, 1_000));
        fees.set_time(DAY_NS + 1);
        assert_eq!(fees.window(AccountId(1), InstrumentId(1)), 150_000);
        assert_eq!(fees.rates(AccountId(1), InstrumentId(1)), (-200, 500));
        let mut a = fill(1, 3, 10_000, 10, true);
        fees.price(&mut a);
        assert_eq!(
            (a.maker_fee, a.taker_fee),
            (50, 100),
            "auction: taker rates"
        );
        // The volume leaves the window after 30 days.
        fees.set_time(31 * DAY_NS + 1);
        assert_eq!(fees.window(AccountId(1), InstrumentId(1)), 100_000);
        fees.set_time(40 * DAY_NS);
        assert_eq!(fees.window(AccountId(1), InstrumentId(1)), 0);
    }

    #[test]
    fn an_instrument_without_fees_charges_nothing() {
        assert!(Fees::from_specs(&[InstrumentSpec::example(1)])
            .unwrap()
            .is_none());
        let mut fees = Fees::from_specs(&[spec(), InstrumentSpec::example(2)])
            .unwrap()
            .unwrap();
        let mut f = fill(1, 2, 10_000, 3, false);
        f.instrument = InstrumentId(2);
        fees.price(&mut f);
        assert_eq!((f.maker_fee, f.taker_fee), (0, 0));
        assert!(fees.export().volumes.is_empty());
    }
}
