//! What `peregrine up` prints: the live progress line, the end-of-run summary and the
//! kill-switch demonstration, all rendered from [`EngineSummary`] values.

use std::fmt::Write;

use peregrine_engine::summary::EngineSummary;

use peregrine_engine::units::InstrumentInfo;
pub(super) use peregrine_engine::units::{fmt_count, fmt_ns};

/// One progress line: the numbers of [`rate_parts`] after the run's elapsed time and
/// the window they cover (`dt_s`, the time since `prev`; about a second).
pub(super) fn progress_line(
    elapsed_s: f64,
    now: &EngineSummary,
    prev: Option<&EngineSummary>,
    dt_s: f64,
) -> String {
    let window = if (dt_s - 1.0).abs() < 0.05 || prev.is_none() {
        "1 s".to_owned()
    } else {
        format!("{dt_s:.1} s")
    };
    format!(
        "[{elapsed_s:>6.1} s] last {window}: {}",
        rate_parts(now, prev, dt_s).join("  ")
    )
}

/// The live numbers, each over the window since `prev` (`dt_s` seconds earlier) and
/// shown per second: orders, replaces, fills per venue, rejects, open orders, and the
/// round trip and market-data latency of the engine's last whole 1-second window.
pub(super) fn rate_parts(
    now: &EngineSummary,
    prev: Option<&EngineSummary>,
    dt_s: f64,
) -> Vec<String> {
    let per_s = |f: &dyn Fn(&EngineSummary) -> u64| -> String {
        match prev {
            Some(p) if dt_s > 0.0 => {
                format!("{:.0}", f(now).saturating_sub(f(p)) as f64 / dt_s)
            }
            _ => "-".to_owned(),
        }
    };
    let fills: Vec<String> = now
        .venues
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let n = per_s(&|s: &EngineSummary| s.venues.get(i).map_or(0, |v| v.tally.fills));
            format!("{} {n}", v.name)
        })
        .collect();
    let window = |name: &str| {
        now.window
            .iter()
            .find(|r| r.name.starts_with(name))
            .filter(|r| r.n > 0)
    };
    let rt = window("round trip").map_or("rt -".to_owned(), |r| {
        format!("rt p50 {} p99 {}", fmt_ns(r.p50), fmt_ns(r.p99))
    });
    let md = window("md venue").map_or("md -".to_owned(), |r| format!("md p50 {}", fmt_ns(r.p50)));
    vec![
        format!(
            "orders {}/s (replaces {}/s)",
            per_s(&|s: &EngineSummary| s.orders),
            per_s(&|s: &EngineSummary| s.replace_requests)
        ),
        format!("fills/s {}", fills.join(", ")),
        format!("rejects {}/s", per_s(&|s: &EngineSummary| s.rejects)),
        format!("open {}", now.open_orders),
        rt,
        md,
    ]
}

/// The latency table: the 7 segments, the round trip and the two derived rows.
pub(super) fn latency_table(s: &EngineSummary) -> String {
    let mut out = format!(
        "{:<24}{:>9}{:>11}{:>11}{:>11}{:>11}\n",
        "latency", "n", "p50", "p99", "p99.9", "max"
    );
    for r in &s.latency {
        let _ = writeln!(
            out,
            "{:<24}{:>9}{:>11}{:>11}{:>11}{:>11}",
            r.name,
            r.n,
            fmt_ns(r.p50),
            fmt_ns(r.p99),
            fmt_ns(r.p999),
            fmt_ns(r.max)
        );
    }
    out
}

/// Positions and PnL per strategy (every strategy, with or without fills).
/// `venue_of` names each strategy's venue.
pub(super) fn positions_table(s: &EngineSummary, venue_of: &dyn Fn(&str) -> String) -> String {
    let mut out = format!(
        "{:<11}{:>6}{:>7}{:>6}{:>7}{:>8}{:>9}{:>14}{:>14}{:>14}\n",
        "strategy",
        "venue",
        "state",
        "open",
        "net",
        "fills",
        "avg",
        "realized",
        "unrealized",
        "total"
    );
    for st in &s.strategies {
        let rows: Vec<_> = s
            .positions
            .iter()
            .filter(|p| p.strategy == st.name)
            .collect();
        let head = format!(
            "{:<11}{:>6}{:>7}{:>6}",
            st.name,
            venue_of(&st.name),
            st.state,
            st.open
        );
        if rows.is_empty() {
            let _ = writeln!(
                out,
                "{head}{:>7}{:>8}{:>9}{:>14}{:>14}{:>14}",
                0, 0, "-", 0, 0, 0
            );
        }
        for p in rows {
            let info = InstrumentInfo::find(&s.instruments, p.instrument);
            let avg = p.avg.map_or_else(|| "-".to_owned(), |a| info.price(a));
            let _ = writeln!(
                out,
                "{head}{:>7}{:>8}{avg:>9}{:>14}{:>14}{:>14}",
                info.qty(i128::from(p.net)),
                p.fills,
                info.money(p.realized),
                info.money(p.unrealized),
                info.money(p.total)
            );
        }
    }
    out
}

