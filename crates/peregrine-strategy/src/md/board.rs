//! The book board: one shared-memory file (`<engine dir>/market.board`) holding the
//! current book of every (venue, instrument) the engine knows, each slot behind its own
//! [`seqlock`]. The engine's market-data thread is the only writer;
//! every strategy maps the file read-only and copies a book out without locks and
//! without ever seeing a torn one ([`BoardReader::read`]).
//!
//! Layout (all `u64`, little-endian as the machine): a header
//! `[magic, version, depth, slots, stride]`, then `slots` directory words
//! `venue << 32 | instrument`, then (from a 64-byte boundary) `slots` slots of
//! `stride` words, each `[seq, book words (BookView::to_words)...]`. The creator stores
//! the magic last (Release); an attacher reads it first (a volatile read followed by
//! an Acquire fence: the reader's mapping is read-only, so it never makes an atomic
//! operation, see [`seqlock`]) and every other header field after, returning a typed
//! [`BoardError`] on any mismatch.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use memmap2::{MmapOptions, MmapRaw};
use peregrine_types::InstrumentId;

use super::seqlock::{self, VolatileWords};
use super::view::{BookView, BOOK_WORDS, DEPTH};

/// `"PRGNBORD"`.
pub const MAGIC: u64 = u64::from_be_bytes(*b"PRGNBORD");
/// Layout version.
pub const VERSION: u64 = 1;
/// Words per slot: the sequence word, the book, padding to whole cache lines.
pub const STRIDE: usize = (1 + BOOK_WORDS).div_ceil(8) * 8;
/// Header words before the directory.
const HEADER: usize = 5;
/// Reads a reader tries before reporting a busy slot (the writer holds a slot for a
/// few dozen nanoseconds; this is never reached in practice).
const READ_ATTEMPTS: u32 = 1_000;

/// The board file of the engine whose shared-memory directory is `dir`.
pub fn path(dir: &Path) -> PathBuf {
    dir.join("market.board")
}

/// Why a board could not be created or attached.
#[derive(Debug, thiserror::Error)]
pub enum BoardError {
    /// Opening, sizing or mapping failed.
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    /// Not a board of this layout.
    #[error("{0}: not a book board of this version (magic, version, depth or size differ)")]
    Layout(PathBuf),
}

/// A mapped board.
#[derive(Debug)]
struct Mapping {
    map: MmapRaw,
    slots: usize,
}

impl Mapping {
    /// The words as atomics: the writer's view, of its read-write mapping only.
    fn words(&self) -> &[AtomicU64] {
        let len = self.map.len() / 8;
        // SAFETY: the writer's mapping is read-write, page aligned, `len` words long
        // and lives as long as `self`; every access goes through `AtomicU64`, which is
        // sound for memory other processes read concurrently. Never called on a
        // read-only mapping (the reader uses `read_word` and `VolatileWords`).
        unsafe { std::slice::from_raw_parts(self.map.as_ptr() as *const AtomicU64, len) }
    }

    /// Word `i`, read as the reader reads: a volatile load, no atomic, no reference
    /// (`i` past the end reads 0).
    fn read_word(&self, i: usize) -> u64 {
        if i >= self.map.len() / 8 {
            return 0;
        }
        // SAFETY: in bounds (checked above), 8-byte aligned (the mapping is page
        // aligned) and mapped for as long as `self`; a volatile read never writes, so
        // it is fine on the reader's read-only mapping.
        unsafe { (self.map.as_ptr() as *const u64).add(i).read_volatile() }
    }

    /// The reader's view of slot `i`.
    fn read_slot(&self, i: usize) -> VolatileWords {
        let start = Self::data_start(self.slots) + i * STRIDE;
        debug_assert!((start + 1 + BOOK_WORDS) * 8 <= self.map.len());
        // SAFETY: the slot's `1 + BOOK_WORDS` words lie within the mapping (the layout
        // was checked at attach: `len_words(slots)` words), 8-byte aligned, mapped for
        // as long as `self`, which outlives the view (used within `BoardReader::read`).
        unsafe { VolatileWords::new((self.map.as_ptr() as *const u64).add(start), BOOK_WORDS) }
    }

    fn data_start(slots: usize) -> usize {
        (HEADER + slots).div_ceil(8) * 8
    }

    fn len_words(slots: usize) -> usize {
        Self::data_start(slots) + slots * STRIDE
    }

    fn slot(&self, i: usize) -> (&AtomicU64, &[AtomicU64]) {
        let start = Self::data_start(self.slots) + i * STRIDE;
        let w = &self.words()[start..start + 1 + BOOK_WORDS];
        (&w[0], &w[1..])
    }

    fn key(&self, i: usize) -> (u32, InstrumentId) {
        // Ordered by the Acquire fence after the magic's read at attach: the
        // directory is written before the magic's Release store.
        let k = self.read_word(HEADER + i);
        ((k >> 32) as u32, InstrumentId(k as u32))
    }
}

/// The engine's end: creates the file and publishes books.
#[derive(Debug)]
pub struct BoardWriter {
    m: Mapping,
    scratch: [u64; BOOK_WORDS],
}

