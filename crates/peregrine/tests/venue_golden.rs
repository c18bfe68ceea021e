//! Golden scenarios of the venue's order types and market structure, over the native
//! protocol against the real `peregrine exchange` binary, in four configurations:
//! single node in memory, single node journaled, batch mode (journaled) and a 3-node
//! cluster. (The repository had no named set of "four configurations"; these are the
//! four ways the other over-the-wire tests run the exchange.)
//!
//! Each scenario is written from the public rules of major venues (CME Globex's stop
//! and iceberg rules, Binance spot's OCO/OTO order lists and fee schedule, Deribit's
//! market-maker protection, Xetra / Euronext call auctions and volatility
//! interruptions), as they are stated in `docs/orders.md`, `docs/fees.md` and
//! `docs/auctions.md`: the expected transcripts below were worked out by hand from
//! those rules before the first run. Every scenario has its own instrument, so the
//! scenarios are independent; each account's transcript is every report it receives,
//! in order, with ids and prices (raw units: 10000 is 100.00) but no times.

mod support;

use std::net::SocketAddr;
use std::time::Duration;

use peregrine_client::order_entry::Connection;
use peregrine_types::{
    AccountId, AuctionKind, ClientOrderId, InstrumentId, ListKind, OrderId, OrderType, Price, Qty,
    Side, StpMode, TimeInForce, Timestamp, TrailUnit, TriggerKind,
};
use peregrine_wire::field::{ListLeg, MarketAction, MmpAction, Pad};
use peregrine_wire::v2::client::LoginParams;
use peregrine_wire::v2::venue::{CancelList, MarketControl, MmpRequest, NewOrderExt, NewOrderList};
use peregrine_wire::v2::{NewOrder, Outbound, RequestRef};
use peregrine_wire::WireMessage;
use support::cluster::{Cluster, Opts};
use support::{account_toml, key, start, with_timeout, Exchange};

/// The admin account (market commands).
const ADMIN: u32 = 5;

/// The scenarios' instruments (ids 1..=8), TOML.
fn instruments() -> String {
    let mut s = String::new();
    for id in 1..=8 {
        s.push_str(&format!(
            "[[instruments]]\nid = {id}\nsymbol = \"G{id}-USD\"\nprice_decimals = 2\nqty_decimals = 0\n\
             tick_size = 1\nlot_size = 1\nmin_qty = 1\nmax_qty = 1000000\nreference_price = 10000\n\
             band = 5000\nstatus = \"active\"\n"
        ));
        match id {
            6 => s.push_str(
                "[instruments.fees]\nmaker_ppm = -100\ntaker_ppm = 2000\n\
                 [[instruments.fees.tiers]]\nmin_volume = \"1000000\"\nmaker_ppm = -200\ntaker_ppm = 1000\n",
            ),
            8 => s.push_str("volatility = { band_bps = 100, auction_ms = 300 }\n"),
            _ => {}
        }
    }
    s.push_str(&account_toml(ADMIN, true));
    s
}

/// A running venue in one configuration.
enum Venue {
    Single(
        Exchange,
        #[allow(
            dead_code,
            reason = "held: the journal's directory lives as long as the venue"
        )]
        tempfile::TempDir,
    ),
    Cluster(Cluster),
}

impl Venue {
    fn start(config: &str) -> Venue {
        let dir = tempfile::tempdir().unwrap();
        let journal = format!(
            "[journal]\ndir = {:?}\nfsync = \"none\"\n",
            dir.path().join("journal")
        );
        let md = "[market_data]\nenabled = false\n";
        match config {
            "memory" => Venue::Single(start(&format!("{md}{}", instruments())), dir),
            "journaled" => Venue::Single(start(&format!("{md}{journal}{}", instruments())), dir),
            "batch" => Venue::Single(
                start(&format!(
                    "mode = \"batch\"\ntick_us = 1000\n{md}{journal}{}",
                    instruments()
                )),
                dir,
            ),
            "cluster" => Venue::Cluster(Cluster::start_with(&Opts {
                extra: instruments(),
                ..Opts::default()
            })),
            _ => unreachable!(),
        }
    }

    fn addrs(&self) -> Vec<SocketAddr> {
        match self {
            Venue::Single(e, _) => vec![e.addr],
            Venue::Cluster(c) => c.addrs(),
        }
    }

