//! Connections that have not logged on: a bounded pool with a timeout. Each sits at a
//! fixed place (its [`Token::Pending`] index) until its first message, which must be
//! a Logon naming a configured session that has no connection, moves it to that
//! session's slot; anything else closes it.

use std::net::{Shutdown, TcpListener};

use peregrine_fix::codec::FrameLimits;
use peregrine_fix::session::identify_logon;

use crate::poller::{Poller, Token};

use super::link::Link;
use super::slot::Slot;

/// The pool.
#[derive(Debug)]
pub(super) struct Pending {
    links: Vec<Option<Link>>,
    limits: FrameLimits,
    /// Nanoseconds a connection has to log on.
    timeout: u64,
}

/// What the listener said.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Accepted {
    /// Took every connection that was waiting (maybe none).
    Drained { any: bool },
    /// `accept(2)` failed for another reason than an empty queue (out of descriptors,
    /// say): the connection stays queued and the listener stays readable.
    Failed,
}

impl Pending {
    pub(super) fn new(max: usize, limits: FrameLimits, timeout: u64) -> Pending {
        Pending {
            links: (0..max).map(|_| None).collect(),
            limits,
            timeout,
        }
    }

    /// Accepts every waiting connection (the listener was reported readable) and
    /// puts it in the epoll set; beyond the pool's size they are closed at once.
    pub(super) fn accept(&mut self, listener: &TcpListener, poller: &Poller, now: u64) -> Accepted {
        let mut any = false;
        loop {
            let (stream, peer) = match listener.accept() {
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    return Accepted::Drained { any }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    eprintln!("fix-gateway: accept failed: {e}");
                    return Accepted::Failed;
                }
            };
            any = true;
            let Some(i) = self.links.iter().position(Option::is_none) else {
                eprintln!(
                    "fix-gateway: refusing {peer}: {} connections already waiting to log on",
                    self.links.len()
                );
                let _ = stream.shutdown(Shutdown::Both);
                continue;
            };
            if stream.set_nonblocking(true).is_err() || stream.set_nodelay(true).is_err() {
                continue;
            }
            let mut link = Link::new(stream, self.limits, now);
            match link.watch.register(poller, &link.stream, Token::Pending(i)) {
                Ok(()) => self.links[i] = Some(link),
                Err(e) => eprintln!("fix-gateway: refusing {peer}: cannot watch it: {e}"),
            }
        }
    }

    /// Reads connection `i` (reported readable). A Logon for a free session moves
    /// it to that session's slot (returned: the loop serves the slot at once, the
    /// Logon being in its buffer); anything else that settles its fate closes it.
    /// Returns `None` when nothing was attached.
    pub(super) fn serve(
        &mut self,
        i: usize,
        poller: &Poller,
        slots: &mut [Slot],
        our_comp_id: &str,
        now: u64,
    ) -> Option<usize> {
        let link = self.links.get_mut(i)?.as_mut()?;
        let verdict = match link.read() {
            Err(()) => Err("closed before logon"),
            Ok(_) => match identify_logon(&link.rx[..link.len], self.limits) {
                Ok(None) => return None,
                Ok(Some(id)) if id.target_comp_id != our_comp_id.as_bytes() => {
                    Err("wrong TargetCompID")
                }
                Ok(Some(id)) => match slots
                    .iter()
                    .position(|s| s.comp_id.as_bytes() == id.sender_comp_id)
                {
                    None => Err("unknown SenderCompID"),
                    Some(k) if slots[k].fix.is_some() => {
                        Err("session already logged on (duplicate Logon)")
                    }
                    Some(k) => Ok(k),
                },
                Err(()) => Err("first message not a well-formed Logon"),
            },
        };
        let mut link = self.links[i].take()?;
        let k = match verdict {
            Ok(k) => k,
            Err(why) => {
                close(link, poller, why);
                return None;
            }
        };
        let slot = &mut slots[k];
        if let Err(e) = link.watch.register(poller, &link.stream, Token::Fix(k)) {
            close(link, poller, &format!("cannot watch it: {e}"));
            return None;
        }
        match slot.bridge.session.connect(now) {
            Ok(()) => slot.fix = Some(link),
            Err(e) => {
                eprintln!("fix-gateway: {}: store failed: {e}", slot.comp_id);
                close(link, poller, "store failed");
                return None;
            }
        }
        Some(k)
    }

    /// Closes the connections that did not log on in time. Returns whether any.
    pub(super) fn expire(&mut self, poller: &Poller, now: u64) -> bool {
        let mut any = false;
        for place in &mut self.links {
            if place
                .as_ref()
                .is_some_and(|l| now.saturating_sub(l.since) > self.timeout)
            {
                if let Some(link) = place.take() {
                    close(link, poller, "no Logon in time");
                    any = true;
                }
            }
        }
        any
    }

    /// How many connections wait.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.links.iter().flatten().count()
    }
}

fn close(link: Link, poller: &Poller, why: &str) {
    if let Ok(peer) = link.stream.peer_addr() {
        eprintln!("fix-gateway: closing {peer}: {why}");
    }
    link.close(poller);
}
