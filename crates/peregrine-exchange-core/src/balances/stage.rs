//! The pre-match stage the venue's matching engine runs: the ledger when balances
//! are on, nothing when they are off.

use peregrine_book::{Ladder, MatchingEngine, NewOrder, PreMatch, RejectReason, Replace};
use peregrine_ledger::Ledger;
use peregrine_types::InstrumentSpec;

/// The matching engine's pre-match stage in the venue: the ledger when balances are
/// on, nothing when they are off.
///
/// Why an `Option` inside one concrete type rather than a generic `Core<L, P>`: the
/// choice is made from the config at start, and a generic parameter would spread
/// through the core, both topologies, recovery, snapshots and the server (and every
/// test that builds a core) for a saving of one well-predicted branch per order when
/// balances are off. Off, [`PreMatch::check_new`] is that branch and
/// [`Balances::settle`] returns at once; no allocation, no hashing, no strings.
#[derive(Debug, Default)]
pub struct Balances(Option<Ledger>);

impl Balances {
    /// Balances off.
    pub const fn off() -> Self {
        Balances(None)
    }

    /// Balances on, in `ledger`.
    pub fn on(ledger: Ledger) -> Self {
        Balances(Some(ledger))
    }

    /// The ledger, when balances are on.
    pub fn ledger(&self) -> Option<&Ledger> {
        self.0.as_ref()
    }

    /// The ledger, mutably.
    pub fn ledger_mut(&mut self) -> Option<&mut Ledger> {
        self.0.as_mut()
    }

    /// The post-match stage: applies one command's events to the ledger.
    #[inline]
    pub fn settle(&mut self, events: &[peregrine_book::Event]) {
        if let Some(l) = self.0.as_mut() {
            l.settle(events);
        }
    }
}

impl PreMatch for Balances {
    #[inline]
    fn check_new(&mut self, order: &NewOrder, spec: &InstrumentSpec) -> Result<(), RejectReason> {
        match self.0.as_mut() {
            Some(l) => l.check_new(order, spec),
            None => Ok(()),
        }
    }

    #[inline]
    fn check_replace(&mut self, r: &Replace, spec: &InstrumentSpec) -> Result<(), RejectReason> {
        match self.0.as_mut() {
            Some(l) => l.check_replace(r, spec),
            None => Ok(()),
        }
    }
}

/// The engine the venue runs.
pub type VenueEngine = MatchingEngine<Ladder, Balances>;
