//! Where the journal's files live: the seam between the journal and the file system.
//!
//! Every file the journal, its high-water mark, its segment-preparing helper and the
//! snapshot store touch goes through a [`Storage`]: [`Storage::os`] is the operating
//! system's file system (`std::fs`, what every production path uses), and a
//! deterministic simulator plugs in its own [`Backend`] (in-memory files whose
//! unsynced bytes a crash loses, torn and short writes, a full disk, a flipped bit on
//! read: `peregrine-sim`). The journal's code is the same over both.
//!
//! The seam costs one indirect call per `write`/`fdatasync` system call, never one per
//! append (appends fill a userspace buffer): nothing measurable
//! (`docs/performance.md`, "The storage seam").

use std::fmt;
use std::io;
use std::path::Path;
use std::sync::Arc;

mod os;

/// How to open a file: the combinations the journal uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Open {
    /// An existing file, read only.
    Read,
    /// An existing file, write only.
    Write,
    /// An existing file, read and write.
    ReadWrite,
    /// Read and write, created empty if missing (never truncated).
    ReadWriteCreate,
    /// Write a new file; fails if it exists.
    CreateNew,
    /// Write, created if missing, truncated to zero if present.
    CreateTruncate,
}

/// One open file, positioned I/O only (no cursor): cheap to share between the writer
/// and a thread that syncs it.
pub trait FileIo: Send + Sync + fmt::Debug {
    /// One write of `buf` at `offset`; may write fewer bytes (a short write).
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize>;
    /// One read into `buf` from `offset`; 0 at the end of the file.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
    /// The file's length.
    fn size(&self) -> io::Result<u64>;
    /// Truncates or extends (with zeros) the file to `len` bytes.
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// `fdatasync`: the data written so far (and the size) survive a crash.
    fn sync_data(&self) -> io::Result<()>;
    /// `fsync`: data and metadata survive a crash.
    fn sync_all(&self) -> io::Result<()>;
    /// Another handle on the same open file.
    fn try_clone(&self) -> io::Result<FileHandle>;
    /// Reads the whole file into `buf` (cleared first); returns the bytes read. The
    /// default sizes `buf` to the file and fills it with [`FileIo::read_at`]; a
    /// backend may read without zero-filling `buf` first (the OS one does).
    fn read_all(&self, buf: &mut Vec<u8>) -> io::Result<usize> {
        buf.clear();
        let len = usize::try_from(self.size()?)
            .map_err(|_| io::Error::new(io::ErrorKind::FileTooLarge, "file too large"))?;
        buf.resize(len, 0);
        let mut at = 0;
        while at < buf.len() {
            match self.read_at(&mut buf[at..], at as u64) {
                Ok(0) => break,
                Ok(n) => at += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        // A file that shrank under the read (the caller verifies what it got).
        buf.truncate(at);
        Ok(at)
    }
}

/// A lock taken through a [`Storage`], held until dropped (the box keeps the
/// backend's lock alive: never read, only dropped).
#[derive(Debug)]
pub struct HeldLock(#[allow(dead_code)] Box<dyn fmt::Debug + Send + Sync>);

impl HeldLock {
    /// Wraps a backend's lock.
    pub fn new(lock: impl fmt::Debug + Send + Sync + 'static) -> Self {
        HeldLock(Box::new(lock))
    }
}

pub use peregrine_types::lock::{LockError, DIR_LOCK};

/// A file system: the operating system's, or a simulated one.
pub trait Backend: Send + Sync + fmt::Debug {
    /// Takes the advisory lock of `path` (`peregrine_types::lock`): refused while
    /// another holder has it; released when the returned lock drops, or when the
    /// process dies.
    fn lock(&self, path: &Path) -> Result<HeldLock, LockError>;
    /// Creates `dir` and its parents.
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// The names of the entries of `dir` (any order).
    fn list(&self, dir: &Path) -> io::Result<Vec<String>>;
    /// Whether `path` exists.
    fn exists(&self, path: &Path) -> bool;
    /// Opens `path`.
    fn open(&self, path: &Path, how: Open) -> io::Result<FileHandle>;
    /// Unlinks `path`.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// Renames `from` to `to`, replacing `to`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Links `to` to the file `from` names; fails if `to` exists.
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// `fsync`s directory `dir`: entries created, renamed or removed in it survive a
    /// crash.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Whether work the journal hands to helper threads (preparing segments ahead)
    /// may run on threads. A deterministic simulation answers `false`: the work then
    /// runs inline, on the caller's thread, in a reproducible order.
    fn threads(&self) -> bool {
        true
    }
}

/// An open file of a [`Storage`].
#[derive(Debug)]
pub struct FileHandle(Box<dyn FileIo>);

impl FileHandle {
    /// Wraps a backend's file.
    pub fn new(file: impl FileIo + 'static) -> Self {
        FileHandle(Box::new(file))
    }

    /// Writes all of `buf` at `offset` (retrying short writes).
    #[inline]
    pub fn write_all_at(&self, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
        while !buf.is_empty() {
            match self.0.write_at(buf, offset) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::WriteZero,
                        "failed to write whole buffer",
                    ))
                }
                Ok(n) => {
                    buf = &buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Reads the whole file into `buf` (cleared first); returns its length.
    pub fn read_to_end(&self, buf: &mut Vec<u8>) -> io::Result<usize> {
        self.0.read_all(buf)
    }

    /// The file's length.
    pub fn len(&self) -> io::Result<u64> {
        self.0.size()
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> io::Result<bool> {
        Ok(self.0.size()? == 0)
    }

    /// See [`FileIo::set_len`].
    pub fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }

    /// See [`FileIo::sync_data`].
    #[inline]
    pub fn sync_data(&self) -> io::Result<()> {
        self.0.sync_data()
    }

    /// See [`FileIo::sync_all`].
    pub fn sync_all(&self) -> io::Result<()> {
        self.0.sync_all()
    }

    /// See [`FileIo::try_clone`].
    pub fn try_clone(&self) -> io::Result<FileHandle> {
        self.0.try_clone()
    }
}

/// A handle on a file system (cheap to clone): the operating system's
/// ([`Storage::os`]) or a simulated one ([`Storage::new`]).
#[derive(Debug, Clone)]
pub struct Storage(Arc<dyn Backend>);

impl Default for Storage {
    fn default() -> Self {
        Storage::os()
    }
}

impl Storage {
    /// The operating system's file system (`std::fs`).
    pub fn os() -> Self {
        Storage(Arc::new(os::Os))
    }

    /// A file system implemented by `backend` (a simulator's).
    pub fn new(backend: Arc<dyn Backend>) -> Self {
        Storage(backend)
    }

    /// See [`Backend::create_dir_all`].
    pub fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        self.0.create_dir_all(dir)
    }

    /// See [`Backend::list`].
    pub fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        self.0.list(dir)
    }

    /// See [`Backend::exists`].
    pub fn exists(&self, path: &Path) -> bool {
        self.0.exists(path)
    }

    /// See [`Backend::open`].
    pub fn open(&self, path: &Path, how: Open) -> io::Result<FileHandle> {
        self.0.open(path, how)
    }

    /// Reads the whole file `path` into `buf` (cleared first).
    pub fn read_into(&self, path: &Path, buf: &mut Vec<u8>) -> io::Result<usize> {
        self.open(path, Open::Read)?.read_to_end(buf)
    }

    /// Reads the whole file `path`.
    pub fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let mut buf = Vec::new();
        self.read_into(path, &mut buf)?;
        Ok(buf)
    }

