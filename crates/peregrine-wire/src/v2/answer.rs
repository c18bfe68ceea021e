//! Which message is the one terminal answer to which request (protocol document,
//! section 4.5). A client keeps its requests by id until their terminal answer arrives;
//! every other report is an update.

use peregrine_types::ClientOrderId;

use crate::field::{ListState, RequestKind};
use crate::reason::CancelCode;
use crate::v2::Outbound;

/// A request, named the way its terminal answer names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RequestRef {
    /// A `NewOrder` or a `NewOrderExt`, by its client order id.
    NewOrder(ClientOrderId),
    /// A `Cancel`, by its client order id.
    Cancel(ClientOrderId),
    /// A `Replace`, by its client order id.
    Replace(ClientOrderId),
    /// A `MassCancel`, by its client order id.
    MassCancel(ClientOrderId),
    /// An `OrderStatusRequest` or `OpenOrdersRequest`, by its request id.
    Query(u64),
    /// A `Deposit`, `Withdraw` or `BalanceQuery`, by its request id.
    Admin(u64),
    /// A `NewOrderList`, by its client list id.
    NewList(ClientOrderId),
    /// A `CancelList`, by its client order id.
    CancelList(ClientOrderId),
    /// An `MmpRequest`, by its request id.
    Mmp(u64),
    /// A `MarketControl`, by its request id.
    Market(u64),
}

impl Outbound {
    /// The request this message terminally answers, if it is a terminal answer.
    ///
    /// A `Cancelled` is terminal only for the `Cancel` that asked for it (reason 1,
    /// `user_requested`); one caused by a mass cancel, an IOC remainder, self-trade
    /// prevention or expiry is an update. `OpenOrder` is an update; `OpenOrdersEnd`
    /// ends the answer (request id 0 is the login snapshot, which answers nothing).
    pub fn terminal(&self) -> Option<RequestRef> {
        use RequestRef as R;
        Some(match self {
            Outbound::Accepted(m) => R::NewOrder(m.client_order_id),
            Outbound::Rejected(m) => R::NewOrder(m.client_order_id),
            Outbound::Cancelled(m) if m.reason == CancelCode::UserRequested.reason() => {
                R::Cancel(m.request_id)
            }
            Outbound::Replaced(m) => R::Replace(m.client_order_id),
            Outbound::CancelRejected(m) => match m.request_kind {
                RequestKind::Cancel => R::Cancel(m.client_order_id),
                RequestKind::Replace => R::Replace(m.client_order_id),
                RequestKind::MassCancel => R::MassCancel(m.client_order_id),
                RequestKind::CancelList => R::CancelList(m.client_order_id),
                RequestKind::Mmp => R::Mmp(m.client_order_id.0),
                RequestKind::MarketControl => R::Market(m.client_order_id.0),
            },
            // A `NewOrderExt` is answered like a `NewOrder` (a list's legs are not
            // requests of their own).
            Outbound::AcceptedExt(m) if m.list_id.0 == 0 => R::NewOrder(m.client_order_id),
            Outbound::ListStatus(m) => match m.status {
                ListState::Accepted | ListState::Rejected => R::NewList(m.client_list_id),
                ListState::Done if m.request_id.0 != 0 => R::CancelList(m.request_id),
                ListState::Done => return None,
            },
            Outbound::MmpStatus(m) if m.request_id != 0 => R::Mmp(m.request_id),
            Outbound::MarketControlDone(m) => R::Market(m.request_id),
            Outbound::MassCancelDone(m) => R::MassCancel(m.request_id),
            Outbound::OrderStatus(m) => R::Query(m.request_id),
            Outbound::OpenOrdersEnd(m) if m.request_id != 0 => R::Query(m.request_id),
            Outbound::Balance(m) => R::Admin(m.request_id),
            Outbound::AdminRejected(m) => R::Admin(m.request_id),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v2::Message;

    #[test]
    fn every_request_type_has_a_terminal_answer_type() {
        // (request name, answer names that can terminate it)
        let expect = [
            ("NewOrder", &["Accepted", "Rejected"][..]),
            ("Cancel", &["Cancelled", "CancelRejected"][..]),
            ("Replace", &["Replaced", "CancelRejected"][..]),
            ("MassCancel", &["MassCancelDone", "CancelRejected"][..]),
            ("OrderStatusRequest", &["OrderStatus"][..]),
            ("OpenOrdersRequest", &["OpenOrdersEnd"][..]),
            ("Deposit", &["Balance", "AdminRejected"][..]),
            ("Withdraw", &["Balance", "AdminRejected"][..]),
            ("BalanceQuery", &["Balance", "AdminRejected"][..]),
            ("NewOrderExt", &["AcceptedExt", "Rejected"][..]),
            ("NewOrderList", &["ListStatus"][..]),
            ("CancelList", &["ListStatus", "CancelRejected"][..]),
            ("MmpRequest", &["MmpStatus", "CancelRejected"][..]),
            (
                "MarketControl",
                &["MarketControlDone", "CancelRejected"][..],
            ),
        ];
        for (req, answers) in expect {
            assert!(Message::MESSAGES.iter().any(|d| d.name == req), "{req}");
            for a in answers {
                let i = Outbound::MESSAGES
                    .iter()
                    .position(|d| d.name == *a)
                    .unwrap();
                // Some sample of the answer type is terminal.
                let any = (0..8u64).any(|s| Outbound::sample(i, &[s; 16]).terminal().is_some());
                assert!(any, "{a} answers {req}");
            }
        }
    }

    #[test]
    fn only_a_requested_cancel_is_terminal() {
        let i = Outbound::MESSAGES
            .iter()
            .position(|d| d.name == "Cancelled")
            .unwrap();
        for code in 1..=11u16 {
            let mut m = Outbound::sample(i, &[5; 16]);
            if let Outbound::Cancelled(c) = &mut m {
                c.reason = crate::ReasonCode(code);
            }
            assert_eq!(m.terminal().is_some(), code == 1, "reason {code}");
        }
        let j = Outbound::MESSAGES
            .iter()
            .position(|d| d.name == "OpenOrdersEnd")
            .unwrap();
        let mut end = Outbound::sample(j, &[0; 16]);
        if let Outbound::OpenOrdersEnd(e) = &mut end {
            e.request_id = 0;
        }
        assert_eq!(end.terminal(), None, "the login snapshot answers nothing");
    }
}