/// Orders, fills, cancels and rejects per venue.
pub(super) fn venues_table(s: &EngineSummary) -> String {
    let mut out = format!(
        "{:<8}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}{:>6}\n",
        "venue", "routed", "acks", "fills", "replaces", "cancels", "rejects", "open"
    );
    for v in &s.venues {
        let t = &v.tally;
        let _ = writeln!(
            out,
            "{:<8}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}{:>6}",
            v.name,
            fmt_count(t.routed),
            fmt_count(t.acks),
            fmt_count(t.fills),
            fmt_count(t.replaces),
            fmt_count(t.cancels),
            fmt_count(t.rejects),
            v.open
        );
    }
    out
}

/// Rejects by reason: risk first, then the engine's own; `none` if there were none.
pub(super) fn rejects_lines(s: &EngineSummary) -> String {
    let mut out = String::new();
    for (what, rows) in [("risk", &s.risk_rejects), ("engine", &s.engine_rejects)] {
        if rows.is_empty() {
            let _ = writeln!(out, "{what:<7} none");
        }
        for r in rows {
            let _ = write!(out, "{what:<7} {:<20} ({}) {:>9}", r.name, r.code, r.count);
            match engine_reject_meaning(r.code) {
                Some(m) => {
                    let _ = writeln!(out, "  {m}");
                }
                None => out.push('\n'),
            }
        }
    }
    let venue: u64 = s.venues.iter().map(|v| v.tally.rejects).sum();
    let _ = writeln!(out, "{:<7} {venue}", "venue");
    for r in &s.venue_rejects {
        let _ = writeln!(
            out,
            "{:<7} {:<20} ({}) {:>9}  new orders the venue {} rejected",
            "venue", r.name, r.code, r.count, r.venue
        );
    }
    out
}

/// What an engine reject (`code`, 201..) means, for a reader of the summary. These
/// are the engine's and its venue adapters' answers, not the venues' or the risk
/// checks'.
fn engine_reject_meaning(code: u16) -> Option<&'static str> {
    use peregrine_strategy::msg::reason::*;
    Some(match code {
        UNKNOWN_ORDER => {
            "cancels/replaces that reached the venue adapter after the order was done \
             (it filled or was cancelled first): the usual race with a fill, the strategy is told"
        }
        REPLACE_PENDING => "a replace sent while the order's previous replace was in flight",
        GATEWAY_BUSY => "the venue adapter's outbound queue was full",
        VENUE_DOWN => "the venue was disconnected",
        STRATEGY_DOWN => "the strategy had stopped",
        UNKNOWN_VENUE => "the strategy's request named no such venue",
        UNKNOWN_INSTRUMENT => "the strategy's request named no such instrument",
        MALFORMED => "the strategy's request did not decode",
        _ => return None,
    })
}

/// The end-of-run summary.
pub(super) fn summary(s: &EngineSummary, secs: f64, venue_of: &dyn Fn(&str) -> String) -> String {
    let mut out = format!(
        "== summary after {secs:.1} s: orders {}, replaces {}, fills {}, cancels {}, rejects {} \
         ({:.2}% of orders; risk checks refused {} orders and replaces)\n\n",
        fmt_count(s.orders),
        fmt_count(s.replace_requests),
        fmt_count(s.fills),
        fmt_count(s.cancels),
        fmt_count(s.rejects),
        100.0 * s.rejects as f64 / s.orders.max(1) as f64,
        fmt_count(s.risk_rejects.iter().map(|r| r.count).sum()),
    );
    out += &latency_table(s);
    out += "\n== positions and PnL\n";
    out += &positions_table(s, venue_of);
    out += "\n== venues\n";
    out += &venues_table(s);
    out += "\n== rejects\n";
    out += &rejects_lines(s);
    out
}

