//! `peregrine`: one binary for every part of the stack.
#![deny(unsafe_code)]

use clap::{Parser, Subcommand};

mod cli;
mod engine_cmd;
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
    /// Benchmarks: runs the separate `peregrine-bench` binary (`peregrine bench --help`
    /// lists them).
    Bench(cli::bench::BenchArgs),
    /// Run the exchange (order entry over TCP, market data over UDP).
    Exchange(cli::exchange::ExchangeArgs),
    /// Drive an exchange with many sessions and report latency percentiles.
    Loadgen(cli::loadgen::LoadgenArgs),
    /// Balance administration: deposit, withdraw, query (exchange with balances);
    /// `admin cluster`: status and membership of `exchange --cluster` nodes.
    Admin(cli::admin::AdminArgs),
    /// Make account keys: a secret key file for the clients and the exchange's
    /// stored-key entries.
    Keygen(cli::keygen::KeygenArgs),
    /// Journal tools.
    #[command(subcommand)]
    Journal(JournalCommand),
    /// Subscribe to the market-data feed and print one instrument's top of book and trades.
    Md(cli::md::MdArgs),
    /// The order engine: run it, or query / kill / stop a running one.
    Engine(engine_cmd::EngineArgs),
    /// Run an example strategy against a running engine.
    Strategy(strategy_cmd::StrategyArgs),
    /// Gateways to the exchange for other clients: `gateway fix` (FIX 4.4 acceptor),
    /// `gateway http` (Binance-style REST, WebSocket streams, history store, web UI).
    Gateway(cli::gateway::GatewayArgs),
    /// Run the whole stack (exchange, engine, strategies) until Ctrl-C; print a summary.
    Up(up::UpArgs),
    /// Replay recorded market data (ITCH 5.0, LOBSTER, Binance, Tardis) through the
    /// exchange core in simulated time, with a strategy attached as live.
    Replay(cli::replay::ReplayArgs),
    /// Check commitments against the journal, or prove a trade's inclusion.
    #[command(subcommand)]
    Verify(cli::verify::VerifyCommand),
    /// The deterministic simulator of the venue: the production exchange over a
    /// simulated disk, network and clock, with faults and an oracle, seed by seed.
    Sim(cli::sim::SimArgs),
}

#[derive(Debug, Subcommand)]
enum JournalCommand {
    /// Replay a journal into a fresh engine; print record count, last seq and state hash.
    Replay(cli::journal::ReplayArgs),
}

fn main() -> std::process::ExitCode {
    up::die_with_parent();
    let cli = Cli::parse();
    if std::env::var_os("PEREGRINE_PARSE_ONLY").is_some() {
        // Checks a command line without running it (the documented-commands test:
        // crates/peregrine/tests/cli/documented.rs).
        println!("{:?}", cli.command);
        return std::process::ExitCode::SUCCESS;
    }
    if !matches!(cli.command, Command::Sim(_)) {
        // The simulator captures the production code's logs into its own trace.
        cli::logger::init();
    }
    let result = run(cli.command);
    cli::logger::flush();
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", error_text(&e));
            std::process::ExitCode::FAILURE
        }
    }
}

/// An error and its causes, each cause only when its text is not already part of the
/// message before it (a config error wraps the parser's message, which would otherwise
/// print twice). A backtrace only when `RUST_BACKTRACE` asks for one.
fn error_text(e: &anyhow::Error) -> String {
    let mut out = format!("error: {e}");
    let mut shown = e.to_string();
    for cause in e.chain().skip(1) {
        let text = cause.to_string();
        if !shown.contains(text.trim()) {
            out.push_str(&format!("\n  caused by: {text}"));
            shown = text;
        }
    }
    if std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0") {
        out.push_str(&format!("\n\n{}", e.backtrace()));
    }
    out
}

fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Bench(args) => cli::bench::run(args),
        Command::Exchange(args) => cli::exchange::run(args),
        Command::Journal(JournalCommand::Replay(args)) => cli::journal::replay(args),
        Command::Md(args) => cli::md::run(args),
        Command::Admin(args) => cli::admin::run(args),
        Command::Keygen(args) => cli::keygen::run(args),
        Command::Loadgen(args) => {
            let summary = cli::loadgen::run(args)?;
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
        Command::Gateway(args) => cli::gateway::run(args),
        Command::Verify(cmd) => cli::verify::run(cmd),
        Command::Sim(args) => cli::sim::run(args),
        Command::Replay(args) => cli::replay::run(args),
    }
}
