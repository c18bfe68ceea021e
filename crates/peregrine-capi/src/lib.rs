//! A C ABI over `peregrine-book`: the engine interface of the public matching-engine
//! challenge (flash1-dev/matching-engine-benchmark, `api/matching_engine_api.h`) as a
//! shared library, `libperegrine_capi.so`.
//!
//! * [`abi`]: the C layouts of messages, reports and the report transport.
//! * [`adapter`]: the challenge's rules mapped onto the book (modify as cancel +
//!   reinsert, IOC residual as CancelAck, rejects of cancels and modifies of orders
//!   that do not rest, trades at the maker's price with the aggressor's sequence).
//! * [`matcher`]: what the adapter needs from a book, for the fast book and the
//!   reference book (the tests run both).
//! * [`ffi`]: the exported `engine_*` symbols.
//!
//! Build: `cargo build --release -p peregrine-capi` (see docs/capi.md).
#![deny(clippy::undocumented_unsafe_blocks, unsafe_op_in_unsafe_fn)]

pub mod abi;
pub mod adapter;
pub mod ffi;
pub mod matcher;

pub use abi::{
    CancelMsg, ModifyMsg, MsgBody, NewOrderMsg, Report, ReportKind, TaggedMsg, Transport,
};
pub use adapter::{
    challenge_spec, Adapter, CapiBook, Msg, ReportSink, Stats, CAPACITY, MAX_PRICE_TICKS,
};
pub use matcher::Matcher;
