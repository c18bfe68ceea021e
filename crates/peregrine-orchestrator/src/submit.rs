//! Requests from strategies: decode, check, route.

use peregrine_risk::{OrderRequest, OrderShape, StrategyId};
use peregrine_strategy::msg::{reason, Command, Event, EventKind, NewOrder, Request};
use peregrine_types::stamp;
use peregrine_types::{Price, Qty};
use peregrine_venues::VenueOrder;

use crate::io::{GatewayCmd, Note, Output, Outputs};
use crate::record::{Rec, SentOrder};
use crate::state::{event, Live, Liveness, Orchestrator};

impl Orchestrator {
    pub(crate) fn on_request(&mut self, s: u16, req: Request, t2: u64, out: &mut Outputs) {
        let Some(slot) = self.slots.get_mut(s as usize) else {
            return; // the shell only names configured strategies
        };
        slot.last_seen_ns = t2;
        match slot.state {
            Liveness::Waiting => slot.state = Liveness::Alive,
            // Still read so its new orders get an answer (STRATEGY_DOWN) and are counted.
            Liveness::Dead => slot.after_dead += 1,
            Liveness::Alive => {}
        }
        // An extension record must be followed at once by its order.
        let pending = slot.pending_ext.take();
        let cmd = req.decode();
        if pending.is_some() && !matches!(cmd, Ok(Command::New(_))) {
            slot.malformed += 1;
            self.rejects.count_engine(reason::BAD_EXTENSION);
        }
        // A list being gathered goes on only with its next leg's two records.
        if let Some(g) = self.slots[s as usize].pending_list {
            if !g.continues(pending.map(|p| p.2), &cmd) {
                self.abort_list(s, t2, out);
            }
        }
        match cmd {
            Err(_) => {
                self.slots[s as usize].malformed += 1;
                self.reject_raw(s, &req, t2, reason::MALFORMED, out);
            }
            Ok(Command::Heartbeat { pid }) => self.slots[s as usize].pid = Some(pid),
            // Latency samples: the shell keeps the histograms; here they only prove
            // the strategy alive.
            Ok(Command::Receipt { .. } | Command::MdReceipt { .. }) => {}
            Ok(Command::Cancel { client_id }) => self.on_cancel(s, client_id, &req, t2, out),
            Ok(Command::Ext {
                client_id,
                ext,
                list,
            }) => {
                self.slots[s as usize].pending_ext = Some((client_id, ext, list));
            }
            Ok(Command::New(mut o)) => {
                let mut list = None;
                match pending {
                    Some((id, ext, l)) if id == o.client_id => {
                        o.ext = ext;
                        list = l;
                    }
                    Some(_) => {
                        self.slots[s as usize].malformed += 1;
                        self.abort_list(s, t2, out);
                        return self.reject_raw(s, &req, t2, reason::BAD_EXTENSION, out);
                    }
                    None => {}
                }
                match list {
                    Some((kind, leg)) => self.on_list_leg(s, o, kind, leg, req.t1, t2, out),
                    None => self.on_new(s, &o, req.t1, t2, out),
                }
            }
            Ok(Command::Replace {
                client_id,
                price,
                qty,
            }) => self.on_replace(s, client_id, price, qty, &req, t2, out),
        }
    }

    /// The table entry of new order `o`, not yet sent.
    pub(crate) fn live_of(s: u16, o: &NewOrder, t1: u64, t2: u64) -> Live {
        let mut live = Live {
            strategy: s,
            client_id: o.client_id,
            venue: o.venue,
            instrument: o.instrument.0,
            side: o.side,
            price: o.price.units(),
            qty: o.qty.lots(),
            leaves: o.qty.lots(),
            ts: [0; 8],
            cancel_sent: false,
            cancel_asked: false,
            replace_pending: false,
        };
        live.ts[stamp::STRATEGY_SEND] = t1;
        live.ts[stamp::ORCH_RECV_SUBMIT] = t2;
        live
    }

    /// The journal's `Sent` record of order `o` as `engine_id`, and the order for its
    /// venue.
    pub(crate) fn sent_of(s: u16, o: &NewOrder, engine_id: u64) -> (Rec, VenueOrder) {
        let rec = Rec::Sent(SentOrder {
            engine_id,
            strategy: s,
            venue: o.venue as u16,
            client_id: o.client_id,
            instrument: o.instrument,
            side: o.side,
            order_type: o.order_type,
            tif: o.tif,
            stp: o.stp,
            price: o.price,
            qty: o.qty,
            expire_at: o.expire_at,
        });
        let order = VenueOrder {
            engine_id,
            instrument: o.instrument,
            side: o.side,
            price: o.price,
            qty: o.qty,
            order_type: o.order_type,
            tif: o.tif,
            stp: o.stp,
            expire_at: o.expire_at,
            ext: o.ext,
        };
        (rec, order)
    }

