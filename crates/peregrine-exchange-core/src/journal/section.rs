//! The optional `[journal]` section of the exchange config.

use std::path::PathBuf;

use peregrine_journal::{FsyncPolicy, JournalConfig};
use serde::{Deserialize, Serialize};

/// The optional `[journal]` section. Without it the exchange journals nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JournalSection {
    /// Directory of the segment files (created if missing). Required.
    pub dir: PathBuf,
    /// When appended commands reach the disk: `batch` (default, one `fdatasync` per
    /// batch before its results leave), `every_command`, or `none`. See
    /// docs/exchange.md for what each survives.
    #[serde(default)]
    pub fsync: FsyncPolicy,
    /// A segment rotates before a record would make it exceed this size. Default
    /// 64 MiB.
    #[serde(default = "default_segment_bytes")]
    pub segment_bytes: u64,
    /// Write a snapshot of the engine every this many commands, to `<dir>/snapshots`
    /// (the newest 3 are kept); start-up then loads the newest valid one and replays
    /// only the journal after it. Default 0: no snapshots, full replay.
    #[serde(default)]
    pub snapshot_every: u64,
    /// After each snapshot, delete the journal segments that the oldest retained
    /// snapshot fully covers (never the segment being written). Keeps the disk use
    /// and the start-up verify bounded; a full replay from sequence 1 is then no
    /// longer possible (`peregrine journal replay` starts from the newest snapshot).
    /// Default false: every segment is kept. Needs `snapshot_every > 0`.
    #[serde(default)]
    pub prune: bool,
    /// Write into segment files a helper thread filled with zeros and synced ahead of
    /// need, so a commit's `fdatasync` has no file growth to commit (about half the
    /// latency of an append's on this project's VM: docs/journal.md, "Segments
    /// prepared ahead"). Default true. Costs one spare segment of disk, and the
    /// helper's writes at each rotation.
    #[serde(default = "default_preallocate")]
    pub preallocate: bool,
    /// Nice value (-20..=19) of the `journal-sync` thread, which runs the group
    /// commit's `fdatasync` under `fsync = "batch"`. Default: none (it keeps the
    /// process's). When every core is busy (the matching thread, clients on the same
    /// host), a sync thread of normal priority can wait milliseconds for a core after
    /// each wake, and every result waits with it (docs/exchange.md, "The sync
    /// thread's priority"); the shipped `exchange.toml` sets -10. Going below the
    /// process's nice needs `CAP_SYS_NICE` or a `RLIMIT_NICE` that allows it
    /// (systemd `LimitNICE=`); refused, the exchange logs a warning and goes on.
    #[serde(default)]
    pub sync_nice: Option<i32>,
}

fn default_preallocate() -> bool {
    JournalConfig::default().preallocate
}

fn default_segment_bytes() -> u64 {
    JournalConfig::default().segment_bytes
}

impl JournalSection {
    /// A section with the defaults for `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        JournalSection {
            dir: dir.into(),
            fsync: FsyncPolicy::default(),
            segment_bytes: default_segment_bytes(),
            snapshot_every: 0,
            prune: false,
            preallocate: default_preallocate(),
            sync_nice: None,
        }
    }

    /// Where snapshots live.
    pub fn snapshot_dir(&self) -> PathBuf {
        self.dir.join("snapshots")
    }

    /// The journal crate's config for this section.
    pub fn journal_config(&self) -> JournalConfig {
        JournalConfig {
            segment_bytes: self.segment_bytes,
            fsync: self.fsync,
            preallocate: self.preallocate,
            ..JournalConfig::default()
        }
    }

    /// Pushes every problem found onto `errs`.
    pub fn check(&self, errs: &mut Vec<String>) {
        if self.dir.as_os_str().is_empty() {
            errs.push("journal.dir: must not be empty".into());
        }
        if let Err(problems) = self.journal_config().validate() {
            errs.extend(problems.into_iter().map(|p| format!("journal: {p}")));
        }
        if self.sync_nice.is_some_and(|n| !(-20..=19).contains(&n)) {
            errs.push("journal.sync_nice: must be -20..=19".into());
        }
        if self.prune && self.snapshot_every == 0 {
            errs.push("journal.prune: needs snapshot_every > 0 (pruning follows snapshots)".into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_defaults_are_pinned_and_unknown_keys_rejected() {
        let s: JournalSection = toml::from_str(r#"dir = "data/journal""#).unwrap();
        assert_eq!(s, JournalSection::new("data/journal"));
        assert_eq!(s.fsync, FsyncPolicy::Batch);
        assert_eq!(s.segment_bytes, 64 << 20);
        assert_eq!(s.snapshot_every, 0);
        assert!(s.preallocate);
        assert_eq!(s.sync_nice, None);
        assert!(toml::from_str::<JournalSection>("dir = \"d\"\nfsnyc = \"none\"").is_err());
        assert!(toml::from_str::<JournalSection>("fsync = \"none\"").is_err());
        let s: JournalSection = toml::from_str("dir = \"d\"\nfsync = \"every_command\"").unwrap();
        assert_eq!(s.fsync, FsyncPolicy::EveryCommand);
    }

    #[test]
    fn check_reports_every_problem() {
        let s = JournalSection {
            dir: PathBuf::new(),
            fsync: FsyncPolicy::None,
            segment_bytes: 10,
            snapshot_every: 0,
            prune: true,
            preallocate: true,
            sync_nice: Some(-21),
        };
        let mut errs = Vec::new();
        s.check(&mut errs);
        assert_eq!(errs.len(), 4, "{errs:?}");
    }
}
