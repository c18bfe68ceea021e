//! FIX requests → native requests (or an immediate FIX answer).

use peregrine_fix::app::{
    self, decimal_units, AppError, BusinessMessageReject, BusinessRejectReason, CxlRejReason,
    CxlRejResponseTo, ExecType, ExecutionReport, NewOrderSingle, OrdRejReason, OrdStatus, OrdType,
    OrderCancelReject, OrderCancelReplaceRequest, OrderCancelRequest, OrderExtras, OrderTerms,
    TimeInForce, TrailOffsetUnit,
};
use peregrine_fix::codec::{tags, FieldError, Message, Precision};
use peregrine_types::{
    ClientOrderId, InstrumentId, OrderId, OrderType, Price, Qty, StpMode, Timestamp, TrailUnit,
    TriggerKind,
};
use peregrine_wire::field::Pad;
use peregrine_wire::orders::{Cancel, NewOrder, Replace};
use peregrine_wire::v2::venue::NewOrderExt;
use peregrine_wire::WireMessage;

use super::orders::{Order, Pending};
use super::Bridge;

pub(super) const P: Precision = Precision::Millis;

/// Appends a native message to the outbound buffer.
pub(crate) fn push_native<M: WireMessage>(out: &mut Vec<u8>, m: &M) {
    let mut buf = [0u8; peregrine_wire::MAX_MESSAGE_SIZE];
    if let Ok(n) = m.encode(&mut buf) {
        out.extend_from_slice(&buf[..n]);
    }
}

/// The first value of `tag` in the body (for answering a request that did not decode).
pub(super) fn raw<'a>(msg: &Message<'a>, tag: u32) -> &'a [u8] {
    msg.fields()
        .flatten()
        .find(|f| f.tag == tag)
        .map_or(b"NONE", |f| f.value)
}

/// Order terms in exchange units.
pub(super) struct Native {
    pub(super) instrument: usize,
    pub(super) qty: i64,
    pub(super) price: i64,
    pub(super) expire_at: u64,
    pub(super) order_type: OrderType,
    pub(super) tif: peregrine_types::TimeInForce,
    pub(super) stp: StpMode,
}

/// The trailing offset, its unit and the trigger kind of an order of `ord_type`
/// with trigger price `stop_price` (units) and `extras`.
pub(super) fn trigger_fields(
    ord_type: OrdType,
    stop_price: i64,
    extras: &OrderExtras<'_>,
) -> (u32, TrailUnit, TriggerKind) {
    let (trail, trail_unit) = match extras.trail {
        Some(t) => (
            t.value,
            match t.unit {
                TrailOffsetUnit::Ticks => TrailUnit::Ticks,
                TrailOffsetUnit::BasisPoints => TrailUnit::Bps,
            },
        ),
        None => (0, TrailUnit::None),
    };
    // OrdType J (market if touched) is the core's take-profit; FIX's stop triggers
    // against the order: a stop-loss.
    let trigger = if ord_type == OrdType::MarketIfTouched {
        TriggerKind::TakeProfit
    } else if stop_price != 0 || trail != 0 {
        TriggerKind::StopLoss
    } else {
        TriggerKind::None
    };
    (trail, trail_unit, trigger)
}

impl Bridge {
    /// An application message from the FIX client.
    pub fn on_fix_app(
        &mut self,
        msg: &Message<'_>,
        now: u64,
    ) -> Result<(), peregrine_fix::store::StoreError> {
        let result = match msg.msg_type() {
            b"D" => self.new_order(msg, now),
            b"F" => self.cancel(msg, now),
            b"G" => self.replace(msg, now),
            b"q" => self.mass_cancel(msg, now),
            b"H" => self.status(msg, now),
            b"E" => self.new_list(msg, now),
            b"K" => self.cancel_list(msg, now),
            b"M" => self.list_status_request(msg, now),
            _ => {
                let j = BusinessMessageReject {
                    ref_seq: msg.header.msg_seq_num,
                    ref_msg_type: msg.msg_type(),
                    ref_id: None,
                    reason: BusinessRejectReason::UnsupportedMessageType,
                    text: "Unsupported Message Type",
                };
                self.session.send_app(b"j", now, |w| j.encode(w))?;
                Ok(())
            }
        };
        match result {
            Ok(()) => Ok(()),
            // The dictionary passed it: what Peregrine's dialect still refuses (a
            // field FIX leaves optional, a value it cannot take) is a business reject.
            Err(Refusal::Field(e)) if self.session.config().validation.use_data_dictionary => {
                self.business_reject(msg, e, now).or_else(|r| match r {
                    Refusal::Store(e) => Err(e),
                    Refusal::Field(_) => Ok(()),
                })
            }
            Err(Refusal::Field(e)) => self.session.reject_app(msg, e, now),
            Err(Refusal::Store(e)) => Err(e),
        }
    }

