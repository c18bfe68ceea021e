use peregrine_types::{ClientOrderId, InstrumentId, Timestamp};

use super::*;
use crate::field::LeaderAddress;
use crate::field::ReasonCode;
use crate::v2::queries::{OpenOrder, OpenOrdersEnd};
use crate::v2::reports::Rejected;
use crate::v2::session::{
    Challenge, Disconnect, LeaderRedirect, LoginRejected, ReplayEnd, ReplayStart, ServerHeartbeat,
};
use crate::WireMessage;

const KEY: AccountKey = AccountKey([7; 32]);
const A: AccountId = AccountId(5);

/// A scripted exchange: stamps session_seq in order.
struct Exchange {
    seq: u64,
}

impl Exchange {
    fn new() -> Self {
        Exchange { seq: 0 }
    }
    fn send(&mut self, mut m: Outbound) -> Outbound {
        self.seq += 1;
        m.set_session_seq(self.seq);
        m
    }
    fn challenge(&mut self) -> Outbound {
        self.send(
            Challenge {
                session_seq: 0,
                engine_seq: 1,
                engine_time: Timestamp(1),
                nonce: [3; 32],
            }
            .into(),
        )
    }
    fn accepted(&mut self, next: u64, instruments: u32) -> Outbound {
        let mut a = LoginAccepted::sample(&[0]);
        a.account = A;
        a.target = Some(A);
        a.next_report_seq = next;
        a.instrument_count = instruments;
        self.send(a.into())
    }
    fn replay_start(&mut self, from: u64, to: u64, reason: u16) -> Outbound {
        let count = if reason == 0 { to - from } else { 0 };
        self.send(
            ReplayStart {
                session_seq: 0,
                engine_seq: 0,
                engine_time: Timestamp(0),
                from_seq: from,
                to_seq: to,
                count,
                reason: ReasonCode(reason),
            }
            .into(),
        )
    }
    fn replay_end(&mut self, next: u64, count: u64) -> Outbound {
        self.send(
            ReplayEnd {
                session_seq: 0,
                engine_seq: 0,
                engine_time: Timestamp(0),
                next_report_seq: next,
                count,
            }
            .into(),
        )
    }
    fn report(&mut self, account: AccountId, seq: u64, engine: u64) -> Outbound {
        self.send(
            Rejected {
                session_seq: 0,
                engine_seq: engine,
                engine_time: Timestamp(engine),
                client_order_id: ClientOrderId(seq),
                instrument: InstrumentId(1),
                reason: ReasonCode(1),
                reserved: Pad,
                report_seq: seq,
                account,
            }
            .into(),
        )
    }
    fn redirect(&mut self, leader_id: u64, address: &str, retry_after_ms: u32) -> Outbound {
        self.send(
            LeaderRedirect {
                session_seq: 0,
                engine_seq: 4,
                engine_time: Timestamp(4),
                leader_id,
                retry_after_ms,
                reserved: Pad,
                address: LeaderAddress::from_text(address).unwrap(),
            }
            .into(),
        )
    }
    fn disconnect(&mut self, next: u64, reason: u16) -> Outbound {
        self.send(
            Disconnect {
                session_seq: 0,
                engine_seq: 0,
                engine_time: Timestamp(0),
                next_report_seq: next,
                reason: ReasonCode(reason),
                reserved: Pad,
            }
            .into(),
        )
    }
    fn heartbeat(&mut self, next: u64) -> Outbound {
        self.send(
            ServerHeartbeat {
                session_seq: 0,
                engine_seq: 0,
                engine_time: Timestamp(0),
                next_report_seq: next,
            }
            .into(),
        )
    }
}

fn run(c: &mut ClientSession, msgs: &[Outbound]) -> Result<Vec<Step>, Violation> {
    msgs.iter().map(|m| c.on_message(m, &KEY)).collect()
}

#[test]
fn login_proves_the_key_over_the_nonce() {
    let mut c = ClientSession::new(LoginParams::trading(A, 1));
    let mut x = Exchange::new();
    let Step::SendLogin(l) = c.on_message(&x.challenge(), &KEY).unwrap() else {
        panic!("a login");
    };
    assert!(l.verify(&KEY.stored(), &[3; 32]));
    assert_eq!(
        (l.account, l.next_report_seq, l.kind),
        (A, 1, SessionKind::Trading)
    );
    assert_eq!(c.phase(), Phase::AwaitAnswer);
}

