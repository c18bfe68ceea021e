//! The live terminal view of `peregrine up` (when stdout is a terminal and neither
//! `--plain` nor `--quiet` was given), drawn with ratatui once a second: the book of
//! every venue (read straight from the engine's shared-memory board), the strategies
//! with position and PnL, the last second's rates and latencies, rejects, restarts.
//! `q` or Ctrl-C stops the run like Ctrl-C does in plain mode.

use std::fmt::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use peregrine_engine::summary::EngineSummary;
use peregrine_engine::units::InstrumentInfo;
use peregrine_strategy::md::{board, BoardReader, BookView};
use ratatui::crossterm::event::{self, Event, KeyCode, KeyModifiers};
use ratatui::layout::{Constraint, Layout};
use ratatui::widgets::{Block, Paragraph};
use ratatui::{DefaultTerminal, Frame};

use super::procs::Procs;
use super::report;

/// The terminal, taken over for the run.
#[derive(Debug)]
pub(super) struct Tui {
    term: DefaultTerminal,
    board: Option<BoardReader>,
    shm: std::path::PathBuf,
    stop: Arc<AtomicBool>,
    venues: Vec<String>,
    /// Each strategy's venue, for the positions table.
    strategy_venues: Vec<(String, String)>,
}

/// Everything one frame shows, as text blocks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct View {
    /// Title line.
    pub title: String,
    /// One block per book.
    pub books: Vec<(String, String)>,
    /// Strategies, positions and PnL.
    pub strategies: String,
    /// Rates and latencies.
    pub rates: String,
    /// Rejects and restarts.
    pub problems: String,
}

impl Tui {
    /// Takes over the terminal.
    pub(super) fn start(
        shm: &Path,
        stop: Arc<AtomicBool>,
        venues: Vec<String>,
        strategy_venues: Vec<(String, String)>,
    ) -> Tui {
        Tui {
            term: ratatui::init(),
            board: None,
            shm: shm.to_owned(),
            stop,
            venues,
            strategy_venues,
        }
    }

    /// Draws one frame and reads the keyboard (`q` or Ctrl-C stop the run).
    pub(super) fn draw(
        &mut self,
        s: &EngineSummary,
        prev: Option<&EngineSummary>,
        procs: &Procs,
        elapsed_s: f64,
    ) {
        if self.board.is_none() {
            self.board = BoardReader::attach(&board::path(&self.shm)).ok();
        }
        let books: Vec<BookView> = self
            .board
            .as_ref()
            .map(|b| (0..b.slots()).filter_map(|i| b.read(i)).collect())
            .unwrap_or_default();
        let view = view(
            s,
            prev,
            procs,
            elapsed_s,
            &books,
            &self.venues,
            &self.strategy_venues,
        );
        let _ = self.term.draw(|f| render(f, &view));
        while event::poll(Duration::ZERO).unwrap_or(false) {
            if let Ok(Event::Key(k)) = event::read() {
                let ctrl_c =
                    k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL);
                if ctrl_c || k.code == KeyCode::Char('q') {
                    // Relaxed: a stop flag.
                    self.stop.store(true, Ordering::Relaxed);
                }
            }
        }
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        ratatui::restore();
    }
}

