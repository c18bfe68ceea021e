//! Requests a client sends (acceptor side decodes them; the initiator side encodes
//! them): NewOrderSingle (D), OrderCancelRequest (F), OrderCancelReplaceRequest (G),
//! OrderMassCancelRequest (q), OrderStatusRequest (H).

use crate::codec::{tags as t, Message, MessageWriter, Precision};

use super::enums::{MassCancelScope, OrdType, SelfMatchPrevention, Side, TimeInForce};
use super::fields::{collect, id, opt_enum, opt_time, req, req_enum, req_time, AppError};

/// MsgTypes of the requests.
pub mod msg_type {
    /// NewOrderSingle.
    pub const NEW_ORDER_SINGLE: &[u8] = b"D";
    /// OrderCancelRequest.
    pub const ORDER_CANCEL_REQUEST: &[u8] = b"F";
    /// OrderCancelReplaceRequest.
    pub const ORDER_CANCEL_REPLACE_REQUEST: &[u8] = b"G";
    /// OrderMassCancelRequest.
    pub const ORDER_MASS_CANCEL_REQUEST: &[u8] = b"q";
    /// OrderStatusRequest.
    pub const ORDER_STATUS_REQUEST: &[u8] = b"H";
}

/// The order terms shared by D and G. Quantities and prices stay decimal text until
/// the instrument (and so its precision) is known: see `fields::decimal_units`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderTerms<'a> {
    /// Symbol (55).
    pub symbol: &'a [u8],
    /// Side (54).
    pub side: Side,
    /// OrderQty (38), decimal text.
    pub order_qty: &'a [u8],
    /// OrdType (40).
    pub ord_type: OrdType,
    /// Price (44), decimal text: the limit, or a market order's protection price.
    pub price: Option<&'a [u8]>,
    /// TimeInForce (59); absent means GTC for a limit and IOC for a market order.
    pub time_in_force: TimeInForce,
    /// ExpireTime (126), ns since the epoch; required with GTD.
    pub expire_time: Option<u64>,
    /// ExecInst (18) contains 6 (participate, don't initiate): post-only.
    pub post_only: bool,
    /// Tag 2964; absent means no prevention.
    pub self_match: SelfMatchPrevention,
}

/// Decodes the terms from collected values `[55, 54, 38, 40, 44, 59, 126, 18, 2964]`.
pub(super) fn terms<'a>(v: [Option<&'a [u8]>; 9]) -> Result<OrderTerms<'a>, AppError> {
    let [symbol, side, qty, ord_type, price, tif, expire, exec_inst, stp] = v;
    let ord_type_raw = req(ord_type, t::ORD_TYPE)?;
    let ord_type = OrdType::from_value(ord_type_raw).ok_or(AppError::Unsupported {
        tag: t::ORD_TYPE,
        text: "OrdType not supported: 1 (market), 2 (limit), 3 (stop), 4 (stop-limit) or J (market if touched)",
    })?;
    let time_in_force = match tif {
        None if matches!(
            ord_type,
            OrdType::Market | OrdType::Stop | OrdType::MarketIfTouched
        ) =>
        {
            TimeInForce::Ioc
        }
        None => TimeInForce::Gtc,
        Some(v) => TimeInForce::from_value(v)
            .filter(|&f| f != TimeInForce::Day)
            .ok_or(AppError::Unsupported {
                tag: t::TIME_IN_FORCE,
                text: "TimeInForce not supported: 1 GTC, 3 IOC, 4 FOK or 6 GTD",
            })?,
    };
    let expire_time = opt_time(expire, t::EXPIRE_TIME)?;
    if time_in_force == TimeInForce::Gtd && expire_time.is_none() {
        return Err(AppError::Unsupported {
            tag: t::EXPIRE_TIME,
            text: "ExpireTime (126) required with TimeInForce 6 (GTD)",
        });
    }
    if matches!(ord_type, OrdType::Limit | OrdType::StopLimit) && price.is_none() {
        return Err(AppError::Unsupported {
            tag: t::PRICE,
            text: "Price (44) required for a limit or stop-limit order",
        });
    }
    let post_only = exec_inst_has(exec_inst, b"6");
    Ok(OrderTerms {
        symbol: id(symbol, t::SYMBOL)?,
        side: req_enum(side, t::SIDE, Side::from_value)?,
        order_qty: req(qty, t::ORDER_QTY)?,
        ord_type,
        price,
        time_in_force,
        expire_time,
        post_only,
        self_match: opt_enum(
            stp,
            t::SELF_MATCH_PREVENTION_INSTRUCTION,
            SelfMatchPrevention::from_value,
        )?
        .unwrap_or(SelfMatchPrevention::None),
    })
}

