//! A blocking order-entry connection (protocol version 2): connect, answer the
//! challenge with the account's key, read the instrument definitions, drive the
//! recovery phase (the reports missed since `resume_from`, or an open-orders
//! snapshot), then send requests and read reports, every message checked by
//! [`ClientSession`] (session and report-stream continuity). What the load generator,
//! the admin client, the gateways and the order engine use. The load generator takes
//! its socket and receive buffer over once logged in ([`Connection::into_parts`]) and
//! goes non-blocking.
//!
//! ```no_run
//! # use peregrine_client::order_entry::Connection;
//! # use peregrine_wire::v2::client::LoginParams;
//! # fn f(key: peregrine_wire::auth::AccountKey) -> Result<(), Box<dyn std::error::Error>> {
//! let params = LoginParams::trading(peregrine_types::AccountId(1), 42); // resume at report 42
//! let (mut c, login) = Connection::connect("127.0.0.1:7700".parse()?, params, key,
//!     std::time::Duration::from_secs(5))?;
//! c.recover(|report| println!("missed: {report:?}"))?;
//! // ... c.request(&order, RequestRef::NewOrder(id), |other| ...) ...
//! # Ok(()) }
//! ```

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use peregrine_wire::auth::AccountKey;
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::v2::client::{ClientSession, LoginParams, Phase, Step};
use peregrine_wire::v2::reference::InstrumentDefinition;
use peregrine_wire::v2::session::LoginAccepted;
use peregrine_wire::v2::{Outbound, RequestRef};
use peregrine_wire::{WireMessage, MAX_MESSAGE_SIZE};

use crate::error::ClientError;

mod redirect;

pub use redirect::{
    parse_addrs, resolve_leader, BadAddress, LeaderWalk, Next, BACKOFF_MAX, BACKOFF_MIN,
    MAX_HOPS_PER_ROUND,
};

/// Bytes of a connection's receive buffer.
pub const RX: usize = 64 * 1024;

/// The receive buffer type of a connection.
pub type Rx = Box<RecvBuffer<RX>>;

fn io(what: &'static str) -> impl FnOnce(std::io::Error) -> ClientError {
    move |source| ClientError::Io {
        what: what.into(),
        source,
    }
}

/// What a successful login returned.
#[derive(Debug, Clone)]
pub struct LoginInfo {
    /// The exchange's answer (stream position, heartbeat interval, ...).
    pub accepted: LoginAccepted,
    /// Every instrument definition.
    pub instruments: Vec<InstrumentDefinition>,
}

/// What the recovery phase brought.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recovered {
    /// Reports replayed.
    pub replayed: u64,
    /// 0, or the recovery reason code when the position was lost (then an
    /// open-orders snapshot came instead).
    pub reason: u16,
    /// Open orders in that snapshot.
    pub snapshot_orders: u64,
}

/// A logged-in version-2 session.
#[derive(Debug)]
pub struct Connection {
    stream: TcpStream,
    rx: Rx,
    session: ClientSession,
    key: AccountKey,
}

impl Connection {
    /// Connects to `addr` (`timeout` for the connect and every later read and write),
    /// logs in with `key` and reads the instrument definitions. The recovery phase
    /// comes next: call [`Connection::recover`]. A cluster node that is not the leader
    /// answers [`ClientError::Redirected`] ([`Connection::connect_any`] follows it).
    pub fn connect(
        addr: SocketAddr,
        params: LoginParams,
        key: AccountKey,
        timeout: Duration,
    ) -> Result<(Connection, LoginInfo), ClientError> {
        Self::connect_with_flags(addr, params, 0, key, timeout)
    }

