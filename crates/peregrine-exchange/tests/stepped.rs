//! The stepped venue (what `peregrine sim` drives) on a real directory: the issue's
//! durability scenarios in-process, with a protocol-v2 client that logs in for real.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use peregrine_exchange::config::AccountConfig;
use peregrine_exchange::stepped::{ConnId, Environment, StepOptions, SteppedVenue};
use peregrine_exchange::Config;
use peregrine_exchange_core::journal::JournalSection;
use peregrine_journal::Storage;
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentId, InstrumentSpec, OrderType, Price, Qty, Side, StpMode,
    TimeInForce, Timestamp,
};
use peregrine_wire::auth::AccountKey;
use peregrine_wire::orders::NewOrder;
use peregrine_wire::v2::client::{ClientSession, LoginParams, Step};
use peregrine_wire::v2::session::{LoginAccepted, ReplayStart};
use peregrine_wire::v2::{Inbound, Outbound};
use peregrine_wire::MAX_MESSAGE_SIZE;

const ACCOUNT: AccountId = AccountId(1);

fn key() -> AccountKey {
    AccountKey([7; 32])
}

fn config(dir: &Path, snapshot_every: u64) -> Config {
    let mut c = Config {
        instruments: vec![InstrumentSpec::example(1)],
        arena_capacity: 4096,
        ..Config::default()
    };
    c.accounts = vec![AccountConfig {
        id: ACCOUNT,
        stored_key: key().stored().to_hex(),
        admin: false,
        operator: false,
    }];
    c.market_data.enabled = false;
    c.recovery_enabled = false;
    let mut j = JournalSection::new(dir);
    j.snapshot_every = snapshot_every;
    c.journal = Some(j);
    c
}

/// A venue and the clocks it reads.
struct Rig {
    venue: SteppedVenue,
    now: Arc<AtomicU64>,
}

impl Rig {
    fn start(config: &Config, now: &Arc<AtomicU64>) -> Rig {
        let env = Environment {
            storage: Storage::os(),
            epoch_ns: Arc::new(AtomicU64::new(1_800_000_000_000_000_000)),
            session_ns: Arc::clone(now),
            base: Instant::now(),
            seed: 1,
        };
        let venue = SteppedVenue::start(config, &env, StepOptions::default()).unwrap();
        Rig {
            venue,
            now: Arc::clone(now),
        }
    }

    /// Steps (and syncs) until nothing moves.
    fn settle(&mut self) {
        for _ in 0..10_000 {
            self.now.fetch_add(10_000, Ordering::Relaxed);
            let busy = self.venue.step(false).unwrap();
            let synced = self.venue.sync_wanted() && self.venue.sync_now();
            if !busy && !synced {
                return;
            }
        }
        panic!("the venue never settled");
    }
}

/// One session, logging in with `resume`.
struct Client {
    conn: ConnId,
    session: ClientSession,
    rx: Vec<u8>,
    accepted: Option<LoginAccepted>,
    replay: Option<ReplayStart>,
    reports: Vec<Outbound>,
    live: bool,
}

impl Client {
    fn connect(rig: &mut Rig, conn: ConnId, resume: u64) -> Client {
        let peer: SocketAddr = "10.0.0.1:4000".parse().unwrap();
        rig.venue.connect(conn, peer);
        let mut c = Client {
            conn,
            session: ClientSession::new(LoginParams::trading(ACCOUNT, resume)),
            rx: Vec::new(),
            accepted: None,
            replay: None,
            reports: Vec::new(),
            live: false,
        };
        c.pump(rig);
        assert!(c.live, "logged in");
        c
    }

    /// Exchanges bytes with the venue until both are quiet.
    fn pump(&mut self, rig: &mut Rig) {
        loop {
            rig.settle();
            let bytes = rig.venue.take_output(self.conn, usize::MAX);
            if bytes.is_empty() {
                return;
            }
            self.rx.extend_from_slice(&bytes);
            let mut at = 0;
            while let Ok((msg, n)) = Outbound::decode(&self.rx[at..]) {
                at += n;
                match self.session.on_message(&msg, &key()).unwrap() {
                    Step::SendLogin(l) => self.send(rig, Inbound::Login(l)),
                    Step::LoggedIn(a) => self.accepted = Some(a),
                    Step::RecoveryStarted { .. } => {
                        if let Outbound::ReplayStart(r) = msg {
                            self.replay = Some(r);
                        }
                    }
                    Step::Report { .. } => self.reports.push(msg),
                    Step::RecoveryDone => self.live = true,
                    _ => {}
                }
            }
            self.rx.drain(..at);
        }
    }

    fn send(&mut self, rig: &mut Rig, msg: Inbound) {
        let mut buf = [0u8; MAX_MESSAGE_SIZE];
        let n = msg.encode(&mut buf).unwrap();
        rig.venue.send(self.conn, &buf[..n]);
    }
}

/// A buy that rests (nothing sells): one `Accepted` report each.
fn resting(i: u64) -> Inbound {
    Inbound::NewOrder(NewOrder {
        client_order_id: ClientOrderId(i),
        price: Price::from_raw(9_000 + (i % 500) as i64),
        qty: Qty::from_raw(1),
        expire_at: Timestamp(0),
        instrument: InstrumentId(1),
        side: Side::Buy,
        order_type: OrderType::Limit,
        tif: TimeInForce::Gtc,
        stp: StpMode::None,
    })
}

/// Defect 1 (issue 27): with `snapshot_every = 100`, 250 orders, a crash and a
/// restart, a client resuming from report 1 was answered `not_retained` (oldest 101):
/// retention started at the newest snapshot. The snapshot now saves the streams.
#[test]
fn retention_survives_a_restart_from_a_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), 100);
    let now = Arc::new(AtomicU64::new(0));
    {
        let mut rig = Rig::start(&cfg, &now);
        let mut c = Client::connect(&mut rig, 1, 1);
        for i in 1..=250 {
            c.send(&mut rig, resting(i));
            if i % 10 == 0 {
                c.pump(&mut rig);
            }
        }
        c.pump(&mut rig);
        assert_eq!(c.reports.len(), 250);
        let snaps = std::fs::read_dir(dir.path().join("snapshots"))
            .unwrap()
            .count();
        assert!(snaps >= 2, "snapshots at 100 and 200: {snaps}");
        // Dropped without a stop: what a killed process leaves (the page cache keeps
        // what was written).
    }
    let mut rig = Rig::start(&cfg, &now);
    let c = Client::connect(&mut rig, 2, 1);
    let accepted = c.accepted.unwrap();
    assert_eq!(
        (accepted.next_report_seq, accepted.oldest_report_seq),
        (251, 1)
    );
    let replay = c.replay.unwrap();
    assert_eq!(
        (replay.reason.0, replay.count),
        (0, 250),
        "every report replayed"
    );
    assert_eq!(c.reports.len(), 250);
    for (i, r) in c.reports.iter().enumerate() {
        assert_eq!(r.report(), Some((ACCOUNT, i as u64 + 1)));
    }
}
