//! What the engine journals, and its byte encoding.
//!
//! Every record is one state change the engine must not forget. Payloads are
//! fixed-layout little-endian; [`Rec::decode`] reads through bounds checks and
//! returns a typed [`RecError`] for anything it does not understand (a corrupt or
//! foreign journal stops recovery with a clear error, never a panic;
//! `fuzz/fuzz_targets/engine_journal.rs` holds it to that).
//!
//! Strategies and venues are named by their index in the [`Rec::Roster`] written at
//! every engine start, so a restarted engine maps them by name even if the config
//! changed order. Orders are named by the engine's order id after [`Rec::Sent`].

use peregrine_types::{InstrumentId, OrderType, Price, Qty, Side, StpMode, TimeInForce};

use peregrine_risk::Limits;

/// Record kinds (the journal record's `kind` byte).
pub mod kind {
    /// [`super::Rec::Roster`].
    pub const ROSTER: u8 = 1;
    /// [`super::Rec::Sent`].
    pub const SENT: u8 = 2;
    /// [`super::Rec::Ack`].
    pub const ACK: u8 = 3;
    /// [`super::Rec::Fill`].
    pub const FILL: u8 = 4;
    /// [`super::Rec::Cancelled`].
    pub const CANCELLED: u8 = 5;
    /// [`super::Rec::Rejected`].
    pub const REJECTED: u8 = 6;
    /// [`super::Rec::Replaced`].
    pub const REPLACED: u8 = 7;
    /// [`super::Rec::Limits`].
    pub const LIMITS: u8 = 8;
    /// [`super::Rec::Kill`].
    pub const KILL: u8 = 9;
    /// [`super::Rec::Cursor`].
    pub const CURSOR: u8 = 10;
}

/// A scope of limits or of the kill switch: every strategy, or one (roster index).
pub const GLOBAL: u16 = u16::MAX;

/// Set in the client id of an order restored from the journal: it belongs to an
/// incarnation of its strategy that no longer runs (no event about it reaches a
/// strategy, and a restarted strategy numbering from 1 cannot collide with it).
pub const ORPHAN: u64 = 1 << 63;

/// Whether client id `client_id` is an orphan's ([`ORPHAN`]).
pub fn is_orphan(client_id: u64) -> bool {
    client_id & ORPHAN != 0
}

/// One journaled state change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rec {
    /// The engine started with these strategies and venues (by name, in index order).
    Roster {
        /// Strategy names.
        strategies: Vec<String>,
        /// Venue names.
        venues: Vec<String>,
    },
    /// An order left for its venue (written before it is handed to the gateway).
    Sent(SentOrder),
    /// The venue accepted it, as its order `venue_id`.
    Ack {
        /// Engine order id.
        engine_id: u64,
        /// The venue's id.
        venue_id: u64,
    },
    /// A fill.
    Fill {
        /// Engine order id.
        engine_id: u64,
        /// Price.
        price: i64,
        /// Quantity.
        qty: i64,
        /// Open after it.
        leaves: i64,
    },
    /// Quantity left without trading (`leaves` 0: the order is done).
    Cancelled {
        /// Engine order id.
        engine_id: u64,
        /// Quantity cancelled.
        qty: i64,
        /// Open after it.
        leaves: i64,
    },
    /// The venue (or the adapter) refused the order; it is done.
    Rejected {
        /// Engine order id.
        engine_id: u64,
    },
    /// A replace took effect.
    Replaced {
        /// Engine order id.
        engine_id: u64,
        /// New price.
        price: i64,
        /// New open quantity.
        qty: i64,
    },
    /// Limits now in force for a scope ([`GLOBAL`] or a strategy).
    Limits {
        /// Scope.
        scope: u16,
        /// The limits.
        limits: Limits,
    },
    /// A kill switch went on or off.
    Kill {
        /// Scope.
        scope: u16,
        /// On?
        on: bool,
    },
    /// A venue's report stream is processed up to here: the next report sequence
    /// number to ask for (written after the records of the reports it covers).
    Cursor {
        /// Venue (roster index).
        venue: u16,
        /// Next report sequence number.
        seq: u64,
    },
}