    fn login(&self, account: u32) -> Trader {
        let (mut c, _, _) = Connection::connect_any(
            &self.addrs(),
            LoginParams::trading(AccountId(account), 0),
            key(account),
            Duration::from_secs(10),
            Duration::from_secs(30),
        )
        .unwrap_or_else(|e| panic!("login of {account}: {e}"));
        c.recover(|_| {}).unwrap();
        Trader {
            c,
            lines: Vec::new(),
        }
    }
}

/// One logged-in account and the transcript of what it received.
struct Trader {
    c: Connection,
    lines: Vec<String>,
}

/// A report as a transcript line (`None`: not part of the transcript).
fn line(m: &Outbound) -> Option<String> {
    Some(match m {
        Outbound::Accepted(a) => format!("accepted {}", a.client_order_id.0),
        Outbound::AcceptedExt(a) => format!("accepted {} {:?}", a.client_order_id.0, a.stage),
        Outbound::Rejected(r) => format!("rejected {} reason {}", r.client_order_id.0, r.reason.0),
        Outbound::Fill(f) => format!(
            "fill {} {}@{} leaves {} {:?} fee {}",
            f.client_order_id.0,
            f.qty.lots(),
            f.price.units(),
            f.leaves_qty.lots(),
            f.role,
            f.fee
        ),
        Outbound::Cancelled(c) => format!(
            "cancelled {} qty {} reason {}",
            c.client_order_id.0,
            c.cancelled_qty.lots(),
            c.reason.0
        ),
        Outbound::Triggered(t) => format!(
            "triggered {} {:?} at {} last {}",
            t.client_order_id.0,
            t.cause,
            t.trigger_price.units(),
            t.last_price.units()
        ),
        Outbound::ListStatus(l) => format!(
            "list {} {:?} reason {}",
            l.client_list_id.0, l.status, l.reason.0
        ),
        Outbound::MmpStatus(s) => format!("mmp {:?}", s.action),
        Outbound::MarketControlDone(d) => format!("market {:?}", d.phase),
        Outbound::CancelRejected(r) => {
            format!(
                "cancel_rejected {} reason {}",
                r.client_order_id.0, r.reason.0
            )
        }
        _ => return None,
    })
}

impl Trader {
    /// Sends `m` and reads to its terminal answer; everything read goes into the
    /// transcript. Returns the answer.
    fn req<M: WireMessage>(&mut self, m: &M, want: RequestRef) -> Outbound {
        let lines = &mut self.lines;
        let answer = self
            .c
            .request(m, want, |o| lines.extend(line(o)))
            .unwrap_or_else(|e| panic!("waiting for {want:?}: {e}; so far {lines:#?}"));
        self.lines.extend(line(&answer));
        answer
    }

    /// The transcript since the last call must be `want` (reads until it is as long).
    fn expect(&mut self, who: &str, want: &[&str]) {
        while self.lines.len() < want.len() {
            match self.c.read_next() {
                Ok((_, m)) => self.lines.extend(line(&m)),
                Err(e) => panic!("{who}: {e}; got {:#?}, want {want:#?}", self.lines),
            }
        }
        assert_eq!(self.lines, want, "{who}'s transcript");
        self.lines.clear();
    }

    fn limit(&mut self, inst: u32, cid: u64, side: Side, price: i64, qty: i64, tif: TimeInForce) {
        let m = NewOrder {
            client_order_id: ClientOrderId(cid),
            price: Price::from_raw(price),
            qty: Qty::from_raw(qty),
            expire_at: Timestamp(0),
            instrument: InstrumentId(inst),
            side,
            order_type: OrderType::Limit,
            tif,
            stp: StpMode::None,
        };
        self.req(&m, RequestRef::NewOrder(ClientOrderId(cid)));
    }

    fn ext(&mut self, inst: u32, leg: ListLeg) {
        let m = NewOrderExt {
            client_order_id: leg.client_order_id,
            price: leg.price,
            qty: leg.qty,
            expire_at: leg.expire_at,
            stop_price: leg.stop_price,
            display_qty: leg.display_qty,
            instrument: InstrumentId(inst),
            trail: leg.trail,
            side: leg.side,
            order_type: leg.order_type,
            tif: leg.tif,
            stp: leg.stp,
            trigger: leg.trigger,
            trail_unit: leg.trail_unit,
            reserved: Pad,
        };
        self.req(&m, RequestRef::NewOrder(leg.client_order_id));
    }

