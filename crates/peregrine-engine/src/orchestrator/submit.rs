//! Requests from strategies: decode, risk, route.

use peregrine_queue::clock::now_ns;
use peregrine_strategy::msg::{reason, Command, Event, EventKind, NewOrder, Request};
use peregrine_types::stamp;
use peregrine_types::{Price, Qty};

use super::{event, Live, Liveness, Orchestrator, RECEIPTS};
use crate::counters::bump;
use crate::durable::{Rec, SentOrder};
use crate::gateway::GatewayCmd;
use peregrine_risk::{OrderRequest, OrderShape, StrategyId};
use peregrine_venues::VenueOrder;

impl Orchestrator {
    pub(super) fn on_request(&mut self, s: u16, req: Request, t2: u64) {
        let slot = &mut self.slots[s as usize];
        slot.last_seen_ns = t2;
        match slot.state {
            Liveness::Waiting => slot.state = Liveness::Alive,
            // Still read so its new orders get an answer (STRATEGY_DOWN) and are counted.
            Liveness::Dead => slot.after_dead += 1,
            Liveness::Alive => {}
        }
        match req.decode() {
            Err(_) => {
                slot.malformed += 1;
                self.reject_raw(s, &req, t2, reason::MALFORMED);
            }
            Ok(Command::Heartbeat { pid }) => self.slots[s as usize].pid = Some(pid),
            Ok(Command::Receipt { client_id, t8 }) => self.on_receipt(s, client_id, t8),
            Ok(Command::MdReceipt {
                slot,
                exchange_ts,
                recv_ts,
                publish_ts,
                seen_ts,
            }) => self
                .latency
                .record_md(slot as usize, exchange_ts, recv_ts, publish_ts, seen_ts),
            Ok(Command::Cancel { client_id }) => self.on_cancel(s, client_id, &req, t2),
            Ok(Command::New(o)) => self.on_new(s, &o, req.t1, t2),
            Ok(Command::Replace {
                client_id,
                price,
                qty,
            }) => self.on_replace(s, client_id, price, qty, &req, t2),
        }
    }

    fn on_receipt(&mut self, s: u16, client_id: u64, t8: u64) {
        let p = &mut self.slots[s as usize].receipts[client_id as usize & (RECEIPTS - 1)];
        if p.client_id == client_id && p.ts[stamp::STRATEGY_RECV] == 0 {
            p.ts[stamp::STRATEGY_RECV] = t8;
            let (stamps, d) = (p.ts, p.scheduled_ns);
            self.latency.record(&stamps, d);
        }
    }

