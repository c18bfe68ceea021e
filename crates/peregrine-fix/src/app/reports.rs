//! What a venue sends back: ExecutionReport (8), OrderCancelReject (9),
//! BusinessMessageReject (j), OrderMassCancelReport (r). Encoders for the acceptor
//! side (typed values, exact decimals) and decoders for the initiator side (views).

use crate::codec::{tags as t, FieldError, Message, MessageWriter, Precision};

use super::enums::{
    BusinessRejectReason, CxlRejReason, CxlRejResponseTo, ExecType, MassCancelScope, OrdRejReason,
    OrdStatus, OrdType, Side, TimeInForce,
};
use super::fields::{collect, id, opt_u64, req, req_enum, AppError};

/// MsgTypes of the reports.
pub mod msg_type {
    /// ExecutionReport.
    pub const EXECUTION_REPORT: &[u8] = b"8";
    /// OrderCancelReject.
    pub const ORDER_CANCEL_REJECT: &[u8] = b"9";
    /// BusinessMessageReject.
    pub const BUSINESS_MESSAGE_REJECT: &[u8] = b"j";
    /// OrderMassCancelReport.
    pub const ORDER_MASS_CANCEL_REPORT: &[u8] = b"r";
}

/// Digits of AvgPx beyond the instrument's price decimals.
pub const AVG_PX_EXTRA_DECIMALS: u32 = 4;

/// Writes an id that is a number, or `NONE` for 0 (FIX's "no OrderID yet").
fn write_id(w: &mut MessageWriter<'_>, tag: u32, id: u64) {
    if id == 0 {
        w.bytes(tag, b"NONE");
    } else {
        w.uint(tag, id);
    }
}

/// An ExecutionReport to send. Quantities and prices are units of the instrument's
/// `qty_decimals` / `price_decimals`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecutionReport<'a> {
    /// OrderID (37): the exchange order id (0 = none, written `NONE`).
    pub order_id: u64,
    /// ClOrdID (11).
    pub cl_ord_id: &'a [u8],
    /// OrigClOrdID (41), on cancels and replaces.
    pub orig_cl_ord_id: Option<&'a [u8]>,
    /// ExecID (17), unique per report across the venue (a FIX String).
    pub exec_id: &'a [u8],
    /// ExecType (150).
    pub exec_type: ExecType,
    /// OrdStatus (39).
    pub ord_status: OrdStatus,
    /// Symbol (55).
    pub symbol: &'a [u8],
    /// Side (54).
    pub side: Side,
    /// OrdType (40).
    pub ord_type: Option<OrdType>,
    /// TimeInForce (59).
    pub time_in_force: Option<TimeInForce>,
    /// OrderQty (38): total quantity, filled included.
    pub order_qty: Option<i64>,
    /// Price (44).
    pub price: Option<i64>,
    /// LastPx (31) and LastQty (32) of a fill.
    pub last: Option<(i64, i64)>,
    /// LeavesQty (151).
    pub leaves_qty: i64,
    /// CumQty (14).
    pub cum_qty: i64,
    /// Σ price × qty of the fills (AvgPx = this / CumQty).
    pub notional: i128,
    /// OrdRejReason (103), on rejects.
    pub ord_rej_reason: Option<OrdRejReason>,
    /// Text (58).
    pub text: Option<&'a str>,
    /// OrdStatusReqID (790), echoed on a status answer.
    pub ord_status_req_id: Option<&'a [u8]>,
    /// TransactTime (60), ns since the epoch.
    pub transact_time: u64,
    /// The instrument's price decimals.
    pub price_decimals: u32,
    /// The instrument's quantity decimals.
    pub qty_decimals: u32,
}

/// ExecRestatementReason (378) 8: Market (Exchange) Option.
pub(crate) const RESTATED_BY_THE_MARKET: u64 = 8;

/// CommType (13) 3: an absolute amount.
pub const COMM_TYPE_ABSOLUTE: u8 = b'3';