/// [`Rec::Sent`]'s fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SentOrder {
    /// Engine order id.
    pub engine_id: u64,
    /// Strategy (roster index).
    pub strategy: u16,
    /// Venue (roster index).
    pub venue: u16,
    /// The strategy's id for it.
    pub client_id: u64,
    /// Instrument.
    pub instrument: InstrumentId,
    /// Side.
    pub side: Side,
    /// Type.
    pub order_type: OrderType,
    /// Time in force.
    pub tif: TimeInForce,
    /// STP mode.
    pub stp: StpMode,
    /// Price.
    pub price: Price,
    /// Quantity.
    pub qty: Qty,
    /// GTD expiry.
    pub expire_at: u64,
}

/// Why a record could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecError {
    /// Unknown kind byte.
    #[error("unknown engine journal record kind {0}")]
    Kind(u8),
    /// The payload is shorter or longer than its kind needs.
    #[error("record kind {0}: payload of {1} bytes does not fit the layout")]
    Length(u8, usize),
    /// A field holds a value its type does not have.
    #[error("record kind {0}: bad field value")]
    Field(u8),
}

/// A little-endian writer into a fixed buffer.
struct W<'a> {
    buf: &'a mut Vec<u8>,
}

impl W<'_> {
    fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    fn opt(&mut self, v: Option<i128>) {
        self.u8(v.is_some() as u8);
        self.buf.extend_from_slice(&v.unwrap_or(0).to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        let b = &s.as_bytes()[..s.len().min(255)];
        self.u8(b.len() as u8);
        self.buf.extend_from_slice(b);
    }
}

/// A bounds-checked little-endian reader.
struct R<'a> {
    b: &'a [u8],
    kind: u8,
}

impl R<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], RecError> {
        if self.b.len() < n {
            return Err(RecError::Length(self.kind, self.b.len()));
        }
        let (h, t) = self.b.split_at(n);
        self.b = t;
        Ok(h)
    }
    fn u8(&mut self) -> Result<u8, RecError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, RecError> {
        Ok(u16::from_le_bytes(
            self.take(2)?.try_into().unwrap_or_default(),
        ))
    }
    fn u64(&mut self) -> Result<u64, RecError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().unwrap_or_default(),
        ))
    }
    fn i64(&mut self) -> Result<i64, RecError> {
        Ok(self.u64()? as i64)
    }
    fn opt(&mut self) -> Result<Option<i128>, RecError> {
        let some = self.u8()?;
        let v = i128::from_le_bytes(self.take(16)?.try_into().unwrap_or_default());
        match some {
            0 if v == 0 => Ok(None),
            1 => Ok(Some(v)),
            _ => Err(RecError::Field(self.kind)),
        }
    }
    fn str(&mut self) -> Result<String, RecError> {
        let n = self.u8()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| RecError::Field(self.kind))
    }
    fn end(&self) -> Result<(), RecError> {
        if self.b.is_empty() {
            Ok(())
        } else {
            Err(RecError::Length(self.kind, self.b.len()))
        }
    }
}

fn limits_out(w: &mut W<'_>, l: &Limits) {
    w.opt(l.max_order_qty.map(i128::from));
    w.opt(l.max_order_notional);
    w.opt(l.price_collar.map(i128::from));
    w.opt(l.max_open_orders.map(i128::from));
    w.opt(l.max_position.map(i128::from));
    w.opt(l.max_orders_per_sec.map(i128::from));
    w.opt(l.burst.map(i128::from));
    w.opt(l.max_loss);
}

fn limits_in(r: &mut R<'_>) -> Result<Limits, RecError> {
    let k = r.kind;
    let i64f = |v: Option<i128>| {
        v.map(|x| i64::try_from(x).map_err(|_| RecError::Field(k)))
            .transpose()
    };
    let u32f = |v: Option<i128>| {
        v.map(|x| u32::try_from(x).map_err(|_| RecError::Field(k)))
            .transpose()
    };
    Ok(Limits {
        max_order_qty: i64f(r.opt()?)?,
        max_order_notional: r.opt()?,
        price_collar: i64f(r.opt()?)?,
        max_open_orders: u32f(r.opt()?)?,
        max_position: i64f(r.opt()?)?,
        max_orders_per_sec: u32f(r.opt()?)?,
        burst: u32f(r.opt()?)?,
        max_loss: r.opt()?,
    })
}

