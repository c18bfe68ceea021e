//! The server's session against the client's ([`peregrine_wire::v2::client`]), both
//! sans-IO: whatever the server queues, the client must accept in order.

use std::time::{Duration, Instant};

use peregrine_types::{AccountId, ClientOrderId, InstrumentId};
use peregrine_wire::auth::AccountKey;
use peregrine_wire::field::{Pad, SessionKind};
use peregrine_wire::v2::client::{ClientSession, LoginParams, Phase, Step as CStep};
use peregrine_wire::v2::queries::{OpenOrder, OpenOrdersEnd};
use peregrine_wire::v2::reports::Rejected;
use peregrine_wire::v2::Outbound;
use peregrine_wire::WireMessage;

use super::*;
use peregrine_exchange_core::reports::Retention;

const KEY: AccountKey = AccountKey([9; 32]);
const A: AccountId = AccountId(3);

fn engine(seq: u64) -> EngineStatus {
    EngineStatus {
        seq,
        time: Timestamp(seq),
    }
}

fn report(engine_seq: u64) -> Outbound {
    Rejected {
        session_seq: 0,
        engine_seq,
        engine_time: Timestamp(engine_seq),
        client_order_id: ClientOrderId(engine_seq),
        instrument: InstrumentId(1),
        reason: ReasonCode(1),
        reserved: Pad,
        report_seq: 0,
        account: A,
    }
    .into()
}

fn grant() -> Grant {
    Grant {
        account: A,
        kind: SessionKind::Trading,
        target: Some(A),
        admin: false,
    }
}

/// Decodes everything the server queued and feeds it to the client; returns the
/// client's steps.
fn drain(server: &mut Session, client: &mut ClientSession) -> Vec<CStep> {
    let mut steps = Vec::new();
    let mut bytes = server.pending_output().to_vec();
    let n = bytes.len();
    server.wrote(n, Instant::now());
    while !bytes.is_empty() {
        let (m, used) = Outbound::decode(&bytes).expect("the server sends valid frames");
        steps.push(client.on_message(&m, &KEY).expect("the client accepts it"));
        bytes.drain(..used);
    }
    steps
}

fn login_frame(client: &mut ClientSession, server: &mut Session) -> Vec<u8> {
    let steps = drain(server, client);
    let Some(CStep::SendLogin(l)) = steps.last().copied() else {
        panic!("a challenge first: {steps:?}");
    };
    let mut buf = [0u8; 64];
    l.encode(&mut buf).unwrap();
    buf.to_vec()
}

fn feed(server: &mut Session, bytes: &[u8], now: Instant) -> Step {
    server.rx_spare()[..bytes.len()].copy_from_slice(bytes);
    server.received(bytes.len(), now);
    server.next_step().expect("a whole frame")
}

/// A session of account A logged in with a buffer of `limit` bytes, resuming at
/// `resume` (the engine at `seq`): the server's side and the client's.
fn logged_in(
    store: &ReportStore,
    limit: usize,
    resume: u64,
    seq: u64,
    now: Instant,
) -> (Session, ClientSession) {
    let mut server = Session::new(limit, [1; 32], engine(seq), now);
    let mut client = ClientSession::new(LoginParams::trading(A, resume));
    let frame = login_frame(&mut client, &mut server);
    let Step::Login(l) = feed(&mut server, &frame, now) else {
        panic!("a login step")
    };
    server.accept(
        grant(),
        1000,
        0,
        l.next_report_seq,
        store,
        engine(seq),
        now,
        [],
    );
    (server, client)
}

#[test]
fn login_replay_and_live_reports_are_what_the_client_expects() {
    let now = Instant::now();
    let mut store = ReportStore::new(Retention { per_account: 100 });
    for e in 1..=5 {
        store.append(A, report(e));
    }
    let mut server = Session::new(4096, [1; 32], engine(5), now);
    let mut client = ClientSession::new(LoginParams::trading(A, 3));
    let frame = login_frame(&mut client, &mut server);
    let Step::Login(l) = feed(&mut server, &frame, now) else {
        panic!("a login step");
    };
    assert!(l.verify(&KEY.stored(), server.nonce()));
    let lost = server.accept(
        grant(),
        1000,
        0,
        l.next_report_seq,
        &store,
        engine(5),
        now,
        [],
    );
    assert!(!lost);
    // A live report arrives during the replay: it follows ReplayEnd, never inside it.
    store.append(A, report(6));
    server.answer(Outbound::sample(15, &[1]), &store, now); // an OrderStatus, held
    assert!(server.pump(&store, engine(6), now));
    let steps = drain(&mut server, &mut client);
    let reports: Vec<bool> = steps
        .iter()
        .filter_map(|s| match s {
            CStep::Report { replayed } => Some(*replayed),
            _ => None,
        })
        .collect();
    assert_eq!(
        reports,
        [true, true, true, false],
        "3, 4, 5 replayed; 6 live"
    );
    assert_eq!(client.phase(), Phase::Live);
    assert_eq!(client.next_report_seq(), 7);
    assert_eq!(server.delivery(), Delivery::Live);
    // Heartbeats announce exactly what was delivered.
    server.heartbeat_if_due(Duration::ZERO, engine(6), now + Duration::from_secs(2));
    drain(&mut server, &mut client);
}

