//! The fixed-size messages of the two shared-memory hand-offs between a strategy and
//! the engine.
//!
//! * [`Request`] (strategy → engine, the submit ring): a new order, a cancel or a
//!   heartbeat, stamped with `t1` when the strategy pushes it.
//! * [`Event`] (engine → strategy, the return ring): ack, reject with a reason code,
//!   fill, cancelled, or cancel-reject, carrying the order's 8 timestamps
//!   ([`peregrine_types::stamp`]).
//!
//! Both are `#[repr(C)]` plain old data with explicit padding fields, so every bit
//! pattern is a valid value and the rings copy them bytewise (`bytemuck::Pod`, derived:
//! the derive refuses a struct with implicit padding). Enumerations
//! travel as raw bytes and are decoded by [`Request::decode`] / [`Event::kind`], which
//! return a typed error for an unknown byte: a garbled message from a misbehaving
//! process is rejected and counted, never trusted. Layout tests pin sizes and offsets;
//! changes are additive only.

use peregrine_types::stamp::{self, Stamps};
use peregrine_types::{
    InstrumentId, ListKind, OrderExt, OrderType, Price, Qty, Side, StpMode, TimeInForce, TrailUnit,
    TriggerKind,
};

/// Reject reason codes the engine itself gives (risk codes are 101..=110, see
/// `peregrine_engine::RiskReject`; a venue's own reason is passed through as
/// [`reason::VENUE`] + its code).
pub mod reason {
    /// The strategy's kill switch (or the global one) is on: the risk check's code
    /// (`peregrine_engine`'s `RiskReject::KillSwitch`).
    pub const KILL_SWITCH: u16 = 103;
    /// The request had an unknown kind or side byte.
    pub const MALFORMED: u16 = 201;
    /// The venue index is not configured.
    pub const UNKNOWN_VENUE: u16 = 202;
    /// The instrument is not configured.
    pub const UNKNOWN_INSTRUMENT: u16 = 203;
    /// A cancel named an order the engine does not know (or already finished).
    pub const UNKNOWN_ORDER: u16 = 204;
    /// The gateway inbox was full (back-pressure).
    pub const GATEWAY_BUSY: u16 = 205;
    /// The strategy is dead or killed and cannot send.
    pub const STRATEGY_DOWN: u16 = 206;
    /// The venue is not connected (the gateway is reconnecting).
    pub const VENUE_DOWN: u16 = 207;
    /// A replace of this order is already on its way to the venue, or a cancel is.
    pub const REPLACE_PENDING: u16 = 208;
    /// The venue's adapter cannot carry this order type (a stop, a trailing stop or an
    /// iceberg to a venue without them): refused by the engine, never downgraded.
    pub const UNSUPPORTED: u16 = 209;
    /// An order's extension record was not followed by its order (or named another
    /// client id): the extension is dropped and the order refused.
    pub const BAD_EXTENSION: u16 = 210;
    /// Base of venue reject codes: `VENUE + venue reason`.
    pub const VENUE: u16 = 1000;
}

/// What a [`Request`] asks for (the `kind` byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum RequestKind {
    /// A new limit order.
    New = 1,
    /// Cancel an open order by client id.
    Cancel = 2,
    /// "I am alive"; `aux` carries the process id.
    Heartbeat = 3,
    /// "I received the ack/reject of `client_id` at `aux`" (t8), so the engine can
    /// complete the order's latency record.
    Receipt = 4,
    /// Change an open order's limit price and open quantity (`price`, `qty`).
    Replace = 5,
    /// "`on_book` ran for book `client_id` (the board slot) at `t1`": the market-data
    /// latency sample (`price` = the venue's timestamp, `qty` = engine receive time,
    /// `aux` = engine publish time).
    MdReceipt = 6,
    /// The conditional and iceberg attributes of the `New` that follows at once, with
    /// the same `client_id` (pushed together by [`crate::Api::send`]): `side` = the
    /// trigger kind, `order_type` = the trail unit, `instrument` = the trail offset,
    /// `price` = the stop price, `qty` = the display quantity; a leg of an order list
    /// also has `tif` = 1 + the list kind (1 OCO, 2 OTO, 3 OTOCO; 0: not a list) and
    /// `stp` = the leg's index (0-based).
    Ext = 7,
}

