//! The exchange side: one native order-entry session (protocol v2) per FIX session,
//! kept connected whether or not the FIX client is, so reports reach the FIX store
//! (and the client by resend) while the client is away.
//!
//! The session logs in with the account's key (challenge-response) and asks for the
//! account's report stream from the position the bridge stored: the exchange replays
//! every report the gateway missed — while it was disconnected or not running —
//! before live traffic, and [`peregrine_wire::v2::client::ClientSession`] checks that
//! none is skipped or repeated. New requests wait for the end of the replay.
//!
//! **A cluster.** The configured addresses (one, or a cluster's nodes) are walked
//! with [`LeaderWalk`]: a node that is not the leader answers `LeaderRedirect` and
//! the session goes to the leader it names at once (logged); a node that is down,
//! refuses or closes passes to the next; a round of the list with no leader waits
//! (the largest `retry_after_ms` asked for, else a doubling backoff) before the next.
//! Once logged in, the session remembers where: after it is lost it tries that
//! node first (after [`LOST_PAUSE_NS`]), then the others. The report stream is the
//! cluster's, so the new leader replays from the position the bridge stored as
//! the old one would have.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use peregrine_client::order_entry::{LeaderWalk, Next};
use peregrine_fix::store::MessageStore;
use peregrine_types::AccountId;
use peregrine_wire::auth::AccountKey;
use peregrine_wire::session::ClientHeartbeat;
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::v2::client::{ClientSession, LoginParams, Phase, Step};
use peregrine_wire::v2::Outbound;

use crate::bridge::{push_native, Bridge};
use crate::poller::{Poller, Token, Watch};

const RX: usize = 16 * 1024;
const HEARTBEAT_MS: u32 = 1000;
/// The wait after a rejected login (at least; longer if the exchange asks).
const REJECTED_PAUSE_NS: u64 = 5_000_000_000;
/// The wait before reconnecting after a logged-in session is lost (a session that
/// drops right after each login cannot make the gateway spin).
pub(crate) const LOST_PAUSE_NS: u64 = 100_000_000;
/// How long a connect may take (it blocks the gateway's loop).
const CONNECT_TIMEOUT: Duration = Duration::from_millis(200);
const READS_PER_PUMP: usize = 8;

/// One native session.
#[derive(Debug)]
pub(crate) struct NativeConn {
    /// Which exchange node to try next.
    walk: LeaderWalk,
    /// The node of the current (or last) connection.
    addr: Option<SocketAddr>,
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
    /// What the last failed connect said (logged once while it repeats).
    last_down: String,
    next_connect: u64,
}

impl NativeConn {
    pub(crate) fn new(addrs: Vec<SocketAddr>, account: u32, key: AccountKey) -> Self {
        NativeConn {
            walk: LeaderWalk::new(addrs),
            addr: None,
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
            last_down: String::new(),
        }
    }

    /// Connects when due; reads (when the loop saw the socket readable) and hands
    /// reports to the bridge; takes the bridge's requests, heartbeats, writes; checks
    /// the exchange's silence. Returns whether anything happened. The loop calls it
    /// when the socket is ready and on its timer passes (`readable` false: no `read`
    /// that would only say `WouldBlock`).
    pub(crate) fn pump(&mut self, bridge: &mut Bridge, now: u64, readable: bool) -> bool {
        if self.stream.is_none() {
            if now < self.next_connect {
                return false;
            }
            // Only an attempt is work: a round's end that only sets the next one is
            // not (an idle loop with the exchange down must be able to park).
            return self.connect(bridge, now);
        }
        let mut busy = false;
        if readable {
            match self.read(bridge, now) {
                Ok(b) => busy = b,
                Err(why) => return self.lost(bridge, now, &why),
            }
            if self.stream.is_none() {
                return true;
            }
        }
        busy |= self.flush(bridge, now);
        if self.stream.is_some() && now.saturating_sub(self.last_rx) > 3 * self.heartbeat_ns {
            return self.lost(bridge, now, "exchange silent for three heartbeat intervals");
        }
        busy
    }

