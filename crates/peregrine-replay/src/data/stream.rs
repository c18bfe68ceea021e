//! Reading recorded files: plain or gzip (by the magic bytes), as a buffered byte
//! stream for binary formats ([`Bytes`]) or line by line for text formats
//! ([`Lines`]). Nothing is read whole into memory.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::DataError;

/// Opens `path`, decompressing on the fly when it starts with the gzip magic.
pub fn open(path: &Path) -> Result<Box<dyn Read + Send>, DataError> {
    let io = |source| DataError::Io {
        path: path.display().to_string(),
        source,
    };
    let mut file = BufReader::with_capacity(1 << 16, File::open(path).map_err(io)?);
    let gz = file.fill_buf().map_err(io)?.starts_with(&[0x1f, 0x8b]);
    Ok(if gz {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    })
}

/// A refilling window over a byte stream, for decoders that parse from a slice.
#[derive(Debug)]
pub struct Bytes<R> {
    src: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Stream offset of `buf[start]`.
    offset: u64,
    eof: bool,
}

/// Bytes read from the source per refill at most.
const CHUNK: usize = 1 << 20;

impl<R: Read> Bytes<R> {
    /// A window over `src`.
    pub fn new(src: R) -> Bytes<R> {
        Bytes {
            src,
            buf: vec![0; CHUNK],
            start: 0,
            end: 0,
            offset: 0,
            eof: false,
        }
    }

    /// The bytes available now, refilled so that at least `want` are there unless the
    /// stream ends first.
    #[inline]
    pub fn window(&mut self, want: usize) -> std::io::Result<&[u8]> {
        if self.end - self.start < want && !self.eof {
            self.refill(want)?;
        }
        Ok(&self.buf[self.start..self.end])
    }

    #[cold]
    fn refill(&mut self, want: usize) -> std::io::Result<()> {
        self.buf.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        if self.buf.len() < want {
            self.buf.resize(want.max(CHUNK), 0);
        }
        while self.end < want && !self.eof {
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Marks `n` bytes of the window consumed.
    #[inline]
    pub fn consume(&mut self, n: usize) {
        let n = n.min(self.end - self.start);
        self.start += n;
        self.offset += n as u64;
    }

    /// Stream offset of the window's first byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }
}

/// Lines of a text stream, one reused buffer (no allocation per line).
#[derive(Debug)]
pub struct Lines<R> {
    src: BufReader<R>,
    line: String,
    number: u64,
}

impl<R: Read> Lines<R> {
    /// Lines of `src`.
    pub fn new(src: R) -> Lines<R> {
        Lines {
            src: BufReader::with_capacity(1 << 16, src),
            line: String::new(),
            number: 0,
        }
    }

    /// The next line without its line ending, with its number (from 1), or `None` at
    /// the end. Blank lines are skipped.
    pub fn next_line(&mut self, format: &'static str) -> Result<Option<(u64, &str)>, DataError> {
        loop {
            self.line.clear();
            self.number += 1;
            let n = self
                .src
                .read_line(&mut self.line)
                .map_err(|e| DataError::line(format, self.number, format!("not text: {e}")))?;
            if n == 0 {
                return Ok(None);
            }
            if !self.line.trim().is_empty() {
                return Ok(Some((
                    self.number,
                    self.line.trim_end_matches(['\n', '\r']),
                )));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn gzip_and_plain_read_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("a.txt");
        let gz = dir.path().join("a.txt.gz");
        let text = b"one\n\ntwo\r\nthree";
        std::fs::write(&plain, text).unwrap();
        let mut e = flate2::write::GzEncoder::new(
            std::fs::File::create(&gz).unwrap(),
            flate2::Compression::fast(),
        );
        e.write_all(text).unwrap();
        e.finish().unwrap();
        for p in [&plain, &gz] {
            let mut l = Lines::new(open(p).unwrap());
            let mut got = Vec::new();
            while let Some((_, s)) = l.next_line("t").unwrap() {
                got.push(s.to_owned());
            }
            assert_eq!(got, ["one", "two", "three"]);
        }
        assert!(open(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn bytes_window_refills_across_chunks() {
        let data: Vec<u8> = (0..3 * CHUNK + 7).map(|i| i as u8).collect();
        let mut b = Bytes::new(&data[..]);
        let mut seen = 0usize;
        loop {
            let w = b.window(100).unwrap();
            if w.is_empty() {
                break;
            }
            let n = w.len().min(99);
            assert_eq!(w[0], seen as u8);
            b.consume(n);
            seen += n;
        }
        assert_eq!(seen, data.len());
        assert_eq!(b.offset(), data.len() as u64);
    }
}
