//! Field codecs: how each Rust type sits on the wire, and the few wire-only types.
//!
//! Every field type implements [`WireField`]: a fixed width, a name for the layout
//! tables, an encoder, a validating decoder, and [`WireField::sample`], a total map
//! from any `u64` to a valid value that property tests and fuzzers use to build
//! messages without per-message generators.

use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, OrderId, OrderType, Price, Qty, Side, StpMode,
    TimeInForce, Timestamp,
};

use crate::cursor::{Reader, Writer};
use crate::DecodeError;

mod bytes;
mod kinds;

pub use bytes::{LeaderAddress, Pad, Symbol, LEADER_ADDRESS_LEN, SYMBOL_LEN};
pub use kinds::{OrderState, SessionKind};

/// A type with a fixed-width little-endian wire form.
pub trait WireField: Copy {
    /// Bytes on the wire.
    const WIDTH: usize;
    /// The wire type as printed in the layout tables (`u64`, `i64`, `u8 Side`, ...).
    const WIRE_TYPE: &'static str;
    /// Appends the value.
    fn put(self, w: &mut Writer<'_>);
    /// Reads and validates the value; `field` names it in [`DecodeError::InvalidField`].
    fn get(r: &mut Reader<'_>, field: &'static str) -> Result<Self, DecodeError>;
    /// A valid value derived from any `u64` (for generators; not a wire decoding).
    fn sample(seed: u64) -> Self;
}

pub(crate) fn invalid(field: &'static str, value: u64) -> DecodeError {
    DecodeError::InvalidField { field, value }
}

macro_rules! int_field {
    ($t:ty, $name:literal, $get:ident) => {
        impl WireField for $t {
            const WIDTH: usize = core::mem::size_of::<$t>();
            const WIRE_TYPE: &'static str = $name;
            #[inline]
            fn put(self, w: &mut Writer<'_>) {
                w.$get(self);
            }
            #[inline]
            fn get(r: &mut Reader<'_>, _field: &'static str) -> Result<Self, DecodeError> {
                r.$get()
            }
            #[inline]
            fn sample(seed: u64) -> Self {
                seed as $t
            }
        }
    };
}

int_field!(u8, "u8", u8);
int_field!(u16, "u16", u16);
int_field!(u32, "u32", u32);
int_field!(u64, "u64", u64);
int_field!(i64, "i64", i64);

/// Newtypes over an integer: same wire form as the integer, every value valid.
macro_rules! newtype_field {
    ($t:ty, $inner:ty, $name:literal, |$v:ident| $wrap:expr, |$s:ident| $unwrap:expr) => {
        impl WireField for $t {
            const WIDTH: usize = <$inner as WireField>::WIDTH;
            const WIRE_TYPE: &'static str = $name;
            #[inline]
            fn put(self, w: &mut Writer<'_>) {
                let $s = self;
                <$inner as WireField>::put($unwrap, w);
            }
            #[inline]
            fn get(r: &mut Reader<'_>, field: &'static str) -> Result<Self, DecodeError> {
                let $v = <$inner as WireField>::get(r, field)?;
                Ok($wrap)
            }
            #[inline]
            fn sample(seed: u64) -> Self {
                let $v = <$inner as WireField>::sample(seed);
                $wrap
            }
        }
    };
}

newtype_field!(Price, i64, "i64 Price", |v| Price::from_raw(v), |s| s
    .units());
newtype_field!(Qty, i64, "i64 Qty", |v| Qty::from_raw(v), |s| s.lots());
newtype_field!(OrderId, u64, "u64 OrderId", |v| OrderId(v), |s| s.0);
newtype_field!(
    ClientOrderId,
    u64,
    "u64 ClientOrderId",
    |v| ClientOrderId(v),
    |s| s.0
);
newtype_field!(Timestamp, u64, "u64 Timestamp", |v| Timestamp(v), |s| s.0);
newtype_field!(AccountId, u32, "u32 AccountId", |v| AccountId(v), |s| s.0);
newtype_field!(
    InstrumentId,
    u32,
    "u32 InstrumentId",
    |v| InstrumentId(v),
    |s| s.0
);
newtype_field!(ReasonCode, u16, "u16 ReasonCode", |v| ReasonCode(v), |s| s
    .0);

/// One-byte enums decoded through their `from_u8`; any other byte is
/// [`DecodeError::InvalidField`]. `$count` values `0..$count` are all defined.
macro_rules! enum_field {
    ($t:ty, $name:literal, $count:literal) => {
        impl WireField for $t {
            const WIDTH: usize = 1;
            const WIRE_TYPE: &'static str = $name;
            #[inline]
            fn put(self, w: &mut Writer<'_>) {
                w.u8(self as u8);
            }
            #[inline]
            fn get(r: &mut Reader<'_>, field: &'static str) -> Result<Self, DecodeError> {
                let v = r.u8()?;
                <$t>::from_u8(v).ok_or(invalid(field, u64::from(v)))
            }
            #[inline]
            fn sample(seed: u64) -> Self {
                match <$t>::from_u8((seed % $count) as u8) {
                    Some(v) => v,
                    None => unreachable!("values 0..count are all defined"),
                }
            }
        }
    };
}

enum_field!(Side, "u8 Side", 2);
enum_field!(OrderType, "u8 OrderType", 3);
enum_field!(TimeInForce, "u8 TimeInForce", 4);
enum_field!(StpMode, "u8 StpMode", 5);
enum_field!(LiquidityRole, "u8 LiquidityRole", 2);
enum_field!(RequestKind, "u8 RequestKind", 3);

pub(crate) use enum_field;

impl WireField for bool {
    const WIDTH: usize = 1;
    const WIRE_TYPE: &'static str = "u8 bool";
    #[inline]
    fn put(self, w: &mut Writer<'_>) {
        w.u8(u8::from(self));
    }
    #[inline]
    fn get(r: &mut Reader<'_>, field: &'static str) -> Result<Self, DecodeError> {
        match r.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(invalid(field, u64::from(v))),
        }
    }
    #[inline]
    fn sample(seed: u64) -> Self {
        seed & 1 == 1
    }
}