#[test]
fn a_resumed_session_replays_then_goes_live_in_order() {
    let mut c = ClientSession::new(LoginParams::trading(A, 3));
    let mut x = Exchange::new();
    let msgs = [
        x.challenge(),
        x.accepted(6, 0),
        x.replay_start(3, 6, 0),
        x.report(A, 3, 10),
        x.report(A, 4, 11),
        x.report(A, 5, 12),
        x.replay_end(6, 3),
        x.report(A, 6, 13),
        x.heartbeat(7),
    ];
    let steps = run(&mut c, &msgs).unwrap();
    assert_eq!(steps[3], Step::Report { replayed: true });
    assert_eq!(steps[6], Step::RecoveryDone);
    assert_eq!(steps[7], Step::Report { replayed: false });
    assert_eq!((c.phase(), c.resume_point()), (Phase::Live, 7));
}

#[test]
fn gaps_repeats_and_missing_reports_are_violations() {
    for bad in [
        // a skipped report
        |x: &mut Exchange| vec![x.report(A, 2, 1)],
        // a repeated one
        |x: &mut Exchange| vec![x.report(A, 1, 1), x.report(A, 1, 1)],
        // a heartbeat ahead of what arrived
        |x: &mut Exchange| vec![x.heartbeat(2)],
    ] {
        let mut c = ClientSession::new(LoginParams::trading(A, 1));
        let mut x = Exchange::new();
        let mut msgs = vec![
            x.challenge(),
            x.accepted(1, 0),
            x.replay_start(1, 1, 0),
            x.replay_end(1, 0),
        ];
        msgs.extend(bad(&mut x));
        assert!(run(&mut c, &msgs).is_err());
        assert_eq!(c.phase(), Phase::Closed);
    }
}

#[test]
fn a_session_seq_gap_is_a_violation() {
    let mut c = ClientSession::new(LoginParams::trading(A, 0));
    let mut x = Exchange::new();
    let first = x.challenge();
    x.seq += 1; // the exchange "skips" one
    let second = x.accepted(1, 0);
    assert!(c.on_message(&first, &KEY).is_ok());
    assert_eq!(
        c.on_message(&second, &KEY),
        Err(Violation::SessionSeq {
            expected: 2,
            got: 3
        })
    );
}

#[test]
fn older_than_retention_takes_a_snapshot_and_restarts_at_the_exchange() {
    let mut c = ClientSession::new(LoginParams::trading(A, 2));
    let mut x = Exchange::new();
    let mut order = OpenOrder::sample(&[1]);
    order.request_id = 0;
    let mut end = OpenOrdersEnd::sample(&[1]);
    end.request_id = 0;
    let msgs = [
        x.challenge(),
        x.accepted(900, 0),
        x.replay_start(2, 900, 1),
        x.send(order.into()),
        x.send(end.into()),
        x.replay_end(900, 0),
        x.report(A, 900, 5),
    ];
    let steps = run(&mut c, &msgs).unwrap();
    assert_eq!(
        steps[2],
        Step::RecoveryStarted {
            replay: 0,
            reason: 1
        }
    );
    assert_eq!(steps[3], Step::SnapshotOrder);
    assert_eq!(c.resume_point(), 901);
}

#[test]
fn instruments_come_before_recovery_and_rejection_closes() {
    let mut c = ClientSession::new(LoginParams::trading(A, 0));
    let mut x = Exchange::new();
    let def = crate::v2::reference::InstrumentDefinition::sample(&[1]);
    let msgs = [
        x.challenge(),
        x.accepted(1, 2),
        x.send(def.into()),
        x.send(def.into()),
        x.replay_start(1, 1, 0),
        x.replay_end(1, 0),
    ];
    let steps = run(&mut c, &msgs).unwrap();
    assert_eq!(&steps[2..4], &[Step::Instrument, Step::Instrument]);
    let mut c = ClientSession::new(LoginParams::trading(A, 0));
    let mut x = Exchange::new();
    let mut r = LoginRejected::sample(&[0]);
    r.reason = ReasonCode(2);
    r.retry_after_ms = 500;
    let steps = run(&mut c, &[x.challenge(), x.send(r.into())]).unwrap();
    assert_eq!(
        steps[1],
        Step::Rejected {
            reason: 2,
            retry_after_ms: 500
        }
    );
    assert!(c.on_message(&x.heartbeat(1), &KEY).is_err());
}

