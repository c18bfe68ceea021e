//! Order lists: NewOrderList (E) → the native `NewOrderList`, ListCancelRequest (K)
//! → `CancelList`, the native `ListStatus` → ListStatus (N), ListStatusRequest (M) →
//! an N with the list's state as the gateway knows it. A list's legs are
//! orders of the table like any other: their ExecutionReports come from their own
//! native reports (`reports`), each with its ClOrdID from the E's group.

use peregrine_fix::app::{
    AppError, BusinessMessageReject, BusinessRejectReason, Contingency, ListCancelRequest,
    ListOrderStatus, ListStatus, ListStatusOrder, ListStatusRequest, NewOrderList, OrdStatus,
};
use peregrine_fix::codec::{tags, Message};
use peregrine_fix::store::StoreError;
use peregrine_types::{ClientOrderId, InstrumentId, ListKind, OrderId, Price, Qty, Timestamp};
use peregrine_wire::field::{ListLeg, ListState};
use peregrine_wire::v2::venue::{self as native, CancelList};

use super::orders::{List, ListPhase, Order, Pending};
use super::requests::{push_native, raw, trigger_fields, Refusal, P};
use super::Bridge;

/// ListID (66).
const LIST_ID: u32 = 66;

impl Bridge {
    pub(super) fn new_list(&mut self, msg: &Message<'_>, now: u64) -> Result<(), Refusal> {
        let list_id = raw(msg, LIST_ID);
        if msg.header.poss_resend && self.table.list_by_id(list_id).is_some() {
            return Ok(());
        }
        let e = match NewOrderList::decode(msg) {
            Ok(e) => e,
            Err(AppError::Field(e)) => return Err(Refusal::Field(e)),
            Err(AppError::Unsupported { text, .. }) => {
                return self.refuse_list(msg, text, now);
            }
        };
        if !self.native_ready {
            return self.refuse_list(msg, "exchange session not available", now);
        }
        if self.table.list_by_id(e.list_id).is_some_and(|l| {
            matches!(
                self.table.list(l).phase,
                ListPhase::Sent | ListPhase::Executing
            )
        }) {
            return self.refuse_list(msg, "ListID of a live list", now);
        }
        let orders: Vec<_> = e.orders.iter().flatten().copied().collect();
        let kind = match (e.contingency, orders.len()) {
            (Contingency::Oco, _) => ListKind::Oco,
            (Contingency::Oto, 2) => ListKind::Oto,
            (Contingency::Oto, _) => ListKind::Otoco,
        };
        let mut legs = [ListLeg::UNUSED; 3];
        let mut natives = Vec::with_capacity(orders.len());
        for (k, o) in orders.iter().enumerate() {
            if !self.cl_ord_id_free(o.cl_ord_id)
                || orders[..k].iter().any(|p| p.cl_ord_id == o.cl_ord_id)
            {
                return self.refuse_list(msg, "ClOrdID of a live order", now);
            }
            let n = match self.native_terms(&o.terms) {
                Ok(n) => n,
                Err((_, text)) => return self.refuse_list(msg, text, now),
            };
            let (stop_price, display_qty) = match self.native_extras(n.instrument, &o.extras) {
                Ok(x) => x,
                Err((_, text)) => return self.refuse_list(msg, text, now),
            };
            let (trail, trail_unit, trigger) =
                trigger_fields(o.terms.ord_type, stop_price, &o.extras);
            legs[k] = ListLeg {
                client_order_id: ClientOrderId(0),
                price: Price::from_raw(n.price),
                qty: Qty::from_raw(n.qty),
                expire_at: Timestamp(n.expire_at),
                stop_price: Price::from_raw(stop_price),
                display_qty: Qty::from_raw(display_qty),
                trail,
                side: o.terms.side.to_peregrine(),
                order_type: n.order_type,
                tif: n.tif,
                stp: n.stp,
                trigger,
                trail_unit,
            };
            natives.push(n);
        }
        let instrument = natives[0].instrument;
        let list_native = self.table.native_id();
        let mut leg_orders = Vec::with_capacity(orders.len());
        for (k, (o, n)) in orders.iter().zip(&natives).enumerate() {
            let native = self.table.native_id();
            legs[k].client_order_id = ClientOrderId(native);
            leg_orders.push(self.table.insert(
                Order {
                    cl_ord_id: o.cl_ord_id.to_vec(),
                    instrument: n.instrument,
                    side: o.terms.side,
                    ord_type: o.terms.ord_type,
                    tif: o.terms.time_in_force,
                    order_id: 0,
                    qty: n.qty,
                    price: n.price,
                    state: None,
                },
                native,
            ));
        }
        push_native(
            &mut self.native_out,
            &native::NewOrderList::new(
                ClientOrderId(list_native),
                InstrumentId(self.instruments[instrument].id),
                kind,
                legs,
            ),
        );
        self.table.insert_list(List {
            list_id: e.list_id.to_vec(),
            native: list_native,
            kind,
            legs: leg_orders,
            exchange_id: 0,
            phase: ListPhase::Sent,
        });
        Ok(())
    }

