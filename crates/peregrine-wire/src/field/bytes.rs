//! Fixed-size byte fields: symbols, leader addresses, hashes and reserved padding.

use crate::cursor::{Reader, Writer};
use crate::field::{invalid, WireField};
use crate::DecodeError;

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

/// Bytes in a [`LeaderAddress`].
pub const LEADER_ADDRESS_LEN: usize = 64;

/// A cluster leader's order-entry address on the wire: ASCII `host:port`,
/// left-aligned and padded with zero bytes (all zeros: no address). A non-zero byte
/// after the first zero is [`DecodeError::InvalidField`]; the text itself is not
/// checked on decode ([`LeaderAddress::as_text`] refuses what is not UTF-8).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct LeaderAddress([u8; LEADER_ADDRESS_LEN]);

impl Default for LeaderAddress {
    fn default() -> Self {
        LeaderAddress([0; LEADER_ADDRESS_LEN])
    }
}

impl LeaderAddress {
    /// The address for `text`, zero-padded; `None` if longer than 64 bytes, not
    /// ASCII or containing a zero byte. `""` is the empty address.
    pub fn from_text(text: &str) -> Option<Self> {
        let bytes = text.as_bytes();
        if !bytes.iter().all(|&b| b != 0 && b.is_ascii()) {
            return None;
        }
        let mut out = [0u8; LEADER_ADDRESS_LEN];
        out.get_mut(..bytes.len())?.copy_from_slice(bytes);
        Some(LeaderAddress(out))
    }

    /// The address text (`""` for no address); `None` if the bytes are not UTF-8 or
    /// a non-zero byte follows the padding.
    pub fn as_text(&self) -> Option<&str> {
        let len = Self::text_len(&self.0)?;
        core::str::from_utf8(&self.0[..len]).ok()
    }

    /// True if no address is given (every byte zero).
    pub fn is_empty(&self) -> bool {
        self.0[0] == 0
    }

    /// The 64 wire bytes.
    pub const fn bytes(&self) -> &[u8; LEADER_ADDRESS_LEN] {
        &self.0
    }

    /// The length of the text before the padding; `None` if a non-zero byte
    /// follows a zero.
    fn text_len(b: &[u8; LEADER_ADDRESS_LEN]) -> Option<usize> {
        let len = b.iter().position(|&c| c == 0).unwrap_or(LEADER_ADDRESS_LEN);
        b[len..].iter().all(|&c| c == 0).then_some(len)
    }
}

impl core::fmt::Debug for LeaderAddress {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.as_text() {
            Some(t) => write!(f, "LeaderAddress({t:?})"),
            None => write!(f, "LeaderAddress({:?})", &self.0[..]),
        }
    }
}

impl WireField for LeaderAddress {
    const WIDTH: usize = LEADER_ADDRESS_LEN;
    const WIRE_TYPE: &'static str = "[u8; 64] LeaderAddress";
    #[inline]
    fn put(self, w: &mut Writer<'_>) {
        w.put(&self.0);
    }
    #[inline]
    fn get(r: &mut Reader<'_>, field: &'static str) -> Result<Self, DecodeError> {
        let b: [u8; LEADER_ADDRESS_LEN] = r.take()?;
        match Self::text_len(&b) {
            Some(_) => Ok(LeaderAddress(b)),
            None => {
                let first = b.iter().position(|&c| c == 0).unwrap_or(0);
                let bad = b[first..].iter().copied().find(|&c| c != 0).unwrap_or(0);
                Err(invalid(field, u64::from(bad)))
            }
        }
    }
    #[inline]
    fn sample(seed: u64) -> Self {
        // 0..=64 printable characters.
        let len = (seed % 65) as usize;
        let mut out = [0u8; LEADER_ADDRESS_LEN];
        for (i, c) in out[..len].iter_mut().enumerate() {
            *c = b'!' + (seed.rotate_left(3 * i as u32) % 94) as u8;
        }
        LeaderAddress(out)
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

    #[test]
    fn leader_addresses_are_zero_padded_text() {
        let a = LeaderAddress::from_text("node-2.example:9100").unwrap();
        assert_eq!(a.as_text(), Some("node-2.example:9100"));
        assert!(!a.is_empty());
        assert_eq!(&a.bytes()[19..], &[0u8; 45]);
        let empty = LeaderAddress::from_text("").unwrap();
        assert!(empty.is_empty());
        assert_eq!(empty, LeaderAddress::default());
        assert_eq!(empty.as_text(), Some(""));
        let full = "a".repeat(64);
        assert_eq!(
            LeaderAddress::from_text(&full).unwrap().as_text(),
            Some(&*full)
        );
        let too_long = "a".repeat(65);
        for bad in [too_long.as_str(), "a\0b", "hé:1"] {
            assert!(LeaderAddress::from_text(bad).is_none(), "{bad:?}");
        }
        // A character after the padding is refused on decode, with its value.
        let mut b = *a.bytes();
        b[40] = b'X';
        let mut r = Reader::new(&b);
        assert_eq!(
            LeaderAddress::get(&mut r, "address"),
            Err(DecodeError::InvalidField {
                field: "address",
                value: u64::from(b'X')
            })
        );
        assert_eq!(LeaderAddress(b).as_text(), None);
        // Bytes that are not UTF-8 decode but have no text.
        let mut b = [0u8; LEADER_ADDRESS_LEN];
        b[0] = 0xFF;
        let mut r = Reader::new(&b);
        let got = LeaderAddress::get(&mut r, "address").unwrap();
        assert_eq!(got.as_text(), None);
        let mut r = Reader::new(&[0u8; 63]);
        assert!(LeaderAddress::get(&mut r, "address").is_err(), "short");
        for seed in [0, 1, 63, 64, 65, u64::MAX, 0xdead_beef] {
            let s = LeaderAddress::sample(seed);
            assert!(s.as_text().is_some(), "{seed}");
        }
    }
}
