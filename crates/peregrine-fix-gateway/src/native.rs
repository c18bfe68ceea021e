//! The exchange side: one native order-entry session (protocol v2) per FIX session,
//! kept connected whether or not the FIX client is, so reports reach the FIX store
//! (and the client by resend) while the client is away.
//!
//! The session logs in with the account's key (challenge-response) and asks for the
//! account's report stream from the position the bridge stored: the exchange replays
//! every report the gateway missed — while it was disconnected or not running —
//! before live traffic, and [`peregrine_wire::v2::client::ClientSession`] checks that
//! none is skipped or repeated. New requests wait for the end of the replay.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use peregrine_fix::store::MessageStore;
use peregrine_types::AccountId;
use peregrine_wire::auth::AccountKey;
use peregrine_wire::session::ClientHeartbeat;
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::v2::client::{ClientSession, LoginParams, Phase, Step};
use peregrine_wire::v2::Outbound;

use crate::bridge::{push_native, Bridge};
use crate::poller::{Poller, Watch};

const RX: usize = 16 * 1024;
const HEARTBEAT_MS: u32 = 1000;
const RECONNECT_NS: u64 = 1_000_000_000;
const READS_PER_PUMP: usize = 8;

/// One native session.
#[derive(Debug)]
pub(crate) struct NativeConn {
    addr: SocketAddr,
    account: AccountId,
    key: AccountKey,
    session: Option<ClientSession>,
    stream: Option<TcpStream>,
    /// `stream`'s membership of the gateway's epoll set.
    watch: Watch,
    rx: Box<RecvBuffer<RX>>,
    out: Vec<u8>,
    sent: usize,
    heartbeat_ns: u64,
    last_tx: u64,
    last_rx: u64,
    next_connect: u64,
}

impl NativeConn {
    pub fn new(addr: SocketAddr, account: u32, key: AccountKey) -> Self {
        NativeConn {
            addr,
            account: AccountId(account),
            key,
            session: None,
            stream: None,
            watch: Watch::default(),
            rx: Box::new(RecvBuffer::new()),
            out: Vec::with_capacity(4096),
            sent: 0,
            heartbeat_ns: u64::from(HEARTBEAT_MS) * 1_000_000,
            last_tx: 0,
            last_rx: 0,
            next_connect: 0,
        }
    }

