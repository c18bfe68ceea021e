//! Checks that a replay without a strategy rebuilds the recorded book, at every step.
//!
//! * [`Rebuild`] (any L3 file): the same messages applied by their literal meaning to
//!   the naive reference book ([`peregrine_book::ReferenceBook`], via
//!   [`RecordedBook`]). After each message: every level the rebuild changed has the
//!   same total and order count in the core, and every order the message named has
//!   the same open quantity in both; every `full_every` messages and at the end, the
//!   two books hold the same orders in the same priority order (reference, side,
//!   price, quantity).
//! * [`Snapshots`] (LOBSTER): after each message, the core's top levels equal the row
//!   of LOBSTER's own order book file.
//!
//! A mismatch is counted and the first few are kept with their message number.

use std::io::Read;

use peregrine_book::{Book, Event, ReferenceBook};
use peregrine_types::{InstrumentSpec, Price, Side};

use crate::data::lobster::{BookLevel, LobsterBook};
use crate::data::{DataError, L3};
use crate::l3::L3Market;
pub use crate::outcome::CheckReport;
use crate::outcome::Checker;
use crate::recorded::RecordedBook;
use crate::venue::Venue;

/// Mismatches kept in the report.
const KEEP: usize = 10;

impl CheckReport {
    fn mismatch(&mut self, step: u64, what: String) {
        self.mismatches += 1;
        if self.first.len() < KEEP {
            self.first.push(format!("message {step}: {what}"));
        }
    }

    /// A few lines for people.
    pub fn render(&self) -> String {
        let mut s = format!(
            "book check against {}: {} steps, {} full comparisons, {} mismatches\n",
            self.against, self.steps, self.full, self.mismatches
        );
        for m in &self.first {
            s += &format!("  {m}\n");
        }
        s
    }
}

/// The rebuild by the reference book.
#[derive(Debug)]
pub struct Rebuild {
    rebuilt: RecordedBook<ReferenceBook>,
    full_every: u64,
    report: CheckReport,
}

impl Rebuild {
    /// A rebuild of `spec`'s book holding up to `capacity` orders, compared order by
    /// order every `full_every` messages.
    pub fn new(spec: &InstrumentSpec, capacity: usize, full_every: u64) -> Rebuild {
        Rebuild {
            rebuilt: RecordedBook::new(ReferenceBook::new(spec.clone(), capacity), spec.id),
            full_every: full_every.max(1),
            report: CheckReport {
                against: "a rebuild by the reference book".into(),
                ..CheckReport::default()
            },
        }
    }

    /// Checks the core after message `msg` (number `step`) was replayed into it.
    pub fn step(&mut self, step: u64, ts: u64, msg: &L3, venue: &Venue, market: &L3Market) {
        self.report.steps += 1;
        if let Err(e) = self.rebuilt.apply(ts, msg) {
            return self
                .report
                .mismatch(step, format!("the file contradicts itself: {e}"));
        }
        let book = venue.book();
        let events = self.rebuilt.events();
        for (i, ev) in events.iter().enumerate() {
            // A level the message changed twice (a replace at the same price) is
            // compared in its final state only.
            let later = |l: &peregrine_book::event::LevelChanged| {
                events[i + 1..].iter().any(|e| {
                    matches!(e, Event::LevelChanged(m) if m.side == l.side && m.price == l.price)
                })
            };
            if let Event::LevelChanged(l) = ev {
                if later(l) {
                    continue;
                }
                let core = book.level_at(l.side, l.price);
                let want = (!l.qty.is_zero()).then_some((l.qty, l.count));
                if core != want {
                    let what =
                        format!("{} level {}: core {core:?}, file {want:?}", l.side, l.price);
                    self.report.mismatch(step, what);
                }
            }
        }
        let named: [Option<u64>; 2] = match *msg {
            L3::Cancel { order_ref, .. }
            | L3::Execute { order_ref, .. }
            | L3::ExecuteAt { order_ref, .. }
            | L3::Delete { order_ref } => [Some(order_ref), None],
            L3::Add { order_ref, .. } => [Some(order_ref), None],
            L3::Replace {
                old_ref, new_ref, ..
            } => [Some(old_ref), Some(new_ref)],
            _ => [None, None],
        };
        for r in named.into_iter().flatten() {
            let core = market
                .id_of(r)
                .and_then(|id| book.order_qty(id))
                .map(|q| q.lots());
            let file = self.rebuilt.order(r).map(|o| o.leaves);
            if core != file {
                self.report.mismatch(
                    step,
                    format!("order {r}: core open {core:?}, file {file:?}"),
                );
            }
        }
        if step.is_multiple_of(self.full_every) {
            self.full(step, venue);
        }
    }

