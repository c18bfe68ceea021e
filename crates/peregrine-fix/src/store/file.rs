//! [`FileStore`]: one append-only file per session.
//!
//! Records are appended to a buffer and reach the file on [`MessageStore::flush`]
//! (one `write` per flush, plus `fdatasync` under [`Durability::Fsync`]). The session
//! flushes before any byte it produced may leave the process, so a message the peer
//! could have seen is always in the file. Only application messages are kept for
//! resends (the index holds their offsets; the bytes stay on disk).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::record::{self, RecordKind};
use super::{MessageStore, StoreError};

/// How far a flush goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// `write` to the operating system: survives a crash of the process, not of the
    /// machine. The default: a flush costs one system call.
    #[default]
    OsBuffer,
    /// `write` then `fdatasync`: survives a power loss; costs a disk round trip
    /// (hundreds of µs) per flush.
    Fsync,
}

/// A session's store in one file.
#[derive(Debug)]
pub struct FileStore {
    path: PathBuf,
    file: File,
    /// `<path>.lock`, held for the store's life: one writer per store.
    _lock: peregrine_types::lock::FileLock,
    durability: Durability,
    /// Records not yet written.
    pending: Vec<u8>,
    /// Bytes in the file (written).
    file_len: u64,
    next_sender: u64,
    next_target: u64,
    creation_time: u64,
    /// (seq, offset of the message in the file, length) of every application message.
    index: Vec<(u64, u64, u32)>,
    /// (seq, offset, length) of every application state record.
    app_index: Vec<(u64, u64, u32)>,
    read_buf: Vec<u8>,
    torn_bytes: u64,
}

/// The lock file of the store at `path`: `<path>.lock`.
fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

impl FileStore {
    /// Opens the store at `path`, creating it (with `now_ns` as its creation time) if
    /// it does not exist. A torn last record is cut off; damage before it is an error.
    pub fn open(path: &Path, durability: Durability, now_ns: u64) -> Result<FileStore, StoreError> {
        let io = |source| StoreError::Io {
            path: path.display().to_string(),
            source,
        };
        let lock = peregrine_types::lock::FileLock::acquire(&lock_path(path))?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io)?;
        let bytes = std::fs::read(path).map_err(io)?;
        let scanned = record::scan(&bytes).map_err(|(offset, error)| StoreError::Corrupt {
            path: path.display().to_string(),
            offset,
            error,
        })?;
        let mut store = FileStore {
            path: path.to_path_buf(),
            file,
            _lock: lock,
            durability,
            pending: Vec::with_capacity(64 * 1024),
            file_len: scanned.valid_len,
            next_sender: scanned.next_sender,
            next_target: scanned.next_target,
            creation_time: scanned.creation_time,
            index: scanned.messages,
            app_index: scanned.app_states,
            read_buf: Vec::new(),
            torn_bytes: scanned.torn_bytes,
        };
        if scanned.valid_len == 0 {
            store.start_file(now_ns)?;
        } else if scanned.torn_bytes > 0 {
            store.file.set_len(scanned.valid_len).map_err(io)?;
            store.sync()?;
        }
        Ok(store)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes of a torn last record cut off when the store was opened (0 normally).
    pub fn torn_bytes(&self) -> u64 {
        self.torn_bytes
    }

    /// Appends an application state record (`seq` and `payload` are the
    /// application's): it reaches the file with the next flush, after every record
    /// before it, and is carried over when the sequence is reset.
    pub fn append_app_state(&mut self, seq: u64, payload: &[u8]) {
        let offset = self.file_len + self.pending.len() as u64 + record::RECORD_HEADER as u64;
        record::encode(&mut self.pending, RecordKind::AppState, seq, payload);
        self.app_index.push((seq, offset, payload.len() as u32));
    }

