//! The FIX tests' processes: an exchange (protocol v2, accounts 1 and 2 with keys
//! made by `peregrine keygen`), the FIX gateway in front of it, and a native v2
//! client of account 2 as the counterparty.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use peregrine_client::keys::KeyFile;
use peregrine_client::order_entry::Connection;
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, OrderType, Price, Qty, Side, StpMode, TimeInForce,
    Timestamp,
};
use peregrine_wire::orders::NewOrder;
use peregrine_wire::v2::client::LoginParams;
use peregrine_wire::v2::{Outbound, RequestRef};

/// A process killed when dropped.
pub(crate) struct Proc {
    /// The process.
    pub child: Child,
    /// The address it printed.
    pub addr: SocketAddr,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Spawns `peregrine args...` with stderr to `log` and reads the address from the
/// first stdout line after `prefix`.
fn spawn(args: &[&str], config: &Path, log: &Path, prefix: &str) -> Proc {
    let mut child = Command::new(env!("CARGO_BIN_EXE_peregrine"))
        .args(args)
        .arg(config)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .strip_prefix(prefix)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| {
            panic!(
                "unexpected first line {line:?}; log: {}",
                std::fs::read_to_string(log).unwrap_or_default()
            )
        })
        .parse()
        .unwrap();
    Proc { child, addr }
}

/// An exchange with accounts 1 and 2, in `dir`; their keys in `dir/keys.toml`.
pub(crate) fn start_exchange(dir: &Path) -> Proc {
    let keys = dir.join("keys.toml");
    let accounts = dir.join("accounts.toml");
    if !keys.exists() {
        let st = Command::new(env!("CARGO_BIN_EXE_peregrine"))
            .args(["keygen", "--accounts", "1-2", "--keys-out"])
            .arg(&keys)
            .arg("--accounts-out")
            .arg(&accounts)
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success(), "peregrine keygen failed");
    }
    let config = dir.join("exchange.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"127.0.0.1:0\"\nwait = \"park\"\nrecovery_listen = \"127.0.0.1:0\"\n\
             accounts_file = \"{}\"\n[market_data]\nenabled = false\n",
            accounts.display()
        ),
    )
    .unwrap();
    spawn(
        &["exchange", "--config"],
        &config,
        &dir.join("exchange.log"),
        "listening on ",
    )
}

/// Writes the gateway's config for session CLIENT1 (account 1, FIX password
/// `fix-pw`) in front of `exchange` (an address, or a cluster's nodes `"a,b,c"`),
/// its store in `dir/fix-store`.
pub(crate) fn gateway_config(
    dir: &Path,
    exchange: impl std::fmt::Display,
    listen: &str,
) -> PathBuf {
    let config = dir.join("gateway-fix.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"{listen}\"\nexchange = \"{exchange}\"\nstore_dir = \"{}\"\n\
             keys_file = \"{}\"\n\
             [[instruments]]\nsymbol = \"PGN-USD\"\nid = 1\nprice_decimals = 2\nqty_decimals = 0\n\
             [[sessions]]\ncomp_id = \"CLIENT1\"\npassword = \"fix-pw\"\naccount = 1\n",
            dir.join("fix-store").display(),
            dir.join("keys.toml").display()
        ),
    )
    .unwrap();
    config
}

/// Starts a gateway (see [`gateway_config`]); its log is `dir/gateway.log` (a
/// restarted gateway may log elsewhere: [`start_gateway_at`]).
pub(crate) fn start_gateway(dir: &Path, exchange: SocketAddr) -> Proc {
    start_gateway_at(dir, exchange, "127.0.0.1:0", "gateway.log")
}

/// [`start_gateway`] listening on `listen`, its log in `dir/log`.
pub(crate) fn start_gateway_at(
    dir: &Path,
    exchange: impl std::fmt::Display,
    listen: &str,
    log: &str,
) -> Proc {
    let config = gateway_config(dir, exchange, listen);
    spawn(
        &["gateway", "fix", "--config"],
        &config,
        &dir.join(log),
        "fix gateway listening on ",
    )
}

/// Starts a gateway on the config file `config` (written by the caller), its log
/// `dir/log`.
pub(crate) fn start_gateway_from(config: &Path, dir: &Path, log: &str) -> Proc {
    spawn(
        &["gateway", "fix", "--config"],
        config,
        &dir.join(log),
        "fix gateway listening on ",
    )
}

/// A native v2 session of account 2 (keys in `dir/keys.toml`), logged in live.
pub(crate) struct Counterparty {
    conn: Connection,
}

impl Counterparty {
    /// Logs in.
    pub(crate) fn login(dir: &Path, exchange: SocketAddr) -> Counterparty {
        let key = KeyFile::key_of(&dir.join("keys.toml"), AccountId(2)).unwrap();
        let (mut conn, _) = Connection::connect(
            exchange,
            LoginParams::trading(AccountId(2), 0),
            key,
            Duration::from_secs(10),
        )
        .unwrap();
        conn.recover(|_| {}).unwrap();
        Counterparty { conn }
    }

    /// Sends a limit order of `qty` lots at `price` units and returns the exchange's
    /// answer to it (Accepted or Rejected).
    pub(crate) fn order(
        &mut self,
        id: u64,
        side: Side,
        price: i64,
        qty: i64,
        tif: TimeInForce,
    ) -> Outbound {
        let n = NewOrder {
            client_order_id: ClientOrderId(id),
            price: Price::from_raw(price),
            qty: Qty::from_raw(qty),
            expire_at: Timestamp(0),
            instrument: InstrumentId(1),
            side,
            order_type: OrderType::Limit,
            tif,
            stp: StpMode::None,
        };
        self.conn
            .request(&n, RequestRef::NewOrder(n.client_order_id), |_| {})
            .unwrap()
    }
}

/// Whether the gateway's log (`dir/log`) contains `text`.
pub(crate) fn log_has(dir: &Path, log: &str, text: &str) -> bool {
    std::fs::read_to_string(dir.join(log))
        .unwrap_or_default()
        .contains(text)
}

/// The QuickFIX client the gateway tests trade with: CLIENT1 → PEREGRINE (account 1),
/// sending the gateway's password in its Logon.
pub(crate) fn client_recorder() -> peregrine_fix_interop::qf::Recorder {
    peregrine_fix_interop::qf::Recorder {
        password: Some("fix-pw".into()),
        ..Default::default()
    }
}

/// That client's QuickFIX settings file, connecting to the gateway at `port`.
pub(crate) fn client_settings(dir: &Path, port: u16) -> PathBuf {
    peregrine_fix_interop::qf::settings(dir, "initiator", "CLIENT1", "PEREGRINE", port, "")
}

/// That client's session id (for `quickfix::send_to_target`).
pub(crate) fn client_session() -> quickfix::SessionId {
    quickfix::SessionId::try_new("FIX.4.4", "CLIENT1", "PEREGRINE", "").unwrap()
}