/// Strategy → engine, 64 bytes (one cache line).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Request {
    /// [`RequestKind`] as a byte.
    pub kind: u8,
    /// [`Side`] as a byte (0 buy, 1 sell); New only.
    pub side: u8,
    /// [`OrderType`] as a byte (0 limit, 1 market, 2 post-only); New only.
    pub order_type: u8,
    /// [`TimeInForce`] as a byte (0 GTC, 1 IOC, 2 FOK, 3 GTD); New only.
    pub tif: u8,
    /// Instrument; New only.
    pub instrument: u32,
    /// The strategy's order id (New, Cancel, Receipt).
    pub client_id: u64,
    /// Index of the venue in the engine's config; New only.
    pub venue: u32,
    /// [`StpMode`] as a byte (0 none); New only.
    pub stp: u8,
    /// Zero.
    pub pad1: [u8; 3],
    /// Limit price in price units; New, and the new price of a Replace.
    pub price: i64,
    /// Quantity in lots; New, and the new open quantity of a Replace.
    pub qty: i64,
    /// t1: when the strategy pushed it.
    pub t1: u64,
    /// Heartbeat: the process id; Receipt: t8 of the acknowledged order.
    pub aux: u64,
    /// New with GTD: expiry, nanoseconds since the Unix epoch (0 otherwise).
    pub expire_at: u64,
}

/// A new order as a strategy describes it. The byte-valued fields all default to 0,
/// which is a GTC limit order without self-trade prevention: what every request was
/// before order types existed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewOrder {
    /// The strategy's id for the order (unique among its open orders).
    pub client_id: u64,
    /// Instrument.
    pub instrument: InstrumentId,
    /// Venue index (order of `[[venues]]` in the engine config).
    pub venue: u32,
    /// Side.
    pub side: Side,
    /// Limit price.
    pub price: Price,
    /// Quantity.
    pub qty: Qty,
    /// Limit, market (`price` is the protection price: the worst price it may trade
    /// at) or post-only.
    pub order_type: OrderType,
    /// Time in force.
    pub tif: TimeInForce,
    /// Self-trade prevention at the venue (all of the engine's strategies are one
    /// account there).
    pub stp: StpMode,
    /// GTD expiry, nanoseconds since the Unix epoch; 0 for other TIFs.
    pub expire_at: u64,
    /// Stop, take-profit, trailing stop, iceberg ([`OrderExt::NONE`]: a plain order).
    /// Travels as a [`RequestKind::Ext`] record just before the order's own.
    pub ext: OrderExt,
}

impl NewOrder {
    /// A GTC limit order without self-trade prevention.
    pub fn limit(
        venue: u32,
        instrument: InstrumentId,
        side: Side,
        price: Price,
        qty: Qty,
    ) -> NewOrder {
        NewOrder {
            client_id: 0,
            instrument,
            venue,
            side,
            price,
            qty,
            order_type: OrderType::Limit,
            tif: TimeInForce::Gtc,
            stp: StpMode::None,
            expire_at: 0,
            ext: OrderExt::NONE,
        }
    }

    /// A market order (IOC) that trades no worse than `protection`.
    pub fn market(
        venue: u32,
        instrument: InstrumentId,
        side: Side,
        protection: Price,
        qty: Qty,
    ) -> NewOrder {
        NewOrder {
            order_type: OrderType::Market,
            tif: TimeInForce::Ioc,
            ..NewOrder::limit(venue, instrument, side, protection, qty)
        }
    }

    /// This order as post-only (rejected if it would take on arrival).
    pub fn post_only(self) -> NewOrder {
        NewOrder {
            order_type: OrderType::PostOnly,
            ..self
        }
    }

