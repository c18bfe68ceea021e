//! WebSocket streams: the channels ([`hub`]), market and user-data connections
//! ([`conn`]), listen keys ([`listen`]), and the user-data part of the WebSocket API
//! ([`api`]).
pub mod api;
pub mod conn;
pub mod hub;
pub mod listen;
