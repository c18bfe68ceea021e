//! An advisory lock on a file, held for as long as the [`FileLock`] lives: the one
//! way every Peregrine process claims a directory or a file it must be alone to write
//! (the exchange's journal and snapshot directories, the order engine's journal, the
//! FIX session store, the HTTP gateway's history file). Two exchanges on one journal
//! directory each believed its journal was the journal; now the second one refuses
//! to start, naming the first one's pid.
//!
//! `flock(2)` through `std::fs::File::try_lock` (stable since Rust 1.89): the kernel
//! drops the lock when the process dies, however it dies, so a crash never leaves a
//! stale lock behind. The lock file holds the holder's pid (informational: the lock
//! is the `flock`, not the file's contents). Advisory: it stops Peregrine processes,
//! not someone who edits the files by hand.
//!
//! The lock is the process's: another [`FileLock`] of the same path in the same
//! process shares it (one `flock`, counted), so a process that reopens its own files
//! (a cluster node stepping down, a test that simulates a crash by leaking a journal)
//! is not refused by itself; it is released when the last one drops.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// The locks this process holds: the locked file (keeping the `flock`) and how many
/// [`FileLock`]s share it.
static HELD: Mutex<BTreeMap<PathBuf, (File, usize)>> = Mutex::new(BTreeMap::new());

/// Why a lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process (or another handle of this one) holds it.
    #[error(
        "{} is locked by another process{}: is another instance running on the same files?",
        .path.display(),
        .pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
    )]
    Held {
        /// The lock file.
        path: PathBuf,
        /// The holder's pid, if it could be read.
        pid: Option<u32>,
    },
    /// The lock file could not be opened or locked.
    #[error("locking {}: {source}", .path.display())]
    Io {
        /// The lock file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// A held lock (released when the process's last one is dropped, or when the process
/// ends).
#[derive(Debug)]
pub struct FileLock {
    /// The key in [`HELD`].
    key: PathBuf,
    path: PathBuf,
}

/// How long (ms) [`FileLock::acquire`] waits for a lock that this process itself held
/// last (see there) before it calls it held.
const SELF_WAIT_MS: u32 = 2_000;

/// The name of the lock file of a directory (`<dir>/LOCK`).
pub const DIR_LOCK: &str = "LOCK";

impl FileLock {
    /// Locks `path` (created if missing) and writes this process's pid into it.
    pub fn acquire(path: &Path) -> Result<FileLock, LockError> {
        let io = |source| LockError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io)?;
        let key = std::fs::canonicalize(path).map_err(io)?;
        if let Some((_, count)) = held.get_mut(&key) {
            *count += 1;
            return Ok(FileLock {
                key,
                path: path.to_path_buf(),
            });
        }
        let mut waited = 0;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) => {
                    let pid = read_pid(&mut file);
                    // Our own pid, yet not in `HELD`: a lock this process has just let
                    // go, still held through a descriptor a child inherited between
                    // its fork and its exec (the lock belongs to the open file, which
                    // lives until the child's exec closes it). Wait that out, briefly.
                    if pid == Some(std::process::id()) && waited < SELF_WAIT_MS {
                        waited += 1;
                        std::thread::sleep(std::time::Duration::from_millis(1));
                        continue;
                    }
                    return Err(LockError::Held {
                        path: path.to_path_buf(),
                        pid,
                    });
                }
                Err(TryLockError::Error(e)) => return Err(io(e)),
            }
        }
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        writeln!(file, "{}", std::process::id()).map_err(io)?;
        held.insert(key.clone(), (file, 1));
        Ok(FileLock {
            key,
            path: path.to_path_buf(),
        })
    }

    /// Locks directory `dir` (its [`DIR_LOCK`] file).
    pub fn acquire_dir(dir: &Path) -> Result<FileLock, LockError> {
        Self::acquire(&dir.join(DIR_LOCK))
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
        let last = held.get_mut(&self.key).is_some_and(|(_, count)| {
            *count -= 1;
            *count == 0
        });
        if last {
            // Closing the file releases the `flock`.
            held.remove(&self.key);
        }
    }
}

fn read_pid(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.take(32).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run by the test below in a child process: tries the lock and prints what
    /// happened.
    #[test]
    fn child_tries_the_lock() {
        let Ok(dir) = std::env::var("PEREGRINE_LOCK_CHILD") else {
            return;
        };
        match FileLock::acquire_dir(Path::new(&dir)) {
            Ok(_) => println!("LOCKED"),
            Err(LockError::Held { pid, .. }) => println!("HELD BY {pid:?}"),
            Err(e) => println!("ERROR {e}"),
        }
    }

    fn child(dir: &Path) -> String {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "lock::tests::child_tries_the_lock",
                "--nocapture",
            ])
            .env("PEREGRINE_LOCK_CHILD", dir)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    #[test]
    fn another_process_is_refused_with_the_holders_pid_until_it_lets_go() {
        let dir = std::env::temp_dir().join(format!("pg-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let first = FileLock::acquire_dir(&dir).unwrap();
        assert_eq!(first.path(), dir.join(DIR_LOCK));
        let me = std::process::id();
        assert!(
            child(&dir).contains(&format!("HELD BY Some({me})")),
            "{}",
            child(&dir)
        );
        // The same process shares its own lock; the last one to go releases it.
        let second = FileLock::acquire_dir(&dir).unwrap();
        drop(first);
        assert!(child(&dir).contains("HELD BY"));
        drop(second);
        assert!(child(&dir).contains("LOCKED"), "{}", child(&dir));
        let held = LockError::Held {
            path: dir.join(DIR_LOCK),
            pid: Some(42),
        };
        assert!(held.to_string().contains("(pid 42)"), "{held}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
