//! Test support: runs a `peregrine_fix` session over a real TCP socket, so the tests
//! of this crate can put it face to face with QuickFIX (through the `quickfix`
//! crate; nothing but tests depends on this crate, so no binary links QuickFIX).
//!
//! [`FixConn`] is a minimal, single-threaded I/O shell (non-blocking socket, the
//! wall clock as the session's clock). The gateway has its own shell; this one
//! exists so the session layer is tested against a third-party engine on its own.

pub mod acceptance;
pub mod qf;

use peregrine_types::wall_ns;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};

use peregrine_fix::session::{DisconnectReason, Event, Received, Session};
use peregrine_fix::store::MessageStore;

/// One session on one TCP connection.
#[derive(Debug)]
pub struct FixConn<S: MessageStore> {
    /// The session (public: tests send through it and read its store).
    pub session: Session<S>,
    stream: TcpStream,
    rx: Vec<u8>,
    len: usize,
    closed: Option<DisconnectReason>,
}

impl<S: MessageStore> FixConn<S> {
    /// Wraps a connected stream; calls `Session::connect` (an initiator sends its
    /// Logon on the first `pump`).
    pub fn new(stream: TcpStream, mut session: Session<S>) -> io::Result<Self> {
        stream.set_nonblocking(true)?;
        stream.set_nodelay(true)?;
        session.connect(wall_ns()).map_err(io::Error::other)?;
        let cap = session.config().limits.max_message() * 2;
        Ok(FixConn {
            session,
            stream,
            rx: vec![0; cap],
            len: 0,
            closed: None,
        })
    }

    /// Why the connection closed, once it has.
    pub fn closed(&self) -> Option<DisconnectReason> {
        self.closed
    }

    /// Reads what is there, hands every event to `on_event` (which may send through
    /// the session), runs the timers and writes what is pending. Returns `false`
    /// once the connection is closed.
    pub fn pump(
        &mut self,
        on_event: &mut dyn FnMut(&mut Session<S>, Event<'_>),
    ) -> io::Result<bool> {
        if self.closed.is_some() {
            return Ok(false);
        }
        let now = wall_ns();
        let mut close = None;
        match self.stream.read(&mut self.rx[self.len..]) {
            Ok(0) => close = Some(DisconnectReason::Requested),
            Ok(n) => self.len += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(_) => close = Some(DisconnectReason::Requested),
        }
        let mut used = 0;
        while close.is_none() {
            match self
                .session
                .receive(&self.rx[used..self.len], now)
                .map_err(io::Error::other)?
            {
                Received::NeedMore => break,
                Received::Consumed { len, event } => {
                    used += len;
                    if let Some(Event::Disconnect(r)) = event {
                        close = Some(r);
                    }
                    if let Some(e) = event {
                        on_event(&mut self.session, e);
                    }
                }
            }
        }
        self.rx.copy_within(used..self.len, 0);
        self.len -= used;
        if close.is_none() {
            if let Some(e) = self.session.poll(now).map_err(io::Error::other)? {
                if let Event::Disconnect(r) = e {
                    close = Some(r);
                }
                on_event(&mut self.session, e);
            }
        }
        self.write_out(close.is_some())?;
        if let Some(r) = close {
            let _ = self.stream.shutdown(Shutdown::Both);
            self.session.disconnected();
            self.closed = Some(r);
            return Ok(false);
        }
        Ok(true)
    }

    fn write_out(&mut self, all: bool) -> io::Result<()> {
        loop {
            let out = self.session.outbound().map_err(io::Error::other)?;
            if out.is_empty() {
                return Ok(());
            }
            match self.stream.write(out) {
                Ok(n) => self.session.consume_outbound(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && !all => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::yield_now(),
                Err(e) => return Err(e),
            }
        }
    }
}

impl<S: MessageStore> FixConn<S> {
    /// The session back, for the next connection.
    pub fn into_session(self) -> Session<S> {
        self.session
    }
}