    /// Sends a list; returns its list id (leg 0's exchange id).
    fn list(&mut self, inst: u32, cid: u64, kind: ListKind, legs: [ListLeg; 3]) -> OrderId {
        let m = NewOrderList::new(ClientOrderId(cid), InstrumentId(inst), kind, legs);
        match self.req(&m, RequestRef::NewList(ClientOrderId(cid))) {
            Outbound::ListStatus(l) => l.list_id,
            other => panic!("{other:?}"),
        }
    }

    fn mmp(&mut self, inst: u32, id: u64, action: MmpAction, max_fills: u32) {
        let m = MmpRequest {
            request_id: id,
            window_ns: 60_000_000_000,
            max_qty: Qty::from_raw(100),
            freeze_ns: 0,
            instrument: InstrumentId(inst),
            max_fills,
            action,
            reserved: Pad,
        };
        self.req(&m, RequestRef::Mmp(id));
    }

    fn market(&mut self, inst: u32, id: u64, action: MarketAction) {
        let m = MarketControl {
            request_id: id,
            duration_ns: 0,
            instrument: InstrumentId(inst),
            action,
            auction_kind: AuctionKind::Manual,
            reserved: Pad,
        };
        self.req(&m, RequestRef::Market(id));
    }
}

/// A leg / `NewOrderExt`: a GTC limit order.
fn leg(cid: u64, side: Side, price: i64, qty: i64) -> ListLeg {
    let mut l = ListLeg {
        client_order_id: ClientOrderId(cid),
        price: Price::from_raw(price),
        qty: Qty::from_raw(qty),
        ..ListLeg::UNUSED
    };
    l.side = side;
    l.order_type = OrderType::Limit;
    l.tif = TimeInForce::Gtc;
    l
}

/// A stop-loss limit leg.
fn stop(cid: u64, side: Side, stop_price: i64, price: i64, qty: i64) -> ListLeg {
    ListLeg {
        trigger: TriggerKind::StopLoss,
        stop_price: Price::from_raw(stop_price),
        ..leg(cid, side, price, qty)
    }
}

use Side::{Buy, Sell};
use TimeInForce::{Gtc, Ioc};

/// Gives `inst` a last trade price of `price` (account 2 rests, account 4 takes).
fn print_at(a2: &mut Trader, a4: &mut Trader, inst: u32, cid: u64, price: i64) {
    a2.limit(inst, cid, Buy, price, 1, Gtc);
    a4.limit(inst, cid, Sell, price, 1, Ioc);
    let (maker, taker) = (
        format!("fill {cid} 1@{price} leaves 0 Maker fee 0"),
        format!("fill {cid} 1@{price} leaves 0 Taker fee 0"),
    );
    a2.expect("a2", &[&format!("accepted {cid}"), &maker]);
    a4.expect("a4", &[&format!("accepted {cid}"), &taker]);
}

/// Stops (CME Globex: a sell stop is elected when the market trades at or below its
/// trigger): a stop already reached is refused; one print elects the first stop, whose
/// own trade elects the second, all in one command (the cascade), each reporting
/// `Triggered` under its original id before it trades.
fn stops_and_cascade(t: &mut [Trader; 3]) {
    let [a2, a3, a4] = t;
    print_at(a2, a4, 1, 1, 10_100);
    for (cid, px, q) in [(102, 10_000, 1), (103, 9_900, 1), (104, 9_800, 5)] {
        a2.limit(1, cid, Buy, px, q, Gtc);
    }
    a3.ext(1, stop(301, Sell, 10_000, 9_900, 1));
    a3.ext(1, stop(302, Sell, 9_900, 9_700, 1));
    a3.ext(1, stop(303, Sell, 10_200, 10_000, 1)); // last 10100 is already below
    a4.limit(1, 402, Sell, 10_000, 1, Ioc);
    a4.expect(
        "a4",
        &["accepted 402", "fill 402 1@10000 leaves 0 Taker fee 0"],
    );
    a2.expect(
        "a2",
        &[
            "accepted 102",
            "accepted 103",
            "accepted 104",
            "fill 102 1@10000 leaves 0 Maker fee 0",
            "fill 103 1@9900 leaves 0 Maker fee 0",
            "fill 104 1@9800 leaves 4 Maker fee 0",
        ],
    );
    a3.expect(
        "a3",
        &[
            "accepted 301 WaitingTrigger",
            "accepted 302 WaitingTrigger",
            "rejected 303 reason 33",
            "triggered 301 Price at 10000 last 10000",
            "fill 301 1@9900 leaves 0 Taker fee 0",
            "triggered 302 Price at 9900 last 9900",
            "fill 302 1@9800 leaves 0 Taker fee 0",
        ],
    );
}

