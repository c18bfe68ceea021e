//! The market-data feed's receiving socket: a unicast address is bound as is; a
//! multicast group is joined on a chosen interface with `SO_REUSEADDR`, so several
//! subscribers on one host (the engine, the HTTP gateway, `peregrine md`) all receive
//! every packet of the feed.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};

use rustix::net::{sockopt, AddressFamily, SocketType};

/// Opens the socket that receives the feed sent to `feed`.
///
/// A unicast `feed` is bound (one receiver per address). A multicast IPv4 group is
/// bound at `group:port` with `SO_REUSEADDR` and joined on `interface`: the address
/// of a local interface, or `0.0.0.0` for the one the routing table picks (a host
/// without a route for the group needs the interface named; on one host,
/// `127.0.0.1` with the exchange's `multicast_interface = "127.0.0.1"`).
pub fn open_feed(feed: SocketAddr, interface: Ipv4Addr) -> io::Result<UdpSocket> {
    match feed {
        SocketAddr::V4(a) if a.ip().is_multicast() => {
            let fd = rustix::net::socket(AddressFamily::INET, SocketType::DGRAM, None)?;
            sockopt::set_socket_reuseaddr(&fd, true)?;
            // Bound to the group (not 0.0.0.0): only the group's packets arrive.
            rustix::net::bind(&fd, &SocketAddrV4::new(*a.ip(), a.port()))?;
            sockopt::set_ip_add_membership(&fd, a.ip(), &interface)?;
            Ok(UdpSocket::from(fd))
        }
        other => UdpSocket::bind(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn two_subscribers_of_one_group_both_receive_every_packet() {
        let group: SocketAddr = {
            // A port free for UDP right now.
            let probe = UdpSocket::bind("127.0.0.1:0").unwrap();
            let port = probe.local_addr().unwrap().port();
            SocketAddr::from(([239, 255, 17, 3], port))
        };
        let lo = Ipv4Addr::LOCALHOST;
        let a = open_feed(group, lo).unwrap();
        let b = open_feed(group, lo).unwrap();
        for s in [&a, &b] {
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        }
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let fd = rustix::fd::AsFd::as_fd(&tx);
        sockopt::set_ip_multicast_if(fd, &lo).unwrap();
        sockopt::set_ip_multicast_loop(fd, true).unwrap();
        for n in 0..3u8 {
            tx.send_to(&[n; 8], group).unwrap();
        }
        for s in [&a, &b] {
            let mut buf = [0u8; 16];
            for n in 0..3u8 {
                let len = s.recv(&mut buf).unwrap();
                assert_eq!(&buf[..len], &[n; 8]);
            }
        }
    }

    #[test]
    fn a_unicast_address_has_one_receiver() {
        let a = open_feed("127.0.0.1:0".parse().unwrap(), Ipv4Addr::UNSPECIFIED).unwrap();
        let taken = a.local_addr().unwrap();
        assert!(open_feed(taken, Ipv4Addr::UNSPECIFIED).is_err());
    }
}
