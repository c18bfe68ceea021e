//! Whether a message the acceptor sent matches a definition's `E` line.
//!
//! The rules (docs/fix.md, "QuickFIX's acceptance suite"):
//! * BeginString and MsgType must be equal; BodyLength and CheckSum are not compared
//!   (the message must frame as a good message, which checks both).
//! * Every other expected field must be there with the same value, but for
//!   timestamps (SendingTime 52, TransactTime 60, OrigSendingTime 122), which only
//!   need to be timestamps, and the TestReqID (112) of a TestRequest the acceptor
//!   sends, which is its own to choose.
//! * The order of fields is not compared (FIX fixes only BeginString, BodyLength,
//!   MsgType first and CheckSum last).
//! * A field the definition does not list is allowed only if FIX lets a sender add
//!   it to that answer: Text (58) and RefTagID (371).
//! * Where the definition expects QuickFIX's test application to echo a message back
//!   (a NewOrderSingle, a SecurityDefinition), a venue answers instead: an
//!   ExecutionReport for the order (ClOrdID echoed) or a BusinessMessageReject
//!   (380=3) for a message type it does not take. The header the definition expects
//!   (MsgSeqNum, CompIDs, PossDupFlag, OrigSendingTime) must be the answer's.

use peregrine_fix::codec::tags::is_header;
use peregrine_fix::codec::time::parse_utc_timestamp;

use super::message::{fields, Fields};

/// What an `E` line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expectation {
    /// This message, by the rules of the module docs.
    Message(Fields),
    /// The venue's answer in place of an echo: `msg_type`, the expected header
    /// fields, and body fields that must be there (`Some`: with that value).
    Answer {
        /// The answer's MsgType.
        msg_type: String,
        /// Header fields of the echo the answer must carry.
        header: Fields,
        /// Body fields the answer must carry.
        body: Vec<(String, Option<String>)>,
    },
}

impl Expectation {
    /// The expectation of an `E` line (its message built: see
    /// [`super::message::build`]).
    pub fn of(expected: &[u8]) -> Expectation {
        let f = fields(expected);
        let get = |tag: &str| f.iter().find(|(t, _)| t == tag).map(|(_, v)| v.clone());
        let header: Fields = f
            .iter()
            .filter(|(t, _)| {
                t.parse::<u32>()
                    .is_ok_and(|n| is_header(n) && !matches!(n, 8 | 9 | 35 | 97))
            })
            .cloned()
            .collect();
        match get("35").as_deref() {
            Some("D") => Expectation::Answer {
                msg_type: "8".into(),
                header,
                body: vec![
                    ("11".into(), get("11")),
                    ("150".into(), None),
                    ("39".into(), None),
                ],
            },
            Some("d") => Expectation::Answer {
                msg_type: "j".into(),
                header,
                body: vec![
                    ("372".into(), Some("d".into())),
                    ("380".into(), Some("3".into())),
                ],
            },
            _ => Expectation::Message(f),
        }
    }
}

/// Fields FIX lets a sender add to the session answers the definitions expect.
const OPTIONAL: [&str; 2] = ["58", "371"];

fn value_matches(tag: &str, msg_type: &str, expected: &str, actual: &str) -> bool {
    match tag {
        "52" | "60" | "122" => parse_utc_timestamp(actual.as_bytes()).is_some(),
        "112" if msg_type == "1" => !actual.is_empty(),
        _ => expected == actual,
    }
}