/// The tags of a new order's [`OrderExtras`]: StopPx, MaxFloor and the peg fields
/// of a trailing stop (read by [`terms_and_extras`] in this order).
pub(super) const EXTRA_TAGS: [u32; 5] = [
    t::STOP_PX,
    t::MAX_FLOOR,
    t::PEG_OFFSET_VALUE,
    t::PEG_MOVE_TYPE,
    t::PEG_OFFSET_TYPE,
];

/// A new order's terms (values of [`TERM_TAGS`]) and extras (of [`EXTRA_TAGS`]),
/// checked together: one implementation for the D and each order of an E.
pub(super) fn terms_and_extras<'a>(
    term: [Option<&'a [u8]>; 9],
    extra: [Option<&'a [u8]>; 5],
) -> Result<(OrderTerms<'a>, OrderExtras<'a>), AppError> {
    let [stop_px, max_floor, peg, peg_move, peg_type] = extra;
    let exec_inst = term[7];
    let terms = terms(term)?;
    let trail = trail_offset(exec_inst, peg, peg_move, peg_type, terms.ord_type, stop_px)?;
    let extras = OrderExtras::check(stop_px, max_floor, terms.ord_type, trail)?;
    Ok((terms, extras))
}

pub(super) const TERM_TAGS: [u32; 9] = [
    t::SYMBOL,
    t::SIDE,
    t::ORDER_QTY,
    t::ORD_TYPE,
    t::PRICE,
    t::TIME_IN_FORCE,
    t::EXPIRE_TIME,
    t::EXEC_INST,
    t::SELF_MATCH_PREVENTION_INSTRUCTION,
];

/// What a NewOrderSingle may add to its terms: a trigger, a trail and a display
/// quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OrderExtras<'a> {
    /// StopPx (99), decimal text: required with OrdType 3 and 4 (but for a
    /// trailing stop, which has none), refused otherwise.
    pub stop_px: Option<&'a [u8]>,
    /// MaxFloor (111), decimal text: the most shown at a time (an iceberg).
    pub max_floor: Option<&'a [u8]>,
    /// A trailing stop (ExecInst 18 contains `a`, Trailing Stop Peg): its offset.
    pub trail: Option<TrailOffset>,
}

/// A trailing stop's offset: PegOffsetValue (211) in the unit PegOffsetType (836)
/// names; always positive (the side says which way it trails).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrailOffset {
    /// The offset, a positive whole number of `unit`.
    pub value: u32,
    /// Ticks or basis points.
    pub unit: TrailOffsetUnit,
}

/// PegOffsetType (836) values a trailing stop may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrailOffsetUnit {
    /// 1: basis points of the watermark price.
    BasisPoints,
    /// 2: price ticks.
    Ticks,
}

/// ExecInst (18) holds `code` (its values are space-separated).
fn exec_inst_has(exec_inst: Option<&[u8]>, code: &[u8]) -> bool {
    exec_inst.is_some_and(|v| v.split(|&b| b == b' ').any(|c| c == code))
}

