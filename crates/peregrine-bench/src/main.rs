//! `peregrine-bench`: every Peregrine benchmark in one binary of its own, so that the
//! published order books it compares against (`lobster`, `orderbook-rs`, and their
//! async runtimes) are never linked into the `peregrine` binary that runs the
//! exchange. `peregrine bench ARGS` runs this binary when it sits next to it.
#![deny(unsafe_code)]

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "peregrine-bench",
    version,
    about = "Peregrine benchmarks (also run as `peregrine bench ...`)"
)]
struct Cli {
    #[command(subcommand)]
    command: Bench,
}

#[derive(Debug, Subcommand)]
enum Bench {
    /// The order-book benchmark: per-operation latency and throughput.
    Book(peregrine_bench::book::BookArgs),
    /// The engine with balances and commitments, on Olympus's (seed 004) shapes.
    Balances(peregrine_bench::balances::BalancesArgs),
    /// The non-blocking dispatch benchmark of seed 000/001.
    Dispatch(peregrine_bench::dispatch::DispatchArgs),
    /// Two-thread hand-off latency and throughput for every queue candidate.
    Handoff(peregrine_bench::handoff::HandoffArgs),
    /// The order engine's benches: submit hand-off, journal, UDP floor.
    Engine(peregrine_bench::engine::EngineArgs),
    /// Recorded L3 data through the exchange core, beside the decode-only floor.
    Replay(peregrine_bench::replay::ReplayArgs),
    /// The HTTP gateway: REST orders, WebSocket fan-out, history writer.
    Http(peregrine_bench::http::HttpArgs),
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Bench::Book(args) => peregrine_bench::book::run(args),
        Bench::Balances(args) => peregrine_bench::balances::run(args),
        Bench::Dispatch(args) => peregrine_bench::dispatch::run(args),
        Bench::Handoff(args) => peregrine_bench::handoff::run(args),
        Bench::Engine(args) => peregrine_bench::engine::run(args),
        Bench::Replay(args) => peregrine_bench::replay::run(args),
        Bench::Http(args) => peregrine_bench::http::main(args),
    }
}