    /// Reads (up to [`READS_PER_PUMP`] times: level-triggered epoll reports a socket
    /// with input left over again) and hands every whole message to the session and
    /// the bridge. `Err` names why the connection must go.
    fn read(&mut self, bridge: &mut Bridge, now: u64) -> Result<bool, String> {
        let mut busy = false;
        for _ in 0..READS_PER_PUMP {
            let Some(stream) = self.stream.as_mut() else {
                return Ok(true);
            };
            let spare = self.rx.spare();
            let room = spare.len();
            // A read that did not fill the buffer most likely drained the socket: no
            // second `read` just to hear `WouldBlock` (if more came meanwhile, the
            // level-triggered set reports the socket again).
            let drained = match stream.read(spare) {
                Ok(0) => return Err("exchange closed the connection".into()),
                Ok(n) => {
                    self.rx.commit(n);
                    self.last_rx = now;
                    busy = true;
                    n < room
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => return Err("read error".into()),
            };
            loop {
                match self.rx.next(Outbound::decode) {
                    Ok(Some(msg)) => {
                        self.on_message(bridge, &msg, now)?;
                        if self.stream.is_none() {
                            return Ok(true);
                        }
                    }
                    Ok(None) => break,
                    Err(_) => return Err("undecodable frame from the exchange".into()),
                }
            }
            if drained {
                break;
            }
        }
        Ok(busy)
    }

    /// Takes the bridge's requests and writes what can be written.
    pub(crate) fn flush(&mut self, bridge: &mut Bridge, now: u64) -> bool {
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
    pub(crate) fn due_in(&self, now: u64) -> u64 {
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

    /// After the loop served this session: a new exchange connection joins the epoll
    /// set under `token`, and the set reports room to write while requests are backed
    /// up. A connection that cannot join is dropped (it would never be read) and
    /// retried like any lost one. A dropped connection needs nothing here: closing it
    /// takes it out of the set, and the next one comes with a fresh [`Watch`].
    pub(crate) fn watch(&mut self, poller: &Poller, token: Token, bridge: &mut Bridge, now: u64) {
        let Some(stream) = &self.stream else {
            return;
        };
        if !self.watch.is_registered() {
            if let Err(e) = self.watch.register(poller, stream, token) {
                self.lost(bridge, now, &format!("cannot watch the socket: {e}"));
                return;
            }
        }
        self.watch
            .want_write(poller, stream, self.out.len() > self.sent);
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
                if let Some(at) = self.addr {
                    self.walk.logged_in(at);
                }
                self.last_down.clear();
                eprintln!(
                    "fix-gateway: exchange session for account {} logged in at {} (report stream at {}, resuming from {})",
                    self.account.0,
                    self.shown_addr(),
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
                    now + REJECTED_PAUSE_NS.max(u64::from(retry_after_ms) * 1_000_000);
            }
            // A cluster node that is not the leader: on to the leader it names at
            // once, else (none known yet) to the next node; the walk paces rounds.
            Step::Redirect {
                leader_id,
                address,
                retry_after_ms,
            } => {
                let text = address.as_ref().and_then(|a| a.as_text());
                let to = self.walk.redirected_to(text, retry_after_ms);
                match to {
                    Some(to) => eprintln!(
                        "fix-gateway: account {}: exchange node {} is not the leader; following the redirect to leader {leader_id} at {to}",
                        self.account.0,
                        self.shown_addr()
                    ),
                    None => self.down(&format!(
                        "exchange node {} is not the leader (leader {leader_id} at {:?}, not followed: none known, unresolvable or too many hops this round); trying the next node",
                        self.shown_addr(),
                        text.unwrap_or("")
                    )),
                }
                self.stream = None;
                self.session = None;
                self.next_connect = now;
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

    /// The node of the current (or last) connection, for logs.
    fn shown_addr(&self) -> String {
        self.addr.map_or_else(|| "?".into(), |a| a.to_string())
    }

    /// Connects to the node the walk names (a failure passes to the next node at
    /// the next pump), or waits as it says.
    /// Tries the next address (returns `true`), or only schedules the next round.
    fn connect(&mut self, bridge: &Bridge, now: u64) -> bool {
        let addr = match self.walk.next() {
            Next::Try(addr) => addr,
            Next::Wait(d) => {
                let d = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
                self.next_connect = now.saturating_add(d);
                return false;
            }
        };
        self.addr = Some(addr);
        self.next_connect = now;
        let stream = match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
            Ok(s) => s,
            Err(e) => {
                self.down(&format!("connecting to {addr}: {e}"));
                return true;
            }
        };
        if stream.set_nonblocking(true).is_err() || stream.set_nodelay(true).is_err() {
            return true;
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
        true
    }

    /// Logs a failed attempt once per kind in a row, whichever node it was at (a
    /// cluster down for a while would fill the log otherwise).
    fn down(&mut self, why: &str) {
        let kind = self
            .addr
            .map_or_else(|| why.to_owned(), |a| why.replace(&a.to_string(), "<node>"));
        if self.last_down != kind {
            eprintln!(
                "fix-gateway: exchange session of account {}: {why}",
                self.account.0
            );
            self.last_down = kind;
        }
    }

    fn lost(&mut self, bridge: &mut Bridge, now: u64, why: &str) -> bool {
        let was_logged_in = self.logged_in();
        eprintln!(
            "fix-gateway: exchange session of account {} at {} lost: {why}",
            self.account.0,
            self.shown_addr()
        );
        self.stream = None;
        self.session = None;
        // A logged-in session pauses before going back (see LOST_PAUSE_NS); a node
        // that closed before the login answer passes to the next at once.
        self.next_connect = if was_logged_in {
            now + LOST_PAUSE_NS
        } else {
            now
        };
        bridge.native_lost(now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::sync::Arc;

    use peregrine_client::order_entry::BACKOFF_MIN;
    use peregrine_fix::session::{Role, Session, SessionConfig};
    use peregrine_fix::store::{Durability, FileStore};
    use peregrine_types::Timestamp;
    use peregrine_wire::field::{LeaderAddress, Pad};
    use peregrine_wire::v2::session::LeaderRedirect;
    use peregrine_wire::WireMessage;

    use crate::config::InstrumentConfig;

    fn key() -> AccountKey {
        AccountKey::from_hex(&"11".repeat(32)).unwrap()
    }

    fn bridge(dir: &std::path::Path) -> Bridge {
        let store = FileStore::open(&dir.join("s"), Durability::OsBuffer, 1).unwrap();
        let session = Session::new(SessionConfig::new(Role::Acceptor, "PEREGRINE", "C1"), store);
        let instruments: Arc<[InstrumentConfig]> = Vec::new().into();
        Bridge::new(session, 1, instruments, 1000).unwrap()
    }

    /// An address nothing listens on.
    fn refusing() -> SocketAddr {
        TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
    }

    #[test]
    fn a_redirect_is_followed_past_a_dead_node() {
        let dir = tempfile::tempdir().unwrap();
        let mut bridge = bridge(dir.path());
        let leader = TcpListener::bind("127.0.0.1:0").unwrap();
        let leader_addr = leader.local_addr().unwrap();
        let follower = TcpListener::bind("127.0.0.1:0").unwrap();
        let follower_addr = follower.local_addr().unwrap();
        let redirect = std::thread::spawn(move || {
            let (mut s, _) = follower.accept().unwrap();
            let m = LeaderRedirect {
                session_seq: 1,
                engine_seq: 0,
                engine_time: Timestamp(0),
                leader_id: 3,
                retry_after_ms: 0,
                reserved: Pad,
                address: LeaderAddress::from_text(&leader_addr.to_string()).unwrap(),
            };
            let mut buf = [0u8; 512];
            let n = m.encode(&mut buf).unwrap();
            s.write_all(&buf[..n]).unwrap();
            s
        });
        let mut c = NativeConn::new(vec![refusing(), follower_addr], 1, key());
        // The dead node passes to the follower at once, whose redirect (once it
        // arrives) leads to the leader at once: the clock never has to move.
        let now = 1_000;
        let hang_guard = std::time::Instant::now() + Duration::from_secs(60);
        while c.addr != Some(leader_addr) {
            assert!(
                std::time::Instant::now() < hang_guard,
                "never reached the leader"
            );
            c.pump(&mut bridge, now, true);
            assert!(c.due_in(now) == 0 || c.stream.is_some(), "no wait needed");
            std::thread::yield_now();
        }
        assert!(c.stream.is_some());
        drop(redirect.join().unwrap());
        let (_at_leader, _) = leader.accept().unwrap();
    }

    #[test]
    fn a_round_of_dead_nodes_waits_instead_of_spinning() {
        let dir = tempfile::tempdir().unwrap();
        let mut bridge = bridge(dir.path());
        let (a, b) = (refusing(), refusing());
        let mut c = NativeConn::new(vec![a, b], 1, key());
        let now = 1_000;
        let mut tried = Vec::new();
        while c.due_in(now) == 0 {
            c.pump(&mut bridge, now, true);
            tried.extend(c.addr.filter(|x| tried.last() != Some(x)));
            assert!(tried.len() <= 2, "{tried:?}");
        }
        assert_eq!(tried, [a, b]);
        assert_eq!(
            c.due_in(now),
            u64::try_from(BACKOFF_MIN.as_nanos()).unwrap(),
            "the round is over: the walk's backoff"
        );
        // After the wait, the next round starts again at the first node.
        let later = now + c.due_in(now);
        c.pump(&mut bridge, later, true);
        assert_eq!(c.addr, Some(a));
    }

    #[test]
    fn due_in_names_the_nearest_native_timer() {
        let key = AccountKey::from_hex(&"11".repeat(32)).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = NativeConn::new(vec![listener.local_addr().unwrap()], 1, key);
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
