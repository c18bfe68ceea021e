//! Queue-position models for price-level data: when a level's quantity falls by more
//! than the trades there explain, someone cancelled, and the data does not say who.
//! A model decides how much of the cancelled quantity was ahead of the strategy's
//! order; the rest was behind it. These are the models hftbacktest documents
//! ("Queue Models"), after Rigtorp's estimate of queue position:
//!
//! * [`QueueModel::RiskAverse`]: nothing ahead is ever cancelled (only when more is
//!   cancelled than there is behind); the order advances by trades alone.
//! * [`QueueModel::Power`]`(n)` and [`QueueModel::Log`]: a cancel comes from behind
//!   with probability `f(back) / (f(front) + f(back))`, `f(x) = x^n` or `ln(1 + x)`,
//!   where `front` and `back` are the quantities ahead of and behind the order; the
//!   expected share of the cancelled quantity is taken from ahead.
//!
//! The answer is always feasible: between `cancelled − back` and `front`.

use serde::Serialize;

/// How cancels at a level split around the strategy's order.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum QueueModel {
    /// Cancels come from behind.
    RiskAverse,
    /// `f(x) = x^n`.
    Power(f64),
    /// `f(x) = ln(1 + x)`.
    Log,
}

impl QueueModel {
    /// The quantity taken from ahead of the order when `cancelled` leaves a level
    /// with `front` ahead of the order and `back` behind it.
    pub fn from_ahead(&self, front: i64, back: i64, cancelled: i64) -> i64 {
        let lo = (cancelled - back).max(0);
        let hi = front.min(cancelled);
        if hi <= lo {
            return lo;
        }
        let f = |x: i64| -> f64 {
            let x = x.max(0) as f64;
            match *self {
                QueueModel::RiskAverse => 0.0,
                QueueModel::Power(n) => x.powf(n),
                QueueModel::Log => x.ln_1p(),
            }
        };
        let share_ahead = match self {
            QueueModel::RiskAverse => 0.0,
            _ => {
                let (fa, fb) = (f(front), f(back));
                if fa + fb > 0.0 {
                    fa / (fa + fb)
                } else {
                    0.0
                }
            }
        };
        ((cancelled as f64 * share_ahead).round() as i64).clamp(lo, hi)
    }

    /// A short name for reports.
    pub fn name(&self) -> String {
        match self {
            QueueModel::RiskAverse => "risk-averse".into(),
            QueueModel::Power(n) => format!("power({n})"),
            QueueModel::Log => "log".into(),
        }
    }

    /// Parses `risk-averse`, `power:N` (or `power`, N = 2) and `log`.
    pub fn parse(s: &str) -> Result<QueueModel, String> {
        match s.split_once(':') {
            None if s == "risk-averse" => Ok(QueueModel::RiskAverse),
            None if s == "log" => Ok(QueueModel::Log),
            None if s == "power" => Ok(QueueModel::Power(2.0)),
            Some(("power", n)) => n
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite() && *n > 0.0)
                .map(QueueModel::Power)
                .ok_or_else(|| format!("power exponent {n:?} is not a positive number")),
            _ => Err(format!(
                "queue model {s:?}: expected risk-averse, power[:N] or log"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_ahead() {
        let ra = QueueModel::RiskAverse;
        assert_eq!(ra.from_ahead(100, 50, 30), 0);
        assert_eq!(ra.from_ahead(100, 50, 80), 30, "more than is behind");
        // Power: f(front)/(f(front)+f(back)) of the cancel comes from ahead.
        let p2 = QueueModel::Power(2.0);
        assert_eq!(p2.from_ahead(100, 100, 10), 5);
        assert_eq!(p2.from_ahead(300, 100, 10), 9); // 9/10
        assert_eq!(p2.from_ahead(0, 100, 10), 0);
        assert_eq!(p2.from_ahead(100, 0, 10), 10);
        let log = QueueModel::Log;
        // ln(1001) / (ln(1001) + ln(101)) = 0.60 of 50
        assert_eq!(log.from_ahead(1_000, 100, 50), 30);
        assert_eq!(
            log.from_ahead(1_000, 10, 100),
            90,
            "at least what is not behind"
        );
        for m in [ra, p2, log, QueueModel::Power(0.5)] {
            for (front, back, c) in [(5, 5, 10), (0, 0, 0), (7, 3, 4), (1, 100, 50)] {
                let a = m.from_ahead(front, back, c);
                assert!(
                    a >= (c - back).max(0) && a <= front.min(c),
                    "{m:?} {front} {back} {c}"
                );
            }
        }
        assert_eq!(QueueModel::parse("power:3"), Ok(QueueModel::Power(3.0)));
        assert_eq!(QueueModel::parse("log"), Ok(QueueModel::Log));
        assert!(QueueModel::parse("power:-1").is_err());
        assert!(QueueModel::parse("fifo").is_err());
    }
}
