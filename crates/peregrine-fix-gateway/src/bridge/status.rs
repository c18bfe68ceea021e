//! OrderStatusRequest, answered from the gateway's own state of the order.

use peregrine_fix::app::{ExecType, ExecutionReport, OrdRejReason, OrdStatus, OrderStatusRequest};
use peregrine_fix::codec::Message;

use super::requests::{Refusal, P};
use super::Bridge;

impl Bridge {
    pub(super) fn status(&mut self, msg: &Message<'_>, now: u64) -> Result<(), Refusal> {
        let h = OrderStatusRequest::decode(msg).map_err(Refusal::from_app)?;
        let exec_id = self.gateway_exec_id();
        let found = self.table.by_cl_ord_id(h.cl_ord_id).and_then(|i| {
            let o = self.table.order(i);
            o.state.map(|s| (o, s))
        });
        let Some((o, s)) = found else {
            let er = ExecutionReport {
                order_id: 0,
                cl_ord_id: h.cl_ord_id,
                orig_cl_ord_id: None,
                exec_id: exec_id.as_bytes(),
                exec_type: ExecType::OrderStatus,
                ord_status: OrdStatus::Rejected,
                symbol: h.symbol,
                side: h.side,
                ord_type: None,
                time_in_force: None,
                order_qty: None,
                price: None,
                last: None,
                leaves_qty: 0,
                cum_qty: 0,
                notional: 0,
                ord_rej_reason: Some(OrdRejReason::UnknownOrder),
                text: Some("unknown order"),
                ord_status_req_id: h.req_id,
                transact_time: now,
                price_decimals: 0,
                qty_decimals: 0,
            };
            self.session.send_app(b"8", now, |w| er.encode(w, P))?;
            return Ok(());
        };
        let spec = &self.instruments[o.instrument];
        let t = s.status_report();
        let er = ExecutionReport {
            order_id: o.order_id,
            cl_ord_id: &o.cl_ord_id,
            orig_cl_ord_id: None,
            exec_id: exec_id.as_bytes(),
            exec_type: t.exec_type,
            ord_status: t.ord_status,
            symbol: spec.symbol.as_bytes(),
            side: o.side,
            ord_type: Some(o.ord_type),
            time_in_force: Some(o.tif),
            order_qty: Some(s.order_qty),
            price: Some(s.price),
            last: None,
            leaves_qty: s.leaves_qty,
            cum_qty: s.cum_qty,
            notional: s.notional,
            ord_rej_reason: None,
            text: None,
            ord_status_req_id: h.req_id,
            transact_time: now,
            price_decimals: spec.price_decimals,
            qty_decimals: spec.qty_decimals,
        };
        self.session.send_app(b"8", now, |w| er.encode(w, P))?;
        Ok(())
    }
}