/// Side filter byte: `0` Buy, `1` Sell, `2` both sides (`None`).
impl WireField for Option<Side> {
    const WIDTH: usize = 1;
    const WIRE_TYPE: &'static str = "u8 SideFilter";
    #[inline]
    fn put(self, w: &mut Writer<'_>) {
        w.u8(self.map_or(SIDE_BOTH, |s| s as u8));
    }
    #[inline]
    fn get(r: &mut Reader<'_>, field: &'static str) -> Result<Self, DecodeError> {
        match r.u8()? {
            SIDE_BOTH => Ok(None),
            v => Side::from_u8(v)
                .map(Some)
                .ok_or(invalid(field, u64::from(v))),
        }
    }
    #[inline]
    fn sample(seed: u64) -> Self {
        Side::from_u8((seed % 3) as u8)
    }
}

/// The side-filter byte meaning "both sides".
pub const SIDE_BOTH: u8 = 2;

/// The instrument id that means "every instrument" where a scope is expected. No
/// real instrument may use it.
pub const ALL_INSTRUMENTS: u32 = u32::MAX;

/// The account id that means "every account" where an account scope is expected
/// (a drop copy of all accounts). No real account may use it.
pub const ALL_ACCOUNTS: u32 = u32::MAX;

/// Account scope: `0xFFFF_FFFF` ([`ALL_ACCOUNTS`]) means every account.
impl WireField for Option<AccountId> {
    const WIDTH: usize = 4;
    const WIRE_TYPE: &'static str = "u32 AccountScope";
    #[inline]
    fn put(self, w: &mut Writer<'_>) {
        w.u32(self.map_or(ALL_ACCOUNTS, |a| a.0));
    }
    #[inline]
    fn get(r: &mut Reader<'_>, _field: &'static str) -> Result<Self, DecodeError> {
        let v = r.u32()?;
        Ok((v != ALL_ACCOUNTS).then_some(AccountId(v)))
    }
    #[inline]
    fn sample(seed: u64) -> Self {
        let v = seed as u32;
        (v != ALL_ACCOUNTS).then_some(AccountId(v))
    }
}

