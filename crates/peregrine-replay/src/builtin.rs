//! The Rust strategies `peregrine replay --strategy NAME` attaches: the joiner of this
//! crate and the SDK's example taker and mean-reverter, sized to the replayed
//! instrument (prices in its ticks, quantities in its units).

use peregrine_strategy::examples::reverter::{Reverter, ReverterConfig};
use peregrine_strategy::examples::taker::{Taker, TakerConfig};
use peregrine_types::InstrumentSpec;

use crate::attach::{AttachError, Attached, InProcess};
use crate::joiner::{Joiner, JoinerConfig};

/// The names `--strategy` takes.
pub const NAMES: [&str; 3] = ["joiner", "taker", "reverter"];

/// Attaches the built-in strategy `name` trading `qty` units of `spec` at venue 0;
/// `None` for an unknown name.
pub fn attach(
    name: &str,
    spec: &InstrumentSpec,
    qty: i64,
    seed: u64,
) -> Option<Result<Box<dyn Attached>, AttachError>> {
    let instrument = spec.id;
    let tick = spec.tick_size;
    let boxed = |r: Result<Box<dyn Attached>, AttachError>| Some(r);
    match name {
        "joiner" => boxed(
            InProcess::new(
                Joiner::new(JoinerConfig {
                    venue: 0,
                    instrument,
                    qty,
                    tolerance: 2 * tick,
                    max_position: 10 * qty,
                }),
                0,
                instrument,
            )
            .map(|s| Box::new(s) as Box<dyn Attached>),
        ),
        "taker" => boxed(
            InProcess::new(
                Taker::new(TakerConfig {
                    venue: 0,
                    instrument,
                    qty,
                    max_position: 10 * qty,
                    min_gap_ns: 20_000_000,
                    max_gap_ns: 200_000_000,
                    seed,
                    ..TakerConfig::default()
                }),
                0,
                instrument,
            )
            .map(|s| Box::new(s) as Box<dyn Attached>),
        ),
        "reverter" => boxed(
            InProcess::new(
                Reverter::new(ReverterConfig {
                    venue: 0,
                    instrument,
                    threshold: 2 * tick,
                    qty,
                    max_position: 10 * qty,
                    ..ReverterConfig::default()
                }),
                0,
                instrument,
            )
            .map(|s| Box::new(s) as Box<dyn Attached>),
        ),
        _ => None,
    }
}