    /// The risk check of new order `o` (which reserves its room when it passes).
    pub(crate) fn risk_check(&mut self, s: u16, o: &NewOrder, t2: u64) -> Result<(), u16> {
        let request = OrderRequest {
            venue: o.venue,
            instrument: o.instrument,
            client_id: o.client_id,
            side: o.side,
            price: o.price,
            qty: o.qty,
        };
        let shape = OrderShape {
            order_type: o.order_type,
            tif: o.tif,
            expire_at: o.expire_at,
        };
        self.risk
            .check_new_shaped(StrategyId(s), &request, shape, t2)
            .map_err(|r| r.code())
    }

    fn on_new(&mut self, s: u16, o: &NewOrder, t1: u64, t2: u64, out: &mut Outputs) {
        self.tally.orders += 1;
        let live = Self::live_of(s, o, t1, t2);
        let engine_reason = if o.venue as usize >= self.cfg.venues.len() {
            Some(reason::UNKNOWN_VENUE)
        } else if !self.cfg.instruments.contains(&o.instrument.0) {
            Some(reason::UNKNOWN_INSTRUMENT)
        } else if self.slots[s as usize].state == Liveness::Dead {
            Some(reason::STRATEGY_DOWN)
        } else if !o.ext.is_plain() && !self.cfg.venues[o.venue as usize].conditional {
            Some(reason::UNSUPPORTED)
        } else if self.orders.len() >= self.cfg.max_in_flight {
            if self.rejects.engine(reason::GATEWAY_BUSY) == 0 {
                out.push(Output::Note(Note::OrderTableFull));
            }
            Some(reason::GATEWAY_BUSY)
        } else {
            None
        };
        if let Some(r) = engine_reason {
            return self.reject(s, &live, r, out);
        }
        if let Err(code) = self.risk_check(s, o, t2) {
            return self.reject(s, &live, code, out);
        }
        let engine_id = self.next_engine_id;
        self.next_engine_id += 1;
        let (rec, order) = Self::sent_of(s, o, engine_id);
        // Write-ahead: the shell hands the order over only once this is in the journal.
        self.record(rec, out);
        out.push(Output::Gateway {
            venue: o.venue,
            cmd: GatewayCmd::New(order),
        });
        self.tally.on_routed(o.venue);
        self.orders.insert(engine_id, live);
        self.by_client.insert((s, o.client_id), engine_id);
    }

    fn on_cancel(&mut self, s: u16, client_id: u64, req: &Request, t2: u64, out: &mut Outputs) {
        let Some(&id) = self.by_client.get(&(s, client_id)) else {
            return self.cancel_reject_raw(s, req, t2, reason::UNKNOWN_ORDER, out);
        };
        if let Some(o) = self.orders.get_mut(&id) {
            if !o.cancel_sent {
                o.cancel_asked = true;
            }
        }
        self.send_cancel(id, out);
    }

    /// A replace: the order must be open with no cancel or replace on its way; the new
    /// terms pass risk (which reserves any growth); then it goes to the gateway. The
    /// answer (Replaced or ReplaceReject) comes back as a completion.
    #[allow(clippy::too_many_arguments)] // the request's parts, decoded
    fn on_replace(
        &mut self,
        s: u16,
        client_id: u64,
        price: Price,
        qty: Qty,
        req: &Request,
        t2: u64,
        out: &mut Outputs,
    ) {
        self.tally.replace_requests += 1;
        let Some(&id) = self.by_client.get(&(s, client_id)) else {
            return self.replace_reject_raw(s, req, t2, reason::UNKNOWN_ORDER, out);
        };
        let Some(o) = self.orders.get(&id) else {
            return self.replace_reject_raw(s, req, t2, reason::UNKNOWN_ORDER, out);
        };
        let code = if o.cancel_sent || o.replace_pending {
            Some(reason::REPLACE_PENDING)
        } else if self.slots[s as usize].state == Liveness::Dead {
            Some(reason::STRATEGY_DOWN)
        } else {
            self.risk
                .check_replace(StrategyId(s), client_id, price, qty, t2)
                .err()
                .map(|r| r.code())
        };
        if let Some(code) = code {
            return self.replace_reject_raw(s, req, t2, code, out);
        }
        let venue = o.venue;
        out.push(Output::Gateway {
            venue,
            cmd: GatewayCmd::Replace {
                engine_id: id,
                price,
                qty,
            },
        });
        if let Some(o) = self.orders.get_mut(&id) {
            o.replace_pending = true;
            // The replace's own round trip: its stamps replace the order's.
            o.ts = [0; 8];
            o.ts[stamp::STRATEGY_SEND] = req.t1;
            o.ts[stamp::ORCH_RECV_SUBMIT] = t2;
        }
    }

