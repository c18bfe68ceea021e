//! Readiness of a polling thread's file descriptors: a level-triggered `epoll` set
//! (through `rustix`), the one the workspace's socket loops block in when their
//! [`crate::wait::Idler`] parks. The exchange's thread holds its listener, every
//! session socket and the group commit's eventfd here, reads only what is ready and
//! blocks in `epoll_wait` when it parks, so an idle exchange sleeps until a byte
//! arrives; the FIX gateway's loop holds its listener and connections, and asks for
//! write readiness only where output is backed up ([`Poller::add_rw`],
//! [`Poller::modify`]).
//!
//! Level-triggered, so a socket with more data than one `read` took is reported
//! again on the next wait: one `read` per ready socket per iteration, never a
//! `read` that returns `EAGAIN` just to learn that nothing came.

use std::os::fd::{AsFd, OwnedFd};
use std::time::Duration;

use rustix::buffer::spare_capacity;
use rustix::event::epoll::{self, CreateFlags, Event, EventData, EventFlags};
use rustix::event::Timespec;

/// One ready descriptor (a hang-up or an error is reported as readable: the next
/// `read` returns it).
#[derive(Debug, Clone, Copy)]
pub struct Ready {
    /// Its token (what the caller gave [`Poller::add`]).
    pub token: u64,
}

/// An epoll set and its event buffer (allocated once).
pub struct Poller {
    epoll: OwnedFd,
    events: Vec<Event>,
}

impl std::fmt::Debug for Poller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Poller")
            .field("epoll", &self.epoll)
            .field("capacity", &self.events.capacity())
            .finish()
    }
}

impl Poller {
    /// A set that reports up to `capacity` descriptors per wait.
    pub fn new(capacity: usize) -> std::io::Result<Self> {
        Ok(Poller {
            epoll: epoll::create(CreateFlags::CLOEXEC)?,
            events: Vec::with_capacity(capacity.max(4)),
        })
    }

    /// Watches `fd` for input (level-triggered).
    pub fn add(&self, fd: impl AsFd, token: u64) -> std::io::Result<()> {
        self.add_rw(fd, token, false)
    }

    /// Watches `fd` for input, and for room to write when `out` (level-triggered).
    pub fn add_rw(&self, fd: impl AsFd, token: u64, out: bool) -> std::io::Result<()> {
        Ok(epoll::add(
            &self.epoll,
            fd,
            EventData::new_u64(token),
            rw_flags(out),
        )?)
    }

    /// Changes whether a watched `fd` is also reported when it can be written.
    pub fn modify(&self, fd: impl AsFd, token: u64, out: bool) -> std::io::Result<()> {
        Ok(epoll::modify(
            &self.epoll,
            fd,
            EventData::new_u64(token),
            rw_flags(out),
        )?)
    }

    /// Watches `fd` edge-triggered: one report per signal, nothing to drain (the
    /// group commit's eventfd).
    pub fn add_edge(&self, fd: impl AsFd, token: u64) -> std::io::Result<()> {
        let flags = EventFlags::IN | EventFlags::ET;
        Ok(epoll::add(
            &self.epoll,
            fd,
            EventData::new_u64(token),
            flags,
        )?)
    }

    /// Stops watching `fd`.
    pub fn remove(&self, fd: impl AsFd) {
        let _ = epoll::delete(&self.epoll, fd);
    }

    /// Waits up to `timeout` (zero: just look; `None`: until something is ready)
    /// and returns what is ready.
    pub fn wait(&mut self, timeout: Option<Duration>) -> std::io::Result<&[Event]> {
        self.events.clear();
        let ts = timeout.map(|d| Timespec {
            tv_sec: d.as_secs() as _,
            tv_nsec: d.subsec_nanos() as _,
        });
        match epoll::wait(&self.epoll, spare_capacity(&mut self.events), ts.as_ref()) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
        Ok(&self.events)
    }
}

fn rw_flags(out: bool) -> EventFlags {
    let read = EventFlags::IN | EventFlags::RDHUP;
    if out {
        read | EventFlags::OUT
    } else {
        read
    }
}

/// The token and state of one event.
#[inline]
pub fn ready(e: &Event) -> Ready {
    Ready {
        token: e.data.u64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn reports_only_ready_descriptors_and_blocks_when_idle() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut p = Poller::new(8).unwrap();
        p.add(&listener, 99).unwrap();
        assert!(p.wait(Some(Duration::ZERO)).unwrap().is_empty());
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let tokens: Vec<u64> = p
            .wait(Some(Duration::from_secs(5)))
            .unwrap()
            .iter()
            .map(|e| ready(e).token)
            .collect();
        assert_eq!(tokens, [99]);
        let (server, _) = listener.accept().unwrap();
        p.add(&server, 7).unwrap();
        assert!(
            p.wait(Some(Duration::ZERO)).unwrap().is_empty(),
            "nothing to read"
        );
        client.write_all(b"hello").unwrap();
        let e = p.wait(Some(Duration::from_secs(5))).unwrap()[0];
        assert_eq!(ready(&e).token, 7);
        let again = p.wait(Some(Duration::ZERO)).unwrap().len();
        assert_eq!(again, 1, "level-triggered: unread data is reported again");
        drop(client);
        let e = p.wait(Some(Duration::from_secs(5))).unwrap()[0];
        let flags = e.flags;
        assert!(flags.contains(EventFlags::RDHUP), "a hang-up is reported");
        p.remove(&server);
        let started = std::time::Instant::now();
        assert!(p.wait(Some(Duration::from_millis(20))).unwrap().is_empty());
        assert!(started.elapsed() >= Duration::from_millis(15), "it blocked");
    }
}