    /// A ListStatus rejecting an E that never reached the exchange: its orders (the
    /// group's ClOrdIDs) Rejected.
    fn refuse_list(&mut self, msg: &Message<'_>, text: &str, now: u64) -> Result<(), Refusal> {
        let cls: Vec<&[u8]> = msg
            .fields()
            .flatten()
            .filter(|f| f.tag == tags::CL_ORD_ID)
            .map(|f| f.value)
            .collect();
        let orders: Vec<ListStatusOrder<'_>> = cls
            .iter()
            .map(|cl| ListStatusOrder {
                cl_ord_id: cl,
                ord_status: OrdStatus::Rejected,
                cum_qty: 0,
                leaves_qty: 0,
                cxl_qty: 0,
                avg_px: 0,
            })
            .collect();
        let n = ListStatus {
            list_id: raw(msg, LIST_ID),
            status: ListOrderStatus::Reject,
            answer: false,
            text: Some(text),
            transact_time: now,
            orders: &orders,
            price_decimals: 0,
            qty_decimals: 0,
        };
        self.session.send_app(b"N", now, |w| n.encode(w, P))?;
        Ok(())
    }

    pub(super) fn cancel_list(&mut self, msg: &Message<'_>, now: u64) -> Result<(), Refusal> {
        let k = ListCancelRequest::decode(msg).map_err(Refusal::from_app)?;
        let refuse = |b: &mut Bridge, reason, text: &str| -> Result<(), Refusal> {
            b.list_request_reject(msg.header.msg_seq_num, b"K", k.list_id, reason, text, now)?;
            Ok(())
        };
        let Some(l) = self.table.list_by_id(k.list_id) else {
            return refuse(self, BusinessRejectReason::UnknownId, "unknown list");
        };
        let list = self.table.list(l);
        match list.phase {
            ListPhase::Executing => {}
            ListPhase::Sent => {
                return refuse(
                    self,
                    BusinessRejectReason::Other,
                    "list not yet acknowledged by the exchange",
                )
            }
            ListPhase::Done | ListPhase::Rejected => {
                return refuse(self, BusinessRejectReason::Other, "list is done")
            }
        }
        if !self.native_ready {
            return refuse(
                self,
                BusinessRejectReason::ApplicationNotAvailable,
                "exchange session not available",
            );
        }
        let (exchange_id, instrument) = (
            list.exchange_id,
            self.instruments[self.table.order(list.legs[0]).instrument].id,
        );
        let native = self.table.native_id();
        push_native(
            &mut self.native_out,
            &CancelList {
                client_order_id: ClientOrderId(native),
                list_id: OrderId(exchange_id),
                instrument: InstrumentId(instrument),
            },
        );
        self.table
            .set_pending(native, Pending::CancelList { list: l });
        Ok(())
    }

    /// A ListStatusRequest (M): an N with the list's state as the gateway knows it
    /// (ListStatusType 2, response; each order's state from its last report), or a
    /// BusinessMessageReject (380=1) for a ListID the gateway does not hold.
    pub(super) fn list_status_request(
        &mut self,
        msg: &Message<'_>,
        now: u64,
    ) -> Result<(), Refusal> {
        let m = ListStatusRequest::decode(msg).map_err(Refusal::from_app)?;
        let Some(l) = self.table.list_by_id(m.list_id) else {
            self.list_request_reject(
                msg.header.msg_seq_num,
                b"M",
                m.list_id,
                BusinessRejectReason::UnknownId,
                "unknown list",
                now,
            )?;
            return Ok(());
        };
        let status = match self.table.list(l).phase {
            ListPhase::Sent => ListOrderStatus::ReceivedForExecution,
            ListPhase::Executing => ListOrderStatus::Executing,
            ListPhase::Done => ListOrderStatus::AllDone,
            ListPhase::Rejected => ListOrderStatus::Reject,
        };
        self.send_list_status(l, status, true, None, now)?;
        Ok(())
    }

