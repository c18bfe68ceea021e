//! Recorded order-by-order messages as real orders in the exchange core.
//!
//! | recorded | sent to the core (account [`MARKET`]) |
//! | --- | --- |
//! | add | a GTC limit order (client id = the recorded reference) |
//! | partial cancel | a replace to the smaller open quantity (keeps priority) |
//! | delete | a cancel |
//! | execution | an IOC order on the other side at the resting order's price, for the executed quantity: the aggressor the feed does not show |
//! | execution at another price (crosses) | a replace or cancel that removes the quantity, reported as a trade |
//! | replace | a cancel, then a new order with the new reference (back of the queue) |
//! | hidden trade, cross trade | nothing in the book; reported as a trade |
//!
//! So the recorded aggressor matches what is in the core's book when it arrives, best
//! price first and first in first out: without a strategy that is the recorded order
//! it executed (the replay rebuilds the recorded book, which [`crate::check`]
//! verifies at every step); with a strategy whose order sits ahead in the queue, the
//! strategy's order is filled instead, and the recorded order stays in the book
//! until the file removes it. Queue position and market impact are the core's, not
//! estimated.
//!
//! Messages about an order the core no longer holds (a strategy's order took it) do
//! what is left to do: a cancel of an order already gone does nothing, an execution
//! of it still sends its aggressor, which then meets whatever rests at that price.

use peregrine_book::Event;
use peregrine_types::{
    ClientOrderId, OrderId, OrderType, Price, Qty, Side, StpMode, TimeInForce, Timestamp,
};
use peregrine_wire::orders::{Cancel, NewOrder, Replace};
use peregrine_wire::v2::Inbound;
use rustc_hash::FxHashMap;

use crate::data::L3;
use crate::outcome::Market;
pub use crate::outcome::{L3Counts, OffBook};
use crate::recorded::MARKET;
use crate::venue::Venue;

/// A recorded order as the file describes it: its id in the core, side, price, and
/// what the file says is still open.
#[derive(Debug, Clone, Copy)]
struct Entry {
    id: OrderId,
    side: Side,
    price: i64,
    leaves: i64,
}

/// The recorded market: reference → core order.
#[derive(Debug)]
pub struct L3Market {
    orders: FxHashMap<u64, Entry>,
    /// Counts.
    pub counts: L3Counts,
}

impl L3Market {
    /// An empty market sized for `live` recorded orders at once.
    pub fn new(live: usize) -> L3Market {
        let mut orders = FxHashMap::default();
        orders.reserve(live);
        L3Market {
            orders,
            counts: L3Counts::default(),
        }
    }

    /// The core id of a live recorded order.
    pub fn id_of(&self, r: u64) -> Option<OrderId> {
        self.orders.get(&r).map(|e| e.id)
    }

    /// Recorded orders the file says are live.
    pub fn live(&self) -> usize {
        self.orders.len()
    }

