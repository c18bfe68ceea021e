//! The pre-match stage the venue's matching engine runs: the ledger when balances
//! are on (with the fee stage inside it when fees are on), the fee stage alone when
//! only fees are on (fills are priced and reported, nothing is charged), nothing
//! otherwise.

use peregrine_book::{Event, Ladder, MatchingEngine, NewOrder, PreMatch, RejectReason, Replace};
use peregrine_ledger::{Fees, Ledger};
use peregrine_types::{AccountId, InstrumentSpec, Timestamp};

/// The matching engine's pre-match stage in the venue (see the module documentation).
///
/// Why `Option`s inside one concrete type rather than a generic `Core<L, P>`: the
/// choice is made from the config at start, and a generic parameter would spread
/// through the core, both topologies, recovery, snapshots and the server (and every
/// test that builds a core) for a saving of one well-predicted branch per event when
/// balances are off. Off, [`PreMatch::check_new`] is that branch and
/// [`PreMatch::on_event`] two; no allocation, no hashing, no strings.
#[derive(Debug, Default)]
pub struct Balances {
    ledger: Option<Ledger>,
    /// Fees without balances (with balances they live in the ledger).
    fees: Option<Fees>,
}

impl Balances {
    /// Balances off.
    pub const fn off() -> Self {
        Balances {
            ledger: None,
            fees: None,
        }
    }

    /// Balances on, in `ledger`.
    pub fn on(ledger: Ledger) -> Self {
        Balances {
            ledger: Some(ledger),
            fees: None,
        }
    }

    /// Turns fees on: in the ledger (charged, paid to `account`) when balances are on,
    /// else priced and reported only.
    pub fn set_fees(&mut self, fees: Fees, account: AccountId) {
        match self.ledger.take() {
            Some(l) => self.ledger = Some(l.with_fees(fees, account)),
            None => self.fees = Some(fees),
        }
    }

    /// The ledger, when balances are on.
    pub fn ledger(&self) -> Option<&Ledger> {
        self.ledger.as_ref()
    }

    /// The ledger, mutably.
    pub fn ledger_mut(&mut self) -> Option<&mut Ledger> {
        self.ledger.as_mut()
    }

    /// The fee stage, when fees are on (in the ledger or alone).
    pub fn fees(&self) -> Option<&Fees> {
        match &self.ledger {
            Some(l) => l.fees(),
            None => self.fees.as_ref(),
        }
    }

    /// The asset `instrument`'s fees are paid in (its quote asset's id), 0 without
    /// balances: `Fill.fee_asset`.
    #[inline]
    pub fn fee_asset(&self, instrument: peregrine_types::InstrumentId) -> u32 {
        self.ledger
            .as_ref()
            .and_then(|l| l.assets(instrument))
            .map_or(0, |a| a.quote.0)
    }

    /// The fee stage, mutably (restoring a snapshot).
    pub fn fees_mut(&mut self) -> Option<&mut Fees> {
        match &mut self.ledger {
            Some(l) => l.fees_mut(),
            None => self.fees.as_mut(),
        }
    }
}

impl PreMatch for Balances {
    #[inline]
    fn check_new(&mut self, order: &NewOrder, spec: &InstrumentSpec) -> Result<(), RejectReason> {
        match self.ledger.as_mut() {
            Some(l) => l.check_new(order, spec),
            None => Ok(()),
        }
    }

    #[inline]
    fn check_replace(&mut self, r: &Replace, spec: &InstrumentSpec) -> Result<(), RejectReason> {
        match self.ledger.as_mut() {
            Some(l) => l.check_replace(r, spec),
            None => Ok(()),
        }
    }

    #[inline]
    fn on_event(&mut self, event: &mut Event) {
        if let Some(l) = self.ledger.as_mut() {
            l.on_event(event);
        } else if let (Event::Fill(f), Some(fees)) = (&mut *event, self.fees.as_mut()) {
            fees.price(f);
        }
    }

    #[inline]
    fn begin(&mut self, now: Timestamp) {
        if let Some(l) = self.ledger.as_mut() {
            l.begin(now);
        } else if let Some(f) = self.fees.as_mut() {
            f.set_time(now.0);
        }
    }
}

/// The engine the venue runs.
pub type VenueEngine = MatchingEngine<Ladder, Balances>;
