//! `peregrine bench replay`: how fast recorded L3 data replays through the real
//! exchange core on one core, beside the floor of merely decoding the same bytes.
//!
//! The file (an ITCH 5.0 day given with `--file`/`--symbol`, or a synthetic day of
//! `--events` messages from the generator) is read into memory first, so both runs
//! read the same bytes at memory speed. Then, alternately, `--repeats` times each:
//!
//! * **decode**: the ITCH decoder and the symbol filter, every message normalized
//!   ([`peregrine_replay::data::itch_l3::ItchL3`]) and dropped: the floor;
//! * **replay**: the same stream through `peregrine replay`'s driver without a
//!   strategy ([`peregrine_replay::sim::run`]): every message becomes requests to a
//!   fresh exchange core ([`peregrine_exchange_core::Core`]) that matches them.
//!
//! Throughput is the book bench's method (`book::measure::Chunks`): each run
//! timed in chunks of 65,536 messages, messages per second from the median chunk of
//! all repeats; the whole-run rate is printed beside it.

use std::path::PathBuf;

use anyhow::Context;
use peregrine_replay::data::itch_l3::ItchL3;
use peregrine_replay::data::{DataError, Recorded, Source, L3};
use peregrine_replay::l3::L3Market;
use peregrine_replay::session::{plan, Input, Options};
use peregrine_replay::sim::{self, Settings};
use peregrine_replay::synth::{generate, ItchWriter, SynthConfig};
use peregrine_replay::venue::Venue;

use crate::book::measure::Chunks;

/// Arguments of `peregrine bench replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// An ITCH 5.0 file (plain or gzip) instead of a synthetic day.
    #[arg(long)]
    pub file: Option<PathBuf>,
    /// The symbol to replay from `--file`.
    #[arg(long, default_value = "SYNTH")]
    pub symbol: String,
    /// Messages of the synthetic day.
    #[arg(long, default_value_t = 5_000_000)]
    pub events: u64,
    /// Seed of the synthetic day.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Runs of each (decode, replay), alternating.
    #[arg(long, default_value_t = 5)]
    pub repeats: usize,
    /// Pin the thread to this core (index into the usable cores).
    #[arg(long)]
    pub core: Option<usize>,
    /// Write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// Messages per timed chunk.
const CHUNK: usize = 1 << 16;

/// A source that ticks the chunk timer at every message it hands out.
struct Timed<'c, S> {
    inner: S,
    chunks: Chunks<'c>,
}

impl<S: Source<Msg = L3>> Source for Timed<'_, S> {
    type Msg = L3;
    #[inline]
    fn next_msg(&mut self) -> Result<Option<Recorded<L3>>, DataError> {
        let r = self.inner.next_msg()?;
        if r.is_some() {
            self.chunks.step();
        }
        Ok(r)
    }
}

#[derive(Debug, Default, serde::Serialize)]
struct Rates {
    /// Messages per second of each chunk, all repeats.
    chunk_rates: Vec<f64>,
    /// Whole-run messages per second, each repeat.
    run_rates: Vec<f64>,
}

impl Rates {
    fn add(&mut self, messages: u64, total_ns: f64, chunk_ns: Vec<f64>) {
        self.run_rates.push(messages as f64 / (total_ns / 1e9));
        self.chunk_rates
            .extend(chunk_ns.iter().map(|ns| CHUNK as f64 / (ns / 1e9)));
    }

    fn median(v: &[f64]) -> f64 {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    }

    fn line(&self, name: &str) -> String {
        let mut c = self.chunk_rates.clone();
        c.sort_by(f64::total_cmp);
        let q = |p: f64| {
            c.get(((c.len() as f64 - 1.0) * p) as usize)
                .copied()
                .unwrap_or(0.0)
                / 1e6
        };
        format!(
            "| {name} | {:.2} M/s | {:.2} | {:.2} | {:.2} M/s |",
            Rates::median(&self.chunk_rates) / 1e6,
            q(0.1),
            q(0.9),
            Rates::median(&self.run_rates) / 1e6
        )
    }
}

