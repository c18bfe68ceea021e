//! Strategies attached to a replay exactly as live: the SDK's [`Strategy`] with its
//! [`Api`], whose requests go into a submit ring and whose `Api::book` reads a book
//! board, as under the engine. The replay plays the engine's part: it calls the
//! callbacks in simulated time ([`Api::set_sim_time`]), publishes each book version
//! to the board before `on_book`, and takes the requests out of the ring after each
//! callback. The rings and board are files in a private temporary directory.

use std::path::Path;

use peregrine_queue::shm::{ShmError, ShmSpsc, ShmSpscConsumer};
use peregrine_strategy::md::{BoardError, BoardReader, BoardWriter, BookView, Trade};
use peregrine_strategy::msg::{Event, Request};
use peregrine_strategy::{Api, Strategy};
use peregrine_types::InstrumentId;

/// What a strategy is handed.
#[derive(Debug, Clone, Copy)]
pub enum Delivery<'a> {
    /// The replay starts (`on_start`).
    Start,
    /// An answer about one of its orders.
    Event(&'a Event),
    /// A new version of the book.
    Book(&'a BookView),
    /// A trade.
    Trade(&'a Trade),
    /// Its timer.
    Timer,
}

/// A strategy the replay drives.
pub trait Attached {
    /// Runs the callback for `d` at simulated time `now`; the requests the strategy
    /// sent go to `out`. An `Err` is the strategy's failure (a Python exception, with
    /// its traceback): the replay stops and reports it.
    fn deliver(&mut self, now: u64, d: Delivery<'_>, out: &mut Vec<Request>) -> Result<(), String>;
    /// The period of its timer (`None`: no timer).
    fn timer_interval_ns(&self) -> Option<u64>;
    /// It is done: the replay stops.
    fn finished(&self) -> bool;
}

/// Why a strategy could not be attached.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    /// The temporary directory.
    #[error("temporary directory: {0}")]
    Dir(#[from] std::io::Error),
    /// The submit ring.
    #[error("submit ring: {0}")]
    Ring(#[from] ShmError),
    /// The book board.
    #[error("book board: {0}")]
    Board(#[from] BoardError),
}

/// Submit ring slots: more requests than this from one callback are refused with
/// `ApiError::Full`, as a full ring refuses them live.
pub const RING: usize = 4_096;

/// The engine's end of an attached strategy: ring consumer, board writer, clock.
#[derive(Debug)]
pub struct Harness {
    _dir: tempfile::TempDir,
    rx: ShmSpscConsumer<Request>,
    board: BoardWriter,
    api: Api,
}

impl Harness {
    /// Rings and a one-slot board for (`venue`, `instrument`) in a fresh directory.
    pub fn new(venue: u32, instrument: InstrumentId) -> Result<Harness, AttachError> {
        let dir = tempfile::Builder::new()
            .prefix("peregrine-replay-")
            .tempdir_in(shm_or_tmp())?;
        let ring = ShmSpsc::<Request>::create(&dir.path().join("strategy.submit"), RING)?;
        let rx = ring.consumer()?;
        let board_path = peregrine_strategy::md::board::path(dir.path());
        let board = BoardWriter::create(&board_path, &[(venue, instrument)])?;
        let reader = BoardReader::attach(&board_path)?;
        let api = Api::over(ring.producer()?, Some(reader));
        Ok(Harness {
            _dir: dir,
            rx,
            board,
            api,
        })
    }

    /// The strategy's `Api`, set to simulated time `now`.
    pub fn api(&mut self, now: u64) -> &mut Api {
        self.api.set_sim_time(Some(now));
        &mut self.api
    }

    /// Publishes `book` to the board (before `on_book`, as the engine does).
    pub fn publish(&mut self, book: &BookView) {
        self.board.publish(0, book);
    }

    /// Moves the requests the strategy pushed into `out`.
    pub fn drain(&mut self, out: &mut Vec<Request>) {
        while let Some(r) = self.rx.try_pop() {
            out.push(r);
        }
    }
}

/// `/dev/shm` when there is one (rings are meant to live in memory), else the
/// system's temporary directory.
fn shm_or_tmp() -> std::path::PathBuf {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        shm.to_owned()
    } else {
        std::env::temp_dir()
    }
}

/// A Rust strategy in the replay's process.
#[derive(Debug)]
pub struct InProcess<S> {
    strategy: S,
    harness: Harness,
}

impl<S: Strategy> InProcess<S> {
    /// Attaches `strategy` to a replay of (`venue`, `instrument`).
    pub fn new(strategy: S, venue: u32, instrument: InstrumentId) -> Result<Self, AttachError> {
        Ok(InProcess {
            strategy,
            harness: Harness::new(venue, instrument)?,
        })
    }

    /// The strategy (to read its state after the replay).
    pub fn strategy(&self) -> &S {
        &self.strategy
    }
}

/// Hands one delivery to `strategy` through `harness` (the book published to its
/// board first), then moves what the strategy submitted into `out`: the one delivery
/// path of every SDK strategy in a replay, in process or in Python.
pub fn deliver_through<S: Strategy>(
    harness: &mut Harness,
    strategy: &mut S,
    now: u64,
    d: Delivery<'_>,
    out: &mut Vec<Request>,
) {
    if let Delivery::Book(b) = d {
        harness.publish(b);
    }
    let api = harness.api(now);
    match d {
        Delivery::Start => strategy.on_start(api),
        Delivery::Event(ev) => {
            api.observe(ev);
            strategy.on_event(api, ev);
        }
        Delivery::Book(b) => strategy.on_book(api, b.instrument, b),
        Delivery::Trade(t) => strategy.on_trade(api, t),
        Delivery::Timer => strategy.on_timer(api, now),
    }
    strategy.on_batch_end(api);
    harness.drain(out);
}

impl<S: Strategy> Attached for InProcess<S> {
    fn deliver(&mut self, now: u64, d: Delivery<'_>, out: &mut Vec<Request>) -> Result<(), String> {
        deliver_through(&mut self.harness, &mut self.strategy, now, d, out);
        Ok(())
    }

    fn timer_interval_ns(&self) -> Option<u64> {
        Some(self.strategy.timer_interval_ns().max(1))
    }

    fn finished(&self) -> bool {
        self.strategy.finished()
    }
}
