//! The supervisor: a child that dies while `up` runs is started again, after a
//! backoff that doubles with each recent restart (100 ms up to 5 s). What comes back:
//! a strategy re-attaches to the rings the engine re-creates for it; an exchange
//! recovers its book from its journal and the engine's adapter logs in again; an
//! engine recovers positions, PnL, limits and open orders from its journal (its
//! strategies see their rings replaced, stop, and are restarted too). A child that
//! dies more than [`MAX_RESTARTS`] times within [`WINDOW`] fails the run: that is a
//! crash loop, not bad luck.

use std::fmt::Write;
use std::time::{Duration, Instant};

use anyhow::bail;

use super::procs::{describe, Procs};

/// Restarts of one child within [`WINDOW`] before the run gives up.
pub(super) const MAX_RESTARTS: usize = 8;
/// The crash-loop window.
pub(super) const WINDOW: Duration = Duration::from_secs(60);
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// When each dead child may be started again.
#[derive(Debug, Default)]
pub(super) struct Supervisor {
    /// (child name, when it was seen dead, restart due at).
    due: Vec<(String, Instant, Instant)>,
    /// Restart times per child, for the crash-loop check and the backoff.
    history: Vec<(String, Instant)>,
}

impl Supervisor {
    /// Notices dead children and restarts those whose backoff has passed.
    pub(super) fn tend(&mut self, procs: &mut Procs, started: Instant) -> anyhow::Result<()> {
        let now = Instant::now();
        for p in procs.list.iter_mut() {
            let Some(status) = p.exited() else { continue };
            if !self.due.iter().any(|(n, ..)| *n == p.name) {
                let recent = self
                    .history
                    .iter()
                    .filter(|(n, at)| *n == p.name && now - *at < WINDOW)
                    .count();
                if recent >= MAX_RESTARTS {
                    bail!(
                        "the {} process keeps dying ({} restarts within {} s; last {}); last \
                         lines of {}:\n{}",
                        p.name,
                        recent,
                        WINDOW.as_secs(),
                        describe(status),
                        p.log.display(),
                        p.log_excerpt(12)
                    );
                }
                let backoff = (FIRST_BACKOFF * 2u32.pow(recent.min(10) as u32)).min(MAX_BACKOFF);
                // Why, in its own words (a strategy says why the engine detached it).
                let last = p.log_excerpt(1);
                eprintln!(
                    "up: {} exited ({}{}); restarting in {} ms",
                    p.name,
                    describe(status),
                    if last.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", last.trim())
                    },
                    backoff.as_millis()
                );
                self.due.push((p.name.clone(), now, now + backoff));
            }
        }
        let mut i = 0;
        while i < self.due.len() {
            let (name, died, at) = self.due[i].clone();
            if now < at {
                i += 1;
                continue;
            }
            self.due.swap_remove(i);
            if let Some(p) = procs.get(&name) {
                let status = p.exited().map_or("?".to_owned(), describe);
                let why = format!(
                    "{status} at {:.1} s, restarted after {} ms",
                    (died - started).as_secs_f64(),
                    (now - died).as_millis()
                );
                p.restart(why)?;
                self.history.push((name, now));
            }
        }
        Ok(())
    }
}

/// The `== restarts` section of the summary.
pub(super) fn restarts_text(procs: &Procs) -> String {
    let mut out = String::from("== restarts\n");
    let mut any = false;
    for p in &procs.list {
        for r in &p.restarts {
            let _ = writeln!(out, "{:<12} {r}", p.name);
            any = true;
        }
    }
    if !any {
        out += "none\n";
    }
    out
}