    /// Calls `f(seq, payload)` for every application state record, oldest first.
    pub fn app_states(&mut self, f: &mut dyn FnMut(u64, &[u8])) -> Result<(), StoreError> {
        self.flush()?;
        for i in 0..self.app_index.len() {
            let (seq, offset, len) = self.app_index[i];
            self.read_buf.resize(len as usize, 0);
            self.file
                .read_exact_at(&mut self.read_buf, offset)
                .map_err(|e| StoreError::Io {
                    path: self.path.display().to_string(),
                    source: e,
                })?;
            f(seq, &self.read_buf);
        }
        Ok(())
    }

    /// Replaces the file, atomically (a new file renamed over it), by a fresh header
    /// and the application state records: a sequence reset that a crash cannot
    /// interrupt halfway.
    fn restart_file(&mut self, now_ns: u64) -> Result<(), StoreError> {
        let mut states = Vec::new();
        self.app_states(&mut |seq, p| states.push((seq, p.to_vec())))?;
        let mut bytes = record::file_header(now_ns).to_vec();
        let mut app_index = Vec::with_capacity(states.len());
        for (seq, p) in &states {
            let offset = (bytes.len() + record::RECORD_HEADER) as u64;
            record::encode(&mut bytes, RecordKind::AppState, *seq, p);
            app_index.push((*seq, offset, p.len() as u32));
        }
        let mut tmp = self.path.clone().into_os_string();
        tmp.push(".new");
        let tmp = PathBuf::from(tmp);
        let io = |source| StoreError::Io {
            path: tmp.display().to_string(),
            source,
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .map_err(io)?;
        file.write_all_at(&bytes, 0).map_err(io)?;
        file.sync_data().map_err(io)?;
        std::fs::rename(&tmp, &self.path).map_err(|e| self.io(e))?;
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        self.file = file;
        self.pending.clear();
        self.index.clear();
        self.app_index = app_index;
        self.file_len = bytes.len() as u64;
        self.creation_time = now_ns;
        self.next_sender = 1;
        self.next_target = 1;
        Ok(())
    }

    fn io(&self, source: std::io::Error) -> StoreError {
        StoreError::Io {
            path: self.path.display().to_string(),
            source,
        }
    }

    /// Empties the file and writes a fresh header.
    fn start_file(&mut self, now_ns: u64) -> Result<(), StoreError> {
        self.pending.clear();
        self.index.clear();
        self.app_index.clear();
        self.file.set_len(0).map_err(|e| self.io(e))?;
        let header = record::file_header(now_ns);
        self.file.write_all_at(&header, 0).map_err(|e| self.io(e))?;
        self.file_len = header.len() as u64;
        self.creation_time = now_ns;
        self.next_sender = 1;
        self.next_target = 1;
        self.sync()
    }

    fn sync(&mut self) -> Result<(), StoreError> {
        if self.durability == Durability::Fsync {
            self.file.sync_data().map_err(|e| self.io(e))?;
        }
        Ok(())
    }
}

impl MessageStore for FileStore {
    fn next_sender_seq(&self) -> u64 {
        self.next_sender
    }

    fn next_target_seq(&self) -> u64 {
        self.next_target
    }

    fn creation_time(&self) -> u64 {
        self.creation_time
    }

    fn store_outbound(&mut self, seq: u64, message: Option<&[u8]>) -> Result<(), StoreError> {
        if seq != self.next_sender {
            return Err(StoreError::OutOfSequence {
                seq,
                next: self.next_sender,
            });
        }
        match message {
            Some(m) => {
                let offset =
                    self.file_len + self.pending.len() as u64 + record::RECORD_HEADER as u64;
                record::encode(&mut self.pending, RecordKind::AppMessage, seq, m);
                self.index.push((seq, offset, m.len() as u32));
            }
            None => record::encode(&mut self.pending, RecordKind::AdminMessage, seq, &[]),
        }
        self.next_sender = seq + 1;
        Ok(())
    }

    fn advance_sender_seq(&mut self, next: u64) -> Result<(), StoreError> {
        if next > self.next_sender {
            record::encode(&mut self.pending, RecordKind::SenderSeq, next, &[]);
            self.next_sender = next;
        }
        Ok(())
    }

