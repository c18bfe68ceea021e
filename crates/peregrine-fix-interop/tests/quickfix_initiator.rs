//! QuickFIX (C++, through the `quickfix` crate) as the initiator, our session layer
//! as the acceptor, over TCP on loopback: Logon with a password, application
//! messages both ways (validated by QuickFIX's FIX 4.4 dictionary), heartbeats,
//! TestRequest both ways, resend with gap fill both ways, SequenceReset (reset mode
//! and ResetSeqNumFlag), Logout both ways.

use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use peregrine_fix::codec::{tags, Precision};
use peregrine_fix::session::{DisconnectReason, Event, Role, Session, SessionConfig};
use peregrine_fix::store::{Durability, FileStore, MessageStore};
use peregrine_fix_interop::qf::*;
use peregrine_fix_interop::FixConn;
use peregrine_types::wall_ns;
use quickfix::{ConnectionHandler, FieldMap, Message};

const WAIT: Duration = Duration::from_secs(20);

/// What our acceptor saw.
#[derive(Debug, Default)]
struct Ours {
    logons: Vec<bool>,
    app: Vec<(String, u64, bool)>,
    peer_rejects: u32,
    disconnects: Vec<DisconnectReason>,
}

/// Our acceptor's application: records, and answers each NewOrderSingle with an
/// ExecutionReport (New) that QuickFIX must find valid.
fn on_event(ours: &mut Ours, s: &mut Session<FileStore>, e: Event<'_>) {
    match e {
        Event::LoggedOn { reset, .. } => ours.logons.push(reset),
        Event::App(m) => {
            let t = String::from_utf8_lossy(m.msg_type()).into_owned();
            ours.app
                .push((t.clone(), m.header.msg_seq_num, m.header.poss_dup));
            if t == "D" && !m.header.poss_dup {
                let cl = m
                    .fields()
                    .flatten()
                    .find(|f| f.tag == tags::CL_ORD_ID)
                    .map(|f| f.value.to_vec())
                    .unwrap();
                send_report(s, &cl);
            }
        }
        Event::PeerRejected { .. } => ours.peer_rejects += 1,
        Event::Disconnect(r) => ours.disconnects.push(r),
        _ => {}
    }
}

fn send_report(s: &mut Session<FileStore>, cl_ord_id: &[u8]) -> u64 {
    s.send_app(b"8", wall_ns(), |w| {
        w.bytes(37, b"42")
            .bytes(11, cl_ord_id)
            .uint(17, wall_ns())
            .char(150, b'0')
            .char(39, b'0')
            .bytes(55, b"PGN-USD")
            .char(54, b'1')
            .decimal(38, 5, 0)
            .decimal(151, 5, 0)
            .decimal(14, 0, 0)
            .decimal(6, 0, 2)
            .timestamp(60, wall_ns(), Precision::Millis);
    })
    .unwrap()
}

fn new_order(cl: &str) -> Message {
    let mut m = Message::new();
    m.with_header_mut(|h| h.set_field(35, "D")).unwrap();
    for (tag, v) in [
        (11, cl),
        (55, "PGN-USD"),
        (54, "1"),
        (38, "5"),
        (40, "2"),
        (44, "100.25"),
        (59, "1"),
    ] {
        m.set_field(tag, v).unwrap();
    }
    m.set_field(60, "20240101-00:00:00.000").unwrap();
    m
}

/// Our acceptor: one session, reused across connections.
struct Acceptor {
    listener: TcpListener,
    session: Option<Session<FileStore>>,
    conn: Option<FixConn<FileStore>>,
    ours: Ours,
    /// Not reading nor writing (to let QuickFIX hear nothing for a while).
    paused: bool,
}

impl Acceptor {
    fn pump(&mut self) {
        if self.paused {
            return;
        }
        if self.conn.is_none() {
            if let Ok((stream, _)) = self.listener.accept() {
                let session = self.session.take().expect("one connection at a time");
                self.conn = Some(FixConn::new(stream, session).unwrap());
            }
        }
        if let Some(conn) = &mut self.conn {
            let ours = &mut self.ours;
            let open = conn.pump(&mut |s, e| on_event(ours, s, e)).unwrap_or(false);
            if !open {
                self.session = Some(self.conn.take().unwrap().into_session());
            }
        }
    }

    fn session(&mut self) -> &mut Session<FileStore> {
        match &mut self.conn {
            Some(c) => &mut c.session,
            None => self.session.as_mut().unwrap(),
        }
    }
}

