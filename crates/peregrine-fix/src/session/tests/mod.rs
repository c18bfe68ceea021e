//! Peregrine's session-rule tests, written from the FIX 4.4 session protocol (FIX
//! 4.4 Volume 2, "FIX Session-level test cases"), one or more per rule, driving the
//! state machine directly: a scripted peer writes messages, the session answers,
//! the tests read its output. docs/fix.md maps each rule to its tests and to the
//! QuickFIX acceptance definitions that check the same rule over a socket.

mod garbled;
mod heartbeat;
mod logon;
mod reject;
mod resend;
mod sequence;
mod validation;

use std::collections::BTreeMap;

use crate::codec::time::Precision;
use crate::codec::{frame, Encoder, Frame, FrameLimits, Message};
use crate::store::{MemoryStore, MessageStore};

use super::{DisconnectReason, Event, Received, Role, Session, SessionConfig, SessionRejectReason};

pub(super) const T0: u64 = 1_700_000_000_000_000_000;
pub(super) const SEC: u64 = 1_000_000_000;

/// An owned summary of an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Ev {
    LoggedOn {
        reset: bool,
        hb: u32,
    },
    App {
        msg_type: String,
        seq: u64,
        poss_dup: bool,
    },
    Rejected {
        seq: u64,
        reason: SessionRejectReason,
        tag: Option<i64>,
    },
    PeerRejected(u64),
    Garbled,
    Resend(u64, u64),
    Disconnect(DisconnectReason),
}

fn own(e: Event<'_>) -> Ev {
    match e {
        Event::LoggedOn {
            reset,
            heartbeat_secs,
        } => Ev::LoggedOn {
            reset,
            hb: heartbeat_secs,
        },
        Event::App(m) => Ev::App {
            msg_type: String::from_utf8_lossy(m.msg_type()).into_owned(),
            seq: m.header.msg_seq_num,
            poss_dup: m.header.poss_dup,
        },
        Event::Rejected {
            ref_seq,
            reason,
            ref_tag,
        } => Ev::Rejected {
            seq: ref_seq,
            reason,
            tag: ref_tag,
        },
        Event::PeerRejected { ref_seq } => Ev::PeerRejected(ref_seq),
        Event::Garbled(_) => Ev::Garbled,
        Event::ResendServed { begin, end } => Ev::Resend(begin, end),
        Event::Disconnect(r) => Ev::Disconnect(r),
    }
}

/// A message the session sent, as tag → value (first occurrence).
#[derive(Debug, Clone)]
pub(super) struct Out {
    pub msg_type: String,
    pub seq: u64,
    pub fields: BTreeMap<u32, String>,
}

impl Out {
    pub(super) fn get(&self, tag: u32) -> Option<&str> {
        self.fields.get(&tag).map(String::as_str)
    }
}

/// The peer: writes messages with its own sequence numbers.
pub(super) struct Peer {
    pub enc: Encoder,
    pub seq: u64,
    pub sender: &'static str,
    pub target: &'static str,
}

impl Peer {
    pub(super) fn new() -> Self {
        Peer {
            enc: Encoder::default(),
            seq: 1,
            sender: "CLIENT",
            target: "PGN",
        }
    }

    /// A message with the next sequence number; `header` fields go after 52,
    /// `body` fields after the header.
    pub(super) fn msg(&mut self, t: &str, now: u64, body: &[(u32, &str)]) -> Vec<u8> {
        let seq = self.seq;
        self.seq += 1;
        self.raw(t, seq, now, &[], body)
    }

    pub(super) fn raw(
        &mut self,
        t: &str,
        seq: u64,
        now: u64,
        header: &[(u32, &str)],
        body: &[(u32, &str)],
    ) -> Vec<u8> {
        let mut w = self.enc.start(t.as_bytes());
        w.bytes(49, self.sender.as_bytes())
            .bytes(56, self.target.as_bytes())
            .uint(34, seq)
            .timestamp(52, now, Precision::Millis);
        for (tag, v) in header.iter().chain(body) {
            w.bytes(*tag, v.as_bytes());
        }
        w.seal().to_vec()
    }

    pub(super) fn logon(&mut self, now: u64, extra: &[(u32, &str)]) -> Vec<u8> {
        let mut body = vec![(98, "0"), (108, "30")];
        body.extend_from_slice(extra);
        self.msg("A", now, &body)
    }
}

pub(super) fn acceptor_config() -> SessionConfig {
    let mut c = SessionConfig::new(Role::Acceptor, "PGN", "CLIENT");
    c.password = Some("secret".into());
    c
}

pub(super) fn acceptor() -> Session<MemoryStore> {
    let mut s = Session::new(acceptor_config(), MemoryStore::new(T0));
    s.connect(T0).unwrap();
    s
}

