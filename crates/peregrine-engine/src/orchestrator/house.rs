//! The shell's housekeeping, off the per-order path: control commands in, the core's
//! tick, fresh rings for re-armed strategies, the check of strategies' processes, the
//! latency window and the stats snapshot.

use peregrine_orchestrator::{Input, Liveness};

use super::{Orchestrator, Slot};

/// Strategies' processes are looked at this often.
const PID_CHECK_NS: u64 = 100_000_000;

impl Orchestrator {
    /// Runs the periodic tasks that are due at `now` (the core's own housekeeping
    /// runs at most once a millisecond).
    pub fn housekeeping(&mut self, now: u64) {
        while let Some(cmd) = self.shared.commands.pop() {
            self.handle(Input::Control(cmd), now);
        }
        if now >= self.next_pid_check_ns {
            self.next_pid_check_ns = now + PID_CHECK_NS;
            for s in 0..self.slots.len() as u16 {
                if self.core.liveness(s) == Liveness::Alive
                    && self.core.pid(s).is_some_and(|p| !process_alive(p))
                {
                    self.handle(Input::ProcessGone { strategy: s }, now);
                }
            }
        }
        self.handle(Input::Tick, now);
        while let Some(s) = self.rearm.pop() {
            self.recreate(s, now);
        }
        if now >= self.next_window_ns {
            self.next_window_ns = now + 1_000_000_000;
            self.latency.rotate_window();
        }
        if now >= self.next_stats_ns {
            self.next_stats_ns = now + self.stats_interval_ns;
            self.publish(now);
        }
    }

    /// Fresh rings for dead strategy `s` at the same paths (~1 ms of work on tmpfs,
    /// once per death); its market-data ring goes to the market-data thread.
    fn recreate(&mut self, s: u16, now: u64) {
        let name = self.slots[s as usize].link.name.clone();
        match crate::rings::create_link(&self.dir, &name, self.ring_capacity, self.md_capacity) {
            Ok(mut link) => {
                if let (Some(tx), Some(q)) = (link.md.take(), self.md_attach.as_ref()) {
                    // Bounded: one entry per re-created strategy; never full in
                    // practice (the md thread drains it every turn).
                    let _ = q.push((s, tx));
                }
                let old = &self.slots[s as usize];
                // Totals carry over; what the old rings still held is discarded.
                let earlier = [self.submit_row(old), self.return_row(old)].map(|mut q| {
                    q.discarded += q.depth;
                    q.depth = 0;
                    q
                });
                self.slots[s as usize] = Slot::new(link);
                self.slots[s as usize].earlier = earlier;
                self.handle(Input::RingsReady { strategy: s }, now);
            }
            Err(e) => {
                if !self.slots[s as usize].rearm_warned {
                    self.slots[s as usize].rearm_warned = true;
                    self.log.line(format!(
                        "engine {}: re-creating the rings of {name}: {e} (retried every 100 ms)",
                        self.core.config().name
                    ));
                }
                self.handle(Input::RingsFailed { strategy: s }, now);
            }
        }
    }
}

/// Whether process `pid` exists and is not a zombie (`/proc` is in memory: no disk).
fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state is the first field after the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}
