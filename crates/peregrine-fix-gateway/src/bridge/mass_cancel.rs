//! OrderMassCancelRequest → native MassCancel, and its OrderMassCancelReport.

use peregrine_fix::app::{
    AppError, MassCancelScope, OrderMassCancelReport, OrderMassCancelRequest,
};
use peregrine_fix::codec::{tags, Message};
use peregrine_types::{ClientOrderId, InstrumentId};
use peregrine_wire::orders::MassCancel;

use super::orders::Pending;
use super::requests::{push_native, raw, Refusal};
use super::Bridge;

impl Bridge {
    pub(super) fn mass_cancel(&mut self, msg: &Message<'_>, now: u64) -> Result<(), Refusal> {
        let q = match OrderMassCancelRequest::decode(msg) {
            Ok(q) => q,
            Err(AppError::Field(e)) => return Err(Refusal::Field(e)),
            Err(AppError::Unsupported { text, .. }) => {
                let r = OrderMassCancelReport {
                    cl_ord_id: raw(msg, tags::CL_ORD_ID),
                    order_id: 0,
                    scope: MassCancelScope::All,
                    accepted: false,
                    total_affected: None,
                    reject_reason: Some(0),
                    symbol: None,
                    side: None,
                    text: Some(text),
                };
                self.session.send_app(b"r", now, |w| r.encode(w))?;
                return Ok(());
            }
        };
        let instrument = match q.symbol.filter(|_| q.scope == MassCancelScope::Security) {
            Some(s) => match self.instrument_by_symbol(s) {
                Some(i) => Some(i),
                None => {
                    return self.mass_report(&q, false, Some(1), None, Some("unknown symbol"), now)
                }
            },
            None => None,
        };
        if !self.native_ready {
            return self.mass_report(
                &q,
                false,
                Some(99),
                None,
                Some("exchange session not available"),
                now,
            );
        }
        let native = self.table.native_id();
        push_native(
            &mut self.native_out,
            &MassCancel {
                client_order_id: ClientOrderId(native),
                instrument: instrument.map(|i| InstrumentId(self.instruments[i].id)),
                side: q.side.map(|s| s.to_peregrine()),
            },
        );
        // The exchange answers with one Cancelled per order (each an ExecutionReport)
        // and then MassCancelDone, with the count: the OrderMassCancelReport.
        self.table.set_pending(
            native,
            Pending::Mass {
                cl_ord_id: q.cl_ord_id.to_vec(),
                scope: q.scope,
                symbol: q.symbol.map(<[u8]>::to_vec),
                side: q.side,
            },
        );
        Ok(())
    }

    fn mass_report(
        &mut self,
        q: &OrderMassCancelRequest<'_>,
        accepted: bool,
        reject_reason: Option<u16>,
        total: Option<u64>,
        text: Option<&str>,
        now: u64,
    ) -> Result<(), Refusal> {
        let order_id = self.table.exec_id();
        let r = OrderMassCancelReport {
            cl_ord_id: q.cl_ord_id,
            order_id,
            scope: q.scope,
            accepted,
            total_affected: total,
            reject_reason,
            symbol: q.symbol,
            side: q.side,
            text,
        };
        self.session.send_app(b"r", now, |w| r.encode(w))?;
        Ok(())
    }
}