/// What the kill-switch demonstration saw.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct KillDemo {
    /// The engine's reply to `kill * <timeout>`.
    pub reply: String,
    /// Open orders just before, in total and per venue name.
    pub open_before: (u64, Vec<(String, u64)>),
    /// Open orders after the reply and the watch period.
    pub open_after: u64,
    /// Venue-confirmed cancels during the demonstration.
    pub cancels: u64,
    /// New orders the kill switch refused during the demonstration.
    pub blocked: u64,
    /// How long the strategies were watched after the reply, s.
    pub watched_s: f64,
}

impl KillDemo {
    /// Every cancel confirmed (the engine said `ok`, nothing open any more).
    pub(super) fn cancels_confirmed(&self) -> bool {
        self.reply.starts_with("ok") && self.open_after == 0
    }

    /// The strategies kept sending and the switch refused them.
    pub(super) fn blocked_orders(&self) -> bool {
        self.blocked > 0
    }

    /// The demonstration's text.
    pub(super) fn render(&self) -> String {
        let per_venue: Vec<String> = self
            .open_before
            .1
            .iter()
            .map(|(v, n)| format!("{v} {n}"))
            .collect();
        let mut out = String::from("== kill switch demonstration\n");
        let _ = writeln!(
            out,
            "before:  {} open orders ({})",
            self.open_before.0,
            per_venue.join(", ")
        );
        let _ = writeln!(out, "kill *:  {}", self.reply.trim());
        let _ = writeln!(
            out,
            "after:   {} open orders; {} cancels confirmed by the venues; \
             {} new orders blocked by the kill switch in {:.1} s",
            self.open_after,
            self.cancels,
            fmt_count(self.blocked),
            self.watched_s
        );
        let verdict = match (self.cancels_confirmed(), self.blocked_orders()) {
            (true, true) => "all cancels confirmed; new orders blocked".to_owned(),
            (true, false) => {
                "all cancels confirmed; no new order was tried while watching".to_owned()
            }
            (false, _) => format!(
                "NOT all cancels confirmed ({} orders still open)",
                self.open_after
            ),
        };
        let _ = writeln!(out, "result:  {verdict}");
        out
    }
}

#[cfg(test)]
mod tests {
    use peregrine_engine::summary::{
        LatencyRow, PositionRow, RejectRow, StrategyRow, VenueRow, VenueTally,
    };

    use super::*;

    fn sample() -> EngineSummary {
        EngineSummary {
            engine: "up".into(),
            orders: 2_871,
            fills: 1_404,
            rejects: 12,
            open_orders: 5,
            latency: vec![LatencyRow {
                name: "round trip  t8-t1".into(),
                n: 100,
                p50: 38_100,
                p99: 212_000,
                p999: 1_500_000,
                max: 2_000_000_000,
            }],
            strategies: vec![
                StrategyRow {
                    name: "maker".into(),
                    state: "alive".into(),
                    pid: Some(7),
                    open: 2,
                    killed: false,
                },
                StrategyRow {
                    name: "taker".into(),
                    state: "alive".into(),
                    pid: Some(8),
                    open: 0,
                    killed: false,
                },
            ],
            positions: vec![PositionRow {
                strategy: "maker".into(),
                instrument: 1,
                net: -3,
                fills: 40,
                avg: Some(10_004),
                realized: 120,
                unrealized: -9,
                total: 111,
            }],
            venues: vec![VenueRow {
                name: "sim".into(),
                open: 5,
                tally: VenueTally {
                    routed: 2_859,
                    acks: 2_859,
                    fills: 1_404,
                    cancels: 3,
                    rejects: 0,
                    replaces: 0,
                },
            }],
            risk_rejects: vec![RejectRow {
                code: 109,
                name: "max_position".into(),
                count: 12,
            }],
            ..EngineSummary::default()
        }
    }

