//! The market-data publisher: buffers the feed messages of a batch and sends them as
//! MoldUDP64-style packets (`peregrine_wire::md::packet`) over UDP, unicast or
//! multicast.
//!
//! Every message gets the next feed sequence number whether or not its datagram
//! leaves the host: a packet the kernel refuses (a full socket buffer) is counted and
//! logged, and subscribers see the gap. A recovery service (replay / snapshot over TCP,
//! `peregrine_wire::md::recovery`) is the next step; see `docs/exchange.md`.

use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use peregrine_wire::md::packet::{encode_heartbeat, PacketBuilder, PushError};
use peregrine_wire::md::MdMessage;

use crate::config::MarketDataConfig;

/// Sends the feed.
#[derive(Debug)]
pub struct MdPublisher {
    socket: UdpSocket,
    target: SocketAddr,
    session_id: u64,
    next_seq: u64,
    pending: Vec<MdMessage>,
    buf: Vec<u8>,
    heartbeat: Duration,
    last_send: Instant,
    dropped_packets: u64,
}

impl MdPublisher {
    /// Opens the UDP socket for `config.target`. `session_id` names the feed session
    /// (sequence numbers start at 1 within it).
    pub fn new(config: &MarketDataConfig, session_id: u64) -> std::io::Result<Self> {
        let bind: SocketAddr = match config.target {
            SocketAddr::V4(a) if a.ip().is_loopback() => ([127, 0, 0, 1], 0).into(),
            SocketAddr::V4(_) => ([0, 0, 0, 0], 0).into(),
            SocketAddr::V6(_) => (std::net::Ipv6Addr::UNSPECIFIED, 0).into(),
        };
        let socket = UdpSocket::bind(bind)?;
        if config.target.ip().is_multicast() {
            socket.set_multicast_ttl_v4(config.multicast_ttl)?;
            socket.set_multicast_loop_v4(true)?;
        }
        socket.set_nonblocking(true)?;
        Ok(MdPublisher {
            socket,
            target: config.target,
            session_id,
            next_seq: 1,
            pending: Vec::with_capacity(4096),
            buf: vec![0; config.mtu],
            heartbeat: Duration::from_millis(config.heartbeat_ms),
            last_send: Instant::now(),
            dropped_packets: 0,
        })
    }

    /// Queues a message for the current batch.
    #[inline]
    pub fn push(&mut self, msg: MdMessage) {
        self.pending.push(msg);
    }

    /// Sends the batch's messages in as few packets as fit the MTU.
    pub fn flush(&mut self) {
        let mut i = 0;
        while i < self.pending.len() {
            let Ok(mut packet) = PacketBuilder::new(&mut self.buf, self.session_id, self.next_seq)
            else {
                return;
            };
            while i < self.pending.len() {
                match packet.push(self.pending[i]) {
                    Ok(_) => i += 1,
                    Err(PushError::Full(_)) => break,
                }
            }
            if packet.is_empty() {
                // A single message larger than the MTU cannot happen (validated mtu >= 64).
                break;
            }
            self.next_seq = packet.next_seq();
            let len = packet.len();
            self.send(len);
        }
        self.pending.clear();
    }

    /// Sends a heartbeat packet if nothing was sent for one heartbeat interval.
    pub fn heartbeat_if_due(&mut self) {
        if self.last_send.elapsed() >= self.heartbeat {
            if let Ok(len) = encode_heartbeat(&mut self.buf, self.session_id, self.next_seq) {
                self.send(len);
            }
        }
    }

    fn send(&mut self, len: usize) {
        self.last_send = Instant::now();
        match self.socket.send_to(&self.buf[..len], self.target) {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => self.count_drop("socket buffer full"),
            // No subscriber on a unicast target: ICMP port unreachable surfaces here.
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {}
            Err(_) => self.count_drop("send error"),
        }
    }

    fn count_drop(&mut self, why: &str) {
        self.dropped_packets += 1;
        if self.dropped_packets.is_power_of_two() {
            crate::log!(
                "market data: dropped {} packet(s) so far ({why})",
                self.dropped_packets
            );
        }
    }

    /// The sequence number the next message will get.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// The feed session id.
    pub fn session_id(&self) -> u64 {
        self.session_id
    }

    /// Packets the kernel refused.
    pub fn dropped_packets(&self) -> u64 {
        self.dropped_packets
    }
}
