//! The strategy's side of the venue: its requests (the SDK's [`Request`]s, as the
//! strategy pushed them into its submit ring) become order-entry requests of the
//! strategy's account, and the core's book events about its orders become the SDK's
//! [`SdkEvent`]s, stamped as the engine stamps them (t1 sent, t4 reached the book, t5
//! answered, t8 received; the engine's own stamps t2, t3, t6, t7 stay 0: there is no
//! engine in a replay).
//!
//! The engine's pre-trade risk does not run here; the venue's own checks do (tick,
//! band, quantity, post-only, STP). What the engine itself refuses (an unknown venue,
//! instrument or order, a replace while one is pending) is refused here with the
//! engine's codes.

use peregrine_book::Event;
use peregrine_exchange_core::route::reports::reject_code;
use peregrine_strategy::msg::{reason, Command, Event as SdkEvent, EventKind, Request};
use peregrine_types::{stamp, ClientOrderId, OrderId, Price, Qty, Side, Timestamp};
use peregrine_wire::orders::{Cancel, NewOrder, Replace};
use peregrine_wire::v2::Inbound;
use rustc_hash::FxHashMap;

pub use crate::outcome::StrategyFill;
use crate::venue::{Venue, STRATEGY};

/// A strategy order the venue holds.
#[derive(Debug, Clone, Copy)]
struct Open {
    id: OrderId,
    side: Side,
    /// t1 of the request whose answer is pending (new order or replace), 0 if none.
    t1: u64,
}

/// A strategy order whose first answer has not come yet: its t1 and side.
#[derive(Debug, Clone, Copy)]
struct Sent {
    t1: u64,
    side: Side,
}

/// Translates between the strategy and the venue.
#[derive(Debug)]
pub struct Gateway {
    venue_index: u32,
    open: FxHashMap<u64, Open>,
    sent: FxHashMap<u64, Sent>,
    /// Client id → core id of each open order, and back.
    by_id: FxHashMap<u64, u64>,
    /// Fills, in the order the book made them.
    pub fills: Vec<StrategyFill>,
    /// Each accepted order: client id and when the book accepted it (core time).
    pub acks: Vec<(u64, u64)>,
    /// The client id of the extension record just read (stops and icebergs are not
    /// replayed: their order is refused, `UNSUPPORTED`).
    ext_for: Option<u64>,
}

fn sdk(kind: EventKind, client_id: u64, side: Side, instrument: u32) -> SdkEvent {
    SdkEvent {
        kind: kind as u8,
        side: side as u8,
        client_id,
        instrument,
        ..SdkEvent::default()
    }
}

impl Gateway {
    /// A gateway for the venue at index `venue_index` of the strategy's orders.
    pub fn new(venue_index: u32) -> Gateway {
        Gateway {
            ext_for: None,
            venue_index,
            open: FxHashMap::default(),
            sent: FxHashMap::default(),
            by_id: FxHashMap::default(),
            fills: Vec::new(),
            acks: Vec::new(),
        }
    }

    /// Open orders.
    pub fn open_orders(&self) -> usize {
        self.open.len()
    }

