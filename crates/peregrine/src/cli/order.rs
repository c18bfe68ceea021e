//! `peregrine order new|list|cancel|cancel-list`: a trader's order entry from the
//! command line over one native session (`peregrine_client::order_entry`). Every
//! order type of `docs/orders.md`: limit, market, post-only; GTC, IOC, FOK, GTD; stop
//! and take-profit (fixed or trailing in ticks or basis points), icebergs, and the
//! OCO / OTO / OTOCO lists. Prices and quantities are decimal text in the
//! instrument's decimals; the reports are printed the same way, with the exchange's
//! time as `peregrine md` prints it. `--wait` keeps the session open and prints what
//! follows (a stop's `TRIGGERED`, later fills) until every order the command entered
//! is done or the time is up.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Parser;
use peregrine_client::order_entry::Connection;
use peregrine_client::ClientError;
use peregrine_exchange::Config;
use peregrine_types::{
    AccountId, ClientOrderId, InstrumentSpec, ListKind, OrderId, OrderType, Price, Qty, Side,
    StpMode, TimeInForce, Timestamp, TrailUnit, TriggerKind, Utc,
};
use peregrine_wire::field::{ListLeg, Pad};
use peregrine_wire::v2::client::LoginParams;
use peregrine_wire::v2::venue::{CancelList, NewOrderExt, NewOrderList};
use peregrine_wire::v2::{Cancel, Outbound, RequestRef};

/// `peregrine order` arguments.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct OrderArgs {
    /// The exchange config: instrument symbols, decimals, and the default address.
    #[arg(long, default_value = "exchange.toml")]
    pub config: PathBuf,
    /// Order-entry address(es); default: the config's (a cluster's nodes: the leader
    /// is found).
    #[arg(long, value_delimiter = ',')]
    pub addr: Vec<SocketAddr>,
    /// The account to log in as.
    #[arg(long)]
    pub account: u32,
    /// The key file holding that account's key (`peregrine keygen --keys-out`).
    #[arg(long, default_value = "data/keys.toml")]
    pub keys: PathBuf,
    /// Instrument symbol or id.
    #[arg(long)]
    pub instrument: String,
    /// Keep printing reports for up to this many seconds, until every order the
    /// command entered is done (filled, cancelled or rejected).
    #[arg(long, default_value_t = 0.0)]
    pub wait: f64,
    /// What to send.
    #[command(subcommand)]
    pub action: OrderAction,
}

/// A request.
#[derive(Debug, Clone, clap::Subcommand)]
pub(crate) enum OrderAction {
    /// One order (any type but a list).
    New(LegArgs),
    /// An order list: `--kind oco|oto|otoco` and two or three `--leg "..."`, each leg
    /// written with the flags of `order new` (e.g. `--leg "--side sell --qty 1 --price 101.00"`).
    List(ListArgs),
    /// Cancel an order by its exchange id.
    Cancel(CancelArgs),
    /// Cancel a live order list by its list id.
    CancelList(CancelListArgs),
}

/// One order (or one leg of a list).
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct LegArgs {
    /// Client order id (default: from the clock).
    #[arg(long)]
    pub cid: Option<u64>,
    /// buy or sell.
    #[arg(long)]
    pub side: String,
    /// Quantity, decimal text.
    #[arg(long)]
    pub qty: String,
    /// Limit price (a market order's protection price: optional).
    #[arg(long)]
    pub price: Option<String>,
    /// limit, market or post-only.
    #[arg(long = "type", default_value = "limit")]
    pub order_type: String,
    /// gtc, ioc, fok or gtd (default: gtc, ioc for a market order).
    #[arg(long)]
    pub tif: Option<String>,
    /// GTD: expire this many seconds from now.
    #[arg(long)]
    pub expire_in: Option<f64>,
    /// Stop-loss trigger price (a buy when the last trade reaches it or above, a
    /// sell at it or below).
    #[arg(long, conflicts_with = "take_profit")]
    pub stop: Option<String>,
    /// Take-profit trigger price.
    #[arg(long)]
    pub take_profit: Option<String>,
    /// Trailing stop-loss offset (in `--trail-unit`s) instead of a fixed `--stop`.
    #[arg(long, conflicts_with_all = ["stop", "take_profit"])]
    pub trail: Option<u32>,
    /// ticks or bps.
    #[arg(long, default_value = "ticks")]
    pub trail_unit: String,
    /// Iceberg: the quantity shown (refilled from the rest, losing priority).
    #[arg(long)]
    pub display: Option<String>,
}

