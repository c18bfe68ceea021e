//! A passive strategy for replays and their tests: it joins the best bid and the best
//! ask with one order each, keeps each until it fills or the touch moves more than
//! `tolerance` ticks away from it (then cancels and joins again), and stops quoting a
//! side once its position reaches `max_position` that way. Everything it does depends
//! on the book it is shown and on its fills, so its fills depend only on its queue
//! positions: the strategy the L2 queue models are compared with.

use peregrine_strategy::md::BookView;
use peregrine_strategy::msg::{Event, NewOrder};
use peregrine_strategy::{Api, Strategy};
use peregrine_types::{InstrumentId, Price, Qty, Side};

/// Settings.
#[derive(Debug, Clone)]
pub struct JoinerConfig {
    /// Venue index.
    pub venue: u32,
    /// Instrument.
    pub instrument: InstrumentId,
    /// Quantity of each order (units).
    pub qty: i64,
    /// How far the touch may move away before the order is replaced, price units.
    pub tolerance: i64,
    /// Largest position on either side (units).
    pub max_position: i64,
}

/// One side's working order.
#[derive(Debug, Clone, Copy, Default)]
struct Working {
    client_id: u64,
    price: i64,
    /// A cancel is on its way.
    cancelling: bool,
}

/// The joiner.
#[derive(Debug)]
pub struct Joiner {
    cfg: JoinerConfig,
    working: [Option<Working>; 2],
    position: i64,
    /// Fills received.
    pub fills: u64,
}

impl Joiner {
    /// A joiner with `cfg`.
    pub fn new(cfg: JoinerConfig) -> Joiner {
        Joiner {
            cfg,
            working: [None, None],
            position: 0,
            fills: 0,
        }
    }

    /// Position from its fills.
    pub fn position(&self) -> i64 {
        self.position
    }

    fn side_of(&self, client_id: u64) -> Option<usize> {
        (0..2).find(|&i| self.working[i].is_some_and(|w| w.client_id == client_id))
    }

    fn quote(&mut self, api: &mut Api, side: Side, touch: Option<i64>) {
        let i = side.index();
        let room = match side {
            Side::Buy => self.cfg.max_position - self.position,
            Side::Sell => self.cfg.max_position + self.position,
        };
        let Some(touch) = touch else { return };
        match self.working[i] {
            Some(w) if !w.cancelling => {
                let away = match side {
                    Side::Buy => touch - w.price,
                    Side::Sell => w.price - touch,
                };
                if away.abs() > self.cfg.tolerance && api.cancel(w.client_id).is_ok() {
                    self.working[i] = Some(Working {
                        cancelling: true,
                        ..w
                    });
                }
            }
            Some(_) => {}
            None if room >= self.cfg.qty => {
                let order = NewOrder::limit(
                    self.cfg.venue,
                    self.cfg.instrument,
                    side,
                    Price::from_raw(touch),
                    Qty::from_raw(self.cfg.qty),
                )
                .post_only();
                if let Ok(client_id) = api.send(order) {
                    self.working[i] = Some(Working {
                        client_id,
                        price: touch,
                        cancelling: false,
                    });
                }
            }
            None => {}
        }
    }

    fn done(&mut self, client_id: u64) {
        if let Some(i) = self.side_of(client_id) {
            self.working[i] = None;
        }
    }
}

impl Strategy for Joiner {
    fn on_book(&mut self, api: &mut Api, _: InstrumentId, book: &BookView) {
        let bid = book.best_bid().map(|l| l.price.units());
        let ask = book.best_ask().map(|l| l.price.units());
        self.quote(api, Side::Buy, bid);
        self.quote(api, Side::Sell, ask);
    }

    fn on_fill(&mut self, _: &mut Api, ev: &Event) {
        self.fills += 1;
        self.position += match ev.side() {
            Side::Buy => ev.qty,
            Side::Sell => -ev.qty,
        };
        if ev.leaves == 0 {
            self.done(ev.client_id);
        }
    }

    fn on_cancelled(&mut self, _: &mut Api, ev: &Event) {
        if ev.leaves == 0 {
            self.done(ev.client_id);
        }
    }

    fn on_reject(&mut self, _: &mut Api, ev: &Event) {
        self.done(ev.client_id);
    }

    fn on_cancel_reject(&mut self, _: &mut Api, ev: &Event) {
        // The order is already gone (filled on the way): its fill said so.
        if let Some(i) = self.side_of(ev.client_id) {
            if let Some(w) = self.working[i].as_mut() {
                w.cancelling = false;
            }
        }
    }

    fn timer_interval_ns(&self) -> u64 {
        u64::MAX / 4
    }
}
