//! A closed-loop latency probe: one order in flight at a time; the next goes out as
//! soon as the previous one's ack or reject arrives. Pointed at a venue index the
//! engine does not have (or with a quantity above the risk limit), every order is
//! answered by the orchestrator itself, so the runner's round-trip histogram measures
//! exactly strategy → engine → strategy: two shared-memory hand-offs, decoding and
//! the checks, with no gateway or venue in the path.

use peregrine_types::{InstrumentId, Price, Qty, Side};

use crate::api::Api;
use crate::msg::Event;
use crate::strategy::Strategy;

/// Pinger settings.
#[derive(Debug, Clone)]
pub struct PingerConfig {
    /// Venue index (an unknown one keeps orders inside the engine).
    pub venue: u32,
    /// Instrument.
    pub instrument: InstrumentId,
    /// Order quantity (above the risk limit: answered by the risk check).
    pub qty: i64,
    /// Stop sending after this many orders.
    pub count: u64,
}

/// The probe.
#[derive(Debug)]
pub struct Pinger {
    cfg: PingerConfig,
    sent: u64,
    waiting: bool,
}

impl Pinger {
    /// A pinger with `cfg`.
    pub fn new(cfg: PingerConfig) -> Pinger {
        Pinger {
            cfg,
            sent: 0,
            waiting: false,
        }
    }

    /// Orders sent.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    fn fire(&mut self, api: &mut Api) {
        if self.sent >= self.cfg.count {
            self.waiting = false;
            return;
        }
        let (price, qty) = (Price::from_raw(10_000), Qty::from_raw(self.cfg.qty));
        let r = api.send_order(self.cfg.venue, self.cfg.instrument, Side::Buy, price, qty);
        self.waiting = r.is_ok();
        self.sent += r.is_ok() as u64;
    }
}

impl Strategy for Pinger {
    fn on_start(&mut self, api: &mut Api) {
        self.fire(api);
    }

    fn on_ack(&mut self, api: &mut Api, _ev: &Event) {
        self.fire(api);
    }

    fn on_reject(&mut self, api: &mut Api, _ev: &Event) {
        self.fire(api);
    }

    fn on_timer(&mut self, api: &mut Api, _now_ns: u64) {
        if !self.waiting {
            self.fire(api); // the ring was full last time
        }
    }

    fn finished(&self) -> bool {
        self.sent >= self.cfg.count && !self.waiting
    }
}
