//! The oracle: what every client saw, checked against itself and against the
//! reference book.
//!
//! * **Streams.** Every report any session receives (trading sessions, drop copies,
//!   the retention probes) is recorded by account and report sequence number. A
//!   report seen again (a replay after a reconnect, a restart, a failover) must be
//!   the same report, byte for byte apart from the session's own sequence number:
//!   an acknowledged order that was lost and whose number was reused by another
//!   command shows up here. Within an account, engine sequence numbers never go
//!   down. At the end every stream must be complete from 1.
//! * **Retention.** Every `LoginAccepted` must show the configured retention:
//!   `oldest_report_seq ≤ max(1, next_report_seq − retain)`.
//! * **Reference.** At the end, every command is identified from its reports (each
//!   request's answer carries its engine sequence number and time), replayed in
//!   order into the reference book ([`peregrine_book::ReferenceBook`], the naive
//!   implementation the fast book is proven against), and the reports that command
//!   must produce are compared with what the clients received; then the live books'
//!   state hashes must equal the reference's.

use std::collections::BTreeMap;

use peregrine_book::{Book, CancelReason, CommandKind, Event, ReferenceBook};
use peregrine_exchange_core::codec::command::MassCancelRequest;
use peregrine_exchange_core::route::to_command;
use peregrine_types::{AccountId, ClientOrderId, InstrumentId, InstrumentSpec, OrderId, Timestamp};
use peregrine_wire::v2::{Inbound, Outbound};
use peregrine_wire::MAX_MESSAGE_SIZE;

/// A report as the stream holds it: its bytes with `session_seq` zeroed.
fn normal(msg: &Outbound) -> Vec<u8> {
    let mut m = *msg;
    m.set_session_seq(0);
    let mut buf = [0u8; MAX_MESSAGE_SIZE];
    let n = m.encode(&mut buf).unwrap_or(0);
    buf[..n].to_vec()
}

/// One fact a report states about a command, comparable with the reference's.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Fact {
    Accepted {
        account: u32,
        order: u64,
        cid: u64,
    },
    Rejected {
        account: u32,
        cid: u64,
    },
    CancelRejected {
        account: u32,
        cid: u64,
    },
    Fill {
        account: u32,
        order: u64,
        price: i64,
        qty: i64,
        leaves: i64,
    },
    Cancelled {
        account: u32,
        order: u64,
        qty: i64,
    },
    Replaced {
        account: u32,
        order: u64,
        price: i64,
        qty: i64,
    },
    MassCancelDone {
        account: u32,
        cancelled: u32,
    },
}

/// `CancelCode::Expired`: a GTD order reached its expiry.
const EXPIRED: u16 = 6;

fn fact_of(msg: &Outbound) -> Option<Fact> {
    Some(match msg {
        Outbound::Accepted(a) => Fact::Accepted {
            account: a.account.0,
            order: a.order_id.0,
            cid: a.client_order_id.0,
        },
        Outbound::Rejected(r) => Fact::Rejected {
            account: r.account.0,
            cid: r.client_order_id.0,
        },
        Outbound::CancelRejected(r) => Fact::CancelRejected {
            account: r.account.0,
            cid: r.client_order_id.0,
        },
        Outbound::Fill(f) => Fact::Fill {
            account: f.account.0,
            order: f.order_id.0,
            price: f.price.units(),
            qty: f.qty.lots(),
            leaves: f.leaves_qty.lots(),
        },
        Outbound::Cancelled(c) => Fact::Cancelled {
            account: c.account.0,
            order: c.order_id.0,
            qty: c.cancelled_qty.lots(),
        },
        Outbound::Replaced(r) => Fact::Replaced {
            account: r.account.0,
            order: r.order_id.0,
            price: r.new_price.units(),
            qty: r.new_qty.lots(),
        },
        Outbound::MassCancelDone(m) => Fact::MassCancelDone {
            account: m.account.0,
            cancelled: m.cancelled,
        },
        _ => return None,
    })
}

