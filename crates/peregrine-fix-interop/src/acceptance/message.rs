//! A definition's message template made into bytes, and a message split into its
//! fields for comparison.

use peregrine_fix::codec::time::write_utc_timestamp;
use peregrine_fix::codec::Precision;

const SOH: char = '\x01';

/// A message's fields in order: (tag as written, value).
pub type Fields = Vec<(String, String)>;

/// The bytes of template `template` sent at `now_ns`: `<TIME>`, `<TIME+n>` and
/// `<TIME-n>` become UTC timestamps (seconds) of now and now ± n seconds; a message
/// starting with `8=` gets BodyLength after BeginString if it has none, and a
/// CheckSum if it does not end with one (a template's own, wrong ones are kept: the
/// definitions use them to send garbled messages). Anything else is sent as is.
pub fn build(template: &str, now_ns: u64) -> Vec<u8> {
    let text = times(template, now_ns);
    let Some(rest) = text.strip_prefix("8=") else {
        return text.into_bytes();
    };
    let Some(head_end) = rest.find(SOH) else {
        return text.into_bytes();
    };
    let head = &text[..2 + head_end + 1];
    let mut body = &text[head.len()..];
    let has_length = text.contains("\x019=");
    let checksum = body
        .rfind("\x0110=")
        .filter(|&at| body[at + 1..].find(SOH) == Some(body.len() - at - 2))
        .map(|at| {
            let c = &body[at + 1..];
            body = &body[..at + 1];
            c.to_string()
        });
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(head);
    if !has_length {
        out.push_str(&format!("9={}{SOH}", body.len()));
    }
    out.push_str(body);
    match checksum {
        Some(c) => out.push_str(&c),
        None => {
            let sum: u32 = out.bytes().map(u32::from).sum();
            out.push_str(&format!("10={:03}{SOH}", sum % 256));
        }
    }
    out.into_bytes()
}

/// `<TIME>` and `<TIME±n>` replaced.
fn times(template: &str, now_ns: u64) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(at) = rest.find("<TIME") {
        out.push_str(&rest[..at]);
        let token = &rest[at..];
        let Some(end) = token.find('>') else {
            out.push_str(token);
            return out;
        };
        let offset: i64 = match &token[5..end] {
            "" => 0,
            n => n.trim_start_matches('+').parse().unwrap_or(0),
        };
        let t = now_ns.saturating_add_signed(offset * 1_000_000_000);
        let mut stamp = Vec::new();
        write_utc_timestamp(&mut stamp, t, Precision::Seconds);
        out.push_str(&String::from_utf8_lossy(&stamp));
        rest = &token[end + 1..];
    }
    out.push_str(rest);
    out
}

/// The fields of a message (split at SOH, then at the first `=`).
pub fn fields(raw: &[u8]) -> Fields {
    String::from_utf8_lossy(raw)
        .split(SOH)
        .filter(|f| !f.is_empty())
        .map(|f| match f.split_once('=') {
            Some((t, v)) => (t.to_string(), v.to_string()),
            None => (f.to_string(), String::new()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: u64 = 1_700_000_000_000_000_000; // 2023-11-14 22:13:20 UTC

    #[test]
    fn times_are_utc_seconds() {
        assert_eq!(
            times("52=<TIME>|122=<TIME-1>|x=<TIME+121>", T),
            "52=20231114-22:13:20|122=20231114-22:13:19|x=20231114-22:15:21"
        );
    }

    #[test]
    fn body_length_and_checksum_are_added_when_missing() {
        let m = build("8=FIX.4.4\x0135=0\x0134=2\x01", T);
        assert_eq!(&m[..15], b"8=FIX.4.4\x019=10\x01");
        let sum: u32 = m[..m.len() - 7].iter().map(|&b| u32::from(b)).sum();
        assert_eq!(
            &m[m.len() - 7..],
            format!("10={:03}\x01", sum % 256).as_bytes()
        );
        // A template's own BodyLength and CheckSum stay (garbled on purpose).
        let g = build("8=FIX.4.4\x019=52\x0135=0\x0110=0\x01", T);
        assert_eq!(g, b"8=FIX.4.4\x019=52\x0135=0\x0110=0\x01");
        // Not a message start: as is.
        let j = build("35=0\x018=FIX.4.4\x019=29\x0110=121\x01", T);
        assert_eq!(j, b"35=0\x018=FIX.4.4\x019=29\x0110=121\x01");
    }

    #[test]
    fn fields_split_at_the_first_equals() {
        assert_eq!(
            fields(b"8=FIX.4.4\x0158=a=b\x01-1=HI\x01"),
            vec![
                ("8".into(), "FIX.4.4".into()),
                ("58".into(), "a=b".into()),
                ("-1".into(), "HI".into())
            ]
        );
    }
}
