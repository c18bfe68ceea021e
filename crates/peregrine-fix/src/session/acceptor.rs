//! For an acceptor shell: which configured session a new connection's first message
//! is for, before any session is attached to the connection.

use crate::codec::{frame, Frame, FrameLimits, Message, BEGIN_STRING};

use super::outbound::msg_type;

/// The CompIDs of a Logon, as the peer wrote them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogonIdentity<'a> {
    /// SenderCompID (49): the peer.
    pub sender_comp_id: &'a [u8],
    /// TargetCompID (56): us.
    pub target_comp_id: &'a [u8],
}

/// Looks at the first bytes of a new connection: `Ok(None)` means read more;
/// `Ok(Some(identity))` a whole, well-formed Logon; `Err(())` anything else (close the
/// connection without an answer: no session is known to answer with).
#[allow(
    clippy::result_unit_err,
    reason = "the only answer to any failure is to close"
)]
pub fn identify_logon(buf: &[u8], limits: FrameLimits) -> Result<Option<LogonIdentity<'_>>, ()> {
    match frame(buf, limits) {
        None => Ok(None),
        Some(Frame::Message { len }) => {
            let msg = Message::parse(&buf[..len]).map_err(|_| ())?;
            if msg.msg_type() != msg_type::LOGON || msg.header.begin_string != BEGIN_STRING {
                return Err(());
            }
            Ok(Some(LogonIdentity {
                sender_comp_id: msg.header.sender_comp_id,
                target_comp_id: msg.header.target_comp_id,
            }))
        }
        Some(Frame::Garbled { .. }) => Err(()),
    }
}