/// The reference's facts for the events of one command.
fn facts_of_events(events: &[Event], mass: Option<(AccountId, bool)>) -> Vec<Fact> {
    let mut out = Vec::new();
    let mut cancelled = 0u32;
    for ev in events {
        match ev {
            Event::Accepted(a) => out.push(Fact::Accepted {
                account: a.account.0,
                order: a.id.0,
                cid: a.client_id.0,
            }),
            Event::Rejected(r) => out.push(match r.command {
                CommandKind::New => Fact::Rejected {
                    account: r.account.0,
                    cid: r.client_id.0,
                },
                _ => Fact::CancelRejected {
                    account: r.account.0,
                    cid: r.client_id.0,
                },
            }),
            Event::Fill(f) => {
                out.push(Fact::Fill {
                    account: f.maker_account.0,
                    order: f.maker_id.0,
                    price: f.price.units(),
                    qty: f.qty.lots(),
                    leaves: f.maker_leaves.lots(),
                });
                out.push(Fact::Fill {
                    account: f.taker_account.0,
                    order: f.taker_id.0,
                    price: f.price.units(),
                    qty: f.qty.lots(),
                    leaves: f.taker_leaves.lots(),
                });
            }
            Event::Cancelled(c) => {
                if c.reason == CancelReason::MassCancel {
                    cancelled += 1;
                }
                out.push(Fact::Cancelled {
                    account: c.account.0,
                    order: c.id.0,
                    qty: c.qty.lots(),
                });
            }
            Event::Replaced(r) => out.push(Fact::Replaced {
                account: r.account.0,
                order: r.id.0,
                price: r.price.units(),
                qty: r.qty.lots(),
            }),
            // Not generated by the simulated clients (stops, lists, protections,
            // auctions), or not a fact about an order's fate.
            Event::MassCancelled(_)
            | Event::LevelChanged(_)
            | Event::Triggered(_)
            | Event::List(_)
            | Event::Mmp(_)
            | Event::PhaseChanged(_)
            | Event::Indicative(_) => {}
        }
    }
    if let Some((account, refused)) = mass {
        if !refused {
            out.push(Fact::MassCancelDone {
                account: account.0,
                cancelled,
            });
        }
    }
    out.sort();
    out
}

/// A request a client sent, by account and client order id.
#[derive(Debug, Clone, Copy)]
struct Sent {
    msg: Inbound,
}

/// See the module documentation.
#[derive(Debug)]
pub struct Oracle {
    retain: u64,
    streams: BTreeMap<AccountId, BTreeMap<u64, (u64, Vec<u8>)>>,
    /// Reports by engine sequence number: (account, report seq).
    by_engine: BTreeMap<u64, Vec<(AccountId, u64)>>,
    requests: BTreeMap<(AccountId, u64), Sent>,
    /// Reports recorded.
    pub reports: u64,
    /// Logins checked for retention.
    pub logins: u64,
    /// The highest engine sequence number of any report a client received: every
    /// command up to it was acknowledged.
    pub acked: u64,
}

impl Oracle {
    /// An oracle for a venue retaining `retain` reports per account.
    pub fn new(retain: usize) -> Self {
        Oracle {
            retain: retain as u64,
            streams: BTreeMap::new(),
            by_engine: BTreeMap::new(),
            requests: BTreeMap::new(),
            reports: 0,
            logins: 0,
            acked: 0,
        }
    }

    /// A client sent `msg` for `account` (order entry requests only are kept).
    pub fn sent(&mut self, account: AccountId, msg: &Inbound) {
        let cid = match msg {
            Inbound::NewOrder(o) => o.client_order_id,
            Inbound::Cancel(c) => c.client_order_id,
            Inbound::Replace(r) => r.client_order_id,
            Inbound::MassCancel(m) => m.client_order_id,
            _ => return,
        };
        self.requests.insert((account, cid.0), Sent { msg: *msg });
    }