    /// This order immediate-or-cancel.
    pub fn ioc(self) -> NewOrder {
        NewOrder {
            tif: TimeInForce::Ioc,
            expire_at: 0,
            ..self
        }
    }

    /// This order fill-or-kill.
    pub fn fok(self) -> NewOrder {
        NewOrder {
            tif: TimeInForce::Fok,
            expire_at: 0,
            ..self
        }
    }

    /// This order good till `expire_at_unix_ns` (nanoseconds since the Unix epoch).
    pub fn gtd(self, expire_at_unix_ns: u64) -> NewOrder {
        NewOrder {
            tif: TimeInForce::Gtd,
            expire_at: expire_at_unix_ns,
            ..self
        }
    }

    /// This order with self-trade prevention `stp`.
    pub fn stp(self, stp: StpMode) -> NewOrder {
        NewOrder { stp, ..self }
    }

    /// This order as a stop-loss triggered at `stop_price` (a limit order: a
    /// stop-limit; a market order: a stop-market): a buy when the venue's last trade
    /// rises to it, a sell when it falls to it. Parked at the venue until then.
    pub fn stop(self, stop_price: Price) -> NewOrder {
        self.trigger(TriggerKind::StopLoss, stop_price)
    }

    /// This order as a take-profit triggered at `price` (a sell when the last trade
    /// rises to it, a buy when it falls to it).
    pub fn take_profit(self, price: Price) -> NewOrder {
        self.trigger(TriggerKind::TakeProfit, price)
    }

    fn trigger(self, trigger: TriggerKind, stop_price: Price) -> NewOrder {
        NewOrder {
            ext: OrderExt {
                trigger,
                stop_price,
                trail: 0,
                trail_unit: TrailUnit::None,
                ..self.ext
            },
            ..self
        }
    }

    /// This order as a trailing stop-loss `offset` ticks behind the best price since
    /// it was entered (the venue keeps the watermark).
    pub fn trailing_ticks(self, offset: u32) -> NewOrder {
        self.trailing(offset, TrailUnit::Ticks)
    }

    /// This order as a trailing stop-loss `offset` basis points behind the watermark.
    pub fn trailing_bps(self, offset: u32) -> NewOrder {
        self.trailing(offset, TrailUnit::Bps)
    }

    fn trailing(self, trail: u32, trail_unit: TrailUnit) -> NewOrder {
        NewOrder {
            ext: OrderExt {
                trigger: TriggerKind::StopLoss,
                stop_price: Price::from_raw(0),
                trail,
                trail_unit,
                ..self.ext
            },
            ..self
        }
    }

    /// This order as an iceberg showing at most `display` at a time.
    pub fn iceberg(self, display: Qty) -> NewOrder {
        NewOrder {
            ext: OrderExt {
                display_qty: display,
                ..self.ext
            },
            ..self
        }
    }
}

/// A decoded [`Request`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// New order (its `ext` is [`OrderExt::NONE`] as decoded: the engine joins the
    /// [`Command::Ext`] that came just before).
    New(NewOrder),
    /// The extension of the next order, `client_id`.
    Ext {
        /// The order it belongs to.
        client_id: u64,
        /// Its attributes.
        ext: OrderExt,
        /// The order is leg `.1` (0-based) of an order list of kind `.0`.
        list: Option<(ListKind, u8)>,
    },
    /// Cancel by client id.
    Cancel {
        /// The order to cancel.
        client_id: u64,
    },
    /// Replace by client id: new limit price and new open quantity. The order keeps
    /// its client id.
    Replace {
        /// The order to change.
        client_id: u64,
        /// New limit price.
        price: Price,
        /// New open (still to be filled) quantity.
        qty: Qty,
    },
    /// Liveness.
    Heartbeat {
        /// The sender's process id.
        pid: u32,
    },
    /// The strategy popped the ack or reject of `client_id` at `t8`.
    Receipt {
        /// The order.
        client_id: u64,
        /// When the strategy popped the event.
        t8: u64,
    },
    /// `on_book` ran for a book version: one market-data latency sample.
    MdReceipt {
        /// Board slot.
        slot: u32,
        /// The venue's timestamp of the version.
        exchange_ts: u64,
        /// When the engine received it.
        recv_ts: u64,
        /// When the engine published it.
        publish_ts: u64,
        /// When the strategy's `on_book` was called.
        seen_ts: u64,
    },
}