    /// Runs `req` (sent at `t1`) on the venue at `ts`. What the engine itself refuses
    /// goes to `out` at once (stamped t1, t4 = t5 = `ts`; the caller sets t8); the
    /// venue's answers come from its book events, through [`Gateway::events`].
    pub fn request(&mut self, venue: &mut Venue, req: &Request, ts: u64, out: &mut Vec<SdkEvent>) {
        let instrument = venue.instrument();
        let cmd = match req.decode() {
            Ok(c) => c,
            Err(_) => {
                let mut e = sdk(EventKind::Reject, req.client_id, Side::Buy, req.instrument);
                e.reason = reason::MALFORMED;
                return push(out, e, req.t1, ts);
            }
        };
        let ext_for = self.ext_for.take();
        match cmd {
            Command::Ext { client_id, .. } => self.ext_for = Some(client_id),
            Command::New(o) => {
                let mut refuse = |why: u16| {
                    let mut e = sdk(EventKind::Reject, o.client_id, o.side, o.instrument.0);
                    e.reason = why;
                    e.price = o.price.units();
                    e.qty = o.qty.lots();
                    push(out, e, req.t1, ts);
                };
                if o.venue != self.venue_index {
                    return refuse(reason::UNKNOWN_VENUE);
                }
                if o.instrument != instrument {
                    return refuse(reason::UNKNOWN_INSTRUMENT);
                }
                if ext_for.is_some() {
                    return refuse(reason::UNSUPPORTED);
                }
                self.sent.insert(
                    o.client_id,
                    Sent {
                        t1: req.t1,
                        side: o.side,
                    },
                );
                let msg = Inbound::NewOrder(NewOrder {
                    client_order_id: ClientOrderId(o.client_id),
                    price: o.price,
                    qty: o.qty,
                    expire_at: Timestamp(o.expire_at),
                    instrument,
                    side: o.side,
                    order_type: o.order_type,
                    tif: o.tif,
                    stp: o.stp,
                });
                venue.submit(ts, STRATEGY, &msg);
            }
            Command::Cancel { client_id } => {
                let Some(open) = self.open.get(&client_id).copied() else {
                    let mut e = sdk(EventKind::CancelReject, client_id, Side::Buy, instrument.0);
                    e.reason = reason::UNKNOWN_ORDER;
                    return push(out, e, req.t1, ts);
                };
                let msg = Inbound::Cancel(Cancel {
                    client_order_id: ClientOrderId(client_id),
                    order_id: open.id,
                    instrument,
                });
                venue.submit(ts, STRATEGY, &msg);
            }
            Command::Replace {
                client_id,
                price,
                qty,
            } => {
                let Some(open) = self.open.get_mut(&client_id) else {
                    let mut e = sdk(EventKind::ReplaceReject, client_id, Side::Buy, instrument.0);
                    e.reason = reason::UNKNOWN_ORDER;
                    return push(out, e, req.t1, ts);
                };
                open.t1 = req.t1;
                let msg = Inbound::Replace(Replace {
                    client_order_id: ClientOrderId(client_id),
                    order_id: open.id,
                    instrument,
                    new_price: price,
                    new_qty: qty,
                });
                venue.submit(ts, STRATEGY, &msg);
            }
            // Liveness and latency receipts are the engine's business, not the venue's.
            Command::Heartbeat { .. } | Command::Receipt { .. } | Command::MdReceipt { .. } => {}
        }
    }

    fn t1_of(&mut self, client_id: u64) -> u64 {
        match self.open.get_mut(&client_id) {
            Some(o) => std::mem::take(&mut o.t1),
            None => 0,
        }
    }

    fn close(&mut self, client_id: u64) {
        if let Some(o) = self.open.remove(&client_id) {
            self.by_id.remove(&o.id.0);
        }
    }

