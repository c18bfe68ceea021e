//! The order-entry application messages of Peregrine's FIX 4.4 dialect.
//!
//! Requests (D, F, G, q, H) decode from a [`crate::codec::Message`] into views whose
//! strings are slices of the input; reports (8, 9, j, r) encode from typed values
//! into a [`crate::codec::MessageWriter`]. Both directions exist so the same code
//! serves the acceptor (the gateway) and the initiator (the engine's FIX venue).
//! [`OrderState`] keeps ExecType/OrdStatus/CumQty/LeavesQty/AvgPx right.

mod enums;
mod fields;
mod lists;
mod order_state;
mod reports;
mod requests;

pub use enums::ord_rej_reason_name;
pub use enums::{
    BusinessRejectReason, CxlRejReason, CxlRejResponseTo, ExecType, MassCancelScope, OrdRejReason,
    OrdStatus, OrdType, SelfMatchPrevention, Side, TimeInForce,
};
pub use fields::{decimal_units, AppError};
pub use lists::{
    Contingency, ListCancelRequest, ListOrder, ListOrderStatus, ListStatus, ListStatusOrder,
    ListStatusRequest, NewOrderList, CONTINGENCY_TYPE, MAX_LIST_ORDERS,
};
pub use order_state::{OrderState, Transition};
pub use reports::{
    msg_type as report_type, BusinessMessageReject, ExecutionReport, ExecutionReportView,
    OrderCancelReject, OrderCancelRejectView, OrderMassCancelReport, OrderMassCancelReportView,
    AVG_PX_EXTRA_DECIMALS, COMM_TYPE_ABSOLUTE,
};
pub use requests::{
    msg_type as request_type, NewOrderSingle, OrderCancelReplaceRequest, OrderCancelRequest,
    OrderExtras, OrderMassCancelRequest, OrderStatusRequest, OrderTerms, TrailOffset,
    TrailOffsetUnit,
};

#[cfg(test)]
mod tests;
