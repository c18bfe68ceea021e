//! A model of the Peregrine exchange at the protocol level, for the simulation: one
//! account's order-entry sessions (protocol v2: challenge, login with a proof, the
//! account's report stream numbered and replayed from where a login asks), in front of
//! the simulated market (`peregrine_venues::sim::SimMarket`: the exchange's own book
//! and a seeded order flow). It keeps the exchange's record of the account's fills:
//! the other side of the drift invariant.
//!
//! Connections are in memory ([`SimConnect`], the adapter's `Connect` seam): bytes the
//! adapter writes are handled at once (unless the connection has been cut: then they
//! are lost, as in a socket whose peer is gone); what the exchange sends waits until
//! the adapter reads it, and is lost if the connection drops first.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{Error, ErrorKind};
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, OrderId, OrderType, Price, Qty, Side, StpMode,
    TimeInForce, Timestamp,
};
use peregrine_venues::exchange::{Connect, Link};
use peregrine_venues::sim::market::{MarketConfig, SimMarket};
use peregrine_venues::{Report, VenueOrder};
use peregrine_wire::auth::AccountKey;
use peregrine_wire::field::{Pad, SessionKind};
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::v2::reports::{
    Accepted, CancelRejected, Cancelled, Fill, MassCancelDone, Rejected, Replaced,
};
use peregrine_wire::v2::session::{Challenge, LoginAccepted, ReplayEnd, ReplayStart};
use peregrine_wire::v2::{Inbound, Outbound};
use peregrine_wire::{LiquidityRole, ReasonCode, RequestKind};
use rustc_hash::FxHashMap;

/// The engine's account at the model exchange.
pub(crate) const ACCOUNT: AccountId = AccountId(1);
/// Its key.
pub(crate) const KEY: AccountKey = AccountKey([0x11; 32]);
/// The heartbeat interval the model grants: long, so the simulation's time steps
/// never look like silence.
const HEARTBEAT_MS: u32 = 3_600_000;

/// One order of the account, as the exchange knows it.
#[derive(Debug, Clone, Copy)]
struct Open {
    /// The key the simulated market knows it by (its first client order id).
    key: u64,
    /// Its current client order id (a replace changes it).
    cl: u64,
}

/// What the market is answering right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Req {
    /// The flow (no request of the account).
    Flow,
    /// A new order.
    New,
    /// A cancel.
    Cancel,
    /// A replace.
    Replace,
    /// A mass cancel.
    Mass,
}

/// A session: one connection's state.
#[derive(Debug)]
struct Conn {
    id: u64,
    rx: Box<RecvBuffer<65_536>>,
    out: VecDeque<u8>,
    session_seq: u64,
    nonce: [u8; 32],
    logged_in: bool,
    /// Bytes written by the adapter are lost (the link is broken but not yet noticed).
    cut: bool,
}

/// The model exchange.
#[derive(Debug)]
pub(crate) struct ModelExchange {
    market: SimMarket,
    now: u64,
    /// Account 1's report stream: report `n` is `stream[n - 1]`.
    stream: Vec<Outbound>,
    conn: Option<Conn>,
    next_conn: u64,
    /// Refuses connections (the exchange is down).
    pub(crate) down: bool,
    /// Open orders by exchange order id.
    open: FxHashMap<u64, Open>,
    /// Exchange order id by the market's key.
    by_key: FxHashMap<u64, u64>,
    /// The request (client order id, kind) the market is answering right now.
    current: (u64, Req),
    /// Each order's side, by the market's key.
    sides: FxHashMap<u64, Side>,
    /// The exchange's record: account 1's net position and fills, per order key.
    pub(crate) net: i64,
    pub(crate) fills_by_key: FxHashMap<u64, i64>,
    pub(crate) fill_count: u64,
    trade_id: u64,
    engine_seq: u64,
}