    /// A session saw report `msg`. `Err`: it contradicts what was seen before.
    pub fn report(&mut self, msg: &Outbound) -> Result<(), String> {
        let Some((account, seq)) = msg.report() else {
            return Ok(());
        };
        if seq == 0 {
            return Ok(());
        }
        let bytes = normal(msg);
        let engine = msg.engine_seq();
        self.acked = self.acked.max(engine);
        let stream = self.streams.entry(account).or_default();
        if let Some((_, seen)) = stream.get(&seq) {
            if *seen != bytes {
                return Err(format!(
                    "account {account} report {seq} changed: first {:?}, now {msg:?} \
                     (a report a client saw was lost and its number reused)",
                    Outbound::decode(seen).map(|m| m.0).ok()
                ));
            }
            return Ok(());
        }
        let before = stream.range(..seq).next_back().map(|(_, (e, _))| *e);
        let after = stream.range(seq + 1..).next().map(|(_, (e, _))| *e);
        if before.is_some_and(|e| e > engine) || after.is_some_and(|e| e < engine) {
            return Err(format!(
                "account {account} report {seq} has engine seq {engine}, out of order with \
                 its neighbours ({before:?}, {after:?})"
            ));
        }
        stream.insert(seq, (engine, bytes));
        self.by_engine
            .entry(engine)
            .or_default()
            .push((account, seq));
        self.reports += 1;
        Ok(())
    }

    /// A login of `account`'s stream was accepted with these positions.
    pub fn login(&mut self, account: AccountId, next: u64, oldest: u64) -> Result<(), String> {
        self.logins += 1;
        let promised = next.saturating_sub(self.retain).max(1);
        if oldest > promised {
            return Err(format!(
                "account {account}: the exchange retains reports from {oldest} only, with its \
                 stream at {next} and retention {}: reports {promised}..{oldest} can no longer \
                 be replayed",
                self.retain
            ));
        }
        Ok(())
    }

    /// The highest report sequence number seen for `account`.
    pub fn seen_through(&self, account: AccountId) -> u64 {
        self.streams
            .get(&account)
            .and_then(|s| s.keys().next_back().copied())
            .unwrap_or(0)
    }

    fn get(&self, account: AccountId, seq: u64) -> Option<Outbound> {
        let (_, bytes) = self.streams.get(&account)?.get(&seq)?;
        Outbound::decode(bytes).ok().map(|(m, _)| m)
    }

    /// Every stream complete from report 1.
    pub fn check_complete(&self) -> Result<(), String> {
        for (account, stream) in &self.streams {
            for (i, seq) in stream.keys().enumerate() {
                if *seq != i as u64 + 1 {
                    return Err(format!(
                        "account {account}: report {} was never received (the stream has \
                         {seq} next)",
                        i + 1
                    ));
                }
            }
        }
        Ok(())
    }

