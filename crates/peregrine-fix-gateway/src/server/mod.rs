//! The gateway's I/O shell: one thread, non-blocking sockets, readiness from one
//! epoll set ([`crate::poller`]). FIX connections that have not logged on wait in a
//! bounded pool with a timeout (`pending`); a Logon names its session
//! (`identify_logon`), which is attached unless already connected (a second
//! connection for a logged-on session is closed; the first is unaffected). Each
//! session's turn is `slot`; the loop that decides whose turn it is, `event_loop`.
//!
//! When an iteration finds nothing to do the loop idles by the configured
//! [`peregrine_queue::WaitStrategy`] (`wait`): spin and yield with zero-timeout
//! waits, and under `park` block in the same `epoll_wait` until input arrives, output
//! backed up in a socket can move, or the nearest timer is due.

mod event_loop;
mod link;
mod pending;
mod slot;

use std::io::ErrorKind;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use peregrine_client::keys::{KeyError, KeyFile};
use peregrine_fix::codec::FrameLimits;
use peregrine_fix::session::{Role, Session, SessionConfig};
use peregrine_fix::store::{Durability, FileStore};
use peregrine_types::{wall_ns, AccountId};

use crate::bridge::Bridge;
use crate::config::GatewayConfig;
use crate::native::NativeConn;

use event_loop::Gateway;
use slot::Slot;

/// Why the gateway could not run.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// Binding the listener, creating the store directory.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// A session's message store cannot be opened.
    #[error(transparent)]
    Store(#[from] peregrine_fix::store::StoreError),
    /// The key file cannot be read or lacks a session's account.
    #[error(transparent)]
    Keys(#[from] KeyError),
}

/// Runs the gateway until `stop` is set. `ready` gets the FIX listen address once
/// listening.
pub fn run(
    config: GatewayConfig,
    stop: &AtomicBool,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), GatewayError> {
    let (mut gateway, local) = open(&config)?;
    ready(local);
    let ran = gateway.run(config.wait, stop);
    gateway.log_out_all();
    ran.map_err(|source| GatewayError::Io {
        what: "waiting in epoll".into(),
        source,
    })
}

fn io_error(what: String) -> impl FnOnce(std::io::Error) -> GatewayError {
    move |source| GatewayError::Io { what, source }
}

/// Binds the listener and opens every session's store: the loop, ready to run, and
/// the address it listens on.
fn open(config: &GatewayConfig) -> Result<(Gateway, SocketAddr), GatewayError> {
    std::fs::create_dir_all(&config.store_dir)
        .map_err(io_error(format!("creating {}", config.store_dir.display())))?;
    let listener = TcpListener::bind(&config.listen)
        .map_err(io_error(format!("binding {}", config.listen)))?;
    listener
        .set_nonblocking(true)
        .map_err(io_error("listener".into()))?;
    let local = listener
        .local_addr()
        .map_err(io_error("listener address".into()))?;
    let limits = FrameLimits {
        max_body: config.max_body,
    };
    let gateway = Gateway::new(
        listener,
        open_slots(config, limits)?,
        config.comp_id.clone(),
        config.max_pending_connections,
        limits,
        config.logon_timeout_secs * 1_000_000_000,
    )
    .map_err(io_error("creating the epoll set".into()))?;
    Ok((gateway, local))
}

/// One slot per configured session: its FIX session on its store, its bridge
/// restored from the store, its (not yet connected) exchange session.
fn open_slots(config: &GatewayConfig, limits: FrameLimits) -> Result<Vec<Slot>, GatewayError> {
    let exchange = config.exchange_addrs().map_err(|e| GatewayError::Io {
        what: format!("exchange address {}: {e}", config.exchange),
        source: std::io::Error::from(ErrorKind::InvalidInput),
    })?;
    let instruments: Arc<[_]> = config.instruments.clone().into();
    let keys = KeyFile::load(&config.keys_file)?;
    let durability = if config.fsync {
        Durability::Fsync
    } else {
        Durability::OsBuffer
    };
    let now = wall_ns();
    let mut slots = Vec::new();
    for (k, s) in config.sessions.iter().enumerate() {
        let mut fix = SessionConfig::new(Role::Acceptor, &config.comp_id, &s.comp_id);
        fix.password = s.password.clone();
        fix.heartbeat_bounds = (config.heartbeat_bounds[0], config.heartbeat_bounds[1]);
        fix.limits = limits;
        fix.max_clock_skew_ns = config.max_clock_skew_secs * 1_000_000_000;
        fix.check_latency = config.validation.check_latency;
        fix.validation = config.validation.dictionary();
        fix.reset_on_logon = s.reset_on_logon;
        fix.reset_on_logout = s.reset_on_logout;
        fix.reset_on_disconnect = s.reset_on_disconnect;
        let path = config
            .store_dir
            .join(format!("{}-{}.fixstore", config.comp_id, s.comp_id));
        let store = FileStore::open(&path, durability, now)?;
        if store.torn_bytes() > 0 {
            eprintln!(
                "fix-gateway: {}: cut a torn last record ({} bytes)",
                path.display(),
                store.torn_bytes()
            );
        }
        // Native ids from the wall clock, spaced per session so they never collide.
        let id_start = now.wrapping_add((k as u64) << 40);
        let key = keys
            .key(AccountId(s.account))
            .ok_or_else(|| KeyError::Missing {
                path: config.keys_file.display().to_string(),
                account: s.account,
            })?;
        let bridge = Bridge::new(
            Session::new(fix, store),
            s.account,
            Arc::clone(&instruments),
            id_start,
        )?;
        if bridge.resume_point() != 0 {
            eprintln!(
                "fix-gateway: {}: resuming account {}'s report stream at {}",
                s.comp_id,
                s.account,
                bridge.resume_point()
            );
        }
        slots.push(Slot::new(
            s.comp_id.clone(),
            bridge,
            NativeConn::new(exchange.clone(), s.account, key),
        ));
    }
    Ok(slots)
}

#[cfg(test)]
mod tests;