    /// [`Connection::connect`] with session options in `Login.flags`, e.g.
    /// [`peregrine_wire::v2::session::LOGIN_CANCEL_ON_DISCONNECT`].
    pub fn connect_with_flags(
        addr: SocketAddr,
        params: LoginParams,
        flags: u8,
        key: AccountKey,
        timeout: Duration,
    ) -> Result<(Connection, LoginInfo), ClientError> {
        let stream = TcpStream::connect_timeout(&addr, timeout).map_err(io("connecting"))?;
        stream
            .set_nodelay(true)
            .map_err(io("setting TCP_NODELAY"))?;
        stream
            .set_read_timeout(Some(timeout))
            .map_err(io("setting the read timeout"))?;
        stream
            .set_write_timeout(Some(timeout))
            .map_err(io("setting the write timeout"))?;
        let mut c = Connection {
            stream,
            rx: Box::new(RecvBuffer::new()),
            session: ClientSession::new(params).with_login_flags(flags),
            key,
        };
        let mut accepted = None;
        let mut instruments = Vec::new();
        loop {
            let (step, msg) = c.read_next()?;
            match step {
                Step::SendLogin(l) => c.send(&l)?,
                Step::LoggedIn(a) => accepted = Some(a),
                Step::Rejected {
                    reason,
                    retry_after_ms,
                } => {
                    return Err(ClientError::LoginRejected {
                        account: params.account.0,
                        reason,
                        retry_after_ms,
                    })
                }
                Step::Instrument => {
                    if let Outbound::InstrumentDefinition(d) = msg {
                        instruments.push(d);
                    }
                }
                _ => {}
            }
            if let (Some(accepted), Phase::AwaitReplay) = (accepted, c.session.phase()) {
                return Ok((
                    c,
                    LoginInfo {
                        accepted,
                        instruments,
                    },
                ));
            }
        }
    }

    /// Reads the recovery phase to its end, handing every replayed report (and every
    /// line of an open-orders snapshot) to `on_report`.
    pub fn recover(
        &mut self,
        mut on_report: impl FnMut(&Outbound),
    ) -> Result<Recovered, ClientError> {
        let mut done = Recovered {
            replayed: 0,
            reason: 0,
            snapshot_orders: 0,
        };
        while self.session.phase() != Phase::Live {
            let (step, msg) = self.read_next()?;
            match step {
                Step::RecoveryStarted { reason, .. } => done.reason = reason,
                Step::Report { .. } => {
                    done.replayed += 1;
                    on_report(&msg);
                }
                Step::SnapshotOrder => {
                    done.snapshot_orders += 1;
                    on_report(&msg);
                }
                _ => {}
            }
        }
        Ok(done)
    }

    /// Sends `request` and reads until its terminal answer (`want`), which it returns;
    /// every other message read meanwhile goes to `on_other`, in order.
    pub fn request<M: WireMessage>(
        &mut self,
        request: &M,
        want: RequestRef,
        mut on_other: impl FnMut(&Outbound),
    ) -> Result<Outbound, ClientError> {
        self.send(request)?;
        loop {
            let (_, msg) = self.read_next()?;
            if msg.terminal() == Some(want) {
                return Ok(msg);
            }
            on_other(&msg);
        }
    }

    /// Sends one message.
    pub fn send<M: WireMessage>(&mut self, m: &M) -> Result<(), ClientError> {
        let mut buf = [0u8; MAX_MESSAGE_SIZE];
        let n = m.encode(&mut buf)?;
        self.stream.write_all(&buf[..n]).map_err(io("sending"))
    }

    /// Reads the next message (blocking, up to the timeout) and what it means. A
    /// `LeaderRedirect` (a cluster node that is not the leader, instead of the
    /// challenge; or a leader that lost its quorum, as a session's last message) is
    /// [`ClientError::Redirected`]: log in where it says ([`LeaderWalk::failed`]).
    pub fn read_next(&mut self) -> Result<(Step, Outbound), ClientError> {
        loop {
            if let Some(m) = self.rx.next(Outbound::decode)? {
                let step = self.session.on_message(&m, &self.key)?;
                if let Step::Redirect {
                    leader_id,
                    address,
                    retry_after_ms,
                } = step
                {
                    return Err(ClientError::Redirected {
                        leader_id,
                        address: address.and_then(|a| a.as_text().map(str::to_owned)),
                        retry_after_ms,
                    });
                }
                return Ok((step, m));
            }
            let n = self.stream.read(self.rx.spare()).map_err(io("reading"))?;
            if n == 0 {
                return Err(ClientError::Closed("while reading"));
            }
            self.rx.commit(n);
        }
    }

    /// What to resume from after a disconnect (persist it).
    pub fn resume_point(&self) -> u64 {
        self.session.resume_point()
    }

    /// The protocol state (phase, positions).
    pub fn session(&self) -> &ClientSession {
        &self.session
    }

    /// The socket (to change timeouts or make it non-blocking).
    pub fn socket(&self) -> &TcpStream {
        &self.stream
    }

    /// The socket, the receive buffer (which may already hold the start of the next
    /// messages) and the protocol state, for a caller that drives the socket itself.
    pub fn into_parts(self) -> (TcpStream, Rx, ClientSession) {
        (self.stream, self.rx, self.session)
    }
}
