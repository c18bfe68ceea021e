//! One configured session in the loop: its bridge, its exchange connection, its FIX
//! connection (when a client is logged on), and what the current iteration saw ready.
//!
//! [`Slot::serve`] is the session's whole turn, in the order an order walks: the
//! exchange's reports in (they become FIX reports), the client's requests in (they
//! become native requests), the requests out to the exchange, the reports out to the
//! client. It runs when one of the session's sockets is ready, right after a Logon
//! attaches a connection, and on the loop's timer passes.

use peregrine_fix::session::{Event, Received};
use peregrine_fix::store::MessageStore;

use crate::bridge::Bridge;
use crate::native::NativeConn;
use crate::poller::{Poller, Token};

use super::link::{write_out, Link};

/// One configured session.
#[derive(Debug)]
pub(super) struct Slot {
    pub comp_id: String,
    pub bridge: Bridge,
    pub native: NativeConn,
    pub fix: Option<Link>,
    /// This iteration: epoll reported the exchange connection ready.
    pub native_ready: bool,
    /// This iteration: epoll reported the FIX connection ready.
    pub fix_ready: bool,
    /// This iteration: the slot is in the loop's list of slots to serve.
    pub queued: bool,
    /// A FIX message taken from the session's gap queue, being handled.
    backlog: Vec<u8>,
}

impl Slot {
    pub(super) fn new(comp_id: String, bridge: Bridge, native: NativeConn) -> Slot {
        Slot {
            comp_id,
            bridge,
            native,
            fix: None,
            native_ready: false,
            fix_ready: false,
            queued: false,
            backlog: Vec::new(),
        }
    }

    /// The session's turn (see the module docs); `k` is its index (its tokens).
    /// Returns whether anything happened. Clears the iteration's readiness.
    pub(super) fn serve(&mut self, k: usize, poller: &Poller, now: u64, timers: bool) -> bool {
        let mut busy = false;
        if self.native_ready || timers {
            busy |= self.native.pump(&mut self.bridge, now, self.native_ready);
        }
        let mut close = self.fix_input(now);
        busy |= close.is_some();
        if !self.bridge.native_out.is_empty() {
            busy |= self.native.flush(&mut self.bridge, now);
        }
        busy |= self.fix_output(poller, now, &mut close);
        // What this turn stored reaches the file even while the client is away
        // (nothing to do, and no system call, when nothing was stored).
        if let Err(e) = self.bridge.session.store_mut().flush() {
            eprintln!("fix-gateway: {}: store failed: {e}", self.comp_id);
        }
        self.native
            .watch(poller, Token::Native(k), &mut self.bridge, now);
        self.native_ready = false;
        self.fix_ready = false;
        self.queued = false;
        busy
    }

    /// Reads the FIX connection (when epoll said so) and hands every whole frame in
    /// its buffer to the session and the bridge — also frames read earlier, such as
    /// the Logon a pending connection brought. Returns why the connection must close,
    /// if it must.
    fn fix_input(&mut self, now: u64) -> Option<&'static str> {
        let link = self.fix.as_mut()?;
        if self.fix_ready && link.read().is_err() {
            return Some("connection closed");
        }
        let mut used = 0;
        let mut close = None;
        while close.is_none() && used < link.len {
            let received = match self.bridge.session.receive(&link.rx[used..link.len], now) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("fix-gateway: {}: store failed: {e}", self.comp_id);
                    close = Some("store failed");
                    break;
                }
            };
            let Received::Consumed { len, event } = received else {
                break; // NeedMore: the rest of the frame comes with the next readiness
            };
            used += len;
            close = on_event(&mut self.bridge, &self.comp_id, event, now);
            // Messages that waited behind a gap this one filled, in order.
            while close.is_none() {
                match self.bridge.session.take_queued(&mut self.backlog) {
                    Ok(false) => break,
                    Ok(true) => {}
                    Err(e) => {
                        eprintln!("fix-gateway: {}: store failed: {e}", self.comp_id);
                        close = Some("store failed");
                        break;
                    }
                }
                close = match self.bridge.session.receive_queued(&self.backlog, now) {
                    Ok(Received::Consumed { event, .. }) => {
                        on_event(&mut self.bridge, &self.comp_id, event, now)
                    }
                    Ok(Received::NeedMore) => None,
                    Err(e) => {
                        eprintln!("fix-gateway: {}: store failed: {e}", self.comp_id);
                        Some("store failed")
                    }
                };
            }
        }
        link.consume(used);
        close
    }

    /// Runs the session's timers, writes its output, and closes the connection when
    /// `close` says so or the client stopped reading. Returns whether anything
    /// happened.
    fn fix_output(&mut self, poller: &Poller, now: u64, close: &mut Option<&'static str>) -> bool {
        let Some(link) = self.fix.as_mut() else {
            return false;
        };
        let session = &mut self.bridge.session;
        if close.is_none() {
            match session.poll(now) {
                Ok(Some(Event::Disconnect(r))) => *close = Some(r.text()),
                Ok(_) => {}
                Err(_) => *close = Some("store failed"),
            }
        }
        if close.is_none() && session.is_slow_consumer() {
            *close = Some("slow consumer: output not read");
        }
        let mut busy = false;
        if session.pending_outbound() > 0 {
            busy = write_out(session, &link.stream, close.is_some());
        }
        let Some(why) = *close else {
            // Output the socket would not take waits for room to write.
            let backlog = session.pending_outbound() > 0;
            link.watch.want_write(poller, &link.stream, backlog);
            return busy;
        };
        eprintln!("fix-gateway: {} disconnected: {why}", self.comp_id);
        if let Some(link) = self.fix.take() {
            link.close(poller);
        }
        self.bridge.session.disconnected();
        true
    }
}

/// Acts on what the session reported; returns why the connection must close, if it
/// must.
fn on_event(
    bridge: &mut Bridge,
    comp_id: &str,
    event: Option<Event<'_>>,
    now: u64,
) -> Option<&'static str> {
    match event {
        Some(Event::App(m)) => {
            if let Err(e) = bridge.on_fix_app(&m, now) {
                eprintln!("fix-gateway: {comp_id}: store failed: {e}");
                return Some("store failed");
            }
            None
        }
        Some(Event::LoggedOn {
            reset,
            heartbeat_secs,
        }) => {
            bridge.logged_on(reset);
            eprintln!(
                "fix-gateway: {comp_id} logged on (HeartBtInt {heartbeat_secs}{})",
                if reset { ", sequence reset" } else { "" }
            );
            None
        }
        Some(Event::Disconnect(r)) => Some(r.text()),
        Some(Event::Rejected {
            ref_seq,
            reason,
            ref_tag,
        }) => {
            eprintln!(
                "fix-gateway: {comp_id}: rejected message {ref_seq}: {} (tag {ref_tag:?})",
                reason.text()
            );
            None
        }
        Some(Event::Garbled(g)) => {
            eprintln!("fix-gateway: {comp_id}: garbled input ignored: {g}");
            None
        }
        _ => None,
    }
}