impl BoardWriter {
    /// Creates `path` (replacing a stale file) with one empty slot per key, in order.
    pub fn create(path: &Path, keys: &[(u32, InstrumentId)]) -> Result<BoardWriter, BoardError> {
        let io = |e| BoardError::Io(path.to_owned(), e);
        let _ = std::fs::remove_file(path);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(io)?;
        let bytes = Mapping::len_words(keys.len()) * 8;
        file.set_len(bytes as u64).map_err(io)?;
        let map = MmapOptions::new().len(bytes).map_raw(&file).map_err(io)?;
        let m = Mapping {
            map,
            slots: keys.len(),
        };
        let w = m.words();
        // Relaxed: published by the Release store of the magic below.
        w[1].store(VERSION, Ordering::Relaxed);
        w[2].store(DEPTH as u64, Ordering::Relaxed);
        w[3].store(keys.len() as u64, Ordering::Relaxed);
        w[4].store(STRIDE as u64, Ordering::Relaxed);
        for (i, (venue, instrument)) in keys.iter().enumerate() {
            let k = (u64::from(*venue) << 32) | u64::from(instrument.0);
            w[HEADER + i].store(k, Ordering::Relaxed);
        }
        // Release: pairs with the Acquire load of the magic in `BoardReader::attach`.
        w[0].store(MAGIC, Ordering::Release);
        Ok(BoardWriter {
            m,
            scratch: [0; BOOK_WORDS],
        })
    }

    /// Publishes `book` into slot `slot` (its venue and instrument are the slot's).
    /// Never blocks; readers retry around it.
    pub fn publish(&mut self, slot: usize, book: &BookView) {
        if slot >= self.m.slots {
            return;
        }
        book.to_words(&mut self.scratch);
        let (seq, words) = self.m.slot(slot);
        seqlock::write(seq, words, &self.scratch);
    }

    /// Slots.
    pub fn slots(&self) -> usize {
        self.m.slots
    }
}

/// A strategy's end: a read-only mapping.
#[derive(Debug)]
pub struct BoardReader {
    m: Mapping,
}

impl BoardReader {
    /// Maps `path` read-only and checks its header.
    pub fn attach(path: &Path) -> Result<BoardReader, BoardError> {
        let io = |e| BoardError::Io(path.to_owned(), e);
        let bad = || BoardError::Layout(path.to_owned());
        let file = OpenOptions::new().read(true).open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len() as usize;
        if len < HEADER * 8 {
            return Err(bad());
        }
        let map = MmapOptions::new()
            .len(len)
            .map_raw_read_only(&file)
            .map_err(io)?;
        let probe = Mapping { map, slots: 0 };
        let magic = probe.read_word(0);
        // Acquire fence after the magic's read: pairs with the Release store of the
        // magic in `create` (the header and directory written before it are seen).
        std::sync::atomic::fence(Ordering::Acquire);
        if magic != MAGIC {
            return Err(bad());
        }
        let field = |i: usize| probe.read_word(i);
        let slots = field(3) as usize;
        if field(1) != VERSION
            || field(2) != DEPTH as u64
            || field(4) != STRIDE as u64
            || slots > 1 << 20
            || Mapping::len_words(slots) * 8 != len
        {
            return Err(bad());
        }
        Ok(BoardReader {
            m: Mapping {
                map: probe.map,
                slots,
            },
        })
    }

    /// The slot of (venue, instrument).
    pub fn slot_of(&self, venue: u32, instrument: InstrumentId) -> Option<usize> {
        (0..self.m.slots).find(|&i| self.m.key(i) == (venue, instrument))
    }

    /// Slots.
    pub fn slots(&self) -> usize {
        self.m.slots
    }

    /// The current book in `slot`: one whole version, or `None` if the slot does not
    /// exist (or, never in practice, the writer kept it busy for a thousand tries).
    pub fn read(&self, slot: usize) -> Option<BookView> {
        if slot >= self.m.slots {
            return None;
        }
        let mut out = [0u64; BOOK_WORDS];
        seqlock::read(&self.m.read_slot(slot), &mut out, READ_ATTEMPTS)?;
        let (venue, instrument) = self.m.key(slot);
        Some(BookView::from_words(venue, instrument, &out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::md::view::Level;
    use peregrine_types::{Price, Qty};

    #[test]
    fn publish_and_read_across_mappings() {
        let dir = tempfile::tempdir().unwrap();
        let p = path(dir.path());
        let keys = [
            (0, InstrumentId(1)),
            (1, InstrumentId(1)),
            (1, InstrumentId(2)),
        ];
        let mut w = BoardWriter::create(&p, &keys).unwrap();
        let r = BoardReader::attach(&p).unwrap();
        assert_eq!(r.slot_of(1, InstrumentId(2)), Some(2));
        assert_eq!(r.slot_of(2, InstrumentId(2)), None);
        assert_eq!(r.read(2).unwrap().seq, 0);
        assert!(r.read(3).is_none());
        let l = Level {
            price: Price::from_raw(100),
            qty: Qty::from_raw(5),
            orders: 2,
        };
        let mut b = BookView::new(1, InstrumentId(2), &[l], &[]);
        b.seq = 9;
        w.publish(2, &b);
        assert_eq!(r.read(2), Some(b));
        assert_eq!(r.read(0).unwrap().venue, 0);
    }

    #[test]
    fn garbage_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x");
        std::fs::write(&p, [0u8; 7]).unwrap();
        assert!(matches!(
            BoardReader::attach(&p),
            Err(BoardError::Layout(_))
        ));
        std::fs::write(&p, vec![0xAB; 4096]).unwrap();
        assert!(matches!(
            BoardReader::attach(&p),
            Err(BoardError::Layout(_))
        ));
        assert!(matches!(
            BoardReader::attach(&dir.path().join("missing")),
            Err(BoardError::Io(..))
        ));
        // A valid board cut short.
        BoardWriter::create(&p, &[(0, InstrumentId(1))]).unwrap();
        let f = OpenOptions::new().write(true).open(&p).unwrap();
        f.set_len(64).unwrap();
        assert!(matches!(
            BoardReader::attach(&p),
            Err(BoardError::Layout(_))
        ));
    }
}