    /// A BusinessMessageReject of a ListCancelRequest or ListStatusRequest
    /// (`ref_msg_type`; FIX 4.4 has no list request reject message). `ref_seq` 0:
    /// the request's sequence number is not known any more (the exchange refused it).
    pub(super) fn list_request_reject(
        &mut self,
        ref_seq: u64,
        ref_msg_type: &[u8],
        list_id: &[u8],
        reason: BusinessRejectReason,
        text: &str,
        now: u64,
    ) -> Result<(), StoreError> {
        let j = BusinessMessageReject {
            ref_seq,
            ref_msg_type,
            ref_id: Some(list_id),
            reason,
            text,
        };
        self.session.send_app(b"j", now, |w| j.encode(w))?;
        Ok(())
    }

    /// A native ListStatus: accepted → N executing, rejected → N reject (its legs
    /// Rejected, never entered), done → N all done.
    pub(super) fn on_list_status(
        &mut self,
        m: &native::ListStatus,
        now: u64,
    ) -> Result<(), StoreError> {
        let Some(l) = self.table.list_by_native(m.client_list_id.0) else {
            return Ok(());
        };
        match m.status {
            ListState::Accepted | ListState::Rejected => {
                match self.table.take_pending(m.client_list_id.0) {
                    Some(Pending::List { .. }) => {}
                    Some(other) => {
                        self.table.set_pending(m.client_list_id.0, other);
                        return Ok(());
                    }
                    None => return Ok(()),
                }
                if m.status == ListState::Accepted {
                    let list = self.table.list_mut(l);
                    list.exchange_id = m.list_id.0;
                    list.phase = ListPhase::Executing;
                    self.send_list_status(l, ListOrderStatus::Executing, false, None, now)
                } else {
                    self.list_rejected(l, crate::reasons::order_reject(m.reason.0).1, now)
                }
            }
            ListState::Done => {
                if m.request_id.0 != 0 {
                    self.table.take_pending(m.request_id.0);
                }
                if self.table.list(l).phase == ListPhase::Done {
                    return Ok(());
                }
                self.table.list_mut(l).phase = ListPhase::Done;
                self.send_list_status(l, ListOrderStatus::AllDone, false, None, now)
            }
        }
    }

    /// List `l` was refused as a whole (by the exchange, or it never got there):
    /// its legs are Rejected (no ExecutionReport: the N says it).
    pub(super) fn list_rejected(
        &mut self,
        l: usize,
        text: &str,
        now: u64,
    ) -> Result<(), StoreError> {
        self.table.list_mut(l).phase = ListPhase::Rejected;
        for k in 0..self.table.list(l).legs.len() {
            let i = self.table.list(l).legs[k];
            let native = self.table.native_of_new(i);
            if let Some(native) = native {
                self.table.take_pending(native);
            }
            let o = self.table.order_mut(i);
            let (state, _) = peregrine_fix::app::OrderState::rejected(o.qty, o.price);
            o.state = Some(state);
        }
        self.send_list_status(l, ListOrderStatus::Reject, false, Some(text), now)
    }

    /// An N about list `l` with its legs' current state (`answer`: to an M).
    fn send_list_status(
        &mut self,
        l: usize,
        status: ListOrderStatus,
        answer: bool,
        text: Option<&str>,
        now: u64,
    ) -> Result<(), StoreError> {
        let list = self.table.list(l);
        let spec = &self.instruments[self.table.order(list.legs[0]).instrument];
        let orders: Vec<ListStatusOrder<'_>> = list
            .legs
            .iter()
            .map(|&i| {
                let o = self.table.order(i);
                match o.state {
                    None => ListStatusOrder {
                        cl_ord_id: &o.cl_ord_id,
                        ord_status: OrdStatus::New,
                        cum_qty: 0,
                        leaves_qty: o.qty,
                        cxl_qty: 0,
                        avg_px: 0,
                    },
                    Some(s) => ListStatusOrder {
                        cl_ord_id: &o.cl_ord_id,
                        ord_status: s.status,
                        cum_qty: s.cum_qty,
                        leaves_qty: s.leaves_qty,
                        cxl_qty: if matches!(s.status, OrdStatus::Canceled | OrdStatus::Expired) {
                            s.order_qty - s.cum_qty
                        } else {
                            0
                        },
                        avg_px: if s.cum_qty > 0 {
                            (s.notional / i128::from(s.cum_qty)) as i64
                        } else {
                            0
                        },
                    },
                }
            })
            .collect();
        let n = ListStatus {
            list_id: &list.list_id,
            status,
            answer,
            text,
            transact_time: now,
            orders: &orders,
            price_decimals: spec.price_decimals,
            qty_decimals: spec.qty_decimals,
        };
        self.session.send_app(b"N", now, |w| n.encode(w, P))?;
        Ok(())
    }
}
