//! Ports for tests that must hand a listening address to another process before it
//! starts (a cluster's peers, a gateway that must know its exchange).
//!
//! Binding `127.0.0.1:0` and closing it returns a port from the kernel's ephemeral
//! range (32768-60999 by default), and that same range is where every outgoing
//! connection of every parallel test gets its local port: between the close and the
//! child's bind, a connect elsewhere can take it ("Address already in use", seen in
//! CI). [`free_port`] therefore hands out ports *below* the ephemeral range, which the
//! kernel never assigns on its own, from a cursor that starts at a place derived from
//! the process id (so parallel test binaries start far apart) and only returns a port
//! it could bind on TCP and UDP just now.

use std::net::{TcpListener, UdpSocket};
use std::sync::atomic::{AtomicU32, Ordering};

/// The ports handed out: below Linux's default ephemeral range, above the usual
/// well-known services.
const LOW: u32 = 12_000;
const HIGH: u32 = 32_000;

static CURSOR: AtomicU32 = AtomicU32::new(u32::MAX);

/// A loopback port no other test in this process was given, free on TCP and UDP when
/// returned, and outside the range the kernel picks ephemeral ports from.
///
/// # Panics
/// If no port in the range can be bound (the machine is out of ports).
pub fn free_port() -> u16 {
    let span = HIGH - LOW;
    if CURSOR.load(Ordering::Relaxed) == u32::MAX {
        // Spread processes over the range: 997 ports apart per pid step.
        let start = (std::process::id().wrapping_mul(997)) % span;
        let _ = CURSOR.compare_exchange(u32::MAX, start, Ordering::Relaxed, Ordering::Relaxed);
    }
    for _ in 0..span {
        let offset = CURSOR.fetch_add(1, Ordering::Relaxed) % span;
        let port = u16::try_from(LOW + offset).expect("ports below 32000 fit in u16");
        let tcp = TcpListener::bind(("127.0.0.1", port));
        let udp = UdpSocket::bind(("127.0.0.1", port));
        if tcp.is_ok() && udp.is_ok() {
            return port;
        }
    }
    panic!("no free loopback port in {LOW}..{HIGH}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_distinct_bindable_and_below_the_ephemeral_range() {
        let ports: Vec<u16> = (0..50).map(|_| free_port()).collect();
        let mut sorted = ports.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), ports.len(), "a port was handed out twice");
        for port in ports {
            assert!((12_000..32_000).contains(&port));
            TcpListener::bind(("127.0.0.1", port)).expect("still free");
        }
    }
}
