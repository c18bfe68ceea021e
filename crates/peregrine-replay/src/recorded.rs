//! The book exactly as a recorded L3 file describes it: every message applied to a
//! bare book ([`peregrine_book::Book`], order ids = the recorded references) by its
//! literal meaning, with no matching: an execution or a cancel shrinks the named order
//! in place (keeping its priority), a delete removes it, a replace removes the old
//! order and adds the new one at the back of its level.
//!
//! The replay itself never uses this: it turns executions into real incoming orders
//! that match in the exchange core. This is the independent account of the same file
//! that the replay is checked against ([`crate::check`], on the naive
//! [`peregrine_book::ReferenceBook`]), and what the synthetic generator writes
//! LOBSTER's order book file from (on the fast book, for its depth view).

use peregrine_book::{Action, Book, Cancel, Command, Event, NewOrder, Replace};
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, OrderId, OrderType, Price, Qty, Side, StpMode,
    TimeInForce, Timestamp,
};
use rustc_hash::FxHashMap;

use crate::data::L3;

/// The account every recorded order belongs to.
pub const MARKET: AccountId = AccountId(1);

/// A live recorded order: side, price, open quantity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Live {
    /// Side.
    pub side: Side,
    /// Limit price (units).
    pub price: i64,
    /// Open quantity (units).
    pub leaves: i64,
}

/// A book rebuilt from a file's messages by their literal meaning.
#[derive(Debug)]
pub struct RecordedBook<B> {
    book: B,
    instrument: InstrumentId,
    orders: FxHashMap<u64, Live>,
    events: Vec<Event>,
    ts: u64,
}

impl<B: Book> RecordedBook<B> {
    /// A rebuild into the empty `book` of `instrument`.
    pub fn new(book: B, instrument: InstrumentId) -> RecordedBook<B> {
        RecordedBook {
            book,
            instrument,
            orders: FxHashMap::default(),
            events: Vec::with_capacity(64),
            ts: 0,
        }
    }

    /// The book.
    pub fn book(&self) -> &B {
        &self.book
    }

    /// The events of the last message applied (level changes among them).
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// A live order by reference.
    pub fn order(&self, r: u64) -> Option<Live> {
        self.orders.get(&r).copied()
    }

    /// Live orders.
    pub fn len(&self) -> usize {
        self.orders.len()
    }

    /// No live orders.
    pub fn is_empty(&self) -> bool {
        self.orders.is_empty()
    }

    fn run(&mut self, action: Action) {
        let cmd = Command {
            ts: Timestamp(self.ts),
            action,
        };
        self.book.execute(&cmd, &mut self.events);
    }

    fn shrink(&mut self, r: u64, by: i64) -> Result<(), String> {
        let Some(o) = self.orders.get_mut(&r) else {
            return Err(format!("order {r} is not in the book"));
        };
        if by > o.leaves {
            return Err(format!("order {r} has {} open, {by} removed", o.leaves));
        }
        o.leaves -= by;
        let o = *o;
        if o.leaves == 0 {
            self.remove(r);
        } else {
            self.run(Action::Replace(Replace {
                instrument: self.instrument,
                id: OrderId(r),
                account: MARKET,
                client_id: ClientOrderId(r),
                price: Price::from_raw(o.price),
                qty: Qty::from_raw(o.leaves),
            }));
        }
        Ok(())
    }

    fn remove(&mut self, r: u64) {
        self.orders.remove(&r);
        self.run(Action::Cancel(Cancel {
            instrument: self.instrument,
            id: OrderId(r),
            account: MARKET,
            client_id: ClientOrderId(r),
        }));
    }

