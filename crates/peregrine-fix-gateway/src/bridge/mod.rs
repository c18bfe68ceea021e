//! One FIX session bridged to one native exchange session: FIX requests become
//! native requests (`requests`), native reports become FIX reports (`reports`).
//! No I/O here: native requests are appended to `native_out` for the shell to write,
//! FIX messages go through the session (whose output the shell writes).

mod mass_cancel;
mod orders;
mod reports;
mod requests;
mod status;

pub(crate) use requests::push_native;

use std::sync::Arc;

use peregrine_fix::session::Session;
use peregrine_fix::store::FileStore;

use crate::config::InstrumentConfig;
use orders::OrderTable;

/// One session's bridge.
#[derive(Debug)]
pub struct Bridge {
    /// The FIX session (its store holds its sequence numbers and sent messages).
    pub session: Session<FileStore>,
    instruments: Arc<[InstrumentConfig]>,
    table: OrderTable,
    /// Native requests encoded and not yet written.
    pub native_out: Vec<u8>,
    /// Whether the native session is logged in (requests are refused otherwise).
    pub native_ready: bool,
}

impl Bridge {
    /// A bridge for `session`; native ids start from `id_start` (the wall clock in
    /// ns, so a restarted gateway does not reuse them).
    pub fn new(
        session: Session<FileStore>,
        instruments: Arc<[InstrumentConfig]>,
        id_start: u64,
    ) -> Self {
        Bridge {
            session,
            instruments,
            table: OrderTable::new(id_start),
            native_out: Vec::with_capacity(4096),
            native_ready: false,
        }
    }

    fn instrument_by_symbol(&self, symbol: &[u8]) -> Option<usize> {
        self.instruments
            .iter()
            .position(|i| i.symbol.as_bytes() == symbol)
    }

    /// The native session dropped: requests in flight will never be answered on it.
    /// Orders not yet accepted are reported rejected; cancels and replaces in flight
    /// are reported refused (the order's fate is told by later reports).
    pub fn native_lost(&mut self, now: u64) {
        self.native_ready = false;
        self.native_out.clear();
        self.fail_pending(now);
    }
}

#[cfg(test)]
mod tests;
