//! WebSocket streams: market and user-data connections ([`conn`]) and the user-data
//! part of the WebSocket API ([`api`]). The channels they read are
//! [`crate::market::hub`]'s; listen keys are [`crate::dialect::listen`]'s.
pub mod api;
pub mod conn;
pub mod methods;