/// Why a [`Request`] could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Unknown `kind` byte.
    #[error("unknown request kind {0}")]
    BadKind(u8),
    /// Unknown `side` byte.
    #[error("unknown side {0}")]
    BadSide(u8),
    /// Unknown order type, time in force or STP byte.
    #[error("unknown order type {0}, time in force {1} or STP mode {2}")]
    BadOrderFields(u8, u8, u8),
}

impl Request {
    /// A new order stamped `t1`.
    pub fn new_order(o: &NewOrder, t1: u64) -> Request {
        Request {
            kind: RequestKind::New as u8,
            side: o.side as u8,
            order_type: o.order_type as u8,
            tif: o.tif as u8,
            instrument: o.instrument.0,
            client_id: o.client_id,
            venue: o.venue,
            stp: o.stp as u8,
            price: o.price.units(),
            qty: o.qty.lots(),
            t1,
            expire_at: o.expire_at,
            ..Request::default()
        }
    }

    /// The extension record of order `o` (sent just before [`Request::new_order`]).
    pub fn ext(o: &NewOrder, t1: u64) -> Request {
        Request {
            kind: RequestKind::Ext as u8,
            side: o.ext.trigger as u8,
            order_type: o.ext.trail_unit as u8,
            instrument: o.ext.trail,
            client_id: o.client_id,
            price: o.ext.stop_price.units(),
            qty: o.ext.display_qty.lots(),
            t1,
            ..Request::default()
        }
    }

    /// The extension record of leg `leg` of an order list of `kind` whose leg is `o`
    /// (sent just before the leg's [`Request::new_order`]; see [`crate::Api::send_list`]).
    pub fn list_leg(o: &NewOrder, kind: ListKind, leg: u8, t1: u64) -> Request {
        Request {
            tif: 1 + kind as u8,
            stp: leg,
            ..Request::ext(o, t1)
        }
    }

    /// A cancel stamped `t1`.
    pub fn cancel(client_id: u64, t1: u64) -> Request {
        Request {
            kind: RequestKind::Cancel as u8,
            client_id,
            t1,
            ..Request::default()
        }
    }

    /// A replace of order `client_id` stamped `t1`.
    pub fn replace(client_id: u64, price: Price, qty: Qty, t1: u64) -> Request {
        Request {
            kind: RequestKind::Replace as u8,
            client_id,
            price: price.units(),
            qty: qty.lots(),
            t1,
            ..Request::default()
        }
    }

    /// A heartbeat from process `pid`.
    pub fn heartbeat(pid: u32, t1: u64) -> Request {
        Request {
            kind: RequestKind::Heartbeat as u8,
            aux: pid as u64,
            t1,
            ..Request::default()
        }
    }

    /// A receipt: the strategy popped the ack/reject of `client_id` at `t8`.
    pub fn receipt(client_id: u64, t8: u64) -> Request {
        Request {
            kind: RequestKind::Receipt as u8,
            client_id,
            t1: t8,
            aux: t8,
            ..Request::default()
        }
    }

    /// A market-data receipt for `ev` (a book event) seen at `seen_ts`.
    pub fn md_receipt(ev: &crate::md::MdEvent, seen_ts: u64) -> Request {
        Request {
            kind: RequestKind::MdReceipt as u8,
            client_id: u64::from(ev.slot),
            price: ev.exchange_ts as i64,
            qty: ev.recv_ts as i64,
            aux: ev.publish_ts,
            t1: seen_ts,
            ..Request::default()
        }
    }