    /// Refuses a request the dictionary accepted but the dialect does not take
    /// (`e` from its decoder), with the request's own reject message.
    fn business_reject(
        &mut self,
        msg: &Message<'_>,
        e: FieldError,
        now: u64,
    ) -> Result<(), Refusal> {
        let text = match e {
            FieldError::Missing(tag) => format!("tag {tag} required"),
            other => other.to_string(),
        };
        let (cl, orig) = (raw(msg, tags::CL_ORD_ID), raw(msg, tags::ORIG_CL_ORD_ID));
        let reason = match e {
            FieldError::Missing(tags::ORDER_QTY) | FieldError::Value(tags::ORDER_QTY) => {
                OrdRejReason::IncorrectQuantity
            }
            _ => OrdRejReason::Other,
        };
        match msg.msg_type() {
            b"D" => self.reject_new(msg, reason, &text, now),
            b"F" | b"G" => {
                let to = if msg.msg_type() == b"F" {
                    CxlRejResponseTo::Cancel
                } else {
                    CxlRejResponseTo::Replace
                };
                self.cancel_reject(None, cl, orig, to, CxlRejReason::Other, &text, now)
            }
            _ => {
                let j = BusinessMessageReject {
                    ref_seq: msg.header.msg_seq_num,
                    ref_msg_type: msg.msg_type(),
                    ref_id: (cl != b"NONE").then_some(cl),
                    reason: match e {
                        FieldError::Missing(_) => {
                            BusinessRejectReason::ConditionallyRequiredFieldMissing
                        }
                        _ => BusinessRejectReason::Other,
                    },
                    text: &text,
                };
                self.session.send_app(b"j", now, |w| j.encode(w))?;
                Ok(())
            }
        }
    }

    /// Converts order terms to exchange units, or the reason they cannot be.
    pub(super) fn native_terms(
        &self,
        t: &OrderTerms<'_>,
    ) -> Result<Native, (OrdRejReason, &'static str)> {
        let instrument = self
            .instrument_by_symbol(t.symbol)
            .ok_or((OrdRejReason::UnknownSymbol, "unknown symbol"))?;
        let spec = &self.instruments[instrument];
        let qty = decimal_units(t.order_qty, spec.qty_decimals, tags::ORDER_QTY).map_err(|_| {
            (
                OrdRejReason::IncorrectQuantity,
                "OrderQty not a number in the instrument's precision",
            )
        })?;
        let price = match t.price {
            Some(p) => decimal_units(p, spec.price_decimals, tags::PRICE).map_err(|_| {
                (
                    OrdRejReason::ExchangeOption,
                    "Price not a number in the instrument's precision",
                )
            })?,
            None => {
                return Err((
                    OrdRejReason::UnsupportedCharacteristic,
                    "Price (44) required: a market order's protection price",
                ))
            }
        };
        let order_type = match (t.ord_type, t.post_only) {
            (OrdType::Market | OrdType::Stop | OrdType::MarketIfTouched, false) => {
                OrderType::Market
            }
            (OrdType::Market, true) => {
                return Err((
                    OrdRejReason::UnsupportedCharacteristic,
                    "a market order cannot be post-only",
                ))
            }
            (OrdType::Stop | OrdType::StopLimit | OrdType::MarketIfTouched, true) => {
                return Err((
                    OrdRejReason::UnsupportedCharacteristic,
                    "a stop order cannot be post-only",
                ))
            }
            (OrdType::Limit | OrdType::StopLimit, false) => OrderType::Limit,
            (OrdType::Limit, true) => OrderType::PostOnly,
        };
        let tif = match t.time_in_force {
            // A stop waits for its trigger however long (until cancelled); what it
            // becomes is a market order, which trades at once or not at all.
            TimeInForce::Gtc if matches!(t.ord_type, OrdType::Stop | OrdType::MarketIfTouched) => {
                peregrine_types::TimeInForce::Ioc
            }
            TimeInForce::Gtc => peregrine_types::TimeInForce::Gtc,
            TimeInForce::Ioc => peregrine_types::TimeInForce::Ioc,
            TimeInForce::Fok => peregrine_types::TimeInForce::Fok,
            TimeInForce::Gtd => peregrine_types::TimeInForce::Gtd,
            TimeInForce::Day => {
                return Err((
                    OrdRejReason::UnsupportedCharacteristic,
                    "TimeInForce 0 (Day) not supported",
                ))
            }
        };
        Ok(Native {
            instrument,
            qty,
            price,
            expire_at: t.expire_time.unwrap_or(0),
            order_type,
            tif,
            stp: t.self_match.to_peregrine(),
        })
    }

