//! A FIX 4.4 venue: the engine as a FIX initiator (`peregrine-fix`'s session layer),
//! so the order engine can trade at any venue that speaks FIX 4.4, Peregrine's own
//! `peregrine gateway fix` included.
//!
//! One [`FixVenue`] is one FIX session on one gateway thread; like the exchange
//! adapter it never blocks the gateway except to connect (bounded by one second).
//! Orders go out as NewOrderSingle (GTC limit), cancels as OrderCancelRequest,
//! replaces as OrderCancelReplaceRequest (OrderQty = filled so far + the new open
//! quantity, as FIX defines it). ClOrdIDs are decimal numbers from a counter started
//! at the wall clock in ns. ExecutionReports and OrderCancelRejects become
//! [`Report`]s; OrdRejReason / CxlRejReason travel as the report's reason code.
//!
//! **A cancel waits until the order can be named.** A venue renames an order when a
//! replace takes effect (its ClOrdID becomes the replace's) and may refuse a cancel of
//! an order it has not acknowledged yet. So a cancel asked for before the order's
//! acknowledgement, or while a replace of it is in flight, is held and sent as soon as
//! the venue has answered (naming the order's ClOrdID then): otherwise it could arrive
//! just after the rename, be refused as "unknown order", and leave the order live,
//! which for an engine's kill switch is the one outcome that must not happen.
//!
//! **Disconnects.** Nothing is guessed about an order: one the venue had not
//! acknowledged when the session dropped is *in doubt* (held, with its risk, no report
//! to the engine). After the next Logon the adapter asks the venue about each such
//! order (OrderStatusRequest, by ClOrdID): any ExecutionReport for it settles it as it
//! says, and "unknown order" means it never arrived (reported `Rejected` with
//! [`REASON_DISCONNECTED`]). A replace in flight at the drop is reported
//! `ReplaceRejected` the same way (the order itself stays open; its later reports
//! carry the truth). With a `store` file the session keeps its sequence numbers, and
//! the venue's resend after the next Logon delivers what happened meanwhile (before
//! the status answers, which it handles after the resend request); without one, every
//! Logon resets the sequence (ResetSeqNumFlag) and such reports are lost (configure a
//! store for real use). What the adapter logs is kept for the gateway's log thread.

mod config;
mod inbound;
#[cfg(test)]
mod tests;

pub use config::{FixInstrument, FixVenueConfig};

use peregrine_types::wall_ns;
use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use peregrine_fix::app::{
    self, NewOrderSingle, OrdType, OrderCancelReplaceRequest, OrderCancelRequest,
    OrderStatusRequest, OrderTerms, SelfMatchPrevention, TimeInForce,
};
use peregrine_fix::codec::value::{write_decimal, write_u64};
use peregrine_fix::codec::Precision;
use peregrine_fix::session::{Event, Received, Role, Session, SessionConfig};
use peregrine_fix::store::{Durability, FileStore, MemoryStore, MessageStore};
use peregrine_types::{OrderType, Price, Qty, TimeInForce as PTif};
use rustc_hash::FxHashMap;

use super::{Report, Venue, VenueError, VenueOrder, REASON_DISCONNECTED};
use crate::log::LogLines;

/// What the adapter knows about one order.
#[derive(Debug, Clone)]
struct Tracked {
    instrument: usize,
    side: app::Side,
    /// The order's current ClOrdID.
    cl: u64,
    acked: bool,
    cum: i64,
    leaves: i64,
    price: i64,
    /// A replace in flight: its ClOrdID.
    replacing: Option<u64>,
    /// The order as submitted (type, time in force, STP, expiry: a replace repeats them).
    terms: VenueOrder,
    /// Sent but not acknowledged when the session dropped: its fate is asked for
    /// after the next Logon.
    in_doubt: bool,
    /// A cancel was asked for while the order could not be named safely: not yet
    /// acknowledged, or a replace in flight (the venue renames the order when the
    /// replace takes effect, so a cancel naming the old ClOrdID could arrive after
    /// the rename and be refused as unknown, leaving the order live). It is sent as
    /// soon as the order is acknowledged with no replace in flight
    /// ([`FixVenue::flush_cancel`]).
    cancel_after: bool,
}

