//! Reading a definition file into steps.

/// One line of a definition, for connection `cid` (1 unless the line names one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// `iCONNECT`: open connection `cid`.
    Connect(u8),
    /// `iDISCONNECT`: close connection `cid`.
    Disconnect(u8),
    /// `I…`: send this message (a template: see [`super::build`]).
    Send(u8, String),
    /// `E…`: the acceptor's next message on `cid` must match this one.
    Expect(u8, String),
    /// `eDISCONNECT`: the acceptor must close `cid`.
    ExpectDisconnect(u8),
    /// `eCONNECT`: the acceptor connects to us (server definitions never do).
    ExpectConnect(u8),
}

/// The steps of a definition, with the line number of each; `Err` names a line
/// that is not of the format. A line without SOH may write it `|` (Peregrine's own
/// definitions do, to stay readable).
pub fn parse(text: &str) -> Result<Vec<(usize, Step)>, String> {
    let mut steps = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_end_matches(['\r', '\n']);
        let line = if line.contains('\x01') {
            line.to_string()
        } else {
            line.replace('|', "\x01")
        };
        let line = line.as_str();
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let mut chars = line.chars();
        let kind = chars.next().unwrap_or(' ');
        let rest = chars.as_str();
        // `I1,…`: a connection number and a comma.
        let (cid, body) = match rest.split_once(',') {
            Some((d, b)) if d.len() == 1 && d.as_bytes()[0].is_ascii_digit() => {
                (d.as_bytes()[0] - b'0', b)
            }
            _ => (1, rest),
        };
        let step = match (kind, body) {
            ('i', "CONNECT") => Step::Connect(cid),
            ('i', "DISCONNECT") => Step::Disconnect(cid),
            ('e', "CONNECT") => Step::ExpectConnect(cid),
            ('e', "DISCONNECT") => Step::ExpectDisconnect(cid),
            ('I', m) => Step::Send(cid, m.to_string()),
            ('E', m) => Step::Expect(cid, m.to_string()),
            _ => return Err(format!("line {}: not a definition line: {line:?}", n + 1)),
        };
        steps.push((n + 1, step));
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_kind_of_line() {
        let text = "# a comment\n\niCONNECT\nI8=FIX.4.4\x0135=0\x01\n\
                    E8=FIX.4.4\x0135=0\x01\ni2,CONNECT\nI2,8=FIX.4.4\x01\ne2,DISCONNECT\n\
                    i1,DISCONNECT\neDISCONNECT";
        let steps: Vec<Step> = parse(text).unwrap().into_iter().map(|(_, s)| s).collect();
        assert_eq!(
            steps,
            vec![
                Step::Connect(1),
                Step::Send(1, "8=FIX.4.4\x0135=0\x01".into()),
                Step::Expect(1, "8=FIX.4.4\x0135=0\x01".into()),
                Step::Connect(2),
                Step::Send(2, "8=FIX.4.4\x01".into()),
                Step::ExpectDisconnect(2),
                Step::Disconnect(1),
                Step::ExpectDisconnect(1),
            ]
        );
        assert_eq!(
            parse("I8=FIX.4.4|35=0|").unwrap()[0].1,
            Step::Send(1, "8=FIX.4.4\x0135=0\x01".into())
        );
        assert!(parse("X8=FIX").is_err());
        assert!(parse("iHELLO").is_err());
    }
}