/// Feeds bytes (all of them, message by message, each followed by the messages its
/// arrival released from the gap queue, as a caller does); returns the events.
pub(super) fn feed<S: MessageStore>(s: &mut Session<S>, bytes: &[u8], now: u64) -> Vec<Ev> {
    let mut events = Vec::new();
    let mut at = 0;
    let mut queued = Vec::new();
    while at < bytes.len() {
        match s.receive(&bytes[at..], now).unwrap() {
            Received::NeedMore => break,
            Received::Consumed { len, event } => {
                at += len;
                events.extend(event.map(own));
            }
        }
        while s.take_queued(&mut queued).unwrap() {
            if let Received::Consumed { event, .. } = s.receive_queued(&queued, now).unwrap() {
                events.extend(event.map(own));
            }
        }
    }
    events
}

/// A NewOrderSingle's body that passes the dictionary (and is a limit order Peregrine
/// takes), with ClOrdID `id`.
pub(super) fn order(id: &'static str) -> [(u32, &'static str); 7] {
    [
        (11, id),
        (55, "PGN-USD"),
        (54, "1"),
        (60, "20231114-22:13:20"),
        (38, "5"),
        (40, "2"),
        (44, "100.25"),
    ]
}

/// The App event of a NewOrderSingle `seq`.
pub(super) fn app_d(seq: u64, poss_dup: bool) -> Ev {
    Ev::App {
        msg_type: "D".into(),
        seq,
        poss_dup,
    }
}

/// Frames `body` (the fields after BodyLength) as a message, with a right CheckSum.
pub(super) fn with_body(body: &str) -> Vec<u8> {
    let mut m = format!("8=FIX.4.4\x019={}\x01{}", body.len(), body).into_bytes();
    let sum = crate::codec::frame_checksum(&m);
    m.extend_from_slice(format!("10={sum:03}\x01").as_bytes());
    m
}

/// The standard header of the peer's message 2 at T0, as text.
pub(super) const HDR2: &str = "49=CLIENT\x0156=PGN\x0134=2\x0152=20231114-22:13:20.000\x01";

/// Takes and parses everything the session wrote.
pub(super) fn drain<S: MessageStore>(s: &mut Session<S>) -> Vec<Out> {
    let bytes = s.outbound().unwrap().to_vec();
    s.consume_outbound(bytes.len());
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let Some(Frame::Message { len }) = frame(&bytes[at..], FrameLimits::default()) else {
            panic!("session wrote an unframeable message");
        };
        let m = Message::parse(&bytes[at..at + len]).expect("session wrote an unparseable message");
        let mut fields = BTreeMap::new();
        for f in crate::codec::Fields::new(&bytes[at..at + len]).flatten() {
            fields
                .entry(f.tag)
                .or_insert_with(|| String::from_utf8_lossy(f.value).into_owned());
        }
        out.push(Out {
            msg_type: String::from_utf8_lossy(m.msg_type()).into_owned(),
            seq: m.header.msg_seq_num,
            fields,
        });
        at += len;
    }
    out
}

pub(super) fn types(out: &[Out]) -> Vec<&str> {
    out.iter().map(|o| o.msg_type.as_str()).collect()
}

/// An acceptor logged on with a peer (both at the next sequence number 2).
pub(super) fn logged_on() -> (Session<MemoryStore>, Peer) {
    let mut s = acceptor();
    let mut p = Peer::new();
    let logon = p.logon(T0, &[(554, "secret")]);
    assert_eq!(
        feed(&mut s, &logon, T0),
        vec![Ev::LoggedOn {
            reset: false,
            hb: 30
        }]
    );
    assert_eq!(types(&drain(&mut s)), vec!["A"]);
    (s, p)
}

/// Sends an application message from the acceptor.
pub(super) fn send_order_ack<S: MessageStore>(s: &mut Session<S>, now: u64, id: &str) -> u64 {
    s.send_app(b"8", now, |w| {
        w.bytes(11, id.as_bytes()).char(150, b'0');
    })
    .unwrap()
}

/// `msg` (a whole message) with BeginString `version` (BodyLength and CheckSum
/// made right again).
pub(super) fn reframe(msg: &[u8], version: &str) -> Vec<u8> {
    let text = std::str::from_utf8(msg).unwrap();
    let body = &text[text.find("\x0135=").unwrap() + 1..text.len() - 7];
    let mut m = format!("8={version}\x019={}\x01{body}", body.len()).into_bytes();
    let sum = crate::codec::frame_checksum(&m);
    m.extend_from_slice(format!("10={sum:03}\x01").as_bytes());
    m
}

/// `msg` with BodyLength `n` (the CheckSum made right for the new bytes).
pub(super) fn with_body_length(msg: &[u8], n: usize) -> Vec<u8> {
    let text = std::str::from_utf8(msg).unwrap();
    let body = &text[text.find("\x0135=").unwrap() + 1..text.len() - 7];
    let mut m = format!("8=FIX.4.4\x019={n}\x01{body}").into_bytes();
    let sum = crate::codec::frame_checksum(&m);
    m.extend_from_slice(format!("10={sum:03}\x01").as_bytes());
    m
}