/// `Ok` if `actual` (a whole message) matches `expected`, else why not.
pub fn compare(expected: &Expectation, actual: &[u8]) -> Result<(), String> {
    let a = fields(actual);
    let mut seen = std::collections::HashSet::new();
    if let Some((t, _)) = a.iter().find(|(t, _)| !seen.insert(t.clone())) {
        return Err(format!("tag {t} twice"));
    }
    let get = |tag: &str| a.iter().find(|(t, _)| t == tag).map(|(_, v)| v.as_str());
    let actual_type = get("35").unwrap_or("");
    match expected {
        Expectation::Message(e) => {
            let msg_type = e.iter().find(|(t, _)| t == "35").map_or("", |(_, v)| v);
            for (tag, v) in e {
                if tag == "9" || tag == "10" {
                    continue;
                }
                match get(tag) {
                    None => return Err(format!("field {tag} missing")),
                    Some(x) if !value_matches(tag, msg_type, v, x) => {
                        return Err(format!("field {tag} is {x:?}, expected {v:?}"))
                    }
                    Some(_) => {}
                }
            }
            for (tag, _) in &a {
                let listed = e.iter().any(|(t, _)| t == tag);
                if !listed && !OPTIONAL.contains(&tag.as_str()) && tag != "9" && tag != "10" {
                    return Err(format!("field {tag} not expected"));
                }
            }
            Ok(())
        }
        Expectation::Answer {
            msg_type,
            header,
            body,
        } => {
            if actual_type != msg_type {
                return Err(format!(
                    "MsgType {actual_type:?}, expected {msg_type:?} (the venue's answer)"
                ));
            }
            for (tag, v) in header {
                match get(tag) {
                    Some(x) if value_matches(tag, msg_type, v, x) => {}
                    x => return Err(format!("header field {tag} is {x:?}, expected {v:?}")),
                }
            }
            for (tag, v) in body {
                match (get(tag), v) {
                    (None, _) => return Err(format!("field {tag} missing")),
                    (Some(x), Some(v)) if x != v => {
                        return Err(format!("field {tag} is {x:?}, expected {v:?}"))
                    }
                    _ => {}
                }
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(s: &str) -> Vec<u8> {
        s.replace('|', "\x01").into_bytes()
    }

    #[test]
    fn fields_in_any_order_timestamps_by_form() {
        let e = Expectation::of(&m(
            "8=FIX.4.4|9=51|35=5|34=2|49=ISLD|52=00000000-00:00:00.000|56=TW44|10=0|",
        ));
        let a = m("8=FIX.4.4|9=55|35=5|49=ISLD|56=TW44|34=2|52=20231114-22:13:20.000|10=123|");
        assert_eq!(compare(&e, &a), Ok(()));
        let wrong = m("8=FIX.4.4|9=55|35=5|49=ISLD|56=TW44|34=3|52=20231114-22:13:20.000|10=123|");
        assert!(compare(&e, &wrong).unwrap_err().contains("34"));
        let no_time = m("8=FIX.4.4|9=55|35=5|49=ISLD|56=TW44|34=2|52=today|10=123|");
        assert!(compare(&e, &no_time).is_err());
    }

    #[test]
    fn only_text_and_ref_tag_may_be_added() {
        let e = Expectation::of(&m(
            "8=FIX.4.4|35=3|34=2|49=ISLD|52=x|56=TW44|45=0|372=4|373=5|",
        ));
        let a = m("8=FIX.4.4|9=1|35=3|34=2|49=ISLD|52=20231114-22:13:20|56=TW44|45=0|371=36|372=4|373=5|58=why|10=1|");
        assert_eq!(compare(&e, &a), Ok(()));
        let extra = m("8=FIX.4.4|9=1|35=3|34=2|49=ISLD|52=20231114-22:13:20|56=TW44|45=0|372=4|373=5|1=x|10=1|");
        assert!(compare(&e, &extra)
            .unwrap_err()
            .contains("field 1 not expected"));
        // A listed Text must be equal.
        let e = Expectation::of(&m(
            "8=FIX.4.4|35=5|34=2|49=ISLD|52=x|56=TW44|58=Incorrect BeginString|",
        ));
        let a = m("8=FIX.4.4|35=5|34=2|49=ISLD|52=20231114-22:13:20|56=TW44|58=other|");
        assert!(compare(&e, &a).is_err());
    }

    #[test]
    fn an_echoed_order_is_answered_by_a_report() {
        let e = Expectation::of(&m(
            "8=FIX.4.4|35=D|34=3|43=Y|49=ISLD|52=x|56=TW44|122=x|97=Y|11=ID|21=3|40=1|",
        ));
        let a = m("8=FIX.4.4|35=8|34=3|43=Y|49=ISLD|52=20231114-22:13:20|56=TW44|122=20231114-22:13:20|11=ID|17=1-G1|150=8|39=8|");
        assert_eq!(compare(&e, &a), Ok(()));
        let not_dup = m("8=FIX.4.4|35=8|34=3|49=ISLD|52=20231114-22:13:20|56=TW44|122=20231114-22:13:20|11=ID|150=8|39=8|");
        assert!(compare(&e, &not_dup).is_err());
        let other_order = m("8=FIX.4.4|35=8|34=3|43=Y|49=ISLD|52=20231114-22:13:20|56=TW44|122=20231114-22:13:20|11=X|150=8|39=8|");
        assert!(compare(&e, &other_order).is_err());
        let e = Expectation::of(&m("8=FIX.4.4|35=d|34=2|49=ISLD|52=x|56=TW44|454=0|"));
        let a =
            m("8=FIX.4.4|35=j|34=2|49=ISLD|52=20231114-22:13:20|56=TW44|45=2|372=d|380=3|58=x|");
        assert_eq!(compare(&e, &a), Ok(()));
    }

    #[test]
    fn the_acceptors_test_request_id_is_its_own() {
        let e = Expectation::of(&m("8=FIX.4.4|35=1|34=4|49=ISLD|52=x|56=TW44|112=TEST|"));
        let a = m("8=FIX.4.4|35=1|34=4|49=ISLD|52=20231114-22:13:20|56=TW44|112=7|");
        assert_eq!(compare(&e, &a), Ok(()));
    }
}
