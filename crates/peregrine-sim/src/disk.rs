//! The simulated disk: a [`Backend`] of in-memory files with the page cache's
//! semantics and the faults of real disks, driven by the run's seed.
//!
//! * **What survives a crash.** Every file has the bytes a reader sees (the page
//!   cache) and the bytes on the platter. `fdatasync`/`fsync` copy the dirty pages
//!   (and the size) down; a **power loss** ([`SimDisk::crash`] with
//!   [`Crash::Power`]) drops what was not synced, except that each dirty page may
//!   have been written back on its own before the crash (kept whole, or torn at a
//!   sector), and the file's new size may have reached the disk with zeros where its
//!   pages did not. A **process crash** ([`Crash::Process`]) keeps the page cache.
//! * **Directory entries** (create, rename, link, unlink) are durable once their
//!   directory is synced; at a power loss a random prefix of the unsynced ones
//!   survives (the file system's journal commits them in order).
//! * **Faults**: a full disk (writes fail with `ENOSPC`, after writing a prefix); an
//!   `fdatasync` that fails with `EIO` and drops the dirty pages it could not write
//!   (the Linux behaviour behind "fsyncgate": a later sync succeeds without them); a
//!   bit flipped in the bytes a read returns (the disk's data is intact; the next
//!   read is clean).
//! * After a crash every handle of the dead process fails (`EIO`), so nothing the
//!   dropped process still held can write.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use peregrine_journal::storage::{Backend, FileHandle, FileIo, HeldLock, LockError, Open};
use peregrine_types::Rng;

/// Bytes per page (the unit of write-back) and per sector (the unit of tearing).
const PAGE: usize = 4096;
const SECTOR: usize = 512;

/// How a node dies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Crash {
    /// `kill -9`: the page cache survives.
    Process,
    /// Power loss: what was not synced may be gone, torn or half-written.
    Power,
}

/// The disk's fault knobs, per thousand.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskFaults {
    /// Chance that an `fdatasync` fails with `EIO`.
    pub sync_eio: u64,
    /// Chance that a read returns one flipped bit.
    pub read_flip: u64,
    /// At a power loss, chance that a dirty page reached the disk anyway.
    pub writeback: u64,
    /// At a power loss, chance that a dirty page reached the disk torn.
    pub torn: u64,
}

#[derive(Debug, Default)]
struct Inode {
    /// What readers see.
    data: Vec<u8>,
    /// What is on the platter.
    durable: Vec<u8>,
    /// Pages written since the last sync.
    dirty: BTreeSet<usize>,
}

#[derive(Debug, Clone)]
enum MetaOp {
    Link { path: PathBuf, inode: u64 },
    Unlink { path: PathBuf },
}

#[derive(Debug)]
struct State {
    rng: Rng,
    faults: DiskFaults,
    /// Bumped by each crash: handles of an older epoch are dead.
    epoch: u64,
    inodes: BTreeMap<u64, Inode>,
    next_inode: u64,
    dirs: BTreeSet<PathBuf>,
    entries: BTreeMap<PathBuf, u64>,
    durable_entries: BTreeMap<PathBuf, u64>,
    /// Directory operations not yet made durable by a directory sync, in order.
    unsynced: Vec<MetaOp>,
    /// Bytes the disk holds at most (`ENOSPC` beyond).
    capacity: Option<u64>,
    /// Locks held: the epoch (process) that holds each and how many handles of it
    /// share it (as `peregrine_types::lock` shares a process's own lock). A crash
    /// frees them: a lock of an older epoch is dead.
    locks: BTreeMap<PathBuf, (u64, usize)>,
    /// Counters.
    stats: DiskStats,
}

/// What the disk did, for the run's summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskStats {
    /// Successful `fdatasync`/`fsync` calls.
    pub syncs: u64,
    /// Syncs failed with `EIO`.
    pub sync_failures: u64,
    /// Reads that returned a flipped bit.
    pub flips: u64,
    /// Writes refused for space.
    pub enospc: u64,
    /// Pages torn or written back at power losses.
    pub torn_pages: u64,
}

