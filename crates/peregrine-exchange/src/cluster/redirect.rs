//! A follower's order-entry port: every connection is told where the leader is
//! (`LeaderRedirect`, sent instead of the `Challenge`) and closed. One thread, a
//! non-blocking listener polled every few milliseconds; it stops (and frees the
//! port for the serving loop) when dropped.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use peregrine_types::Timestamp;
use peregrine_wire::field::{LeaderAddress, Pad};
use peregrine_wire::v2::session::LeaderRedirect;
use peregrine_wire::{WireMessage, MAX_MESSAGE_SIZE};

use super::Shared;

/// The redirecting listener (see the module documentation).
pub(crate) struct Redirector {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Redirector {
    /// Binds `addr` and answers there until dropped.
    pub(crate) fn start(
        addr: SocketAddr,
        shared: Arc<Shared>,
        clients: BTreeMap<u64, String>,
    ) -> std::io::Result<Self> {
        let listener = bind_retrying(addr)?;
        listener.set_nonblocking(true)?;
        let stop = Arc::new(AtomicBool::new(false));
        let s = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("redirect".into())
            .spawn(move || serve(&listener, &shared, &clients, &s))?;
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
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && tries < 50 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            r => return r,
        }
    }
}

fn serve(
    listener: &TcpListener,
    shared: &Shared,
    clients: &BTreeMap<u64, String>,
    stop: &AtomicBool,
) {
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, _)) => answer(stream, shared, clients),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => {
                log::debug!("redirect: accept failed: {e}");
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
}

/// Wait suggested to clients while no leader is known (an election takes
/// `election_ticks`..2× ticks: 300–600 ms by default).
const RETRY_NO_LEADER_MS: u32 = 100;

/// The redirect for the leader `leader` (0: none known), whose order-entry address
/// is `address` if configured.
pub(crate) fn redirect(leader: u64, address: Option<&str>, engine_seq: u64) -> LeaderRedirect {
    let address = address.and_then(LeaderAddress::from_text);
    // A leader whose address is unknown is as good as none to a client.
    let known = leader != 0 && address.is_some();
    LeaderRedirect {
        session_seq: 1,
        engine_seq,
        engine_time: Timestamp(peregrine_types::wall_ns()),
        leader_id: leader,
        retry_after_ms: if known { 0 } else { RETRY_NO_LEADER_MS },
        reserved: Pad,
        address: address.unwrap_or_default(),
    }
}

/// Tells one client where the leader is, then closes.
fn answer(mut stream: TcpStream, shared: &Shared, clients: &BTreeMap<u64, String>) {
    let leader = shared.leader();
    let msg = redirect(
        leader,
        clients.get(&leader).map(String::as_str),
        shared.engine_seq(),
    );
    let mut buf = [0u8; MAX_MESSAGE_SIZE];
    let Ok(n) = msg.encode(&mut buf) else {
        return;
    };
    // The socket is fresh: the message fits its send buffer; a client that does not
    // read in 100 ms is closed on anyway.
    let _ = stream.set_nodelay(true);
    let _ = stream.set_write_timeout(Some(Duration::from_millis(100)));
    let _ = stream.write_all(&buf[..n]);
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
}
