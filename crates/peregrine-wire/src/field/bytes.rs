//! Fixed-size byte fields: credentials, symbols, hashes and reserved padding.

use crate::cursor::{Reader, Writer};
use crate::field::{invalid, WireField};
use crate::DecodeError;

/// A login credential: 16 opaque bytes (a password padded with zero bytes, or a
/// token). `Debug` never prints it.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Credential(pub [u8; CREDENTIAL_LEN]);

/// Bytes in a [`Credential`].
pub const CREDENTIAL_LEN: usize = 16;

impl Credential {
    /// A credential from text, zero-padded; `None` if longer than 16 bytes.
    pub fn from_text(text: &str) -> Option<Self> {
        let bytes = text.as_bytes();
        let mut out = [0u8; CREDENTIAL_LEN];
        out.get_mut(..bytes.len())?.copy_from_slice(bytes);
        Some(Credential(out))
    }
}

impl core::fmt::Debug for Credential {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Credential(<redacted>)")
    }
}

impl WireField for Credential {
    const WIDTH: usize = CREDENTIAL_LEN;
    const WIRE_TYPE: &'static str = "[u8; 16]";
    #[inline]
    fn put(self, w: &mut Writer<'_>) {
        w.put(&self.0);
    }
    #[inline]
    fn get(r: &mut Reader<'_>, _field: &'static str) -> Result<Self, DecodeError> {
        r.take().map(Credential)
    }
    #[inline]
    fn sample(seed: u64) -> Self {
        let mut out = [0u8; CREDENTIAL_LEN];
        out[..8].copy_from_slice(&seed.to_le_bytes());
        out[8..].copy_from_slice(&seed.rotate_left(17).to_le_bytes());
        Credential(out)
    }
}

/// A 32-byte hash (a Blake3 digest of `peregrine-commit`), raw bytes. Every value is
/// valid.
impl WireField for [u8; 32] {
    const WIDTH: usize = 32;
    const WIRE_TYPE: &'static str = "[u8; 32]";
    #[inline]
    fn put(self, w: &mut Writer<'_>) {
        w.put(&self);
    }
    #[inline]
    fn get(r: &mut Reader<'_>, _field: &'static str) -> Result<Self, DecodeError> {
        r.take()
    }
    #[inline]
    fn sample(seed: u64) -> Self {
        let mut out = [0u8; 32];
        for (i, chunk) in out.chunks_exact_mut(8).enumerate() {
            chunk.copy_from_slice(&seed.rotate_left(13 * i as u32).to_le_bytes());
        }
        out
    }
}

/// Bytes in a [`Symbol`].
pub const SYMBOL_LEN: usize = 16;

/// An instrument symbol on the wire: 1 to 16 printable ASCII characters (`!` to `~`),
/// left-aligned and padded with zero bytes. Anything else (a space, a non-ASCII byte,
/// a character after a zero, an empty symbol) is [`DecodeError::InvalidField`].
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Symbol([u8; SYMBOL_LEN]);

impl Symbol {
    /// The symbol for `text`, or `None` if it is empty, longer than 16 bytes or not
    /// printable ASCII without spaces.
    pub fn new(text: &str) -> Option<Symbol> {
        let bytes = text.as_bytes();
        if bytes.is_empty() || !bytes.iter().all(u8::is_ascii_graphic) {
            return None;
        }
        let mut out = [0u8; SYMBOL_LEN];
        out.get_mut(..bytes.len())?.copy_from_slice(bytes);
        Some(Symbol(out))
    }

    /// The symbol's text.
    pub fn as_str(&self) -> &str {
        let len = self.0.iter().position(|&b| b == 0).unwrap_or(SYMBOL_LEN);
        // Validated ASCII on construction and decode, so this never falls back.
        core::str::from_utf8(&self.0[..len]).unwrap_or("")
    }

    /// The 16 wire bytes.
    pub const fn bytes(&self) -> &[u8; SYMBOL_LEN] {
        &self.0
    }