/// One node's disk (a cheap handle: clones share the disk). Hand it to a
/// [`peregrine_journal::Storage`] with [`SimDisk::storage`].
#[derive(Debug, Clone)]
pub struct SimDisk {
    state: Arc<Mutex<State>>,
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn parent(p: &Path) -> PathBuf {
    p.parent().map(Path::to_path_buf).unwrap_or_default()
}

impl SimDisk {
    /// An empty disk whose faults draw from `seed`.
    pub fn new(seed: u64, faults: DiskFaults) -> Self {
        let mut dirs = BTreeSet::new();
        dirs.insert(PathBuf::from("/"));
        SimDisk {
            state: Arc::new(Mutex::new(State {
                rng: Rng::new(seed),
                faults,
                epoch: 0,
                inodes: BTreeMap::new(),
                next_inode: 1,
                dirs,
                entries: BTreeMap::new(),
                durable_entries: BTreeMap::new(),
                unsynced: Vec::new(),
                capacity: None,
                locks: BTreeMap::new(),
                stats: DiskStats::default(),
            })),
        }
    }

    /// The journal's view of this disk.
    pub fn storage(&self) -> peregrine_journal::Storage {
        peregrine_journal::Storage::new(Arc::new(self.clone()))
    }

    /// Changes the fault knobs.
    pub fn set_faults(&self, faults: DiskFaults) {
        lock(&self.state).faults = faults;
    }

    /// Bytes the disk may hold at most (`None`: unbounded).
    pub fn set_capacity(&self, bytes: Option<u64>) {
        lock(&self.state).capacity = bytes;
    }

    /// Bytes in use (every linked file's size).
    pub fn used(&self) -> u64 {
        used(&lock(&self.state))
    }

    /// Counters.
    pub fn stats(&self) -> DiskStats {
        lock(&self.state).stats
    }

    /// The process using the disk dies: its handles stop working, and with
    /// [`Crash::Power`] whatever was not synced is lost, torn or half-written.
    pub fn crash(&self, how: Crash) {
        let mut st = lock(&self.state);
        st.epoch += 1;
        if how == Crash::Process {
            return;
        }
        let st = &mut *st;
        // A prefix of the unsynced directory operations reached the disk.
        let keep = st.rng.below(st.unsynced.len() as u64 + 1) as usize;
        for op in st.unsynced.drain(..).take(keep) {
            match op {
                MetaOp::Link { path, inode } => {
                    st.durable_entries.insert(path, inode);
                }
                MetaOp::Unlink { path } => {
                    st.durable_entries.remove(&path);
                }
            }
        }
        st.entries = st.durable_entries.clone();
        let faults = st.faults;
        for inode in st.inodes.values_mut() {
            let dirty: Vec<usize> = std::mem::take(&mut inode.dirty).into_iter().collect();
            let mut data = inode.durable.clone();
            // The new size may have been committed with the pages that did not
            // reach the disk reading as zeros.
            if inode.data.len() != data.len() && st.rng.chance(1, 3) {
                data.resize(inode.data.len(), 0);
            }
            for page in dirty {
                let start = page * PAGE;
                let end = ((page + 1) * PAGE).min(inode.data.len()).min(data.len());
                if start >= end {
                    continue;
                }
                let roll = st.rng.below(1000);
                let upto = if roll < faults.writeback {
                    end
                } else if roll < faults.writeback + faults.torn {
                    let sectors = (end - start).div_ceil(SECTOR) as u64;
                    (start + st.rng.below(sectors) as usize * SECTOR).min(end)
                } else {
                    continue;
                };
                data[start..upto].copy_from_slice(&inode.data[start..upto]);
                st.stats.torn_pages += 1;
            }
            inode.durable.clone_from(&data);
            inode.data = data;
        }
    }

    /// Wipes everything (the disk was replaced).
    pub fn wipe(&self) {
        let mut st = lock(&self.state);
        st.epoch += 1;
        st.inodes.clear();
        st.entries.clear();
        st.durable_entries.clear();
        st.unsynced.clear();
        st.dirs.clear();
        st.dirs.insert(PathBuf::from("/"));
    }

    /// The bytes of `path` as a reader would see them now, without faults (the
    /// simulator's own look at the disk).
    pub fn peek(&self, path: &Path) -> Option<Vec<u8>> {
        let st = lock(&self.state);
        let i = st.entries.get(path)?;
        st.inodes.get(i).map(|n| n.data.clone())
    }