/// Trailing stop (CME / Binance trailing stops): a sell trailing 50 ticks starts at
/// 10000 - 50; a print at 10100 raises its trigger to 10050; a print at 10060 does
/// not touch it; a print at 10050 elects it.
fn trailing_stop(t: &mut [Trader; 3]) {
    let [a2, a3, a4] = t;
    print_at(a2, a4, 2, 1, 10_000);
    a3.ext(
        2,
        ListLeg {
            trigger: TriggerKind::StopLoss,
            trail: 50,
            trail_unit: TrailUnit::Ticks,
            ..leg(301, Sell, 9_000, 1)
        },
    );
    a2.limit(2, 201, Sell, 10_100, 1, Gtc);
    a4.limit(2, 401, Buy, 10_100, 1, Ioc);
    a2.limit(2, 202, Buy, 10_060, 1, Gtc);
    a4.limit(2, 402, Sell, 10_060, 1, Ioc);
    a2.limit(2, 203, Buy, 10_040, 1, Gtc);
    a2.limit(2, 204, Buy, 10_050, 1, Gtc);
    a4.limit(2, 403, Sell, 10_050, 1, Ioc);
    a3.expect(
        "a3",
        &[
            "accepted 301 WaitingTrigger",
            "triggered 301 Price at 10050 last 10050",
            "fill 301 1@10040 leaves 0 Taker fee 0",
        ],
    );
    a2.expect(
        "a2",
        &[
            "accepted 201",
            "fill 201 1@10100 leaves 0 Maker fee 0",
            "accepted 202",
            "fill 202 1@10060 leaves 0 Maker fee 0",
            "accepted 203",
            "accepted 204",
            "fill 204 1@10050 leaves 0 Maker fee 0",
            "fill 203 1@10040 leaves 0 Maker fee 0",
        ],
    );
    a4.expect(
        "a4",
        &[
            "accepted 401",
            "fill 401 1@10100 leaves 0 Taker fee 0",
            "accepted 402",
            "fill 402 1@10060 leaves 0 Taker fee 0",
            "accepted 403",
            "fill 403 1@10050 leaves 0 Taker fee 0",
        ],
    );
}

/// Iceberg (CME Globex / Binance: each refill of the displayed quantity goes to the
/// back of the queue): the iceberg's refill trades after the order that joined the
/// level behind its first slice.
fn iceberg_refill_loses_priority(t: &mut [Trader; 3]) {
    let [a2, a3, a4] = t;
    a2.ext(
        3,
        ListLeg {
            display_qty: Qty::from_raw(2),
            ..leg(201, Buy, 10_000, 5)
        },
    );
    a3.limit(3, 301, Buy, 10_000, 2, Gtc);
    a4.limit(3, 401, Sell, 10_000, 2, Ioc);
    a4.limit(3, 402, Sell, 10_000, 3, Ioc);
    a2.expect(
        "a2",
        &[
            "accepted 201 Active",
            "fill 201 2@10000 leaves 3 Maker fee 0",
            "fill 201 1@10000 leaves 2 Maker fee 0",
        ],
    );
    a3.expect(
        "a3",
        &["accepted 301", "fill 301 2@10000 leaves 0 Maker fee 0"],
    );
    a4.expect(
        "a4",
        &[
            "accepted 401",
            "fill 401 2@10000 leaves 0 Taker fee 0",
            "accepted 402",
            "fill 402 2@10000 leaves 1 Taker fee 0",
            "fill 402 1@10000 leaves 0 Taker fee 0",
        ],
    );
}