    /// StopPx and MaxFloor in the instrument's units: (stop price, display qty), 0
    /// when absent.
    pub(super) fn native_extras(
        &self,
        instrument: usize,
        x: &OrderExtras<'_>,
    ) -> Result<(i64, i64), (OrdRejReason, &'static str)> {
        let spec = &self.instruments[instrument];
        let stop = match x.stop_px {
            Some(p) => decimal_units(p, spec.price_decimals, tags::STOP_PX).map_err(|_| {
                (
                    OrdRejReason::ExchangeOption,
                    "StopPx not a number in the instrument's precision",
                )
            })?,
            None => 0,
        };
        let display = match x.max_floor {
            Some(q) => decimal_units(q, spec.qty_decimals, tags::MAX_FLOOR).map_err(|_| {
                (
                    OrdRejReason::IncorrectQuantity,
                    "MaxFloor not a number in the instrument's precision",
                )
            })?,
            None => 0,
        };
        if stop < 0 || display < 0 || (x.max_floor.is_some() && display == 0) {
            return Err((
                OrdRejReason::UnsupportedCharacteristic,
                "StopPx and MaxFloor must be positive",
            ));
        }
        Ok((stop, display))
    }

    /// An ExecutionReport rejecting a NewOrderSingle that never reached the exchange.
    pub(super) fn reject_new(
        &mut self,
        msg: &Message<'_>,
        reason: OrdRejReason,
        text: &str,
        now: u64,
    ) -> Result<(), Refusal> {
        self.note_refused(raw(msg, tags::CL_ORD_ID));
        let side = app::Side::from_value(raw(msg, tags::SIDE)).unwrap_or(app::Side::Buy);
        let exec_id = self.gateway_exec_id();
        let er = ExecutionReport {
            order_id: 0,
            cl_ord_id: raw(msg, tags::CL_ORD_ID),
            orig_cl_ord_id: None,
            exec_id: exec_id.as_bytes(),
            exec_type: ExecType::Rejected,
            ord_status: OrdStatus::Rejected,
            symbol: raw(msg, tags::SYMBOL),
            side,
            ord_type: None,
            time_in_force: None,
            order_qty: None,
            price: None,
            last: None,
            leaves_qty: 0,
            cum_qty: 0,
            notional: 0,
            ord_rej_reason: Some(reason),
            text: Some(text),
            ord_status_req_id: None,
            transact_time: now,
            price_decimals: 0,
            qty_decimals: 0,
        };
        self.session.send_app(b"8", now, |w| er.encode(w, P))?;
        Ok(())
    }

    /// Whether a new order may take ClOrdID `cl` (no live order has it).
    pub(super) fn cl_ord_id_free(&self, cl: &[u8]) -> bool {
        !self
            .table
            .by_cl_ord_id(cl)
            .is_some_and(|i| self.table.live(i))
    }