/// The text of one frame.
pub(super) fn view(
    s: &EngineSummary,
    prev: Option<&EngineSummary>,
    procs: &Procs,
    elapsed_s: f64,
    books: &[BookView],
    venues: &[String],
    strategy_venues: &[(String, String)],
) -> View {
    let books = books
        .iter()
        .map(|b| {
            let info = InstrumentInfo::find(&s.instruments, b.instrument.0);
            let venue = venues.get(b.venue as usize).map_or("?", String::as_str);
            let mut t = String::new();
            let _ = writeln!(t, "{:>10} {:>6} | {:>6} {:>10}", "bid", "qty", "qty", "ask");
            for i in 0..5 {
                let side = |l: Option<&peregrine_strategy::md::Level>| {
                    l.map_or(("".to_owned(), "".to_owned()), |l| {
                        (
                            info.price(l.price.units().into()),
                            info.qty(l.qty.lots().into()),
                        )
                    })
                };
                let (bp, bq) = side(b.bids().get(i));
                let (ap, aq) = side(b.asks().get(i));
                let _ = writeln!(t, "{bp:>10} {bq:>6} | {aq:>6} {ap:>10}");
            }
            (format!(" {venue} {} (v{}) ", info.symbol, b.seq), t)
        })
        .collect();
    let rates = report::rate_parts(s, prev, 1.0).join("\n");
    let mut problems = report::rejects_lines(s);
    problems += &super::supervise::restarts_text(procs);
    View {
        title: format!(
            " peregrine up: {:.0} s, orders {}, fills {}, open {}  (q or Ctrl-C stops) ",
            elapsed_s,
            report::fmt_count(s.orders),
            report::fmt_count(s.fills),
            s.open_orders
        ),
        books,
        strategies: report::positions_table(s, &|name| {
            strategy_venues
                .iter()
                .find(|(n, _)| n == name)
                .map_or_else(String::new, |(_, v)| v.clone())
        }),
        rates,
        problems,
    }
}

/// Lays one frame out.
pub(super) fn render(f: &mut Frame<'_>, v: &View) {
    let rows = Layout::vertical([
        Constraint::Length(8),
        Constraint::Min(6),
        Constraint::Length(8),
    ])
    .split(f.area());
    let n = v.books.len().max(1) as u32;
    let cols = Layout::horizontal((0..n).map(|_| Constraint::Ratio(1, n))).split(rows[0]);
    for (i, (title, text)) in v.books.iter().enumerate() {
        let p = Paragraph::new(text.as_str()).block(Block::bordered().title(title.as_str()));
        f.render_widget(p, cols[i]);
    }
    let strat =
        Paragraph::new(v.strategies.as_str()).block(Block::bordered().title(v.title.as_str()));
    f.render_widget(strat, rows[1]);
    let bottom =
        Layout::horizontal([Constraint::Ratio(1, 2), Constraint::Ratio(1, 2)]).split(rows[2]);
    f.render_widget(
        Paragraph::new(v.rates.as_str()).block(Block::bordered().title(" last second ")),
        bottom[0],
    );
    f.render_widget(
        Paragraph::new(v.problems.as_str()).block(Block::bordered().title(" rejects, restarts ")),
        bottom[1],
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_strategy::md::Level;
    use peregrine_types::{InstrumentId, Price, Qty};
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    #[test]
    fn a_frame_shows_books_strategies_rates_and_problems() {
        let lvl = |p, q| Level {
            price: Price::from_raw(p),
            qty: Qty::from_raw(q),
            orders: 1,
        };
        let mut book = BookView::new(0, InstrumentId(1), &[lvl(9_999, 3)], &[lvl(10_001, 2)]);
        book.seq = 42;
        let s = EngineSummary {
            orders: 10,
            instruments: vec![InstrumentInfo {
                id: 1,
                symbol: "PGN-USD".into(),
                price_decimals: 2,
                qty_decimals: 0,
                currency: "USD".into(),
            }],
            ..EngineSummary::default()
        };
        let v = view(
            &s,
            None,
            &Procs::default(),
            3.0,
            &[book],
            &["sim".into()],
            &[],
        );
        let mut t = Terminal::new(TestBackend::new(100, 30)).unwrap();
        t.draw(|f| render(f, &v)).unwrap();
        let screen: String = t
            .backend()
            .buffer()
            .content()
            .iter()
            .map(|c| c.symbol())
            .collect();
        for needle in [
            "sim PGN-USD (v42)",
            "99.99",
            "100.01",
            "peregrine up: 3 s",
            "last second",
            "restarts",
            // Every rate line fits the box (at 3 s the elapsed time's padding used to
            // split one more line off and push the market-data latency out).
            "open 0",
            "md -",
        ] {
            assert!(screen.contains(needle), "{needle:?} not on screen");
        }
    }
}