impl ModelExchange {
    /// An exchange over a simulated market seeded with `seed`, at time `now`.
    pub(crate) fn new(seed: u64, now: u64) -> ModelExchange {
        let cfg = MarketConfig {
            max_qty: 3,
            ..MarketConfig::default()
        };
        let mut m = ModelExchange {
            market: SimMarket::new(cfg, &[1], seed, None),
            now,
            stream: Vec::new(),
            conn: None,
            next_conn: 1,
            down: false,
            open: FxHashMap::default(),
            by_key: FxHashMap::default(),
            current: (0, Req::Flow),
            sides: FxHashMap::default(),
            net: 0,
            fills_by_key: FxHashMap::default(),
            fill_count: 0,
            trade_id: 0,
            engine_seq: 0,
        };
        m.advance(now);
        m
    }

    /// The market's flow up to `now` (fills of resting orders go to the stream).
    pub(crate) fn advance(&mut self, now: u64) {
        self.now = now.max(self.now);
        let mut reports = Vec::new();
        self.market.advance(self.now, &mut |r| reports.push(r));
        self.current = (0, Req::Flow);
        for r in reports {
            self.report(r);
        }
    }

    /// The fair value of the market (where strategies aim their orders).
    pub(crate) fn fair(&self) -> i64 {
        self.market.fair(InstrumentId(1)).unwrap_or(10_000)
    }

    /// The connection drops: what the exchange had not sent yet is lost with it.
    pub(crate) fn drop_connection(&mut self) {
        self.conn = None;
    }

    /// The link breaks silently: from now on, what the adapter writes is lost.
    pub(crate) fn cut(&mut self) {
        if let Some(c) = self.conn.as_mut() {
            c.cut = true;
        }
    }

    /// Bytes waiting for the adapter.
    pub(crate) fn pending_out(&self) -> usize {
        self.conn.as_ref().map_or(0, |c| c.out.len())
    }

    /// Whether a session is logged in.
    pub(crate) fn logged_in(&self) -> bool {
        self.conn.as_ref().is_some_and(|c| c.logged_in)
    }

    fn connect(&mut self) -> Result<u64, Error> {
        if self.down {
            return Err(Error::new(ErrorKind::ConnectionRefused, "exchange down"));
        }
        let id = self.next_conn;
        self.next_conn += 1;
        let nonce = [(id % 251) as u8; 32];
        self.conn = Some(Conn {
            id,
            rx: Box::new(RecvBuffer::new()),
            out: VecDeque::new(),
            session_seq: 0,
            nonce,
            logged_in: false,
            cut: false,
        });
        self.send(
            Challenge {
                session_seq: 0,
                engine_seq: 0,
                engine_time: Timestamp(0),
                nonce,
            }
            .into(),
        );
        Ok(id)
    }

    fn write(&mut self, id: u64, bytes: &[u8]) -> Result<usize, Error> {
        let Some(c) = self.conn.as_mut().filter(|c| c.id == id) else {
            return Err(Error::new(ErrorKind::BrokenPipe, "connection gone"));
        };
        if c.cut {
            return Ok(bytes.len());
        }
        let mut done = 0;
        while done < bytes.len() {
            let Some(c) = self.conn.as_mut() else {
                break;
            };
            let spare = c.rx.spare();
            let n = spare.len().min(bytes.len() - done);
            spare[..n].copy_from_slice(&bytes[done..done + n]);
            c.rx.commit(n);
            done += n;
            self.handle_input(id);
        }
        Ok(bytes.len())
    }

    fn read(&mut self, id: u64, buf: &mut [u8]) -> Result<usize, Error> {
        let Some(c) = self.conn.as_mut().filter(|c| c.id == id) else {
            return Ok(0); // EOF: the exchange closed it
        };
        if c.out.is_empty() {
            return Err(Error::new(ErrorKind::WouldBlock, "nothing to read"));
        }
        let n = buf.len().min(c.out.len());
        for (b, x) in buf.iter_mut().zip(c.out.drain(..n)) {
            *b = x;
        }
        Ok(n)
    }

    fn handle_input(&mut self, id: u64) {
        loop {
            let Some(c) = self.conn.as_mut().filter(|c| c.id == id) else {
                return;
            };
            let m = match c.rx.next(Inbound::decode) {
                Ok(Some(m)) => m,
                Ok(None) => return,
                Err(e) => panic!("the adapter sent bytes the exchange cannot decode: {e:?}"),
            };
            self.request(m);
        }
    }