#[test]
fn a_drop_copy_of_every_account_checks_each_account_and_resumes_by_engine_seq() {
    let params = LoginParams {
        account: A,
        kind: SessionKind::DropCopy,
        target: None,
        heartbeat_ms: 1000,
        resume_from: 10,
    };
    let mut c = ClientSession::new(params);
    let mut x = Exchange::new();
    let msgs = [
        x.challenge(),
        x.accepted(13, 0),
        x.replay_start(10, 13, 0),
        x.report(AccountId(1), 4, 10),
        x.report(AccountId(2), 9, 11),
        x.report(AccountId(1), 5, 12),
        x.replay_end(13, 3),
        x.report(AccountId(2), 10, 13),
    ];
    run(&mut c, &msgs).unwrap();
    assert_eq!(c.resume_point(), 13);
    assert!(
        c.on_message(&x.report(AccountId(1), 7, 14), &KEY).is_err(),
        "gap"
    );
}

#[test]
fn a_redirect_instead_of_the_challenge_names_the_leader_and_closes() {
    let mut c = ClientSession::new(LoginParams::trading(A, 0));
    let mut x = Exchange::new();
    let step = c.on_message(&x.redirect(3, "10.0.0.3:9100", 0), &KEY);
    let Ok(Step::Redirect {
        leader_id: 3,
        address: Some(a),
        retry_after_ms: 0,
    }) = step
    else {
        panic!("a redirect: {step:?}");
    };
    assert_eq!(a.as_text(), Some("10.0.0.3:9100"));
    assert_eq!(c.phase(), Phase::Closed);
    assert!(c.on_message(&x.challenge(), &KEY).is_err(), "closed");
}

#[test]
fn a_redirect_without_a_leader_carries_no_address_and_the_delay() {
    let mut c = ClientSession::new(LoginParams::trading(A, 0));
    let mut x = Exchange::new();
    assert_eq!(
        c.on_message(&x.redirect(0, "", 250), &KEY),
        Ok(Step::Redirect {
            leader_id: 0,
            address: None,
            retry_after_ms: 250
        })
    );
    assert_eq!(c.phase(), Phase::Closed);
}

#[test]
fn a_redirect_ends_a_session_at_any_point_after_it_started() {
    // A leader that lost its quorum tells its sessions where to go (or that no
    // leader is known): after the challenge, during recovery, and live.
    for after in 1..=4 {
        let mut c = ClientSession::new(LoginParams::trading(A, 1));
        let mut x = Exchange::new();
        let script: [fn(&mut Exchange) -> Outbound; 4] = [
            Exchange::challenge,
            |x| x.accepted(1, 0),
            |x| x.replay_start(1, 1, 0),
            |x| x.replay_end(1, 0),
        ];
        let msgs: Vec<Outbound> = script[..after].iter().map(|f| f(&mut x)).collect();
        run(&mut c, &msgs).unwrap();
        assert_eq!(
            c.on_message(&x.redirect(0, "", 100), &KEY),
            Ok(Step::Redirect {
                leader_id: 0,
                address: None,
                retry_after_ms: 100
            }),
            "after {after} messages"
        );
        assert_eq!(c.phase(), Phase::Closed);
        assert!(
            c.on_message(&x.heartbeat(1), &KEY).is_err(),
            "nothing after the redirect"
        );
    }
}

#[test]
fn a_disconnect_after_the_login_closes_with_its_reason_and_keeps_the_resume_point() {
    for during_replay in [false, true] {
        let mut c = ClientSession::new(LoginParams::trading(A, 3));
        let mut x = Exchange::new();
        let mut msgs = vec![x.challenge(), x.accepted(6, 0), x.replay_start(3, 6, 0)];
        msgs.push(x.report(A, 3, 10));
        if !during_replay {
            msgs.push(x.report(A, 4, 11));
            msgs.push(x.report(A, 5, 12));
            msgs.push(x.replay_end(6, 3));
        }
        msgs.push(x.disconnect(6, 5));
        let steps = run(&mut c, &msgs).unwrap();
        assert_eq!(steps.last(), Some(&Step::Disconnected { reason: 5 }));
        assert_eq!(c.phase(), Phase::Closed);
        let resume = if during_replay { 4 } else { 6 };
        assert_eq!(
            c.resume_point(),
            resume,
            "what was processed, not what was announced"
        );
        assert!(
            c.on_message(&x.heartbeat(6), &KEY).is_err(),
            "nothing after it"
        );
    }
    // Before the login it is out of place.
    let mut c = ClientSession::new(LoginParams::trading(A, 3));
    let mut x = Exchange::new();
    run(&mut c, &[x.challenge()]).unwrap();
    assert_eq!(
        c.on_message(&x.disconnect(0, 5), &KEY),
        Err(Violation::OutOfPlace(0x88))
    );
}
