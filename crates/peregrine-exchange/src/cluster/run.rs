//! The cluster node's life: follow (redirecting clients) until the node leads with
//! its log applied, serve with the exchange's loop until the leadership is lost,
//! then reopen the log from disk and follow again.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, sync_channel, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use peregrine_cluster::RunnerHandle;
use peregrine_exchange_core::reports::Retention;

use super::admin::{Admin, NodeSlot};
use super::log::ReplicatedLog;
use super::pump::{Handover, LeaderPump};
use super::redirect::{self, Port, Redirector};
use super::sm::ExchangeSm;
use super::Shared;
use crate::config::Config;
use crate::durability::startup::fund;
use crate::error::{ExchangeError, IoContext};
use crate::start::{attach_feed, serve, RunSummary};

fn cluster_err(e: impl std::fmt::Display) -> ExchangeError {
    ExchangeError::Cluster(e.to_string())
}

/// Runs this node of the cluster in the config's `[cluster]` section until `stop`
/// is set (`peregrine exchange --cluster`; docs/cluster.md). `on_ready` gets the
/// order-entry address once the node listens there (redirecting, or serving).
pub fn run(
    config: Config,
    stop: Arc<AtomicBool>,
    on_ready: impl FnOnce(SocketAddr),
) -> Result<RunSummary, ExchangeError> {
    let Some(cc) = config.cluster.clone() else {
        return Err(ExchangeError::Config(vec![
            "--cluster needs a [cluster] section".into(),
        ]));
    };
    let Some(journal) = config.journal.clone() else {
        return Err(ExchangeError::Config(vec![
            "cluster: needs [journal] (its dir holds the node's Raft log)".into(),
        ]));
    };
    let venue = config.venue().map_err(ExchangeError::Config)?;
    let clients: BTreeMap<u64, String> = cc
        .peers
        .iter()
        .filter_map(|p| p.client.clone().map(|c| (p.id, c)))
        .collect();
    let recoveries: BTreeMap<u64, String> = cc
        .peers
        .iter()
        .filter_map(|p| p.recovery.clone().map(|c| (p.id, c)))
        .collect();
    let slot: NodeSlot = Arc::new(Mutex::new(None));
    let _admin = match &cc.admin_listen {
        Some(a) => Some(
            Admin::start(a, Arc::clone(&slot))
                .doing(|| format!("binding the cluster admin endpoint on {a}"))?,
        ),
        None => None,
    };
    let mut on_ready = Some(on_ready);
    let mut summary = RunSummary::default();
    let mut round = 0u64;
    // Relaxed: a stop request needs no ordering with other memory.
    while !stop.load(Ordering::Relaxed) {
        round += 1;
        if round > 1 {
            log::warn!(
                "cluster: reopening the log in {} as a follower",
                journal.dir.display()
            );
        }
        let shared = Arc::new(Shared::new().doing(|| "creating the cluster eventfd".into())?);
        let retention = Retention {
            per_account: config.reports.retain_per_account,
        };
        let sm = ExchangeSm::new(&venue, retention, Arc::clone(&shared)).map_err(cluster_err)?;
        let (to_node, proposals) = channel();
        let (handover_tx, handover_rx) = sync_channel(1);
        let pump = LeaderPump::new(
            proposals,
            handover_tx,
            Arc::clone(&shared),
            Arc::clone(&stop),
        );
        let node = peregrine_cluster::spawn(journal.dir.clone(), &cc, sm, Some(Box::new(pump)))
            .map_err(cluster_err)?;
        log::info!(
            "cluster: node {} of {:?}, peers on {}",
            cc.node_id,
            cc.peers.iter().map(|p| p.id).collect::<Vec<_>>(),
            node.addr()
        );
        let waker = node.waker();
        *lock(&slot) = Some((node, Arc::clone(&shared)));
        let redirector = Redirector::start(
            config.listen,
            Port::OrderEntry,
            Arc::clone(&shared),
            clients.clone(),
        )
        .doing(|| format!("binding {} (redirecting to the leader)", config.listen))?;
        let md_redirector = if config.recovery_enabled {
            Some(
                Redirector::start(
                    config.recovery_listen,
                    Port::Recovery,
                    Arc::clone(&shared),
                    recoveries.clone(),
                )
                .doing(|| {
                    format!(
                        "binding {} (redirecting recovery to the leader)",
                        config.recovery_listen
                    )
                })?,
            )
        } else {
            None
        };
        if let Some(f) = on_ready.take() {
            f(config.listen);
        }
        let handover = loop {
            if stop.load(Ordering::Relaxed) {
                drop((redirector, md_redirector));
                stop_node(&slot)?;
                return Ok(summary);
            }
            match handover_rx.recv_timeout(Duration::from_millis(20)) {
                Ok(h) => break h,
                Err(RecvTimeoutError::Timeout) => {
                    if let Some(why) = shared.failure() {
                        drop((redirector, md_redirector));
                        let _ = stop_node(&slot);
                        return Err(ExchangeError::Cluster(why));
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    drop((redirector, md_redirector));
                    return Err(match stop_node(&slot) {
                        Err(e) => e,
                        Ok(()) => ExchangeError::Cluster("the node thread stopped".into()),
                    });
                }
            }
        };
        drop((redirector, md_redirector));
        let Handover { core, stamp } = handover;
        let log = ReplicatedLog::new(stamp, to_node, waker, Arc::clone(&shared));
        let core = core.try_map_log(|_| Ok::<_, ExchangeError>(log))?;
        let (mut core, feed) = attach_feed(&config, core)?;
        // Funded while the streams are collected (the store holds those reports).
        fund(&mut core, venue.balances.as_ref())?;
        let reports = core.take_reports();
        let wake = shared
            .wake_fd()
            .try_clone_to_owned()
            .doing(|| "duplicating the cluster eventfd".into())?;
        // The serving loop stops when deposed, or when the process stops (the pump
        // passes the stop request on).
        let stop_serving = Arc::clone(&shared.stop_serving);
        // Deposed (not stopping): the sessions are told where the leader is, or
        // that none is known yet, and follow it like a redirect.
        let me = cc.node_id;
        let farewell = || {
            // Relaxed: a stop request needs no ordering with other memory.
            if stop.load(Ordering::Relaxed) {
                return None;
            }
            let leader = Some(shared.leader()).filter(|l| *l != me).unwrap_or(0);
            let address = clients.get(&leader).map(String::as_str);
            Some(redirect::redirect(leader, address, shared.engine_seq()).into())
        };
        let served = serve(
            config.clone(),
            core,
            feed,
            reports,
            Some(wake),
            &stop_serving,
            |_| {},
            &farewell,
        );
        shared.depose();
        let stopped = stop_node(&slot);
        summary = served?;
        stopped?;
        if let Some(why) = shared.failure() {
            return Err(ExchangeError::Cluster(why));
        }
    }
    Ok(summary)
}

fn lock(
    slot: &NodeSlot,
) -> std::sync::MutexGuard<'_, Option<(RunnerHandle<ExchangeSm>, Arc<Shared>)>> {
    slot.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Stops the round's node (its thread ends; the log is closed).
fn stop_node(slot: &NodeSlot) -> Result<(), ExchangeError> {
    let taken = lock(slot).take();
    match taken {
        Some((node, _)) => node.stop().map(|_| ()).map_err(cluster_err),
        None => Ok(()),
    }
}