    fn valid(b: &[u8; SYMBOL_LEN]) -> bool {
        let len = b.iter().position(|&c| c == 0).unwrap_or(SYMBOL_LEN);
        len > 0 && b[..len].iter().all(u8::is_ascii_graphic) && b[len..].iter().all(|&c| c == 0)
    }
}

impl core::fmt::Debug for Symbol {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Symbol({:?})", self.as_str())
    }
}

impl core::fmt::Display for Symbol {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl WireField for Symbol {
    const WIDTH: usize = SYMBOL_LEN;
    const WIRE_TYPE: &'static str = "[u8; 16] Symbol";
    #[inline]
    fn put(self, w: &mut Writer<'_>) {
        w.put(&self.0);
    }
    #[inline]
    fn get(r: &mut Reader<'_>, field: &'static str) -> Result<Self, DecodeError> {
        let b: [u8; SYMBOL_LEN] = r.take()?;
        if Symbol::valid(&b) {
            Ok(Symbol(b))
        } else {
            Err(invalid(
                field,
                u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
            ))
        }
    }
    #[inline]
    fn sample(seed: u64) -> Self {
        // 1..=16 characters from the printable range.
        let len = (seed % 16) as usize + 1;
        let mut out = [0u8; SYMBOL_LEN];
        for (i, c) in out[..len].iter_mut().enumerate() {
            *c = b'!' + (seed.rotate_left(5 * i as u32) % 94) as u8;
        }
        Symbol(out)
    }
}

/// `N` reserved bytes: written as zeros, and any non-zero byte is
/// [`DecodeError::InvalidField`]. Version 2 uses them to keep appended 8-byte fields
/// aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Pad<const N: usize>;

impl<const N: usize> WireField for Pad<N> {
    const WIDTH: usize = N;
    const WIRE_TYPE: &'static str = "reserved";
    #[inline]
    fn put(self, w: &mut Writer<'_>) {
        w.put(&[0u8; N]);
    }
    #[inline]
    fn get(r: &mut Reader<'_>, field: &'static str) -> Result<Self, DecodeError> {
        let b: [u8; N] = r.take()?;
        match b.iter().position(|&c| c != 0) {
            None => Ok(Pad),
            Some(i) => Err(invalid(field, u64::from(b[i]))),
        }
    }
    #[inline]
    fn sample(_seed: u64) -> Self {
        Pad
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_are_printable_ascii_padded_with_zeros() {
        let s = Symbol::new("PGN-USD").unwrap();
        assert_eq!(s.as_str(), "PGN-USD");
        assert_eq!(&s.bytes()[7..], &[0u8; 9]);
        assert_eq!(Symbol::new("SIXTEEN-CHARS-OK").unwrap().as_str().len(), 16);
        for bad in ["", "A B", "seventeen-chars!!", "é"] {
            assert!(Symbol::new(bad).is_none(), "{bad:?}");
        }
        let mut b = *s.bytes();
        b[9] = b'X'; // a character after the padding
        let mut r = Reader::new(&b);
        assert!(Symbol::get(&mut r, "symbol").is_err());
        let mut r = Reader::new(&[0u8; 16]);
        assert!(Symbol::get(&mut r, "symbol").is_err(), "empty");
        for seed in [0, 1, 15, 16, u64::MAX, 0xdead_beef] {
            assert!(Symbol::valid(&Symbol::sample(seed).0));
        }
    }

    #[test]
    fn pad_must_be_zero() {
        let mut r = Reader::new(&[0, 0, 0]);
        assert_eq!(<Pad<3>>::get(&mut r, "reserved"), Ok(Pad));
        let mut r = Reader::new(&[0, 7]);
        assert_eq!(
            <Pad<2>>::get(&mut r, "reserved"),
            Err(DecodeError::InvalidField {
                field: "reserved",
                value: 7
            })
        );
    }
}