#[test]
fn a_small_buffer_lags_instead_of_dropping() {
    let now = Instant::now();
    let mut store = ReportStore::new(Retention { per_account: 1000 });
    for e in 1..=200 {
        store.append(A, report(e));
    }
    let mut server = Session::new(1024, [1; 32], engine(200), now);
    let mut client = ClientSession::new(LoginParams::trading(A, 1));
    let frame = login_frame(&mut client, &mut server);
    let Step::Login(l) = feed(&mut server, &frame, now) else {
        panic!()
    };
    server.accept(
        grant(),
        1000,
        0,
        l.next_report_seq,
        &store,
        engine(200),
        now,
        [],
    );
    let mut rounds = 0;
    while client.phase() != Phase::Live {
        server.pump(&store, engine(200), now);
        assert!(server.unsent() <= 1024);
        drain(&mut server, &mut client);
        rounds += 1;
        assert!(rounds < 1000);
    }
    assert!(
        rounds > 10,
        "the replay went out in many buffer-sized pieces"
    );
    assert_eq!(client.next_report_seq(), 201);
}

/// A live session whose reader lags (its buffer full, the stream ahead of it) gets a
/// query answer only after every report released before the answer, and before
/// the reports released after it: the answer never overtakes the stream.
#[test]
fn an_answer_never_overtakes_the_reports_released_before_it() {
    let now = Instant::now();
    let mut store = ReportStore::new(Retention { per_account: 1000 });
    let (mut server, mut client) = logged_in(&store, 1024, 1, 0, now);
    server.pump(&store, engine(0), now);
    drain(&mut server, &mut client);
    assert_eq!(server.delivery(), Delivery::Live);
    // 100 reports, far more than the 1,024-byte buffer holds, then the answer (as
    // the session table delivers one: pump first, then the answer).
    for e in 1..=100 {
        store.append(A, report(e));
    }
    server.pump(&store, engine(100), now);
    assert!(server.next_report_seq(engine(100)) < 101, "the reader lags");
    server.answer(Outbound::sample(15, &[1]), &store, now); // an OrderStatus
    store.append(A, report(101));
    let mut order = Vec::new();
    for _ in 0..1000 {
        server.pump(&store, engine(101), now);
        for step in drain(&mut server, &mut client) {
            match step {
                CStep::Report { .. } => order.push(client.next_report_seq() - 1),
                CStep::Other => order.push(0), // the answer
                other => panic!("{other:?}"),
            }
        }
        if client.next_report_seq() == 102 && order.contains(&0) {
            break;
        }
    }
    let at = order
        .iter()
        .position(|&r| r == 0)
        .expect("the answer arrived");
    assert_eq!(
        order[..at].last(),
        Some(&100),
        "after report 100: {order:?}"
    );
    assert_eq!(order[at + 1..], [101], "before report 101: {order:?}");
}

#[test]
fn a_lost_position_gets_a_snapshot_then_live_from_its_end() {
    let now = Instant::now();
    let mut store = ReportStore::new(Retention { per_account: 2 });
    for e in 1..=5 {
        store.append(A, report(e));
    }
    let mut server = Session::new(4096, [1; 32], engine(5), now);
    let mut client = ClientSession::new(LoginParams::trading(A, 1));
    let frame = login_frame(&mut client, &mut server);
    let Step::Login(l) = feed(&mut server, &frame, now) else {
        panic!()
    };
    assert!(server.accept(
        grant(),
        1000,
        0,
        l.next_report_seq,
        &store,
        engine(5),
        now,
        []
    ));
    // The core's snapshot answer, then a live report after it.
    let mut order = OpenOrder::sample(&[1]);
    order.request_id = 0;
    server.answer(order.into(), &store, now);
    let mut end = OpenOrdersEnd::sample(&[1]);
    end.request_id = 0;
    end.report_seq = 5;
    server.answer(end.into(), &store, now);
    server.snapshot_done(5, &store, engine(5), now);
    store.append(A, report(6));
    server.pump(&store, engine(6), now);
    let steps = drain(&mut server, &mut client);
    assert!(steps.contains(&CStep::SnapshotOrder));
    assert_eq!(steps.last(), Some(&CStep::Report { replayed: false }));
    assert_eq!(client.next_report_seq(), 7);
}

#[test]
fn falling_out_of_retention_closes_the_session() {
    let now = Instant::now();
    let mut store = ReportStore::new(Retention { per_account: 4 });
    let (mut server, _client) = logged_in(&store, 4096, 0, 0, now);
    server.pump(&store, engine(0), now);
    for e in 1..=10 {
        store.append(A, report(e)); // the session never pumps meanwhile
    }
    server.pump(&store, engine(10), now);
    assert!(server.close.as_deref().unwrap_or("").contains("retention"));
}

#[test]
fn protocol_rules_before_login() {
    let now = Instant::now();
    let mut s = Session::new(4096, [1; 32], engine(0), now);
    let mut buf = [0u8; 64];
    // A version-1 Login: 32 bytes, type 0x01, version 1 (no decoder knows it).
    buf[..4].copy_from_slice(&[32, 0, 0x01, 1]);
    assert!(matches!(feed(&mut s, &buf[..32], now), Step::OldLogin));
    let mut s = Session::new(4096, [1; 32], engine(0), now);
    let n = peregrine_wire::orders::NewOrder::sample(&[1])
        .encode(&mut buf)
        .unwrap();
    assert!(matches!(feed(&mut s, &buf[..n], now), Step::Stop));
    assert!(s.close.as_deref().unwrap().contains("before login"));
    s.refuse(LoginCode::Throttled, 250, engine(0), now);
    assert!(s.close_after_flush);
}
