//! Test harness: a real `peregrine exchange` process on an ephemeral port, and a
//! blocking wire client with timeouts. The process is killed when the handle drops.
#![allow(dead_code)] // each test binary uses a different subset

pub(crate) mod cluster;
pub(crate) mod engine;
pub(crate) mod fix;

#[allow(unused_imports, reason = "each test binary uses a different subset")]
pub(crate) use peregrine_testkit::{eventually, wait_until, with_timeout};

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, OrderId, OrderType, Price, Qty, Side, StpMode,
    TimeInForce, Timestamp,
};
use peregrine_wire::auth::AccountKey;
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::v2::client::{ClientSession, LoginParams, Step};
use peregrine_wire::v2::{Cancel, NewOrder, Outbound};
use peregrine_wire::WireMessage;

/// Read timeout of test clients.
pub(crate) const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// A running exchange process.
pub(crate) struct Exchange {
    child: Child,
    stdout: Option<BufReader<std::process::ChildStdout>>,
    /// Order-entry address.
    pub addr: SocketAddr,
    /// Its config file.
    pub config: PathBuf,
    /// Its stderr log.
    pub log: PathBuf,
    _dir: tempfile::TempDir,
}

/// Extra TOML lines appended to the test config.
pub(crate) fn start(extra: &str) -> Exchange {
    start_with_env(extra, &[])
}

/// [`start`] with extra environment variables for the exchange process.
pub(crate) fn start_with_env(extra: &str, env: &[(&str, &str)]) -> Exchange {
    try_start_with_env(extra, env).unwrap_or_else(|e| panic!("{e}"))
}

/// [`start_with_env`], or the exchange's log when it exits before listening.
#[allow(dead_code)]
pub(crate) fn try_start_with_env(extra: &str, env: &[(&str, &str)]) -> Result<Exchange, String> {
    try_start_with_args(extra, env, &[])
}

/// [`try_start_with_env`] with extra `peregrine exchange` arguments (e.g.
/// `--accept-loss`).
pub(crate) fn try_start_with_args(
    extra: &str,
    env: &[(&str, &str)],
    args: &[&str],
) -> Result<Exchange, String> {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("exchange.toml");
    let recovery = if extra.contains("recovery_listen") {
        ""
    } else {
        "recovery_listen = \"127.0.0.1:0\"\n"
    };
    let toml = format!(
        "listen = \"127.0.0.1:0\"\nwait = \"park\"\n{recovery}{extra}\n{}",
        accounts_toml()
    );
    std::fs::write(&config, toml).unwrap();
    let log = dir.path().join("exchange.log");
    let mut child = Command::new(env!("CARGO_BIN_EXE_peregrine"))
        .arg("exchange")
        .args(args)
        .arg("--config")
        .arg(&config)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    stdout.read_line(&mut line).unwrap();
    let Some(addr) = line.trim().strip_prefix("listening on ") else {
        let _ = child.wait();
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        return Err(format!(
            "unexpected first line {line:?}; exchange log:\n{text}"
        ));
    };
    let addr = addr.parse().unwrap();
    Ok(Exchange {
        child,
        stdout: Some(stdout),
        addr,
        config,
        log,
        _dir: dir,
    })
}

/// The `[[accounts]]` entries every test exchange has: accounts 1 to 4.
pub(crate) fn accounts_toml() -> String {
    (1..=4).map(|i| account_toml(i, false)).collect()
}

/// Account `id`'s key in the tests (deterministic: `[id; 32]`).
pub(crate) fn key(id: u32) -> AccountKey {
    AccountKey([id as u8; 32])
}

/// The exchange's `[[accounts]]` entry of account `id` (its stored key hash).
pub(crate) fn account_toml(id: u32, admin: bool) -> String {
    format!(
        "[[accounts]]\nid = {id}\nstored_key = \"{}\"\nadmin = {admin}\n",
        key(id).stored().to_hex()
    )
}

