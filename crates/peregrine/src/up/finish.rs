//! The end of a run: the kill-switch demonstration and the ordered shutdown.

use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use peregrine_engine::control;

use super::plan::STRATEGIES;
use super::procs::{describe, Ended, Proc};
use super::report::KillDemo;
use super::{Session, CONTROL_TIMEOUT, FIX_GATEWAY, KILL_TIMEOUT_MS, KILL_WATCH};

impl Session {
    /// Engages the global kill switch, watches the strategies run into it, and
    /// reports what the engine confirmed.
    pub(super) fn kill_demo(&mut self) -> anyhow::Result<KillDemo> {
        let before = self.summary_patiently()?;
        let reply = control::request(
            &self.socket(),
            &format!("kill * {KILL_TIMEOUT_MS}"),
            Duration::from_millis(KILL_TIMEOUT_MS) + CONTROL_TIMEOUT,
        )
        .context("sending the kill switch command")?;
        let watch_from = Instant::now();
        while watch_from.elapsed() < KILL_WATCH {
            // A child that dies now is restarted as during the run.
            self.sup.tend(&mut self.procs, self.t0)?;
            std::thread::sleep(Duration::from_millis(20));
        }
        // A snapshot taken after the watch period (the engine publishes every 200 ms).
        let after = self.summary_patiently()?;
        Ok(KillDemo {
            reply,
            open_before: (
                before.open_orders,
                before
                    .venues
                    .iter()
                    .map(|v| (v.name.clone(), v.open))
                    .collect(),
            ),
            open_after: after.open_orders,
            cancels: after.cancels.saturating_sub(before.cancels),
            blocked: after
                .kill_switch_rejects()
                .saturating_sub(before.kill_switch_rejects()),
            watched_s: watch_from.elapsed().as_secs_f64(),
        })
    }

    /// The HTTP gateway, the strategies (SIGTERM: they print their own summary and
    /// exit 0), the engine (`shutdown` on the control socket), the FIX gateway, then
    /// the exchange (SIGTERM).
    pub(super) fn shutdown(&mut self) -> anyhow::Result<()> {
        println!("== shutdown");
        let mut problems = Vec::new();
        if let Some(gateway) = self.procs.get("gateway") {
            let ended = gateway.stop(Duration::from_secs(5));
            println!("{:<12} {}", "gateway", ended_text(ended));
            if ended != Ended::Exited(exit_ok()) {
                problems.push(format!("gateway {}", ended_text(ended)));
            }
        }
        let strategy = |p: &&mut Proc| {
            STRATEGIES.iter().any(|s| s.name == p.name) || p.name == super::python::NAME
        };
        for p in self.procs.list.iter_mut().filter(strategy) {
            p.terminate();
        }
        for p in self.procs.list.iter_mut().filter(strategy) {
            let ended = p.stop(Duration::from_secs(5));
            println!("{:<12} {}", p.name, ended_text(ended));
            if ended != Ended::Exited(exit_ok()) {
                problems.push(format!("{} {}", p.name, ended_text(ended)));
            }
        }
        let reply = control::request(&self.socket(), "shutdown", CONTROL_TIMEOUT);
        if let Some(engine) = self.procs.get("engine") {
            let ended = match reply {
                Ok(_) => match engine.wait_for(Duration::from_secs(10)) {
                    Some(s) => Ended::Exited(s),
                    None => engine.stop(Duration::from_secs(2)),
                },
                Err(_) => engine.stop(Duration::from_secs(5)),
            };
            println!(
                "{:<12} {} (shutdown via control socket)",
                "engine",
                ended_text(ended)
            );
            if ended != Ended::Exited(exit_ok()) {
                problems.push(format!("engine {}", ended_text(ended)));
            }
        }
        // After the engine, whose FIX venue logs out first: the gateway then logs its
        // session out and exits 0.
        if let Some(gateway) = self.procs.get(FIX_GATEWAY) {
            let ended = gateway.stop(Duration::from_secs(5));
            println!("{:<12} {}", FIX_GATEWAY, ended_text(ended));
            if ended != Ended::Exited(exit_ok()) {
                problems.push(format!("{FIX_GATEWAY} {}", ended_text(ended)));
            }
        }
        if let Some(exchange) = self.procs.get("exchange") {
            let ended = exchange.stop(Duration::from_secs(5));
            println!("{:<12} {}", "exchange", ended_text(ended));
            if ended == Ended::Killed {
                problems.push("exchange ignored SIGTERM".into());
            }
        }
        let left = self.procs.running_pids();
        let shm_left = self.shm.exists();
        println!(
            "{}; {}",
            if left.is_empty() {
                "no child process left".to_owned()
            } else {
                format!("processes left: {left:?}")
            },
            if shm_left {
                format!("{} was not removed by the engine", self.shm.display())
            } else {
                format!("{} removed", self.shm.display())
            }
        );
        ensure!(
            problems.is_empty() && left.is_empty() && !shm_left,
            "unclean shutdown: {}",
            problems.join(", ")
        );
        Ok(())
    }
}

fn ended_text(e: Ended) -> String {
    match e {
        Ended::Exited(s) => describe(s),
        Ended::Killed => "killed after ignoring SIGTERM".into(),
    }
}

/// The status of a clean exit.
fn exit_ok() -> std::process::ExitStatus {
    use std::os::unix::process::ExitStatusExt;
    std::process::ExitStatus::from_raw(0)
}
