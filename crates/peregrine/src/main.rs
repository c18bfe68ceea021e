//! `peregrine`: one binary for every part of the stack.
#![deny(unsafe_code)]

use clap::{Parser, Subcommand};

mod engine_cmd;
mod gateway_cmd;
mod strategy_cmd;
mod up;

#[derive(Debug, Parser)]
#[command(
    name = "peregrine",
    version,
    about = "Peregrine low-latency trading stack"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Benchmarks.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Run the exchange (order entry over TCP, market data over UDP).
    Exchange(peregrine_exchange::ExchangeArgs),
    /// Drive an exchange with many sessions and report latency percentiles.
    Loadgen(peregrine_exchange::loadgen::LoadgenArgs),
    /// Balance administration: deposit, withdraw, query (exchange with balances).
    Admin(peregrine_exchange::admin_cli::AdminArgs),
    /// Journal tools.
    #[command(subcommand)]
    Journal(JournalCommand),
    /// Subscribe to the market-data feed and print one instrument's top of book and trades.
    Md(peregrine_exchange::subscriber::MdArgs),
    /// The order engine: run it, or query / kill / stop a running one.
    Engine(engine_cmd::EngineArgs),
    /// Run an example strategy against a running engine.
    Strategy(strategy_cmd::StrategyArgs),
    /// Gateways to the exchange for other clients: `gateway http` (Binance-style REST,
    /// WebSocket streams, history store, web UI).
    Gateway(gateway_cmd::GatewayArgs),
    /// Run the whole stack (exchange, engine, strategies) until Ctrl-C; print a summary.
    Up(up::UpArgs),
    /// Check commitments against the journal, or prove a trade's inclusion.
    #[command(subcommand)]
    Verify(peregrine_exchange::verify::VerifyCommand),
}

#[derive(Debug, Subcommand)]
enum JournalCommand {
    /// Replay a journal into a fresh engine; print record count, last seq and state hash.
    Replay(peregrine_exchange::journal_cli::ReplayArgs),
}

#[derive(Debug, Subcommand)]
enum BenchCommand {
    /// The order-book benchmark: per-operation latency and throughput.
    Book(peregrine_bench::book::BookArgs),
    /// The engine with balances and commitments, on Olympus's (seed 004) shapes.
    Balances(peregrine_bench::balances::BalancesArgs),
    /// The non-blocking dispatch benchmark of seed 000/001.
    Dispatch(peregrine_bench::dispatch::DispatchArgs),
    /// Two-thread hand-off latency and throughput for every queue candidate.
    Handoff(peregrine_bench::handoff::HandoffArgs),
}

fn main() -> anyhow::Result<()> {
    up::die_with_parent();
    let cli = Cli::parse();
    match cli.command {
        Command::Bench(BenchCommand::Book(args)) => peregrine_bench::book::run(args),
        Command::Bench(BenchCommand::Balances(args)) => peregrine_bench::balances::run(args),
        Command::Bench(BenchCommand::Dispatch(args)) => peregrine_bench::dispatch::run(args),
        Command::Bench(BenchCommand::Handoff(args)) => peregrine_bench::handoff::run(args),
        Command::Exchange(args) => peregrine_exchange::run_cli(args),
        Command::Journal(JournalCommand::Replay(args)) => {
            peregrine_exchange::journal_cli::run(args).map(|_| ())
        }
        Command::Md(args) => peregrine_exchange::subscriber::run(args),
        Command::Admin(args) => peregrine_exchange::admin_cli::run(args).map(|_| ()),
        Command::Loadgen(args) => {
            let summary = peregrine_exchange::loadgen::run(args)?;
            anyhow::ensure!(
                summary.lost == 0 && summary.errors == 0,
                "{} lost and {} errors",
                summary.lost,
                summary.errors
            );
            Ok(())
        }
        Command::Engine(args) => engine_cmd::run(args),
        Command::Strategy(args) => strategy_cmd::run(args),
        Command::Up(args) => up::run(args),
        Command::Gateway(args) => gateway_cmd::run(args),
        Command::Verify(cmd) => peregrine_exchange::verify::run(cmd),
    }
}
