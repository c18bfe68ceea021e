//! A bare TCP relay: the physical floor of putting any process between a client and
//! the exchange. It accepts a client, connects to the exchange, and copies bytes both
//! ways — no parsing, no store, nothing but the hop. It waits the way the FIX gateway
//! does: one level-triggered epoll set, zero-timeout waits while the workspace's idler
//! spins and yields, then the same wait blocking (`park`, the gateway's default).
//! Whatever the gateway adds beyond this relay is the gateway's own work.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use peregrine_queue::poller::{ready, Poller};
use peregrine_queue::WaitStrategy;

const LISTENER: u64 = 0;
const CLIENT: u64 = 1;
const UPSTREAM: u64 = 2;
/// The longest a parked relay blocks (how long `stop` may wait).
const MAX_PARK: Duration = Duration::from_millis(100);

/// A running relay; stopped (and joined) when dropped.
pub(crate) struct Relay {
    /// Where clients connect.
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Starts a relay to `upstream` on its own thread.
pub(crate) fn start(upstream: SocketAddr, wait: WaitStrategy) -> Relay {
    let listener = TcpListener::bind("127.0.0.1:0").expect("relay listener");
    listener.set_nonblocking(true).expect("non-blocking");
    let addr = listener.local_addr().expect("relay address");
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let thread = std::thread::Builder::new()
        .name("relay".into())
        .spawn(move || run(listener, upstream, wait, &flag))
        .expect("relay thread");
    Relay {
        addr,
        stop,
        thread: Some(thread),
    }
}

/// One direction of a relayed pair: bytes read from one socket and not yet written
/// to the other (only when the other's send buffer was full).
struct Pipe {
    buf: Box<[u8]>,
    start: usize,
    end: usize,
}

impl Pipe {
    fn new() -> Pipe {
        Pipe {
            buf: vec![0; 64 * 1024].into_boxed_slice(),
            start: 0,
            end: 0,
        }
    }

    fn backlog(&self) -> bool {
        self.start < self.end
    }

    /// Moves bytes `from` → `to`: writes what is held back first; reads only when
    /// nothing is (the backpressure a slow side puts on the other). `Err`: closed.
    fn pump(&mut self, from: &mut TcpStream, to: &mut TcpStream) -> Result<(), ()> {
        if !self.backlog() {
            self.start = 0;
            self.end = match from.read(&mut self.buf) {
                Ok(0) => return Err(()),
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => 0,
                Err(_) => return Err(()),
            };
        }
        while self.backlog() {
            match to.write(&self.buf[self.start..self.end]) {
                Ok(n) => self.start += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => return Err(()),
            }
        }
        Ok(())
    }
}

/// A client and its exchange connection.
struct Pair {
    client: TcpStream,
    upstream: TcpStream,
    up: Pipe,
    down: Pipe,
    /// Whether the set asks for room to write on `upstream` / `client` (changed only
    /// when a backlog starts or ends: one `epoll_ctl` then, none per message).
    up_out: bool,
    down_out: bool,
}

fn run(listener: TcpListener, upstream: SocketAddr, wait: WaitStrategy, stop: &AtomicBool) {
    let mut poller = Poller::new(8).expect("epoll");
    poller.add(&listener, LISTENER).expect("watch the listener");
    let mut pair: Option<Pair> = None;
    let mut idler = wait.idler();
    let mut timeout = Duration::ZERO;
    let mut tokens = Vec::with_capacity(8);
    while !stop.load(Ordering::Relaxed) {
        tokens.clear();
        tokens.extend(
            poller
                .wait(Some(timeout))
                .expect("epoll_wait")
                .iter()
                .map(|e| ready(e).token),
        );
        timeout = Duration::ZERO;
        if tokens.is_empty() {
            if idler.idle_or_block() {
                timeout = MAX_PARK;
            }
            continue;
        }
        idler.reset();
        if tokens.contains(&LISTENER) {
            if let Ok((client, _)) = listener.accept() {
                if let Some(old) = pair.take() {
                    poller.remove(&old.client);
                    poller.remove(&old.upstream);
                }
                pair = connect(client, upstream, &poller);
            }
        }
        // Only the direction whose source was reported (or whose destination can
        // take a backlog): no `read` that would only say `WouldBlock`.
        let client = tokens.contains(&CLIENT);
        let upstream = tokens.contains(&UPSTREAM);
        let Some(p) = pair.as_mut() else { continue };
        let mut up = Ok(());
        let mut down = Ok(());
        if client || (upstream && p.up.backlog()) {
            up = p.up.pump(&mut p.client, &mut p.upstream);
        }
        if upstream || (client && p.down.backlog()) {
            down = p.down.pump(&mut p.upstream, &mut p.client);
        }
        if up.is_err() || down.is_err() {
            poller.remove(&p.client);
            poller.remove(&p.upstream);
            pair = None;
            continue;
        }
        if p.up_out != p.up.backlog() {
            p.up_out = p.up.backlog();
            let _ = poller.modify(&p.upstream, UPSTREAM, p.up_out);
        }
        if p.down_out != p.down.backlog() {
            p.down_out = p.down.backlog();
            let _ = poller.modify(&p.client, CLIENT, p.down_out);
        }
    }
}

fn connect(client: TcpStream, upstream: SocketAddr, poller: &Poller) -> Option<Pair> {
    let up = TcpStream::connect(upstream).ok()?;
    for s in [&client, &up] {
        s.set_nonblocking(true).ok()?;
        s.set_nodelay(true).ok()?;
    }
    poller.add(&client, CLIENT).ok()?;
    poller.add(&up, UPSTREAM).ok()?;
    Some(Pair {
        client,
        upstream: up,
        up: Pipe::new(),
        down: Pipe::new(),
        up_out: false,
        down_out: false,
    })
}
