//! A session's settings.

use crate::codec::time::Precision;
use crate::codec::FrameLimits;
use crate::dict::Validation;

/// Which side opens the connection and sends the first Logon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Waits for the peer's Logon and answers it (a venue, the gateway).
    Acceptor,
    /// Sends the Logon (a client, the engine's FIX venue adapter).
    Initiator,
}

/// Everything a session needs to know. CompIDs are from this side's point of view:
/// `sender_comp_id` is ours (the peer's TargetCompID).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionConfig {
    /// Acceptor or initiator.
    pub role: Role,
    /// Our CompID (SenderCompID on what we send).
    pub sender_comp_id: String,
    /// The peer's CompID (TargetCompID on what we send).
    pub target_comp_id: String,
    /// Initiator: the HeartBtInt (s) to ask for. Acceptor: unused (the peer's value
    /// is used if within `heartbeat_bounds`).
    pub heartbeat_secs: u32,
    /// Acceptor: the range of HeartBtInt (s) accepted at Logon.
    pub heartbeat_bounds: (u32, u32),
    /// Initiator: Username (553) to send. Acceptor: the Username required, if any.
    pub username: Option<String>,
    /// Initiator: Password (554) to send. Acceptor: the Password required, if any.
    pub password: Option<String>,
    /// Reset both sequence numbers at every Logon (QuickFIX `ResetOnLogon`). The
    /// initiator sends its Logon with ResetSeqNumFlag 141=Y; the acceptor starts the
    /// sequence again when a Logon arrives, whatever number it carries.
    pub reset_on_logon: bool,
    /// Reset both sequence numbers once a Logout exchange ends (`ResetOnLogout`).
    pub reset_on_logout: bool,
    /// Reset both sequence numbers whenever the connection ends
    /// (`ResetOnDisconnect`).
    pub reset_on_disconnect: bool,
    /// Check SendingTime against our clock (`CheckLatency`).
    pub check_latency: bool,
    /// Largest |SendingTime − now| accepted, in ns (SessionRejectReason 10 beyond;
    /// `MaxLatency`).
    pub max_clock_skew_ns: u64,
    /// How inbound messages are checked against the FIX 4.4 dictionary.
    pub validation: Validation,
    /// Bytes of messages that arrived ahead of a gap kept to be processed once the
    /// gap is filled; beyond it they are dropped (the resend brings them again).
    pub max_queued_bytes: usize,
    /// How long to wait for a Logon (acceptor: the peer's first message; initiator:
    /// the answer), in ns.
    pub logon_timeout_ns: u64,
    /// How long to wait for the peer's Logout answer after sending ours, in ns.
    pub logout_timeout_ns: u64,
    /// Bounds on one inbound message.
    pub limits: FrameLimits,
    /// Fraction digits of SendingTime and the other timestamps we write.
    pub precision: Precision,
    /// Bytes of unsent output above which the session asks to be disconnected (a
    /// peer that does not read); everything stays in the store for the resend after
    /// it reconnects.
    pub max_outbound_bytes: usize,
}

const SECOND: u64 = 1_000_000_000;

impl SessionConfig {
    /// A configuration with the defaults: 30 s heartbeat (bounds 1..=300 s), no
    /// credentials, no resets, 120 s clock skew, every dictionary check on, 10 s logon
    /// and logout timeouts, 8 KiB bodies, millisecond timestamps, 4 MiB of unsent
    /// output, 1 MiB of messages queued behind a gap.
    pub fn new(role: Role, sender_comp_id: &str, target_comp_id: &str) -> Self {
        SessionConfig {
            role,
            sender_comp_id: sender_comp_id.to_string(),
            target_comp_id: target_comp_id.to_string(),
            heartbeat_secs: 30,
            heartbeat_bounds: (1, 300),
            username: None,
            password: None,
            reset_on_logon: false,
            reset_on_logout: false,
            reset_on_disconnect: false,
            check_latency: true,
            max_clock_skew_ns: 120 * SECOND,
            validation: Validation::default(),
            max_queued_bytes: 1 << 20,
            logon_timeout_ns: 10 * SECOND,
            logout_timeout_ns: 10 * SECOND,
            limits: FrameLimits::default(),
            precision: Precision::Millis,
            max_outbound_bytes: 4 << 20,
        }
    }

    /// Every problem with the settings, or `Ok`.
    pub fn validate(&self) -> Result<(), Vec<String>> {
        let mut problems = Vec::new();
        let comp_id_ok =
            |id: &str| !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_graphic());
        if !comp_id_ok(&self.sender_comp_id) {
            problems.push(format!(
                "sender_comp_id {:?}: 1-64 printable ASCII characters",
                self.sender_comp_id
            ));
        }
        if !comp_id_ok(&self.target_comp_id) {
            problems.push(format!(
                "target_comp_id {:?}: 1-64 printable ASCII characters",
                self.target_comp_id
            ));
        }
        let (lo, hi) = self.heartbeat_bounds;
        if lo == 0 || lo > hi {
            problems.push(format!(
                "heartbeat_bounds ({lo}, {hi}): need 0 < low <= high"
            ));
        }
        if self.role == Role::Initiator && self.heartbeat_secs == 0 {
            problems.push("heartbeat_secs must be positive".to_string());
        }
        for (name, v) in [("username", &self.username), ("password", &self.password)] {
            if let Some(v) = v {
                if v.is_empty() || v.bytes().any(|b| b == crate::codec::SOH) {
                    problems.push(format!("{name}: non-empty, without SOH"));
                }
            }
        }
        if self.limits.max_body < 256 {
            problems.push("limits.max_body below 256 bytes".to_string());
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_pinned_and_valid() {
        let c = SessionConfig::new(Role::Acceptor, "PGN", "CLIENT1");
        assert_eq!(c.heartbeat_secs, 30);
        assert_eq!(c.heartbeat_bounds, (1, 300));
        assert_eq!(c.max_clock_skew_ns, 120 * SECOND);
        assert_eq!(c.logon_timeout_ns, 10 * SECOND);
        assert_eq!(c.limits.max_body, 8192);
        assert_eq!(c.max_outbound_bytes, 4 << 20);
        assert!(!c.reset_on_logon && !c.reset_on_logout && !c.reset_on_disconnect);
        assert!(c.check_latency);
        assert_eq!(c.validation, Validation::default());
        assert!(c.validation.use_data_dictionary && c.validation.fields_out_of_order);
        assert!(c.validation.user_defined_fields && !c.validation.allow_unknown_message_fields);
        assert_eq!(c.max_queued_bytes, 1 << 20);
        assert_eq!(c.validate(), Ok(()));
    }

    #[test]
    fn validate_reports_every_problem() {
        let mut c = SessionConfig::new(Role::Initiator, "", "A B");
        c.heartbeat_secs = 0;
        c.heartbeat_bounds = (5, 1);
        c.password = Some(String::new());
        assert_eq!(c.validate().unwrap_err().len(), 5);
    }
}