    /// Sends a cancel for engine order `id` unless one is already out.
    pub(crate) fn send_cancel(&mut self, id: u64, out: &mut Outputs) {
        let Some(o) = self.orders.get_mut(&id) else {
            return;
        };
        if o.cancel_sent {
            return;
        }
        o.cancel_sent = true;
        out.push(Output::Gateway {
            venue: o.venue,
            cmd: GatewayCmd::Cancel(id),
        });
    }

    /// A command the shell could not hand to its gateway (inbox full): refused as busy.
    pub(crate) fn undelivered(&mut self, cmd: GatewayCmd, t: u64, out: &mut Outputs) {
        if let GatewayCmd::ListLeg { index, order, .. } = cmd {
            // The shell hands over all of a list's legs or none, so each comes back:
            // the list never reached the venue; the leg is refused as a single order.
            self.lists.remove(&(order.engine_id - u64::from(index)));
            return self.undelivered(GatewayCmd::New(order), t, out);
        }
        let id = cmd.engine_id();
        let Some(mut o) = self.orders.get(&id).copied() else {
            return;
        };
        let sid = StrategyId(o.strategy);
        match cmd {
            GatewayCmd::ListLeg { .. } => {} // above
            GatewayCmd::New(_) => {
                self.risk.on_done(sid, o.client_id);
                self.record(Rec::Rejected { engine_id: id }, out);
                self.orders.remove(&id);
                self.by_client.remove(&(o.strategy, o.client_id));
                self.reject(o.strategy, &o, reason::GATEWAY_BUSY, out);
            }
            GatewayCmd::Cancel(_) => {
                let asked = o.cancel_asked;
                o.cancel_sent = false;
                o.cancel_asked = false;
                self.orders.insert(id, o);
                // The engine's own cancels (kill switch, death) are sent again by
                // housekeeping; a strategy's is refused.
                if asked {
                    let mut ev = event(EventKind::CancelReject, &o);
                    ev.reason = reason::GATEWAY_BUSY;
                    ev.ts[stamp::ORCH_RECV_COMPLETION] = t;
                    self.emit(o.strategy, ev, out);
                }
            }
            GatewayCmd::Replace { .. } => {
                o.replace_pending = false;
                self.risk.on_replace_failed(sid, o.client_id);
                self.orders.insert(id, o);
                self.rejects.count_engine(reason::GATEWAY_BUSY);
                let mut ev = event(EventKind::ReplaceReject, &o);
                ev.reason = reason::GATEWAY_BUSY;
                self.emit(o.strategy, ev, out);
            }
        }
    }

    /// Rejects a new order that never left the engine.
    pub(crate) fn reject(&mut self, s: u16, live: &Live, code: u16, out: &mut Outputs) {
        if code > 200 {
            self.rejects.count_engine(code);
        }
        let mut ev = event(EventKind::Reject, live);
        ev.reason = code;
        self.emit(s, ev, out);
    }

    fn reject_raw(&mut self, s: u16, req: &Request, t2: u64, code: u16, out: &mut Outputs) {
        self.rejects.count_engine(code);
        self.emit(s, raw_event(EventKind::Reject, req, t2, code), out);
    }

    fn cancel_reject_raw(&mut self, s: u16, req: &Request, t2: u64, code: u16, out: &mut Outputs) {
        self.emit(s, raw_event(EventKind::CancelReject, req, t2, code), out);
    }

    fn replace_reject_raw(&mut self, s: u16, req: &Request, t2: u64, code: u16, out: &mut Outputs) {
        if code > 200 {
            self.rejects.count_engine(code);
        }
        self.emit(s, raw_event(EventKind::ReplaceReject, req, t2, code), out);
    }
}

fn raw_event(kind: EventKind, req: &Request, t2: u64, code: u16) -> Event {
    let mut ev = Event {
        kind: kind as u8,
        side: req.side.min(1),
        reason: code,
        instrument: req.instrument,
        client_id: req.client_id,
        venue: req.venue,
        price: req.price,
        qty: req.qty,
        ..Event::default()
    };
    ev.ts[stamp::STRATEGY_SEND] = req.t1;
    ev.ts[stamp::ORCH_RECV_SUBMIT] = t2;
    ev
}