    /// Compares both books order by order.
    pub fn full(&mut self, step: u64, venue: &Venue) {
        self.report.full += 1;
        let mut core = Vec::with_capacity(self.rebuilt.len());
        venue
            .book()
            .visit_orders(&mut |o| core.push((o.client_id.0, o.side, o.price, o.qty)));
        let mut file = Vec::with_capacity(self.rebuilt.len());
        self.rebuilt
            .book()
            .for_each_order(&mut |o| file.push((o.id.0, o.side, o.price, o.qty)));
        if core != file {
            let at = core.iter().zip(&file).position(|(a, b)| a != b);
            self.report.mismatch(
                step,
                format!(
                    "books differ ({} orders in the core, {} in the file; first difference at {at:?})",
                    core.len(),
                    file.len()
                ),
            );
        }
    }

    /// The findings.
    pub fn report(&self) -> &CheckReport {
        &self.report
    }
}

/// LOBSTER's order book file, row by row against the core.
#[derive(Debug)]
pub struct Snapshots<R> {
    rows: LobsterBook<R>,
    levels: Vec<(i64, i64)>,
    report: CheckReport,
}

impl<R: Read> Snapshots<R> {
    /// Checks against the order book file `rows`.
    pub fn new(rows: LobsterBook<R>) -> Snapshots<R> {
        Snapshots {
            rows,
            levels: Vec::new(),
            report: CheckReport {
                against: "LOBSTER's order book file".into(),
                ..CheckReport::default()
            },
        }
    }

    fn side(&mut self, step: u64, venue: &Venue, side: Side, row: &[BookLevel]) {
        self.levels.clear();
        let levels = &mut self.levels;
        venue
            .book()
            .visit_depth(side, row.len(), &mut |p: Price, q, _| {
                levels.push((p.units(), q.lots()))
            });
        let core = self.levels.iter().copied().map(Some);
        let differs = core
            .chain(std::iter::repeat(None))
            .zip(row)
            .any(|(c, r)| c != *r);
        if differs {
            let what = format!("{side} levels: core {:?}, file {row:?}", self.levels);
            self.report.mismatch(step, what);
        }
    }

    /// Checks the core after message `step` against the file's next row.
    pub fn step(&mut self, step: u64, venue: &Venue) -> Result<(), DataError> {
        self.report.steps += 1;
        if !self.rows.next_row()? {
            self.report.mismatch(
                step,
                "the order book file has fewer rows than messages".into(),
            );
            return Ok(());
        }
        let (asks, bids) = (
            std::mem::take(&mut self.rows.asks),
            std::mem::take(&mut self.rows.bids),
        );
        self.side(step, venue, Side::Sell, &asks);
        self.side(step, venue, Side::Buy, &bids);
        (self.rows.asks, self.rows.bids) = (asks, bids);
        Ok(())
    }

    /// The findings.
    pub fn report(&self) -> &CheckReport {
        &self.report
    }
}

impl Checker<L3Market> for Rebuild {
    fn step(
        &mut self,
        step: u64,
        ts: u64,
        msg: &L3,
        venue: &Venue,
        market: &L3Market,
    ) -> Result<(), DataError> {
        Rebuild::step(self, step, ts, msg, venue, market);
        Ok(())
    }

    fn finish(&mut self, step: u64, venue: &Venue) {
        self.full(step, venue);
    }

    fn report(&self) -> CheckReport {
        self.report.clone()
    }
}

impl<R: Read> Checker<L3Market> for Snapshots<R> {
    fn step(
        &mut self,
        step: u64,
        _: u64,
        msg: &L3,
        venue: &Venue,
        _: &L3Market,
    ) -> Result<(), DataError> {
        // The opening book's orders (a day that starts mid-session) have no row.
        if matches!(msg, L3::Add { order_ref, .. } if *order_ref >= crate::lobster_seed::SEED_BASE)
        {
            return Ok(());
        }
        Snapshots::step(self, step, venue)
    }

    fn finish(&mut self, _: u64, _: &Venue) {}

    fn report(&self) -> CheckReport {
        self.report.clone()
    }
}