impl Tracked {
    /// Whether a cancel can name the order now: the venue acknowledged it (an order
    /// in doubt is not acknowledged) and no replace of it is in flight.
    fn nameable(&self) -> bool {
        self.acked && self.replacing.is_none()
    }
}

/// A FIX 4.4 venue.
#[derive(Debug)]
pub struct FixVenue {
    name: String,
    cfg: FixVenueConfig,
    addr: SocketAddr,
    session: Session<Box<dyn MessageStore + Send>>,
    stream: Option<TcpStream>,
    rx: Vec<u8>,
    len: usize,
    next_connect_ns: u64,
    orders: FxHashMap<u64, Tracked>,
    /// ClOrdID (the order's, or a request's) → engine id.
    by_cl: FxHashMap<u64, u64>,
    next_cl: u64,
    pending: VecDeque<Report>,
    text: [Vec<u8>; 3],
    log: LogLines,
}

impl FixVenue {
    /// An adapter named `name`; connects at the first poll.
    pub fn new(name: &str, cfg: FixVenueConfig) -> Result<FixVenue, String> {
        let problems = cfg.problems(name);
        if !problems.is_empty() {
            return Err(problems.join("; "));
        }
        let addr = cfg
            .addr
            .parse()
            .map_err(|_| format!("{name}: addr {:?}", cfg.addr))?;
        let now = wall_ns();
        let mut session_cfg =
            SessionConfig::new(Role::Initiator, &cfg.sender_comp_id, &cfg.target_comp_id);
        session_cfg.heartbeat_secs = cfg.heartbeat_secs;
        session_cfg.password = cfg.password.clone();
        let store: Box<dyn MessageStore + Send> = match &cfg.store {
            Some(path) => Box::new(
                FileStore::open(path, Durability::OsBuffer, now).map_err(|e| e.to_string())?,
            ),
            None => {
                session_cfg.reset_on_logon = true;
                Box::new(MemoryStore::new(now))
            }
        };
        let rx = vec![0; session_cfg.limits.max_message() * 2];
        Ok(FixVenue {
            name: name.to_owned(),
            addr,
            session: Session::new(session_cfg, store),
            stream: None,
            rx,
            len: 0,
            next_connect_ns: 0,
            orders: FxHashMap::default(),
            by_cl: FxHashMap::default(),
            next_cl: now,
            pending: VecDeque::new(),
            text: [Vec::new(), Vec::new(), Vec::new()],
            log: LogLines::default(),
            cfg,
        })
    }

    /// Whether the FIX session is logged on.
    pub fn logged_on(&self) -> bool {
        self.stream.is_some() && self.session.is_logged_on()
    }

    fn next_cl(&mut self) -> u64 {
        self.next_cl += 1;
        self.next_cl
    }

    fn instrument(&self, id: u32) -> Option<usize> {
        self.cfg.instruments.iter().position(|i| i.id == id)
    }

    /// Writes `cl` as text into scratch 0, the price into 1, the quantity into 2.
    fn texts(&mut self, cl: u64, price: i64, qty: i64, instrument: usize) {
        let spec = &self.cfg.instruments[instrument];
        for t in &mut self.text {
            t.clear();
        }
        write_u64(&mut self.text[0], cl);
        write_decimal(&mut self.text[1], price, spec.price_decimals);
        write_decimal(&mut self.text[2], qty, spec.qty_decimals);
    }

    fn connect(&mut self, now_ns: u64) {
        self.next_connect_ns = now_ns + self.cfg.reconnect_ms * 1_000_000;
        let stream = match TcpStream::connect_timeout(&self.addr, Duration::from_secs(1)) {
            Ok(s) => s,
            Err(e) => {
                self.log.push(format!(
                    "venue {}: connecting to {}: {e}",
                    self.name, self.addr
                ));
                return;
            }
        };
        if stream.set_nonblocking(true).is_err() || stream.set_nodelay(true).is_err() {
            return;
        }
        self.len = 0;
        if let Err(e) = self.session.connect(wall_ns()) {
            self.log.push(format!("venue {}: store: {e}", self.name));
            return;
        }
        self.stream = Some(stream);
    }

