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

/// Tells one client where the leader is, then closes.
fn answer(mut stream: TcpStream, shared: &Shared, clients: &BTreeMap<u64, String>) {
    let leader = shared.leader();
    let _address = clients.get(&leader);
    let _ = stream.set_write_timeout(Some(Duration::from_millis(100)));
    let _ = stream.flush();
}
