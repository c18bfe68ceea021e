//! Where the gateway thread blocks when its wait strategy parks: the workspace's
//! [`peregrine_queue::poller::Poller`] over every socket the thread owns — the listener, the
//! connections waiting to log on, the FIX sessions' connections and the native
//! exchange connections. Input on any of them, or room to write where output is
//! backed up, ends the wait.
//!
//! Sockets join the set lazily, the first time the loop blocks while they are open
//! ([`Watch::sync`]), and leave it when they are closed (the kernel drops a closed
//! descriptor from every epoll set). The events themselves are not looked at: the
//! loop's next iteration polls every socket anyway, so a wake-up is all a wait
//! returns.

use std::os::fd::AsFd;
use std::time::Duration;

pub(crate) use peregrine_queue::poller::Poller;

/// Events reported per wait (only the wake-up matters, so a few are enough).
pub(crate) const EVENTS: usize = 16;

/// Blocks until a watched socket is ready or `timeout` passes. Returns whether
/// anything was ready (an interrupted wait counts as a timeout).
pub(crate) fn wait(poller: &mut Poller, timeout: Duration) -> std::io::Result<bool> {
    Ok(!poller.wait(Some(timeout))?.is_empty())
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
            if poller.add_rw(fd, 0, backlog).is_ok() {
                self.added = true;
                self.out = backlog;
            }
        } else if self.out != backlog && poller.modify(fd, 0, backlog).is_ok() {
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
        let mut p = Poller::new(EVENTS).unwrap();
        let mut lw = Watch::default();
        lw.sync(&p, &listener, false);
        assert!(!wait(&mut p, Duration::ZERO).unwrap(), "nothing pending");
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        assert!(
            wait(&mut p, Duration::from_secs(10)).unwrap(),
            "a connection wakes it"
        );
        let (mut server, _) = listener.accept().unwrap();
        let mut sw = Watch::default();
        sw.sync(&p, &server, false);
        assert!(!wait(&mut p, Duration::ZERO).unwrap(), "nothing to read");
        client.write_all(b"x").unwrap();
        assert!(
            wait(&mut p, Duration::from_secs(10)).unwrap(),
            "input wakes it"
        );
        let mut b = [0u8; 1];
        server.read_exact(&mut b).unwrap();
        assert!(!wait(&mut p, Duration::ZERO).unwrap(), "drained");
        sw.sync(&p, &server, true);
        assert!(
            wait(&mut p, Duration::ZERO).unwrap(),
            "room to write, asked for"
        );
        sw.sync(&p, &server, false);
        assert!(
            !wait(&mut p, Duration::ZERO).unwrap(),
            "no longer asked for"
        );
        drop(client);
        assert!(
            wait(&mut p, Duration::from_secs(10)).unwrap(),
            "a hang-up wakes it"
        );
    }
}
