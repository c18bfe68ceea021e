//! The exchange side: one native order-entry session (protocol v1) per FIX session,
//! kept connected whether or not the FIX client is, so reports reach the FIX store
//! (and the client by resend) while the client is away.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use peregrine_types::AccountId;
use peregrine_wire::session::{ClientHeartbeat, Login};
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::{Credential, Outbound};

use crate::bridge::{push_native, Bridge};

const RX: usize = 16 * 1024;
const HEARTBEAT_MS: u32 = 1000;
const RECONNECT_NS: u64 = 1_000_000_000;
const READS_PER_PUMP: usize = 8;

/// One native session.
#[derive(Debug)]
pub(crate) struct NativeConn {
    addr: SocketAddr,
    account: AccountId,
    credential: Credential,
    stream: Option<TcpStream>,
    rx: Box<RecvBuffer<RX>>,
    out: Vec<u8>,
    sent: usize,
    heartbeat_ns: u64,
    last_tx: u64,
    last_rx: u64,
    next_connect: u64,
}

impl NativeConn {
    pub fn new(addr: SocketAddr, account: u32, credential: Credential) -> Self {
        NativeConn {
            addr,
            account: AccountId(account),
            credential,
            stream: None,
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
            self.connect(now);
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
                    Ok(Some(msg)) => self.on_message(bridge, &msg, now),
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
        let Some(stream) = self.stream.as_mut() else {
            return false;
        };
        if !bridge.native_out.is_empty() {
            self.out.extend_from_slice(&bridge.native_out);
            bridge.native_out.clear();
        }
        if self.out.len() == self.sent && now.saturating_sub(self.last_tx) >= self.heartbeat_ns {
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

    fn on_message(&mut self, bridge: &mut Bridge, msg: &Outbound, now: u64) {
        match msg {
            Outbound::LoginAccepted(m) => {
                self.heartbeat_ns = u64::from(m.heartbeat_interval_ms.max(100)) * 1_000_000;
                bridge.native_ready = true;
                eprintln!(
                    "fix-gateway: exchange session for account {} logged in",
                    self.account.0
                );
            }
            Outbound::LoginRejected(m) => {
                eprintln!(
                    "fix-gateway: exchange refused the login of account {} (reason {})",
                    self.account.0, m.reason.0
                );
                self.stream = None;
                self.next_connect = now + 5 * RECONNECT_NS;
            }
            other => {
                if let Err(e) = bridge.on_native(other, now) {
                    eprintln!("fix-gateway: message store failed: {e}");
                }
            }
        }
    }

    fn connect(&mut self, now: u64) {
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
        push_native(
            &mut self.out,
            &Login {
                account: self.account,
                heartbeat_interval_ms: HEARTBEAT_MS,
                credential: self.credential,
            },
        );
        self.last_rx = now;
        self.last_tx = 0;
        self.stream = Some(stream);
    }

    fn lost(&mut self, bridge: &mut Bridge, now: u64, why: &str) -> bool {
        eprintln!(
            "fix-gateway: exchange session of account {} lost: {why}",
            self.account.0
        );
        self.stream = None;
        self.next_connect = now + RECONNECT_NS;
        bridge.native_lost(now);
        true
    }
}