/// Order lists (Binance spot OCO / OTO): the OCO's limit leg fills and its stop leg is
/// cancelled in the same command; the OTO's pending leg is released when the working
/// leg fills; `CancelList` takes every leg at once.
fn order_lists(t: &mut [Trader; 3]) {
    let [a2, a3, a4] = t;
    print_at(a2, a4, 4, 1, 10_000);
    let u = ListLeg::UNUSED;
    a3.list(
        4,
        300,
        ListKind::Oco,
        [
            leg(301, Sell, 10_500, 1),
            stop(302, Sell, 9_500, 9_400, 1),
            u,
        ],
    );
    a4.limit(4, 401, Buy, 10_500, 1, Ioc);
    a3.list(
        4,
        310,
        ListKind::Oto,
        [leg(311, Buy, 9_900, 1), leg(312, Sell, 10_200, 1), u],
    );
    a4.limit(4, 402, Sell, 9_900, 1, Ioc);
    a4.limit(4, 403, Buy, 10_200, 1, Ioc);
    let id = a3.list(
        4,
        320,
        ListKind::Oco,
        [
            leg(321, Sell, 10_600, 1),
            stop(322, Sell, 9_600, 9_500, 1),
            u,
        ],
    );
    a3.req(
        &CancelList {
            client_order_id: ClientOrderId(329),
            list_id: id,
            instrument: InstrumentId(4),
        },
        RequestRef::CancelList(ClientOrderId(329)),
    );
    a3.expect(
        "a3",
        &[
            "list 300 Accepted reason 0",
            "accepted 301 Active",
            "accepted 302 WaitingTrigger",
            "fill 301 1@10500 leaves 0 Maker fee 0",
            "cancelled 302 qty 1 reason 7",
            "list 300 Done reason 0",
            "list 310 Accepted reason 0",
            "accepted 311 Active",
            "accepted 312 PendingRelease",
            "fill 311 1@9900 leaves 0 Maker fee 0",
            // The OTO is done when its working leg fills; the released leg joins the
            // activation queue and activates after (docs/orders.md, the cascade).
            "list 310 Done reason 0",
            "triggered 312 Released at 0 last 9900",
            "fill 312 1@10200 leaves 0 Maker fee 0",
            "list 320 Accepted reason 0",
            "accepted 321 Active",
            "accepted 322 WaitingTrigger",
            "cancelled 321 qty 1 reason 7",
            "cancelled 322 qty 1 reason 7",
            "list 320 Done reason 0",
        ],
    );
    a4.expect(
        "a4",
        &[
            "accepted 401",
            "fill 401 1@10500 leaves 0 Taker fee 0",
            "accepted 402",
            "fill 402 1@9900 leaves 0 Taker fee 0",
            "accepted 403",
            "fill 403 1@10200 leaves 0 Taker fee 0",
        ],
    );
}

/// Market-maker protection (Deribit MMP): two maker fills reach the limit; the rest of
/// the account's quotes on the instrument are cancelled after the aggressor finishes,
/// new quotes are refused until the account resets.
fn market_maker_protection(t: &mut [Trader; 3]) {
    let [a2, _, a4] = t;
    a2.mmp(5, 1, MmpAction::Set, 2);
    for (cid, px) in [(201, 10_000), (202, 9_990), (203, 9_980)] {
        a2.limit(5, cid, Buy, px, 1, Gtc);
    }
    a4.limit(5, 401, Sell, 9_990, 2, Ioc);
    a4.expect(
        "a4",
        &[
            "accepted 401",
            "fill 401 1@10000 leaves 1 Taker fee 0",
            "fill 401 1@9990 leaves 0 Taker fee 0",
        ],
    );
    a2.expect(
        "a2",
        &[
            "mmp Set",
            "accepted 201",
            "accepted 202",
            "accepted 203",
            "fill 201 1@10000 leaves 0 Maker fee 0",
            "fill 202 1@9990 leaves 0 Maker fee 0",
            // The trip is reported first, then the quotes it cancels.
            "mmp Triggered",
            "cancelled 203 qty 1 reason 8",
        ],
    );
    a2.limit(5, 204, Buy, 9_970, 1, Gtc);
    a2.mmp(5, 2, MmpAction::Reset, 2);
    a2.limit(5, 205, Buy, 9_970, 1, Gtc);
    a2.expect(
        "a2",
        &["rejected 204 reason 36", "mmp Reset", "accepted 205"],
    );
}

