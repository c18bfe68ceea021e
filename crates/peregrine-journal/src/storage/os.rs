//! The operating system's file system: [`Storage::os`](super::Storage::os).

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek};
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::{Backend, FileHandle, FileIo, HeldLock, LockError, Open};

/// `std::fs`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Os;

impl Backend for Os {
    fn lock(&self, path: &Path) -> Result<HeldLock, LockError> {
        peregrine_types::lock::FileLock::acquire(path).map(HeldLock::new)
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            // Names that are not UTF-8 are nobody's files here: skipped.
            if let Ok(name) = entry?.file_name().into_string() {
                out.push(name);
            }
        }
        Ok(out)
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn open(&self, path: &Path, how: Open) -> io::Result<FileHandle> {
        let mut o = OpenOptions::new();
        match how {
            Open::Read => o.read(true),
            Open::Write => o.write(true),
            Open::ReadWrite => o.read(true).write(true),
            Open::ReadWriteCreate => o.read(true).write(true).create(true).truncate(false),
            Open::CreateNew => o.write(true).create_new(true),
            Open::CreateTruncate => o.write(true).create(true).truncate(true),
        };
        Ok(FileHandle::new(o.open(path)?))
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::hard_link(from, to)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }
}

impl FileIo for File {
    #[inline]
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize> {
        FileExt::write_at(self, buf, offset)
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        FileExt::read_at(self, buf, offset)
    }

    fn size(&self) -> io::Result<u64> {
        Ok(self.metadata()?.len())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        File::set_len(self, len)
    }

    #[inline]
    fn sync_data(&self) -> io::Result<()> {
        File::sync_data(self)
    }

    fn sync_all(&self) -> io::Result<()> {
        File::sync_all(self)
    }

    fn try_clone(&self) -> io::Result<FileHandle> {
        Ok(FileHandle::new(File::try_clone(self)?))
    }

    /// std's `read_to_end` on a `File` reads into the vector's spare capacity
    /// without zero-filling it: the default's `resize` cost recovery ~23% (a memset
    /// of every segment; same-run A/B in docs/performance.md, "The journal's
    /// storage seam"). It reads from the handle's cursor, which nothing else here
    /// uses (every other read and write is positional): rewound first.
    fn read_all(&self, buf: &mut Vec<u8>) -> io::Result<usize> {
        buf.clear();
        let mut f = self;
        f.seek(io::SeekFrom::Start(0))?;
        f.read_to_end(buf)
    }
}
