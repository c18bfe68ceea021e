//! One order's FIX state: what ExecType, OrdStatus, CumQty, LeavesQty and AvgPx each
//! report says, from the venue's events.
//!
//! | event | ExecType | OrdStatus after | CumQty | LeavesQty |
//! |---|---|---|---|---|
//! | accepted | 0 New | 0 New | 0 | qty |
//! | rejected | 8 Rejected | 8 Rejected | 0 | 0 |
//! | fill, rest open | F Trade | 1 PartiallyFilled | +qty | venue's leaves |
//! | fill, nothing left | F Trade | 2 Filled | +qty | 0 |
//! | cancelled | 4 Canceled | 4 Canceled | unchanged | 0 |
//! | expired (GTD) | C Expired | C Expired | unchanged | 0 |
//! | replaced | 5 Replaced | 0 New, or 1 if anything filled | unchanged | new open qty |
//! | status request | I OrderStatus | unchanged | unchanged | unchanged |
//!
//! A replace's OrderQty is the new total: CumQty + the new open quantity.

use super::enums::{ExecType, OrdStatus};

/// The FIX view of one order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderState {
    /// OrderQty: total, filled included.
    pub order_qty: i64,
    /// CumQty.
    pub cum_qty: i64,
    /// LeavesQty.
    pub leaves_qty: i64,
    /// Σ price × qty of the fills, for AvgPx.
    pub notional: i128,
    /// The limit price.
    pub price: i64,
    /// OrdStatus.
    pub status: OrdStatus,
}

/// What one report says (the rest is in the [`OrderState`] after it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transition {
    /// ExecType (150).
    pub exec_type: ExecType,
    /// OrdStatus (39), after the event.
    pub ord_status: OrdStatus,
    /// LastPx and LastQty, for a fill.
    pub last: Option<(i64, i64)>,
}

impl OrderState {
    /// The venue accepted a new order of `qty` at `price`.
    pub fn accepted(qty: i64, price: i64) -> (OrderState, Transition) {
        let s = OrderState {
            order_qty: qty,
            cum_qty: 0,
            leaves_qty: qty,
            notional: 0,
            price,
            status: OrdStatus::New,
        };
        (s, s.report(ExecType::New, None))
    }

    /// The venue refused a new order of `qty` at `price`.
    pub fn rejected(qty: i64, price: i64) -> (OrderState, Transition) {
        let s = OrderState {
            order_qty: qty,
            cum_qty: 0,
            leaves_qty: 0,
            notional: 0,
            price,
            status: OrdStatus::Rejected,
        };
        (s, s.report(ExecType::Rejected, None))
    }

    fn report(&self, exec_type: ExecType, last: Option<(i64, i64)>) -> Transition {
        Transition {
            exec_type,
            ord_status: self.status,
            last,
        }
    }

    fn open_status(&self) -> OrdStatus {
        if self.cum_qty > 0 {
            OrdStatus::PartiallyFilled
        } else {
            OrdStatus::New
        }
    }

    /// A fill of `qty` at `price`, after which `leaves` remain open (the venue's
    /// number, trusted over arithmetic).
    pub fn fill(&mut self, price: i64, qty: i64, leaves: i64) -> Transition {
        self.cum_qty += qty;
        self.notional += i128::from(price) * i128::from(qty);
        self.leaves_qty = leaves.max(0);
        self.order_qty = self.order_qty.max(self.cum_qty + self.leaves_qty);
        self.status = if self.leaves_qty == 0 {
            OrdStatus::Filled
        } else {
            OrdStatus::PartiallyFilled
        };
        self.report(ExecType::Trade, Some((price, qty)))
    }

    /// The rest left the book: cancelled, or expired (a GTD order's time came).
    pub fn cancelled(&mut self, expired: bool) -> Transition {
        self.leaves_qty = 0;
        let (exec_type, status) = if expired {
            (ExecType::Expired, OrdStatus::Expired)
        } else {
            (ExecType::Canceled, OrdStatus::Canceled)
        };
        self.status = status;
        self.report(exec_type, None)
    }

    /// A replace took effect: new limit price, new open quantity.
    pub fn replaced(&mut self, price: i64, open_qty: i64) -> Transition {
        self.price = price;
        self.leaves_qty = open_qty;
        self.order_qty = self.cum_qty + open_qty;
        self.status = self.open_status();
        self.report(ExecType::Replaced, None)
    }

    /// A stop order's trigger was reached: it is now a working order (ExecType D
    /// Restated, FIX 4.4 has no "triggered"; nothing else changes).
    pub fn triggered(&self) -> Transition {
        self.report(ExecType::Restated, None)
    }