    fn new_order(&mut self, msg: &Message<'_>, now: u64) -> Result<(), Refusal> {
        // PossResend=Y of an order this session has seen (taken or refused): ignored,
        // as FIX asks (its reports went out the first time).
        if msg.header.poss_resend && self.seen_cl_ord_id(raw(msg, tags::CL_ORD_ID)) {
            return Ok(());
        }
        let (d, extras) = match NewOrderSingle::decode_with_extras(msg) {
            Ok(d) => d,
            Err(AppError::Field(e)) => return Err(Refusal::Field(e)),
            Err(AppError::Unsupported { text, .. }) => {
                return self.reject_new(msg, OrdRejReason::UnsupportedCharacteristic, text, now)
            }
        };
        if !self.native_ready {
            return self.reject_new(
                msg,
                OrdRejReason::ExchangeClosed,
                "exchange session not available",
                now,
            );
        }
        if self
            .table
            .by_cl_ord_id(d.cl_ord_id)
            .is_some_and(|i| self.table.live(i))
        {
            return self.reject_new(
                msg,
                OrdRejReason::DuplicateOrder,
                "ClOrdID of a live order",
                now,
            );
        }
        let n = match self.native_terms(&d.terms) {
            Ok(n) => n,
            Err((reason, text)) => return self.reject_new(msg, reason, text, now),
        };
        let (stop_price, display_qty) = match self.native_extras(n.instrument, &extras) {
            Ok(x) => x,
            Err((reason, text)) => return self.reject_new(msg, reason, text, now),
        };
        let native = self.table.native_id();
        let spec = &self.instruments[n.instrument];
        let (trail, trail_unit, trigger) = trigger_fields(d.terms.ord_type, stop_price, &extras);
        if stop_price == 0 && display_qty == 0 && trail == 0 {
            push_native(
                &mut self.native_out,
                &NewOrder {
                    client_order_id: ClientOrderId(native),
                    price: Price::from_raw(n.price),
                    qty: Qty::from_raw(n.qty),
                    expire_at: Timestamp(n.expire_at),
                    instrument: InstrumentId(spec.id),
                    side: d.terms.side.to_peregrine(),
                    order_type: n.order_type,
                    tif: n.tif,
                    stp: n.stp,
                },
            );
        } else {
            // A stop (FIX's stop triggers against the order: a stop-loss), a
            // stop-limit, a trailing stop (ExecInst a), or an iceberg: protocol
            // version 3's NewOrderExt.
            push_native(
                &mut self.native_out,
                &NewOrderExt {
                    client_order_id: ClientOrderId(native),
                    price: Price::from_raw(n.price),
                    qty: Qty::from_raw(n.qty),
                    expire_at: Timestamp(n.expire_at),
                    stop_price: Price::from_raw(stop_price),
                    display_qty: Qty::from_raw(display_qty),
                    instrument: InstrumentId(spec.id),
                    trail,
                    side: d.terms.side.to_peregrine(),
                    order_type: n.order_type,
                    tif: n.tif,
                    stp: n.stp,
                    trigger,
                    trail_unit,
                    reserved: Pad,
                },
            );
        }
        self.table.insert(
            Order {
                cl_ord_id: d.cl_ord_id.to_vec(),
                instrument: n.instrument,
                side: d.terms.side,
                ord_type: d.terms.ord_type,
                tif: d.terms.time_in_force,
                order_id: 0,
                qty: n.qty,
                price: n.price,
                state: None,
            },
            native,
        );
        Ok(())
    }

    /// An OrderCancelReject for a request refused before it reached the exchange.
    #[allow(clippy::too_many_arguments, reason = "one FIX message's fields")]
    fn cancel_reject(
        &mut self,
        order: Option<usize>,
        cl: &[u8],
        orig: &[u8],
        to: CxlRejResponseTo,
        reason: CxlRejReason,
        text: &str,
        now: u64,
    ) -> Result<(), Refusal> {
        let (order_id, ord_status) = match order {
            Some(i) => {
                let o = self.table.order(i);
                (o.order_id, o.state.map_or(OrdStatus::New, |s| s.status))
            }
            None => (0, OrdStatus::Rejected),
        };
        let r = OrderCancelReject {
            order_id,
            cl_ord_id: cl,
            orig_cl_ord_id: orig,
            ord_status,
            response_to: to,
            reason,
            text: Some(text),
        };
        self.session.send_app(b"9", now, |w| r.encode(w))?;
        Ok(())
    }

    /// The order a cancel or replace names, if it can be acted on now.
    fn target(&self, orig: &[u8]) -> Result<usize, (Option<usize>, CxlRejReason, &'static str)> {
        let i = self.table.by_cl_ord_id(orig).ok_or((
            None,
            CxlRejReason::UnknownOrder,
            "unknown order",
        ))?;
        let o = self.table.order(i);
        match o.state {
            None => Err((
                Some(i),
                CxlRejReason::Other,
                "order not yet acknowledged by the exchange",
            )),
            Some(s) if !s.is_open() => Err((Some(i), CxlRejReason::TooLate, "order is done")),
            Some(_) if !self.native_ready => Err((
                Some(i),
                CxlRejReason::ExchangeOption,
                "exchange session not available",
            )),
            Some(_) => Ok(i),
        }
    }