/// Writes a key file (`peregrine keygen`'s format) holding the keys of `ids`.
pub(crate) fn write_key_file(path: &std::path::Path, ids: &[u32]) {
    let text: String = ids
        .iter()
        .map(|&i| format!("[[keys]]\naccount = {i}\nkey = \"{}\"\n", key(i).to_hex()))
        .collect();
    std::fs::write(path, text).unwrap();
}

impl Exchange {
    /// The exchange's log so far.
    pub(crate) fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
    /// The log once it contains `what` (waiting up to 10 s: the log has its own
    /// writer thread, so a line can land a moment after what it reports); the log as it
    /// is if it never does, for the caller's assertion to show.
    pub(crate) fn log_with(&self, what: &str) -> String {
        let _ = eventually(Duration::from_secs(10), || self.log_text().contains(what));
        self.log_text()
    }
    /// Its process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process is still running.
    pub(crate) fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Stops it with SIGTERM; its exit status and the rest of its stdout.
    pub(crate) fn terminate(mut self) -> (std::process::ExitStatus, String) {
        let pid = rustix::process::Pid::from_child(&self.child);
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
        let mut out = String::new();
        if let Some(mut s) = self.stdout.take() {
            s.read_to_string(&mut out).unwrap();
        }
        (self.child.wait().unwrap(), out)
    }
}

impl Drop for Exchange {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A blocking test client.
pub(crate) struct Client {
    /// The socket.
    pub stream: TcpStream,
    rx: Box<RecvBuffer<65536>>,
    /// Session sequence number of the last message the login exchange received (the
    /// challenge, the acceptance, instrument definitions, the replay's markers): the
    /// first message after login carries `login_seq + 1`.
    pub login_seq: u64,
}

impl Client {
    /// Connects (no login).
    pub(crate) fn connect(addr: SocketAddr) -> Client {
        Client::on(TcpStream::connect_timeout(&addr, IO_TIMEOUT).unwrap())
    }

    /// Connects with a receive buffer of `bytes`, set before the connection (so the
    /// window it advertises is the one it has), as a slow or small client would.
    pub(crate) fn connect_with_recv_buffer(addr: SocketAddr, bytes: usize) -> Client {
        use rustix::net::{sockopt, AddressFamily, SocketType};
        let fd = rustix::net::socket(AddressFamily::INET, SocketType::STREAM, None).unwrap();
        sockopt::set_socket_recv_buffer_size(&fd, bytes).unwrap();
        rustix::net::connect(&fd, &addr).unwrap();
        Client::on(TcpStream::from(fd))
    }

    /// A client on a connected stream (no login).
    pub(crate) fn on(stream: TcpStream) -> Client {
        stream.set_nodelay(true).unwrap();
        stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        stream.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
        Client {
            stream,
            rx: Box::new(RecvBuffer::new()),
            login_seq: 0,
        }
    }

    /// Connects and logs in as account `id` with its test key ([`key`]), live (no
    /// replay); panics unless accepted. Returns once the recovery phase is over.
    pub(crate) fn login(addr: SocketAddr, id: u32) -> Client {
        match Client::try_login(addr, id, &key(id)) {
            Ok(c) => c,
            Err(reason) => panic!("login of account {id} refused: reason {reason}"),
        }
    }

    /// Connects and logs in as account `id` proving `key`: the client, or the login
    /// reason code of the refusal.
    pub(crate) fn try_login(addr: SocketAddr, id: u32, key: &AccountKey) -> Result<Client, u16> {
        Client::try_login_on(Client::connect(addr), id, key)
    }

