//! Order lists (OCO, OTO, OTOCO) from a strategy (issue 31).
//!
//! A strategy's `Api::send_list` pushes each leg as its extension record (naming the
//! list kind and the leg's index) followed by the leg's `New`, all in one go. The core
//! gathers the legs of a slot in order; the list is checked and sent once its last
//! leg is in, as its legs' [`GatewayCmd::ListLeg`]s one after the other (the gateway
//! gathers them again into one `submit_list`), or every leg is refused with one reason:
//!
//! * a leg out of order, a missing leg (another request comes between the legs) or
//!   legs on different venues or instruments: `BAD_EXTENSION` (210), counted as
//!   malformed;
//! * a venue whose adapter has no lists (`VenueSpec::lists`): `UNSUPPORTED` (209),
//!   never sent as separate orders;
//! * the engine's own checks of a single order (unknown venue or instrument, the
//!   strategy dead, no room in the order table for every leg);
//! * risk: each leg is checked in leg order and holds its room, so the list counts as
//!   the sum of its legs (exact for an OTO or OTOCO, whose legs can all trade; an
//!   over-count by the smaller leg for an OCO, of which at most one leg trades). The
//!   first leg that fails refuses the list with its code; the legs before it give
//!   their room back.
//!
//! Once sent, each leg is an order of its own (its ack, fills, cancel); the venue's
//! `ListStatus` reaches the strategy as an event of kind `ListStatus` about leg 0's
//! client id.

use peregrine_strategy::msg::{reason, Command, DecodeError, Event, EventKind, NewOrder};
use peregrine_types::{stamp, ListKind};
use peregrine_venues::{ListState, VenueOrder};

use crate::io::{GatewayCmd, Note, Output, Outputs};
use crate::record::is_orphan;
use crate::state::{Gathering, ListRef, Liveness, Orchestrator};

impl Gathering {
    /// Whether the request just decoded (`cmd`, after an extension naming `pending`)
    /// is the next part of this list: the next leg's extension, or its order.
    pub(crate) fn continues(
        &self,
        pending: Option<Option<(ListKind, u8)>>,
        cmd: &Result<Command, DecodeError>,
    ) -> bool {
        let next = Some((self.kind, self.n));
        match (pending, cmd) {
            (None, Ok(Command::Ext { list, .. })) => *list == next,
            (Some(list), Ok(Command::New(_))) => list == next,
            _ => false,
        }
    }
}

impl Orchestrator {
    /// Leg `leg` of a list of `kind` arrived (its extension joined).
    #[allow(clippy::too_many_arguments)] // the request's parts, decoded
    pub(crate) fn on_list_leg(
        &mut self,
        s: u16,
        o: NewOrder,
        kind: ListKind,
        leg: u8,
        t1: u64,
        t2: u64,
        out: &mut Outputs,
    ) {
        self.tally.orders += 1;
        let slot = &mut self.slots[s as usize];
        match slot.pending_list.as_mut() {
            None if leg == 0 => {
                slot.pending_list = Some(Gathering {
                    kind,
                    n: 1,
                    legs: [o; 3],
                    t1,
                })
            }
            Some(g) if g.kind == kind && g.n == leg => {
                g.legs[leg as usize] = o;
                g.n += 1;
            }
            _ => {
                // A leg whose earlier legs are missing.
                slot.malformed += 1;
                self.abort_list(s, t2, out);
                let live = Self::live_of(s, &o, t1, t2);
                return self.reject(s, &live, reason::BAD_EXTENSION, out);
            }
        }
        let slot = &mut self.slots[s as usize];
        if slot
            .pending_list
            .is_some_and(|g| g.n as usize == kind.legs())
        {
            let g = slot.pending_list.take().expect("just checked");
            self.on_list(s, g, t2, out);
        }
    }

    /// A list left incomplete: every leg read so far is refused.
    pub(crate) fn abort_list(&mut self, s: u16, t2: u64, out: &mut Outputs) {
        let Some(g) = self.slots[s as usize].pending_list.take() else {
            return;
        };
        self.slots[s as usize].malformed += 1;
        self.refuse_legs(s, &g, reason::BAD_EXTENSION, t2, out);
    }