    #[test]
    fn progress_is_per_second_over_the_last_second() {
        let mut now = sample();
        now.window = vec![LatencyRow {
            name: "round trip  t8-t1".into(),
            n: 10,
            p50: 38_100,
            p99: 212_000,
            p999: 212_000,
            max: 212_000,
        }];
        let prev = EngineSummary {
            orders: 1_871,
            rejects: 2,
            venues: vec![VenueRow {
                name: "sim".into(),
                open: 0,
                tally: VenueTally {
                    fills: 404,
                    ..VenueTally::default()
                },
            }],
            ..EngineSummary::default()
        };
        let line = progress_line(3.0, &now, Some(&prev), 1.0);
        assert!(
            line.starts_with("[   3.0 s] last 1 s: orders 1000/s (replaces 0/s)"),
            "{line}"
        );
        assert!(line.contains("fills/s sim 1000"), "{line}");
        assert!(line.contains("rejects 10/s"), "{line}");
        assert!(line.contains("rt p50 38.1 µs p99 212.0 µs"), "{line}");
        assert!(line.ends_with("md -"), "{line}");
        let first = progress_line(2.0, &now, None, 0.0);
        assert!(first.contains("orders -/s"), "{first}");
    }

    #[test]
    fn summary_has_every_section() {
        let text = summary(&sample(), 4.0, &|_| "sim".to_owned());
        for needle in [
            "== summary after 4.0 s: orders 2,871, replaces 0, fills 1,404",
            "round trip  t8-t1",
            "== positions and PnL",
            "== venues",
            "== rejects",
            "max_position",
            "venue   0",
        ] {
            assert!(text.contains(needle), "{needle:?} missing:\n{text}");
        }
        // A strategy without fills still gets a row.
        assert!(
            text.lines()
                .any(|l| l.starts_with("taker") && l.contains('-')),
            "{text}"
        );
        let maker = text.lines().find(|l| l.starts_with("maker")).unwrap();
        assert!(maker.contains("10004") && maker.contains("111"), "{maker}");
        // With instrument info: decimals and currency.
        let mut with_info = sample();
        with_info.instruments = vec![InstrumentInfo {
            id: 1,
            symbol: "PGN-USD".into(),
            price_decimals: 2,
            qty_decimals: 0,
            currency: "USD".into(),
        }];
        let text = summary(&with_info, 4.0, &|_| "sim".to_owned());
        let maker = text.lines().find(|l| l.starts_with("maker")).unwrap();
        assert!(
            maker.contains("100.04") && maker.contains("1.11 USD"),
            "{maker}"
        );
    }

    #[test]
    fn an_engine_reject_says_what_it_means() {
        let mut s = sample();
        s.engine_rejects = vec![RejectRow {
            code: 204,
            name: "unknown_order".into(),
            count: 7,
        }];
        let text = rejects_lines(&s);
        let line = text.lines().find(|l| l.starts_with("engine")).unwrap();
        assert!(
            line.contains("unknown_order") && line.contains('7'),
            "{line}"
        );
        assert!(line.contains("after the order was done"), "{line}");
        // The venue's own reasons, per venue.
        s.venue_rejects = vec![peregrine_engine::summary::VenueRejectRow {
            venue: "px".into(),
            code: 4,
            name: "price_out_of_band".into(),
            count: 9,
        }];
        let text = rejects_lines(&s);
        let line = text
            .lines()
            .find(|l| l.contains("price_out_of_band"))
            .unwrap();
        assert!(
            line.starts_with("venue") && line.contains("venue px rejected"),
            "{line}"
        );
        // Risk rows stay as they were.
        let risk = text.lines().find(|l| l.starts_with("risk")).unwrap();
        assert!(risk.trim_end().ends_with("12"), "{risk}");
    }

    #[test]
    fn kill_demo_verdicts() {
        let mut d = KillDemo {
            reply: "ok kill switch on for all strategies; 4 cancels sent".into(),
            open_before: (4, vec![("sim".into(), 4)]),
            open_after: 0,
            cancels: 4,
            blocked: 1_200,
            watched_s: 1.0,
        };
        let text = d.render();
        assert!(text.contains("result:  all cancels confirmed; new orders blocked"));
        assert!(text.contains("1,200 new orders blocked"), "{text}");
        assert!(text.contains("(sim 4)"), "{text}");
        d.open_after = 2;
        assert!(!d.cancels_confirmed());
        assert!(d.render().contains("NOT all cancels confirmed (2 orders"));
        d.open_after = 0;
        d.reply = "error: kill switch on, but 2 orders still open".into();
        assert!(!d.cancels_confirmed());
    }
}