    /// Replays every command through the reference book and compares, command by
    /// command, the reports it must produce with those received, then the books.
    /// `live` is each live book's state hash by instrument, `engine_seq` the venue's.
    pub fn check_reference(
        &self,
        specs: &[InstrumentSpec],
        capacity: usize,
        engine_seq: u64,
        live: &BTreeMap<InstrumentId, [u8; 32]>,
    ) -> Result<u64, String> {
        let mut books: BTreeMap<InstrumentId, ReferenceBook> = specs
            .iter()
            .map(|s| (s.id, ReferenceBook::new(s.clone(), capacity)))
            .collect();
        let mut next_id = 1u64;
        let mut events = Vec::new();
        for seq in 1..=engine_seq {
            let reports: Vec<Outbound> = self
                .by_engine
                .get(&seq)
                .into_iter()
                .flatten()
                .filter_map(|&(a, r)| self.get(a, r))
                .collect();
            // An admin command (the run's initial funding, balances on): money moves,
            // no book changes; the reference books know no balances.
            if !reports.is_empty()
                && reports
                    .iter()
                    .all(|r| matches!(r, Outbound::Balance(_) | Outbound::AdminRejected(_)))
            {
                continue;
            }
            // A command no client asked for: the venue's own `Tick` that expires the
            // GTD orders due (docs/protocol.md 4.7); every report it made is an
            // expiry. The reference books expire the same orders at its time.
            if !reports.is_empty()
                && reports
                    .iter()
                    .all(|r| matches!(r, Outbound::Cancelled(c) if c.reason.0 == EXPIRED))
            {
                let tick = peregrine_book::Command {
                    ts: reports[0].engine_time(),
                    action: peregrine_book::Action::Tick,
                };
                events.clear();
                for b in books.values_mut() {
                    b.execute(&tick, &mut events);
                }
                let want = facts_of_events(&events, None);
                let mut got: Vec<Fact> = reports.iter().filter_map(fact_of).collect();
                got.sort();
                if want != got {
                    return Err(format!(
                        "command {seq} (a GTD expiry tick): the reference book's reports \
                         differ from what the clients received\n  reference: {want:?}\n  \
                         received:  {got:?}"
                    ));
                }
                continue;
            }
            let (account, req, ts) = self.identify(seq, &reports)?;
            events.clear();
            let mut mass = None;
            match req.msg {
                Inbound::MassCancel(m) => {
                    let rec = MassCancelRequest {
                        ts,
                        instrument: m.instrument,
                        account,
                        side: m.side,
                        client_id: m.client_order_id,
                    };
                    let targets: Vec<InstrumentId> = match m.instrument {
                        Some(i) => vec![i],
                        None => books.keys().copied().collect(),
                    };
                    for i in targets {
                        let Some(b) = books.get_mut(&i) else {
                            return Err(format!("command {seq}: mass cancel of unknown {i}"));
                        };
                        b.execute(&rec.book_command(i), &mut events);
                    }
                    let refused = events.iter().any(|e| matches!(e, Event::Rejected(_)));
                    mass = Some((account, refused));
                }
                msg => {
                    let Some(mut cmd) = to_command(&msg, account, ts) else {
                        return Err(format!("command {seq}: {msg:?} maps to no command"));
                    };
                    let instrument = match &mut cmd.action {
                        peregrine_book::Action::New(o) => {
                            o.id = OrderId(next_id);
                            next_id += 1;
                            o.instrument
                        }
                        peregrine_book::Action::Cancel(c) => c.instrument,
                        peregrine_book::Action::Replace(r) => r.instrument,
                        _ => return Err(format!("command {seq}: unexpected {cmd:?}")),
                    };
                    match books.get_mut(&instrument) {
                        Some(b) => b.execute(&cmd, &mut events),
                        None => return Err(format!("command {seq}: unknown instrument")),
                    }
                }
            }
            let want = facts_of_events(&events, mass);
            let mut got: Vec<Fact> = reports.iter().filter_map(fact_of).collect();
            got.sort();
            if want != got {
                return Err(format!(
                    "command {seq} ({:?} of account {account}): the reference book's reports \
                     differ from what the clients received\n  reference: {want:?}\n  \
                     received:  {got:?}",
                    req.msg
                ));
            }
        }
        for (id, book) in &books {
            let want = book.state_hash().0;
            if live.get(id) != Some(&want) {
                return Err(format!(
                    "instrument {id}: the live book differs from the reference book after \
                     command {engine_seq}"
                ));
            }
        }
        Ok(engine_seq)
    }

    /// The request that command `seq` ran, from the answer its requester got.
    fn identify(
        &self,
        seq: u64,
        reports: &[Outbound],
    ) -> Result<(AccountId, Sent, Timestamp), String> {
        let lookup = |account: AccountId, cid: ClientOrderId| {
            self.requests.get(&(account, cid.0)).map(|s| (account, *s))
        };
        let mut found = None;
        for r in reports {
            let hit = match r {
                Outbound::Accepted(a) => lookup(a.account, a.client_order_id),
                Outbound::Rejected(x) => lookup(x.account, x.client_order_id),
                Outbound::Replaced(x) => lookup(x.account, x.client_order_id)
                    .filter(|(_, s)| matches!(s.msg, Inbound::Replace(_))),
                Outbound::CancelRejected(x) => lookup(x.account, x.client_order_id),
                Outbound::MassCancelDone(x) => lookup(x.account, x.request_id),
                Outbound::Cancelled(x) => lookup(x.account, x.request_id)
                    .filter(|(_, s)| matches!(s.msg, Inbound::Cancel(_))),
                _ => None,
            };
            if let Some((account, sent)) = hit {
                found = Some((account, sent, r.engine_time()));
                break;
            }
        }
        found.ok_or_else(|| {
            format!(
                "command {seq}: no report the clients received identifies it (received {} \
                 report(s) with that engine seq): its answer was lost",
                reports.len()
            )
        })
    }
}
