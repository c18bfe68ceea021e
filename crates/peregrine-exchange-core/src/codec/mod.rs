//! The byte formats the exchange writes to disk: the journal's command records
//! ([`command`]) and engine snapshots ([`snapshot`], with the venue section in
//! [`venue`]). Every decoder takes untrusted
//! bytes and returns a typed error, never panics (fuzzed: `fuzz/`).

pub mod command;
pub mod snapshot;
pub mod venue;
