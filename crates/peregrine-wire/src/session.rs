//! The session messages that version 1 defined and version 2 kept unchanged, client
//! → exchange: `Logout` and `ClientHeartbeat` (declared in `schema/protocol.xml`).
//! The rest of the session (challenge, login, heartbeats, replay) is [`crate::v2::session`].
//!
//! Each side sends a heartbeat when it has sent nothing else for one heartbeat
//! interval; a side that hears no whole message for three intervals may close the
//! connection.

include!(concat!(env!("OUT_DIR"), "/msg_session.rs"));
