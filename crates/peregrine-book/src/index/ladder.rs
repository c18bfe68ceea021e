//! Tick-indexed ladder: one level slot per tick in the price band, per side.

use peregrine_types::{InstrumentSpec, Side};

use super::{Bitmap, LevelIndex};
use crate::arena::NIL;
use crate::level::Level;

/// Levels in a flat array indexed by tick; handles `0..n` are bids, `n..2n` asks.
#[derive(Debug)]
pub struct Ladder {
    levels: Vec<Level>,
    occupied: [Bitmap; 2],
    best: [u32; 2],
    low: i64,
    tick: i64,
    n: u32,
}

impl Ladder {
    #[inline]
    fn tick_index(&self, price: i64) -> u32 {
        debug_assert!(price >= self.low && (price - self.low) % self.tick == 0);
        if self.tick == 1 {
            (price - self.low) as u32
        } else {
            ((price - self.low) / self.tick) as u32
        }
    }

    #[inline]
    fn handle(&self, side: Side, idx: u32) -> u32 {
        idx + side.index() as u32 * self.n
    }

    #[inline]
    fn idx(&self, handle: u32) -> u32 {
        if handle >= self.n {
            handle - self.n
        } else {
            handle
        }
    }

    /// Ticks in the band.
    pub fn ticks(&self) -> u32 {
        self.n
    }
}

impl LevelIndex for Ladder {
    fn new(spec: &InstrumentSpec, _max_orders: usize) -> Ladder {
        let low = (spec.band_low() + spec.tick_size - 1) / spec.tick_size * spec.tick_size;
        let high = spec.band_high();
        let n = if high >= low {
            ((high - low) / spec.tick_size + 1) as u32
        } else {
            0
        };
        let mut levels = crate::memory::filled_vec(2 * n as usize, Level::empty(0));
        for (i, level) in levels.iter_mut().enumerate() {
            level.price = low + (i % n as usize) as i64 * spec.tick_size;
        }
        Ladder {
            levels,
            occupied: [Bitmap::new(n as usize), Bitmap::new(n as usize)],
            best: [NIL, NIL],
            low,
            tick: spec.tick_size,
            n,
        }
    }

    const BENCH_NAME: &'static str = "peregrine";

    fn name() -> &'static str {
        "ladder"
    }

    #[inline]
    fn find(&self, side: Side, price: i64) -> Option<u32> {
        let idx = self.tick_index(price);
        self.occupied[side.index()]
            .get(idx as usize)
            .then(|| self.handle(side, idx))
    }

    #[inline]
    fn get_or_insert(&mut self, side: Side, price: i64) -> u32 {
        let idx = self.tick_index(price);
        self.handle(side, idx)
    }

    #[inline]
    fn occupied(&mut self, side: Side, handle: u32) {
        let idx = self.idx(handle);
        let s = side.index();
        if self.occupied[s].get(idx as usize) {
            return;
        }
        self.occupied[s].set(idx as usize);
        let best = self.best[s];
        let better = best == NIL
            || match side {
                Side::Buy => idx > self.idx(best),
                Side::Sell => idx < self.idx(best),
            };
        if better {
            self.best[s] = handle;
        }
    }

    #[inline]
    fn remove(&mut self, side: Side, handle: u32) {
        let idx = self.idx(handle);
        let s = side.index();
        self.occupied[s].clear(idx as usize);
        if self.best[s] == handle {
            let next = match side {
                Side::Buy => self.occupied[s].prev_before(idx as usize),
                Side::Sell => self.occupied[s].next_after(idx as usize),
            };
            self.best[s] = next.map_or(NIL, |i| self.handle(side, i as u32));
        }
    }

    #[inline]
    fn best(&self, side: Side) -> Option<u32> {
        let b = self.best[side.index()];
        (b != NIL).then_some(b)
    }

    #[inline]
    fn next_worse(&self, side: Side, handle: u32) -> Option<u32> {
        let idx = self.idx(handle) as usize;
        let next = match side {
            Side::Buy => self.occupied[side.index()].prev_before(idx),
            Side::Sell => self.occupied[side.index()].next_after(idx),
        };
        next.map(|i| self.handle(side, i as u32))
    }

    #[inline]
    fn next_better(&self, side: Side, handle: u32) -> Option<u32> {
        let idx = self.idx(handle) as usize;
        let next = match side {
            Side::Buy => self.occupied[side.index()].next_after(idx),
            Side::Sell => self.occupied[side.index()].prev_before(idx),
        };
        next.map(|i| self.handle(side, i as u32))
    }

    #[inline]
    fn level(&self, handle: u32) -> &Level {
        &self.levels[handle as usize]
    }

    #[inline]
    fn level_mut(&mut self, handle: u32) -> &mut Level {
        &mut self.levels[handle as usize]
    }

    #[inline]
    fn prefetch(&self, side: Side, price: i64) {
        let off = price.wrapping_sub(self.low);
        if off < 0 {
            return;
        }
        let idx = if self.tick == 1 { off } else { off / self.tick };
        if idx < i64::from(self.n) {
            let h = self.handle(side, idx as u32);
            crate::prefetch::prefetch(&self.levels[h as usize]);
        }
    }
}