    fn request(&mut self, m: Inbound) {
        match m {
            Inbound::Login(login) => self.login(&login),
            Inbound::ClientHeartbeat(_) => {}
            Inbound::NewOrder(o) => {
                let cl = o.client_order_id.0;
                self.current = (cl, Req::New);
                self.sides.insert(cl, o.side);
                let order = VenueOrder {
                    engine_id: cl,
                    instrument: o.instrument,
                    side: o.side,
                    price: o.price,
                    qty: o.qty,
                    order_type: o.order_type,
                    tif: o.tif,
                    stp: o.stp,
                    expire_at: o.expire_at.0,
                    ext: peregrine_types::OrderExt::NONE,
                };
                let mut reports = Vec::new();
                self.market
                    .submit(&order, self.now, &mut |r| reports.push(r));
                for r in reports {
                    self.report(r);
                }
            }
            Inbound::Cancel(c) => {
                let cl = c.client_order_id.0;
                self.current = (cl, Req::Cancel);
                match self.open.get(&c.order_id.0).copied() {
                    None => self.cancel_rejected(cl, c.order_id.0, RequestKind::Cancel),
                    Some(o) => {
                        let mut reports = Vec::new();
                        self.market
                            .cancel(o.key, self.now, &mut |r| reports.push(r));
                        for r in reports {
                            self.report(r);
                        }
                    }
                }
            }
            Inbound::Replace(r) => {
                let cl = r.client_order_id.0;
                self.current = (cl, Req::Replace);
                match self.open.get(&r.order_id.0).copied() {
                    None => self.cancel_rejected(cl, r.order_id.0, RequestKind::Replace),
                    Some(o) => {
                        let mut reports = Vec::new();
                        self.market
                            .replace(o.key, r.new_price, r.new_qty, self.now, &mut |x| {
                                reports.push(x)
                            });
                        for x in reports {
                            self.report(x);
                        }
                    }
                }
            }
            Inbound::MassCancel(mc) => {
                let cl = mc.client_order_id.0;
                self.current = (cl, Req::Mass);
                let mut keys: Vec<u64> = self.open.values().map(|o| o.key).collect();
                keys.sort_unstable();
                let mut reports = Vec::new();
                for k in keys {
                    self.market.cancel(k, self.now, &mut |r| reports.push(r));
                }
                let n = reports.len() as u32;
                for r in reports {
                    self.report(r);
                }
                self.stream_report(
                    MassCancelDone {
                        session_seq: 0,
                        engine_seq: 0,
                        engine_time: Timestamp(0),
                        request_id: ClientOrderId(cl),
                        report_seq: 0,
                        cancelled: n,
                        instrument: None,
                        account: ACCOUNT,
                        side: None,
                    }
                    .into(),
                );
            }
            other => panic!("the model exchange does not take {other:?}"),
        }
    }

    fn login(&mut self, login: &peregrine_wire::v2::session::Login) {
        let Some(c) = self.conn.as_mut() else { return };
        assert_eq!(login.account, ACCOUNT);
        assert!(
            login.verify(&KEY.stored(), &c.nonce),
            "the proof checks out"
        );
        c.logged_in = true;
        let next = self.stream.len() as u64 + 1;
        self.send(
            LoginAccepted {
                session_seq: 0,
                engine_seq: 0,
                engine_time: Timestamp(0),
                account: ACCOUNT,
                heartbeat_interval_ms: HEARTBEAT_MS,
                next_report_seq: next,
                oldest_report_seq: 1,
                target: Some(ACCOUNT),
                instrument_count: 0,
                kind: SessionKind::Trading,
            }
            .into(),
        );
        let from = match login.next_report_seq {
            0 => next,
            n => n.min(next),
        };
        let replay: Vec<Outbound> = self.stream[(from - 1) as usize..].to_vec();
        self.send(
            ReplayStart {
                session_seq: 0,
                engine_seq: 0,
                engine_time: Timestamp(0),
                from_seq: from,
                to_seq: next,
                count: replay.len() as u64,
                reason: ReasonCode(0),
            }
            .into(),
        );
        for m in replay {
            self.send(m);
        }
        self.send(
            ReplayEnd {
                session_seq: 0,
                engine_seq: 0,
                engine_time: Timestamp(0),
                next_report_seq: next,
                count: next - from,
            }
            .into(),
        );
    }