/// The trailing-stop fields of a D: ExecInst `a` with PegOffsetValue (211),
/// PegMoveType (835) and PegOffsetType (836); `None` when it is no trailing stop.
/// A peg field without ExecInst `a` is refused (Peregrine has no pegged orders),
/// and so is every combination the matching core cannot honour (`docs/fix.md`,
/// "Trailing stops").
pub(super) fn trail_offset(
    exec_inst: Option<&[u8]>,
    value: Option<&[u8]>,
    move_type: Option<&[u8]>,
    offset_type: Option<&[u8]>,
    ord_type: OrdType,
    stop_px: Option<&[u8]>,
) -> Result<Option<TrailOffset>, AppError> {
    let unsupported = |tag, text| Err(AppError::Unsupported { tag, text });
    if !exec_inst_has(exec_inst, b"a") {
        if value.is_some() || move_type.is_some() || offset_type.is_some() {
            // Refused, never ignored: the order would rest without the peg or
            // trail its sender asked for.
            return unsupported(
                t::PEG_OFFSET_VALUE,
                "PegOffsetValue (211), PegMoveType (835) and PegOffsetType (836) only with ExecInst (18) a (trailing stop): no pegged orders",
            );
        }
        return Ok(None);
    }
    if !matches!(ord_type, OrdType::Stop | OrdType::StopLimit) {
        return unsupported(
            t::EXEC_INST,
            "ExecInst (18) a (trailing stop) only with OrdType 3 (stop) or 4 (stop-limit)",
        );
    }
    if stop_px.is_some() {
        return unsupported(
            t::STOP_PX,
            "StopPx (99) not with a trailing stop: its trigger starts from the last trade price",
        );
    }
    let Some(value) = value else {
        return unsupported(
            t::PEG_OFFSET_VALUE,
            "PegOffsetValue (211) required with ExecInst (18) a (trailing stop)",
        );
    };
    match move_type {
        None | Some(b"0") => {}
        Some(_) => {
            return unsupported(
                t::PEG_MOVE_TYPE,
                "PegMoveType (835) must be 0 (floating): a trailing stop follows the market",
            )
        }
    }
    let unit = match offset_type {
        Some(b"1") => TrailOffsetUnit::BasisPoints,
        Some(b"2") => TrailOffsetUnit::Ticks,
        _ => {
            return unsupported(
                t::PEG_OFFSET_TYPE,
                "PegOffsetType (836) must be 1 (basis points) or 2 (ticks) for a trailing stop",
            )
        }
    };
    let value = match crate::codec::value::parse_u64(value) {
        Some(v) if v > 0 => match u32::try_from(v) {
            Ok(v) => v,
            Err(_) => return unsupported(t::PEG_OFFSET_VALUE, "PegOffsetValue (211) too large"),
        },
        _ => {
            return unsupported(
                t::PEG_OFFSET_VALUE,
                "PegOffsetValue (211) must be a positive whole number of basis points or ticks",
            )
        }
    };
    Ok(Some(TrailOffset { value, unit }))
}

impl<'a> OrderExtras<'a> {
    pub(super) fn check(
        stop_px: Option<&'a [u8]>,
        max_floor: Option<&'a [u8]>,
        ord_type: OrdType,
        trail: Option<TrailOffset>,
    ) -> Result<Self, AppError> {
        let stop = matches!(
            ord_type,
            OrdType::Stop | OrdType::StopLimit | OrdType::MarketIfTouched
        );
        if stop && stop_px.is_none() && trail.is_none() {
            return Err(AppError::Unsupported {
                tag: t::STOP_PX,
                text: "StopPx (99) required with OrdType 3 (stop), 4 (stop-limit) or J (market if touched)",
            });
        }
        if !stop && stop_px.is_some() {
            return Err(AppError::Unsupported {
                tag: t::STOP_PX,
                text: "StopPx (99) only with OrdType 3 (stop), 4 (stop-limit) or J (market if touched)",
            });
        }
        Ok(OrderExtras {
            stop_px,
            max_floor,
            trail,
        })
    }
}