/// Fees (Binance-style maker rebate, taker fee, per fill in the quote asset): maker
/// -100 ppm, taker 2,000 ppm of price × qty, truncated toward zero.
fn fees_and_rebates(t: &mut [Trader; 3]) {
    let [a2, _, a4] = t;
    a2.limit(6, 201, Buy, 10_000, 10, Gtc);
    a4.limit(6, 401, Sell, 10_000, 10, Ioc);
    a2.limit(6, 202, Buy, 9_999, 1, Gtc);
    a4.limit(6, 402, Sell, 9_999, 1, Ioc);
    // 100,000 × -100 / 1e6 = -10 and × 2,000 / 1e6 = 200; 9,999 × -100 / 1e6 = -0.9999
    // → 0 and × 2,000 / 1e6 = 19.998 → 19.
    a2.expect(
        "a2",
        &[
            "accepted 201",
            "fill 201 10@10000 leaves 0 Maker fee -10",
            "accepted 202",
            "fill 202 1@9999 leaves 0 Maker fee 0",
        ],
    );
    a4.expect(
        "a4",
        &[
            "accepted 401",
            "fill 401 10@10000 leaves 0 Taker fee 200",
            "accepted 402",
            "fill 402 1@9999 leaves 0 Taker fee 19",
        ],
    );
}

/// Call auction (Xetra / Euronext uncross): bids 3 @ 101.00 and 2 @ 100.00, asks 2 @
/// 99.00, 2 @ 100.50 and 1 @ 102.00. Executable volume: 2 at 99.00..100.49, 3 at
/// 100.50..101.00 (surplus 1 each), 0 above: the maximum, 3, spans 100.50..101.00 with
/// equal surplus, so the price closest to the reference (100.00) wins: 100.50. IOC
/// orders are refused during the call.
fn call_auction(t: &mut [Trader; 3], admin: &mut Trader) {
    let [a2, a3, a4] = t;
    admin.market(7, 1, MarketAction::StartAuction);
    a2.limit(7, 201, Buy, 10_100, 3, Gtc);
    a2.limit(7, 202, Buy, 10_000, 2, Gtc);
    a3.limit(7, 301, Sell, 9_900, 2, Gtc);
    a3.limit(7, 302, Sell, 10_050, 2, Gtc);
    a3.limit(7, 303, Sell, 10_200, 1, Gtc);
    a4.limit(7, 401, Sell, 9_900, 1, Ioc);
    admin.market(7, 2, MarketAction::Uncross);
    admin.expect("admin", &["market Auction(Manual)", "market Continuous"]);
    a4.expect("a4", &["rejected 401 reason 37"]);
    a2.expect(
        "a2",
        &[
            "accepted 201",
            "accepted 202",
            "fill 201 2@10050 leaves 1 Auction fee 0",
            "fill 201 1@10050 leaves 0 Auction fee 0",
        ],
    );
    a3.expect(
        "a3",
        &[
            "accepted 301",
            "accepted 302",
            "accepted 303",
            "fill 301 2@10050 leaves 0 Auction fee 0",
            "fill 302 1@10050 leaves 1 Auction fee 0",
        ],
    );
}

/// Volatility interruption (Xetra): with a 1% band around the last price 100.00, a buy
/// that would print at 102.00 does not trade; the instrument goes into a 300 ms
/// volatility auction, the buy rests, and the auction's end uncrosses it at 102.00.
fn volatility_halt(t: &mut [Trader; 3]) {
    let [a2, _, a4] = t;
    print_at(a2, a4, 8, 1, 10_000);
    a2.limit(8, 201, Sell, 10_200, 1, Gtc);
    a4.limit(8, 401, Buy, 10_200, 1, Gtc);
    a4.expect(
        "a4",
        &["accepted 401", "fill 401 1@10200 leaves 0 Auction fee 0"],
    );
    a2.expect(
        "a2",
        &["accepted 201", "fill 201 1@10200 leaves 0 Auction fee 0"],
    );
}

fn run(config: &'static str) {
    with_timeout(120, move || {
        let venue = Venue::start(config);
        let mut t = [venue.login(2), venue.login(3), venue.login(4)];
        let mut admin = venue.login(ADMIN);
        stops_and_cascade(&mut t);
        trailing_stop(&mut t);
        iceberg_refill_loses_priority(&mut t);
        order_lists(&mut t);
        market_maker_protection(&mut t);
        fees_and_rebates(&mut t);
        call_auction(&mut t, &mut admin);
        volatility_halt(&mut t);
    });
}

#[test]
fn golden_single_node_in_memory() {
    run("memory");
}

#[test]
fn golden_single_node_journaled() {
    run("journaled");
}

#[test]
fn golden_batch_mode() {
    run("batch");
}

#[test]
fn golden_three_node_cluster() {
    run("cluster");
}

