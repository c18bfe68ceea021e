//! A hand-written SVG line chart: rt-venue p99 − W against W, one line per candidate.

use std::fmt::Write as _;

use super::config::Config;
use super::stats::median;
use super::Cell;

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 440.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 190.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 50.0;
const COLORS: [&str; 8] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
];

/// One series: candidate name and (W ns, µs) points.
type Series = (String, Vec<(f64, f64)>);

fn series(config: &Config, cells: &[Cell]) -> Vec<Series> {
    config
        .candidates
        .iter()
        .map(|&c| {
            let points = config
                .orch_work_ns
                .iter()
                .filter_map(|&w| {
                    let cell = cells.iter().find(|x| x.work_ns == w && x.candidate == c)?;
                    let p99: Vec<f64> = cell.runs.iter().map(|r| r.rt_venue.p99 as f64).collect();
                    Some((w as f64, (median(&p99) - w as f64) / 1e3))
                })
                .collect();
            (c.to_string(), points)
        })
        .collect()
}

/// Renders the chart.
pub fn chart(config: &Config, cells: &[Cell]) -> String {
    let all = series(config, cells);
    let points = all.iter().flat_map(|(_, p)| p.iter().copied());
    let x_max = points.clone().map(|p| p.0).fold(1.0, f64::max);
    let y_max = points.clone().map(|p| p.1).fold(1e-3, f64::max) * 1.1;
    let y_min = points.map(|p| p.1).fold(0.0, f64::min);
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let x = |v: f64| LEFT + v / x_max * plot_w;
    let y = |v: f64| TOP + (y_max - v) / (y_max - y_min) * plot_h;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">rt-venue p99 − W \
         (hand-off + queueing) vs orch_work W</text>\n",
        WIDTH / 2.0
    );
    for i in 0..=5 {
        let v = y_min + (y_max - y_min) * f64::from(i) / 5.0;
        let _ = writeln!(
            s,
            "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{v:.1}</text>",
            LEFT + plot_w,
            LEFT - 6.0,
            y(v) + 4.0,
            y = y(v),
        );
    }
    for &w in &config.orch_work_ns {
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{w}</text>",
            x(w as f64),
            TOP + plot_h + 18.0
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">orch_work W (ns)</text>\
         <text x=\"16\" y=\"{:.1}\" transform=\"rotate(-90 16 {:.1})\" text-anchor=\"middle\">\
         rt-venue p99 − W (µs)</text>",
        LEFT + plot_w / 2.0,
        HEIGHT - 10.0,
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0
    );
    for (i, (name, pts)) in all.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let path: Vec<String> = pts
            .iter()
            .map(|&(a, b)| format!("{:.1},{:.1}", x(a), y(b)))
            .collect();
        let _ = writeln!(
            s,
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"/>",
            path.join(" ")
        );
        for &(a, b) in pts {
            let _ = writeln!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{color}\"/>",
                x(a),
                y(b)
            );
        }
        let ly = TOP + 20.0 * i as f64;
        let _ = writeln!(
            s,
            "<line x1=\"{}\" x2=\"{}\" y1=\"{ly}\" y2=\"{ly}\" stroke=\"{color}\" stroke-width=\"3\"/>\
             <text x=\"{}\" y=\"{}\">{name}</text>",
            WIDTH - RIGHT + 15.0,
            WIDTH - RIGHT + 40.0,
            WIDTH - RIGHT + 46.0,
            ly + 4.0
        );
    }
    s.push_str("</svg>\n");
    s
}
