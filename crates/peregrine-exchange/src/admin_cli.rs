//! `peregrine admin deposit|withdraw|balance`: a one-shot order-entry client that logs
//! in, sends one admin request and prints the answer.
//!
//! Assets are named by symbol (resolved, with their decimals, from the exchange
//! config) or by numeric id; amounts are decimal text in whole asset units
//! (`--amount 100.00` of a 2-decimal asset is 10000 units on the wire).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};
use peregrine_types::{decimal, AccountId};
use peregrine_wire::admin::{BalanceQuery, Deposit, Withdraw};
use peregrine_wire::session::Login;
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::{Credential, Outbound, WireMessage};

use crate::balances::AdminReason;
use crate::config::Config;

/// `peregrine admin` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct AdminArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: AdminAction,
}

/// An admin action.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum AdminAction {
    /// Credit an account (admin sessions only).
    Deposit(MoveArgs),
    /// Debit an account's available balance (admin sessions only).
    Withdraw(MoveArgs),
    /// Print an account's balance of one asset.
    Balance(QueryArgs),
}

/// Connection and target, shared by every action.
#[derive(Debug, Clone, clap::Args)]
pub struct Target {
    /// The exchange config: asset symbols and decimals, and the default address.
    #[arg(long, default_value = "exchange.toml")]
    pub config: PathBuf,
    /// Order-entry address; default: `listen` of the config.
    #[arg(long)]
    pub addr: Option<SocketAddr>,
    /// The account to log in as.
    #[arg(long)]
    pub account: u32,
    /// Its password; default: the config's password for that account.
    #[arg(long)]
    pub password: Option<String>,
    /// The account the request is about; default: the logged-in account.
    #[arg(long)]
    pub for_account: Option<u32>,
    /// Asset symbol (e.g. USD) or numeric id.
    #[arg(long)]
    pub asset: String,
}

/// `deposit` / `withdraw` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct MoveArgs {
    /// Connection and target.
    #[command(flatten)]
    pub target: Target,
    /// Amount in whole asset units, decimal text (e.g. 100.00).
    #[arg(long)]
    pub amount: String,
}

/// `balance` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct QueryArgs {
    /// Connection and target.
    #[command(flatten)]
    pub target: Target,
}

/// What the exchange answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdminAnswer {
    /// Available balance, smallest units.
    pub available: i64,
    /// Reserved balance, smallest units.
    pub reserved: i64,
}

const TIMEOUT: Duration = Duration::from_secs(5);

/// Runs the subcommand: prints `account A asset S available X reserved Y` (decimal
/// text) or fails with the reject reason.
pub fn run(args: AdminArgs) -> anyhow::Result<AdminAnswer> {
    let (target, amount, kind) = match &args.action {
        AdminAction::Deposit(m) => (&m.target, Some(m.amount.as_str()), "deposit"),
        AdminAction::Withdraw(m) => (&m.target, Some(m.amount.as_str()), "withdraw"),
        AdminAction::Balance(q) => (&q.target, None, "balance"),
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
    let about = AccountId(target.for_account.unwrap_or(target.account));
    let password = match &target.password {
        Some(p) => p.clone(),
        None => config
            .password_of(account)
            .context("no --password and the account is not in the config")?
            .to_string(),
    };
    let addr = target.addr.unwrap_or(config.listen);
    let mut conn = Conn::login(addr, account, &password)?;
    let request_id = 1;
    match (&args.action, units) {
        (AdminAction::Deposit(_), Some(amount)) => conn.send(&Deposit {
            request_id,
            amount,
            account: about,
            asset,
        })?,
        (AdminAction::Withdraw(_), Some(amount)) => conn.send(&Withdraw {
            request_id,
            amount,
            account: about,
            asset,
        })?,
        _ => conn.send(&BalanceQuery {
            request_id,
            account: about,
            asset,
        })?,
    }
    loop {
        match conn.recv()? {
            Outbound::Balance(b) if b.request_id == request_id => {
                println!(
                    "{kind} ok: account {} asset {symbol} available {} reserved {} (engine_seq {})",
                    b.account,
                    decimal::format_scaled(b.available, decimals),
                    decimal::format_scaled(b.reserved, decimals),
                    b.engine_seq
                );
                return Ok(AdminAnswer {
                    available: b.available,
                    reserved: b.reserved,
                });
            }
            Outbound::AdminRejected(r) if r.request_id == request_id => {
                let reason = AdminReason::from_code(r.reason.0)
                    .map_or("unknown", AdminReason::as_str)
                    .to_string();
                bail!("{kind} rejected: {reason} (code {})", r.reason.0);
            }
            _ => continue, // heartbeats, reports of the account's orders
        }
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

/// A blocking session.
struct Conn {
    stream: TcpStream,
    rx: Box<RecvBuffer<65536>>,
}

impl Conn {
    fn login(addr: SocketAddr, account: AccountId, password: &str) -> anyhow::Result<Conn> {
        let stream = TcpStream::connect_timeout(&addr, TIMEOUT)
            .with_context(|| format!("connecting to {addr}"))?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(TIMEOUT))?;
        stream.set_write_timeout(Some(TIMEOUT))?;
        let mut c = Conn {
            stream,
            rx: Box::new(RecvBuffer::new()),
        };
        let credential =
            Credential::from_text(password).context("the password must be 1..=16 bytes")?;
        c.send(&Login {
            account,
            heartbeat_interval_ms: 1000,
            credential,
        })?;
        match c.recv()? {
            Outbound::LoginAccepted(_) => Ok(c),
            Outbound::LoginRejected(r) => bail!("login rejected (reason {})", r.reason.0),
            other => bail!("unexpected answer to Login: {other:?}"),
        }
    }

    fn send<M: WireMessage>(&mut self, m: &M) -> anyhow::Result<()> {
        let mut buf = [0u8; peregrine_wire::MAX_MESSAGE_SIZE];
        let n = m.encode(&mut buf)?;
        self.stream.write_all(&buf[..n]).context("sending")?;
        Ok(())
    }

    fn recv(&mut self) -> anyhow::Result<Outbound> {
        loop {
            if let Some(m) = self.rx.next(Outbound::decode)? {
                return Ok(m);
            }
            let n = self
                .stream
                .read(self.rx.spare())
                .context("reading the answer")?;
            if n == 0 {
                bail!("the exchange closed the connection");
            }
            self.rx.commit(n);
        }
    }
}
