//! Iterating `tag=value␁` fields of a byte slice without copying.

use super::error::FieldError;
use super::tags::data_field_of;
use super::SOH;

/// One field: its tag and a slice of the input holding its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawField<'a> {
    /// Tag number (positive).
    pub tag: u32,
    /// Value bytes, without the SOH.
    pub value: &'a [u8],
}

/// An iterator over the fields of a slice that holds whole fields (each ended by SOH).
/// It yields an error at most once and then stops. Data fields (a length field such
/// as 95 RawDataLength followed by its data field) take exactly the declared number of
/// bytes, SOH included.
#[derive(Debug, Clone)]
pub struct Fields<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// The length declared by the previous field, when it was a data length field:
    /// (data tag, length).
    pending_data: Option<(u32, usize)>,
    failed: bool,
}

impl<'a> Fields<'a> {
    /// Fields of `bytes`, from the start.
    pub fn new(bytes: &'a [u8]) -> Self {
        Fields {
            bytes,
            pos: 0,
            pending_data: None,
            failed: false,
        }
    }

    /// Offset of the next field in the slice.
    pub fn position(&self) -> usize {
        self.pos
    }

    fn next_field(&mut self) -> Result<RawField<'a>, FieldError> {
        let rest = &self.bytes[self.pos..];
        let (tag, eq) = parse_tag(rest)?;
        let value_start = eq + 1;
        let value_end = match self.pending_data.take() {
            Some((data_tag, len)) if data_tag == tag => value_start
                .checked_add(len)
                .filter(|&e| e < rest.len() && rest[e] == SOH)
                .ok_or(FieldError::Malformed(tag))?,
            _ => memchr::memchr(SOH, &rest[value_start..])
                .map(|p| value_start + p)
                .ok_or(FieldError::Malformed(tag))?,
        };
        if value_end == value_start {
            return Err(FieldError::NoValue(tag));
        }
        let value = &rest[value_start..value_end];
        if let Some(data_tag) = data_field_of(tag) {
            let len = super::value::parse_u64(value).ok_or(FieldError::Format(tag))?;
            self.pending_data = Some((data_tag, len.min(self.bytes.len() as u64) as usize));
        }
        self.pos += value_end + 1;
        Ok(RawField { tag, value })
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<RawField<'a>, FieldError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.bytes.len() {
            return None;
        }
        let r = self.next_field();
        if r.is_err() {
            self.failed = true;
        }
        Some(r)
    }
}

/// Parses the tag at the start of `rest`: `(tag, index of '=')`.
fn parse_tag(rest: &[u8]) -> Result<(u32, usize), FieldError> {
    // The usual case in one pass: 1 to 9 digits, not starting with 0, then '='
    // (exactly what the general path below accepts).
    if let Some(&(b'1'..=b'9')) = rest.first() {
        let mut n = 0u32;
        for (i, &b) in rest.iter().enumerate().take(10) {
            match b {
                b'0'..=b'9' if i < 9 => n = n * 10 + u32::from(b - b'0'),
                b'=' => return Ok((n, i)),
                _ => break,
            }
        }
    }
    parse_tag_slow(rest)
}

/// [`parse_tag`] for everything but the usual case: the error as written.
fn parse_tag_slow(rest: &[u8]) -> Result<(u32, usize), FieldError> {
    // A tag is at most 9 digits; '-' may precede an invalid one (RefTagID -1).
    const MAX: usize = 10;
    let window = &rest[..rest.len().min(MAX + 1)];
    match window.iter().position(|&b| b == b'=' || b == SOH) {
        Some(0) => Err(FieldError::InvalidTag(None)),
        Some(i) if rest[i] == b'=' => match number(&rest[..i]) {
            Some(n) if n > 0 && rest[0] != b'0' => Ok((n as u32, i)),
            n => Err(FieldError::InvalidTag(n)),
        },
        // `58␁`, or `58` at the end of the bytes: a field cut short.
        Some(i) => Err(cut_short(&rest[..i])),
        None if window.len() <= MAX => Err(cut_short(window)),
        None => Err(FieldError::InvalidTag(None)),
    }
}

/// A tag with no `=` after it.
fn cut_short(text: &[u8]) -> FieldError {
    match number(text) {
        Some(n) if n > 0 => FieldError::Malformed(n as u32),
        _ => FieldError::InvalidTag(None),
    }
}

/// `-`? and 1 to 9 digits.
fn number(text: &[u8]) -> Option<i32> {
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    if digits.is_empty() || digits.len() > 9 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = digits
        .iter()
        .fold(0i32, |acc, &d| acc * 10 + i32::from(d - b'0'));
    Some(if negative { -n } else { n })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The one-pass tag reader gives the general reader's answer on any input.
        #[test]
        fn prop_the_fast_tag_path_is_the_general_one(
            rest in prop_oneof![
                "[0-9]{1,11}=[a-z]{0,2}",
                "-?[0-9]{0,10}[=\x01a]?[0-9=]{0,3}",
                proptest::collection::vec(any::<u8>(), 0..14)
                    .prop_map(|v| String::from_utf8_lossy(&v).into_owned()),
            ]
        ) {
            prop_assert_eq!(parse_tag(rest.as_bytes()), parse_tag_slow(rest.as_bytes()));
        }
    }

    fn all(bytes: &[u8]) -> Vec<Result<(u32, Vec<u8>), FieldError>> {
        Fields::new(bytes)
            .map(|r| r.map(|f| (f.tag, f.value.to_vec())))
            .collect()
    }

    #[test]
    fn iterates_fields() {
        assert_eq!(
            all(b"35=D\x0111=abc\x0144=1.5\x01"),
            vec![
                Ok((35, b"D".to_vec())),
                Ok((11, b"abc".to_vec())),
                Ok((44, b"1.5".to_vec()))
            ]
        );
    }

    #[test]
    fn data_fields_may_hold_soh() {
        assert_eq!(
            all(b"95=3\x0196=a\x01b\x0158=x\x01"),
            vec![
                Ok((95, b"3".to_vec())),
                Ok((96, b"a\x01b".to_vec())),
                Ok((58, b"x".to_vec()))
            ]
        );
        // A data length past the end is malformed, not a panic.
        assert_eq!(
            all(b"95=99\x0196=a\x01"),
            vec![Ok((95, b"99".to_vec())), Err(FieldError::Malformed(96))]
        );
    }

    #[test]
    fn bad_fields_are_typed_errors_then_the_iterator_stops() {
        assert_eq!(all(b"=x\x01"), vec![Err(FieldError::InvalidTag(None))]);
        assert_eq!(all(b"0=x\x01"), vec![Err(FieldError::InvalidTag(Some(0)))]);
        assert_eq!(
            all(b"-1=x\x01"),
            vec![Err(FieldError::InvalidTag(Some(-1)))]
        );
        assert_eq!(all(b"01=x\x01"), vec![Err(FieldError::InvalidTag(Some(1)))]);
        assert_eq!(all(b"a=x\x01"), vec![Err(FieldError::InvalidTag(None))]);
        assert_eq!(
            all(b"1234567890=x\x01"),
            vec![Err(FieldError::InvalidTag(None))]
        );
        assert_eq!(all(b"58=\x0111=a\x01"), vec![Err(FieldError::NoValue(58))]);
        assert_eq!(all(b"58\x01"), vec![Err(FieldError::Malformed(58))]);
        assert_eq!(all(b"58=abc"), vec![Err(FieldError::Malformed(58))]);
    }
}
