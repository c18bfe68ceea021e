//! Where the gateway thread blocks when its wait strategy parks: a level-triggered
//! `epoll` set (through `rustix`) of every socket the thread owns — the listener, the
//! connections waiting to log on, the FIX sessions' connections and the native
//! exchange connections. Input on any of them, or room to write where output is
//! backed up, ends the wait.
//!
//! Sockets join the set lazily, the first time the loop blocks while they are open
//! ([`Watch::sync`]), and leave it when they are closed (the kernel drops a closed
//! descriptor from every epoll set). The events themselves are not looked at: the
//! loop's next iteration polls every socket anyway, so a wake-up is all a wait
//! returns.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::Duration;

use rustix::buffer::spare_capacity;
use rustix::event::epoll::{self, CreateFlags, Event, EventData, EventFlags};
use rustix::event::Timespec;

/// Events reported per wait (only the wake-up matters, so a few are enough).
const EVENTS: usize = 16;

/// An epoll set and its event buffer (allocated once).
pub(crate) struct Poller {
    epoll: OwnedFd,
    events: Vec<Event>,
}

impl std::fmt::Debug for Poller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Poller")
            .field("epoll", &self.epoll)
            .finish()
    }
}

fn flags(out: bool) -> EventFlags {
    let read = EventFlags::IN | EventFlags::RDHUP;
    if out {
        read | EventFlags::OUT
    } else {
        read
    }
}

impl Poller {
    pub fn new() -> std::io::Result<Poller> {
        Ok(Poller {
            epoll: epoll::create(CreateFlags::CLOEXEC)?,
            events: Vec::with_capacity(EVENTS),
        })
    }

    /// Watches `fd` for input, and for room to write when `out`.
    fn add(&self, fd: BorrowedFd<'_>, out: bool) -> std::io::Result<()> {
        Ok(epoll::add(
            &self.epoll,
            fd,
            EventData::new_u64(0),
            flags(out),
        )?)
    }

    /// Changes whether a watched `fd` wakes the wait when it can be written.
    fn modify(&self, fd: BorrowedFd<'_>, out: bool) -> std::io::Result<()> {
        Ok(epoll::modify(
            &self.epoll,
            fd,
            EventData::new_u64(0),
            flags(out),
        )?)
    }

    /// Blocks until a watched socket is ready or `timeout` passes. Returns whether
    /// anything was ready (an interrupted wait counts as a timeout).
    pub fn wait(&mut self, timeout: Duration) -> std::io::Result<bool> {
        self.events.clear();
        let ts = Timespec {
            tv_sec: timeout.as_secs() as _,
            tv_nsec: timeout.subsec_nanos() as _,
        };
        match epoll::wait(&self.epoll, spare_capacity(&mut self.events), Some(&ts)) {
            Ok(_) => Ok(!self.events.is_empty()),
            Err(rustix::io::Errno::INTR) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
}

/// One socket's membership of the [`Poller`]: kept beside the socket and replaced
/// with a fresh one whenever the socket is.
#[derive(Debug, Default)]
pub(crate) struct Watch {
    added: bool,
    out: bool,
}

impl Watch {
    /// Before a wait: puts `fd` in the set if it is not yet there, and asks for
    /// write readiness exactly while `backlog` (output the socket would not take).
    /// A failure leaves the socket unwatched; the wait's timeout still bounds it.
    pub fn sync(&mut self, poller: &Poller, fd: impl AsFd, backlog: bool) {
        let fd = fd.as_fd();
        if !self.added {
            if poller.add(fd, backlog).is_ok() {
                self.added = true;
                self.out = backlog;
            }
        } else if self.out != backlog && poller.modify(fd, backlog).is_ok() {
            self.out = backlog;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn wakes_on_input_and_on_room_to_write_only_while_asked() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut p = Poller::new().unwrap();
        let mut lw = Watch::default();
        lw.sync(&p, &listener, false);
        assert!(!p.wait(Duration::ZERO).unwrap(), "nothing pending");
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        assert!(
            p.wait(Duration::from_secs(10)).unwrap(),
            "a connection wakes it"
        );
        let (mut server, _) = listener.accept().unwrap();
        let mut sw = Watch::default();
        sw.sync(&p, &server, false);
        assert!(!p.wait(Duration::ZERO).unwrap(), "nothing to read");
        client.write_all(b"x").unwrap();
        assert!(p.wait(Duration::from_secs(10)).unwrap(), "input wakes it");
        let mut b = [0u8; 1];
        server.read_exact(&mut b).unwrap();
        assert!(!p.wait(Duration::ZERO).unwrap(), "drained");
        sw.sync(&p, &server, true);
        assert!(p.wait(Duration::ZERO).unwrap(), "room to write, asked for");
        sw.sync(&p, &server, false);
        assert!(!p.wait(Duration::ZERO).unwrap(), "no longer asked for");
        drop(client);
        assert!(
            p.wait(Duration::from_secs(10)).unwrap(),
            "a hang-up wakes it"
        );
    }
}