    fn on_new(&mut self, s: u16, o: &NewOrder, t1: u64, t2: u64) {
        self.tally.orders += 1;
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
            replace_pending: false,
        };
        live.ts[stamp::STRATEGY_SEND] = t1;
        live.ts[stamp::ORCH_RECV_SUBMIT] = t2;
        let engine_reason = if o.venue as usize >= self.gateways.len() {
            Some(reason::UNKNOWN_VENUE)
        } else if !self.instruments.contains(&o.instrument.0) {
            Some(reason::UNKNOWN_INSTRUMENT)
        } else if self.slots[s as usize].state == Liveness::Dead {
            Some(reason::STRATEGY_DOWN)
        } else {
            None
        };
        if let Some(r) = engine_reason {
            return self.reject(s, &live, r);
        }
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
        if let Err(r) = self
            .risk
            .check_new_shaped(StrategyId(s), &request, shape, t2)
        {
            return self.reject(s, &live, r.code());
        }
        let engine_id = self.next_engine_id;
        self.next_engine_id += 1;
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
        };
        if self.journal.is_some() {
            self.log(&Rec::Sent(SentOrder {
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
            }));
            self.commit_journal(); // on file before it can reach the venue
        }
        live.ts[stamp::ORCH_DISPATCH] = now_ns();
        let gw = &mut self.gateways[o.venue as usize];
        if gw.inbox.try_push(GatewayCmd::New(order)).is_err() {
            bump(&gw.counters.inbox.full);
            self.risk.on_done(StrategyId(s), o.client_id);
            self.log(&Rec::Rejected { engine_id });
            return self.reject(s, &live, reason::GATEWAY_BUSY);
        }
        bump(&gw.counters.inbox.pushes);
        self.tally.on_routed(o.venue);
        self.orders.insert(engine_id, live);
        self.by_client.insert((s, o.client_id), engine_id);
    }

    fn on_cancel(&mut self, s: u16, client_id: u64, req: &Request, t2: u64) {
        let Some(&id) = self.by_client.get(&(s, client_id)) else {
            return self.cancel_reject_raw(s, req, t2, reason::UNKNOWN_ORDER);
        };
        if !self.send_cancel(id) {
            self.cancel_reject_raw(s, req, t2, reason::GATEWAY_BUSY);
        }
    }

    /// A replace: the order must be open with no cancel or replace on its way; the new
    /// terms pass risk (which reserves any growth); then it goes to the gateway. The
    /// answer (Replaced or ReplaceReject) comes back as a completion.
    fn on_replace(
        &mut self,
        s: u16,
        client_id: u64,
        price: Price,
        qty: Qty,
        req: &Request,
        t2: u64,
    ) {
        self.tally.replace_requests += 1;
        let Some(&id) = self.by_client.get(&(s, client_id)) else {
            return self.replace_reject_raw(s, req, t2, reason::UNKNOWN_ORDER);
        };
        let Some(o) = self.orders.get(&id) else {
            return self.replace_reject_raw(s, req, t2, reason::UNKNOWN_ORDER);
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
            return self.replace_reject_raw(s, req, t2, code);
        }
        let venue = o.venue as usize;
        let gw = &mut self.gateways[venue];
        let cmd = GatewayCmd::Replace {
            engine_id: id,
            price,
            qty,
        };
        if gw.inbox.try_push(cmd).is_err() {
            bump(&gw.counters.inbox.full);
            self.risk.on_replace_failed(StrategyId(s), client_id);
            return self.replace_reject_raw(s, req, t2, reason::GATEWAY_BUSY);
        }
        bump(&gw.counters.inbox.pushes);
        if let Some(o) = self.orders.get_mut(&id) {
            o.replace_pending = true;
            // The replace's own round trip: its stamps replace the order's.
            o.ts = [0; 8];
            o.ts[stamp::STRATEGY_SEND] = req.t1;
            o.ts[stamp::ORCH_RECV_SUBMIT] = t2;
            o.ts[stamp::ORCH_DISPATCH] = now_ns();
        }
    }

    /// Sends a cancel for engine order `id` unless one is already out; false if the
    /// inbox was full.
    pub(super) fn send_cancel(&mut self, id: u64) -> bool {
        let Some(o) = self.orders.get_mut(&id) else {
            return true;
        };
        if o.cancel_sent {
            return true;
        }
        let gw = &mut self.gateways[o.venue as usize];
        if gw.inbox.try_push(GatewayCmd::Cancel(id)).is_err() {
            bump(&gw.counters.inbox.full);
            return false;
        }
        bump(&gw.counters.inbox.pushes);
        o.cancel_sent = true;
        true
    }

    pub(super) fn count_engine_reject(&mut self, code: u16) {
        *self.engine_rejects.entry(code).or_insert(0) += 1;
    }

    /// Rejects a new order that never left the engine.
    fn reject(&mut self, s: u16, live: &Live, code: u16) {
        if code > 200 {
            self.count_engine_reject(code);
        }
        let mut ev = event(EventKind::Reject, live);
        ev.reason = code;
        self.emit(s, ev);
    }

    fn reject_raw(&mut self, s: u16, req: &Request, t2: u64, code: u16) {
        self.count_engine_reject(code);
        self.emit(s, raw_event(EventKind::Reject, req, t2, code));
    }

    fn cancel_reject_raw(&mut self, s: u16, req: &Request, t2: u64, code: u16) {
        self.emit(s, raw_event(EventKind::CancelReject, req, t2, code));
    }

    fn replace_reject_raw(&mut self, s: u16, req: &Request, t2: u64, code: u16) {
        if code > 200 {
            self.count_engine_reject(code);
        }
        self.emit(s, raw_event(EventKind::ReplaceReject, req, t2, code));
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
