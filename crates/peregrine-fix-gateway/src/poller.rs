//! The gateway thread's readiness: one level-triggered epoll set (the workspace's
//! [`peregrine_queue::poller::Poller`]) holding every socket the thread owns — the
//! listener, the connections waiting to log on, the FIX sessions' connections and the
//! native exchange connections — each under a [`Token`] naming its place in the loop.
//!
//! The loop reads only the sockets this set reports, so an iteration with nothing to
//! do costs one `epoll_wait` instead of a `recv` per socket. Level-triggered: a socket
//! left with unread input (one `read` did not drain it) is reported again on the next
//! wait, so readiness cannot be lost between iterations. Write readiness is asked for
//! only while a socket holds back output ([`Watch::want_write`]): a writable socket
//! would otherwise be reported on every wait.
//!
//! A socket joins the set when the loop takes it (accept, attach, connect) and leaves
//! it when the loop closes it: FIX connections and the listener by [`Watch::remove`]
//! before the close; a native connection is simply dropped, which is enough (the
//! kernel takes a closed descriptor out of every epoll set; nothing duplicates ours),
//! and its successor comes with a fresh [`Watch`].

use std::os::fd::AsFd;

pub(crate) use peregrine_queue::poller::Poller;

/// Which socket an event is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Token {
    /// The FIX listener: connections wait to be accepted.
    Listener,
    /// A connection waiting to log on, by its place in the pending pool.
    Pending(usize),
    /// The FIX connection of a configured session, by the session's index.
    Fix(usize),
    /// The native exchange connection of a configured session, by its index.
    Native(usize),
}

const KIND_SHIFT: u32 = 56;
const INDEX_MASK: u64 = (1 << KIND_SHIFT) - 1;

impl Token {
    /// The epoll data word: the kind in the top byte, the index below.
    pub(crate) fn encode(self) -> u64 {
        let (kind, index) = match self {
            Token::Listener => (0u64, 0usize),
            Token::Pending(i) => (1, i),
            Token::Fix(i) => (2, i),
            Token::Native(i) => (3, i),
        };
        (kind << KIND_SHIFT) | (index as u64 & INDEX_MASK)
    }

    /// The token of an epoll data word ([`Token::encode`]'s inverse).
    pub(crate) fn decode(word: u64) -> Option<Token> {
        let index = (word & INDEX_MASK) as usize;
        match word >> KIND_SHIFT {
            0 => Some(Token::Listener),
            1 => Some(Token::Pending(index)),
            2 => Some(Token::Fix(index)),
            3 => Some(Token::Native(index)),
            _ => None,
        }
    }
}

/// One socket's membership of the [`Poller`]: kept beside the socket and replaced
/// with a fresh one whenever the socket is.
#[derive(Debug, Default)]
pub(crate) struct Watch {
    token: Option<Token>,
    out: bool,
}

impl Watch {
    /// Puts `fd` in the set under `token` (or moves it there: a pending connection
    /// becoming a session's). Reading only; [`Watch::want_write`] adds writing.
    pub(crate) fn register(
        &mut self,
        poller: &Poller,
        fd: impl AsFd,
        token: Token,
    ) -> std::io::Result<()> {
        let fd = fd.as_fd();
        match self.token {
            None => poller.add_rw(fd, token.encode(), false)?,
            Some(_) => poller.modify(fd, token.encode(), self.out)?,
        }
        self.token = Some(token);
        Ok(())
    }

    /// Whether the socket is in the set.
    pub(crate) fn is_registered(&self) -> bool {
        self.token.is_some()
    }

    /// Asks for write readiness exactly while `backlog` (output the socket would not
    /// take). One `epoll_ctl` when it changes, none otherwise. A failure keeps the
    /// old interest: the loop retries the write on its next timer pass anyway.
    pub(crate) fn want_write(&mut self, poller: &Poller, fd: impl AsFd, backlog: bool) {
        if let Some(token) = self.token {
            if self.out != backlog && poller.modify(fd, token.encode(), backlog).is_ok() {
                self.out = backlog;
            }
        }
    }

    /// Takes `fd` out of the set (before it is closed).
    pub(crate) fn remove(&mut self, poller: &Poller, fd: impl AsFd) {
        if self.token.take().is_some() {
            poller.remove(fd);
        }
        self.out = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_queue::poller::ready;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::time::Duration;

    fn tokens(p: &mut Poller, timeout: Duration) -> Vec<Token> {
        p.wait(Some(timeout))
            .unwrap()
            .iter()
            .map(|e| Token::decode(ready(e).token).unwrap())
            .collect()
    }

    #[test]
    fn tokens_round_trip() {
        for t in [
            Token::Listener,
            Token::Pending(0),
            Token::Pending(63),
            Token::Fix(7),
            Token::Native(7),
            Token::Native(1 << 40),
        ] {
            assert_eq!(Token::decode(t.encode()), Some(t));
        }
        assert_eq!(Token::decode(9 << KIND_SHIFT), None);
    }

    #[test]
    fn reports_the_ready_socket_by_token_and_writing_only_while_asked() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut p = Poller::new(8).unwrap();
        let mut lw = Watch::default();
        lw.register(&p, &listener, Token::Listener).unwrap();
        assert!(tokens(&mut p, Duration::ZERO).is_empty(), "nothing pending");
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        assert_eq!(tokens(&mut p, Duration::from_secs(10)), [Token::Listener]);
        let (mut server, _) = listener.accept().unwrap();
        let mut sw = Watch::default();
        sw.register(&p, &server, Token::Pending(3)).unwrap();
        assert!(tokens(&mut p, Duration::ZERO).is_empty(), "nothing to read");
        client.write_all(b"x").unwrap();
        assert_eq!(tokens(&mut p, Duration::from_secs(10)), [Token::Pending(3)]);
        // Moved to a session: the same unread byte is now reported under the new token.
        sw.register(&p, &server, Token::Fix(5)).unwrap();
        assert_eq!(
            tokens(&mut p, Duration::ZERO),
            [Token::Fix(5)],
            "level-triggered"
        );
        let mut b = [0u8; 1];
        server.read_exact(&mut b).unwrap();
        assert!(tokens(&mut p, Duration::ZERO).is_empty(), "drained");
        sw.want_write(&p, &server, true);
        assert_eq!(
            tokens(&mut p, Duration::ZERO),
            [Token::Fix(5)],
            "room to write, asked for"
        );
        sw.want_write(&p, &server, false);
        assert!(
            tokens(&mut p, Duration::ZERO).is_empty(),
            "no longer asked for"
        );
        drop(client);
        assert_eq!(
            tokens(&mut p, Duration::from_secs(10)),
            [Token::Fix(5)],
            "a hang-up"
        );
        sw.remove(&p, &server);
        assert!(!sw.is_registered());
        assert!(
            tokens(&mut p, Duration::ZERO).is_empty(),
            "removed: no longer reported"
        );
    }
}
