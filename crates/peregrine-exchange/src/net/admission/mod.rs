//! Who may try to log in, and how often: the rules that keep idle or hostile
//! connections from locking legitimate clients out. Sans-IO: time is passed in
//! (milliseconds on a monotonic clock), nothing here touches a socket.
//!
//! * [`PendingPool`]: connections that have not logged in yet live in their own
//!   bounded pool, separate from logged-in sessions, with a short login timeout and a
//!   per-address limit. When the pool (or an address's share) is full, the **oldest**
//!   pending connection makes room: a legitimate client, which logs in within a round
//!   trip of its `Challenge`, is gone from the pool long before a flood of idle sockets
//!   reaches it.
//! * [`LoginThrottle`]: failed logins delay further attempts, per source address and
//!   per account, doubling per failure up to a cap. The per-account delay does not
//!   apply to an address that recently logged in to that account, so failures from
//!   elsewhere cannot lock its owner out.

mod pending;
mod throttle;

pub(crate) use pending::{Admit, PendingConfig, PendingPool};
pub(crate) use throttle::{LoginThrottle, ThrottleConfig};
