//! The client side of order-entry protocol version 2 as a library (staged here until
//! the `peregrine-client` crate exists): account key files ([`keys`]) and a blocking
//! connection that logs in with challenge-response, resumes the report stream, and
//! gives every request exactly one terminal answer ([`connection`]).

pub mod connection;
pub mod keys;
