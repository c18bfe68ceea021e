//! The gateway's I/O shell: one thread, non-blocking sockets. FIX connections that
//! have not logged on wait in a bounded pool with a timeout; a Logon names its
//! session (`identify_logon`), which is attached unless already connected (a second
//! connection for a logged-on session is closed; the first is unaffected).
//!
//! When an iteration finds nothing to do the loop idles by the configured
//! [`peregrine_queue::WaitStrategy`] (`wait`): spin, yield, and under `park` block
//! in epoll on every socket it owns ([`crate::poller`]) until input arrives, output
//! backed up in a socket can move, or the nearest timer is due.

use peregrine_types::wall_ns;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use peregrine_client::keys::{KeyError, KeyFile};
use peregrine_fix::codec::FrameLimits;
use peregrine_fix::session::{identify_logon, Event, Received, Role, Session, SessionConfig};
use peregrine_fix::store::{Durability, FileStore, MessageStore};
use peregrine_types::AccountId;

use crate::bridge::Bridge;
use crate::config::GatewayConfig;
use crate::native::NativeConn;
use crate::poller::{Poller, Watch, EVENTS};

/// The longest a parked loop blocks. The FIX session timers (heartbeats, TestRequest,
/// the Logon and Logout timeouts) and the pending connections' logon timeout count
/// whole seconds, and a TestRequest goes out only after a HeartBtInt plus 20% of
/// silence: waking at least every 100 ms keeps them within a tenth of their least
/// setting (1 s). The native sessions' timers are waited for exactly
/// ([`NativeConn::due_in`]). It also bounds how long `stop` waits.
const MAX_PARK: Duration = Duration::from_millis(100);

/// How often a busy loop polls the listener. A non-blocking `accept(2)` with nothing
/// waiting is not cheap on Linux (the kernel allocates the new socket's file and inode
/// before it finds the queue empty, then frees them): polled every iteration it took
/// two thirds of the gateway's CPU under `cargo bench -p peregrine --bench
/// fix_gateway` (perf, 10k orders/s) and capped how many orders the loop could move.
/// A connection waits at most this long to be accepted while the gateway is busy;
/// after a park it is accepted at once (the loop polls the listener on every wake).
const ACCEPT_POLL_NS: u64 = 1_000_000;

