//! FIX 4.4 for Peregrine, sans-IO.
//!
//! Three layers, each usable alone, none of which owns a socket, a thread or a clock
//! (the caller passes bytes in, takes bytes out, and says what time it is):
//!
//! * [`codec`]: a zero-copy tag=value codec. [`codec::frame`] finds one message in a
//!   byte stream and checks BeginString, BodyLength and CheckSum with bounded memory
//!   (a BodyLength above the configured maximum is refused from its digits alone);
//!   [`codec::Message`] is a view of a framed message whose fields are slices of the
//!   input; [`codec::Encoder`] writes a message into a reusable buffer, BodyLength and
//!   CheckSum included, without allocating once warm.
//! * [`dict`]: the FIX 4.4 data dictionary and [`dict::validate`], which checks a
//!   message against it (known tags, formats, enumerations, fields of the message
//!   type, repeating groups, required fields) in one pass, configurable like
//!   QuickFIX's validation settings.
//! * [`session`]: the FIX session layer as a state machine driven by
//!   (bytes in, time) → (bytes out, application messages, actions): Logon with
//!   password, Heartbeat/TestRequest, ResendRequest answered from a persistent
//!   [`store`] with PossDup resends and gap fills, SequenceReset, Reject with the
//!   right SessionRejectReason, Logout, and the sequence rules. Acceptor and
//!   initiator share it.
//! * [`app`]: the order-entry application messages (NewOrderSingle, cancel,
//!   cancel/replace, mass cancel, order status, ExecutionReport, OrderCancelReject,
//!   BusinessMessageReject) as typed views and encoders, and the order state that
//!   makes ExecType/OrdStatus/CumQty/LeavesQty/AvgPx right for every transition.
//!
//! Prices and quantities are decimals in the instrument's precision, converted
//! exactly with `peregrine_types::decimal` (never floats).
//!
//! See `docs/fix.md` for the sessions, the tag mapping and every reason mapping.
#![deny(unsafe_code)]

pub mod app;
pub mod codec;
pub mod dict;
pub mod session;
pub mod store;