/// Instrument scope: `0xFFFF_FFFF` ([`ALL_INSTRUMENTS`]) means every instrument.
impl WireField for Option<InstrumentId> {
    const WIDTH: usize = 4;
    const WIRE_TYPE: &'static str = "u32 InstrumentScope";
    #[inline]
    fn put(self, w: &mut Writer<'_>) {
        w.u32(self.map_or(ALL_INSTRUMENTS, InstrumentId::get));
    }
    #[inline]
    fn get(r: &mut Reader<'_>, _field: &'static str) -> Result<Self, DecodeError> {
        let v = r.u32()?;
        Ok((v != ALL_INSTRUMENTS).then_some(InstrumentId(v)))
    }
    #[inline]
    fn sample(seed: u64) -> Self {
        let v = seed as u32;
        (v != ALL_INSTRUMENTS).then_some(InstrumentId(v))
    }
}

/// A reason code: a plain `u16` on the wire whose meanings the exchange publishes
/// (its reject and cancel reasons). The protocol only reserves `0` for "no reason /
/// success"; this crate attaches no other meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ReasonCode(pub u16);

impl ReasonCode {
    /// `0`: no reason given / success.
    pub const NONE: ReasonCode = ReasonCode(0);
}

/// Whether the receiving order added (maker) or removed (taker) liquidity in a fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum LiquidityRole {
    /// The order was resting on the book.
    Maker = 0,
    /// The order arrived and traded on entry.
    Taker = 1,
}

impl LiquidityRole {
    /// Decode from the wire byte.
    pub const fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::Maker),
            1 => Some(Self::Taker),
            _ => None,
        }
    }
}

/// Which request a `CancelRejected` refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum RequestKind {
    /// A `Cancel`.
    Cancel = 0,
    /// A `Replace`.
    Replace = 1,
    /// A `MassCancel`.
    MassCancel = 2,
}

impl RequestKind {
    /// Decode from the wire byte.
    pub const fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(Self::Cancel),
            1 => Some(Self::Replace),
            2 => Some(Self::MassCancel),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T: WireField + PartialEq + core::fmt::Debug>(v: T) {
        let mut buf = [0u8; 32];
        let mut w = Writer::new(&mut buf);
        v.put(&mut w);
        assert_eq!(w.position(), T::WIDTH);
        let mut r = Reader::new(&buf[..T::WIDTH]);
        assert_eq!(T::get(&mut r, "f"), Ok(v));
    }

    #[test]
    fn samples_round_trip() {
        for seed in [0, 1, 2, 3, 4, 5, 255, u64::MAX, 0x0123_4567_89ab_cdef] {
            round_trip(Side::sample(seed));
            round_trip(OrderType::sample(seed));
            round_trip(TimeInForce::sample(seed));
            round_trip(StpMode::sample(seed));
            round_trip(LiquidityRole::sample(seed));
            round_trip(RequestKind::sample(seed));
            round_trip(<Option<Side>>::sample(seed));
            round_trip(<Option<InstrumentId>>::sample(seed));
            round_trip(bool::sample(seed));
            round_trip(Price::sample(seed));
            round_trip(ReasonCode::sample(seed));
        }
    }

    #[test]
    fn bad_enum_bytes_are_invalid_fields() {
        let err = |b: u8| DecodeError::InvalidField {
            field: "x",
            value: u64::from(b),
        };
        assert_eq!(Side::get(&mut Reader::new(&[2]), "x"), Err(err(2)));
        assert_eq!(bool::get(&mut Reader::new(&[9]), "x"), Err(err(9)));
        assert_eq!(
            <Option<Side>>::get(&mut Reader::new(&[3]), "x"),
            Err(err(3))
        );
        assert_eq!(RequestKind::get(&mut Reader::new(&[3]), "x"), Err(err(3)));
        assert_eq!(<Option<Side>>::get(&mut Reader::new(&[2]), "x"), Ok(None));
    }

    #[test]
    fn all_instruments_sentinel() {
        let mut r = Reader::new(&[0xff; 4]);
        assert_eq!(<Option<InstrumentId>>::get(&mut r, "i"), Ok(None));
    }
}