    /// Connects when due, reads and hands reports to the bridge, takes the bridge's
    /// requests, heartbeats, writes. Returns whether anything happened.
    pub fn pump(&mut self, bridge: &mut Bridge, now: u64) -> bool {
        if self.stream.is_none() {
            if now < self.next_connect {
                return false;
            }
            self.connect(bridge, now);
            return true;
        }
        let mut busy = false;
        for _ in 0..READS_PER_PUMP {
            let Some(stream) = self.stream.as_mut() else {
                return true;
            };
            let spare = self.rx.spare();
            match stream.read(spare) {
                Ok(0) => return self.lost(bridge, now, "exchange closed the connection"),
                Ok(n) => {
                    self.rx.commit(n);
                    self.last_rx = now;
                    busy = true;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => return self.lost(bridge, now, "read error"),
            }
            loop {
                match self.rx.next(Outbound::decode) {
                    Ok(Some(msg)) => {
                        if let Err(why) = self.on_message(bridge, &msg, now) {
                            return self.lost(bridge, now, &why);
                        }
                        if self.stream.is_none() {
                            return true;
                        }
                    }
                    Ok(None) => break,
                    Err(_) => return self.lost(bridge, now, "undecodable frame from the exchange"),
                }
            }
        }
        busy |= self.flush(bridge, now);
        if now.saturating_sub(self.last_rx) > 3 * self.heartbeat_ns {
            return self.lost(bridge, now, "exchange silent for three heartbeat intervals");
        }
        busy
    }

    /// Takes the bridge's requests and writes what can be written.
    pub fn flush(&mut self, bridge: &mut Bridge, now: u64) -> bool {
        if self.stream.is_none() {
            return false;
        }
        if !bridge.native_out.is_empty() {
            // The requests' state reaches the store before the requests leave.
            bridge.checkpoint();
            if let Err(e) = bridge.session.store_mut().flush() {
                eprintln!("fix-gateway: message store failed: {e}");
                bridge.native_out.clear();
                return false;
            }
            self.out.extend_from_slice(&bridge.native_out);
            bridge.native_out.clear();
        }
        let logged_in = self.logged_in();
        let Some(stream) = self.stream.as_mut() else {
            return false;
        };
        if logged_in
            && self.out.len() == self.sent
            && now.saturating_sub(self.last_tx) >= self.heartbeat_ns
        {
            push_native(&mut self.out, &ClientHeartbeat {});
        }
        if self.out.len() == self.sent {
            return false;
        }
        match stream.write(&self.out[self.sent..]) {
            Ok(n) => {
                self.sent += n;
                self.last_tx = now;
                if self.sent == self.out.len() {
                    self.out.clear();
                    self.sent = 0;
                }
                true
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => false,
            Err(_) => self.lost(bridge, now, "write error"),
        }
    }

    fn logged_in(&self) -> bool {
        self.session.as_ref().is_some_and(|s| {
            !matches!(
                s.phase(),
                Phase::AwaitChallenge | Phase::AwaitAnswer | Phase::Closed
            )
        })
    }

    /// Nanoseconds from `now` until [`NativeConn::pump`] or [`NativeConn::flush`]
    /// has a timer to act on: the reconnect, the heartbeat (when nothing waits to be
    /// written: a backlog waits for room to write instead), the silence limit.
    pub fn due_in(&self, now: u64) -> u64 {
        if self.stream.is_none() {
            return self.next_connect.saturating_sub(now);
        }
        let silent = self.last_rx + 3 * self.heartbeat_ns + 1;
        let mut due = silent.saturating_sub(now);
        if self.logged_in() && self.out.len() == self.sent {
            due = due.min((self.last_tx + self.heartbeat_ns).saturating_sub(now));
        }
        due
    }

    /// Before the loop blocks: keeps the exchange connection in `poller`, waking for
    /// room to write while requests are backed up.
    pub fn watch(&mut self, poller: &Poller) {
        if let Some(stream) = &self.stream {
            self.watch.sync(poller, stream, self.out.len() > self.sent);
        }
    }

    fn on_message(&mut self, bridge: &mut Bridge, msg: &Outbound, now: u64) -> Result<(), String> {
        let Some(session) = self.session.as_mut() else {
            return Ok(());
        };
        let step = session
            .on_message(msg, &self.key)
            .map_err(|v| format!("protocol violation: {v}"))?;
        match step {
            Step::SendLogin(login) => push_native(&mut self.out, &login),
            Step::LoggedIn(a) => {
                self.heartbeat_ns = u64::from(a.heartbeat_interval_ms.max(100)) * 1_000_000;
                eprintln!(
                    "fix-gateway: exchange session for account {} logged in (report stream at {}, resuming from {})",
                    self.account.0,
                    a.next_report_seq,
                    bridge.resume_point()
                );
            }
            Step::Rejected {
                reason,
                retry_after_ms,
            } => {
                eprintln!(
                    "fix-gateway: exchange refused the login of account {} (reason {reason})",
                    self.account.0
                );
                self.stream = None;
                self.session = None;
                self.next_connect =
                    now + (5 * RECONNECT_NS).max(u64::from(retry_after_ms) * 1_000_000);
            }
            // A cluster node that is not the leader: the gateway keeps its one
            // configured address and tries it again later.
            Step::Redirect {
                leader_id,
                address,
                retry_after_ms,
            } => {
                eprintln!(
                    "fix-gateway: account {}: the exchange node is not the leader (leader {leader_id} at {:?})",
                    self.account.0,
                    address.as_ref().and_then(|a| a.as_text()).unwrap_or("")
                );
                self.stream = None;
                self.session = None;
                self.next_connect = now + RECONNECT_NS.max(u64::from(retry_after_ms) * 1_000_000);
            }
            Step::RecoveryStarted { replay, reason } => {
                if reason != 0 {
                    // The exchange no longer holds the reports from the stored
                    // position (retention): they cannot be replayed.
                    eprintln!(
                        "fix-gateway: account {}: the exchange cannot replay from report {} (reason {reason}); reports in between are lost to the FIX client",
                        self.account.0,
                        bridge.resume_point()
                    );
                } else if replay > 0 {
                    eprintln!(
                        "fix-gateway: account {}: {replay} missed report(s) replayed",
                        self.account.0
                    );
                }
            }
            Step::Report { .. } => bridge
                .on_native(msg, now)
                .map_err(|e| format!("message store failed: {e}"))?,
            Step::RecoveryDone => bridge.native_recovered(now),
            Step::Other if msg.is_report_type() => bridge
                .on_native(msg, now)
                .map_err(|e| format!("message store failed: {e}"))?,
            Step::Instrument | Step::SnapshotOrder | Step::Other => {}
        }
        Ok(())
    }

    fn connect(&mut self, bridge: &Bridge, now: u64) {
        self.next_connect = now + RECONNECT_NS;
        let Ok(stream) = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200)) else {
            return;
        };
        if stream.set_nonblocking(true).is_err() || stream.set_nodelay(true).is_err() {
            return;
        }
        *self.rx = RecvBuffer::new();
        self.out.clear();
        self.sent = 0;
        let mut params = LoginParams::trading(self.account, bridge.resume_point());
        params.heartbeat_ms = HEARTBEAT_MS;
        self.session = Some(ClientSession::new(params));
        self.last_rx = now;
        self.last_tx = 0;
        self.stream = Some(stream);
        self.watch = Watch::default();
    }

    fn lost(&mut self, bridge: &mut Bridge, now: u64, why: &str) -> bool {
        eprintln!(
            "fix-gateway: exchange session of account {} lost: {why}",
            self.account.0
        );
        self.stream = None;
        self.session = None;
        self.next_connect = now + RECONNECT_NS;
        bridge.native_lost(now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn due_in_names_the_nearest_native_timer() {
        let key = AccountKey::from_hex(&"11".repeat(32)).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = NativeConn::new(listener.local_addr().unwrap(), 1, key);
        c.next_connect = 5_000;
        assert_eq!(c.due_in(1_000), 4_000, "disconnected: the reconnect");
        assert_eq!(c.due_in(9_000), 0, "overdue: no wait at all");
        c.stream = Some(TcpStream::connect(listener.local_addr().unwrap()).unwrap());
        c.last_rx = 1_000;
        assert_eq!(
            c.due_in(1_000),
            3 * c.heartbeat_ns + 1,
            "not logged in: only the silence limit"
        );
    }
}