impl Rec {
    /// Encodes into `buf` (cleared first); returns the kind byte.
    pub fn encode(&self, buf: &mut Vec<u8>) -> u8 {
        buf.clear();
        let mut w = W { buf };
        match self {
            Rec::Roster { strategies, venues } => {
                w.u16(strategies.len() as u16);
                strategies.iter().for_each(|s| w.str(s));
                w.u16(venues.len() as u16);
                venues.iter().for_each(|s| w.str(s));
                kind::ROSTER
            }
            Rec::Sent(o) => {
                w.u64(o.engine_id);
                w.u16(o.strategy);
                w.u16(o.venue);
                w.u64(o.client_id);
                w.u64(u64::from(o.instrument.0));
                w.u8(o.side as u8);
                w.u8(o.order_type as u8);
                w.u8(o.tif as u8);
                w.u8(o.stp as u8);
                w.i64(o.price.units());
                w.i64(o.qty.lots());
                w.u64(o.expire_at);
                kind::SENT
            }
            Rec::Ack {
                engine_id,
                venue_id,
            } => {
                w.u64(*engine_id);
                w.u64(*venue_id);
                kind::ACK
            }
            Rec::Fill {
                engine_id,
                price,
                qty,
                leaves,
            } => {
                w.u64(*engine_id);
                w.i64(*price);
                w.i64(*qty);
                w.i64(*leaves);
                kind::FILL
            }
            Rec::Cancelled {
                engine_id,
                qty,
                leaves,
            } => {
                w.u64(*engine_id);
                w.i64(*qty);
                w.i64(*leaves);
                kind::CANCELLED
            }
            Rec::Rejected { engine_id } => {
                w.u64(*engine_id);
                kind::REJECTED
            }
            Rec::Replaced {
                engine_id,
                price,
                qty,
            } => {
                w.u64(*engine_id);
                w.i64(*price);
                w.i64(*qty);
                kind::REPLACED
            }
            Rec::Limits { scope, limits } => {
                w.u16(*scope);
                limits_out(&mut w, limits);
                kind::LIMITS
            }
            Rec::Kill { scope, on } => {
                w.u16(*scope);
                w.u8(*on as u8);
                kind::KILL
            }
            Rec::Cursor { venue, seq } => {
                w.u16(*venue);
                w.u64(*seq);
                kind::CURSOR
            }
        }
    }