impl ExecutionReport<'_> {
    /// Writes the body.
    pub fn encode(&self, w: &mut MessageWriter<'_>, precision: Precision) {
        self.encode_with_commission(w, precision, None);
    }

    /// Writes the body, with a fill's fee as Commission (12) and CommType (13) = 3
    /// (absolute) when `commission` is given: an amount of the quote asset in units
    /// of 10^-(price decimals + quantity decimals) (a price unit times a quantity
    /// unit, as the venue charges it); negative for a rebate.
    pub fn encode_with_commission(
        &self,
        w: &mut MessageWriter<'_>,
        precision: Precision,
        commission: Option<i64>,
    ) {
        self.encode_body(w, precision, commission);
        if self.exec_type == ExecType::Restated {
            // Required with ExecType D: 8, Market (Exchange) Option (the venue's
            // trigger restated the order).
            w.uint(t::EXEC_RESTATEMENT_REASON, RESTATED_BY_THE_MARKET);
        }
    }

    fn encode_body(
        &self,
        w: &mut MessageWriter<'_>,
        precision: Precision,
        commission: Option<i64>,
    ) {
        let (pd, qd) = (self.price_decimals, self.qty_decimals);
        write_id(w, t::ORDER_ID, self.order_id);
        w.bytes(t::CL_ORD_ID, self.cl_ord_id);
        if let Some(o) = self.orig_cl_ord_id {
            w.bytes(t::ORIG_CL_ORD_ID, o);
        }
        w.bytes(t::EXEC_ID, self.exec_id)
            .char(t::EXEC_TYPE, self.exec_type.byte())
            .char(t::ORD_STATUS, self.ord_status.byte());
        if let Some(r) = self.ord_rej_reason {
            w.uint(t::ORD_REJ_REASON, r as u64);
        }
        w.bytes(t::SYMBOL, self.symbol)
            .char(t::SIDE, self.side.byte());
        if let Some(q) = self.order_qty {
            w.decimal(t::ORDER_QTY, q, qd);
        }
        if let Some(o) = self.ord_type {
            w.char(t::ORD_TYPE, o.byte());
        }
        if let Some(p) = self.price {
            w.decimal(t::PRICE, p, pd);
        }
        if let Some(f) = self.time_in_force {
            w.char(t::TIME_IN_FORCE, f.byte());
        }
        if let Some((px, qty)) = self.last {
            w.decimal(t::LAST_QTY, qty, qd).decimal(t::LAST_PX, px, pd);
        }
        if let Some(fee) = commission {
            w.decimal(t::COMMISSION, fee, pd + qd)
                .char(t::COMM_TYPE, COMM_TYPE_ABSOLUTE);
        }
        // AvgPx = Σ(px·qty)/CumQty; px·qty is in units of 10^-(pd+qd), CumQty of
        // 10^-qd, so the ratio is in 10^-pd units.
        w.decimal(t::LEAVES_QTY, self.leaves_qty, qd)
            .decimal(t::CUM_QTY, self.cum_qty, qd)
            .ratio(
                t::AVG_PX,
                self.notional,
                self.cum_qty,
                pd,
                AVG_PX_EXTRA_DECIMALS,
            )
            .timestamp(t::TRANSACT_TIME, self.transact_time, precision);
        if let Some(r) = self.ord_status_req_id {
            w.bytes(t::ORD_STATUS_REQ_ID, r);
        }
        if let Some(text) = self.text {
            w.text(t::TEXT, text);
        }
    }
}

/// An ExecutionReport as received (initiator side): values as text slices, enums
/// decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecutionReportView<'a> {
    /// OrderID (37).
    pub order_id: &'a [u8],
    /// ClOrdID (11).
    pub cl_ord_id: &'a [u8],
    /// OrigClOrdID (41).
    pub orig_cl_ord_id: Option<&'a [u8]>,
    /// ExecID (17).
    pub exec_id: &'a [u8],
    /// ExecType (150).
    pub exec_type: ExecType,
    /// OrdStatus (39).
    pub ord_status: OrdStatus,
    /// Side (54).
    pub side: Side,
    /// LeavesQty (151).
    pub leaves_qty: &'a [u8],
    /// CumQty (14).
    pub cum_qty: &'a [u8],
    /// OrderQty (38).
    pub order_qty: Option<&'a [u8]>,
    /// Price (44).
    pub price: Option<&'a [u8]>,
    /// LastPx (31).
    pub last_px: Option<&'a [u8]>,
    /// LastQty (32).
    pub last_qty: Option<&'a [u8]>,
    /// OrdRejReason (103).
    pub ord_rej_reason: Option<u64>,
    /// Text (58).
    pub text: Option<&'a [u8]>,
}