    /// Every linked file and its size (for the failure report).
    pub fn listing(&self) -> Vec<(PathBuf, usize)> {
        let st = lock(&self.state);
        st.entries
            .iter()
            .map(|(p, i)| (p.clone(), st.inodes.get(i).map_or(0, |n| n.data.len())))
            .collect()
    }
}

fn used(st: &State) -> u64 {
    let linked: BTreeSet<u64> = st.entries.values().copied().collect();
    linked
        .iter()
        .filter_map(|i| st.inodes.get(i))
        .map(|n| n.data.len() as u64)
        .sum()
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{}: no such file", path.display()),
    )
}

/// A lock of a [`SimDisk`]: freed when dropped by its process, or by a crash.
#[derive(Debug)]
struct SimLock {
    state: Arc<Mutex<State>>,
    path: PathBuf,
    epoch: u64,
}

impl Drop for SimLock {
    fn drop(&mut self) {
        let mut st = lock(&self.state);
        let last = match st.locks.get_mut(&self.path) {
            Some((epoch, count)) if *epoch == self.epoch => {
                *count -= 1;
                *count == 0
            }
            _ => false,
        };
        if last {
            st.locks.remove(&self.path);
        }
    }
}

impl Backend for SimDisk {
    /// The simulated venue is one process per disk: its own handles share the lock,
    /// and a restart after a crash (a new epoch) takes over the dead one's.
    fn lock(&self, path: &Path) -> Result<HeldLock, LockError> {
        let mut st = lock(&self.state);
        let epoch = st.epoch;
        match st.locks.get_mut(path) {
            Some((held, count)) if *held == epoch => *count += 1,
            _ => {
                st.locks.insert(path.to_path_buf(), (epoch, 1));
            }
        }
        drop(st);
        Ok(HeldLock::new(SimLock {
            state: Arc::clone(&self.state),
            path: path.to_path_buf(),
            epoch,
        }))
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let mut st = lock(&self.state);
        for a in dir.ancestors() {
            st.dirs.insert(a.to_path_buf());
        }
        Ok(())
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let st = lock(&self.state);
        if !st.dirs.contains(dir) {
            return Err(not_found(dir));
        }
        Ok(st
            .entries
            .keys()
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| p.file_name()?.to_str().map(str::to_string))
            .collect())
    }

    fn exists(&self, path: &Path) -> bool {
        let st = lock(&self.state);
        st.entries.contains_key(path) || st.dirs.contains(path)
    }

    fn open(&self, path: &Path, how: Open) -> io::Result<FileHandle> {
        let mut st = lock(&self.state);
        if !st.dirs.contains(&parent(path)) {
            return Err(not_found(path));
        }
        let existing = st.entries.get(path).copied();
        let inode = match (how, existing) {
            (Open::CreateNew, Some(_)) => {
                return Err(io::Error::new(io::ErrorKind::AlreadyExists, "file exists"))
            }
            (Open::Read | Open::Write | Open::ReadWrite, None) => return Err(not_found(path)),
            (_, Some(i)) => {
                if how == Open::CreateTruncate {
                    truncate(&mut st, i, 0);
                }
                i
            }
            (_, None) => {
                let i = st.next_inode;
                st.next_inode += 1;
                st.inodes.insert(i, Inode::default());
                st.entries.insert(path.to_path_buf(), i);
                st.unsynced.push(MetaOp::Link {
                    path: path.to_path_buf(),
                    inode: i,
                });
                i
            }
        };
        let epoch = st.epoch;
        drop(st);
        Ok(FileHandle::new(SimFile {
            state: Arc::clone(&self.state),
            inode,
            epoch,
        }))
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let mut st = lock(&self.state);
        if st.entries.remove(path).is_none() {
            return Err(not_found(path));
        }
        st.unsynced.push(MetaOp::Unlink {
            path: path.to_path_buf(),
        });
        Ok(())
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut st = lock(&self.state);
        let Some(i) = st.entries.remove(from) else {
            return Err(not_found(from));
        };
        st.entries.insert(to.to_path_buf(), i);
        st.unsynced.push(MetaOp::Link {
            path: to.to_path_buf(),
            inode: i,
        });
        st.unsynced.push(MetaOp::Unlink {
            path: from.to_path_buf(),
        });
        Ok(())
    }

    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut st = lock(&self.state);
        let Some(&i) = st.entries.get(from) else {
            return Err(not_found(from));
        };
        if st.entries.contains_key(to) {
            return Err(io::Error::new(io::ErrorKind::AlreadyExists, "file exists"));
        }
        st.entries.insert(to.to_path_buf(), i);
        st.unsynced.push(MetaOp::Link {
            path: to.to_path_buf(),
            inode: i,
        });
        Ok(())
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut st = lock(&self.state);
        if !st.dirs.contains(dir) {
            return Err(not_found(dir));
        }
        let st = &mut *st;
        let mut rest = Vec::new();
        for op in st.unsynced.drain(..) {
            let path = match &op {
                MetaOp::Link { path, .. } | MetaOp::Unlink { path } => path,
            };
            if path.parent() != Some(dir) {
                rest.push(op);
                continue;
            }
            match op {
                MetaOp::Link { path, inode } => {
                    st.durable_entries.insert(path, inode);
                }
                MetaOp::Unlink { path } => {
                    st.durable_entries.remove(&path);
                }
            }
        }
        st.unsynced = rest;
        Ok(())
    }

    fn threads(&self) -> bool {
        false
    }
}