    fn disconnect(&mut self, why: &str) {
        if let Some(s) = self.stream.take() {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
        self.session.disconnected();
        let mut doubt = 0;
        for (&engine_id, o) in &mut self.orders {
            if !o.acked {
                o.in_doubt = true;
                doubt += 1;
            } else if o.replacing.take().is_some() {
                self.pending.push_back(Report::ReplaceRejected {
                    engine_id,
                    reason: REASON_DISCONNECTED,
                });
            }
        }
        self.log.push(format!(
            "venue {}: disconnected: {why}; {doubt} unacknowledged orders in doubt until \
             the venue answers for them after the next logon",
            self.name
        ));
    }

    /// After a Logon: asks the venue about every order in doubt.
    fn query_in_doubt(&mut self) {
        for engine_id in self.orders_where(|o| o.in_doubt) {
            let Some(o) = self.orders.get(&engine_id).cloned() else {
                continue;
            };
            let mut cl = Vec::new();
            write_u64(&mut cl, o.cl);
            let h = OrderStatusRequest {
                cl_ord_id: &cl,
                order_id: None,
                symbol: self.cfg.instruments[o.instrument].symbol.as_bytes(),
                side: o.side,
                req_id: None,
            };
            if self
                .session
                .send_app(b"H", wall_ns(), |w| h.encode(w))
                .is_err()
            {
                return; // asked again after the next logon
            }
        }
        self.write();
    }

    fn forget(&mut self, engine_id: u64) {
        if let Some(o) = self.orders.remove(&engine_id) {
            self.by_cl.remove(&o.cl);
            if let Some(r) = o.replacing {
                self.by_cl.remove(&r);
            }
        }
    }

    /// Reads, runs the session, writes.
    fn pump(&mut self) -> Result<(), &'static str> {
        let now = wall_ns();
        let Some(stream) = self.stream.as_mut() else {
            return Ok(());
        };
        match stream.read(&mut self.rx[self.len..]) {
            Ok(0) => return Err("the venue closed the connection"),
            Ok(n) => self.len += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(_) => return Err("read error"),
        }
        let mut used = 0;
        let mut close = None;
        while close.is_none() {
            let rx = std::mem::take(&mut self.rx);
            let step = self.session.receive(&rx[used..self.len], now);
            let outcome = match step {
                Err(_) => Err("message store failed"),
                Ok(Received::NeedMore) => Ok(None),
                Ok(Received::Consumed { len, event }) => {
                    used += len;
                    match event {
                        Some(Event::App(m)) => {
                            self.on_app(&m);
                            Ok(Some(()))
                        }
                        Some(Event::Disconnect(r)) => Err(r.text()),
                        Some(Event::LoggedOn { .. }) => {
                            self.log.push(format!(
                                "venue {}: logged on to {}",
                                self.name, self.cfg.target_comp_id
                            ));
                            self.query_in_doubt();
                            self.flush_cancels();
                            Ok(Some(()))
                        }
                        _ => Ok(Some(())),
                    }
                }
            };
            self.rx = rx;
            match outcome {
                Ok(Some(())) => {}
                Ok(None) => break,
                Err(why) => close = Some(why),
            }
        }
        self.rx.copy_within(used..self.len, 0);
        self.len -= used;
        if close.is_none() {
            match self.session.poll(now) {
                Ok(Some(Event::Disconnect(r))) => close = Some(r.text()),
                Ok(_) => {}
                Err(_) => close = Some("message store failed"),
            }
        }
        self.write();
        match close {
            Some(why) => Err(why),
            None => Ok(()),
        }
    }

    fn write(&mut self) {
        let Some(stream) = self.stream.as_mut() else {
            return;
        };
        while let Ok(out) = self.session.outbound() {
            if out.is_empty() {
                return;
            }
            match stream.write(out) {
                Ok(n) => self.session.consume_outbound(n),
                Err(_) => return,
            }
        }
    }

