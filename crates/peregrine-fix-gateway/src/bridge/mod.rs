//! One FIX session bridged to one native exchange session: FIX requests become
//! native requests (`requests`), native reports become FIX reports (`reports`).
//! No I/O here: native requests are appended to `native_out` for the shell to write,
//! FIX messages go through the session (whose output the shell writes). Every change
//! of the bridge's state is written to the session's store after the FIX messages it
//! produced (`persist`), with the exchange report sequence number reached.

mod exec_id;
mod lists;
mod mass_cancel;
mod orders;
mod persist;
mod reports;
mod requests;
mod status;

pub use persist::{replay_state_record, StateRecordError};
pub(crate) use requests::push_native;

use std::collections::VecDeque;
use std::sync::Arc;

use peregrine_fix::session::Session;
use peregrine_fix::store::{FileStore, StoreError};

use crate::config::InstrumentConfig;
use orders::OrderTable;

/// One session's bridge.
#[derive(Debug)]
pub struct Bridge {
    /// The FIX session (its store holds its sequence numbers and sent messages).
    pub session: Session<FileStore>,
    /// The exchange account the session trades for (its ExecIDs' prefix).
    account: u32,
    instruments: Arc<[InstrumentConfig]>,
    table: OrderTable,
    /// Native requests encoded and not yet written.
    pub native_out: Vec<u8>,
    /// Whether the native session is logged in (requests are refused otherwise).
    pub native_ready: bool,
    /// The next report sequence number of the account's stream (0: none seen yet;
    /// the native session then starts live).
    next_report: u64,
    /// The sequence number of the exchange report being turned into FIX messages
    /// (their ExecID), if any.
    current_report: Option<u64>,
    /// The stored `next_report`.
    stored_report: u64,
    scratch: Vec<u8>,
    /// ClOrdIDs of the latest orders the gateway refused itself (never sent to the
    /// exchange, so not in the order table), for PossResend; at most
    /// [`REFUSED_KEPT`], not stored.
    refused: VecDeque<Vec<u8>>,
}

/// How many refused ClOrdIDs a session remembers for PossResend.
const REFUSED_KEPT: usize = 1024;

impl Bridge {
    /// A bridge for `session`, trading for exchange account `account`; native ids
    /// start from `id_start` (the wall clock in ns, so a restarted gateway does not
    /// reuse them). The bridge's orders, requests in flight and report stream
    /// position are restored from the session's store.
    pub fn new(
        mut session: Session<FileStore>,
        account: u32,
        instruments: Arc<[InstrumentConfig]>,
        id_start: u64,
    ) -> Result<Self, StoreError> {
        let mut table = OrderTable::new(id_start);
        let next_report = persist::restore(session.store_mut(), &mut table, instruments.len())?;
        Ok(Bridge {
            session,
            account,
            instruments,
            table,
            native_out: Vec::with_capacity(4096),
            native_ready: false,
            next_report,
            current_report: None,
            stored_report: next_report,
            scratch: Vec::new(),
            refused: VecDeque::new(),
        })
    }

    /// The FIX session logged on; `reset`: its sequence numbers started again (a
    /// new FIX session: the ClOrdIDs the gateway refused in the last one are
    /// forgotten; orders that reached the exchange stay).
    pub fn logged_on(&mut self, reset: bool) {
        if reset {
            self.refused.clear();
        }
    }

    /// Whether ClOrdID `cl` was seen on this session: an order in the table, or one
    /// of the latest the gateway refused.
    fn seen_cl_ord_id(&self, cl: &[u8]) -> bool {
        self.table.by_cl_ord_id(cl).is_some() || self.refused.iter().any(|r| r == cl)
    }

    /// Remembers a refused order's ClOrdID (the oldest forgotten beyond the limit).
    fn note_refused(&mut self, cl: &[u8]) {
        if self.refused.len() == REFUSED_KEPT {
            self.refused.pop_front();
        }
        self.refused.push_back(cl.to_vec());
    }

    /// Where the native session resumes the account's report stream (0: live).
    pub fn resume_point(&self) -> u64 {
        self.next_report
    }

    /// Writes what changed since the last call to the store (after the FIX messages
    /// the change produced). The shell flushes the store before native requests
    /// leave, so the exchange never answers a request the store does not know.
    pub fn checkpoint(&mut self) {
        if !self.table.is_dirty() && self.stored_report == self.next_report {
            return;
        }
        persist::encode_changes(&mut self.table, &mut self.scratch);
        self.session
            .store_mut()
            .append_app_state(self.next_report, &self.scratch);
        self.stored_report = self.next_report;
    }

    fn instrument_by_symbol(&self, symbol: &[u8]) -> Option<usize> {
        self.instruments
            .iter()
            .position(|i| i.symbol.as_bytes() == symbol)
    }

    /// The native session dropped. Requests in flight stay in flight: the next
    /// session's replay of the report stream answers those the exchange took
    /// ([`Bridge::native_recovered`] fails the rest). Requests not yet written are
    /// dropped with the connection and answered as failed.
    pub fn native_lost(&mut self, _now: u64) {
        self.native_ready = false;
        self.native_out.clear();
    }

    /// The native session replayed every report the gateway missed: requests still
    /// in flight never reached the exchange's sequencer and are answered as failed.
    pub fn native_recovered(&mut self, now: u64) {
        self.fail_pending(now);
        self.native_ready = true;
        self.checkpoint();
    }
}

#[cfg(test)]
mod tests;
