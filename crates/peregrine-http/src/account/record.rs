//! What the accounts hand the history writer: order changes and report stream
//! positions, in order.

use super::state::Change;

/// One order change for the writer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderRecord {
    /// Account.
    pub account: u32,
    /// Instrument id.
    pub instrument: u32,
    /// The change.
    pub change: Change,
}

/// What the accounts hand the history writer, in order.
// Most records are order changes: boxing them would add an allocation to each
// for the sake of the rare, small cursor.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HistoryRecord {
    /// An order change.
    Order(OrderRecord),
    /// The account's report stream position after the changes sent before it: the
    /// next session resumes there (stored in `report_cursor`).
    Cursor {
        /// Account.
        account: u32,
        /// The next report sequence number.
        next_report_seq: u64,
    },
}
