//! `peregrine`: one binary for every part of the stack. Its cargo features choose the
//! parts (all by default): `engine` (`engine`, `strategy`), `gateways` (`gateway fix`,
//! `gateway http`), `up` (both, and the live view), `sim`, `replay`. A venue-only
//! build, `--no-default-features`, keeps the exchange and its tools (`exchange`,
//! `loadgen`, `md`, `order`, `admin`, `keygen`, `journal`, `verify`, `bench`) and links none of
//! tokio, axum, sqlx, ratatui or the engine.
#![deny(unsafe_code)]

use clap::{Parser, Subcommand};

mod cli;
#[cfg(feature = "engine")]
mod engine_cmd;
#[cfg(feature = "engine")]
mod strategy_cmd;
#[cfg(feature = "up")]
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
    /// Place and cancel orders of every type (limit, market, stops, trailing stops,
    /// icebergs, OCO/OTO/OTOCO lists) and print the reports (docs/orders.md).
    Order(Box<cli::order::OrderArgs>),
    #[cfg(feature = "engine")]
    /// The order engine: run it, or query / kill / stop a running one.
    Engine(engine_cmd::EngineArgs),
    #[cfg(feature = "engine")]
    /// Run an example strategy against a running engine.
    Strategy(strategy_cmd::StrategyArgs),
    #[cfg(feature = "gateways")]
    /// Gateways to the exchange for other clients: `gateway fix` (FIX 4.4 acceptor),
    /// `gateway http` (Binance-style REST, WebSocket streams, history store, web UI).
    Gateway(cli::gateway::GatewayArgs),
    #[cfg(feature = "up")]
    /// Run the whole stack (exchange, engine, strategies) until Ctrl-C; print a summary.
    Up(up::UpArgs),
    #[cfg(feature = "replay")]
    /// Replay recorded market data (ITCH 5.0, LOBSTER, Binance, Tardis) through the
    /// exchange core in simulated time, with a strategy attached as live.
    Replay(cli::replay::ReplayArgs),
    /// Check commitments against the journal, or prove a trade's inclusion.
    #[command(subcommand)]
    Verify(cli::verify::VerifyCommand),
    #[cfg(feature = "sim")]
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
    cli::parent::die_with_parent();
    let cli = Cli::parse();
    if std::env::var_os("PEREGRINE_PARSE_ONLY").is_some() {
        // Checks a command line without running it (the documented-commands test:
        // crates/peregrine/tests/cli/documented.rs).
        println!("{:?}", cli.command);
        return std::process::ExitCode::SUCCESS;
    }
    // The simulator captures the production code's logs into its own trace.
    #[cfg(feature = "sim")]
    let own_logger = !matches!(cli.command, Command::Sim(_));
    #[cfg(not(feature = "sim"))]
    let own_logger = true;
    if own_logger {
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
        Command::Order(args) => cli::order::run(*args),
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
        #[cfg(feature = "engine")]
        Command::Engine(args) => engine_cmd::run(args),
        #[cfg(feature = "engine")]
        Command::Strategy(args) => strategy_cmd::run(args),
        #[cfg(feature = "up")]
        Command::Up(args) => up::run(args),
        #[cfg(feature = "gateways")]
        Command::Gateway(args) => cli::gateway::run(args),
        Command::Verify(cmd) => cli::verify::run(cmd),
        #[cfg(feature = "sim")]
        Command::Sim(args) => cli::sim::run(args),
        #[cfg(feature = "replay")]
        Command::Replay(args) => cli::replay::run(args),
    }
}
