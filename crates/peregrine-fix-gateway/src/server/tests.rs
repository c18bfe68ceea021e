//! The readiness loop, driven one iteration at a time ([`Gateway::turn`]) against real
//! sockets: FIX clients are `peregrine-fix` initiator sessions over blocking
//! `TcpStream`s, the exchange is a listener the test holds (or nothing at all).
//! Every wait is bounded by [`GUARD`] so a broken loop fails instead of hanging.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use peregrine_client::keys::KeyFile;
use peregrine_fix::session::{Event, Received, Role, Session, SessionConfig};
use peregrine_fix::store::{MemoryStore, MessageStore};
use peregrine_types::{wall_ns, AccountId};

use crate::config::GatewayConfig;

use super::event_loop::Gateway;

/// The longest any test waits for something that should happen.
const GUARD: Duration = Duration::from_secs(20);

/// A gateway with sessions `C1`, `C2`, … for accounts 1, 2, …, its exchange at
/// `exchange`, its stores in `dir`.
fn gateway(dir: &std::path::Path, sessions: usize, exchange: SocketAddr) -> (Gateway, SocketAddr) {
    let accounts: Vec<AccountId> = (1..=sessions as u32).map(AccountId).collect();
    let keys = dir.join("keys.toml");
    KeyFile::generate(&accounts)
        .unwrap()
        .save_new(&keys)
        .unwrap();
    let mut text = format!(
        "listen = \"127.0.0.1:0\"\nexchange = \"{exchange}\"\nstore_dir = \"{}\"\nkeys_file = \"{}\"\n\
         [[instruments]]\nsymbol = \"PGN-USD\"\nid = 1\nprice_decimals = 2\nqty_decimals = 0\n",
        dir.join("store").display(),
        keys.display()
    );
    for a in &accounts {
        text.push_str(&format!(
            "[[sessions]]\ncomp_id = \"C{0}\"\naccount = {0}\n",
            a.0
        ));
    }
    let path = dir.join("gateway-fix.toml");
    std::fs::write(&path, text).unwrap();
    super::open(&GatewayConfig::load(&path).unwrap()).unwrap()
}

/// An exchange address nothing listens on (the native sessions back off).
fn no_exchange() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

/// A FIX client: an initiator session on a blocking socket with a read timeout.
struct Client {
    session: Session<MemoryStore>,
    stream: TcpStream,
    rx: Vec<u8>,
}

impl Client {
    /// Connects to the gateway and queues the Logon (not yet written).
    fn connect(addr: SocketAddr, comp_id: &str) -> Client {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_nodelay(true).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_millis(1)))
            .unwrap();
        let mut cfg = SessionConfig::new(Role::Initiator, comp_id, "PEREGRINE");
        cfg.reset_on_logon = true;
        let mut session = Session::new(cfg, MemoryStore::new(wall_ns()));
        session.connect(wall_ns()).unwrap();
        Client {
            session,
            stream,
            rx: Vec::new(),
        }
    }

    /// Writes what the session has queued.
    fn flush(&mut self) {
        let out = self.session.outbound().unwrap().to_vec();
        self.stream.write_all(&out).unwrap();
        self.session.consume_outbound(out.len());
    }

    /// Reads what has arrived (waiting at most a millisecond) into the session.
    /// Returns whether the session logged on in this call.
    fn poll(&mut self) -> bool {
        let mut buf = [0u8; 4096];
        if let Ok(n) = self.stream.read(&mut buf) {
            self.rx.extend_from_slice(&buf[..n]);
        }
        let mut logged_on = false;
        let mut used = 0;
        while let Ok(Received::Consumed { len, event }) =
            self.session.receive(&self.rx[used..], wall_ns())
        {
            used += len;
            logged_on |= matches!(event, Some(Event::LoggedOn { .. }));
        }
        self.rx.drain(..used);
        logged_on
    }

    /// Messages received so far (the Logon included).
    fn received(&self) -> u64 {
        self.session.store().next_target_seq() - 1
    }
}