    /// Decodes a record of `kind` from `payload`.
    pub fn decode(kind: u8, payload: &[u8]) -> Result<Rec, RecError> {
        let mut r = R { b: payload, kind };
        let rec = match kind {
            kind::ROSTER => {
                let n = r.u16()?;
                let strategies = (0..n).map(|_| r.str()).collect::<Result<_, _>>()?;
                let n = r.u16()?;
                let venues = (0..n).map(|_| r.str()).collect::<Result<_, _>>()?;
                Rec::Roster { strategies, venues }
            }
            kind::SENT => {
                let engine_id = r.u64()?;
                let strategy = r.u16()?;
                let venue = r.u16()?;
                let client_id = r.u64()?;
                let instrument = u32::try_from(r.u64()?).map_err(|_| RecError::Field(kind))?;
                let bad = RecError::Field(kind);
                let side = Side::from_u8(r.u8()?).ok_or(bad.clone())?;
                let order_type = OrderType::from_u8(r.u8()?).ok_or(bad.clone())?;
                let tif = TimeInForce::from_u8(r.u8()?).ok_or(bad.clone())?;
                let stp = StpMode::from_u8(r.u8()?).ok_or(bad)?;
                Rec::Sent(SentOrder {
                    engine_id,
                    strategy,
                    venue,
                    client_id,
                    instrument: InstrumentId(instrument),
                    side,
                    order_type,
                    tif,
                    stp,
                    price: Price::from_raw(r.i64()?),
                    qty: Qty::from_raw(r.i64()?),
                    expire_at: r.u64()?,
                })
            }
            kind::ACK => Rec::Ack {
                engine_id: r.u64()?,
                venue_id: r.u64()?,
            },
            kind::FILL => Rec::Fill {
                engine_id: r.u64()?,
                price: r.i64()?,
                qty: r.i64()?,
                leaves: r.i64()?,
            },
            kind::CANCELLED => Rec::Cancelled {
                engine_id: r.u64()?,
                qty: r.i64()?,
                leaves: r.i64()?,
            },
            kind::REJECTED => Rec::Rejected {
                engine_id: r.u64()?,
            },
            kind::REPLACED => Rec::Replaced {
                engine_id: r.u64()?,
                price: r.i64()?,
                qty: r.i64()?,
            },
            kind::LIMITS => Rec::Limits {
                scope: r.u16()?,
                limits: limits_in(&mut r)?,
            },
            kind::KILL => Rec::Kill {
                scope: r.u16()?,
                on: match r.u8()? {
                    0 => false,
                    1 => true,
                    _ => return Err(RecError::Field(kind)),
                },
            },
            kind::CURSOR => Rec::Cursor {
                venue: r.u16()?,
                seq: r.u64()?,
            },
            other => return Err(RecError::Kind(other)),
        };
        r.end()?;
        Ok(rec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn samples() -> Vec<Rec> {
        vec![
            Rec::Roster {
                strategies: vec!["maker".into(), "t".into()],
                venues: vec!["sim".into()],
            },
            Rec::Sent(SentOrder {
                engine_id: 9,
                strategy: 1,
                venue: 0,
                client_id: 4,
                instrument: InstrumentId(1),
                side: Side::Sell,
                order_type: OrderType::PostOnly,
                tif: TimeInForce::Gtd,
                stp: StpMode::CancelBoth,
                price: Price::from_raw(10_001),
                qty: Qty::from_raw(3),
                expire_at: 77,
            }),
            Rec::Ack {
                engine_id: 9,
                venue_id: 12,
            },
            Rec::Fill {
                engine_id: 9,
                price: 10_001,
                qty: 1,
                leaves: 2,
            },
            Rec::Cancelled {
                engine_id: 9,
                qty: 2,
                leaves: 0,
            },
            Rec::Rejected { engine_id: 3 },
            Rec::Replaced {
                engine_id: 9,
                price: 1,
                qty: 2,
            },
            Rec::Limits {
                scope: GLOBAL,
                limits: Limits {
                    max_order_qty: Some(5),
                    max_loss: Some(-1 << 100),
                    max_open_orders: Some(3),
                    ..Limits::default()
                },
            },
            Rec::Kill { scope: 2, on: true },
            Rec::Cursor { venue: 1, seq: 77 },
        ]
    }

    #[test]
    fn every_record_round_trips() {
        let mut buf = Vec::new();
        for rec in samples() {
            let k = rec.encode(&mut buf);
            assert_eq!(Rec::decode(k, &buf), Ok(rec));
        }
    }

    #[test]
    fn bad_bytes_are_typed_errors() {
        let mut buf = Vec::new();
        assert_eq!(Rec::decode(99, &[]), Err(RecError::Kind(99)));
        let k = samples()[1].encode(&mut buf);
        assert!(matches!(
            Rec::decode(k, &buf[..10]),
            Err(RecError::Length(..))
        ));
        let mut long = buf.clone();
        long.push(0);
        assert!(matches!(Rec::decode(k, &long), Err(RecError::Length(..))));
        buf[28] = 9; // side
        assert_eq!(Rec::decode(k, &buf), Err(RecError::Field(k)));
        assert_eq!(
            Rec::decode(kind::KILL, &[0, 0, 2]),
            Err(RecError::Field(kind::KILL))
        );
    }

    proptest! {
        /// Decoding never panics, whatever the bytes; what decodes re-encodes to the
        /// same bytes (one encoding per record).
        #[test]
        fn prop_decode_never_panics(k in 0u8..12, bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Ok(rec) = Rec::decode(k, &bytes) {
                let mut buf = Vec::new();
                prop_assert_eq!(rec.encode(&mut buf), k);
                prop_assert_eq!(buf, bytes);
            }
        }
    }
}