    /// The order `engine_id` as tracked (a copy: the caller goes on to change `self`).
    fn tracked(&self, engine_id: u64) -> Result<Tracked, VenueError> {
        self.orders
            .get(&engine_id)
            .cloned()
            .ok_or(VenueError::UnknownOrder(engine_id))
    }

    /// Sends an OrderCancelRequest naming the order's current ClOrdID.
    fn send_cancel(&mut self, engine_id: u64) -> Result<(), VenueError> {
        let o = self.tracked(engine_id)?;
        let cl = self.next_cl();
        self.texts(cl, 0, 0, o.instrument);
        let mut orig = Vec::new();
        write_u64(&mut orig, o.cl);
        let f = OrderCancelRequest {
            orig_cl_ord_id: &orig,
            cl_ord_id: &self.text[0],
            order_id: None,
            symbol: self.cfg.instruments[o.instrument].symbol.as_bytes(),
            side: o.side,
            transact_time: wall_ns(),
        };
        self.session
            .send_app(b"F", wall_ns(), |w| f.encode(w, Precision::Millis))
            .map_err(|_| VenueError::Disconnected)?;
        self.by_cl.insert(cl, engine_id);
        self.write();
        Ok(())
    }

    /// Sends the cancel deferred for `engine_id` ([`Tracked::cancel_after`]) if the
    /// order can now be named: acknowledged, no replace in flight, the session up.
    /// If the session cannot send, the cancel stays deferred until the next Logon.
    pub(super) fn flush_cancel(&mut self, engine_id: u64) {
        let ready = self
            .orders
            .get(&engine_id)
            .is_some_and(|o| o.cancel_after && o.nameable());
        if !ready || !self.logged_on() {
            return;
        }
        if self.send_cancel(engine_id).is_ok() {
            if let Some(o) = self.orders.get_mut(&engine_id) {
                o.cancel_after = false;
            }
        }
    }

    /// After a Logon: every deferred cancel that can go now.
    fn flush_cancels(&mut self) {
        for engine_id in self.orders_where(|o| o.cancel_after) {
            self.flush_cancel(engine_id);
        }
    }

    /// The engine ids of the tracked orders that `f` picks, in id order (so what the
    /// adapter sends after a Logon does not depend on the hash map's order).
    fn orders_where(&self, f: impl Fn(&Tracked) -> bool) -> Vec<u64> {
        let mut ids: Vec<u64> = self
            .orders
            .iter()
            .filter(|(_, o)| f(o))
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        ids
    }
}