/// NewOrderSingle (D).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewOrderSingle<'a> {
    /// ClOrdID (11).
    pub cl_ord_id: &'a [u8],
    /// Account (1), if given.
    pub account: Option<&'a [u8]>,
    /// TransactTime (60).
    pub transact_time: u64,
    /// The order.
    pub terms: OrderTerms<'a>,
}

impl<'a> NewOrderSingle<'a> {
    /// Decodes a D (StopPx and MaxFloor checked, and dropped: see
    /// [`NewOrderSingle::decode_with_extras`]).
    pub fn decode(msg: &Message<'a>) -> Result<Self, AppError> {
        Self::decode_with_extras(msg).map(|(d, _)| d)
    }

    /// Decodes a D with its StopPx (99) and MaxFloor (111), in one pass.
    pub fn decode_with_extras(msg: &Message<'a>) -> Result<(Self, OrderExtras<'a>), AppError> {
        let [cl, account, time, a, b, c, d, e, f, g, h, i, stop_px, max_floor, peg, peg_move, peg_type] =
            collect(
                msg,
                [
                    t::CL_ORD_ID,
                    t::ACCOUNT,
                    t::TRANSACT_TIME,
                    TERM_TAGS[0],
                    TERM_TAGS[1],
                    TERM_TAGS[2],
                    TERM_TAGS[3],
                    TERM_TAGS[4],
                    TERM_TAGS[5],
                    TERM_TAGS[6],
                    TERM_TAGS[7],
                    TERM_TAGS[8],
                    EXTRA_TAGS[0],
                    EXTRA_TAGS[1],
                    EXTRA_TAGS[2],
                    EXTRA_TAGS[3],
                    EXTRA_TAGS[4],
                ],
            )?;
        let cl_ord_id = id(cl, t::CL_ORD_ID)?;
        let transact_time = req_time(time, t::TRANSACT_TIME)?;
        let (terms, extras) = terms_and_extras(
            [a, b, c, d, e, f, g, h, i],
            [stop_px, max_floor, peg, peg_move, peg_type],
        )?;
        let d = NewOrderSingle {
            cl_ord_id,
            account,
            transact_time,
            terms,
        };
        Ok((d, extras))
    }

    /// Writes a D's body.
    pub fn encode(&self, w: &mut MessageWriter<'_>, precision: Precision) {
        w.bytes(t::CL_ORD_ID, self.cl_ord_id);
        if let Some(a) = self.account {
            w.bytes(t::ACCOUNT, a);
        }
        write_terms(w, &self.terms, precision);
        w.timestamp(t::TRANSACT_TIME, self.transact_time, precision);
    }
}

fn write_terms(w: &mut MessageWriter<'_>, o: &OrderTerms<'_>, precision: Precision) {
    w.bytes(t::SYMBOL, o.symbol)
        .char(t::SIDE, o.side.byte())
        .bytes(t::ORDER_QTY, o.order_qty)
        .char(t::ORD_TYPE, o.ord_type.byte());
    if let Some(p) = o.price {
        w.bytes(t::PRICE, p);
    }
    w.char(t::TIME_IN_FORCE, o.time_in_force.byte());
    if let Some(e) = o.expire_time {
        w.timestamp(t::EXPIRE_TIME, e, precision);
    }
    if o.post_only {
        w.char(t::EXEC_INST, b'6');
    }
    if o.self_match != SelfMatchPrevention::None {
        w.char(t::SELF_MATCH_PREVENTION_INSTRUCTION, o.self_match.byte());
    }
}

/// OrderCancelRequest (F).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderCancelRequest<'a> {
    /// OrigClOrdID (41): the order's current ClOrdID.
    pub orig_cl_ord_id: &'a [u8],
    /// ClOrdID (11) of this request.
    pub cl_ord_id: &'a [u8],
    /// OrderID (37), if given.
    pub order_id: Option<&'a [u8]>,
    /// Symbol (55).
    pub symbol: &'a [u8],
    /// Side (54).
    pub side: Side,
    /// TransactTime (60).
    pub transact_time: u64,
}