    /// Decodes the raw bytes into a typed command.
    pub fn decode(&self) -> Result<Command, DecodeError> {
        match self.kind {
            1 => {
                let side = Side::from_u8(self.side).ok_or(DecodeError::BadSide(self.side))?;
                let bad = DecodeError::BadOrderFields(self.order_type, self.tif, self.stp);
                let (Some(order_type), Some(tif), Some(stp)) = (
                    OrderType::from_u8(self.order_type),
                    TimeInForce::from_u8(self.tif),
                    StpMode::from_u8(self.stp),
                ) else {
                    return Err(bad);
                };
                Ok(Command::New(NewOrder {
                    client_id: self.client_id,
                    instrument: InstrumentId(self.instrument),
                    venue: self.venue,
                    side,
                    price: Price::from_raw(self.price),
                    qty: Qty::from_raw(self.qty),
                    order_type,
                    tif,
                    stp,
                    expire_at: self.expire_at,
                    ext: OrderExt::NONE,
                }))
            }
            2 => Ok(Command::Cancel {
                client_id: self.client_id,
            }),
            3 => Ok(Command::Heartbeat {
                pid: self.aux as u32,
            }),
            4 => Ok(Command::Receipt {
                client_id: self.client_id,
                t8: self.aux,
            }),
            5 => Ok(Command::Replace {
                client_id: self.client_id,
                price: Price::from_raw(self.price),
                qty: Qty::from_raw(self.qty),
            }),
            6 => Ok(Command::MdReceipt {
                slot: self.client_id as u32,
                exchange_ts: self.price as u64,
                recv_ts: self.qty as u64,
                publish_ts: self.aux,
                seen_ts: self.t1,
            }),
            7 => {
                let (Some(trigger), Some(trail_unit)) = (
                    TriggerKind::from_u8(self.side),
                    TrailUnit::from_u8(self.order_type),
                ) else {
                    return Err(DecodeError::BadOrderFields(self.side, self.order_type, 0));
                };
                let list = match self.tif {
                    0 => None,
                    t => match ListKind::from_u8(t - 1) {
                        Some(k) if (self.stp as usize) < k.legs() => Some((k, self.stp)),
                        _ => return Err(DecodeError::BadOrderFields(self.tif, self.stp, 0)),
                    },
                };
                Ok(Command::Ext {
                    list,
                    client_id: self.client_id,
                    ext: OrderExt {
                        trigger,
                        stop_price: Price::from_raw(self.price),
                        trail: self.instrument,
                        trail_unit,
                        display_qty: Qty::from_raw(self.qty),
                    },
                })
            }
            other => Err(DecodeError::BadKind(other)),
        }
    }
}

/// What an [`Event`] reports (the `kind` byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum EventKind {
    /// The venue accepted the order.
    Ack = 1,
    /// The engine (risk) or the venue refused the order; see `reason`.
    Reject = 2,
    /// A fill: `price`, `qty`, and `leaves` still open.
    Fill = 3,
    /// The order is cancelled (`qty` = what was left).
    Cancelled = 4,
    /// A cancel was refused; see `reason`.
    CancelReject = 5,
    /// A replace took effect: `price` is the new limit price, `qty` and `leaves` the
    /// new open quantity.
    Replaced = 6,
    /// A replace was refused (engine risk, or the venue); see `reason`. The order is
    /// unchanged.
    ReplaceReject = 7,
    /// A conditional order's trigger was reached at the venue (`price` = the trigger
    /// price, `qty` = the venue's last trade price then); the order keeps its client id
    /// and lives on as a new order (fills, rests, or is cancelled).
    Triggered = 8,
    /// An order list's status at the venue (`client_id` = its leg 0's client id; `qty`
    /// = 0 accepted, 1 rejected, 2 done; `reason` = why it was rejected). Its legs
    /// report as orders of their own (each leg's `Ack`, fills, `Cancelled`, or
    /// `Reject` when the list is refused).
    ListStatus = 9,
}

impl EventKind {
    /// Decodes the byte.
    pub fn from_u8(v: u8) -> Option<EventKind> {
        Some(match v {
            1 => Self::Ack,
            2 => Self::Reject,
            3 => Self::Fill,
            4 => Self::Cancelled,
            5 => Self::CancelReject,
            6 => Self::Replaced,
            7 => Self::ReplaceReject,
            8 => Self::Triggered,
            9 => Self::ListStatus,
            _ => return None,
        })
    }
}