impl Venue for FixVenue {
    /// A FIX venue rejects with OrdRejReason (103) values.
    fn reason_name(code: u16) -> &'static str {
        app::ord_rej_reason_name(code)
    }

    fn drain_log(&mut self, out: &mut dyn FnMut(String)) {
        self.log.drain(out);
    }

    fn in_doubt(&self) -> usize {
        self.orders.values().filter(|o| o.in_doubt).count()
    }

    fn submit(&mut self, order: VenueOrder, _now_ns: u64) -> Result<(), VenueError> {
        // This adapter sends OrdType 1/2 only (no StopPx, MaxFloor): a stop or an
        // iceberg is refused here, never sent as a plain order.
        if !order.ext.is_plain() {
            return Err(VenueError::Unsupported);
        }
        if !self.logged_on() {
            return Err(VenueError::Disconnected);
        }
        let Some(instrument) = self.instrument(order.instrument.0) else {
            self.pending.push_back(Report::Rejected {
                engine_id: order.engine_id,
                reason: app::OrdRejReason::UnknownSymbol as u16,
            });
            return Ok(());
        };
        let cl = self.next_cl();
        self.texts(cl, order.price.units(), order.qty.lots(), instrument);
        let side = app::Side::from_peregrine(order.side);
        let d = NewOrderSingle {
            cl_ord_id: &self.text[0],
            account: None,
            transact_time: wall_ns(),
            terms: OrderTerms {
                symbol: self.cfg.instruments[instrument].symbol.as_bytes(),
                side,
                order_qty: &self.text[2],
                // A market order carries its protection price as Price (44).
                ord_type: match order.order_type {
                    OrderType::Market => OrdType::Market,
                    OrderType::Limit | OrderType::PostOnly => OrdType::Limit,
                },
                price: Some(&self.text[1]),
                time_in_force: match order.tif {
                    PTif::Gtc => TimeInForce::Gtc,
                    PTif::Ioc => TimeInForce::Ioc,
                    PTif::Fok => TimeInForce::Fok,
                    PTif::Gtd => TimeInForce::Gtd,
                },
                expire_time: (order.tif == PTif::Gtd).then_some(order.expire_at),
                post_only: order.order_type == OrderType::PostOnly,
                self_match: SelfMatchPrevention::from_peregrine(order.stp),
            },
        };
        self.session
            .send_app(b"D", wall_ns(), |w| d.encode(w, Precision::Millis))
            .map_err(|_| VenueError::Disconnected)?;
        self.orders.insert(
            order.engine_id,
            Tracked {
                instrument,
                side,
                cl,
                acked: false,
                cum: 0,
                leaves: order.qty.lots(),
                price: order.price.units(),
                replacing: None,
                terms: order,
                in_doubt: false,
                cancel_after: false,
            },
        );
        self.by_cl.insert(cl, order.engine_id);
        self.write();
        Ok(())
    }

    fn cancel(&mut self, engine_id: u64, _now_ns: u64) -> Result<(), VenueError> {
        if !self.logged_on() {
            return Err(VenueError::Disconnected);
        }
        let o = self
            .orders
            .get_mut(&engine_id)
            .ok_or(VenueError::UnknownOrder(engine_id))?;
        if !o.nameable() {
            o.cancel_after = true;
            return Ok(());
        }
        self.send_cancel(engine_id)
    }

    fn replace(
        &mut self,
        engine_id: u64,
        price: Price,
        qty: Qty,
        _now_ns: u64,
    ) -> Result<(), VenueError> {
        if !self.logged_on() {
            return Err(VenueError::Disconnected);
        }
        let o = self.tracked(engine_id)?;
        let cl = self.next_cl();
        // FIX's OrderQty is the total: what filled plus the new open quantity.
        self.texts(cl, price.units(), o.cum + qty.lots(), o.instrument);
        let mut orig = Vec::new();
        write_u64(&mut orig, o.cl);
        let g = OrderCancelReplaceRequest {
            orig_cl_ord_id: &orig,
            cl_ord_id: &self.text[0],
            order_id: None,
            transact_time: wall_ns(),
            terms: OrderTerms {
                symbol: self.cfg.instruments[o.instrument].symbol.as_bytes(),
                side: o.side,
                order_qty: &self.text[2],
                ord_type: match o.terms.order_type {
                    OrderType::Market => OrdType::Market,
                    OrderType::Limit | OrderType::PostOnly => OrdType::Limit,
                },
                price: Some(&self.text[1]),
                time_in_force: match o.terms.tif {
                    PTif::Gtc => TimeInForce::Gtc,
                    PTif::Ioc => TimeInForce::Ioc,
                    PTif::Fok => TimeInForce::Fok,
                    PTif::Gtd => TimeInForce::Gtd,
                },
                expire_time: (o.terms.tif == PTif::Gtd).then_some(o.terms.expire_at),
                post_only: o.terms.order_type == OrderType::PostOnly,
                self_match: SelfMatchPrevention::from_peregrine(o.terms.stp),
            },
        };
        self.session
            .send_app(b"G", wall_ns(), |w| g.encode(w, Precision::Millis))
            .map_err(|_| VenueError::Disconnected)?;
        if let Some(t) = self.orders.get_mut(&engine_id) {
            t.replacing = Some(cl);
        }
        self.by_cl.insert(cl, engine_id);
        self.write();
        Ok(())
    }

    fn poll(&mut self, now_ns: u64, out: &mut dyn FnMut(Report)) -> usize {
        if self.stream.is_none() && now_ns >= self.next_connect_ns {
            self.connect(now_ns);
        }
        if self.stream.is_some() {
            if let Err(why) = self.pump() {
                self.disconnect(why);
            }
        }
        let mut n = 0;
        while let Some(r) = self.pending.pop_front() {
            out(r);
            n += 1;
        }
        n
    }
}
