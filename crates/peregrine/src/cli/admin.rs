//! `peregrine admin deposit|withdraw|balance`: one admin request over an order-entry
//! session (the library: `peregrine_client::admin`). `peregrine admin cluster` talks
//! HTTP to a cluster node's admin endpoint instead (`cluster_admin`).
//!
//! Assets are named by symbol (resolved, with their decimals, from the exchange
//! config) or by numeric id; amounts are decimal text in whole asset units
//! (`--amount 100.00` of a 2-decimal asset is 10000 units on the wire).

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{bail, Context};
use peregrine_client::admin::{self, AdminAction, AdminRequest};
use peregrine_exchange::Config;
use peregrine_types::{decimal, AccountId};

/// `peregrine admin` arguments.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct AdminArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: AdminCommand,
}

/// An admin action.
#[derive(Debug, Clone, clap::Subcommand)]
pub(crate) enum AdminCommand {
    /// Credit an account (admin sessions only).
    Deposit(MoveArgs),
    /// Debit an account's available balance (admin sessions only).
    Withdraw(MoveArgs),
    /// Print an account's balance of one asset.
    Balance(QueryArgs),
    /// The nodes of `peregrine exchange --cluster` over their admin endpoint
    /// (`[cluster] admin_listen`): status, leadership transfer, membership changes.
    Cluster(super::cluster_admin::ClusterArgs),
}

/// Connection and target, shared by every action.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct Target {
    /// The exchange config: asset symbols and decimals, and the default address.
    #[arg(long, default_value = "exchange.toml")]
    pub config: PathBuf,
    /// Order-entry address; default: `listen` of the config (and, for a cluster,
    /// its peers' `client` addresses). For a cluster, the nodes' addresses
    /// separated by commas: the request goes to whichever leads.
    #[arg(long, value_delimiter = ',')]
    pub addr: Vec<SocketAddr>,
    /// The account to log in as.
    #[arg(long)]
    pub account: u32,
    /// The key file holding that account's key (`peregrine keygen --keys-out`).
    #[arg(long, default_value = "data/keys.toml")]
    pub keys: PathBuf,
    /// The account the request is about; default: the logged-in account.
    #[arg(long)]
    pub for_account: Option<u32>,
    /// Asset symbol (e.g. USD) or numeric id.
    #[arg(long)]
    pub asset: String,
}

/// `deposit` / `withdraw` arguments.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct MoveArgs {
    /// Connection and target.
    #[command(flatten)]
    pub target: Target,
    /// Amount in whole asset units, decimal text (e.g. 100.00).
    #[arg(long)]
    pub amount: String,
}

/// `balance` arguments.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct QueryArgs {
    /// Connection and target.
    #[command(flatten)]
    pub target: Target,
}

/// Runs the subcommand: prints `KIND ok: account A asset S available X reserved Y`
/// (decimal text) or fails with the reject reason.
pub(crate) fn run(args: AdminArgs) -> anyhow::Result<()> {
    let (target, amount, kind) = match &args.action {
        AdminCommand::Deposit(m) => (&m.target, Some(m.amount.as_str()), "deposit"),
        AdminCommand::Withdraw(m) => (&m.target, Some(m.amount.as_str()), "withdraw"),
        AdminCommand::Balance(q) => (&q.target, None, "balance"),
        AdminCommand::Cluster(c) => return super::cluster_admin::run(c),
    };
    let config = Config::load(&target.config)?;
    let (asset, decimals, symbol) = resolve_asset(&config, &target.asset)?;
    let units = match amount {
        Some(text) => Some(
            decimal::parse_scaled(text, decimals)
                .with_context(|| format!("--amount {text:?} with {decimals} decimals"))?,
        ),
        None => None,
    };
    let account = AccountId(target.account);
    let key = peregrine_client::keys::KeyFile::key_of(&target.keys, account)?;
    let action = match (&args.action, units) {
        (AdminCommand::Deposit(_), Some(a)) => AdminAction::Deposit(a),
        (AdminCommand::Withdraw(_), Some(a)) => AdminAction::Withdraw(a),
        _ => AdminAction::Balance,
    };
    let req = AdminRequest {
        addrs: if target.addr.is_empty() {
            config.order_entry_addresses()
        } else {
            target.addr.clone()
        },
        account,
        key,
        about: AccountId(target.for_account.unwrap_or(target.account)),
        asset,
        action,
    };
    match admin::request(&req)? {
        Ok(b) => {
            println!(
                "{kind} ok: account {} asset {symbol} available {} reserved {} (engine_seq {})",
                b.account,
                decimal::format_scaled(b.available, decimals),
                decimal::format_scaled(b.held, decimals),
                b.engine_seq
            );
            Ok(())
        }
        Err(r) => bail!("{kind} {r}"),
    }
}

/// The asset's id, decimals and display name from a symbol or a numeric id.
fn resolve_asset(config: &Config, asset: &str) -> anyhow::Result<(u32, u32, String)> {
    if let Some(a) = config.assets.iter().find(|a| a.symbol == asset) {
        return Ok((a.id, a.decimals, a.symbol.clone()));
    }
    let Ok(id) = asset.parse::<u32>() else {
        bail!("unknown asset {asset:?}: not a symbol of the config's [[assets]] nor an id");
    };
    Ok(match config.assets.iter().find(|a| a.id == id) {
        Some(a) => (a.id, a.decimals, a.symbol.clone()),
        None => (id, 0, asset.to_string()),
    })
}
