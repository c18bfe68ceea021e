//! A book's state besides its resting orders, in one canonical form: the trading
//! phase, the last trade price, parked orders (stops waiting for their trigger,
//! list legs waiting for release), order lists and market-maker protection.
//!
//! Both books export it ([`crate::Book::venue_state`]); the state hash covers it,
//! snapshots store it and [`crate::OrderBook::restore_venue`] rebuilds from it, so a
//! restored book behaves exactly like the original. Every list is sorted by its key.

use peregrine_types::{
    AccountId, ClientOrderId, ListKind, OrderId, Price, Qty, Side, Timestamp, TradingPhase,
};

use crate::command::{ExtOrder, MmpParams};

/// An accepted order that is not in the book.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParkedOrder {
    /// The order as accepted (its id assigned).
    pub order: ExtOrder,
    /// Its priority among parked orders: the venue's entry sequence (triggers reached
    /// at the same price run oldest first).
    pub seq: u64,
    /// Waiting for its list's working leg to fill (else waiting for its trigger).
    pub pending: bool,
    /// The list it belongs to (0: none).
    pub list: OrderId,
    /// A trailing stop's watermark: the best price since it was entered (the highest
    /// for a sell, the lowest for a buy); 0 for a fixed trigger.
    pub watermark: Price,
    /// The trigger price in force (a trailing stop's moves with its watermark).
    pub trigger_price: Price,
}

/// Which dependency a live list is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ListStage {
    /// Two legs cancel each other (`legs[0]`, `legs[1]`).
    Oco = 0,
    /// `legs[0]` works; the other legs wait for it to fill completely.
    Working = 1,
}

/// A live order list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListState {
    /// Its id (leg 0's order id at entry).
    pub id: OrderId,
    /// The client's list id.
    pub client_id: ClientOrderId,
    /// Owner.
    pub account: AccountId,
    /// Kind as entered.
    pub kind: ListKind,
    /// Where it stands.
    pub stage: ListStage,
    /// The legs still bound by the list (0: none), in leg order.
    pub legs: [OrderId; 3],
    /// The legs as entered (what its list reports name).
    pub entered: [OrderId; 3],
}

/// One account's market-maker protection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MmpView {
    /// Account.
    pub account: AccountId,
    /// Limits.
    pub params: MmpParams,
    /// Tripped: new orders are refused.
    pub frozen: bool,
    /// When a trip thaws by itself (0: only on reset).
    pub frozen_until: Timestamp,
    /// The maker fills inside the window, oldest first: (time, quantity).
    pub fills: Vec<(Timestamp, Qty)>,
}

/// A book's venue state (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VenueState {
    /// Trading phase.
    pub phase: TradingPhase,
    /// When the current call auction uncrosses by itself (0: not timed).
    pub ends_at: Timestamp,
    /// Last trade price (the reference price until the first trade).
    pub last_price: Price,
    /// The last indicative uncross published: price, volume, surplus, surplus side
    /// (all zero / `None` outside auctions).
    pub indicative: (Price, Qty, Qty, Option<Side>),
    /// The next parked-order sequence number.
    pub park_seq: u64,
    /// Parked orders, by order id.
    pub parked: Vec<ParkedOrder>,
    /// Live lists, by list id.
    pub lists: Vec<ListState>,
    /// Protections, by account.
    pub mmp: Vec<MmpView>,
}

impl VenueState {
    /// Feeds the canonical bytes (little-endian) into `h`. A book that never used a
    /// venue feature adds only its phase, last price and counters.
    pub fn hash_into(&self, h: &mut blake3::Hasher) {
        h.update(&[self.phase.to_u8()]);
        h.update(&self.ends_at.0.to_le_bytes());
        h.update(&self.last_price.units().to_le_bytes());
        let (p, v, s, side) = self.indicative;
        for x in [p.units(), v.lots(), s.lots()] {
            h.update(&x.to_le_bytes());
        }
        h.update(&[side.map_or(2, |s| s as u8)]);
        h.update(&self.park_seq.to_le_bytes());
        h.update(&(self.parked.len() as u64).to_le_bytes());
        for p in &self.parked {
            hash_ext(h, &p.order);
            h.update(&p.seq.to_le_bytes());
            h.update(&[u8::from(p.pending)]);
            h.update(&p.list.0.to_le_bytes());
            h.update(&p.watermark.units().to_le_bytes());
            h.update(&p.trigger_price.units().to_le_bytes());
        }
        h.update(&(self.lists.len() as u64).to_le_bytes());
        for l in &self.lists {
            h.update(&l.id.0.to_le_bytes());
            h.update(&l.client_id.0.to_le_bytes());
            h.update(&l.account.0.to_le_bytes());
            h.update(&[l.kind as u8, l.stage as u8]);
            for leg in l.legs.iter().chain(&l.entered) {
                h.update(&leg.0.to_le_bytes());
            }
        }
        h.update(&(self.mmp.len() as u64).to_le_bytes());
        for m in &self.mmp {
            h.update(&m.account.0.to_le_bytes());
            h.update(&m.params.window_ns.to_le_bytes());
            h.update(&m.params.max_qty.to_le_bytes());
            h.update(&m.params.max_fills.to_le_bytes());
            h.update(&m.params.freeze_ns.to_le_bytes());
            h.update(&[u8::from(m.frozen)]);
            h.update(&m.frozen_until.0.to_le_bytes());
            h.update(&(m.fills.len() as u64).to_le_bytes());
            for (t, q) in &m.fills {
                h.update(&t.0.to_le_bytes());
                h.update(&q.lots().to_le_bytes());
            }
        }
    }
}

fn hash_ext(h: &mut blake3::Hasher, e: &ExtOrder) {
    let o = &e.order;
    h.update(&o.id.0.to_le_bytes());
    h.update(&o.client_id.0.to_le_bytes());
    h.update(&o.account.0.to_le_bytes());
    h.update(&[
        o.side as u8,
        o.order_type as u8,
        o.tif as u8,
        o.stp as u8,
        e.trigger.kind as u8,
        e.trigger.unit as u8,
    ]);
    h.update(&o.price.units().to_le_bytes());
    h.update(&o.qty.lots().to_le_bytes());
    h.update(&o.expire_at.0.to_le_bytes());
    h.update(&e.trigger.trail.to_le_bytes());
    h.update(&e.trigger.price.units().to_le_bytes());
    h.update(&e.display.lots().to_le_bytes());
}
