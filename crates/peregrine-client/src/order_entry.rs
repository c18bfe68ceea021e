//! An order-entry connection to the exchange: connect, log in, send requests and
//! read answers, blocking with timeouts. The load generator takes its socket and
//! receive buffer over once logged in ([`Connection::into_parts`]) and goes
//! non-blocking; the admin client uses it as it is.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use peregrine_types::AccountId;
use peregrine_wire::session::{Login, LoginAccepted};
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::{Credential, Outbound, WireMessage, MAX_MESSAGE_SIZE};

use crate::error::{ClientError, IoContext};

/// Bytes of a connection's receive buffer.
pub const RX: usize = 64 * 1024;

/// The receive buffer type of a connection.
pub type Rx = Box<RecvBuffer<RX>>;

/// A logged-in order-entry session.
#[derive(Debug)]
pub struct Connection {
    stream: TcpStream,
    rx: Rx,
}

impl Connection {
    /// Connects to `addr` (with `timeout` for the connect and every later read and
    /// write), logs in as `account` and waits for the answer.
    pub fn login(
        addr: SocketAddr,
        account: AccountId,
        password: &str,
        timeout: Duration,
    ) -> Result<(Connection, LoginAccepted), ClientError> {
        let stream =
            TcpStream::connect_timeout(&addr, timeout).doing(|| format!("connecting to {addr}"))?;
        let setup = || -> std::io::Result<()> {
            stream.set_nodelay(true)?;
            stream.set_read_timeout(Some(timeout))?;
            stream.set_write_timeout(Some(timeout))
        };
        setup().doing(|| format!("setting up the socket to {addr}"))?;
        let credential = Credential::from_text(password)
            .ok_or_else(|| ClientError::Invalid("the password must be 1..=16 bytes".into()))?;
        let mut c = Connection {
            stream,
            rx: Box::new(RecvBuffer::new()),
        };
        c.send(&Login {
            account,
            heartbeat_interval_ms: 1000,
            credential,
        })?;
        match c.recv()? {
            Outbound::LoginAccepted(a) => Ok((c, a)),
            Outbound::LoginRejected(r) => Err(ClientError::LoginRejected {
                account: account.0,
                reason: r.reason.0,
            }),
            other => Err(ClientError::Unexpected(format!(
                "answer to Login: {other:?}"
            ))),
        }
    }

    /// Sends one message.
    pub fn send<M: WireMessage>(&mut self, m: &M) -> Result<(), ClientError> {
        let mut buf = [0u8; MAX_MESSAGE_SIZE];
        let n = m.encode(&mut buf)?;
        self.stream.write_all(&buf[..n]).doing(|| "sending".into())
    }

    /// The next message from the exchange (blocking, up to the timeout).
    pub fn recv(&mut self) -> Result<Outbound, ClientError> {
        loop {
            if let Some(m) = self.rx.next(Outbound::decode)? {
                return Ok(m);
            }
            let n = self
                .stream
                .read(self.rx.spare())
                .doing(|| "reading the answer".into())?;
            if n == 0 {
                return Err(ClientError::Closed("while an answer was awaited"));
            }
            self.rx.commit(n);
        }
    }

    /// The socket and the receive buffer (which may already hold the start of the
    /// next messages).
    pub fn into_parts(self) -> (TcpStream, Rx) {
        (self.stream, self.rx)
    }
}