/// `order list` arguments.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ListArgs {
    /// oco, oto or otoco.
    #[arg(long)]
    pub kind: String,
    /// Client list id (default: from the clock).
    #[arg(long)]
    pub cid: Option<u64>,
    /// A leg, in `order new`'s flags (2 for OCO and OTO, 3 for OTOCO).
    #[arg(long, allow_hyphen_values = true, required = true)]
    pub leg: Vec<String>,
}

/// `order cancel` arguments.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct CancelArgs {
    /// The order's exchange id (from its ACK).
    #[arg(long)]
    pub order_id: u64,
}

/// `order cancel-list` arguments.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct CancelListArgs {
    /// The list's id (from its LIST line).
    #[arg(long)]
    pub list_id: u64,
}

/// A leg's flags parsed from one `--leg` string.
#[derive(Debug, Parser)]
#[command(no_binary_name = true)]
struct LegCli {
    #[command(flatten)]
    leg: LegArgs,
}

/// A client id from the clock (nanoseconds), distinct per call.
fn fresh_cid(n: u64) -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    now.wrapping_add(n)
}

fn parse_side(s: &str) -> anyhow::Result<Side> {
    Ok(match s.to_ascii_lowercase().as_str() {
        "buy" | "b" => Side::Buy,
        "sell" | "s" => Side::Sell,
        _ => bail!("--side {s:?}: buy or sell"),
    })
}

/// The wire leg of `a` on `spec`.
fn to_leg(spec: &InstrumentSpec, a: &LegArgs, n: u64) -> anyhow::Result<ListLeg> {
    let price = |t: &str| {
        spec.parse_price(t)
            .map_err(|e| anyhow::anyhow!("price {t:?}: {e:?}"))
    };
    let order_type = match a.order_type.as_str() {
        "limit" => OrderType::Limit,
        "market" => OrderType::Market,
        "post-only" | "post_only" => OrderType::PostOnly,
        o => bail!("--type {o:?}: limit, market or post-only"),
    };
    let tif = match a.tif.as_deref() {
        None if order_type == OrderType::Market => TimeInForce::Ioc,
        None | Some("gtc") => TimeInForce::Gtc,
        Some("ioc") => TimeInForce::Ioc,
        Some("fok") => TimeInForce::Fok,
        Some("gtd") => TimeInForce::Gtd,
        Some(t) => bail!("--tif {t:?}: gtc, ioc, fok or gtd"),
    };
    let expire_at = match (tif, a.expire_in) {
        (TimeInForce::Gtd, Some(s)) => {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?;
            Timestamp((now + Duration::from_secs_f64(s)).as_nanos() as u64)
        }
        (TimeInForce::Gtd, None) => bail!("--tif gtd needs --expire-in SECONDS"),
        (_, Some(_)) => bail!("--expire-in is for --tif gtd"),
        _ => Timestamp(0),
    };
    let mut leg = ListLeg {
        client_order_id: ClientOrderId(a.cid.unwrap_or_else(|| fresh_cid(n))),
        price: match &a.price {
            Some(t) => price(t)?,
            None if order_type == OrderType::Market => Price::from_raw(0),
            None => bail!("--price is needed for a {} order", a.order_type),
        },
        qty: spec
            .parse_qty(&a.qty)
            .map_err(|e| anyhow::anyhow!("--qty {:?}: {e:?}", a.qty))?,
        expire_at,
        ..ListLeg::UNUSED
    };
    leg.side = parse_side(&a.side)?;
    leg.order_type = order_type;
    leg.tif = tif;
    leg.stp = StpMode::None;
    if let Some(t) = &a.stop {
        leg.trigger = TriggerKind::StopLoss;
        leg.stop_price = price(t)?;
    }
    if let Some(t) = &a.take_profit {
        leg.trigger = TriggerKind::TakeProfit;
        leg.stop_price = price(t)?;
    }
    if let Some(off) = a.trail {
        leg.trigger = TriggerKind::StopLoss;
        leg.trail = off;
        leg.trail_unit = match a.trail_unit.as_str() {
            "ticks" => TrailUnit::Ticks,
            "bps" => TrailUnit::Bps,
            u => bail!("--trail-unit {u:?}: ticks or bps"),
        };
    }
    if let Some(d) = &a.display {
        leg.display_qty = spec
            .parse_qty(d)
            .map_err(|e| anyhow::anyhow!("--display {d:?}: {e:?}"))?;
    }
    Ok(leg)
}

