//! Bounds-checked little-endian cursors over byte slices.
//!
//! Every read goes through [`Reader::take`], which uses `slice::get` and returns
//! [`DecodeError::Truncated`] instead of panicking. Every write goes through
//! [`Writer::put`], which records an overflow instead of panicking; encoders check the
//! buffer size once up front, so the flag is a second line of defence, checked at the end.

use crate::DecodeError;

/// Reads fixed-width little-endian values from a byte slice, front to back.
#[derive(Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader positioned at the start of `buf`.
    #[inline]
    pub const fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// Bytes consumed so far.
    #[inline]
    pub const fn position(&self) -> usize {
        self.pos
    }

    /// Bytes left.
    #[inline]
    pub const fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// The next `N` bytes, or [`DecodeError::Truncated`] if fewer are left.
    #[inline]
    pub fn take<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let truncated = DecodeError::Truncated {
            needed: self.pos.saturating_add(N),
            available: self.buf.len(),
        };
        let end = self.pos.checked_add(N).ok_or(truncated)?;
        let bytes = self.buf.get(self.pos..end).ok_or(truncated)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        self.pos = end;
        Ok(out)
    }

    /// A `u8`.
    #[inline]
    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take::<1>()?[0])
    }

    /// A little-endian `u16`.
    #[inline]
    pub fn u16(&mut self) -> Result<u16, DecodeError> {
        self.take().map(u16::from_le_bytes)
    }

    /// A little-endian `u32`.
    #[inline]
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        self.take().map(u32::from_le_bytes)
    }

    /// A little-endian `u64`.
    #[inline]
    pub fn u64(&mut self) -> Result<u64, DecodeError> {
        self.take().map(u64::from_le_bytes)
    }

    /// A little-endian `i64`.
    #[inline]
    pub fn i64(&mut self) -> Result<i64, DecodeError> {
        self.take().map(i64::from_le_bytes)
    }
}

/// Writes fixed-width little-endian values into a byte slice, front to back.
#[derive(Debug)]
pub struct Writer<'a> {
    buf: &'a mut [u8],
    pos: usize,
    overflowed: bool,
}

impl<'a> Writer<'a> {
    /// A writer positioned at the start of `buf`.
    #[inline]
    pub fn new(buf: &'a mut [u8]) -> Self {
        Writer {
            buf,
            pos: 0,
            overflowed: false,
        }
    }

    /// Bytes written so far.
    #[inline]
    pub const fn position(&self) -> usize {
        self.pos
    }

    /// True if some write did not fit (and was dropped).
    #[inline]
    pub const fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// Appends `bytes`, or records an overflow and writes nothing.
    #[inline]
    pub fn put(&mut self, bytes: &[u8]) {
        let end = self.pos.saturating_add(bytes.len());
        match self.buf.get_mut(self.pos..end) {
            Some(dst) => {
                dst.copy_from_slice(bytes);
                self.pos = end;
            }
            None => self.overflowed = true,
        }
    }

    /// A `u8`.
    #[inline]
    pub fn u8(&mut self, v: u8) {
        self.put(&[v]);
    }

    /// A little-endian `u16`.
    #[inline]
    pub fn u16(&mut self, v: u16) {
        self.put(&v.to_le_bytes());
    }

    /// A little-endian `u32`.
    #[inline]
    pub fn u32(&mut self, v: u32) {
        self.put(&v.to_le_bytes());
    }

    /// A little-endian `u64`.
    #[inline]
    pub fn u64(&mut self, v: u64) {
        self.put(&v.to_le_bytes());
    }

    /// A little-endian `i64`.
    #[inline]
    pub fn i64(&mut self, v: i64) {
        self.put(&v.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_reads_little_endian_and_stops_at_the_end() {
        let bytes = [0x34, 0x12, 0x78, 0x56, 0x34, 0x12, 0xff];
        let mut r = Reader::new(&bytes);
        assert_eq!(r.u16(), Ok(0x1234));
        assert_eq!(r.u32(), Ok(0x1234_5678));
        assert_eq!(r.remaining(), 1);
        assert_eq!(
            r.u16(),
            Err(DecodeError::Truncated {
                needed: 8,
                available: 7
            })
        );
        assert_eq!(r.position(), 6, "a failed read consumes nothing");
        assert_eq!(r.u8(), Ok(0xff));
    }

    #[test]
    fn writer_records_overflow_instead_of_panicking() {
        let mut buf = [0u8; 5];
        let mut w = Writer::new(&mut buf);
        w.u32(0xdead_beef);
        assert!(!w.overflowed());
        w.u16(1);
        assert!(w.overflowed());
        assert_eq!(w.position(), 4);
        assert_eq!(buf, [0xef, 0xbe, 0xad, 0xde, 0]);
    }

    #[test]
    fn signed_values_round_trip() {
        let mut buf = [0u8; 8];
        Writer::new(&mut buf).i64(-5);
        assert_eq!(Reader::new(&buf).i64(), Ok(-5));
    }
}