    /// Sends `m` on the live session (stamped with the session sequence number).
    fn send(&mut self, mut m: Outbound) {
        let Some(c) = self.conn.as_mut() else { return };
        c.session_seq += 1;
        m.set_session_seq(c.session_seq);
        let mut buf = [0u8; 512];
        let n = m.encode(&mut buf).expect("encodes");
        c.out.extend(&buf[..n]);
    }

    /// Numbers `m` into the account's stream and sends it if a session is logged in.
    fn stream_report(&mut self, mut m: Outbound) {
        m.set_report_seq(self.stream.len() as u64 + 1);
        self.stream.push(m);
        if self.conn.as_ref().is_some_and(|c| c.logged_in) {
            self.send(m);
        }
    }

    fn cancel_rejected(&mut self, cl: u64, order_id: u64, kind: RequestKind) {
        self.stream_report(
            CancelRejected {
                session_seq: 0,
                engine_seq: 0,
                engine_time: Timestamp(0),
                client_order_id: ClientOrderId(cl),
                order_id: OrderId(order_id),
                instrument: Some(InstrumentId(1)),
                reason: ReasonCode(peregrine_book::RejectReason::UnknownOrder.code()),
                request_kind: kind,
                reserved: Pad,
                report_seq: 0,
                account: ACCOUNT,
            }
            .into(),
        );
    }