/// Engine → strategy, 128 bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Event {
    /// [`EventKind`] as a byte.
    pub kind: u8,
    /// The order's side as a byte.
    pub side: u8,
    /// Reject reason (0 otherwise): risk 101..=110, engine [`reason`] codes.
    pub reason: u16,
    /// Instrument.
    pub instrument: u32,
    /// The strategy's id for the order.
    pub client_id: u64,
    /// Venue index.
    pub venue: u32,
    /// Zero.
    pub pad0: u32,
    /// Fill price (Fill), else the order's limit price.
    pub price: i64,
    /// Fill quantity (Fill), cancelled quantity (Cancelled), else order quantity.
    pub qty: i64,
    /// Quantity still open after this event.
    pub leaves: i64,
    /// t1..t8, see [`peregrine_types::stamp`]; 0 = not known.
    pub ts: Stamps,
    /// The venue delay D the simulated venue scheduled for this order, ns (0 unknown).
    pub scheduled_delay_ns: u64,
    /// Zero.
    pub pad1: u64,
}

impl Event {
    /// The decoded kind, `None` for an unknown byte.
    pub fn kind(&self) -> Option<EventKind> {
        EventKind::from_u8(self.kind)
    }

    /// The decoded side (buy for an unknown byte; the engine only writes valid ones).
    pub fn side(&self) -> Side {
        Side::from_u8(self.side).unwrap_or(Side::Buy)
    }

    /// t8 − t1, if both are known.
    pub fn round_trip_ns(&self) -> Option<u64> {
        let (t1, t8) = (self.ts[stamp::STRATEGY_SEND], self.ts[stamp::STRATEGY_RECV]);
        (t1 != 0 && t8 != 0).then(|| t8.saturating_sub(t1))
    }

    /// t5 − t4 (venue service), if both are known.
    pub fn venue_ns(&self) -> Option<u64> {
        let (t4, t5) = (self.ts[stamp::GATEWAY_RECV], self.ts[stamp::GATEWAY_DONE]);
        (t4 != 0 && t5 != 0).then(|| t5.saturating_sub(t4))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, offset_of, size_of};

    #[test]
    fn request_layout() {
        assert_eq!(size_of::<Request>(), 64);
        assert_eq!(align_of::<Request>(), 8);
        assert_eq!(offset_of!(Request, instrument), 4);
        assert_eq!(offset_of!(Request, client_id), 8);
        assert_eq!(offset_of!(Request, venue), 16);
        assert_eq!(offset_of!(Request, price), 24);
        assert_eq!(offset_of!(Request, qty), 32);
        assert_eq!(offset_of!(Request, t1), 40);
        assert_eq!(offset_of!(Request, aux), 48);
        assert_eq!(offset_of!(Request, order_type), 2);
        assert_eq!(offset_of!(Request, tif), 3);
        assert_eq!(offset_of!(Request, stp), 20);
        assert_eq!(offset_of!(Request, expire_at), 56);
    }

