//! What the exchange sends: reading the socket, framing, and turning each report into
//! the engine's [`Report`]s through the order table.

use std::io::ErrorKind;

use peregrine_types::Qty;
use peregrine_wire::field::ListState;
use peregrine_wire::v2::client::Step;
use peregrine_wire::v2::reports::{CancelRejected, Cancelled, Fill, Rejected, Replaced};
use peregrine_wire::v2::Outbound;
use peregrine_wire::RequestKind;

use super::orders::ReqKind;
use super::{ExchangeError, ExchangeVenue, Link, READS_PER_POLL};
use crate::{Report, VenueError, REASON_DISCONNECTED};

impl<C: super::Connect> ExchangeVenue<C> {
    /// Reads what arrived and turns it into reports.
    pub(super) fn read(
        &mut self,
        now_ns: u64,
        out: &mut dyn FnMut(Report),
    ) -> Result<usize, ExchangeError> {
        // Frames already buffered (what followed the login answer) come first.
        let mut n = self.drain(now_ns, out)?;
        for _ in 0..READS_PER_POLL {
            let Some(stream) = self.stream.as_mut() else {
                return Ok(n);
            };
            match stream.read(self.rx.spare()) {
                Ok(0) => return Err(ExchangeError::Closed),
                Ok(k) => {
                    self.rx.commit(k);
                    self.last_rx_ns = now_ns;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(n),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(ExchangeError::Io(e)),
            }
            n += self.drain(now_ns, out)?;
        }
        Ok(n)
    }

    /// Handles every whole frame in the receive buffer. A write failure while
    /// answering (a deferred cancel) drops the session: what is still buffered
    /// belongs to it and is not read.
    fn drain(&mut self, now_ns: u64, out: &mut dyn FnMut(Report)) -> Result<usize, ExchangeError> {
        let mut n = 0;
        while self.stream.is_some() {
            let Some(m) = self.rx.next(Outbound::decode)? else {
                break;
            };
            n += self.on_message(m, now_ns, out)?;
        }
        Ok(n)
    }

    /// One message from the exchange: checks its session sequence number, then hands
    /// it to its handler; returns how many reports went to `out`.
    fn on_message(
        &mut self,
        m: Outbound,
        now_ns: u64,
        out: &mut dyn FnMut(Report),
    ) -> Result<usize, ExchangeError> {
        let Some(session) = self.session.as_mut() else {
            return Err(ExchangeError::Unexpected("a message without a session"));
        };
        let step = session.on_message(&m, &self.key)?;
        let next = session.next_report_seq();
        match step {
            Step::Report { replayed } => {
                // Processed from here on: a reconnect or restart resumes after it.
                self.resume = next;
                if replayed {
                    self.stats.replayed += 1;
                }
            }
            Step::RecoveryStarted { replay, reason } => {
                self.snapshot_recovery = reason != 0;
                if reason != 0 {
                    self.log.push(format!(
                        "venue {}: WARNING: the exchange no longer retains report {} of \
                         account {} (reason {reason}); it sends an open-orders snapshot \
                         instead: orders in doubt that are not in it are closed, and \
                         fills they had while the reports were lost are not known",
                        self.name, self.resume, self.cfg.account
                    ));
                } else if replay > 0 {
                    self.log.push(format!(
                        "venue {}: the exchange replays {replay} report(s) missed while \
                         disconnected",
                        self.name
                    ));
                }
                return Ok(0);
            }
            Step::RecoveryDone => {
                self.resume = next;
                self.recovering = false;
                // Every answer the exchange owed is in: what is unanswered never
                // reached it (module docs).
                let mut n = 0;
                let rejected = self
                    .table
                    .settle_after_replay(REASON_DISCONNECTED, &mut |r| {
                        n += 1;
                        out(r);
                    });
                if rejected > 0 && self.snapshot_recovery {
                    self.stats.unresolved += rejected as u64;
                    self.log.push(format!(
                        "venue {}: WARNING: {rejected} orders sent before the drop are not in \
                         the exchange's snapshot and it no longer retains their reports: \
                         reported rejected, but the exchange may have filled them; \
                         reconcile from the exchange's records",
                        self.name
                    ));
                }
                self.reconcile(now_ns);
                return Ok(n);
            }
            // The exchange ends the session and says why; the close follows and the
            // venue reconnects and resumes, as after any close.
            Step::Disconnected { reason } => {
                eprintln!(
                    "venue {}: the exchange ends the session (disconnect reason {reason})",
                    self.name
                );
                return Err(ExchangeError::Closed);
            }
            Step::LoggedIn(_)
            | Step::SendLogin(_)
            | Step::Rejected { .. }
            | Step::Redirect { .. } => {
                return Err(ExchangeError::Unexpected("a second login answer"))
            }
            // An answer outside the stream (report_seq 0) is handled like a report.
            Step::Other if m.is_report_type() => {}
            Step::SnapshotOrder => return Ok(self.on_snapshot_order(&m, out)),
            Step::Instrument | Step::Other => return Ok(0),
        }
        let report = match m {
            Outbound::Accepted(a) => {
                return Ok(self.on_accepted(a.client_order_id.0, a.order_id.0, now_ns, out))
            }
            Outbound::AcceptedExt(a) => {
                return Ok(self.on_accepted(a.client_order_id.0, a.order_id.0, now_ns, out))
            }
            Outbound::Triggered(t) => match self.table.by_order(t.order_id.0) {
                Some(engine_id) => Some(Report::Triggered {
                    engine_id,
                    trigger_price: t.trigger_price,
                    last_price: t.last_price,
                }),
                None => {
                    self.unknown("Triggered", t.order_id.0);
                    None
                }
            },
            Outbound::ListStatus(l) => return Ok(self.on_list_status(&l, out)),
            Outbound::Rejected(r) => self.on_rejected(&r),
            Outbound::Fill(f) => self.on_fill(&f),
            Outbound::Cancelled(c) => self.on_cancelled(&c),
            Outbound::Replaced(r) => self.on_replaced(&r),
            Outbound::MassCancelDone(_) => None,
            Outbound::CancelRejected(c) => {
                if self.barrier_cl != 0
                    && c.client_order_id.0 == self.barrier_cl
                    && c.request_kind == RequestKind::Cancel
                {
                    return Ok(self.end_reconcile(out));
                }
                self.on_cancel_rejected(&c)
            }
            // Other reports of the stream (answers to balance and admin requests,
            // which this adapter never sends).
            _ => {
                self.stats.unknown_reports += 1;
                None
            }
        };
        Ok(report.map_or(0, |r| {
            out(r);
            1
        }))
    }

    /// An order list's status. Its client list id is its leg 0's engine id (the legs'
    /// are the next ones, `submit_list`); a rejected list entered nothing, so each leg
    /// is reported `Rejected` with the list's reason.
    fn on_list_status(
        &mut self,
        l: &peregrine_wire::v2::venue::ListStatus,
        out: &mut dyn FnMut(Report),
    ) -> usize {
        let first = l.client_list_id.0;
        if first & super::REQUEST_BIT != 0 {
            self.unknown("ListStatus", first);
            return 0;
        }
        let status = match l.status {
            ListState::Accepted => crate::ListState::Accepted,
            ListState::Rejected => crate::ListState::Rejected,
            ListState::Done => crate::ListState::Done,
        };
        let mut n = 0;
        if status == crate::ListState::Rejected {
            for cl in first..first + l.kind.legs() as u64 {
                if let Some((engine_id, ReqKind::New)) = self.table.take_request(cl) {
                    self.table.remove(engine_id);
                    out(Report::Rejected {
                        engine_id,
                        reason: l.reason.0,
                    });
                    n += 1;
                }
            }
        }
        out(Report::ListStatus {
            engine_id: first,
            status,
            reason: l.reason.0,
        });
        n + 1
    }

    fn on_rejected(&mut self, r: &Rejected) -> Option<Report> {
        let Some((engine_id, ReqKind::New)) = self.table.take_request(r.client_order_id.0) else {
            self.unknown("Rejected", r.client_order_id.0);
            return None;
        };
        self.table.remove(engine_id);
        Some(Report::Rejected {
            engine_id,
            reason: r.reason.0,
        })
    }

    fn on_fill(&mut self, f: &Fill) -> Option<Report> {
        let Some(engine_id) = self.table.by_order(f.order_id.0) else {
            self.unknown("Fill", f.order_id.0);
            return None;
        };
        // A replayed fill of an order restored from the engine's journal that does
        // not lower its open quantity was counted before the restart (module docs).
        if self.recovering
            && self
                .table
                .get_mut(engine_id)
                .is_some_and(|t| t.in_doubt && f.leaves_qty.lots() >= t.leaves)
        {
            self.stats.replayed_duplicates += 1;
            return None;
        }
        if f.leaves_qty.is_zero() {
            self.table.remove(engine_id);
        } else if let Some(t) = self.table.get_mut(engine_id) {
            t.leaves = f.leaves_qty.lots();
        }
        Some(Report::Fill {
            engine_id,
            price: f.price,
            qty: f.qty,
            leaves: f.leaves_qty,
        })
    }

    fn on_cancelled(&mut self, c: &Cancelled) -> Option<Report> {
        let by_mass_cancel = c.request_id.0 != 0 && c.request_id.0 == self.mass_cl;
        if c.request_id.0 != 0 && !by_mass_cancel {
            self.table.take_request(c.request_id.0); // our Cancel, answered
        }
        let Some(engine_id) = self.table.by_order(c.order_id.0) else {
            // The login mass cancel also removes orders of earlier sessions: expected.
            if !by_mass_cancel {
                self.unknown("Cancelled", c.order_id.0);
            }
            return None;
        };
        // A self-trade decrement cancels part of an order; anything else ends it.
        let left = self
            .table
            .get_mut(engine_id)
            .map_or(0, |t| (t.leaves - c.cancelled_qty.lots()).max(0));
        if left > 0 && c.reason.0 == DECREMENT_REASON {
            if let Some(t) = self.table.get_mut(engine_id) {
                t.leaves = left;
            }
        } else {
            self.table.remove(engine_id);
        }
        let leaves = if c.reason.0 == DECREMENT_REASON {
            left
        } else {
            0
        };
        Some(Report::Cancelled {
            engine_id,
            qty: c.cancelled_qty,
            leaves: Qty::from_raw(leaves),
        })
    }

    fn on_replaced(&mut self, r: &Replaced) -> Option<Report> {
        self.table.take_request(r.client_order_id.0);
        let Some(engine_id) = self.table.by_order(r.order_id.0) else {
            self.unknown("Replaced", r.order_id.0);
            return None;
        };
        if let Some(t) = self.table.get_mut(engine_id) {
            t.leaves = r.new_qty.lots();
            t.replace_cl = 0;
        }
        Some(Report::Replaced {
            engine_id,
            price: r.new_price,
            qty: r.new_qty,
        })
    }

    fn on_cancel_rejected(&mut self, c: &CancelRejected) -> Option<Report> {
        let cl = c.client_order_id.0;
        if cl == self.mass_cl {
            return None; // nothing of this account was resting
        }
        let reason = c.reason.0;
        match self.table.take_request(cl) {
            Some((engine_id, ReqKind::Cancel)) => {
                if let Some(t) = self.table.get_mut(engine_id) {
                    t.cancel_cl = 0;
                }
                Some(Report::CancelRejected { engine_id, reason })
            }
            Some((engine_id, ReqKind::Replace)) => {
                if let Some(t) = self.table.get_mut(engine_id) {
                    t.replace_cl = 0;
                }
                Some(Report::ReplaceRejected { engine_id, reason })
            }
            _ => {
                self.unknown("CancelRejected", cl);
                None
            }
        }
    }

    fn on_accepted(
        &mut self,
        cl: u64,
        order_id: u64,
        now_ns: u64,
        out: &mut dyn FnMut(Report),
    ) -> usize {
        let Some((engine_id, ReqKind::New)) = self.table.take_request(cl) else {
            self.unknown("Accepted", cl);
            return 0;
        };
        let Some(t) = self.table.acked(engine_id, order_id) else {
            return 0;
        };
        out(Report::Ack {
            engine_id,
            venue_id: order_id,
        });
        let mut n = 1;
        // Requests asked before the ack go out now; one that cannot is refused.
        if t.want_cancel {
            if let Err(e) = self.send_cancel(engine_id, now_ns) {
                out(Report::CancelRejected {
                    engine_id,
                    reason: refusal(e),
                });
                n += 1;
            }
        } else if let Some((price, qty)) = t.want_replace {
            if let Err(e) = self.send_replace(engine_id, price, qty, now_ns) {
                out(Report::ReplaceRejected {
                    engine_id,
                    reason: refusal(e),
                });
                n += 1;
            }
        }
        n
    }

    /// The barrier came back: every order the mass cancel removed has been reported.
    /// An order still in doubt is no longer resting, yet no report said what ended it:
    /// only possible when the exchange no longer retains the reports (module docs). It
    /// is closed (reported cancelled with its last open quantity), counted and warned
    /// about: the one outcome the engine cannot learn from the venue.
    fn end_reconcile(&mut self, out: &mut dyn FnMut(Report)) -> usize {
        self.barrier_cl = 0;
        let mut n = 0;
        self.table.drop_in_doubt(&mut |engine_id, leaves| {
            n += 1;
            out(Report::Cancelled {
                engine_id,
                qty: Qty::from_raw(leaves),
                leaves: Qty::ZERO,
            });
        });
        if n > 0 {
            self.stats.unresolved += n as u64;
            self.log.push(format!(
                "venue {}: WARNING: {n} orders open before the disconnect are no longer \
                 resting at the exchange, which no longer retains what ended them: closed \
                 (reported cancelled), but fills they had may be missing; reconcile from the \
                 exchange's records",
                self.name
            ));
        }
        n
    }

    /// An order of the open-orders snapshot that replaces a replay no longer retained:
    /// an order in doubt that never got its `Accepted` is acknowledged by it.
    fn on_snapshot_order(&mut self, m: &Outbound, out: &mut dyn FnMut(Report)) -> usize {
        let Outbound::OpenOrder(o) = m else {
            return 0;
        };
        let Some((engine_id, ReqKind::New)) = self.table.take_request(o.client_order_id.0) else {
            return 0;
        };
        if self.table.acked(engine_id, o.order_id.0).is_none() {
            return 0;
        }
        out(Report::Ack {
            engine_id,
            venue_id: o.order_id.0,
        });
        1
    }
}

/// The exchange's cancel reason for a self-trade cancel (`CancelReason::SelfTrade`),
/// the only one that can leave part of an order open (decrement-and-cancel).
const DECREMENT_REASON: u16 = 5;

/// The reason a deferred request carries when it could not be sent (0: unspecified,
/// or [`REASON_DISCONNECTED`]).
fn refusal(e: VenueError) -> u16 {
    match e {
        VenueError::Disconnected => REASON_DISCONNECTED,
        VenueError::Busy | VenueError::UnknownOrder(_) | VenueError::Unsupported => 0,
    }
}