impl<'a> ExecutionReportView<'a> {
    /// Decodes an 8.
    pub fn decode(msg: &Message<'a>) -> Result<Self, AppError> {
        let [order_id, cl, orig, exec_id, exec_type, status, side, leaves, cum, qty, price, last_px, last_qty, rej, text] =
            collect(
                msg,
                [
                    t::ORDER_ID,
                    t::CL_ORD_ID,
                    t::ORIG_CL_ORD_ID,
                    t::EXEC_ID,
                    t::EXEC_TYPE,
                    t::ORD_STATUS,
                    t::SIDE,
                    t::LEAVES_QTY,
                    t::CUM_QTY,
                    t::ORDER_QTY,
                    t::PRICE,
                    t::LAST_PX,
                    t::LAST_QTY,
                    t::ORD_REJ_REASON,
                    t::TEXT,
                ],
            )?;
        Ok(ExecutionReportView {
            order_id: req(order_id, t::ORDER_ID)?,
            cl_ord_id: id(cl, t::CL_ORD_ID)?,
            orig_cl_ord_id: orig,
            exec_id: req(exec_id, t::EXEC_ID)?,
            exec_type: req_enum(exec_type, t::EXEC_TYPE, ExecType::from_value)?,
            ord_status: req_enum(status, t::ORD_STATUS, OrdStatus::from_value)?,
            side: req_enum(side, t::SIDE, Side::from_value)?,
            leaves_qty: req(leaves, t::LEAVES_QTY)?,
            cum_qty: req(cum, t::CUM_QTY)?,
            order_qty: qty,
            price,
            last_px,
            last_qty,
            ord_rej_reason: opt_u64(rej, t::ORD_REJ_REASON)?,
            text,
        })
    }
}

/// An OrderCancelReject (9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderCancelReject<'a> {
    /// OrderID (37) (0 = unknown, written `NONE`).
    pub order_id: u64,
    /// ClOrdID (11) of the refused request.
    pub cl_ord_id: &'a [u8],
    /// OrigClOrdID (41) of the refused request.
    pub orig_cl_ord_id: &'a [u8],
    /// OrdStatus (39) of the order now.
    pub ord_status: OrdStatus,
    /// CxlRejResponseTo (434).
    pub response_to: CxlRejResponseTo,
    /// CxlRejReason (102).
    pub reason: CxlRejReason,
    /// Text (58).
    pub text: Option<&'a str>,
}

impl OrderCancelReject<'_> {
    /// Writes the body.
    pub fn encode(&self, w: &mut MessageWriter<'_>) {
        write_id(w, t::ORDER_ID, self.order_id);
        w.bytes(t::CL_ORD_ID, self.cl_ord_id)
            .bytes(t::ORIG_CL_ORD_ID, self.orig_cl_ord_id)
            .char(t::ORD_STATUS, self.ord_status.byte())
            .char(t::CXL_REJ_RESPONSE_TO, self.response_to.byte())
            .uint(t::CXL_REJ_REASON, self.reason as u64);
        if let Some(text) = self.text {
            w.text(t::TEXT, text);
        }
    }
}

/// An OrderCancelReject as received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderCancelRejectView<'a> {
    /// ClOrdID (11).
    pub cl_ord_id: &'a [u8],
    /// OrigClOrdID (41).
    pub orig_cl_ord_id: &'a [u8],
    /// CxlRejResponseTo (434).
    pub response_to: CxlRejResponseTo,
    /// CxlRejReason (102).
    pub reason: Option<u64>,
}

impl<'a> OrderCancelRejectView<'a> {
    /// Decodes a 9.
    pub fn decode(msg: &Message<'a>) -> Result<Self, AppError> {
        let [cl, orig, to, reason] = collect(
            msg,
            [
                t::CL_ORD_ID,
                t::ORIG_CL_ORD_ID,
                t::CXL_REJ_RESPONSE_TO,
                t::CXL_REJ_REASON,
            ],
        )?;
        Ok(OrderCancelRejectView {
            cl_ord_id: id(cl, t::CL_ORD_ID)?,
            orig_cl_ord_id: id(orig, t::ORIG_CL_ORD_ID)?,
            response_to: req_enum(to, t::CXL_REJ_RESPONSE_TO, CxlRejResponseTo::from_value)?,
            reason: opt_u64(reason, t::CXL_REJ_REASON)?,
        })
    }
}

