//! Test harness for the HTTP gateway: a real `peregrine exchange` and a real
//! `peregrine gateway http` process, a tiny blocking HTTP/1.1 client with timeouts,
//! request signing, and a WebSocket client.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Per-test API keys: (account, key, secret).
pub(crate) const KEYS: [(u32, &str, &str); 3] = [
    (1, "test-key-one", "test-secret-one"),
    (2, "test-key-two", "test-secret-two"),
    (3, "test-key-three", "test-secret-three"),
];

/// Options of a stack.
#[derive(Debug, Clone, Default)]
pub(crate) struct Opts {
    /// Extra TOML for the gateway config (sections appended).
    pub gateway_extra: String,
    /// History URL (default: SQLite in the test's directory).
    pub history: Option<String>,
    /// Extra keys of the exchange's `[market_data]` section.
    pub market_data: String,
    /// Extra TOML after the instrument (its `[instruments.fees]`, say).
    pub instrument_extra: String,
}

/// A child process killed on drop.
pub(crate) struct Proc {
    pub child: Child,
    pub log: PathBuf,
}

impl Proc {
    pub(crate) fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// Exchange + gateway.
pub(crate) struct Stack {
    pub dir: tempfile::TempDir,
    pub exchange: Proc,
    pub exchange_addr: SocketAddr,
    pub gateway: Option<Proc>,
    pub http: SocketAddr,
    pub gateway_toml: PathBuf,
    /// The accounts' key file (`peregrine keygen`).
    pub keys: PathBuf,
}

pub(crate) fn free_udp() -> u16 {
    peregrine_testkit::free_port()
}

fn free_tcp() -> u16 {
    peregrine_testkit::free_port()
}

pub(crate) fn first_line(child: &mut Child, prefix: &str) -> String {
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    // Keep draining stdout so the child never blocks on a full pipe.
    std::thread::spawn(move || {
        let mut sink = String::new();
        while out.read_line(&mut sink).map(|n| n > 0).unwrap_or(false) {
            sink.clear();
        }
    });
    line.trim()
        .strip_prefix(prefix)
        .unwrap_or_else(|| panic!("expected {prefix:?}, got {line:?}"))
        .to_owned()
}

pub(crate) fn spawn(args: &[&str], dir: &Path, name: &str) -> (Child, PathBuf) {
    let log = dir.join(format!("{name}.log"));
    let child = Command::new(env!("CARGO_BIN_EXE_peregrine"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    (child, log)
}

impl Stack {
    /// Starts an exchange (balances off, one instrument PGN-USD with tick 5) and a
    /// gateway for accounts 1..=3.
    pub(crate) fn start(opts: Opts) -> Stack {
        let dir = tempfile::tempdir().unwrap();
        let exchange_toml = dir.path().join("exchange.toml");
        // Protocol v2: the accounts' keys (the gateway's) and their stored hashes
        // (the exchange's), from `peregrine keygen`.
        let keys_toml = dir.path().join("keys.toml");
        let accounts_toml = dir.path().join("accounts.toml");
        let out = Command::new(env!("CARGO_BIN_EXE_peregrine"))
            .args(["keygen", "--accounts", "1-4", "--keys-out"])
            .arg(&keys_toml)
            .arg("--accounts-out")
            .arg(&accounts_toml)
            .output()
            .unwrap();
        assert!(out.status.success(), "keygen: {out:?}");
        std::fs::write(
            &exchange_toml,
            format!(
                "listen = \"127.0.0.1:0\"\nrecovery_listen = \"127.0.0.1:{}\"\nwait = \"park\"\naccounts_file = \"{}\"\n\
                 [market_data]\ntarget = \"127.0.0.1:{}\"\n{}\n\
                 [[instruments]]\nid = 1\nsymbol = \"PGN-USD\"\nprice_decimals = 2\nqty_decimals = 0\n\
                 tick_size = 5\nlot_size = 1\nmin_qty = 1\nmax_qty = 100000\nreference_price = 10000\n\
                 band = 5000\nstatus = \"active\"\n{}\n",
                free_tcp(),
                accounts_toml.display(),
                free_udp(),
                opts.market_data,
                opts.instrument_extra
            ),
        )
        .unwrap();
        let (mut ex, ex_log) = spawn(
            &["exchange", "--config", exchange_toml.to_str().unwrap()],
            dir.path(),
            "exchange",
        );
        let exchange_addr: SocketAddr = first_line(&mut ex, "listening on ").parse().unwrap();
        let history = opts
            .history
            .clone()
            .unwrap_or_else(|| format!("sqlite://{}/history.db", dir.path().display()));
        let keys = api_keys_toml();
        let gateway_toml = dir.path().join("gateway.toml");
        std::fs::write(
            &gateway_toml,
            format!(
                "listen = \"127.0.0.1:0\"\n[exchange]\nconfig = \"{}\"\norder_entry = \"{exchange_addr}\"\n\
                 keys = \"{}\"\n[history]\nurl = \"{history}\"\n{}\n{keys}",
                exchange_toml.display(),
                keys_toml.display(),
                opts.gateway_extra
            ),
        )
        .unwrap();
        let mut s = Stack {
            dir,
            exchange: Proc {
                child: ex,
                log: ex_log,
            },
            exchange_addr,
            gateway: None,
            http: "127.0.0.1:1".parse().unwrap(),
            gateway_toml,
            keys: keys_toml,
        };
        s.start_gateway();
        s
    }

    /// (Re)starts the gateway and waits until its sessions are up and its books
    /// synced.
    pub(crate) fn start_gateway(&mut self) {
        let (mut gw, log) = spawn(
            &[
                "gateway",
                "http",
                "--config",
                self.gateway_toml.to_str().unwrap(),
            ],
            self.dir.path(),
            "gateway",
        );
        let url = first_line(&mut gw, "http gateway on http://");
        self.http = url.parse().unwrap();
        self.gateway = Some(Proc { child: gw, log });
        self.wait_ready();
    }

    /// Kills the gateway with SIGKILL.
    pub(crate) fn kill_gateway(&mut self) {
        if let Some(mut g) = self.gateway.take() {
            g.kill9();
        }
    }

    pub(crate) fn status(&self) -> serde_json::Value {
        let r = get(self.http, "/peregrine/status");
        assert_eq!(r.status, 200, "{}", r.body);
        r.json()
    }

    pub(crate) fn wait_ready(&self) {
        let ok = wait_for(Duration::from_secs(30), || {
            let s = match try_request(self.http, "GET", "/peregrine/status", &[], "") {
                Ok(r) if r.status == 200 => r.json(),
                _ => return false,
            };
            s["sessions"]
                .as_array()
                .unwrap()
                .iter()
                .all(|x| x["up"] == true)
                && s["feed"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|x| x["synced"] == true)
        });
        assert!(ok, "gateway not ready:\n{}", self.gateway_log());
    }

    pub(crate) fn gateway_log(&self) -> String {
        self.gateway
            .as_ref()
            .map(|g| std::fs::read_to_string(&g.log).unwrap_or_default())
            .unwrap_or_default()
    }
}

/// Polls `f` every 10 ms until true or `max` passes.
pub(crate) fn wait_for(max: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + max;
    loop {
        if f() {
            return true;
        }
        if Instant::now() > end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// An HTTP answer.
#[derive(Debug)]
pub(crate) struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Resp {
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    /// The Binance error code.
    pub(crate) fn code(&self) -> i64 {
        self.json()["code"].as_i64().unwrap_or(0)
    }
}

/// One request on a fresh connection (`Connection: close`).
pub(crate) fn try_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<Resp> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    s.set_read_timeout(Some(Duration::from_secs(15)))?;
    s.set_write_timeout(Some(Duration::from_secs(15)))?;
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if !body.is_empty() || method != "GET" {
        req.push_str("Content-Type: application/x-www-form-urlencoded\r\n");
        req.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes())?;
    let _ = s.write_all(body.as_bytes());
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    parse_response(&raw)
}

pub(crate) fn parse_response(raw: &[u8]) -> std::io::Result<Resp> {
    let text = String::from_utf8_lossy(raw).to_string();
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| std::io::Error::other(format!("no head in {text:?}")))?;
    let mut lines = head.lines();
    let status: u16 = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other("bad status line"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Ok(Resp {
        status,
        headers,
        body,
    })
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = &rest[n..];
        s = s.strip_prefix("\r\n").unwrap_or(s);
    }
    out
}

pub(crate) fn get(addr: SocketAddr, path: &str) -> Resp {
    try_request(addr, "GET", path, &[], "").unwrap()
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// A signed request for key `k` (index into [`KEYS`]): `params` plus timestamp and
/// signature in the query string.
pub(crate) fn signed(addr: SocketAddr, method: &str, path: &str, k: usize, params: &str) -> Resp {
    signed_with(addr, method, path, KEYS[k].1, KEYS[k].2, params, now_ms())
}

pub(crate) fn signed_with(
    addr: SocketAddr,
    method: &str,
    path: &str,
    key: &str,
    secret: &str,
    params: &str,
    ts: u64,
) -> Resp {
    let mut q = params.to_owned();
    if !q.is_empty() {
        q.push('&');
    }
    q.push_str(&format!("timestamp={ts}"));
    let sig = peregrine_http::dialect::auth::sign_hex(secret.as_bytes(), q.as_bytes());
    try_request(
        addr,
        method,
        &format!("{path}?{q}&signature={sig}"),
        &[("X-MBX-APIKEY", key)],
        "",
    )
    .unwrap()
}

/// A WebSocket client on `path` (read timeout 10 s).
pub(crate) type Ws = tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>;

pub(crate) fn ws(addr: SocketAddr, path: &str) -> Ws {
    let (ws, _) = tungstenite::connect(format!("ws://{addr}{path}")).unwrap();
    if let tungstenite::stream::MaybeTlsStream::Plain(s) = ws.get_ref() {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    }
    ws
}

/// The next text message (skipping pings), or `None` when the server closed.
pub(crate) fn ws_next(ws: &mut Ws) -> Option<serde_json::Value> {
    loop {
        match ws.read() {
            Ok(tungstenite::Message::Text(t)) => {
                return Some(serde_json::from_str(t.as_str()).unwrap())
            }
            Ok(tungstenite::Message::Close(_)) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

/// A native protocol v2 session of `account` (its key from the stack's key file),
/// logged in live (no replay).
pub(crate) struct Native {
    c: peregrine_client::order_entry::Connection,
}

impl Native {
    pub(crate) fn login(stack: &Stack, account: u32) -> Native {
        let key = peregrine_client::keys::KeyFile::key_of(
            &stack.keys,
            peregrine_types::AccountId(account),
        )
        .unwrap();
        let params = peregrine_wire::v2::client::LoginParams::trading(
            peregrine_types::AccountId(account),
            0,
        );
        let (mut c, _) = peregrine_client::order_entry::Connection::connect(
            stack.exchange_addr,
            params,
            key,
            Duration::from_secs(10),
        )
        .unwrap();
        c.recover(|_| {}).unwrap();
        Native { c }
    }

    pub(crate) fn send<M: peregrine_wire::WireMessage>(&mut self, m: &M) {
        self.c.send(m).unwrap();
    }

    /// The next report of the account's stream (heartbeats and the like skipped).
    pub(crate) fn recv_report(&mut self) -> peregrine_wire::v2::Outbound {
        loop {
            let (_, m) = self.c.read_next().unwrap();
            if m.is_report_type() {
                return m;
            }
        }
    }
}

/// The `[[api_keys]]` entries of [`KEYS`], as a gateway config takes them.
pub(crate) fn api_keys_toml() -> String {
    KEYS.iter()
        .map(|(a, k, s)| {
            format!("[[api_keys]]\naccount = {a}\napi_key = \"{k}\"\nsecret_key = \"{s}\"\n")
        })
        .collect()
}
