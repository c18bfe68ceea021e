//! Order lists through the shell and a real gateway thread (issue 31): a list's legs
//! are handed over one command each, consecutively, and gathered again by the gateway
//! into one `submit_list`; a list that does not fit in the gateway's inbox is refused
//! whole, never half-sent.

use std::sync::atomic::Ordering;
use std::sync::Mutex;

use peregrine_types::ListKind;

use super::*;

/// The lists a venue was given: kind, engine ids.
type Given = Arc<Mutex<Vec<(ListKind, Vec<u64>)>>>;

/// Records every list it is given; acknowledges every order.
#[derive(Debug, Default)]
struct ListVenue {
    lists: Given,
    acks: Vec<u64>,
}

impl Venue for ListVenue {
    fn submit(&mut self, order: VenueOrder, _now_ns: u64) -> Result<(), VenueError> {
        self.acks.push(order.engine_id);
        Ok(())
    }

    fn submit_list(
        &mut self,
        kind: ListKind,
        legs: &[VenueOrder],
        _now_ns: u64,
    ) -> Result<(), VenueError> {
        let ids: Vec<u64> = legs.iter().map(|l| l.engine_id).collect();
        self.acks.extend(&ids);
        self.lists.lock().unwrap().push((kind, ids));
        Ok(())
    }

    fn cancel(&mut self, _engine_id: u64, _now_ns: u64) -> Result<(), VenueError> {
        Ok(())
    }

    fn replace(
        &mut self,
        engine_id: u64,
        _price: Price,
        _qty: Qty,
        _now_ns: u64,
    ) -> Result<(), VenueError> {
        Err(VenueError::UnknownOrder(engine_id))
    }

    fn poll(&mut self, _now_ns: u64, out: &mut dyn FnMut(Report)) -> usize {
        let n = self.acks.len();
        for engine_id in self.acks.drain(..) {
            out(Report::Ack {
                engine_id,
                venue_id: engine_id,
            });
        }
        n
    }
}

/// Venue 0 configured as an exchange (the kind of venue that takes lists); the rig
/// drives the given adapter, nothing connects.
fn exchange_config() -> EngineConfig {
    let mut cfg = EngineConfig::default();
    let key = "00".repeat(32);
    cfg.venues[0].sim = None;
    cfg.venues[0].exchange = Some(
        toml::from_str(&format!(
            "addr = \"127.0.0.1:1\"\naccount = 1\nkey = \"{key}\""
        ))
        .unwrap(),
    );
    cfg
}

fn send_oco(r: &mut Rig, ids: [u64; 2]) {
    for (k, id) in ids.into_iter().enumerate() {
        let o = order(id, 1);
        r.tx.try_push(Request::list_leg(&o, ListKind::Oco, k as u8, now_ns()))
            .unwrap();
        r.tx.try_push(Request::new_order(&o, now_ns())).unwrap();
    }
}

#[test]
fn an_oco_reaches_the_venue_as_one_list() {
    let venue = ListVenue::default();
    let lists = Arc::clone(&venue.lists);
    let mut r = rig_on(exchange_config(), venue);
    send_oco(&mut r, [1, 2]);
    let ev = r.events(2);
    assert!(
        ev.iter().all(|e| e.kind() == Some(EventKind::Ack)),
        "{ev:?}"
    );
    let lists = lists.lock().unwrap();
    assert_eq!(lists.len(), 1, "{lists:?}");
    let (kind, ids) = &lists[0];
    assert_eq!(*kind, ListKind::Oco);
    assert_eq!(ids.len(), 2);
    assert_eq!(ids[1], ids[0] + 1);
}

/// The gateway is stopped and its inbox filled to one free slot: an OCO's two legs
/// do not fit, so both are refused busy and neither is pushed (handing over leg 0
/// alone would leave it in the inbox with its list never completed).
#[test]
fn a_list_that_does_not_fit_in_the_inbox_is_refused_whole() {
    let mut r = rig_on(exchange_config(), ListVenue::default());
    r.stop.store(true, Ordering::Relaxed);
    r.gateway.take().unwrap().join().unwrap();
    let pushes = |r: &Rig| {
        r.orch.gateways[0]
            .counters
            .inbox
            .pushes
            .load(Ordering::Relaxed)
    };
    let room = r.orch.gateways[0].inbox.capacity() as u64 - 1;
    let deadline = Instant::now() + Duration::from_secs(10);
    for i in 0..room {
        r.send(100 + i, 1);
        while pushes(&r) < i + 1 {
            assert!(Instant::now() < deadline, "only {} orders in", pushes(&r));
            r.orch.poll_once();
        }
    }
    send_oco(&mut r, [1, 2]);
    let ev = r.events(2);
    assert!(
        ev.iter()
            .all(|e| e.kind() == Some(EventKind::Reject) && e.reason == reason::GATEWAY_BUSY),
        "{ev:?}"
    );
    assert_eq!(pushes(&r), room, "no leg went in");
    let full = r.orch.gateways[0]
        .counters
        .inbox
        .full
        .load(Ordering::Relaxed);
    assert_eq!(full, 2);
}