    fn cancel(&mut self, msg: &Message<'_>, now: u64) -> Result<(), Refusal> {
        let f = OrderCancelRequest::decode(msg).map_err(Refusal::from_app)?;
        let i = match self.target(f.orig_cl_ord_id) {
            Ok(i) => i,
            Err((order, reason, text)) => {
                return self.cancel_reject(
                    order,
                    f.cl_ord_id,
                    f.orig_cl_ord_id,
                    CxlRejResponseTo::Cancel,
                    reason,
                    text,
                    now,
                )
            }
        };
        let native = self.table.native_id();
        let o = self.table.order(i);
        push_native(
            &mut self.native_out,
            &Cancel {
                client_order_id: ClientOrderId(native),
                order_id: OrderId(o.order_id),
                instrument: InstrumentId(self.instruments[o.instrument].id),
            },
        );
        self.table.set_pending(
            native,
            Pending::Cancel {
                order: i,
                cl_ord_id: f.cl_ord_id.to_vec(),
                orig: f.orig_cl_ord_id.to_vec(),
            },
        );
        Ok(())
    }

    fn replace(&mut self, msg: &Message<'_>, now: u64) -> Result<(), Refusal> {
        let g = match OrderCancelReplaceRequest::decode(msg) {
            Ok(g) => g,
            Err(AppError::Field(e)) => return Err(Refusal::Field(e)),
            Err(AppError::Unsupported { text, .. }) => {
                let (cl, orig) = (raw(msg, tags::CL_ORD_ID), raw(msg, tags::ORIG_CL_ORD_ID));
                return self.cancel_reject(
                    None,
                    cl,
                    orig,
                    CxlRejResponseTo::Replace,
                    CxlRejReason::ExchangeOption,
                    text,
                    now,
                );
            }
        };
        let refuse = |b: &mut Bridge, order, reason, text| {
            b.cancel_reject(
                order,
                g.cl_ord_id,
                g.orig_cl_ord_id,
                CxlRejResponseTo::Replace,
                reason,
                text,
                now,
            )
        };
        let i = match self.target(g.orig_cl_ord_id) {
            Ok(i) => i,
            Err((order, reason, text)) => return refuse(self, order, reason, text),
        };
        let n = match self.native_terms(&g.terms) {
            Ok(n) => n,
            Err((_, text)) => return refuse(self, Some(i), CxlRejReason::ExchangeOption, text),
        };
        let o = self.table.order(i);
        let state = o.state.expect("target() checked it was accepted");
        if n.instrument != o.instrument || g.terms.side != o.side || g.terms.ord_type != o.ord_type
        {
            return refuse(
                self,
                Some(i),
                CxlRejReason::ExchangeOption,
                "Symbol, Side and OrdType cannot change",
            );
        }
        let open = n.qty - state.cum_qty;
        if open <= 0 {
            return refuse(
                self,
                Some(i),
                CxlRejReason::ExchangeOption,
                "OrderQty not above CumQty",
            );
        }
        let (order_id, instrument) = (o.order_id, self.instruments[o.instrument].id);
        let native = self.table.native_id();
        push_native(
            &mut self.native_out,
            &Replace {
                client_order_id: ClientOrderId(native),
                order_id: OrderId(order_id),
                new_price: Price::from_raw(n.price),
                new_qty: Qty::from_raw(open),
                instrument: InstrumentId(instrument),
            },
        );
        self.table.alias(native, i);
        self.table.set_pending(
            native,
            Pending::Replace {
                order: i,
                cl_ord_id: g.cl_ord_id.to_vec(),
                orig: g.orig_cl_ord_id.to_vec(),
            },
        );
        Ok(())
    }
}

/// Why a request got no native message.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// Malformed: a session-level Reject.
    Field(FieldError),
    /// The store failed.
    Store(peregrine_fix::store::StoreError),
}

impl Refusal {
    pub(super) fn from_app(e: AppError) -> Refusal {
        match e {
            AppError::Field(f) => Refusal::Field(f),
            // F and H have no "unsupported" cases; treat any as malformed.
            AppError::Unsupported { tag, .. } => Refusal::Field(FieldError::Value(tag)),
        }
    }
}

impl From<peregrine_fix::store::StoreError> for Refusal {
    fn from(e: peregrine_fix::store::StoreError) -> Self {
        Refusal::Store(e)
    }
}
