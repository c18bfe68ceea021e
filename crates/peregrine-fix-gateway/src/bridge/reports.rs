//! Native reports (protocol v2) → FIX reports.

use peregrine_fix::app::{
    CxlRejReason, CxlRejResponseTo, ExecutionReport, OrderCancelReject, OrderMassCancelReport,
    OrderState, Transition,
};
use peregrine_fix::codec::Precision;
use peregrine_fix::store::StoreError;
use peregrine_wire::v2::Outbound;

use super::orders::Pending;
use super::Bridge;
use crate::reasons;

impl Bridge {
    /// A message of the account's report stream, or an unsequenced answer
    /// (`report_seq` 0), from the exchange. A report already processed (the stream
    /// replays from the stored position) is skipped. Then the change is stored.
    pub fn on_native(&mut self, msg: &Outbound, now: u64) -> Result<(), StoreError> {
        let seq = msg.report().map(|(_, seq)| seq);
        if let Some(seq) = seq {
            if self.next_report != 0 && seq < self.next_report {
                return Ok(());
            }
        }
        self.current_report = seq;
        let r = self.translate(msg, now);
        self.current_report = None;
        if let Some(seq) = seq {
            self.next_report = seq + 1;
        }
        self.checkpoint();
        r
    }

    fn translate(&mut self, msg: &Outbound, now: u64) -> Result<(), StoreError> {
        match msg {
            Outbound::Accepted(m) => {
                let native = m.client_order_id.0;
                let Some(i) = self.take_new(native) else {
                    return Ok(());
                };
                let o = self.table.order_mut(i);
                o.order_id = m.order_id.0;
                let (state, t) = OrderState::accepted(m.qty.lots(), m.price.units());
                o.state = Some(state);
                self.report(i, t, None, None, None, now)
            }
            // A stop, stop-limit, iceberg or a list's leg (protocol version 3):
            // accepted like any order (a parked stop, or an OTO's pending leg, is New
            // until it triggers or is released).
            Outbound::AcceptedExt(m) => {
                let native = m.client_order_id.0;
                let Some(i) = self.take_new(native) else {
                    return Ok(());
                };
                let o = self.table.order_mut(i);
                o.order_id = m.order_id.0;
                let (state, t) = OrderState::accepted(m.qty.lots(), m.price.units());
                o.state = Some(state);
                self.report(i, t, None, None, None, now)
            }
            // Its trigger was reached: ExecType D (Restated), ExecRestatementReason 8.
            Outbound::Triggered(m) => {
                let Some(i) = self.table.by_native(m.client_order_id.0) else {
                    return Ok(());
                };
                let Some(state) = self.table.order(i).state else {
                    return Ok(());
                };
                let t = state.triggered();
                self.report(i, t, None, None, Some("triggered"), now)
            }
            Outbound::Rejected(m) => {
                let native = m.client_order_id.0;
                let Some(i) = self.take_new(native) else {
                    return Ok(());
                };
                let o = self.table.order_mut(i);
                let (state, t) = OrderState::rejected(o.qty, o.price);
                o.state = Some(state);
                let (reason, text) = reasons::order_reject(m.reason.0);
                self.report(i, t, None, Some(reason), Some(text), now)
            }
            Outbound::Fill(m) => {
                let Some(i) = self.table.by_native(m.client_order_id.0) else {
                    return Ok(());
                };
                let Some(state) = self.table.order_mut(i).state.as_mut() else {
                    return Ok(());
                };
                let t = state.fill(m.price.units(), m.qty.lots(), m.leaves_qty.lots());
                // The venue's fee for this fill (negative: a rebate) as Commission.
                self.report_with(i, t, None, None, None, Some(m.fee), now)
            }
            Outbound::Cancelled(m) => {
                let request = m.request_id.0;
                let Some(i) = self.table.by_native(m.client_order_id.0) else {
                    return Ok(());
                };
                let (expired, text) = reasons::cancelled(m.reason.0);
                let Some(state) = self.table.order_mut(i).state.as_mut() else {
                    return Ok(());
                };
                let t = state.cancelled(expired);
                match self.table.pending(request).cloned() {
                    Some(Pending::Cancel {
                        cl_ord_id, orig, ..
                    }) => {
                        self.table.take_pending(request);
                        self.report(i, t, Some((&cl_ord_id, &orig)), None, Some(text), now)
                    }
                    _ => self.report(i, t, None, None, Some(text), now),
                }
            }
            Outbound::Replaced(m) => {
                let native = m.client_order_id.0;
                let Some(Pending::Replace {
                    order,
                    cl_ord_id,
                    orig,
                }) = self.table.take_pending(native)
                else {
                    return Ok(());
                };
                self.table.renamed(order, cl_ord_id.clone(), native);
                let Some(state) = self.table.order_mut(order).state.as_mut() else {
                    return Ok(());
                };
                let t = state.replaced(m.new_price.units(), m.new_qty.lots());
                self.report(order, t, Some((&cl_ord_id, &orig)), None, None, now)
            }
            Outbound::CancelRejected(m) => {
                let native = m.client_order_id.0;
                let (reason, text) = reasons::cancel_reject(m.reason.0);
                match (self.table.take_pending(native), m.request_kind) {
                    (
                        Some(Pending::Cancel {
                            order,
                            cl_ord_id,
                            orig,
                        }),
                        _,
                    ) => self.native_cancel_reject(
                        order,
                        &cl_ord_id,
                        &orig,
                        CxlRejResponseTo::Cancel,
                        reason,
                        text,
                        now,
                    ),
                    (
                        Some(Pending::Replace {
                            order,
                            cl_ord_id,
                            orig,
                        }),
                        _,
                    ) => self.native_cancel_reject(
                        order,
                        &cl_ord_id,
                        &orig,
                        CxlRejResponseTo::Replace,
                        reason,
                        text,
                        now,
                    ),
                    (Some(p @ Pending::Mass { .. }), _) => {
                        self.mass_done(&p, None, Some(text), now)
                    }
                    (Some(Pending::CancelList { list }), _) => {
                        let id = self.table.list(list).list_id.clone();
                        self.list_request_reject(
                            0,
                            b"K",
                            &id,
                            peregrine_fix::app::BusinessRejectReason::Other,
                            text,
                            now,
                        )
                    }
                    (Some(other), _) => {
                        self.table.set_pending(native, other);
                        Ok(())
                    }
                    (None, _) => Ok(()),
                }
            }
            Outbound::ListStatus(m) => self.on_list_status(m, now),
            Outbound::MassCancelDone(m) => match self.table.take_pending(m.request_id.0) {
                Some(p @ Pending::Mass { .. }) => {
                    self.mass_done(&p, Some(u64::from(m.cancelled)), None, now)
                }
                Some(other) => {
                    self.table.set_pending(m.request_id.0, other);
                    Ok(())
                }
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }

    /// The OrderMassCancelReport of mass cancel `p`: accepted with the exchange's
    /// count, or refused (`count` None) with `text`.
    pub(super) fn mass_done(
        &mut self,
        p: &Pending,
        count: Option<u64>,
        text: Option<&str>,
        now: u64,
    ) -> Result<(), StoreError> {
        let Pending::Mass {
            cl_ord_id,
            scope,
            symbol,
            side,
        } = p
        else {
            return Ok(());
        };
        let order_id = self.current_report.unwrap_or_else(|| self.table.exec_id());
        let r = OrderMassCancelReport {
            cl_ord_id,
            order_id,
            scope: *scope,
            accepted: count.is_some(),
            total_affected: count,
            reject_reason: if count.is_some() { None } else { Some(99) },
            symbol: symbol.as_deref(),
            side: *side,
            text,
        };
        self.session.send_app(b"r", now, |w| r.encode(w))?;
        Ok(())
    }

    fn take_new(&mut self, native: u64) -> Option<usize> {
        match self.table.take_pending(native) {
            Some(Pending::New { order }) => Some(order),
            Some(other) => {
                self.table.set_pending(native, other);
                None
            }
            None => None,
        }
    }

    /// An ExecutionReport about order `i` after transition `t`; `ids` = (ClOrdID,
    /// OrigClOrdID) of the cancel or replace that caused it.
    fn report(
        &mut self,
        i: usize,
        t: Transition,
        ids: Option<(&[u8], &[u8])>,
        rej: Option<peregrine_fix::app::OrdRejReason>,
        text: Option<&str>,
        now: u64,
    ) -> Result<(), StoreError> {
        self.report_with(i, t, ids, rej, text, None, now)
    }

    /// [`Bridge::report`], with a fill's fee as Commission (12) / CommType (13).
    #[allow(clippy::too_many_arguments, reason = "one FIX message's fields")]
    fn report_with(
        &mut self,
        i: usize,
        t: Transition,
        ids: Option<(&[u8], &[u8])>,
        rej: Option<peregrine_fix::app::OrdRejReason>,
        text: Option<&str>,
        commission: Option<i64>,
        now: u64,
    ) -> Result<(), StoreError> {
        let exec_id = self.exec_id();
        let o = self.table.order(i);
        let Some(s) = o.state else { return Ok(()) };
        let spec = &self.instruments[o.instrument];
        let (cl, orig) = match ids {
            Some((cl, orig)) => (cl, Some(orig)),
            None => (o.cl_ord_id.as_slice(), None),
        };
        let er = ExecutionReport {
            order_id: o.order_id,
            cl_ord_id: cl,
            orig_cl_ord_id: orig,
            exec_id: exec_id.as_bytes(),
            exec_type: t.exec_type,
            ord_status: t.ord_status,
            symbol: spec.symbol.as_bytes(),
            side: o.side,
            ord_type: Some(o.ord_type),
            time_in_force: Some(o.tif),
            order_qty: Some(s.order_qty),
            price: Some(s.price),
            last: t.last,
            leaves_qty: s.leaves_qty,
            cum_qty: s.cum_qty,
            notional: s.notional,
            ord_rej_reason: rej,
            text,
            ord_status_req_id: None,
            transact_time: now,
            price_decimals: spec.price_decimals,
            qty_decimals: spec.qty_decimals,
        };
        self.session.send_app(b"8", now, |w| {
            er.encode_with_commission(w, Precision::Millis, commission)
        })?;
        Ok(())
    }

    #[allow(clippy::too_many_arguments, reason = "one FIX message's fields")]
    fn native_cancel_reject(
        &mut self,
        order: usize,
        cl: &[u8],
        orig: &[u8],
        to: CxlRejResponseTo,
        reason: CxlRejReason,
        text: &str,
        now: u64,
    ) -> Result<(), StoreError> {
        let o = self.table.order(order);
        let r = OrderCancelReject {
            order_id: o.order_id,
            cl_ord_id: cl,
            orig_cl_ord_id: orig,
            ord_status: o
                .state
                .map_or(peregrine_fix::app::OrdStatus::New, |s| s.status),
            response_to: to,
            reason,
            text: Some(text),
        };
        self.session.send_app(b"9", now, |w| r.encode(w))?;
        Ok(())
    }

    /// Answers every request in flight as failed (the native session dropped).
    pub(crate) fn fail_pending(&mut self, now: u64) {
        for (_, p) in self.table.drain_pending() {
            let _ = match p {
                // A list's leg: its list's answer (below, or before) said it.
                Pending::New { order } if self.table.order(order).state.is_some() => Ok(()),
                Pending::New { order } => {
                    let o = self.table.order_mut(order);
                    let (state, t) = OrderState::rejected(o.qty, o.price);
                    o.state = Some(state);
                    self.report(
                        order,
                        t,
                        None,
                        Some(peregrine_fix::app::OrdRejReason::Other),
                        Some("the exchange never received the order (its session was lost first)"),
                        now,
                    )
                }
                Pending::Cancel {
                    order,
                    cl_ord_id,
                    orig,
                } => self.native_cancel_reject(
                    order,
                    &cl_ord_id,
                    &orig,
                    CxlRejResponseTo::Cancel,
                    CxlRejReason::Other,
                    "the exchange never received the request (its session was lost first)",
                    now,
                ),
                Pending::Replace {
                    order,
                    cl_ord_id,
                    orig,
                } => self.native_cancel_reject(
                    order,
                    &cl_ord_id,
                    &orig,
                    CxlRejResponseTo::Replace,
                    CxlRejReason::Other,
                    "the exchange never received the request (its session was lost first)",
                    now,
                ),
                Pending::List { list } => self.list_rejected(
                    list,
                    "the exchange never received the list (its session was lost first)",
                    now,
                ),
                Pending::CancelList { list } => {
                    let id = self.table.list(list).list_id.clone();
                    self.list_request_reject(
                        0,
                        b"K",
                        &id,
                        peregrine_fix::app::BusinessRejectReason::Other,
                        "the exchange never received the request (its session was lost first)",
                        now,
                    )
                }
                p @ Pending::Mass { .. } => self.mass_done(
                    &p,
                    None,
                    Some("the exchange never received the request (its session was lost first)"),
                    now,
                ),
            };
        }
    }
}
