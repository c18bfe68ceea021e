//! `peregrine engine bench-udp`: the floor under feed-to-strategy latency: one UDP
//! datagram over loopback from a sender thread to a receiver thread that polls a
//! non-blocking socket, send timestamp in the payload, `CLOCK_MONOTONIC` both sides.
//! Run it beside the engine's `md venue -> on_book` row (same script, same load).

use std::net::UdpSocket;
use std::time::Duration;

use hdrhistogram::Histogram;
use peregrine_queue::clock::now_ns;

/// One-way send → receive, ns, for `count` datagrams sent `gap_us` apart.
pub fn run(count: u64, gap_us: u64) -> std::io::Result<Histogram<u64>> {
    let rx = UdpSocket::bind("127.0.0.1:0")?;
    rx.set_nonblocking(true)?;
    let addr = rx.local_addr()?;
    let sender = std::thread::spawn(move || -> std::io::Result<()> {
        let tx = UdpSocket::bind("127.0.0.1:0")?;
        for _ in 0..count {
            tx.send_to(&now_ns().to_le_bytes(), addr)?;
            std::thread::sleep(Duration::from_micros(gap_us));
        }
        Ok(())
    });
    let mut h = Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("static bounds");
    let mut buf = [0u8; 64];
    let deadline = now_ns() + (count * (gap_us + 100) + 5_000_000) * 1_000;
    while h.len() < count && now_ns() < deadline {
        match rx.recv(&mut buf) {
            Ok(8) => {
                let sent = u64::from_le_bytes(buf[..8].try_into().unwrap_or_default());
                h.saturating_record(now_ns().saturating_sub(sent).max(1));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::hint::spin_loop(),
            Err(e) => return Err(e),
        }
    }
    sender
        .join()
        .map_err(|_| std::io::Error::other("sender panicked"))??;
    Ok(h)
}