fn truncate(st: &mut State, inode: u64, len: usize) {
    if let Some(n) = st.inodes.get_mut(&inode) {
        let old = n.data.len();
        n.data.resize(len, 0);
        // The pages around the cut changed (a shrink, or new zeros): dirty.
        let from = old.min(len) / PAGE;
        let to = old.max(len).div_ceil(PAGE);
        n.dirty.extend(from..to.max(from + 1));
    }
}

/// An open file of a [`SimDisk`], valid until the next crash.
#[derive(Debug)]
struct SimFile {
    state: Arc<Mutex<State>>,
    inode: u64,
    epoch: u64,
}

impl SimFile {
    /// The disk, if this handle's process is still alive.
    fn live(&self) -> io::Result<MutexGuard<'_, State>> {
        let st = lock(&self.state);
        if st.epoch != self.epoch {
            return Err(io::Error::other(
                "the process that opened this file crashed",
            ));
        }
        Ok(st)
    }
}

impl FileIo for SimFile {
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize> {
        let mut st = self.live()?;
        let st = &mut *st;
        let offset = offset as usize;
        let end = offset + buf.len();
        let mut n = buf.len();
        if let Some(cap) = st.capacity {
            let size = st.inodes.get(&self.inode).map_or(0, |i| i.data.len());
            let grow = end.saturating_sub(size) as u64;
            let room = cap.saturating_sub(used(st));
            if grow > room {
                st.stats.enospc += 1;
                // A short write up to the room left, then the error.
                let fits = (size.saturating_sub(offset) as u64 + room) as usize;
                if fits == 0 || fits >= buf.len() {
                    return Err(io::Error::from_raw_os_error(28));
                }
                n = fits;
            }
        }
        let inode = st.inodes.entry(self.inode).or_default();
        let end = offset + n;
        if inode.data.len() < end {
            inode.data.resize(end, 0);
        }
        inode.data[offset..end].copy_from_slice(&buf[..n]);
        inode.dirty.extend(offset / PAGE..end.div_ceil(PAGE));
        Ok(n)
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let mut st = self.live()?;
        let st = &mut *st;
        let data = st.inodes.get(&self.inode).map_or(&[][..], |i| &i.data[..]);
        let from = (offset as usize).min(data.len());
        let n = (data.len() - from).min(buf.len());
        buf[..n].copy_from_slice(&data[from..from + n]);
        if n > 0 && st.rng.below(1000) < st.faults.read_flip {
            let at = st.rng.below(n as u64) as usize;
            buf[at] ^= 1 << st.rng.below(8);
            st.stats.flips += 1;
        }
        Ok(n)
    }