    /// The answer to an OrderStatusRequest.
    pub fn status_report(&self) -> Transition {
        self.report(ExecType::OrderStatus, None)
    }

    /// Whether the order can still trade (and so be cancelled or replaced).
    pub fn is_open(&self) -> bool {
        self.status.is_open()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ExecType as E;
    use OrdStatus as S;

    #[derive(Debug, Clone, Copy)]
    enum Ev {
        Fill(i64, i64, i64),
        Cancel,
        Expire,
        Replace(i64, i64),
        Status,
    }

    /// (events after an accept of 10 @ 100; per event: ExecType, OrdStatus, CumQty,
    /// LeavesQty, OrderQty, notional).
    type Row = (&'static str, &'static [(Ev, E, S, i64, i64, i64, i128)]);

    const TABLE: &[Row] = &[
        (
            "fills to done",
            &[
                (
                    Ev::Fill(100, 4, 6),
                    E::Trade,
                    S::PartiallyFilled,
                    4,
                    6,
                    10,
                    400,
                ),
                (Ev::Fill(101, 6, 0), E::Trade, S::Filled, 10, 0, 10, 1006),
            ],
        ),
        (
            "partial fill then cancel (an IOC rest)",
            &[
                (
                    Ev::Fill(100, 3, 7),
                    E::Trade,
                    S::PartiallyFilled,
                    3,
                    7,
                    10,
                    300,
                ),
                (Ev::Cancel, E::Canceled, S::Canceled, 3, 0, 10, 300),
            ],
        ),
        (
            "cancel untouched",
            &[(Ev::Cancel, E::Canceled, S::Canceled, 0, 0, 10, 0)],
        ),
        (
            "expire after a fill",
            &[
                (
                    Ev::Fill(100, 2, 8),
                    E::Trade,
                    S::PartiallyFilled,
                    2,
                    8,
                    10,
                    200,
                ),
                (Ev::Expire, E::Expired, S::Expired, 2, 0, 10, 200),
            ],
        ),
        (
            "replace untouched, then fill",
            &[
                (Ev::Replace(99, 20), E::Replaced, S::New, 0, 20, 20, 0),
                (Ev::Fill(99, 20, 0), E::Trade, S::Filled, 20, 0, 20, 1980),
            ],
        ),
        (
            "replace after a partial fill keeps CumQty; OrderQty is the new total",
            &[
                (
                    Ev::Fill(100, 4, 6),
                    E::Trade,
                    S::PartiallyFilled,
                    4,
                    6,
                    10,
                    400,
                ),
                (
                    Ev::Replace(98, 2),
                    E::Replaced,
                    S::PartiallyFilled,
                    4,
                    2,
                    6,
                    400,
                ),
                (Ev::Status, E::OrderStatus, S::PartiallyFilled, 4, 2, 6, 400),
                (Ev::Fill(98, 2, 0), E::Trade, S::Filled, 6, 0, 6, 596),
            ],
        ),
        (
            "status of a new order",
            &[(Ev::Status, E::OrderStatus, S::New, 0, 10, 10, 0)],
        ),
    ];

    #[test]
    fn every_transition_reports_the_right_fields() {
        for (name, steps) in TABLE {
            let (mut s, t) = OrderState::accepted(10, 100);
            assert_eq!(
                (t.exec_type, t.ord_status, s.leaves_qty),
                (E::New, S::New, 10)
            );
            for (i, &(ev, exec_type, status, cum, leaves, qty, notional)) in
                steps.iter().enumerate()
            {
                let t = match ev {
                    Ev::Fill(px, q, l) => s.fill(px, q, l),
                    Ev::Cancel => s.cancelled(false),
                    Ev::Expire => s.cancelled(true),
                    Ev::Replace(px, q) => s.replaced(px, q),
                    Ev::Status => s.status_report(),
                };
                let got = (
                    t.exec_type,
                    t.ord_status,
                    s.cum_qty,
                    s.leaves_qty,
                    s.order_qty,
                    s.notional,
                );
                assert_eq!(
                    got,
                    (exec_type, status, cum, leaves, qty, notional),
                    "{name}, step {i}"
                );
                if let Ev::Fill(px, q, _) = ev {
                    assert_eq!(t.last, Some((px, q)));
                } else {
                    assert_eq!(t.last, None);
                }
            }
        }
    }

    #[test]
    fn a_reject_is_done_with_nothing_open() {
        let (s, t) = OrderState::rejected(10, 100);
        assert_eq!(
            (t.exec_type, t.ord_status, s.leaves_qty, s.cum_qty),
            (E::Rejected, S::Rejected, 0, 0)
        );
        assert!(!s.is_open());
    }
}