    fn set_next_target_seq(&mut self, next: u64) -> Result<(), StoreError> {
        if next != self.next_target {
            record::encode(&mut self.pending, RecordKind::TargetSeq, next, &[]);
            self.next_target = next;
        }
        Ok(())
    }

    fn outbound_range(
        &mut self,
        begin: u64,
        end: u64,
        f: &mut dyn FnMut(u64, &[u8]),
    ) -> Result<(), StoreError> {
        self.flush()?;
        let first = self.index.partition_point(|&(seq, _, _)| seq < begin);
        for i in first..self.index.len() {
            let (seq, offset, len) = self.index[i];
            if seq > end {
                break;
            }
            self.read_buf.resize(len as usize, 0);
            self.file
                .read_exact_at(&mut self.read_buf, offset)
                .map_err(|e| StoreError::Io {
                    path: self.path.display().to_string(),
                    source: e,
                })?;
            f(seq, &self.read_buf);
        }
        Ok(())
    }

    fn reset(&mut self, now_ns: u64) -> Result<(), StoreError> {
        self.restart_file(now_ns)
    }

    fn flush(&mut self) -> Result<(), StoreError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.file
            .write_all_at(&self.pending, self.file_len)
            .map_err(|e| self.io(e))?;
        self.file_len += self.pending.len() as u64;
        self.pending.clear();
        self.sync()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(dir: &Path) -> FileStore {
        FileStore::open(&dir.join("s.fixstore"), Durability::OsBuffer, 7).unwrap()
    }

    fn resent(s: &mut FileStore, begin: u64, end: u64) -> Vec<(u64, Vec<u8>)> {
        let mut out = Vec::new();
        s.outbound_range(begin, end, &mut |seq, m| out.push((seq, m.to_vec())))
            .unwrap();
        out
    }

    /// In a child process: opens the store named by the variable, says what happened.
    #[test]
    fn child_opens_the_store() {
        let Ok(path) = std::env::var("PEREGRINE_FIX_STORE_CHILD") else {
            return;
        };
        match FileStore::open(Path::new(&path), Durability::OsBuffer, 7) {
            Ok(_) => println!("OPENED"),
            Err(e) => println!("REFUSED {e}"),
        }
    }

