//! What the venue sends: ExecutionReports and OrderCancelRejects become `Report`s.

use peregrine_fix::app::{
    self, CxlRejResponseTo, ExecType, ExecutionReportView, OrderCancelRejectView,
};
use peregrine_fix::codec::value::parse_u64;
use peregrine_fix::codec::Message;
use peregrine_types::{Price, Qty};

use super::FixVenue;
use crate::Report;

impl FixVenue {
    pub(super) fn on_app(&mut self, m: &Message<'_>) {
        match m.msg_type() {
            b"8" => match ExecutionReportView::decode(m) {
                Ok(er) => self.on_execution_report(&er),
                Err(e) => self
                    .log
                    .push(format!("venue {}: bad ExecutionReport: {e}", self.name)),
            },
            b"9" => match OrderCancelRejectView::decode(m) {
                Ok(r) => self.on_cancel_reject(&r),
                Err(e) => self
                    .log
                    .push(format!("venue {}: bad OrderCancelReject: {e}", self.name)),
            },
            b"j" => self
                .log
                .push(format!("venue {}: BusinessMessageReject", self.name)),
            other => self.log.push(format!(
                "venue {}: ignored MsgType {}",
                self.name,
                String::from_utf8_lossy(other)
            )),
        }
    }

    fn units(&self, v: Option<&[u8]>, instrument: usize, price: bool) -> i64 {
        let spec = &self.cfg.instruments[instrument];
        let d = if price {
            spec.price_decimals
        } else {
            spec.qty_decimals
        };
        v.and_then(|v| app::decimal_units(v, d, 0).ok())
            .unwrap_or(0)
    }

    fn on_execution_report(&mut self, er: &ExecutionReportView<'_>) {
        let Some(cl) = parse_u64(er.cl_ord_id) else {
            return;
        };
        let Some(&engine_id) = self.by_cl.get(&cl) else {
            return;
        };
        let Some(o) = self.orders.get(&engine_id).cloned() else {
            return;
        };
        let leaves = self.units(Some(er.leaves_qty), o.instrument, false);
        if o.in_doubt {
            if let Some(t) = self.orders.get_mut(&engine_id) {
                t.in_doubt = false;
            }
            if let Some(r) = self.settle_in_doubt(er, engine_id, &o) {
                self.pending.push_back(r);
                self.flush_cancel(engine_id);
                return;
            }
        }
        let report = match er.exec_type {
            ExecType::New => {
                let venue_id = parse_u64(er.order_id).unwrap_or_else(|| fx_hash(er.order_id));
                if let Some(t) = self.orders.get_mut(&engine_id) {
                    t.acked = true;
                }
                Report::Ack {
                    engine_id,
                    venue_id,
                }
            }
            ExecType::Rejected => {
                self.forget(engine_id);
                Report::Rejected {
                    engine_id,
                    reason: er
                        .ord_rej_reason
                        .map_or(99, |r| r.min(u64::from(u16::MAX - 1)) as u16),
                }
            }
            ExecType::Trade => {
                let price = self.units(er.last_px, o.instrument, true);
                let qty = self.units(er.last_qty, o.instrument, false);
                if let Some(t) = self.orders.get_mut(&engine_id) {
                    t.cum += qty;
                    t.leaves = leaves;
                }
                if leaves == 0 {
                    self.forget(engine_id);
                }
                Report::Fill {
                    engine_id,
                    price: Price::from_raw(price),
                    qty: Qty::from_raw(qty),
                    leaves: Qty::from_raw(leaves),
                }
            }
            ExecType::Canceled | ExecType::Expired => {
                self.forget(engine_id);
                Report::Cancelled {
                    engine_id,
                    qty: Qty::from_raw(o.leaves),
                    leaves: Qty::ZERO,
                }
            }
            ExecType::Replaced => {
                let price = self.units(er.price, o.instrument, true);
                if let Some(t) = self.orders.get_mut(&engine_id) {
                    if let Some(r) = t.replacing.take() {
                        self.by_cl.remove(&t.cl);
                        t.cl = r;
                    }
                    t.leaves = leaves;
                    t.price = price;
                }
                Report::Replaced {
                    engine_id,
                    price: Price::from_raw(price),
                    qty: Qty::from_raw(leaves),
                }
            }
            // A restatement (a venue's stop triggered) changes nothing tracked here.
            ExecType::OrderStatus | ExecType::Restated => return,
        };
        self.pending.push_back(report);
        // An acknowledgement or a replace's answer may free a held cancel (a fill
        // changes nothing for it: no lookup per fill).
        if matches!(er.exec_type, ExecType::New | ExecType::Replaced) {
            self.flush_cancel(engine_id);
        }
    }

    /// The first word from the venue about an order in doubt: a status answer that it
    /// does not know the order (it never arrived: rejected as lost with the
    /// connection), or one that it does (acknowledged, whatever else it says; what it
    /// traded comes as trade reports, resent before the answer).
    fn settle_in_doubt(
        &mut self,
        er: &ExecutionReportView<'_>,
        engine_id: u64,
        o: &super::Tracked,
    ) -> Option<Report> {
        if er.exec_type != ExecType::OrderStatus {
            return None; // an ordinary report (resent): handled as such
        }
        if er.ord_rej_reason == Some(app::OrdRejReason::UnknownOrder as u64) {
            self.forget(engine_id);
            return Some(Report::Rejected {
                engine_id,
                reason: crate::REASON_DISCONNECTED,
            });
        }
        if o.acked {
            return None;
        }
        if let Some(t) = self.orders.get_mut(&engine_id) {
            t.acked = true;
        }
        let venue_id = parse_u64(er.order_id).unwrap_or_else(|| fx_hash(er.order_id));
        Some(Report::Ack {
            engine_id,
            venue_id,
        })
    }

    fn on_cancel_reject(&mut self, r: &OrderCancelRejectView<'_>) {
        let Some(cl) = parse_u64(r.cl_ord_id) else {
            return;
        };
        let Some(engine_id) = self.by_cl.remove(&cl) else {
            return;
        };
        let reason = r
            .reason
            .map_or(99, |r| r.min(u64::from(u16::MAX - 1)) as u16);
        let report = match r.response_to {
            CxlRejResponseTo::Cancel => Report::CancelRejected { engine_id, reason },
            CxlRejResponseTo::Replace => {
                if let Some(t) = self.orders.get_mut(&engine_id) {
                    t.replacing = None;
                }
                Report::ReplaceRejected { engine_id, reason }
            }
        };
        self.pending.push_back(report);
        self.flush_cancel(engine_id);
    }
}

/// A stable id for a non-numeric OrderID.
fn fx_hash(bytes: &[u8]) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = rustc_hash::FxBuildHasher.build_hasher();
    h.write(bytes);
    h.finish()
}