#[derive(Debug, serde::Serialize)]
struct Output {
    date_unix: u64,
    input: String,
    messages: u64,
    bytes: usize,
    max_live_orders: usize,
    decode: Rates,
    replay: Rates,
    state_hash: String,
}

/// Runs the bench.
pub fn run(args: ReplayArgs) -> anyhow::Result<()> {
    if let Some(i) = args.core {
        let cores = peregrine_queue::available_cores();
        let c = *cores.get(i).context("--core: no such usable core")?;
        eprintln!(
            "{}",
            peregrine_queue::pin_current("replay", Some(c)).describe()
        );
    }
    let dir = tempfile::tempdir()?;
    let (path, symbol, input) = match &args.file {
        Some(f) => (f.clone(), args.symbol.clone(), f.display().to_string()),
        None => {
            let cfg = SynthConfig {
                seed: args.seed,
                events: args.events,
                ..SynthConfig::default()
            };
            let p = dir.path().join("synthetic.itch");
            let f = std::io::BufWriter::new(std::fs::File::create(&p)?);
            let t = std::time::Instant::now();
            generate(&cfg, &mut ItchWriter::new(f))?;
            eprintln!(
                "generated {} messages in {:.1} s",
                args.events,
                t.elapsed().as_secs_f64()
            );
            let desc = format!(
                "synthetic ITCH day, {} messages, seed {}",
                args.events, args.seed
            );
            (p, cfg.symbol, desc)
        }
    };
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut peregrine_replay::data::stream::open(&path)?,
        &mut bytes,
    )?;
    let plan = plan(Options::new(Input::Itch {
        path: path.clone(),
        symbol: symbol.clone(),
    }))?;
    let messages = plan.profile.messages;
    let clock = quanta::Clock::new();
    let (mut decode, mut replay) = (Rates::default(), Rates::default());
    let mut state_hash = String::new();
    let settings = Settings::default();
    for _ in 0..args.repeats.max(1) {
        let mut src = Timed {
            inner: ItchL3::new(&bytes[..], &symbol),
            chunks: Chunks::start(&clock, CHUNK),
        };
        let mut n = 0u64;
        while let Some(r) = src.next_msg()? {
            std::hint::black_box(&r);
            n += 1;
        }
        anyhow::ensure!(n == messages, "decoded {n} messages, profiled {messages}");
        let (total, chunks) = src.chunks.finish();
        decode.add(n, total, chunks);

        let capacity = (plan.profile.max_live + 4_096).next_power_of_two();
        let mut venue = Venue::new(plan.spec.clone(), capacity)?;
        let mut market = L3Market::new(plan.profile.max_live);
        let mut src = Timed {
            inner: ItchL3::new(&bytes[..], &symbol),
            chunks: Chunks::start(&clock, CHUNK),
        };
        let out = sim::run(&mut src, &mut market, &mut venue, None, None, &settings)?;
        let (total, chunks) = src.chunks.finish();
        replay.add(out.messages, total, chunks);
        state_hash = venue.state_hash();
    }
    println!(
        "peregrine bench replay: {input}: {messages} messages, {} bytes, {} orders live at most; {} repeats, one thread{}",
        bytes.len(),
        plan.profile.max_live,
        args.repeats,
        args.core.map_or(String::new(), |c| format!(" pinned to core {c}"))
    );
    println!("| run | messages/s (median chunk) | p10 chunk | p90 chunk | whole run |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    println!("{}", decode.line("decode only (floor)"));
    println!("{}", replay.line("replay through the exchange core"));
    println!(
        "replay / decode: {:.2}; state hash {}",
        Rates::median(&replay.chunk_rates) / Rates::median(&decode.chunk_rates).max(1.0),
        &state_hash[..16]
    );
    if let Some(j) = &args.json {
        let out = Output {
            date_unix: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            input,
            messages,
            bytes: bytes.len(),
            max_live_orders: plan.profile.max_live,
            decode,
            replay,
            state_hash,
        };
        std::fs::write(j, serde_json::to_string_pretty(&out)?)?;
    }
    Ok(())
}