    fn send<'v>(&mut self, venue: &'v mut Venue, ts: u64, msg: &Inbound) -> &'v [Event] {
        self.counts.requests += 1;
        venue.submit(ts, MARKET, msg)
    }

    fn add(&mut self, venue: &mut Venue, ts: u64, r: u64, side: Side, price: i64, qty: i64) {
        let id = venue.next_order_id();
        let instrument = venue.instrument();
        let events = self.send(
            venue,
            ts,
            &Inbound::NewOrder(NewOrder {
                client_order_id: ClientOrderId(r),
                price: Price::from_raw(price),
                qty: Qty::from_raw(qty),
                expire_at: Timestamp(0),
                instrument,
                side,
                order_type: OrderType::Limit,
                tif: TimeInForce::Gtc,
                stp: StpMode::None,
            }),
        );
        if events.iter().any(|e| matches!(e, Event::Rejected(_))) {
            self.counts.refused += 1;
            return;
        }
        self.orders.insert(
            r,
            Entry {
                id,
                side,
                price,
                leaves: qty,
            },
        );
    }

    /// Removes `qty` of the file's order `r` (`e`) from the core (what the core still
    /// holds of it, at most), keeping its priority.
    fn remove(&mut self, venue: &mut Venue, ts: u64, r: u64, e: Entry, qty: i64) {
        let Some(open) = venue.book().order_qty(e.id).map(Qty::lots) else {
            self.counts.gone += 1;
            return;
        };
        let instrument = venue.instrument();
        let msg = if qty >= open {
            Inbound::Cancel(Cancel {
                client_order_id: ClientOrderId(r),
                order_id: e.id,
                instrument,
            })
        } else {
            Inbound::Replace(Replace {
                client_order_id: ClientOrderId(r),
                order_id: e.id,
                instrument,
                new_price: Price::from_raw(e.price),
                new_qty: Qty::from_raw(open - qty),
            })
        };
        self.send(venue, ts, &msg);
    }

    /// The file says `qty` of order `r` is gone: forget it when nothing is left.
    fn shrink(&mut self, r: u64, qty: i64) -> Option<Entry> {
        let e = self.orders.get_mut(&r)?;
        let before = *e;
        e.leaves -= qty;
        if e.leaves <= 0 {
            self.orders.remove(&r);
        }
        Some(before)
    }

    /// Applies one recorded message at `ts`. Returns a trade the book did not show,
    /// if the message reports one.
    pub fn apply(&mut self, venue: &mut Venue, ts: u64, msg: &L3) -> Option<OffBook> {
        self.counts.messages += 1;
        match *msg {
            L3::Add {
                order_ref,
                side,
                price,
                qty,
            } => self.add(venue, ts, order_ref, side, price, qty),
            L3::Cancel { order_ref, qty } => match self.shrink(order_ref, qty) {
                Some(e) => self.remove(venue, ts, order_ref, e, qty),
                None => self.counts.unknown_refs += 1,
            },
            L3::Delete { order_ref } => match self.orders.remove(&order_ref) {
                Some(e) => self.remove(venue, ts, order_ref, e, i64::MAX),
                None => self.counts.unknown_refs += 1,
            },
            L3::Execute { order_ref, qty } => match self.shrink(order_ref, qty) {
                Some(e) => {
                    let instrument = venue.instrument();
                    let aggressor = Inbound::NewOrder(NewOrder {
                        client_order_id: ClientOrderId(0),
                        price: Price::from_raw(e.price),
                        qty: Qty::from_raw(qty),
                        expire_at: Timestamp(0),
                        instrument,
                        side: e.side.opposite(),
                        order_type: OrderType::Limit,
                        tif: TimeInForce::Ioc,
                        stp: StpMode::None,
                    });
                    self.send(venue, ts, &aggressor);
                }
                None => self.counts.unknown_refs += 1,
            },
            L3::ExecuteAt {
                order_ref,
                qty,
                price,
            } => match self.shrink(order_ref, qty) {
                Some(e) => {
                    self.remove(venue, ts, order_ref, e, qty);
                    return Some(OffBook {
                        aggressor: e.side.opposite(),
                        price,
                        qty,
                    });
                }
                None => self.counts.unknown_refs += 1,
            },
            L3::Replace {
                old_ref,
                new_ref,
                price,
                qty,
            } => match self.orders.remove(&old_ref) {
                Some(e) => {
                    self.remove(venue, ts, old_ref, e, i64::MAX);
                    self.add(venue, ts, new_ref, e.side, price, qty);
                }
                None => self.counts.unknown_refs += 1,
            },
            L3::Trade {
                aggressor,
                price,
                qty,
            } => {
                return Some(OffBook {
                    aggressor,
                    price,
                    qty,
                })
            }
            L3::Halt(_) => {}
        }
        None
    }
}

impl Market for L3Market {
    type Msg = L3;

    #[inline]
    fn apply(&mut self, venue: &mut Venue, ts: u64, msg: &L3) -> Option<OffBook> {
        L3Market::apply(self, venue, ts, msg)
    }
}
