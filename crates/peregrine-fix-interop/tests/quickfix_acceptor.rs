//! QuickFIX as the acceptor (a venue), our session layer as the initiator: Logon,
//! an order answered by QuickFIX's application with an ExecutionReport that our
//! decoder reads, our TestRequest answered, and our Logout answered.

use std::net::TcpStream;
use std::time::Duration;

use peregrine_fix::app::{
    ExecType, ExecutionReportView, NewOrderSingle, OrdType, OrderTerms, SelfMatchPrevention, Side,
    TimeInForce,
};
use peregrine_fix::codec::Precision;
use peregrine_fix::session::{DisconnectReason, Event, Role, Session, SessionConfig};
use peregrine_fix::store::MemoryStore;
use peregrine_fix_interop::qf::*;
use peregrine_fix_interop::FixConn;
use peregrine_types::wall_ns;
use quickfix::{
    Acceptor, Application, ConnectionHandler, LogFactory, MemoryMessageStoreFactory,
    SessionSettings,
};

const WAIT: Duration = Duration::from_secs(20);

#[test]
fn our_initiator_against_a_quickfix_acceptor() {
    let _one = QUICKFIX.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let venue = Recorder {
        venue: true,
        ..Recorder::default()
    };
    let app = Application::try_new(&venue).unwrap();
    let wire = WireLog::default();
    let log = LogFactory::try_new(&wire).unwrap();
    let cfg = settings(dir.path(), "acceptor", "VENUE", "ENGINE", port, "");
    let settings = SessionSettings::try_from_path(&cfg).unwrap();
    let store = MemoryMessageStoreFactory::new();
    let mut acceptor = Acceptor::try_new(&settings, &app, &store, &log, ACCEPTOR_KIND).unwrap();
    acceptor.start().unwrap();

    let mut config = SessionConfig::new(Role::Initiator, "ENGINE", "VENUE");
    config.heartbeat_secs = 1;
    config.password = Some("pw".into());
    let stream = (0..200)
        .find_map(|_| {
            TcpStream::connect(("127.0.0.1", port)).ok().or_else(|| {
                std::thread::sleep(Duration::from_millis(10));
                None
            })
        })
        .expect("QuickFIX listens");
    let mut conn = FixConn::new(stream, Session::new(config, MemoryStore::new(wall_ns()))).unwrap();

    let mut logged_on = false;
    let mut reports: Vec<(ExecType, String)> = Vec::new();
    let mut closed = None;
    let pump = |conn: &mut FixConn<MemoryStore>,
                logged_on: &mut bool,
                reports: &mut Vec<(ExecType, String)>,
                closed: &mut Option<DisconnectReason>| {
        conn.pump(&mut |_, e| match e {
            Event::LoggedOn { .. } => *logged_on = true,
            Event::App(m) if m.msg_type() == b"8" => {
                let r = ExecutionReportView::decode(&m).expect("a valid ExecutionReport");
                reports.push((
                    r.exec_type,
                    String::from_utf8_lossy(r.cl_ord_id).into_owned(),
                ));
            }
            Event::Disconnect(r) => *closed = Some(r),
            _ => {}
        })
        .unwrap();
    };
    wait_until("logon", WAIT, || {
        pump(&mut conn, &mut logged_on, &mut reports, &mut closed);
        logged_on && venue.logons() == 1
    });

    let order = NewOrderSingle {
        cl_ord_id: b"E-1",
        account: None,
        transact_time: wall_ns(),
        terms: OrderTerms {
            symbol: b"PGN-USD",
            side: Side::Buy,
            order_qty: b"5",
            ord_type: OrdType::Limit,
            price: Some(b"100.25"),
            time_in_force: TimeInForce::Gtc,
            expire_time: None,
            post_only: false,
            self_match: SelfMatchPrevention::None,
        },
    };
    conn.session
        .send_app(b"D", wall_ns(), |w| order.encode(w, Precision::Millis))
        .unwrap();
    wait_until("the venue's report", WAIT, || {
        pump(&mut conn, &mut logged_on, &mut reports, &mut closed);
        !reports.is_empty()
    });
    assert_eq!(reports, vec![(ExecType::New, "E-1".to_string())]);
    assert_eq!(
        venue.app().len(),
        1,
        "QuickFIX's dictionary accepted our NewOrderSingle"
    );

    let id = conn
        .session
        .send_test_request(wall_ns())
        .unwrap()
        .to_string();
    wait_until("heartbeat answering our TestRequest", WAIT, || {
        pump(&mut conn, &mut logged_on, &mut reports, &mut closed);
        venue
            .admin_out()
            .iter()
            .any(|m| m.msg_type == "0" && m.field(112) == Some(id.as_str()))
    });
    // A few heartbeat intervals pass with the session kept alive by heartbeats.
    let until = std::time::Instant::now() + Duration::from_millis(2500);
    wait_until("heartbeats", WAIT, || {
        pump(&mut conn, &mut logged_on, &mut reports, &mut closed);
        std::time::Instant::now() > until
    });
    assert_eq!(closed, None);
    assert!(
        venue
            .admin_in()
            .iter()
            .filter(|m| m.msg_type == "0")
            .count()
            >= 2
    );

    conn.session.logout("done", wall_ns()).unwrap();
    wait_until("logout answered", WAIT, || {
        pump(&mut conn, &mut logged_on, &mut reports, &mut closed);
        closed.is_some()
    });
    assert_eq!(closed, Some(DisconnectReason::LogoutComplete));
    assert_eq!(
        wire.incoming_with(&["|35=3|"]),
        0,
        "QuickFIX rejected nothing"
    );
    acceptor.stop().unwrap();
}