impl<'a> OrderCancelRequest<'a> {
    /// Decodes an F.
    pub fn decode(msg: &Message<'a>) -> Result<Self, AppError> {
        let [orig, cl, order_id, symbol, side, time] = collect(
            msg,
            [
                t::ORIG_CL_ORD_ID,
                t::CL_ORD_ID,
                t::ORDER_ID,
                t::SYMBOL,
                t::SIDE,
                t::TRANSACT_TIME,
            ],
        )?;
        Ok(OrderCancelRequest {
            orig_cl_ord_id: id(orig, t::ORIG_CL_ORD_ID)?,
            cl_ord_id: id(cl, t::CL_ORD_ID)?,
            order_id,
            symbol: id(symbol, t::SYMBOL)?,
            side: req_enum(side, t::SIDE, Side::from_value)?,
            transact_time: req_time(time, t::TRANSACT_TIME)?,
        })
    }

    /// Writes an F's body.
    pub fn encode(&self, w: &mut MessageWriter<'_>, precision: Precision) {
        w.bytes(t::ORIG_CL_ORD_ID, self.orig_cl_ord_id)
            .bytes(t::CL_ORD_ID, self.cl_ord_id);
        if let Some(o) = self.order_id {
            w.bytes(t::ORDER_ID, o);
        }
        w.bytes(t::SYMBOL, self.symbol)
            .char(t::SIDE, self.side.byte())
            .timestamp(t::TRANSACT_TIME, self.transact_time, precision);
    }
}

/// OrderCancelReplaceRequest (G). OrderQty is the new *total* quantity (filled
/// included), as FIX defines it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderCancelReplaceRequest<'a> {
    /// OrigClOrdID (41).
    pub orig_cl_ord_id: &'a [u8],
    /// ClOrdID (11), the order's ClOrdID once replaced.
    pub cl_ord_id: &'a [u8],
    /// OrderID (37), if given.
    pub order_id: Option<&'a [u8]>,
    /// TransactTime (60).
    pub transact_time: u64,
    /// The new terms.
    pub terms: OrderTerms<'a>,
}

impl<'a> OrderCancelReplaceRequest<'a> {
    /// Decodes a G.
    pub fn decode(msg: &Message<'a>) -> Result<Self, AppError> {
        let [orig, cl, order_id, time, a, b, c, d, e, f, g, h, i] = collect(
            msg,
            [
                t::ORIG_CL_ORD_ID,
                t::CL_ORD_ID,
                t::ORDER_ID,
                t::TRANSACT_TIME,
                TERM_TAGS[0],
                TERM_TAGS[1],
                TERM_TAGS[2],
                TERM_TAGS[3],
                TERM_TAGS[4],
                TERM_TAGS[5],
                TERM_TAGS[6],
                TERM_TAGS[7],
                TERM_TAGS[8],
            ],
        )?;
        Ok(OrderCancelReplaceRequest {
            orig_cl_ord_id: id(orig, t::ORIG_CL_ORD_ID)?,
            cl_ord_id: id(cl, t::CL_ORD_ID)?,
            order_id,
            transact_time: req_time(time, t::TRANSACT_TIME)?,
            terms: terms([a, b, c, d, e, f, g, h, i])?,
        })
    }

    /// Writes a G's body.
    pub fn encode(&self, w: &mut MessageWriter<'_>, precision: Precision) {
        w.bytes(t::ORIG_CL_ORD_ID, self.orig_cl_ord_id)
            .bytes(t::CL_ORD_ID, self.cl_ord_id);
        if let Some(o) = self.order_id {
            w.bytes(t::ORDER_ID, o);
        }
        write_terms(w, &self.terms, precision);
        w.timestamp(t::TRANSACT_TIME, self.transact_time, precision);
    }
}

