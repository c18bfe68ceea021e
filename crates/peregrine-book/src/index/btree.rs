//! `BTreeMap` level index over a slab: the baseline layout.

use std::collections::BTreeMap;

use peregrine_types::{InstrumentSpec, Side};

use super::LevelIndex;
use crate::arena::NIL;
use crate::level::Level;

/// Sorted map from price to a slab slot, per side.
#[derive(Debug)]
pub struct BTreeLevels {
    maps: [BTreeMap<i64, u32>; 2],
    slab: Vec<Level>,
    free: Vec<u32>,
    best: [u32; 2],
}

impl LevelIndex for BTreeLevels {
    fn new(_spec: &InstrumentSpec, max_orders: usize) -> BTreeLevels {
        // A level holds at least one order, so `max_orders` slots always suffice.
        BTreeLevels {
            maps: [BTreeMap::new(), BTreeMap::new()],
            slab: Vec::with_capacity(max_orders),
            free: Vec::with_capacity(max_orders),
            best: [NIL, NIL],
        }
    }

    const BENCH_NAME: &'static str = "peregrine-btree";

    fn name() -> &'static str {
        "btree"
    }

    #[inline]
    fn find(&self, side: Side, price: i64) -> Option<u32> {
        self.maps[side.index()].get(&price).copied()
    }

    #[inline]
    fn get_or_insert(&mut self, side: Side, price: i64) -> u32 {
        if let Some(&h) = self.maps[side.index()].get(&price) {
            return h;
        }
        let h = match self.free.pop() {
            Some(h) => {
                self.slab[h as usize] = Level::empty(price);
                h
            }
            None => {
                self.slab.push(Level::empty(price));
                (self.slab.len() - 1) as u32
            }
        };
        self.maps[side.index()].insert(price, h);
        h
    }

    #[inline]
    fn occupied(&mut self, side: Side, handle: u32) {
        let s = side.index();
        let price = self.slab[handle as usize].price;
        let best = self.best[s];
        if best == NIL || better(side, price, self.slab[best as usize].price) {
            self.best[s] = handle;
        }
    }

    #[inline]
    fn remove(&mut self, side: Side, handle: u32) {
        let s = side.index();
        let price = self.slab[handle as usize].price;
        self.maps[s].remove(&price);
        self.free.push(handle);
        if self.best[s] == handle {
            let next = match side {
                Side::Buy => self.maps[s].last_key_value(),
                Side::Sell => self.maps[s].first_key_value(),
            };
            self.best[s] = next.map_or(NIL, |(_, &h)| h);
        }
    }

    #[inline]
    fn best(&self, side: Side) -> Option<u32> {
        let b = self.best[side.index()];
        (b != NIL).then_some(b)
    }

    #[inline]
    fn next_worse(&self, side: Side, handle: u32) -> Option<u32> {
        let price = self.slab[handle as usize].price;
        let map = &self.maps[side.index()];
        let next = match side {
            Side::Buy => map.range(..price).next_back(),
            Side::Sell => map.range(price + 1..).next(),
        };
        next.map(|(_, &h)| h)
    }

    #[inline]
    fn next_better(&self, side: Side, handle: u32) -> Option<u32> {
        let price = self.slab[handle as usize].price;
        let map = &self.maps[side.index()];
        let next = match side {
            Side::Buy => map.range(price + 1..).next(),
            Side::Sell => map.range(..price).next_back(),
        };
        next.map(|(_, &h)| h)
    }

    #[inline]
    fn level(&self, handle: u32) -> &Level {
        &self.slab[handle as usize]
    }

    #[inline]
    fn level_mut(&mut self, handle: u32) -> &mut Level {
        &mut self.slab[handle as usize]
    }
}

/// Whether raw price `a` is better than `b` for a resting order on `side`.
#[inline]
fn better(side: Side, a: i64, b: i64) -> bool {
    match side {
        Side::Buy => a > b,
        Side::Sell => a < b,
    }
}
