//! A follower's client ports: every connection to its order-entry port is told
//! where the leader is (`LeaderRedirect`, sent instead of the `Challenge`), and every
//! connection to its recovery port likewise (`RecoveryRedirect`), then closed.
//!
//! One thread per port, a non-blocking listener polled every few milliseconds; it
//! stops (and frees the port for the serving loop) when dropped. After the redirect
//! the node shuts its sending side and reads and discards what the client sent (a
//! subscriber sends its recovery request at once) until the client closes or a
//! short grace passes: closing a socket with unread input would reset the connection,
//! and a reset can reach the client before it has read the redirect.

use std::collections::{BTreeMap, VecDeque};
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use peregrine_types::Timestamp;
use peregrine_wire::field::{LeaderAddress, Pad};
use peregrine_wire::md::recovery::RecoveryRedirect;
use peregrine_wire::v2::session::LeaderRedirect;
use peregrine_wire::{WireMessage, MAX_MESSAGE_SIZE};

use super::Shared;

/// Which port a [`Redirector`] answers for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Port {
    /// Order entry: `LeaderRedirect` with the leader's order-entry address.
    OrderEntry,
    /// The feed's recovery service: `RecoveryRedirect` with the leader's recovery
    /// address.
    Recovery,
}

/// The redirecting listener (see the module documentation).
pub(crate) struct Redirector {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Redirector {
    /// Binds `addr` and answers there until dropped. `addresses`: each node's address
    /// for this port (a node without one is redirected to as "no leader known").
    pub(crate) fn start(
        addr: SocketAddr,
        port: Port,
        shared: Arc<Shared>,
        addresses: BTreeMap<u64, String>,
    ) -> std::io::Result<Self> {
        let listener = bind_retrying(addr)?;
        listener.set_nonblocking(true)?;
        let stop = Arc::new(AtomicBool::new(false));
        let s = Arc::clone(&stop);
        let name = match port {
            Port::OrderEntry => "redirect",
            Port::Recovery => "redirect-md",
        };
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || serve(&listener, port, &shared, &addresses, &s))?;
        Ok(Redirector {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Redirector {
    fn drop(&mut self) {
        // Relaxed: a stop request needs no ordering with other memory.
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The serving loop of the previous round may still be closing its listener: retry
/// a busy address for up to a second.
fn bind_retrying(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let mut tries = 0;
    loop {
        match TcpListener::bind(addr) {
            Err(e) if e.kind() == ErrorKind::AddrInUse && tries < 50 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            r => return r,
        }
    }
}

/// How long a redirected client may take to close before the node closes.
const GRACE: Duration = Duration::from_millis(500);
/// Redirected connections draining at once; the oldest is closed for a newer one.
const MAX_DRAINING: usize = 256;

fn serve(
    listener: &TcpListener,
    port: Port,
    shared: &Shared,
    addresses: &BTreeMap<u64, String>,
    stop: &AtomicBool,
) {
    let mut draining: VecDeque<(TcpStream, Instant)> = VecDeque::new();
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, _)) => {
                if answer(&stream, port, shared, addresses) {
                    if draining.len() == MAX_DRAINING {
                        draining.pop_front();
                    }
                    draining.push_back((stream, Instant::now() + GRACE));
                }
                continue;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) => log::debug!("redirect: accept failed: {e}"),
        }
        drain(&mut draining);
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Reads and discards what the redirected clients sent; keeps those that have not
/// closed, until their grace ends.
fn drain(draining: &mut VecDeque<(TcpStream, Instant)>) {
    let now = Instant::now();
    let mut sink = [0u8; 4096];
    draining.retain_mut(|(s, until)| {
        if now >= *until {
            return false;
        }
        loop {
            match s.read(&mut sink) {
                Ok(0) => return false,
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
    });
}

/// Wait suggested to clients while no leader is known (an election takes
/// `election_ticks`..2× ticks: 300–600 ms by default).
const RETRY_NO_LEADER_MS: u32 = 100;

/// The leader id and address to redirect to (`address`: the leader's address for
/// this port, if configured), and how long to wait.
fn target(leader: u64, address: Option<&str>) -> (u64, u32, LeaderAddress) {
    let address = address.and_then(LeaderAddress::from_text);
    // A leader whose address is unknown is as good as none to a client.
    let known = leader != 0 && address.is_some();
    let retry = if known { 0 } else { RETRY_NO_LEADER_MS };
    (leader, retry, address.unwrap_or_default())
}

/// The order-entry redirect for the leader `leader` (0: none known), whose
/// order-entry address is `address` if configured.
pub(crate) fn redirect(leader: u64, address: Option<&str>, engine_seq: u64) -> LeaderRedirect {
    let (leader_id, retry_after_ms, address) = target(leader, address);
    LeaderRedirect {
        session_seq: 1,
        engine_seq,
        engine_time: Timestamp(peregrine_types::wall_ns()),
        leader_id,
        retry_after_ms,
        reserved: Pad,
        address,
    }
}

/// The recovery redirect for the leader `leader`, whose recovery address is
/// `address` if configured.
pub(crate) fn recovery_redirect(leader: u64, address: Option<&str>) -> RecoveryRedirect {
    let (leader_id, retry_after_ms, address) = target(leader, address);
    RecoveryRedirect {
        leader_id,
        retry_after_ms,
        reserved: Pad,
        address,
    }
}

/// Tells one client where the leader is and shuts the sending side; true when the
/// connection is to be drained.
fn answer(
    mut stream: &TcpStream,
    port: Port,
    shared: &Shared,
    addresses: &BTreeMap<u64, String>,
) -> bool {
    let leader = shared.leader();
    let address = addresses.get(&leader).map(String::as_str);
    let mut buf = [0u8; MAX_MESSAGE_SIZE];
    let encoded = match port {
        Port::OrderEntry => redirect(leader, address, shared.engine_seq()).encode(&mut buf),
        Port::Recovery => recovery_redirect(leader, address).encode(&mut buf),
    };
    let Ok(n) = encoded else {
        return false;
    };
    // The socket is fresh: the message fits its send buffer; a client that does not
    // read in 100 ms is closed on anyway.
    let _ = stream.set_nodelay(true);
    let _ = stream.set_write_timeout(Some(Duration::from_millis(100)));
    if stream.write_all(&buf[..n]).is_err() {
        return false;
    }
    let _ = stream.shutdown(Shutdown::Write);
    stream.set_nonblocking(true).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_wire::v2::Outbound;

    #[test]
    fn a_redirect_names_the_leader_or_asks_to_wait() {
        let r = redirect(2, Some("10.0.0.2:7700"), 9);
        assert_eq!((r.leader_id, r.retry_after_ms), (2, 0));
        assert_eq!(r.address.as_text(), Some("10.0.0.2:7700"));
        let mut buf = [0u8; MAX_MESSAGE_SIZE];
        let n = r.encode(&mut buf).unwrap();
        assert!(matches!(
            Outbound::decode(&buf[..n]),
            Ok((Outbound::LeaderRedirect(_), _))
        ));
        let none = redirect(0, None, 9);
        assert_eq!(
            (none.leader_id, none.retry_after_ms),
            (0, RETRY_NO_LEADER_MS)
        );
        assert!(none.address.is_empty());
        // A leader without a configured address: wait, as if none were known.
        assert_eq!(redirect(3, None, 9).retry_after_ms, RETRY_NO_LEADER_MS);
    }

    #[test]
    fn a_recovery_redirect_names_the_leaders_recovery_address() {
        use peregrine_wire::md::recovery::Recovery;
        let r = recovery_redirect(2, Some("10.0.0.2:7702"));
        let mut buf = [0u8; MAX_MESSAGE_SIZE];
        let n = r.encode(&mut buf).unwrap();
        let Ok((Recovery::RecoveryRedirect(d), _)) = Recovery::decode(&buf[..n]) else {
            panic!("not a RecoveryRedirect")
        };
        assert_eq!((d.leader_id, d.retry_after_ms), (2, 0));
        assert_eq!(d.address.as_text(), Some("10.0.0.2:7702"));
        assert_eq!(
            recovery_redirect(0, None).retry_after_ms,
            RETRY_NO_LEADER_MS
        );
    }

    /// The redirect reaches a client that sent its request at once, which the node
    /// never reads as a request. (On loopback the answer is delivered before any
    /// reset could discard it, so this does not prove the drain; over a network a
    /// close with unread input resets at once and drops unsent data: hence the drain.)
    #[test]
    fn a_client_that_sent_first_still_reads_the_redirect() {
        use peregrine_wire::md::recovery::{Recovery, SnapshotRequest};
        let shared = Arc::new(Shared::new().unwrap());
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = port.local_addr().unwrap();
        drop(port);
        let addresses = BTreeMap::from([(0, "unused:1".to_string())]);
        let _r = Redirector::start(addr, Port::Recovery, shared, addresses).unwrap();
        for _ in 0..20 {
            let mut c = TcpStream::connect(addr).unwrap();
            let mut req = [0u8; 64];
            let n = SnapshotRequest {
                request_id: 1,
                instrument: peregrine_types::InstrumentId(1),
            }
            .encode(&mut req)
            .unwrap();
            c.write_all(&req[..n]).unwrap();
            c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut got = Vec::new();
            c.read_to_end(&mut got).unwrap();
            assert!(matches!(
                Recovery::decode(&got),
                Ok((Recovery::RecoveryRedirect(r), _)) if r.leader_id == 0
            ));
        }
    }
}