    fn size(&self) -> io::Result<u64> {
        let st = self.live()?;
        Ok(st
            .inodes
            .get(&self.inode)
            .map_or(0, |i| i.data.len() as u64))
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut st = self.live()?;
        truncate(&mut st, self.inode, len as usize);
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        let mut st = self.live()?;
        let st = &mut *st;
        let fail = st.rng.below(1000) < st.faults.sync_eio;
        let Some(inode) = st.inodes.get_mut(&self.inode) else {
            return Ok(());
        };
        if fail {
            // fsyncgate: the pages it could not write are marked clean anyway.
            inode.dirty.clear();
            st.stats.sync_failures += 1;
            return Err(io::Error::from_raw_os_error(5));
        }
        let len = inode.data.len();
        inode.durable.resize(len, 0);
        for page in std::mem::take(&mut inode.dirty) {
            let start = page * PAGE;
            let end = ((page + 1) * PAGE).min(len);
            if start < end {
                inode.durable[start..end].copy_from_slice(&inode.data[start..end]);
            }
        }
        st.stats.syncs += 1;
        Ok(())
    }

    fn sync_all(&self) -> io::Result<()> {
        self.sync_data()
    }

    fn try_clone(&self) -> io::Result<FileHandle> {
        drop(self.live()?);
        Ok(FileHandle::new(SimFile {
            state: Arc::clone(&self.state),
            inode: self.inode,
            epoch: self.epoch,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_journal::storage::Open;

    fn p(s: &str) -> PathBuf {
        PathBuf::from(s)
    }

    #[test]
    fn synced_data_survives_a_power_loss_and_unsynced_does_not() {
        let disk = SimDisk::new(1, DiskFaults::default());
        let s = disk.storage();
        s.create_dir_all(&p("/d")).unwrap();
        let f = s.open(&p("/d/f"), Open::CreateNew).unwrap();
        f.write_all_at(b"hello", 0).unwrap();
        f.sync_data().unwrap();
        s.sync_dir(&p("/d")).unwrap();
        f.write_all_at(b" world", 5).unwrap();
        let g = s.open(&p("/d/g"), Open::CreateNew).unwrap();
        g.write_all_at(b"x", 0).unwrap();
        g.sync_data().unwrap(); // data synced, directory entry not
        disk.crash(Crash::Power);
        assert!(
            f.write_all_at(b"!", 0).is_err(),
            "the dead process's handle"
        );
        assert_eq!(s.read(&p("/d/f")).unwrap(), b"hello");
        assert!(!s.exists(&p("/d/g")) || s.read(&p("/d/g")).unwrap() == b"x");
    }

    #[test]
    fn a_process_crash_keeps_the_page_cache() {
        let disk = SimDisk::new(2, DiskFaults::default());
        let s = disk.storage();
        s.create_dir_all(&p("/d")).unwrap();
        let f = s.open(&p("/d/f"), Open::CreateNew).unwrap();
        f.write_all_at(b"abc", 0).unwrap();
        disk.crash(Crash::Process);
        assert_eq!(s.read(&p("/d/f")).unwrap(), b"abc");
    }

    #[test]
    fn a_full_disk_writes_a_prefix_then_refuses() {
        let disk = SimDisk::new(3, DiskFaults::default());
        let s = disk.storage();
        s.create_dir_all(&p("/d")).unwrap();
        disk.set_capacity(Some(4));
        let f = s.open(&p("/d/f"), Open::CreateNew).unwrap();
        let e = f.write_all_at(b"abcdef", 0).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(28));
        assert_eq!(s.read(&p("/d/f")).unwrap(), b"abcd");
    }

    #[test]
    fn a_failed_sync_loses_its_pages_at_the_next_power_loss() {
        let disk = SimDisk::new(4, DiskFaults::default());
        let s = disk.storage();
        s.create_dir_all(&p("/d")).unwrap();
        let f = s.open(&p("/d/f"), Open::CreateNew).unwrap();
        s.sync_dir(&p("/d")).unwrap();
        f.write_all_at(b"abc", 0).unwrap();
        disk.set_faults(DiskFaults {
            sync_eio: 1000,
            ..DiskFaults::default()
        });
        assert!(f.sync_data().is_err());
        disk.set_faults(DiskFaults::default());
        f.sync_data().unwrap(); // succeeds, without the dropped pages
        disk.crash(Crash::Power);
        assert_ne!(s.read(&p("/d/f")).unwrap(), b"abc");
    }
}