/// Turns the loop (zero timeout: the spinning loop) and polls `clients` until
/// `done`, at most [`GUARD`] or `max_turns` turns. Returns whether `done` came true.
fn spin_until(
    gw: &mut Gateway,
    clients: &mut [&mut Client],
    max_turns: usize,
    mut done: impl FnMut(&mut Gateway, &mut [&mut Client]) -> bool,
) -> bool {
    let deadline = Instant::now() + GUARD;
    for _ in 0..max_turns {
        gw.turn(Duration::ZERO).unwrap();
        for c in clients.iter_mut() {
            c.poll();
        }
        if done(gw, clients) {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
    }
    false
}

fn log_on(gw: &mut Gateway, addr: SocketAddr, comp_id: &str) -> Client {
    let mut c = Client::connect(addr, comp_id);
    c.flush();
    let k = comp_id[1..].parse::<usize>().unwrap() - 1;
    let mut on = false;
    let served = spin_until(gw, &mut [], usize::MAX, |gw, _| {
        on |= c.poll();
        on && gw.slots[k].fix.is_some()
    });
    assert!(served, "{comp_id} never logged on");
    c
}

#[test]
fn input_arriving_while_the_loop_spins_is_served_and_only_through_the_set() {
    let dir = tempfile::tempdir().unwrap();
    let (mut gw, addr) = gateway(dir.path(), 1, no_exchange());
    let mut c = log_on(&mut gw, addr, "C1");
    // Nothing arrives: the spinning loop finds nothing to do (it would idle). A
    // timer pass may fall among the 50 turns and find the exchange due for another
    // connection attempt (it is down here): the loop must go quiet, not stay so.
    let quiet = (0..5).any(|_| (0..50).all(|_| !gw.turn(Duration::ZERO).unwrap()));
    assert!(quiet, "an idle gateway reports no work");
    // A TestRequest while the loop spins is answered (Heartbeat).
    let before = c.received();
    c.session.send_test_request(wall_ns()).unwrap();
    c.flush();
    assert!(
        spin_until(&mut gw, &mut [&mut c], usize::MAX, |_, c| c[0].received()
            > before),
        "the TestRequest was never answered"
    );
    // Negative control: a connection out of the epoll set is never read, however
    // long the loop spins (timer passes included: they read only what was reported).
    let link = gw.slots[0].fix.as_mut().unwrap();
    link.watch.remove(&gw.poller, &link.stream);
    let before = c.received();
    c.session.send_test_request(wall_ns()).unwrap();
    c.flush();
    let deadline = Instant::now() + Duration::from_millis(300);
    while Instant::now() < deadline {
        gw.turn(Duration::ZERO).unwrap();
        c.poll();
    }
    assert_eq!(c.received(), before, "served without readiness");
}

#[test]
fn a_logon_in_two_pieces_attaches_once_whole() {
    let dir = tempfile::tempdir().unwrap();
    let (mut gw, addr) = gateway(dir.path(), 1, no_exchange());
    let mut c = Client::connect(addr, "C1");
    let logon = c.session.outbound().unwrap().to_vec();
    let n = logon.len();
    c.session.consume_outbound(n);
    c.stream.write_all(&logon[..n / 2]).unwrap();
    // Half a Logon: accepted, read, waiting in the pool.
    assert!(spin_until(&mut gw, &mut [], 10_000, |gw, _| gw
        .pending
        .len()
        == 1
        && gw.slots[0].fix.is_none()));
    for _ in 0..100 {
        gw.turn(Duration::ZERO).unwrap();
    }
    assert!(gw.slots[0].fix.is_none(), "attached on half a Logon");
    c.stream.write_all(&logon[n / 2..]).unwrap();
    let mut on = false;
    assert!(
        spin_until(&mut gw, &mut [], usize::MAX, |_, _| {
            on |= c.poll();
            on
        }),
        "the completed Logon was never answered"
    );
    assert_eq!(gw.pending.len(), 0);
}

#[test]
fn a_second_client_is_accepted_while_the_first_keeps_the_loop_busy() {
    let dir = tempfile::tempdir().unwrap();
    let (mut gw, addr) = gateway(dir.path(), 2, no_exchange());
    let mut c1 = log_on(&mut gw, addr, "C1");
    let mut c2 = Client::connect(addr, "C2");
    c2.flush();
    // C1 sends on every turn: the loop never idles while C2 connects and logs on.
    let mut busy_turns = 0;
    let mut on = false;
    let deadline = Instant::now() + GUARD;
    while !(on && gw.slots[1].fix.is_some()) && Instant::now() < deadline {
        c1.session.send_test_request(wall_ns()).unwrap();
        c1.flush();
        busy_turns += usize::from(gw.turn(Duration::ZERO).unwrap());
        c1.poll();
        on |= c2.poll();
    }
    assert!(on, "C2 was never logged on");
    assert!(busy_turns > 0);
    // Negative control: with the listener out of the set, a third connection waits
    // in the kernel's queue however busy the loop is.
    gw.listener_watch_remove();
    let _c3 = TcpStream::connect(addr).unwrap();
    for _ in 0..200 {
        c1.session.send_test_request(wall_ns()).unwrap();
        c1.flush();
        gw.turn(Duration::ZERO).unwrap();
        c1.poll();
    }
    assert_eq!(gw.pending.len(), 0, "accepted without listener readiness");
}

#[test]
fn a_closed_connection_leaves_the_set_and_the_loop_can_park() {
    let dir = tempfile::tempdir().unwrap();
    let (mut gw, addr) = gateway(dir.path(), 1, no_exchange());
    let c = log_on(&mut gw, addr, "C1");
    drop(c);
    assert!(
        spin_until(&mut gw, &mut [], usize::MAX, |gw, _| gw.slots[0]
            .fix
            .is_none()),
        "the closed connection was never dropped"
    );
    // Nothing left to report: an idle loop would block in its wait.
    let events = gw.poller.wait(Some(Duration::ZERO)).unwrap().len();
    assert_eq!(events, 0, "a closed socket is still reported");
    assert!(!gw.turn(Duration::ZERO).unwrap());
    // Negative control: a hung-up socket left in the set (under a token the loop
    // ignores) is reported on every wait, so a loop keeping one could never park.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let peer = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (hung, _) = listener.accept().unwrap();
    drop(peer);
    gw.poller.add(&hung, u64::MAX - 1).unwrap();
    for _ in 0..3 {
        let n = gw.poller.wait(Some(Duration::from_secs(5))).unwrap().len();
        assert_eq!(
            n, 1,
            "a hung-up socket in the set is reported again and again"
        );
    }
}

#[test]
fn the_native_session_reconnects_after_the_exchange_drops_it() {
    let dir = tempfile::tempdir().unwrap();
    let exchange = TcpListener::bind("127.0.0.1:0").unwrap();
    exchange.set_nonblocking(true).unwrap();
    let (mut gw, _) = gateway(dir.path(), 1, exchange.local_addr().unwrap());
    let accept = |gw: &mut Gateway| {
        let deadline = Instant::now() + GUARD;
        loop {
            if let Ok((s, _)) = exchange.accept() {
                return s;
            }
            assert!(Instant::now() < deadline, "the gateway never connected");
            gw.turn(Duration::ZERO).unwrap();
        }
    };
    let first = accept(&mut gw);
    // The connection is in the set: the exchange's close is seen by readiness.
    drop(first);
    let second = accept(&mut gw);
    drop(second);
}

#[test]
fn output_backed_up_in_the_socket_goes_out_on_write_readiness() {
    use rustix::net::sockopt;
    let dir = tempfile::tempdir().unwrap();
    let (mut gw, addr) = gateway(dir.path(), 1, no_exchange());
    let mut c = log_on(&mut gw, addr, "C1");
    // Small socket buffers both ways, and a client that does not read: the
    // gateway's answers back up in its session.
    sockopt::set_socket_send_buffer_size(&gw.slots[0].fix.as_ref().unwrap().stream, 4096).unwrap();
    sockopt::set_socket_recv_buffer_size(&c.stream, 4096).unwrap();
    let before = c.received();
    let mut asked = 0;
    let mut backed_up = false;
    // In batches, the loop turning in between (one thread: a client writing
    // everything at once could fill the gateway's receive buffer and block).
    while !backed_up && asked < 20_000 {
        for _ in 0..100 {
            c.session.send_test_request(wall_ns()).unwrap();
        }
        asked += 100;
        c.flush();
        backed_up = spin_until(&mut gw, &mut [], 50, |gw, _| {
            gw.slots[0].bridge.session.pending_outbound() > 0
        });
    }
    assert!(backed_up, "the output never backed up (buffers too large?)");
    // The client reads again: everything arrives, each answer once.
    assert!(
        spin_until(&mut gw, &mut [&mut c], usize::MAX, |_, c| c[0].received()
            >= before + asked),
        "backed-up output never fully delivered"
    );
    assert_eq!(c.received(), before + asked);
    assert_eq!(gw.slots[0].bridge.session.pending_outbound(), 0);
}