    fn refuse_legs(&mut self, s: u16, g: &Gathering, code: u16, t2: u64, out: &mut Outputs) {
        for o in &g.legs[..g.n as usize] {
            let live = Self::live_of(s, o, g.t1, t2);
            self.reject(s, &live, code, out);
        }
    }

    /// Every leg is in: check the list as a whole, then send it or refuse every leg.
    fn on_list(&mut self, s: u16, g: Gathering, t2: u64, out: &mut Outputs) {
        let n = g.kind.legs();
        let legs = g.legs;
        let first = legs[0];
        let v = first.venue as usize;
        let code = if legs[..n]
            .iter()
            .any(|l| l.venue != first.venue || l.instrument != first.instrument)
        {
            self.slots[s as usize].malformed += 1;
            Some(reason::BAD_EXTENSION)
        } else if v >= self.cfg.venues.len() {
            Some(reason::UNKNOWN_VENUE)
        } else if !self.cfg.instruments.contains(&first.instrument.0) {
            Some(reason::UNKNOWN_INSTRUMENT)
        } else if self.slots[s as usize].state == Liveness::Dead {
            Some(reason::STRATEGY_DOWN)
        } else if !self.cfg.venues[v].lists {
            Some(reason::UNSUPPORTED)
        } else if self.orders.len() + n > self.cfg.max_in_flight {
            if self.rejects.engine(reason::GATEWAY_BUSY) == 0 {
                out.push(Output::Note(Note::OrderTableFull));
            }
            Some(reason::GATEWAY_BUSY)
        } else {
            None
        };
        if let Some(code) = code {
            return self.refuse_legs(s, &g, code, t2, out);
        }
        // Risk, leg by leg: each holds its room, so the list holds their sum.
        for i in 0..n {
            if let Err(code) = self.risk_check(s, &legs[i], t2) {
                for l in &legs[..i] {
                    self.risk
                        .on_done(peregrine_risk::StrategyId(s), l.client_id);
                }
                return self.refuse_legs(s, &g, code, t2, out);
            }
        }
        let first_id = self.next_engine_id;
        self.next_engine_id += n as u64;
        let mut wire =
            [VenueOrder::limit(0, first.instrument, first.side, first.price, first.qty); 3];
        for (i, o) in legs[..n].iter().enumerate() {
            let engine_id = first_id + i as u64;
            let (rec, order) = Self::sent_of(s, o, engine_id);
            // Write-ahead: every leg's `Sent` is journaled before the list goes out.
            self.record(rec, out);
            wire[i] = order;
            self.orders.insert(engine_id, Self::live_of(s, o, g.t1, t2));
            self.by_client.insert((s, o.client_id), engine_id);
            self.tally.on_routed(first.venue);
        }
        self.lists.insert(
            first_id,
            ListRef {
                strategy: s,
                client_id: first.client_id,
                venue: first.venue,
                instrument: first.instrument.0,
            },
        );
        // The legs after every `Sent`, consecutively: the gateway gathers them.
        for (i, order) in wire[..n].iter().enumerate() {
            out.push(Output::Gateway {
                venue: first.venue,
                cmd: GatewayCmd::ListLeg {
                    kind: g.kind,
                    index: i as u8,
                    order: *order,
                },
            });
        }
    }

    /// The venue's `ListStatus` about the list whose leg 0 is `engine_id`.
    pub(crate) fn on_list_status(
        &mut self,
        engine_id: u64,
        status: ListState,
        venue_reason: u16,
        t6: u64,
        out: &mut Outputs,
    ) {
        let Some(&l) = self.lists.get(&engine_id) else {
            return; // not one of this run's lists (or already resolved)
        };
        if status != ListState::Accepted {
            self.lists.remove(&engine_id);
        }
        if is_orphan(l.client_id) {
            return;
        }
        let mut ev = Event {
            kind: EventKind::ListStatus as u8,
            client_id: l.client_id,
            venue: l.venue,
            instrument: l.instrument,
            qty: status as i64,
            ..Event::default()
        };
        if status == ListState::Rejected {
            ev.reason = crate::complete::venue_reason(venue_reason);
        }
        ev.ts[stamp::ORCH_RECV_COMPLETION] = t6;
        self.emit(l.strategy, ev, out);
    }

    /// A list that never reached its venue: forgotten (its legs are refused one by one).
    pub(crate) fn list_failed(&mut self, engine_id: u64) {
        self.lists.remove(&engine_id);
    }
}
