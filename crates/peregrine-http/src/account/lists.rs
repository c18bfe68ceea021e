//! Order lists (OCO, OTO, OTOCO) as the Binance API shows them: the list, its legs,
//! and how the exchange's `ListStatus` reports move it. The rules (which leg cancels
//! or releases which) are the exchange's (`docs/orders.md`); the gateway only tracks
//! what it is told.

use peregrine_types::ListKind;

/// An order list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderList {
    /// The list's id (its first leg's order id).
    pub list_id: u64,
    /// Index of its symbol.
    pub symbol: usize,
    /// The client's id (`listClientOrderId`).
    pub client_list_id: String,
    /// OCO, OTO or OTOCO.
    pub kind: ListKind,
    /// The legs' exchange order ids, in the exchange's leg order.
    pub legs: Vec<u64>,
    /// No leg depends on another any more (`ALL_DONE`).
    pub done: bool,
    /// Refused as a whole (`REJECT`).
    pub rejected: bool,
    /// Accepted at, ms.
    pub time_ms: u64,
    /// Last change, ms.
    pub update_ms: u64,
}

impl OrderList {
    /// Binance's `contingencyType`.
    pub fn contingency_type(&self) -> &'static str {
        match self.kind {
            ListKind::Oco => "OCO",
            ListKind::Oto => "OTO",
            ListKind::Otoco => "OTOCO",
        }
    }

    /// Binance's `listStatusType`.
    pub fn status_type(&self) -> &'static str {
        if self.rejected || self.done {
            "ALL_DONE"
        } else {
            "EXEC_STARTED"
        }
    }

    /// Binance's `listOrderStatus`.
    pub fn order_status(&self) -> &'static str {
        if self.rejected {
            "REJECT"
        } else if self.done {
            "ALL_DONE"
        } else {
            "EXECUTING"
        }
    }
}

/// What the API knows about a new list before the exchange answers.
#[derive(Debug, Clone)]
pub struct ListDraft {
    /// Symbol index.
    pub symbol: usize,
    /// `listClientOrderId`.
    pub client_list_id: String,
    /// Kind.
    pub kind: ListKind,
    /// The legs' session ids (their drafts wait as new orders).
    pub leg_coids: Vec<u64>,
}

/// The lists an account keeps in memory (older ones are forgotten).
pub const LISTS_KEPT: usize = 1_024;
