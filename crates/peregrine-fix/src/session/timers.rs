//! Time-driven duties: heartbeats, TestRequest, and the Logon, Logout and liveness
//! timeouts.

use crate::store::{MessageStore, StoreError};

use super::event::{DisconnectReason, Event};
use super::{Session, State};

impl<S: MessageStore> Session<S> {
    /// Call whenever time has passed (at least once a second or so): sends a
    /// Heartbeat after an interval of silence (none while our TestRequest is
    /// unanswered), a TestRequest after an interval (+20%) of hearing nothing, and
    /// disconnects after a second such interval, or when a Logon or Logout is not
    /// answered in time.
    pub fn poll(&mut self, now: u64) -> Result<Option<Event<'static>>, StoreError> {
        match self.state {
            State::AwaitingLogon { since }
                if now.saturating_sub(since) >= self.config.logon_timeout_ns =>
            {
                return Ok(self.close(DisconnectReason::LogonTimeout));
            }
            State::LogoutSent { at } if now.saturating_sub(at) >= self.config.logout_timeout_ns => {
                return Ok(self.close(DisconnectReason::LogoutTimeout));
            }
            State::Active | State::LogoutSent { .. } => {}
            _ => return Ok(None),
        }
        let hb = self.heartbeat_ns;
        if hb == 0 {
            return Ok(None);
        }
        let silent_in = now.saturating_sub(self.last_received);
        let grace = hb / 5;
        if self.test_request.is_some() && silent_in >= 2 * (hb + grace) {
            self.send_logout(Some(DisconnectReason::HeartbeatTimeout.text()), now)?;
            return Ok(self.close(DisconnectReason::HeartbeatTimeout));
        }
        if self.test_request.is_none() && silent_in >= hb + grace {
            self.send_test_request(now)?;
        }
        // While our TestRequest waits for its answer it stands for our heartbeat:
        // the question is whether the peer is there.
        if self.test_request.is_none() && now.saturating_sub(self.last_sent) >= hb {
            self.send_heartbeat(None, now)?;
        }
        Ok(None)
    }
}