#[test]
fn quickfix_initiator_against_our_acceptor() {
    let _one = QUICKFIX.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut config = SessionConfig::new(Role::Acceptor, "PGN", "CLIENT");
    config.password = Some("s3cret".into());
    let store = FileStore::open(
        &dir.path().join("ours.fixstore"),
        Durability::OsBuffer,
        wall_ns(),
    )
    .unwrap();
    let acc = Arc::new(Mutex::new(Acceptor {
        listener,
        session: Some(Session::new(config, store)),
        conn: None,
        ours: Ours::default(),
        paused: false,
    }));
    // Our acceptor pumps on its own thread, so QuickFIX calls that block (stop()
    // waits for the Logout answer) are answered.
    let running = Arc::new(AtomicBool::new(true));
    let pumper = {
        let (acc, running) = (Arc::clone(&acc), Arc::clone(&running));
        std::thread::spawn(move || {
            while running.load(Ordering::Relaxed) {
                acc.lock().unwrap().pump();
                std::thread::sleep(Duration::from_micros(500));
            }
        })
    };
    let qf = Recorder {
        password: Some("s3cret".into()),
        ..Recorder::default()
    };
    let wire = WireLog::default();
    let kit = InitiatorKit::new(
        &qf,
        &wire,
        &settings(dir.path(), "initiator", "CLIENT", "PGN", port, ""),
    );
    let session_id = quickfix::SessionId::try_new("FIX.4.4", "CLIENT", "PGN", "").unwrap();

    // 1. Logon (with the password QuickFIX's application adds), orders, reports.
    let mut initiator = kit.start();
    wait_until("logon", WAIT, || {
        let a = &mut *acc.lock().unwrap();
        qf.logons() == 1 && a.ours.logons.len() == 1
    });
    for i in 0..3 {
        quickfix::send_to_target(new_order(&format!("ord-{i}")), &session_id).unwrap();
    }
    wait_until("3 reports at QuickFIX", WAIT, || qf.app().len() == 3);
    let first_d = acc
        .lock()
        .unwrap()
        .ours
        .app
        .iter()
        .find(|a| a.0 == "D")
        .unwrap()
        .1;
    assert_eq!(
        acc.lock()
            .unwrap()
            .ours
            .app
            .iter()
            .filter(|a| a.0 == "D")
            .count(),
        3
    );
    assert!(qf.app().iter().all(|m| m.msg_type == "8" && !m.poss_dup));

    // 2. Heartbeats flow both ways (HeartBtInt=1), and our TestRequest is answered.
    let hb_before = qf.admin_in().iter().filter(|m| m.msg_type == "0").count();
    let test_id = acc
        .lock()
        .unwrap()
        .session()
        .send_test_request(wall_ns())
        .unwrap()
        .to_string();
    wait_until("QuickFIX answers our TestRequest", WAIT, || {
        qf.admin_out()
            .iter()
            .any(|m| m.msg_type == "0" && m.field(112) == Some(test_id.as_str()))
    });
    wait_until("our heartbeats", WAIT, || {
        qf.admin_in().iter().filter(|m| m.msg_type == "0").count() >= hb_before + 2
    });

    // 3. QuickFIX's TestRequest: we go quiet until it asks, then answer. (A fixed
    // 2.6 s pause raced QuickFIX's own disconnect deadline on a loaded machine.)
    let asked_before = qf.admin_out().iter().filter(|m| m.msg_type == "1").count();
    acc.lock().unwrap().paused = true;
    wait_until("QuickFIX's TestRequest", WAIT, || {
        qf.admin_out().iter().filter(|m| m.msg_type == "1").count() > asked_before
    });
    acc.lock().unwrap().paused = false;
    wait_until("QuickFIX's TestRequest answered", WAIT, || {
        let asked: Vec<String> = qf
            .admin_out()
            .iter()
            .filter(|m| m.msg_type == "1")
            .filter_map(|m| m.field(112).map(String::from))
            .collect();
        !asked.is_empty()
            && qf.admin_in().iter().any(|m| {
                m.msg_type == "0" && m.field(112).is_some_and(|id| asked.iter().any(|a| a == id))
            })
    });
    assert_eq!(qf.logouts(), 0, "still logged on");

    // 4. QuickFIX logs out; we answer.
    initiator.stop().unwrap();
    wait_until("logout", WAIT, || {
        let a = &mut *acc.lock().unwrap();
        a.conn.is_none()
    });
    assert_eq!(
        acc.lock().unwrap().ours.disconnects.last(),
        Some(&DisconnectReason::PeerLogout)
    );

    // 5. While QuickFIX is away we send two reports: they wait in our store. At the
    //    next Logon QuickFIX sees our number too high, asks for a resend, and gets
    //    them (PossDupFlag=Y) with gap fills over our administrative messages.
    let r1 = send_report(acc.lock().unwrap().session(), b"while-away-1");
    let r2 = send_report(acc.lock().unwrap().session(), b"while-away-2");
    drop(initiator);
    let mut initiator = kit.start();
    wait_until("resent reports at QuickFIX", WAIT, || {
        qf.app().iter().filter(|m| m.poss_dup).count() == 2
    });
    let resent: Vec<u64> = qf
        .app()
        .iter()
        .filter(|m| m.poss_dup)
        .map(|m| m.seq)
        .collect();
    assert_eq!(resent, vec![r1, r2]);
    assert!(
        qf.admin_out().iter().any(|m| m.msg_type == "2"),
        "QuickFIX sent a ResendRequest"
    );
    assert!(
        wire.incoming_with(&["|35=4|", "|43=Y|", "|123=Y|"]) >= 1,
        "we gap-filled our administrative messages (our Logon) in the resend"
    );

    // 6. The other way: we forget QuickFIX's last messages (our expected number goes
    //    back to its first order), so its next Logon is too high for us: we ask, it
    //    resends the orders (PossDup) and gap-fills its administrative messages.
    initiator.stop().unwrap();
    wait_until("logout", WAIT, || {
        let a = &mut *acc.lock().unwrap();
        a.conn.is_none()
    });
    acc.lock()
        .unwrap()
        .session()
        .store_mut()
        .set_next_target_seq(first_d)
        .unwrap();
    acc.lock().unwrap().ours.app.clear();
    drop(initiator);
    let mut initiator = kit.start();
    wait_until("QuickFIX resends its orders", WAIT, || {
        let a = &mut *acc.lock().unwrap();
        a.ours.app.iter().filter(|a| a.0 == "D" && a.2).count() == 3
    });
    let expected_next = acc.lock().unwrap().session().store().next_target_seq();
    assert!(
        expected_next > first_d + 3,
        "gap fills moved us past the resent orders"
    );

    // 7. SequenceReset (reset mode) from us: QuickFIX takes the new number and accepts
    //    what follows without asking for a resend.
    let resend_requests = qf.admin_out().iter().filter(|m| m.msg_type == "2").count();
    let next = acc.lock().unwrap().session().store().next_sender_seq();
    acc.lock()
        .unwrap()
        .session()
        .reset_sequence(next + 100, wall_ns())
        .unwrap();
    let after = send_report(acc.lock().unwrap().session(), b"after-reset");
    assert_eq!(after, next + 100);
    wait_until("report after the reset", WAIT, || {
        qf.app().iter().any(|m| m.seq == after)
    });
    assert_eq!(
        qf.admin_out().iter().filter(|m| m.msg_type == "2").count(),
        resend_requests
    );

    // 8. We log out; QuickFIX answers.
    acc.lock()
        .unwrap()
        .session()
        .logout("end of test", wall_ns())
        .unwrap();
    wait_until("our logout answered", WAIT, || {
        let a = &mut *acc.lock().unwrap();
        a.conn.is_none()
    });
    assert_eq!(
        acc.lock().unwrap().ours.disconnects.last(),
        Some(&DisconnectReason::LogoutComplete)
    );
    initiator.stop().unwrap();
    drop(initiator);

    // 9. ResetSeqNumFlag: QuickFIX with ResetOnLogon=Y resets both numbers.
    acc.lock().unwrap().ours.app.clear();
    let qf_logons = qf.logons();
    let reset_kit = InitiatorKit::new(&qf, &wire, &settings_with_reset(dir.path(), port));
    let mut initiator = reset_kit.start();
    // Both sides logged on (an order sent before QuickFIX has our Logon answer
    // would wait in its store, unsent).
    wait_until("reset logon", WAIT, || {
        let a = &mut *acc.lock().unwrap();
        a.ours.logons.last() == Some(&true) && qf.logons() > qf_logons
    });
    quickfix::send_to_target(new_order("after-reset"), &session_id).unwrap();
    wait_until("order after reset", WAIT, || {
        let a = &mut *acc.lock().unwrap();
        a.ours.app.iter().any(|o| o.0 == "D" && o.1 == 2 && !o.2)
    });
    initiator.stop().unwrap();
    wait_until("logout", WAIT, || {
        let a = &mut *acc.lock().unwrap();
        a.conn.is_none()
    });
    assert_eq!(
        acc.lock().unwrap().ours.disconnects.last(),
        Some(&DisconnectReason::PeerLogout)
    );
    running.store(false, Ordering::Relaxed);
    pumper.join().unwrap();

    assert_eq!(
        acc.lock().unwrap().ours.peer_rejects,
        0,
        "QuickFIX rejected none of our messages"
    );
    assert!(
        qf.admin_in().iter().all(|m| m.msg_type != "3"),
        "no Reject from us either"
    );
}

fn settings_with_reset(dir: &std::path::Path, port: u16) -> std::path::PathBuf {
    settings(dir, "initiator", "CLIENT", "PGN", port, "ResetOnLogon=Y")
}