    /// One report of the simulated market about order `key`, as the exchange's wire
    /// report in the account's stream.
    fn report(&mut self, r: Report) {
        self.engine_seq += 1;
        let (req_cl, req_kind) = self.current;
        let m: Outbound = match r {
            Report::Ack {
                engine_id: key,
                venue_id,
            } => {
                let side = self.side_of(key);
                self.open.insert(venue_id, Open { key, cl: key });
                self.by_key.insert(key, venue_id);
                Accepted {
                    session_seq: 0,
                    engine_seq: self.engine_seq,
                    engine_time: Timestamp(0),
                    order_id: OrderId(venue_id),
                    client_order_id: ClientOrderId(key),
                    price: Price::from_raw(0),
                    qty: Qty::from_raw(0),
                    expire_at: Timestamp(0),
                    instrument: InstrumentId(1),
                    side,
                    order_type: OrderType::Limit,
                    tif: TimeInForce::Gtc,
                    stp: StpMode::None,
                    report_seq: 0,
                    account: ACCOUNT,
                }
                .into()
            }
            Report::Rejected {
                engine_id: key,
                reason,
            } => Rejected {
                session_seq: 0,
                engine_seq: self.engine_seq,
                engine_time: Timestamp(0),
                client_order_id: ClientOrderId(key),
                instrument: InstrumentId(1),
                reason: ReasonCode(reason),
                reserved: Pad,
                report_seq: 0,
                account: ACCOUNT,
            }
            .into(),
            Report::Fill {
                engine_id: key,
                price,
                qty,
                leaves,
            } => {
                let venue_id = self.by_key.get(&key).copied().unwrap_or(0);
                let o = self.open.get(&venue_id).copied();
                let side = self.side_of(key);
                let signed = if side == Side::Buy {
                    qty.lots()
                } else {
                    -qty.lots()
                };
                self.net += signed;
                *self.fills_by_key.entry(key).or_insert(0) += signed;
                self.fill_count += 1;
                self.trade_id += 1;
                if leaves.is_zero() {
                    self.forget(key);
                }
                Fill {
                    session_seq: 0,
                    engine_seq: self.engine_seq,
                    engine_time: Timestamp(0),
                    order_id: OrderId(venue_id),
                    client_order_id: ClientOrderId(o.map_or(key, |o| o.cl)),
                    trade_id: self.trade_id,
                    price,
                    qty,
                    leaves_qty: leaves,
                    instrument: InstrumentId(1),
                    side,
                    role: LiquidityRole::Maker,
                    reserved: Pad,
                    report_seq: 0,
                    account: ACCOUNT,
                    fee_asset: 0,
                    fee: 0,
                }
                .into()
            }
            Report::Cancelled {
                engine_id: key,
                qty,
                leaves,
            } => {
                let venue_id = self.by_key.get(&key).copied().unwrap_or(0);
                let o = self.open.get(&venue_id).copied();
                let (request, reason) = match req_kind {
                    Req::Cancel | Req::Mass if req_cl != 0 => (req_cl, 0),
                    // The order's own IOC rest, or the flow's STP: the exchange's
                    // reasons are not needed by the adapter beyond the decrement (5).
                    _ if !leaves.is_zero() => (0, 5),
                    _ => (0, 1),
                };
                if leaves.is_zero() {
                    self.forget(key);
                }
                Cancelled {
                    session_seq: 0,
                    engine_seq: self.engine_seq,
                    engine_time: Timestamp(0),
                    order_id: OrderId(venue_id),
                    client_order_id: ClientOrderId(o.map_or(key, |o| o.cl)),
                    request_id: ClientOrderId(request),
                    cancelled_qty: qty,
                    instrument: InstrumentId(1),
                    reason: ReasonCode(reason),
                    side: self.side_of(key),
                    reserved: Pad,
                    report_seq: 0,
                    account: ACCOUNT,
                }
                .into()
            }
            Report::Replaced {
                engine_id: key,
                price,
                qty,
            } => {
                let venue_id = self.by_key.get(&key).copied().unwrap_or(0);
                let orig = self.open.get(&venue_id).map_or(key, |o| o.cl);
                if let Some(o) = self.open.get_mut(&venue_id) {
                    o.cl = req_cl;
                }
                Replaced {
                    session_seq: 0,
                    engine_seq: self.engine_seq,
                    engine_time: Timestamp(0),
                    order_id: OrderId(venue_id),
                    client_order_id: ClientOrderId(req_cl),
                    orig_client_order_id: ClientOrderId(orig),
                    new_price: price,
                    new_qty: qty,
                    instrument: InstrumentId(1),
                    priority_kept: false,
                    reserved: Pad,
                    report_seq: 0,
                    account: ACCOUNT,
                }
                .into()
            }
            Report::CancelRejected { engine_id: key, .. }
            | Report::ReplaceRejected { engine_id: key, .. } => {
                let venue_id = self.by_key.get(&key).copied().unwrap_or(0);
                let kind = if req_kind == Req::Replace {
                    RequestKind::Replace
                } else {
                    RequestKind::Cancel
                };
                return self.cancel_rejected(req_cl, venue_id, kind);
            }
            // The model market has no stops: it never triggers one.
            Report::Triggered { .. } => return,
            // Nor lists.
            Report::ListStatus { .. } => return,
        };
        self.stream_report(m);
    }

    fn side_of(&self, key: u64) -> Side {
        self.sides.get(&key).copied().unwrap_or(Side::Buy)
    }

    fn forget(&mut self, key: u64) {
        if let Some(venue_id) = self.by_key.remove(&key) {
            self.open.remove(&venue_id);
        }
    }
}

/// The adapter's way to the model exchange (its `Connect` seam).
#[derive(Debug, Clone)]
pub(crate) struct SimConnect(pub(crate) Rc<RefCell<ModelExchange>>);

/// One connection.
#[derive(Debug)]
pub(crate) struct SimLink {
    x: Rc<RefCell<ModelExchange>>,
    id: u64,
}

impl Connect for SimConnect {
    type Link = SimLink;

    fn connect(&mut self, _addr: SocketAddr, _timeout: Duration) -> std::io::Result<SimLink> {
        let id = self.0.borrow_mut().connect()?;
        Ok(SimLink {
            x: Rc::clone(&self.0),
            id,
        })
    }
}

impl Link for SimLink {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.x.borrow_mut().read(self.id, buf)
    }
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.x.borrow_mut().write(self.id, buf)
    }
    fn set_read_timeout(&mut self, _d: Option<Duration>) -> std::io::Result<()> {
        Ok(())
    }
    fn set_nonblocking(&mut self, _on: bool) -> std::io::Result<()> {
        Ok(())
    }
}
