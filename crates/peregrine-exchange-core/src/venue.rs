//! What a fresh core for one venue needs: its instruments, the book capacity and
//! balances. The server builds its live core from it, the snapshot thread its
//! replicas, and the offline tools (`verify`, `journal replay`) theirs, so all of them
//! run the same engine with the same pre-match stage.

use peregrine_book::engine::EngineError;
use peregrine_book::MatchingEngine;
use peregrine_types::{AccountId, InstrumentSpec};

use crate::balances::BalanceSetup;
use crate::clock::Clock;
use crate::core::Core;
use crate::journal::CommandLog;

/// The shape of a venue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VenueSpec {
    /// Tradable instruments.
    pub instruments: Vec<InstrumentSpec>,
    /// Resting-order capacity of each book (preallocated).
    pub arena_capacity: usize,
    /// Balances, when on.
    pub balances: Option<BalanceSetup>,
    /// The account fees are paid to and rebates paid from (`[fees] account`; needed
    /// with balances when an instrument has fees).
    pub fee_account: Option<AccountId>,
    /// Accounts whose sessions may send market commands (halts, auctions).
    pub admins: Vec<AccountId>,
}

impl VenueSpec {
    /// A core with a fresh engine over `log`, reading `clock`, with room to track
    /// `owners` live orders.
    pub fn core<L: CommandLog>(
        &self,
        log: L,
        clock: Clock,
        owners: usize,
    ) -> Result<Core<L>, EngineError> {
        let engine = MatchingEngine::new(&self.instruments, self.arena_capacity)?;
        let core = Core::new(engine, owners, log, clock).with_admins(&self.admins);
        let core = match &self.balances {
            Some(b) => core.with_balances(b),
            None => core,
        };
        let fees = peregrine_ledger::Fees::from_specs(&self.instruments)
            .map_err(|e| EngineError::BadSpec(self.instruments[0].id, e))?;
        Ok(match fees {
            Some(f) => core.with_fees(f, self.fee_account.unwrap_or(AccountId(0))),
            None => core,
        })
    }
}