    /// The strategy's events among the book events of one request (any request: a
    /// recorded aggressor fills the strategy's resting orders too).
    pub fn events(&mut self, events: &[Event], ts: u64, instrument: u32, out: &mut Vec<SdkEvent>) {
        for ev in events {
            match *ev {
                Event::Accepted(a) if a.account == STRATEGY => {
                    let s = self.sent.remove(&a.client_id.0);
                    let t1 = s.map_or(0, |s| s.t1);
                    self.open.insert(
                        a.client_id.0,
                        Open {
                            id: a.id,
                            side: a.side,
                            t1: 0,
                        },
                    );
                    self.by_id.insert(a.id.0, a.client_id.0);
                    self.acks.push((a.client_id.0, ts));
                    let mut e = sdk(EventKind::Ack, a.client_id.0, a.side, instrument);
                    e.price = a.price.units();
                    e.qty = a.qty.lots();
                    e.leaves = a.qty.lots();
                    push(out, e, t1, ts);
                }
                Event::Rejected(r) if r.account == STRATEGY => {
                    let code = reason::VENUE.saturating_add(reject_code(r.reason).0);
                    let (kind, t1, side) = match r.command {
                        peregrine_book::CommandKind::New => {
                            let s = self.sent.remove(&r.client_id.0);
                            (
                                EventKind::Reject,
                                s.map_or(0, |s| s.t1),
                                s.map_or(Side::Buy, |s| s.side),
                            )
                        }
                        peregrine_book::CommandKind::Replace => {
                            let side = self.open.get(&r.client_id.0).map_or(Side::Buy, |o| o.side);
                            (EventKind::ReplaceReject, self.t1_of(r.client_id.0), side)
                        }
                        _ => {
                            let side = self.open.get(&r.client_id.0).map_or(Side::Buy, |o| o.side);
                            (EventKind::CancelReject, 0, side)
                        }
                    };
                    let mut e = sdk(kind, r.client_id.0, side, instrument);
                    e.reason = code;
                    push(out, e, t1, ts);
                }
                Event::Fill(f) => {
                    if f.maker_account == STRATEGY {
                        self.fill(
                            f.maker_id,
                            f.taker_side.opposite(),
                            f.price,
                            f.qty,
                            f.maker_leaves,
                            true,
                            ts,
                            instrument,
                            out,
                        );
                    }
                    if f.taker_account == STRATEGY {
                        self.fill(
                            f.taker_id,
                            f.taker_side,
                            f.price,
                            f.qty,
                            f.taker_leaves,
                            false,
                            ts,
                            instrument,
                            out,
                        );
                    }
                }
                Event::Cancelled(c) if c.account == STRATEGY => {
                    let Some(&cid) = self.by_id.get(&c.id.0) else {
                        continue;
                    };
                    let mut e = sdk(EventKind::Cancelled, cid, c.side, instrument);
                    e.price = c.price.units();
                    e.qty = c.qty.lots();
                    e.leaves = c.leaves.lots();
                    if c.leaves.is_zero() {
                        self.close(cid);
                    }
                    push(out, e, 0, ts);
                }
                Event::Replaced(r) if r.account == STRATEGY => {
                    let Some(&cid) = self.by_id.get(&r.id.0) else {
                        continue;
                    };
                    let t1 = self.t1_of(cid);
                    let mut e = sdk(EventKind::Replaced, cid, r.side, instrument);
                    e.price = r.price.units();
                    e.qty = r.qty.lots();
                    e.leaves = r.qty.lots();
                    push(out, e, t1, ts);
                }
                _ => {}
            }
        }
    }

    #[allow(
        clippy::too_many_arguments,
        reason = "one fill's fields, called from two places"
    )]
    fn fill(
        &mut self,
        id: OrderId,
        side: Side,
        price: Price,
        qty: Qty,
        leaves: Qty,
        maker: bool,
        ts: u64,
        instrument: u32,
        out: &mut Vec<SdkEvent>,
    ) {
        let Some(&cid) = self.by_id.get(&id.0) else {
            return;
        };
        let mut e = sdk(EventKind::Fill, cid, side, instrument);
        e.price = price.units();
        e.qty = qty.lots();
        e.leaves = leaves.lots();
        self.fills.push(StrategyFill {
            ts,
            client_id: cid,
            side,
            price: price.units(),
            qty: qty.lots(),
            leaves: leaves.lots(),
            maker,
        });
        if leaves.is_zero() {
            self.close(cid);
        }
        push(out, e, 0, ts);
    }
}

/// Stamps and queues one event: t1 (if known), t4 = t5 = `ts`.
fn push(out: &mut Vec<SdkEvent>, mut e: SdkEvent, t1: u64, ts: u64) {
    e.ts[stamp::STRATEGY_SEND] = t1;
    e.ts[stamp::GATEWAY_RECV] = ts;
    e.ts[stamp::GATEWAY_DONE] = ts;
    out.push(e);
}
