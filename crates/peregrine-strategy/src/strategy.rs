//! The callbacks a strategy implements. Every callback gets the [`Api`] to act on.

use peregrine_types::InstrumentId;

use crate::api::Api;
use crate::md::{BookView, Trade};
use crate::msg::{Event, EventKind};

/// A trading strategy driven by the [`runner`](crate::runner). All methods have empty
/// defaults; implement the ones you need. Callbacks run on the runner's thread, one at
/// a time, and must not block.
pub trait Strategy {
    /// Once, after the rings are attached and before any event.
    fn on_start(&mut self, _api: &mut Api) {}
    /// The venue accepted an order.
    fn on_ack(&mut self, _api: &mut Api, _ev: &Event) {}
    /// The engine or the venue refused an order (`ev.reason`).
    fn on_reject(&mut self, _api: &mut Api, _ev: &Event) {}
    /// A fill (`ev.price`, `ev.qty`, `ev.leaves`).
    fn on_fill(&mut self, _api: &mut Api, _ev: &Event) {}
    /// An order is cancelled.
    fn on_cancelled(&mut self, _api: &mut Api, _ev: &Event) {}
    /// A cancel was refused (`ev.reason`).
    fn on_cancel_reject(&mut self, _api: &mut Api, _ev: &Event) {}
    /// A replace took effect (`ev.price` new limit, `ev.leaves` new open quantity).
    fn on_replaced(&mut self, _api: &mut Api, _ev: &Event) {}
    /// A replace was refused (`ev.reason`); the order is unchanged.
    fn on_replace_reject(&mut self, _api: &mut Api, _ev: &Event) {}
    /// A stop (or take-profit, trailing stop) was triggered at the venue: `ev.price` is
    /// its trigger price, `ev.qty` the venue's last trade price. Its fills follow.
    fn on_triggered(&mut self, _api: &mut Api, _ev: &Event) {}
    /// An order list's status (`ev.client_id` = its leg 0's client id; `ev.qty` = 0
    /// accepted, 1 rejected with `ev.reason`, 2 done: no leg depends on another any
    /// more). Its legs report as orders of their own.
    fn on_list_status(&mut self, _api: &mut Api, _ev: &Event) {}
    /// A book the strategy subscribed to (`subscribe` in its `[[strategies]]` block of
    /// the engine config) changed. `book` is the latest version, read from the
    /// engine's board when the callback runs (so a strategy that falls behind skips
    /// straight to the current book); `book.venue` says which venue.
    fn on_book(&mut self, _api: &mut Api, _instrument: InstrumentId, _book: &BookView) {}
    /// A trade printed on a subscribed book (anyone's trade, not only the strategy's
    /// own; those also arrive as [`Strategy::on_fill`]).
    fn on_trade(&mut self, _api: &mut Api, _trade: &Trade) {}
    /// Every [`Strategy::timer_interval_ns`] (checked between events, so late by at
    /// most one event's handling).
    fn on_timer(&mut self, _api: &mut Api, _now_ns: u64) {}
    /// Period of [`Strategy::on_timer`].
    fn timer_interval_ns(&self) -> u64 {
        1_000_000
    }
    /// The runner stops once this returns true (checked after every event and timer).
    fn finished(&self) -> bool {
        false
    }
    /// After each turn of the runner that handled events or market data (before
    /// timers): a strategy that collects events can act on them as one batch here.
    fn on_batch_end(&mut self, _api: &mut Api) {}
    /// Calls the callback for `ev`'s kind (nothing for an unknown kind): how the
    /// runner and a replay deliver every order event.
    fn on_event(&mut self, api: &mut Api, ev: &Event) {
        match ev.kind() {
            Some(EventKind::Ack) => self.on_ack(api, ev),
            Some(EventKind::Reject) => self.on_reject(api, ev),
            Some(EventKind::Fill) => self.on_fill(api, ev),
            Some(EventKind::Cancelled) => self.on_cancelled(api, ev),
            Some(EventKind::CancelReject) => self.on_cancel_reject(api, ev),
            Some(EventKind::Replaced) => self.on_replaced(api, ev),
            Some(EventKind::ReplaceReject) => self.on_replace_reject(api, ev),
            Some(EventKind::Triggered) => self.on_triggered(api, ev),
            Some(EventKind::ListStatus) => self.on_list_status(api, ev),
            None => {}
        }
    }
}
