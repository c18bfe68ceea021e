//! A runner for QuickFIX's acceptance definitions (the line format of
//! `test/definitions/server/*/` in the quickfix/quickfix repository), to run them
//! against any FIX 4.4 acceptor over TCP: Peregrine's gateway
//! (`cargo test -p peregrine --test fix_gateway acceptance -- --ignored`, see
//! docs/fix.md) and Peregrine's own session-rule definitions in CI.
//!
//! A definition is a list of lines: `iCONNECT` / `iDISCONNECT` (the test connects
//! or closes), `I<message>` (the test sends it: `<TIME>`, `<TIME+n>`, `<TIME-n>`
//! become UTC timestamps, BodyLength and CheckSum are added when missing), `E<message>`
//! (the acceptor must send a message matching it next), `eDISCONNECT` (the acceptor
//! must close the connection); `i1,`/`E2,` … name one of several connections; `#`
//! starts a comment. The definitions are not part of Peregrine (their files stay
//! in the QuickFIX repository); this module is ours, written from the format.
//!
//! How a received message is compared ([`compare`]) and where a definition that
//! relies on QuickFIX's test application is adapted to a real venue
//! ([`compare::Expectation`]) is documented in docs/fix.md, "QuickFIX's acceptance
//! suite".

mod compare;
mod definition;
mod message;
mod run;

pub use compare::{compare, Expectation};
pub use definition::{parse, Step};
pub use message::{build, fields, Fields};
pub use run::{run, run_dir, Outcome, RunConfig};