    /// Logs in on connection `c` as account `id` proving `key`, as [`Client::try_login`].
    pub(crate) fn try_login_on(mut c: Client, id: u32, key: &AccountKey) -> Result<Client, u16> {
        let mut session = ClientSession::new(LoginParams::trading(AccountId(id), 0));
        loop {
            let m = c
                .recv()
                .expect("the exchange closed the connection during login");
            c.login_seq = m.session_seq();
            match session.on_message(&m, key).expect("a protocol violation") {
                Step::SendLogin(l) => c.send(&l),
                Step::Rejected { reason, .. } => return Err(reason),
                Step::RecoveryDone => return Ok(c),
                _ => {}
            }
        }
    }

    /// Sends one message.
    pub(crate) fn send<M: WireMessage>(&mut self, m: &M) {
        let mut buf = [0u8; 512];
        let n = m.encode(&mut buf).unwrap();
        self.stream.write_all(&buf[..n]).unwrap();
    }

    /// Sends raw bytes (ignoring errors: the peer may have closed).
    pub(crate) fn send_raw(&mut self, bytes: &[u8]) {
        let _ = self.stream.write_all(bytes);
    }

    /// The next message, or `None` when the exchange closed the connection.
    pub(crate) fn recv(&mut self) -> Option<Outbound> {
        loop {
            if let Some(m) = self.rx.next(Outbound::decode).unwrap() {
                return Some(m);
            }
            match self.stream.read(self.rx.spare()) {
                Ok(0) => return None,
                Ok(n) => self.rx.commit(n),
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return None,
                Err(e) => panic!("read failed (timeout?): {e}"),
            }
        }
    }

    /// The next message that is not a heartbeat.
    pub(crate) fn recv_report(&mut self) -> Outbound {
        loop {
            match self.recv() {
                Some(Outbound::ServerHeartbeat(_)) => continue,
                Some(m) => return m,
                None => panic!("connection closed while waiting for a report"),
            }
        }
    }

    /// Whether the exchange closes the connection (reading until EOF).
    pub(crate) fn closed_by_peer(&mut self) -> bool {
        loop {
            match self.recv() {
                None => return true,
                Some(_) => continue,
            }
        }
    }
}

/// A GTC (or IOC) limit order on instrument 1.
pub(crate) fn order(
    client_id: u64,
    side: Side,
    price: i64,
    qty: i64,
    tif: TimeInForce,
) -> NewOrder {
    NewOrder {
        client_order_id: ClientOrderId(client_id),
        price: Price::from_raw(price),
        qty: Qty::from_raw(qty),
        expire_at: Timestamp(0),
        instrument: InstrumentId(1),
        side,
        order_type: OrderType::Limit,
        tif,
        stp: StpMode::None,
    }
}

/// A cancel on instrument 1.
pub(crate) fn cancel(client_id: u64, order_id: OrderId) -> Cancel {
    Cancel {
        client_order_id: ClientOrderId(client_id),
        order_id,
        instrument: InstrumentId(1),
    }
}

/// A port that was free a moment ago, outside the kernel's ephemeral range.
pub(crate) fn free_port() -> u16 {
    peregrine_testkit::free_port()
}

/// A child process killed when dropped, with its stdout.
pub(crate) struct KillOnDrop {
    child: Child,
    stdout: BufReader<std::process::ChildStdout>,
}

impl KillOnDrop {
    /// Takes a child spawned with piped stdout.
    pub(crate) fn new(mut child: Child) -> Self {
        let stdout = BufReader::new(child.stdout.take().unwrap());
        KillOnDrop { child, stdout }
    }

    /// Reads stdout lines up to and including the first containing `needle`.
    pub(crate) fn read_until(&mut self, needle: &str) -> String {
        let mut text = String::new();
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).unwrap();
            assert!(n > 0, "EOF before {needle:?}: {text}");
            text.push_str(&line);
            if line.contains(needle) {
                return text;
            }
        }
    }

    /// Waits for exit and returns the rest of stdout.
    pub(crate) fn wait_output(mut self) -> String {
        let mut out = String::new();
        self.stdout.read_to_string(&mut out).unwrap();
        let _ = self.child.wait();
        out
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