    fn add(&mut self, r: u64, side: Side, price: i64, qty: i64) -> Result<(), String> {
        if self.orders.contains_key(&r) {
            return Err(format!("order {r} added twice"));
        }
        self.run(Action::New(NewOrder {
            instrument: self.instrument,
            id: OrderId(r),
            client_id: ClientOrderId(r),
            account: MARKET,
            side,
            order_type: OrderType::Limit,
            tif: TimeInForce::Gtc,
            stp: StpMode::None,
            price: Price::from_raw(price),
            qty: Qty::from_raw(qty),
            expire_at: Timestamp(0),
        }));
        if self.events.iter().any(|e| matches!(e, Event::Fill(_))) {
            return Err(format!("order {r} crosses the recorded book"));
        }
        if let Some(Event::Rejected(rj)) =
            self.events.iter().find(|e| matches!(e, Event::Rejected(_)))
        {
            return Err(format!("order {r} refused by the book: {:?}", rj.reason));
        }
        self.orders.insert(
            r,
            Live {
                side,
                price,
                leaves: qty,
            },
        );
        Ok(())
    }

    /// Applies one message at `ts`. A message that contradicts the book (an unknown
    /// order, more removed than is open) is an error and changes nothing.
    pub fn apply(&mut self, ts: u64, msg: &L3) -> Result<(), String> {
        self.events.clear();
        self.ts = self.ts.max(ts);
        match *msg {
            L3::Add {
                order_ref,
                side,
                price,
                qty,
            } => self.add(order_ref, side, price, qty),
            L3::Cancel { order_ref, qty }
            | L3::Execute { order_ref, qty }
            | L3::ExecuteAt { order_ref, qty, .. } => self.shrink(order_ref, qty),
            L3::Delete { order_ref } => {
                if !self.orders.contains_key(&order_ref) {
                    return Err(format!("order {order_ref} is not in the book"));
                }
                self.remove(order_ref);
                Ok(())
            }
            L3::Replace {
                old_ref,
                new_ref,
                price,
                qty,
            } => {
                let Some(old) = self.orders.get(&old_ref).copied() else {
                    return Err(format!("order {old_ref} is not in the book"));
                };
                self.remove(old_ref);
                self.add(new_ref, old.side, price, qty)
            }
            L3::Trade { .. } | L3::Halt(_) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_book::ReferenceBook;
    use peregrine_types::InstrumentSpec;

    #[test]
    fn literal_meaning_of_each_message() {
        let spec = InstrumentSpec::example(1);
        let mut r = RecordedBook::new(ReferenceBook::new(spec, 64), InstrumentId(1));
        let add = |order_ref, side, price, qty| L3::Add {
            order_ref,
            side,
            price,
            qty,
        };
        r.apply(1, &add(1, Side::Buy, 9_990, 5)).unwrap();
        r.apply(2, &add(2, Side::Buy, 9_990, 3)).unwrap();
        r.apply(3, &add(3, Side::Sell, 10_010, 4)).unwrap();
        // An execution shrinks order 1 in place: it stays first in its level.
        r.apply(
            4,
            &L3::Execute {
                order_ref: 1,
                qty: 2,
            },
        )
        .unwrap();
        let mut ids = Vec::new();
        r.book()
            .for_each_order(&mut |o| ids.push((o.id.0, o.qty.lots())));
        assert_eq!(ids, [(1, 3), (2, 3), (3, 4)]);
        r.apply(
            5,
            &L3::Replace {
                old_ref: 1,
                new_ref: 7,
                price: 9_990,
                qty: 1,
            },
        )
        .unwrap();
        ids.clear();
        r.book()
            .for_each_order(&mut |o| ids.push((o.id.0, o.qty.lots())));
        assert_eq!(ids, [(2, 3), (7, 1), (3, 4)], "a replace goes to the back");
        assert!(r
            .apply(
                6,
                &L3::Cancel {
                    order_ref: 2,
                    qty: 9
                }
            )
            .is_err());
        assert!(r.apply(6, &L3::Delete { order_ref: 99 }).is_err());
        assert!(
            r.apply(6, &add(8, Side::Buy, 10_010, 1)).is_err(),
            "crosses"
        );
        assert!(r.apply(6, &add(2, Side::Buy, 9_980, 1)).is_err(), "twice");
        r.apply(
            7,
            &L3::Execute {
                order_ref: 3,
                qty: 4,
            },
        )
        .unwrap();
        assert_eq!(r.order(3), None);
        assert_eq!(r.len(), 2);
    }
}
