//! The exchange and gateway processes a bench run measures.

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::rest::KEY;
use super::BenchError;

/// Both processes; killed on drop.
#[derive(Debug)]
pub struct Stack {
    /// Exchange order entry.
    pub exchange: SocketAddr,
    /// Gateway HTTP.
    pub http: SocketAddr,
    /// Feed port the gateway binds.
    pub feed: SocketAddr,
    /// The accounts' key file.
    pub keys: std::path::PathBuf,
    children: Vec<Child>,
    dir: tempdir::Dir,
}

mod tempdir {
    /// A directory removed on drop.
    #[derive(Debug)]
    pub(super) struct Dir(pub std::path::PathBuf);
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn first_line(child: &mut Child, prefix: &str) -> Result<String, BenchError> {
    let mut out = BufReader::new(
        child
            .stdout
            .take()
            .ok_or_else(|| BenchError::Other("no stdout".into()))?,
    );
    let mut line = String::new();
    out.read_line(&mut line)?;
    std::thread::spawn(move || {
        let mut sink = String::new();
        while out.read_line(&mut sink).map(|n| n > 0).unwrap_or(false) {
            sink.clear();
        }
    });
    line.trim()
        .strip_prefix(prefix)
        .map(str::to_owned)
        .ok_or_else(|| BenchError::Other(format!("expected {prefix:?}, got {line:?}")))
}

fn spawn(exe: &Path, args: &[&str], dir: &Path, name: &str) -> Result<Child, BenchError> {
    Ok(Command::new(exe)
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.join(format!("{name}.log")))?)
        .spawn()?)
}

impl Stack {
    /// Starts an exchange (continuous matching, no journal, `wait = "park"`) and a
    /// gateway with keys for accounts 1 and 2. `recovery`: the exchange serves
    /// snapshots (the fan-out test plays the feed itself and runs without).
    pub fn start(exe: &Path, recovery: bool, threads: usize) -> Result<Stack, BenchError> {
        let dir = std::env::temp_dir().join(format!(
            "peregrine-gateway-bench-{}-{}",
            std::process::id(),
            peregrine_http::market::feed::now_ms()
        ));
        std::fs::create_dir_all(&dir)?;
        let dir = tempdir::Dir(dir);
        let feed_port = UdpSocket::bind("127.0.0.1:0")?.local_addr()?.port();
        let rec_port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let exchange_toml = dir.0.join("exchange.toml");
        let keys = dir.0.join("keys.toml");
        let accounts = dir.0.join("accounts.toml");
        let made = Command::new(exe)
            .args(["keygen", "--accounts", "1-3", "--keys-out"])
            .arg(&keys)
            .arg("--accounts-out")
            .arg(&accounts)
            .output()?;
        if !made.status.success() {
            return Err(BenchError::Other(format!(
                "peregrine keygen: {}",
                String::from_utf8_lossy(&made.stderr)
            )));
        }
        std::fs::write(
            &exchange_toml,
            format!(
                "listen = \"127.0.0.1:0\"\nrecovery_listen = \"127.0.0.1:{rec_port}\"\nrecovery_enabled = {recovery}\n\
                 wait = \"park\"\naccounts_file = \"{}\"\n[market_data]\ntarget = \"127.0.0.1:{feed_port}\"\n\
                 [[instruments]]\nid = 1\nsymbol = \"PGN-USD\"\nprice_decimals = 2\nqty_decimals = 0\ntick_size = 1\n\
                 lot_size = 1\nmin_qty = 1\nmax_qty = 1000000000\nreference_price = 10000\nband = 5000\nstatus = \"active\"\n",
                accounts.display()
            ),
        )?;
        let mut ex = spawn(
            exe,
            &["exchange", "--config", exchange_toml.to_str().unwrap_or("")],
            &dir.0,
            "exchange",
        )?;
        let exchange: SocketAddr = first_line(&mut ex, "listening on ")?
            .parse()
            .map_err(|e| BenchError::Other(format!("{e}")))?;
        let gateway_toml = dir.0.join("gateway.toml");
        std::fs::write(
            &gateway_toml,
            format!(
                "listen = \"127.0.0.1:0\"\n[exchange]\nconfig = \"{}\"\norder_entry = \"{exchange}\"\nkeys = \"{}\"\n\
                 [history]\nurl = \"sqlite://{}/history.db\"\n\
                 [limits]\nrequest_weight_per_minute = 100000000\norders_per_10s = 100000000\norders_per_day = 1000000000\n\
                 max_connections_per_ip = 4096\n[ws]\nlag_limit = 65536\n\
                 [[api_keys]]\naccount = 1\napi_key = \"{}\"\nsecret_key = \"{}\"\n",
                exchange_toml.display(),
                keys.display(),
                dir.0.display(),
                KEY.0,
                KEY.1
            ),
        )?;
        let mut gw = spawn(
            exe,
            &[
                "gateway",
                "http",
                "--config",
                gateway_toml.to_str().unwrap_or(""),
                "--threads",
                &threads.to_string(),
            ],
            &dir.0,
            "gateway",
        )?;
        let http: SocketAddr = first_line(&mut gw, "http gateway on http://")?
            .parse()
            .map_err(|e| BenchError::Other(format!("{e}")))?;
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let ok = super::rest::get(http, "/peregrine/status")
                .map(|b| b.contains("\"up\":true") && b.contains("\"synced\":true"))
                .unwrap_or(false);
            if ok {
                break;
            }
            if Instant::now() > deadline {
                return Err(BenchError::Other(format!(
                    "gateway not ready; logs in {}",
                    dir.0.display()
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(Stack {
            exchange,
            http,
            feed: SocketAddr::from(([127, 0, 0, 1], feed_port)),
            keys,
            children: vec![ex, gw],
            dir,
        })
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = &self.dir;
    }
}