    /// Two gateways on one store would interleave their sequence numbers: a second
    /// process is refused while the first holds it (issue 27, defect 2).
    #[test]
    fn a_second_process_on_the_store_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.fixstore");
        let child = || {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "store::file::tests::child_opens_the_store",
                    "--nocapture",
                ])
                .env("PEREGRINE_FIX_STORE_CHILD", &path)
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        let held = store(dir.path());
        let refused = child();
        assert!(
            refused.contains("REFUSED") && refused.contains(&format!("pid {}", std::process::id())),
            "{refused}"
        );
        drop(held);
        assert!(child().contains("OPENED"));
    }

    #[test]
    fn survives_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut s = store(dir.path());
            assert_eq!((s.next_sender_seq(), s.next_target_seq()), (1, 1));
            s.store_outbound(1, Some(b"app one")).unwrap();
            s.store_outbound(2, None).unwrap();
            s.store_outbound(3, Some(b"app three")).unwrap();
            s.set_next_target_seq(9).unwrap();
            MessageStore::flush(&mut s).unwrap();
            // Unflushed records are lost with the process; flushed ones are not.
            s.store_outbound(4, Some(b"never flushed")).unwrap();
        }
        let mut s = store(dir.path());
        assert_eq!(
            (s.next_sender_seq(), s.next_target_seq(), s.creation_time()),
            (4, 9, 7)
        );
        assert_eq!(
            resent(&mut s, 1, u64::MAX),
            vec![(1, b"app one".to_vec()), (3, b"app three".to_vec())]
        );
        assert_eq!(resent(&mut s, 2, 2), vec![]);
        // Unflushed messages are readable for resends too (the range flushes first).
        s.store_outbound(4, Some(b"four")).unwrap();
        assert_eq!(resent(&mut s, 3, 4).len(), 2);
    }

    #[test]
    fn out_of_sequence_is_refused_and_reset_starts_over() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = store(dir.path());
        s.store_outbound(1, None).unwrap();
        assert!(matches!(
            s.store_outbound(5, None),
            Err(StoreError::OutOfSequence { seq: 5, next: 2 })
        ));
        s.advance_sender_seq(5).unwrap();
        s.store_outbound(5, Some(b"five")).unwrap();
        s.reset(99).unwrap();
        assert_eq!(
            (s.next_sender_seq(), s.next_target_seq(), s.creation_time()),
            (1, 1, 99)
        );
        drop(s);
        let mut s = store(dir.path());
        assert_eq!((s.next_sender_seq(), s.creation_time()), (1, 99));
        assert!(resent(&mut s, 1, u64::MAX).is_empty());
    }

    #[test]
    fn app_state_survives_reopen_and_reset() {
        let dir = tempfile::tempdir().unwrap();
        let states = |s: &mut FileStore| {
            let mut v = Vec::new();
            s.app_states(&mut |seq, p| v.push((seq, p.to_vec())))
                .unwrap();
            v
        };
        {
            let mut s = store(dir.path());
            s.store_outbound(1, Some(b"er one")).unwrap();
            s.append_app_state(10, b"state after report 10");
            s.store_outbound(2, Some(b"er two")).unwrap();
            s.append_app_state(11, b"state after report 11");
            MessageStore::flush(&mut s).unwrap();
        }
        let mut s = store(dir.path());
        assert_eq!(s.next_sender_seq(), 3);
        assert_eq!(
            states(&mut s),
            vec![
                (10, b"state after report 10".to_vec()),
                (11, b"state after report 11".to_vec())
            ]
        );
        // A reset drops the messages and keeps the application's state.
        s.reset(50).unwrap();
        assert_eq!((s.next_sender_seq(), s.creation_time()), (1, 50));
        assert!(resent(&mut s, 1, u64::MAX).is_empty());
        s.append_app_state(12, b"twelve");
        s.store_outbound(1, Some(b"after reset")).unwrap();
        MessageStore::flush(&mut s).unwrap();
        drop(s);
        let mut s = store(dir.path());
        assert_eq!((s.next_sender_seq(), s.creation_time()), (2, 50));
        assert_eq!(states(&mut s).len(), 3);
        assert_eq!(states(&mut s)[2], (12, b"twelve".to_vec()));
        assert_eq!(resent(&mut s, 1, 1), vec![(1, b"after reset".to_vec())]);
        assert!(!dir.path().join("s.fixstore.new").exists());
    }

    #[test]
    fn a_torn_tail_is_cut_on_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.fixstore");
        {
            let mut s = store(dir.path());
            s.store_outbound(1, Some(b"one")).unwrap();
            s.store_outbound(2, Some(b"two")).unwrap();
            MessageStore::flush(&mut s).unwrap();
        }
        let len = std::fs::metadata(&path).unwrap().len();
        OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(len - 2)
            .unwrap();
        let s = store(dir.path());
        assert_eq!(s.next_sender_seq(), 2);
        assert!(s.torn_bytes() > 0);
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            len - (record::RECORD_HEADER as u64 + 3)
        );
    }

    #[test]
    fn damage_before_the_last_record_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.fixstore");
        {
            let mut s = store(dir.path());
            s.store_outbound(1, Some(b"one")).unwrap();
            s.store_outbound(2, Some(b"two")).unwrap();
            MessageStore::flush(&mut s).unwrap();
        }
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[record::FILE_HEADER + record::RECORD_HEADER] ^= 0x20;
        std::fs::write(&path, &bytes).unwrap();
        let e = FileStore::open(&path, Durability::OsBuffer, 0).unwrap_err();
        assert!(matches!(e, StoreError::Corrupt { offset: 16, .. }), "{e}");
    }
}