/// A BusinessMessageReject (j).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BusinessMessageReject<'a> {
    /// RefSeqNum (45).
    pub ref_seq: u64,
    /// RefMsgType (372).
    pub ref_msg_type: &'a [u8],
    /// BusinessRejectRefID (379), e.g. the ClOrdID.
    pub ref_id: Option<&'a [u8]>,
    /// BusinessRejectReason (380).
    pub reason: BusinessRejectReason,
    /// Text (58).
    pub text: &'a str,
}

impl BusinessMessageReject<'_> {
    /// Writes the body.
    pub fn encode(&self, w: &mut MessageWriter<'_>) {
        w.uint(t::REF_SEQ_NUM, self.ref_seq)
            .bytes(t::REF_MSG_TYPE, self.ref_msg_type);
        if let Some(id) = self.ref_id {
            w.bytes(t::BUSINESS_REJECT_REF_ID, id);
        }
        w.uint(t::BUSINESS_REJECT_REASON, self.reason as u64)
            .text(t::TEXT, self.text);
    }
}

/// An OrderMassCancelReport (r).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderMassCancelReport<'a> {
    /// ClOrdID (11) of the request.
    pub cl_ord_id: &'a [u8],
    /// OrderID (37): an id for this mass action.
    pub order_id: u64,
    /// MassCancelRequestType (530).
    pub scope: MassCancelScope,
    /// MassCancelResponse (531): the scope if accepted, `None` for rejected (0).
    pub accepted: bool,
    /// TotalAffectedOrders (533).
    pub total_affected: Option<u64>,
    /// MassCancelRejectReason (532) when rejected: 0 not supported, 1 unknown
    /// security, 99 other.
    pub reject_reason: Option<u16>,
    /// Symbol (55).
    pub symbol: Option<&'a [u8]>,
    /// Side (54).
    pub side: Option<Side>,
    /// Text (58).
    pub text: Option<&'a str>,
}

impl OrderMassCancelReport<'_> {
    /// Writes the body.
    pub fn encode(&self, w: &mut MessageWriter<'_>) {
        w.bytes(t::CL_ORD_ID, self.cl_ord_id);
        write_id(w, t::ORDER_ID, self.order_id);
        w.char(t::MASS_CANCEL_REQUEST_TYPE, self.scope.byte()).char(
            t::MASS_CANCEL_RESPONSE,
            if self.accepted {
                self.scope.byte()
            } else {
                b'0'
            },
        );
        if let Some(r) = self.reject_reason {
            w.uint(t::MASS_CANCEL_REJECT_REASON, u64::from(r));
        }
        if let Some(n) = self.total_affected {
            w.uint(t::TOTAL_AFFECTED_ORDERS, n);
        }
        if let Some(s) = self.symbol {
            w.bytes(t::SYMBOL, s);
        }
        if let Some(s) = self.side {
            w.char(t::SIDE, s.byte());
        }
        if let Some(text) = self.text {
            w.text(t::TEXT, text);
        }
    }
}

/// The fields of an OrderMassCancelReport the initiator side reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderMassCancelReportView<'a> {
    /// ClOrdID (11).
    pub cl_ord_id: &'a [u8],
    /// MassCancelResponse (531) was not 0.
    pub accepted: bool,
    /// TotalAffectedOrders (533).
    pub total_affected: Option<u64>,
}

impl<'a> OrderMassCancelReportView<'a> {
    /// Decodes an r.
    pub fn decode(msg: &Message<'a>) -> Result<Self, AppError> {
        let [cl, response, total] = collect(
            msg,
            [
                t::CL_ORD_ID,
                t::MASS_CANCEL_RESPONSE,
                t::TOTAL_AFFECTED_ORDERS,
            ],
        )?;
        let response = req(response, t::MASS_CANCEL_RESPONSE)?;
        if response.len() != 1 {
            return Err(FieldError::Value(t::MASS_CANCEL_RESPONSE).into());
        }
        Ok(OrderMassCancelReportView {
            cl_ord_id: id(cl, t::CL_ORD_ID)?,
            accepted: response != b"0",
            total_affected: opt_u64(total, t::TOTAL_AFFECTED_ORDERS)?,
        })
    }
}
