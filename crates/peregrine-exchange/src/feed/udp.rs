//! The feed's UDP socket: sends the packets the core's [`peregrine_exchange_core::feed::Feed`]
//! builds, unicast or multicast.
//!
//! Each packet's `send_time` is stamped from the exchange clock just before
//! `send_to` (one clock read, ~25 ns, per packet), so subscribers can measure the
//! time from the send to their use of the packet.
//!
//! A packet the kernel refuses (a full socket buffer) is counted and logged;
//! subscribers see the gap (its messages keep their sequence numbers) and recover
//! it through the recovery service.

use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};

use peregrine_exchange_core::feed::PacketSink;
use peregrine_exchange_core::Clock;
use peregrine_wire::md::packet::stamp_send_time;

use crate::config::MarketDataConfig;

/// Sends feed packets.
#[derive(Debug)]
pub(crate) struct UdpFeed {
    socket: UdpSocket,
    target: SocketAddr,
    dropped_packets: u64,
    /// The exchange clock (its own anchor: wall clock at open, advanced by the
    /// monotonic clock, like the core's).
    clock: Clock,
}

impl UdpFeed {
    /// Opens the UDP socket for `config.target`.
    pub(crate) fn open(config: &MarketDataConfig) -> std::io::Result<Self> {
        let interface = config.multicast_interface;
        let bind: SocketAddr = match config.target {
            SocketAddr::V4(a) if a.ip().is_loopback() => ([127, 0, 0, 1], 0).into(),
            SocketAddr::V4(a) if a.ip().is_multicast() => (interface, 0).into(),
            SocketAddr::V4(_) => ([0, 0, 0, 0], 0).into(),
            SocketAddr::V6(_) => (std::net::Ipv6Addr::UNSPECIFIED, 0).into(),
        };
        let socket = UdpSocket::bind(bind)?;
        if config.target.ip().is_multicast() {
            socket.set_multicast_ttl_v4(config.multicast_ttl)?;
            socket.set_multicast_loop_v4(true)?;
            if !interface.is_unspecified() {
                rustix::net::sockopt::set_ip_multicast_if(&socket, &interface)?;
            }
        }
        socket.set_nonblocking(true)?;
        Ok(UdpFeed {
            socket,
            target: config.target,
            dropped_packets: 0,
            clock: Clock::monotonic(),
        })
    }

    fn count_drop(&mut self, why: &str) {
        self.dropped_packets += 1;
        if self.dropped_packets.is_power_of_two() {
            log::warn!(
                "market data: dropped {} packet(s) so far ({why})",
                self.dropped_packets
            );
        }
    }
}

impl PacketSink for UdpFeed {
    fn send(&mut self, packet: &mut [u8]) {
        stamp_send_time(packet, self.clock.now().0);
        match self.socket.send_to(packet, self.target) {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => self.count_drop("socket buffer full"),
            // No subscriber on a unicast target: ICMP port unreachable surfaces here.
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {}
            Err(_) => self.count_drop("send error"),
        }
    }
}
