//! Native reports → FIX reports.

use peregrine_fix::app::{
    CxlRejReason, CxlRejResponseTo, ExecutionReport, OrderCancelReject, OrderState, Transition,
};
use peregrine_fix::codec::Precision;
use peregrine_fix::store::StoreError;
use peregrine_wire::{Outbound, RequestKind};

use super::orders::Pending;
use super::Bridge;
use crate::reasons;

impl Bridge {
    /// A report from the exchange.
    pub fn on_native(&mut self, msg: &Outbound, now: u64) -> Result<(), StoreError> {
        match msg {
            Outbound::Accepted(m) => {
                let native = m.client_order_id.0;
                let Some(i) = self.take_new(native) else {
                    return Ok(());
                };
                let o = &mut self.table.orders[i];
                o.order_id = m.order_id.0;
                let (state, t) = OrderState::accepted(m.qty.lots(), m.price.units());
                o.state = Some(state);
                self.report(i, t, None, None, None, now)
            }
            Outbound::Rejected(m) => {
                let native = m.client_order_id.0;
                let Some(i) = self.take_new(native) else {
                    return Ok(());
                };
                let o = &mut self.table.orders[i];
                let (state, t) = OrderState::rejected(o.qty, o.price);
                o.state = Some(state);
                let (reason, text) = reasons::order_reject(m.reason.0);
                self.report(i, t, None, Some(reason), Some(text), now)
            }
            Outbound::Fill(m) => {
                let Some(i) = self.table.by_native(m.client_order_id.0) else {
                    return Ok(());
                };
                let Some(state) = self.table.orders[i].state.as_mut() else {
                    return Ok(());
                };
                let t = state.fill(m.price.units(), m.qty.lots(), m.leaves_qty.lots());
                self.report(i, t, None, None, None, now)
            }
            Outbound::Cancelled(m) => {
                let request = m.request_id.0;
                let Some(i) = self.table.by_native(m.client_order_id.0) else {
                    return Ok(());
                };
                let (expired, text) = reasons::cancelled(m.reason.0);
                let Some(state) = self.table.orders[i].state.as_mut() else {
                    return Ok(());
                };
                let t = state.cancelled(expired);
                match self.table.pending.get(&request).cloned() {
                    Some(Pending::Cancel {
                        cl_ord_id, orig, ..
                    }) => {
                        self.table.pending.remove(&request);
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
                }) = self.table.pending.remove(&native)
                else {
                    return Ok(());
                };
                self.table.renamed(order, cl_ord_id.clone(), native);
                let Some(state) = self.table.orders[order].state.as_mut() else {
                    return Ok(());
                };
                let t = state.replaced(m.new_price.units(), m.new_qty.lots());
                self.report(order, t, Some((&cl_ord_id, &orig)), None, None, now)
            }
            Outbound::CancelRejected(m) => {
                let native = m.client_order_id.0;
                let (reason, text) = reasons::cancel_reject(m.reason.0);
                match (self.table.pending.remove(&native), m.request_kind) {
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
                    (_, RequestKind::MassCancel) => Ok(()), // the report already went; nothing changed
                    _ => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }

    fn take_new(&mut self, native: u64) -> Option<usize> {
        match self.table.pending.remove(&native) {
            Some(Pending::New { order }) => Some(order),
            Some(other) => {
                self.table.pending.insert(native, other);
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
        let exec_id = self.table.exec_id();
        let o = &self.table.orders[i];
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
            exec_id,
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
        self.session
            .send_app(b"8", now, |w| er.encode(w, Precision::Millis))?;
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
        let o = &self.table.orders[order];
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
        let pending: Vec<(u64, Pending)> = self.table.pending.drain().collect();
        for (_, p) in pending {
            let _ = match p {
                Pending::New { order } => {
                    let o = &mut self.table.orders[order];
                    let (state, t) = OrderState::rejected(o.qty, o.price);
                    o.state = Some(state);
                    self.report(
                        order,
                        t,
                        None,
                        Some(peregrine_fix::app::OrdRejReason::Other),
                        Some("exchange session lost before the order was acknowledged; its fate is unknown"),
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
                    "exchange session lost",
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
                    "exchange session lost",
                    now,
                ),
                Pending::Mass => Ok(()),
            };
        }
    }
}