fn ext(instrument: peregrine_types::InstrumentId, leg: ListLeg) -> NewOrderExt {
    NewOrderExt {
        client_order_id: leg.client_order_id,
        price: leg.price,
        qty: leg.qty,
        expire_at: leg.expire_at,
        stop_price: leg.stop_price,
        display_qty: leg.display_qty,
        instrument,
        trail: leg.trail,
        side: leg.side,
        order_type: leg.order_type,
        tif: leg.tif,
        stp: leg.stp,
        trigger: leg.trigger,
        trail_unit: leg.trail_unit,
        reserved: Pad,
    }
}

/// Runs the subcommand.
pub(crate) fn run(args: OrderArgs) -> anyhow::Result<()> {
    let config = Config::load(&args.config)?;
    let spec = config
        .instruments
        .iter()
        .find(|s| s.symbol == args.instrument || s.id.0.to_string() == args.instrument)
        .with_context(|| format!("no instrument {} in the config", args.instrument))?
        .clone();
    let account = AccountId(args.account);
    let key = peregrine_client::keys::KeyFile::key_of(&args.keys, account)?;
    let addrs = if args.addr.is_empty() {
        config.order_entry_addresses()
    } else {
        args.addr.clone()
    };
    let (mut c, _, _) = Connection::connect_any(
        &addrs,
        LoginParams::trading(account, 0),
        key,
        Duration::from_secs(10),
        Duration::from_secs(30),
    )?;
    let mut resumed = 0u64;
    c.recover(|_| resumed += 1)?;
    let p = Printer {
        spec: spec.clone(),
        assets: config.assets.iter().map(|a| (a.id, a.decimals)).collect(),
    };
    // What the command entered and is not done: `(0, client order id)` of orders,
    // `(1, client list id)` of a list (done at its `LIST ... Done`).
    let mut open: BTreeSet<(u8, u64)> = BTreeSet::new();
    let on = |m: &Outbound, open: &mut BTreeSet<(u8, u64)>| {
        p.track(m, open);
        if let Some(line) = p.line(m) {
            println!("{line}");
        }
    };
    let answer = match &args.action {
        OrderAction::New(a) => {
            let leg = to_leg(&spec, a, 0)?;
            open.insert((0, leg.client_order_id.0));
            let m = ext(spec.id, leg);
            c.request(&m, RequestRef::NewOrder(leg.client_order_id), |o| {
                on(o, &mut open)
            })?
        }
        OrderAction::List(l) => {
            let kind = match l.kind.as_str() {
                "oco" => ListKind::Oco,
                "oto" => ListKind::Oto,
                "otoco" => ListKind::Otoco,
                k => bail!("--kind {k:?}: oco, oto or otoco"),
            };
            let want = if kind == ListKind::Otoco { 3 } else { 2 };
            if l.leg.len() != want {
                bail!("a {} list has {want} legs, got {}", l.kind, l.leg.len());
            }
            let mut legs = [ListLeg::UNUSED; 3];
            for (i, text) in l.leg.iter().enumerate() {
                let parsed = LegCli::try_parse_from(text.split_whitespace())
                    .with_context(|| format!("--leg {text:?}"))?;
                legs[i] = to_leg(&spec, &parsed.leg, i as u64 + 1)?;
                open.insert((0, legs[i].client_order_id.0));
            }
            let cid = ClientOrderId(l.cid.unwrap_or_else(|| fresh_cid(0)));
            open.insert((1, cid.0));
            let m = NewOrderList::new(cid, spec.id, kind, legs);
            c.request(&m, RequestRef::NewList(cid), |o| on(o, &mut open))?
        }
        OrderAction::Cancel(x) => {
            let cid = ClientOrderId(fresh_cid(0));
            let m = Cancel {
                client_order_id: cid,
                order_id: OrderId(x.order_id),
                instrument: spec.id,
            };
            c.request(&m, RequestRef::Cancel(cid), |o| on(o, &mut open))?
        }
        OrderAction::CancelList(x) => {
            let cid = ClientOrderId(fresh_cid(0));
            let m = CancelList {
                client_order_id: cid,
                list_id: OrderId(x.list_id),
                instrument: spec.id,
            };
            c.request(&m, RequestRef::CancelList(cid), |o| on(o, &mut open))?
        }
    };
    on(&answer, &mut open);
    let rejected = matches!(answer, Outbound::Rejected(_) | Outbound::CancelRejected(_))
        || matches!(&answer, Outbound::ListStatus(l) if l.status == peregrine_wire::field::ListState::Rejected);
    let end = Instant::now() + Duration::from_secs_f64(args.wait.max(0.0));
    c.socket()
        .set_read_timeout(Some(Duration::from_millis(200)))?;
    while !open.is_empty() && Instant::now() < end {
        match c.read_next() {
            Ok((_, m)) => on(&m, &mut open),
            Err(ClientError::Io { source, .. })
                if matches!(
                    source.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(e.into()),
        }
    }
    if rejected {
        bail!("refused");
    }
    Ok(())
}

/// Report lines in the instrument's decimals, with the exchange's time (UTC).
struct Printer {
    spec: InstrumentSpec,
    /// Every configured asset's id and decimals (a fee is in its asset's units).
    assets: Vec<(u32, u32)>,
}

impl Printer {
    fn px(&self, p: Price) -> String {
        self.spec.format_price(p)
    }

    fn fee(&self, asset: u32, units: i64) -> String {
        match self.assets.iter().find(|(id, _)| *id == asset) {
            Some(&(_, d)) => peregrine_types::decimal::format_scaled(units, d),
            None => units.to_string(),
        }
    }

    fn q(&self, q: Qty) -> String {
        self.spec.format_qty(q)
    }

    /// Forgets the orders that are done.
    fn track(&self, m: &Outbound, open: &mut BTreeSet<(u8, u64)>) {
        match m {
            Outbound::Fill(f) if f.leaves_qty.lots() == 0 => {
                open.remove(&(0, f.client_order_id.0));
            }
            Outbound::Cancelled(c) => {
                open.remove(&(0, c.client_order_id.0));
            }
            Outbound::Rejected(r) => {
                open.remove(&(0, r.client_order_id.0));
            }
            Outbound::ListStatus(l) if l.status == peregrine_wire::field::ListState::Rejected => {
                open.clear();
            }
            Outbound::ListStatus(l) if l.status == peregrine_wire::field::ListState::Done => {
                open.remove(&(1, l.client_list_id.0));
            }
            Outbound::CancelRejected(_) => open.clear(),
            _ => {}
        }
    }

    fn line(&self, m: &Outbound) -> Option<String> {
        Some(match m {
            Outbound::Accepted(a) => format!(
                "ACK cid {} order {} {:?} {}@{} {:?} {:?} at {}",
                a.client_order_id.0,
                a.order_id.0,
                a.side,
                self.q(a.qty),
                self.px(a.price),
                a.order_type,
                a.tif,
                Utc(a.engine_time.0)
            ),
            Outbound::AcceptedExt(a) => format!(
                "ACK cid {} order {} {:?} {}@{} {:?} {:?} {:?} stop {} trail {} {:?} display {} list {} at {}",
                a.client_order_id.0,
                a.order_id.0,
                a.side,
                self.q(a.qty),
                self.px(a.price),
                a.order_type,
                a.tif,
                a.trigger,
                self.px(a.stop_price),
                a.trail,
                a.trail_unit,
                self.q(a.display_qty),
                a.list_id.0,
                Utc(a.engine_time.0)
            ),
            Outbound::Rejected(r) => format!(
                "REJECTED cid {} reason {} at {}",
                r.client_order_id.0,
                r.reason.0,
                Utc(r.engine_time.0)
            ),
            Outbound::Triggered(t) => format!(
                "TRIGGERED cid {} order {} {:?} trigger {} last {} at {}",
                t.client_order_id.0,
                t.order_id.0,
                t.cause,
                self.px(t.trigger_price),
                self.px(t.last_price),
                Utc(t.engine_time.0)
            ),
            Outbound::Fill(f) => format!(
                "FILL cid {} order {} {:?} {}@{} leaves {} {:?} fee {} (asset {}) trade {} at {}",
                f.client_order_id.0,
                f.order_id.0,
                f.side,
                self.q(f.qty),
                self.px(f.price),
                self.q(f.leaves_qty),
                f.role,
                self.fee(f.fee_asset, f.fee),
                f.fee_asset,
                f.trade_id,
                Utc(f.engine_time.0)
            ),
            Outbound::Cancelled(c) => format!(
                "CANCELLED cid {} order {} qty {} reason {} at {}",
                c.client_order_id.0,
                c.order_id.0,
                self.q(c.cancelled_qty),
                c.reason.0,
                Utc(c.engine_time.0)
            ),
            Outbound::CancelRejected(r) => format!(
                "CANCEL_REJECTED order {} reason {} at {}",
                r.order_id.0,
                r.reason.0,
                Utc(r.engine_time.0)
            ),
            Outbound::ListStatus(l) => format!(
                "LIST {} cid {} {:?} {:?} leg {} reason {} at {}",
                l.list_id.0,
                l.client_list_id.0,
                l.kind,
                l.status,
                l.leg,
                l.reason.0,
                Utc(l.engine_time.0)
            ),
            _ => return None,
        })
    }
}
