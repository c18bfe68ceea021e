//! The plots of a replay, as SVG files (plotters' SVG backend):
//!
//! * `equity.svg`: the strategy's PnL (cash + position × mid) over simulated time;
//! * `inventory.svg`: its position over time;
//! * `fills.svg`: the best bid and ask over time, each fill a dot at its price (buys
//!   green, sells red), so one sees where in the spread it traded.
//!
//! Times are seconds from the first sample; prices and money in the instrument's
//! decimal units.

use std::path::{Path, PathBuf};

use peregrine_types::Side;
use plotters::prelude::*;

use super::Report;

/// Why a plot could not be written.
#[derive(Debug, thiserror::Error)]
#[error("plotting {path}: {why}")]
pub struct PlotError {
    path: PathBuf,
    why: String,
}

fn err(path: &Path, e: impl std::fmt::Display) -> PlotError {
    PlotError {
        path: path.to_owned(),
        why: e.to_string(),
    }
}

const W: u32 = 960;
const H: u32 = 420;

/// A line chart of `points` (x seconds, y) into `path`.
fn line_chart(
    path: &Path,
    title: &str,
    y_label: &str,
    points: &[(f64, f64)],
) -> Result<(), PlotError> {
    let root = SVGBackend::new(path, (W, H)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(path, e))?;
    let (x0, x1) = bounds(points.iter().map(|p| p.0));
    let (y0, y1) = bounds(points.iter().map(|p| p.1));
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(|e| err(path, e))?;
    chart
        .configure_mesh()
        .x_desc("simulated time (s)")
        .y_desc(y_label)
        .draw()
        .map_err(|e| err(path, e))?;
    chart
        .draw_series(LineSeries::new(
            points.iter().copied(),
            BLUE.stroke_width(2),
        ))
        .map_err(|e| err(path, e))?;
    root.present().map_err(|e| err(path, e))
}

/// The range of `v` with a little room (a flat series gets a unit of room).
fn bounds(v: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for x in v {
        lo = lo.min(x);
        hi = hi.max(x);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.05).max(if hi == lo { 1.0 } else { 0.0 });
    (lo - pad, hi + pad)
}

/// Writes the three plots of `report` into `dir`; returns their paths.
pub fn write_all(report: &Report, dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    std::fs::create_dir_all(dir).map_err(|e| err(dir, e))?;
    let (pd, qd) = report.decimals;
    let t0 = report.samples.first().map_or(0, |s| s.ts);
    let secs = |ts: u64| ts.saturating_sub(t0) as f64 / 1e9;
    let price = |p: i64| p as f64 / 10f64.powi(pd as i32);
    let qty = |q: i64| q as f64 / 10f64.powi(qd as i32);
    let money = |m: i128| m as f64 / 10f64.powi((pd + qd) as i32);
    let equity: Vec<(f64, f64)> = report
        .samples
        .iter()
        .map(|s| (secs(s.ts), money(s.equity)))
        .collect();
    let inventory: Vec<(f64, f64)> = report
        .samples
        .iter()
        .map(|s| (secs(s.ts), qty(s.position)))
        .collect();
    let e = dir.join("equity.svg");
    line_chart(&e, "PnL (cash + position x mid)", "PnL", &equity)?;
    let i = dir.join("inventory.svg");
    line_chart(&i, "Position", "position", &inventory)?;
    let f = dir.join("fills.svg");
    fills_chart(&f, report, &secs, &price)?;
    Ok(vec![e, i, f])
}

fn fills_chart(
    path: &Path,
    report: &Report,
    secs: &dyn Fn(u64) -> f64,
    price: &dyn Fn(i64) -> f64,
) -> Result<(), PlotError> {
    let bids: Vec<(f64, f64)> = report
        .samples
        .iter()
        .filter_map(|s| Some((secs(s.ts), price(s.bid?))))
        .collect();
    let asks: Vec<(f64, f64)> = report
        .samples
        .iter()
        .filter_map(|s| Some((secs(s.ts), price(s.ask?))))
        .collect();
    let fills: Vec<(f64, f64, Side)> = report
        .fills
        .iter()
        .map(|f| (secs(f.ts), price(f.price), f.side))
        .collect();
    let root = SVGBackend::new(path, (W, H)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(path, e))?;
    let (x0, x1) = bounds(bids.iter().chain(&asks).map(|p| p.0));
    let (y0, y1) = bounds(
        bids.iter()
            .chain(&asks)
            .map(|p| p.1)
            .chain(fills.iter().map(|f| f.1)),
    );
    let mut chart = ChartBuilder::on(&root)
        .caption("Fills against the best bid and ask", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(|e| err(path, e))?;
    chart
        .configure_mesh()
        .x_desc("simulated time (s)")
        .y_desc("price")
        .draw()
        .map_err(|e| err(path, e))?;
    let bid_style = RGBColor(90, 150, 90);
    let ask_style = RGBColor(190, 90, 90);
    chart
        .draw_series(LineSeries::new(bids, bid_style.stroke_width(1)))
        .map_err(|e| err(path, e))?
        .label("best bid")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], bid_style));
    chart
        .draw_series(LineSeries::new(asks, ask_style.stroke_width(1)))
        .map_err(|e| err(path, e))?
        .label("best ask")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], ask_style));
    chart
        .draw_series(fills.iter().map(|&(x, y, side)| {
            let c = match side {
                Side::Buy => RGBColor(0, 140, 0),
                Side::Sell => RGBColor(200, 0, 0),
            };
            Circle::new((x, y), 3, c.filled())
        }))
        .map_err(|e| err(path, e))?;
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()
        .map_err(|e| err(path, e))?;
    root.present().map_err(|e| err(path, e))
}