    /// See [`Backend::remove_file`].
    pub fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.0.remove_file(path)
    }

    /// See [`Backend::rename`].
    pub fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.0.rename(from, to)
    }

    /// See [`Backend::hard_link`].
    pub fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.0.hard_link(from, to)
    }

    /// See [`Backend::sync_dir`].
    pub fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.0.sync_dir(dir)
    }

    /// See [`Backend::threads`].
    pub fn threads(&self) -> bool {
        self.0.threads()
    }

    /// Locks directory `dir` for this process (its [`DIR_LOCK`] file).
    pub fn lock_dir(&self, dir: &Path) -> Result<HeldLock, LockError> {
        self.0.lock(&dir.join(DIR_LOCK))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file that writes at most 3 bytes per call and reads at most 2.
    #[derive(Debug, Default)]
    struct Stingy(std::sync::Mutex<Vec<u8>>);

    impl FileIo for Stingy {
        fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize> {
            let mut v = self.0.lock().unwrap();
            let n = buf.len().min(3);
            let end = offset as usize + n;
            if v.len() < end {
                v.resize(end, 0);
            }
            v[offset as usize..end].copy_from_slice(&buf[..n]);
            Ok(n)
        }
        fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
            let v = self.0.lock().unwrap();
            let from = (offset as usize).min(v.len());
            let n = (v.len() - from).min(buf.len()).min(2);
            buf[..n].copy_from_slice(&v[from..from + n]);
            Ok(n)
        }
        fn size(&self) -> io::Result<u64> {
            Ok(self.0.lock().unwrap().len() as u64)
        }
        fn set_len(&self, len: u64) -> io::Result<()> {
            self.0.lock().unwrap().resize(len as usize, 0);
            Ok(())
        }
        fn sync_data(&self) -> io::Result<()> {
            Ok(())
        }
        fn sync_all(&self) -> io::Result<()> {
            Ok(())
        }
        fn try_clone(&self) -> io::Result<FileHandle> {
            Err(io::ErrorKind::Unsupported.into())
        }
    }

    #[test]
    fn short_writes_and_reads_are_completed() {
        let f = FileHandle::new(Stingy::default());
        f.write_all_at(b"hello, world", 0).unwrap();
        f.write_all_at(b"W", 7).unwrap();
        let mut buf = vec![9; 3];
        assert_eq!(f.read_to_end(&mut buf).unwrap(), 12);
        assert_eq!(buf, b"hello, World");
    }

    #[test]
    fn os_storage_round_trips_files() {
        let dir = tempfile::tempdir().unwrap();
        let s = Storage::os();
        let sub = dir.path().join("a/b");
        s.create_dir_all(&sub).unwrap();
        let p = sub.join("f");
        assert!(!s.exists(&p));
        let f = s.open(&p, Open::CreateNew).unwrap();
        f.write_all_at(b"abc", 0).unwrap();
        f.sync_all().unwrap();
        assert!(s.open(&p, Open::CreateNew).is_err(), "create_new refuses");
        assert_eq!(s.read(&p).unwrap(), b"abc");
        s.hard_link(&p, &sub.join("g")).unwrap();
        s.remove_file(&p).unwrap();
        s.rename(&sub.join("g"), &sub.join("h")).unwrap();
        s.sync_dir(&sub).unwrap();
        assert_eq!(s.list(&sub).unwrap(), vec!["h".to_string()]);
        let h = s.open(&sub.join("h"), Open::ReadWrite).unwrap();
        h.set_len(1).unwrap();
        assert_eq!(h.len().unwrap(), 1);
        let t = s.open(&sub.join("h"), Open::CreateTruncate).unwrap();
        assert!(t.is_empty().unwrap());
        assert!(s.threads());
    }
}