/// OrderMassCancelRequest (q).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderMassCancelRequest<'a> {
    /// ClOrdID (11).
    pub cl_ord_id: &'a [u8],
    /// MassCancelRequestType (530): 1 one symbol, 7 all orders.
    pub scope: MassCancelScope,
    /// Symbol (55), required with scope 1.
    pub symbol: Option<&'a [u8]>,
    /// Side (54): only this side, if given.
    pub side: Option<Side>,
    /// TransactTime (60).
    pub transact_time: u64,
}

impl<'a> OrderMassCancelRequest<'a> {
    /// Decodes a q.
    pub fn decode(msg: &Message<'a>) -> Result<Self, AppError> {
        let [cl, kind, symbol, side, time] = collect(
            msg,
            [
                t::CL_ORD_ID,
                t::MASS_CANCEL_REQUEST_TYPE,
                t::SYMBOL,
                t::SIDE,
                t::TRANSACT_TIME,
            ],
        )?;
        let scope = MassCancelScope::from_value(req(kind, t::MASS_CANCEL_REQUEST_TYPE)?).ok_or(
            AppError::Unsupported {
                tag: t::MASS_CANCEL_REQUEST_TYPE,
                text: "MassCancelRequestType not supported: 1 (symbol) or 7 (all)",
            },
        )?;
        if scope == MassCancelScope::Security && symbol.is_none() {
            return Err(AppError::Unsupported {
                tag: t::SYMBOL,
                text: "Symbol (55) required with MassCancelRequestType 1",
            });
        }
        Ok(OrderMassCancelRequest {
            cl_ord_id: id(cl, t::CL_ORD_ID)?,
            scope,
            symbol,
            side: opt_enum(side, t::SIDE, Side::from_value)?,
            transact_time: req_time(time, t::TRANSACT_TIME)?,
        })
    }

    /// Writes a q's body.
    pub fn encode(&self, w: &mut MessageWriter<'_>, precision: Precision) {
        w.bytes(t::CL_ORD_ID, self.cl_ord_id)
            .char(t::MASS_CANCEL_REQUEST_TYPE, self.scope.byte());
        if let Some(s) = self.symbol {
            w.bytes(t::SYMBOL, s);
        }
        if let Some(s) = self.side {
            w.char(t::SIDE, s.byte());
        }
        w.timestamp(t::TRANSACT_TIME, self.transact_time, precision);
    }
}

/// OrderStatusRequest (H).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderStatusRequest<'a> {
    /// ClOrdID (11): the order's.
    pub cl_ord_id: &'a [u8],
    /// OrderID (37), if given.
    pub order_id: Option<&'a [u8]>,
    /// Symbol (55).
    pub symbol: &'a [u8],
    /// Side (54).
    pub side: Side,
    /// OrdStatusReqID (790), echoed, if given.
    pub req_id: Option<&'a [u8]>,
}

impl<'a> OrderStatusRequest<'a> {
    /// Decodes an H.
    pub fn decode(msg: &Message<'a>) -> Result<Self, AppError> {
        let [cl, order_id, symbol, side, req_id] = collect(
            msg,
            [
                t::CL_ORD_ID,
                t::ORDER_ID,
                t::SYMBOL,
                t::SIDE,
                t::ORD_STATUS_REQ_ID,
            ],
        )?;
        Ok(OrderStatusRequest {
            cl_ord_id: id(cl, t::CL_ORD_ID)?,
            order_id,
            symbol: id(symbol, t::SYMBOL)?,
            side: req_enum(side, t::SIDE, Side::from_value)?,
            req_id,
        })
    }

    /// Writes an H's body.
    pub fn encode(&self, w: &mut MessageWriter<'_>) {
        w.bytes(t::CL_ORD_ID, self.cl_ord_id);
        if let Some(o) = self.order_id {
            w.bytes(t::ORDER_ID, o);
        }
        w.bytes(t::SYMBOL, self.symbol)
            .char(t::SIDE, self.side.byte());
        if let Some(r) = self.req_id {
            w.bytes(t::ORD_STATUS_REQ_ID, r);
        }
    }
}
