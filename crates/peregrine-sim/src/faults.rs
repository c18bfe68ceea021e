//! The fault generator: every fault tick it draws, from the run's seed, which faults
//! strike (crashes and power losses, client disconnects, slow readers, disk faults,
//! and for a cluster partitions, leader transfers, disk wipes), until the run's
//! duration is over; then everything is healed and the run must settle.

use peregrine_types::AccountId;

use crate::client::{Client, Role};
use crate::disk::{Crash, DiskFaults};
use crate::run::Sim;
use crate::world::Ev;

const MS: u64 = 1_000_000;

impl Sim {
    pub(crate) fn fault(&mut self) {
        if self.now >= self.cfg.duration_ms * MS {
            self.start_settling();
            return;
        }
        let f = self.cfg.faults;
        if self.now == f.tick_ms * MS {
            let disk = DiskFaults {
                sync_eio: f.sync_eio,
                read_flip: f.read_flip,
                writeback: f.writeback,
                torn: f.torn,
            };
            for n in &self.nodes {
                n.disk.set_faults(disk);
            }
        }
        if self.rng.below(1000) < f.crash {
            let up: Vec<usize> = (0..self.nodes.len())
                .filter(|&n| self.nodes[n].up())
                .collect();
            if !up.is_empty() {
                let n = self.rng.pick(&up);
                let how = if self.rng.below(1000) < f.power {
                    self.stats.power_losses += 1;
                    Crash::Power
                } else {
                    Crash::Process
                };
                self.stats.crashes += 1;
                self.kill(n, how, "fault");
            }
        }
        if self.rng.below(1000) < f.disconnect {
            let linked: Vec<usize> = (0..self.clients.len())
                .filter(|&c| self.clients[c].link.is_some() && self.clients[c].role != Role::Probe)
                .collect();
            if !linked.is_empty() {
                let c = self.rng.pick(&linked);
                self.stats.disconnects += 1;
                self.note(format!("fault: client {c} disconnects"));
                self.client_close(c);
            }
        }
        if self.rng.below(1000) < f.slow_reader {
            let c = self.rng.below(self.clients.len() as u64) as usize;
            let until = self.now + self.rng.range(50 * MS, 1500 * MS);
            self.note(format!(
                "fault: client {c} stops reading for {} ms",
                (until - self.now) / MS
            ));
            self.clients[c].deaf_until = until;
        }
        if self.rng.below(1000) < f.audit {
            self.probe();
        }
        if self.rng.below(1000) < f.disk_full {
            let n = self.rng.below(self.nodes.len() as u64) as usize;
            let room = self.rng.below(16 << 10);
            let cap = self.nodes[n].disk.used() + room;
            self.note(format!(
                "fault: node {n}'s disk is full ({room} bytes left)"
            ));
            self.nodes[n].disk.set_capacity(Some(cap));
        } else if self.rng.chance(1, 20) {
            for n in &self.nodes {
                n.disk.set_capacity(None);
            }
        }
        self.cluster_faults();
        self.queue.push(self.now + f.tick_ms * MS, Ev::Fault);
    }

    /// A fresh session of a trader's account logs in from an old position (within
    /// the retention the exchange promises) and checks the replay against what was
    /// seen.
    fn probe(&mut self) {
        let traders: Vec<AccountId> = self
            .clients
            .iter()
            .filter(|c| c.role == Role::Trader)
            .map(|c| c.account)
            .collect();
        if traders.is_empty() {
            return;
        }
        let account = self.rng.pick(&traders);
        let seen = self.oracle.seen_through(account);
        let lowest = (seen + 1).saturating_sub(self.cfg.retain as u64).max(1);
        let resume = self.rng.range(lowest, seen + 1);
        let id = self.clients.len();
        let key = self.keys[&account].clone();
        let mut probe = Client::new(id, Role::Probe, account, key, resume);
        probe.retry_at = self.now;
        self.clients.push(probe);
        self.stats.probes += 1;
        self.note(format!(
            "probe {id}: account {account} from report {resume}"
        ));
        self.queue.push(self.now, Ev::Act(id));
    }

    /// The faults stop: every disk works, every client reads, every node comes back.
    fn start_settling(&mut self) {
        if self.settling {
            return;
        }
        self.settling = true;
        self.note("faults stop: everything must now recover".into());
        for n in &self.nodes {
            n.disk.set_faults(DiskFaults::default());
            n.disk.set_capacity(None);
        }
        for c in &mut self.clients {
            c.deaf_until = 0;
        }
        self.heal_all();
        for n in 0..self.nodes.len() {
            if !self.nodes[n].up() {
                self.queue.push(self.now + MS, Ev::Restart(n));
            }
        }
    }
}