/// Why the gateway could not run.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// Binding the listener, creating the store directory.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// A session's message store cannot be opened.
    #[error(transparent)]
    Store(#[from] peregrine_fix::store::StoreError),
    /// The key file cannot be read or lacks a session's account.
    #[error(transparent)]
    Keys(#[from] KeyError),
}

/// A FIX connection.
#[derive(Debug)]
struct Link {
    stream: TcpStream,
    rx: Vec<u8>,
    len: usize,
    since: u64,
    watch: Watch,
}

impl Link {
    fn new(stream: TcpStream, limits: FrameLimits, now: u64) -> Link {
        Link {
            stream,
            rx: vec![0; limits.max_message() * 2],
            len: 0,
            since: now,
            watch: Watch::default(),
        }
    }

    /// Reads what is there: `Err` when the peer closed or the socket failed.
    fn read(&mut self) -> Result<bool, ()> {
        if self.len == self.rx.len() {
            return Ok(false);
        }
        match self.stream.read(&mut self.rx[self.len..]) {
            Ok(0) => Err(()),
            Ok(n) => {
                self.len += n;
                Ok(true)
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(false),
            Err(_) => Err(()),
        }
    }

    fn close(self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

/// One configured session: the bridge, its exchange connection, its FIX connection.
#[derive(Debug)]
struct Slot {
    comp_id: String,
    bridge: Bridge,
    native: NativeConn,
    fix: Option<Link>,
}

/// Runs the gateway until `stop` is set. `ready` gets the FIX listen address once
/// listening.
pub fn run(
    config: GatewayConfig,
    stop: &AtomicBool,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), GatewayError> {
    let io = |what: String| move |source| GatewayError::Io { what, source };
    std::fs::create_dir_all(&config.store_dir)
        .map_err(io(format!("creating {}", config.store_dir.display())))?;
    let listener =
        TcpListener::bind(&config.listen).map_err(io(format!("binding {}", config.listen)))?;
    listener
        .set_nonblocking(true)
        .map_err(io("listener".into()))?;
    let mut poller = Poller::new(EVENTS).map_err(io("creating the epoll set".into()))?;
    let mut listener_watch = Watch::default();
    listener_watch.sync(&poller, &listener, false);
    let exchange = config.exchange_addrs().map_err(|e| GatewayError::Io {
        what: format!("exchange address {}: {e}", config.exchange),
        source: std::io::Error::from(ErrorKind::InvalidInput),
    })?;
    let limits = FrameLimits {
        max_body: config.max_body,
    };
    let instruments: Arc<[_]> = config.instruments.clone().into();
    let keys = KeyFile::load(&config.keys_file)?;
    let now = wall_ns();
    let mut slots = Vec::new();
    for (k, s) in config.sessions.iter().enumerate() {
        let mut fix = SessionConfig::new(Role::Acceptor, &config.comp_id, &s.comp_id);
        fix.password = s.password.clone();
        fix.heartbeat_bounds = (config.heartbeat_bounds[0], config.heartbeat_bounds[1]);
        fix.limits = limits;
        fix.max_clock_skew_ns = config.max_clock_skew_secs * 1_000_000_000;
        let durability = if config.fsync {
            Durability::Fsync
        } else {
            Durability::OsBuffer
        };
        let path = config
            .store_dir
            .join(format!("{}-{}.fixstore", config.comp_id, s.comp_id));
        let store = FileStore::open(&path, durability, now)?;
        if store.torn_bytes() > 0 {
            eprintln!(
                "fix-gateway: {}: cut a torn last record ({} bytes)",
                path.display(),
                store.torn_bytes()
            );
        }
        // Native ids from the wall clock, spaced per session so they never collide.
        let id_start = now.wrapping_add((k as u64) << 40);
        let key = keys
            .key(AccountId(s.account))
            .ok_or_else(|| KeyError::Missing {
                path: config.keys_file.display().to_string(),
                account: s.account,
            })?;
        let bridge = Bridge::new(Session::new(fix, store), Arc::clone(&instruments), id_start)?;
        if bridge.resume_point() != 0 {
            eprintln!(
                "fix-gateway: {}: resuming account {}'s report stream at {}",
                s.comp_id,
                s.account,
                bridge.resume_point()
            );
        }
        slots.push(Slot {
            comp_id: s.comp_id.clone(),
            bridge,
            native: NativeConn::new(exchange.clone(), s.account, key),
            fix: None,
        });
    }
    let local = listener
        .local_addr()
        .map_err(io("listener address".into()))?;
    ready(local);
    let mut pending: Vec<Link> = Vec::new();
    let logon_timeout = config.logon_timeout_secs * 1_000_000_000;
    let mut idler = config.wait.idler();
    let mut next_accept = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let now = wall_ns();
        let mut busy = false;
        if now >= next_accept {
            busy = accept(
                &listener,
                &mut pending,
                config.max_pending_connections,
                limits,
                now,
            );
            next_accept = if busy { now } else { now + ACCEPT_POLL_NS };
        }
        busy |= route_pending(
            &mut pending,
            &mut slots,
            &config.comp_id,
            limits,
            logon_timeout,
            now,
        );
        for slot in &mut slots {
            busy |= slot.native.pump(&mut slot.bridge, now);
            busy |= pump_fix(slot, now);
            busy |= slot.native.flush(&mut slot.bridge, now);
            // What this iteration stored reaches the file even while the client is
            // away (one write per iteration at most; nothing when nothing changed).
            if let Err(e) = slot.bridge.session.store_mut().flush() {
                eprintln!("fix-gateway: {}: store failed: {e}", slot.comp_id);
            }
        }
        if busy {
            idler.reset();
        } else if idler.idle_or_block() {
            block(&mut poller, &mut pending, &mut slots, now);
            next_accept = 0;
        }
    }
    for slot in &mut slots {
        if let Some(link) = slot.fix.take() {
            let _ = slot.bridge.session.logout("gateway stopping", wall_ns());
            write_out(&mut slot.bridge.session, &link.stream, true);
            link.close();
        }
    }
    Ok(())
}

/// Blocks until a socket is ready or the nearest timer is due (at most
/// [`MAX_PARK`]).
fn block(poller: &mut Poller, pending: &mut [Link], slots: &mut [Slot], now: u64) {
    for link in pending {
        link.watch.sync(poller, &link.stream, false);
    }
    let mut due = MAX_PARK;
    for slot in slots {
        if let Some(link) = slot.fix.as_mut() {
            let backlog = slot.bridge.session.pending_outbound() > 0;
            link.watch.sync(poller, &link.stream, backlog);
        }
        slot.native.watch(poller);
        due = due.min(Duration::from_nanos(slot.native.due_in(now)));
    }
    if let Err(e) = crate::poller::wait(poller, due) {
        eprintln!("fix-gateway: epoll_wait failed: {e}");
        std::thread::sleep(due);
    }
}

fn accept(
    listener: &TcpListener,
    pending: &mut Vec<Link>,
    max: usize,
    limits: FrameLimits,
    now: u64,
) -> bool {
    let mut busy = false;
    loop {
        match listener.accept() {
            Ok((stream, peer)) => {
                busy = true;
                if pending.len() >= max {
                    eprintln!(
                        "fix-gateway: refusing {peer}: {max} connections already waiting to log on"
                    );
                    let _ = stream.shutdown(Shutdown::Both);
                    continue;
                }
                if stream.set_nonblocking(true).is_ok() && stream.set_nodelay(true).is_ok() {
                    pending.push(Link::new(stream, limits, now));
                }
            }
            Err(_) => return busy,
        }
    }
}

/// Reads the first bytes of waiting connections; attaches a Logon to its session.
fn route_pending(
    pending: &mut Vec<Link>,
    slots: &mut [Slot],
    our_comp_id: &str,
    limits: FrameLimits,
    timeout: u64,
    now: u64,
) -> bool {
    let mut busy = false;
    let mut i = 0;
    while i < pending.len() {
        let link = &mut pending[i];
        let read = link.read();
        busy |= read == Ok(true);
        let verdict = match read {
            Err(()) => Err("closed before logon"),
            Ok(_) => match identify_logon(&link.rx[..link.len], limits) {
                Ok(None) if now.saturating_sub(link.since) > timeout => Err("no Logon in time"),
                Ok(None) => Ok(None),
                Ok(Some(id)) => {
                    match slots
                        .iter()
                        .position(|s| s.comp_id.as_bytes() == id.sender_comp_id)
                    {
                        _ if id.target_comp_id != our_comp_id.as_bytes() => {
                            Err("wrong TargetCompID")
                        }
                        None => Err("unknown SenderCompID"),
                        Some(k) if slots[k].fix.is_some() => {
                            Err("session already logged on (duplicate Logon)")
                        }
                        Some(k) => Ok(Some(k)),
                    }
                }
                Err(()) => Err("first message not a well-formed Logon"),
            },
        };
        match verdict {
            Ok(None) => i += 1,
            Ok(Some(k)) => {
                let link = pending.swap_remove(i);
                let slot = &mut slots[k];
                match slot.bridge.session.connect(now) {
                    Ok(()) => slot.fix = Some(link),
                    Err(e) => eprintln!("fix-gateway: {}: store failed: {e}", slot.comp_id),
                }
                busy = true;
            }
            Err(why) => {
                let link = pending.swap_remove(i);
                if let Ok(peer) = link.stream.peer_addr() {
                    eprintln!("fix-gateway: closing {peer}: {why}");
                }
                link.close();
                busy = true;
            }
        }
    }
    busy
}

/// Reads, hands events to the bridge, runs timers, writes. Returns whether anything
/// happened.
fn pump_fix(slot: &mut Slot, now: u64) -> bool {
    let Some(link) = slot.fix.as_mut() else {
        return false;
    };
    let mut busy = false;
    let mut close = match link.read() {
        Ok(b) => {
            busy = b;
            None
        }
        Err(()) => Some("connection closed"),
    };
    let mut used = 0;
    while close.is_none() && used < link.len {
        let received = match slot.bridge.session.receive(&link.rx[used..link.len], now) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("fix-gateway: {}: store failed: {e}", slot.comp_id);
                close = Some("store failed");
                break;
            }
        };
        match received {
            Received::NeedMore => break,
            Received::Consumed { len, event } => {
                used += len;
                busy = true;
                match event {
                    Some(Event::App(m)) => {
                        if let Err(e) = slot.bridge.on_fix_app(&m, now) {
                            eprintln!("fix-gateway: {}: store failed: {e}", slot.comp_id);
                            close = Some("store failed");
                        }
                    }
                    Some(Event::LoggedOn {
                        reset,
                        heartbeat_secs,
                    }) => {
                        eprintln!(
                            "fix-gateway: {} logged on (HeartBtInt {heartbeat_secs}{})",
                            slot.comp_id,
                            if reset { ", sequence reset" } else { "" }
                        );
                    }
                    Some(Event::Disconnect(r)) => close = Some(r.text()),
                    Some(Event::Rejected {
                        ref_seq,
                        reason,
                        ref_tag,
                    }) => eprintln!(
                        "fix-gateway: {}: rejected message {ref_seq}: {} (tag {ref_tag:?})",
                        slot.comp_id,
                        reason.text()
                    ),
                    _ => {}
                }
            }
        }
    }
    link.rx.copy_within(used..link.len, 0);
    link.len -= used;
    let session = &mut slot.bridge.session;
    if close.is_none() {
        match session.poll(now) {
            Ok(Some(Event::Disconnect(r))) => close = Some(r.text()),
            Ok(_) => {}
            Err(_) => close = Some("store failed"),
        }
    }
    if close.is_none() && session.is_slow_consumer() {
        close = Some("slow consumer: output not read");
    }
    busy |= write_out(session, &link.stream, close.is_some());
    if let Some(why) = close {
        eprintln!("fix-gateway: {} disconnected: {why}", slot.comp_id);
        if let Some(link) = slot.fix.take() {
            link.close();
        }
        slot.bridge.session.disconnected();
        busy = true;
    }
    busy
}

/// Writes the session's output (all of it, briefly retrying, when closing).
fn write_out(session: &mut Session<FileStore>, mut stream: &TcpStream, all: bool) -> bool {
    let mut wrote = false;
    let mut spins = 0;
    loop {
        let out = match session.outbound() {
            Ok(out) if !out.is_empty() => out,
            _ => return wrote,
        };
        match stream.write(out) {
            Ok(n) => {
                session.consume_outbound(n);
                wrote = true;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock && all && spins < 1000 => {
                spins += 1;
                std::thread::yield_now();
            }
            Err(_) => return wrote,
        }
    }
}
