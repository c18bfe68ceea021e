//! The market-data publisher: buffers the feed messages of a batch and sends them as
//! MoldUDP64-style packets (`peregrine_wire::md::packet`) over UDP, unicast or
//! multicast.
//!
//! Every message gets the next feed sequence number whether or not its datagram
//! leaves the host: a packet the kernel refuses (a full socket buffer) is counted and
//! logged, and subscribers see the gap. The publisher keeps the most recent
//! `replay_retain` messages in a fixed ring indexed by sequence number ([`Retained`]),
//! from which the recovery service ([`crate::recovery`]) replays a missed range.

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
    retained: Retained,
}

/// The most recent feed messages, by sequence number: a ring of fixed capacity
/// (a power of two, allocated once), so slot `seq & mask` holds message `seq` while it
/// is among the last `capacity` sent.
#[derive(Debug)]
pub struct Retained {
    ring: Box<[Option<MdMessage>]>,
    /// One past the newest retained sequence number (the publisher's `next_seq`).
    end: u64,
    /// Messages stored so far in this session (saturates at the capacity).
    len: u64,
}

impl Retained {
    /// A ring of `capacity` messages (0: keep none). `capacity` must be 0 or a power
    /// of two (the config validates it); anything else keeps none.
    pub fn new(capacity: usize) -> Self {
        let capacity = if capacity.is_power_of_two() {
            capacity
        } else {
            0
        };
        Retained {
            ring: vec![None; capacity].into_boxed_slice(),
            end: 1,
            len: 0,
        }
    }

    #[inline]
    fn store(&mut self, seq: u64, msg: MdMessage) {
        if self.ring.is_empty() {
            return;
        }
        let mask = self.ring.len() as u64 - 1;
        self.ring[(seq & mask) as usize] = Some(msg);
        self.end = seq + 1;
        self.len = (self.len + 1).min(self.ring.len() as u64);
    }

    /// The retained part of `[first, first + count)`: `(start, n)` where `start` is
    /// `first` and `n <= count` messages are available from it, or `n == 0` when
    /// `first` itself is too old, not yet sent, or nothing is kept. A range that runs
    /// past the newest message is cut there.
    pub fn range(&self, first: u64, count: u64) -> (u64, u64) {
        let oldest = self.end - self.len;
        if first < oldest || first >= self.end || first == 0 {
            return (first, 0);
        }
        (first, count.min(self.end - first))
    }

    /// Message `seq`, if retained.
    pub fn get(&self, seq: u64) -> Option<MdMessage> {
        if self.range(seq, 1).1 == 1 {
            let mask = self.ring.len() as u64 - 1;
            self.ring[(seq & mask) as usize]
        } else {
            None
        }
    }
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
            retained: Retained::new(config.replay_retain),
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
                    Ok(seq) => {
                        self.retained.store(seq, self.pending[i]);
                        i += 1;
                    }
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

    /// The retained messages (for replay).
    pub fn retained(&self) -> &Retained {
        &self.retained
    }

    /// Packets the kernel refused.
    pub fn dropped_packets(&self) -> u64 {
        self.dropped_packets
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_types::{InstrumentId, Price, Qty, Side, Timestamp};
    use peregrine_wire::md::L2Update;

    fn update(n: i64) -> MdMessage {
        MdMessage::L2Update(L2Update {
            price: Price::from_raw(n),
            qty: Qty::from_raw(n),
            engine_time: Timestamp(n as u64),
            instrument: InstrumentId(1),
            order_count: 1,
            side: Side::Buy,
        })
    }

    #[test]
    fn retained_keeps_the_last_capacity_messages() {
        let mut r = Retained::new(4);
        assert_eq!(r.range(1, 1), (1, 0), "nothing sent yet");
        for seq in 1..=6 {
            r.store(seq, update(seq as i64));
        }
        assert_eq!(r.range(2, 1).1, 0, "evicted");
        assert_eq!(r.range(3, 10), (3, 4), "cut at the newest");
        assert_eq!(r.range(7, 1).1, 0, "not sent yet");
        assert_eq!(r.get(6), Some(update(6)));
        assert_eq!(r.get(3), Some(update(3)));
        assert_eq!(r.get(2), None);
    }

    #[test]
    fn zero_capacity_keeps_nothing() {
        let mut r = Retained::new(0);
        r.store(1, update(1));
        assert_eq!(r.range(1, 1).1, 0);
        assert_eq!(r.get(1), None);
    }
}