    /// A stop's extension record carries every attribute and decodes back; a bad
    /// trigger or trail byte is a typed error.
    #[test]
    fn extension_records_round_trip() {
        let base = NewOrder {
            client_id: 4,
            ..NewOrder::limit(
                0,
                InstrumentId(1),
                Side::Sell,
                Price::from_raw(90),
                Qty::from_raw(5),
            )
        };
        for o in [
            base.stop(Price::from_raw(99)),
            base.take_profit(Price::from_raw(120))
                .iceberg(Qty::from_raw(2)),
            base.trailing_ticks(3),
            base.trailing_bps(25).iceberg(Qty::from_raw(1)),
            base.iceberg(Qty::from_raw(2)),
        ] {
            assert!(!o.ext.is_plain());
            assert_eq!(
                Request::ext(&o, 1).decode(),
                Ok(Command::Ext {
                    client_id: 4,
                    ext: o.ext,
                    list: None,
                })
            );
        }
        // A list leg's extension names its list kind and leg index; a plain leg has
        // one too (it carries the list), and a leg index its kind lacks is refused.
        for (kind, leg) in [(ListKind::Oco, 1), (ListKind::Oto, 0), (ListKind::Otoco, 2)] {
            assert_eq!(
                Request::list_leg(&base, kind, leg, 1).decode(),
                Ok(Command::Ext {
                    client_id: 4,
                    ext: OrderExt::NONE,
                    list: Some((kind, leg)),
                })
            );
        }
        let mut bad = Request::list_leg(&base, ListKind::Oco, 1, 1);
        bad.stp = 2; // an OCO has legs 0 and 1
        assert!(bad.decode().is_err());
        bad.stp = 0;
        bad.tif = 4; // no list kind 3
        assert!(bad.decode().is_err());
        assert!(base.ext.is_plain());
        let mut bad = Request::ext(&base.stop(Price::from_raw(1)), 1);
        bad.side = 3;
        assert!(matches!(
            bad.decode(),
            Err(DecodeError::BadOrderFields(3, ..))
        ));
        assert_eq!(EventKind::from_u8(8), Some(EventKind::Triggered));
        assert_eq!(EventKind::from_u8(9), Some(EventKind::ListStatus));
    }

    #[test]
    fn event_layout() {
        assert_eq!(size_of::<Event>(), 128);
        assert_eq!(offset_of!(Event, reason), 2);
        assert_eq!(offset_of!(Event, client_id), 8);
        assert_eq!(offset_of!(Event, price), 24);
        assert_eq!(offset_of!(Event, leaves), 40);
        assert_eq!(offset_of!(Event, ts), 48);
        assert_eq!(offset_of!(Event, scheduled_delay_ns), 112);
    }

    #[test]
    fn round_trips_and_bad_bytes() {
        let o = NewOrder {
            client_id: 7,
            ..NewOrder::limit(
                1,
                InstrumentId(3),
                Side::Sell,
                Price::from_raw(101),
                Qty::from_raw(5),
            )
        };
        assert_eq!(Request::new_order(&o, 9).decode(), Ok(Command::New(o)));
        for o in [
            o.ioc(),
            o.fok().stp(StpMode::CancelBoth),
            o.post_only().gtd(123),
            NewOrder::market(
                0,
                InstrumentId(1),
                Side::Buy,
                Price::from_raw(200),
                Qty::from_raw(1),
            ),
        ] {
            assert_eq!(Request::new_order(&o, 9).decode(), Ok(Command::New(o)));
        }
        let mut odd = Request::new_order(&o, 9);
        odd.tif = 4;
        assert_eq!(odd.decode(), Err(DecodeError::BadOrderFields(0, 4, 0)));
        assert_eq!(
            Request::cancel(7, 1).decode(),
            Ok(Command::Cancel { client_id: 7 })
        );
        assert_eq!(
            Request::heartbeat(42, 1).decode(),
            Ok(Command::Heartbeat { pid: 42 })
        );
        assert_eq!(
            Request::receipt(5, 99).decode(),
            Ok(Command::Receipt {
                client_id: 5,
                t8: 99
            })
        );
        assert_eq!(
            Request::replace(7, Price::from_raw(99), Qty::from_raw(2), 1).decode(),
            Ok(Command::Replace {
                client_id: 7,
                price: Price::from_raw(99),
                qty: Qty::from_raw(2)
            })
        );
        assert_eq!(EventKind::from_u8(7), Some(EventKind::ReplaceReject));
        let mut bad = Request::new_order(&o, 9);
        bad.side = 9;
        assert_eq!(bad.decode(), Err(DecodeError::BadSide(9)));
        bad.kind = 77;
        assert_eq!(bad.decode(), Err(DecodeError::BadKind(77)));
        assert_eq!(EventKind::from_u8(0), None);
        assert_eq!(EventKind::from_u8(3), Some(EventKind::Fill));
    }
}