/// `peregrine order` (the CLI) against a running venue: a stop placed from the command
/// line is triggered by other accounts' trade and the CLI prints `TRIGGERED` and the
/// fill in the instrument's decimals; then an OCO list from the CLI, whose limit leg
/// fills, printing the fill, the cancel of its sibling and the list's end.
#[test]
fn cli_places_a_stop_and_an_oco() {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    use std::sync::mpsc;
    with_timeout(120, || {
        let venue = Venue::start("memory");
        let Venue::Single(ex, _) = &venue else {
            unreachable!()
        };
        let dir = tempfile::tempdir().unwrap();
        let keys = dir.path().join("keys.toml");
        support::write_key_file(&keys, &[3]);
        // Runs `peregrine order ... ARGS`; lines of its stdout come on the channel.
        let cli = |args: &[&str]| {
            let mut child = Command::new(env!("CARGO_BIN_EXE_peregrine"))
                .arg("order")
                .arg("--config")
                .arg(&ex.config)
                .args(["--addr", &ex.addr.to_string(), "--account", "3", "--keys"])
                .arg(&keys)
                .args(["--instrument", "G1-USD", "--wait", "60"])
                .args(args)
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let out = child.stdout.take().unwrap();
            let (tx, rx) = mpsc::channel::<String>();
            std::thread::spawn(move || {
                for l in std::io::BufReader::new(out).lines() {
                    let Ok(l) = l else { break };
                    if tx.send(l).is_err() {
                        break;
                    }
                }
            });
            (child, rx)
        };
        // Reads lines until one starts with each of `want`, in order; returns them all.
        let until = |rx: &mpsc::Receiver<String>, want: &[&str]| {
            let mut seen = Vec::new();
            for w in want {
                loop {
                    let l = rx
                        .recv_timeout(Duration::from_secs(30))
                        .unwrap_or_else(|e| panic!("waiting for {w:?}: {e}; got {seen:#?}"));
                    seen.push(l.clone());
                    if l.starts_with(w) {
                        break;
                    }
                }
            }
            seen
        };
        let mut a2 = venue.login(2);
        let mut a4 = venue.login(4);
        print_at(&mut a2, &mut a4, 1, 1, 10_100);
        a2.limit(1, 102, Buy, 10_000, 1, Gtc);
        a2.limit(1, 103, Buy, 9_900, 1, Gtc);

        let (mut child, rx) = cli(&[
            "new", "--cid", "301", "--side", "sell", "--qty", "1", "--stop", "100.00", "--price",
            "99.00",
        ]);
        let ack = until(&rx, &["ACK cid 301"]);
        assert!(ack[0].contains("StopLoss stop 100.00"), "{ack:?}");
        a4.limit(1, 402, Sell, 10_000, 1, Ioc); // prints 100.00: elects the stop
        let seen = until(&rx, &["TRIGGERED cid 301", "FILL cid 301"]);
        let n = seen.len();
        assert!(
            seen[n - 2].contains("Price trigger 100.00 last 100.00 at 20"),
            "{seen:#?}"
        );
        assert!(
            seen[n - 1].contains("Sell 1@99.00 leaves 0 Taker fee 0"),
            "{seen:#?}"
        );
        assert!(
            child.wait().unwrap().success(),
            "the CLI exits once its order is done"
        );

        let (mut child, rx) = cli(&[
            "list",
            "--kind",
            "oco",
            "--cid",
            "500",
            "--leg",
            "--cid 501 --side sell --qty 1 --price 102.00",
            "--leg",
            "--cid 502 --side sell --qty 1 --stop 98.00 --price 97.00",
        ]);
        until(&rx, &["LIST", "ACK cid 501", "ACK cid 502"]);
        a2.limit(1, 104, Buy, 10_200, 1, Ioc);
        let seen = until(&rx, &["FILL cid 501"]);
        assert!(
            seen.last().unwrap().contains("1@102.00 leaves 0 Maker"),
            "{seen:#?}"
        );
        let mut rest = seen;
        rest.extend(rx.iter()); // to the CLI's exit
        assert!(child.wait().unwrap().success());
        assert!(
            rest.iter().any(|l| l.starts_with("CANCELLED cid 502")),
            "the other leg is cancelled: {rest:#?}"
        );
        assert!(
            rest.iter()
                .any(|l| l.starts_with("LIST") && l.contains("Done")),
            "{rest:#?}"
        );
    });
}
