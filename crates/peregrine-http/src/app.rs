//! The gateway's shared state, and its start-up: history store, accounts and their
//! exchange sessions, the feed thread, the history writer.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use peregrine_client::keys::{KeyError, KeyFile};
use peregrine_types::AccountId;
use sqlx::AnyPool;
use tokio::sync::mpsc;

use crate::account::record::HistoryRecord;
use crate::account::{Accounts, AccountsSink};
use crate::config::GatewayConfig;
use crate::dialect::auth::Keys;
use crate::dialect::limits::RateLimits;
use crate::dialect::listen::ListenKeys;
use crate::history::writer::{Writer, WriterStats};
use crate::history::{self, HistoryError};
use crate::link::feed::{self, FeedSettings};
use crate::link::session::{self, SessionSpec};
use crate::market::batch::FeedBatch;
use crate::market::feed::MarketFeed;
use crate::market::hub::Hub;
use crate::market::symbols::Symbols;
use crate::market::Market;
use crate::venue::Venue;

/// Feed batches the writer may have queued before the feed thread drops (and the
/// writer later replays) them.
const FEED_QUEUE: usize = 65_536;

/// Everything a request handler may need.
pub struct App {
    /// The config.
    pub config: GatewayConfig,
    /// The venue.
    pub venue: Venue,
    /// The live market.
    pub market: Arc<Market>,
    /// Stream channels.
    pub hub: Arc<Hub>,
    /// Accounts and sessions.
    pub accounts: Arc<Accounts>,
    /// API keys.
    pub keys: Keys,
    /// Rate limits.
    pub limits: RateLimits,
    /// Listen keys of the user-data streams.
    pub listen_keys: ListenKeys,
    /// The history store.
    pub pool: AnyPool,
    /// History writer counters.
    pub writer: Arc<WriterStats>,
    /// The engine's control socket.
    pub engine: Option<PathBuf>,
    /// Started at.
    pub started: Instant,
    /// Stop everything.
    pub stop: Arc<AtomicBool>,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("listen", &self.config.listen)
            .finish()
    }
}

/// Why the gateway could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Reference data.
    #[error(transparent)]
    Venue(#[from] crate::venue::VenueError),
    /// History store.
    #[error(transparent)]
    History(#[from] HistoryError),
    /// Feed socket.
    #[error("binding the feed {0}: {1}")]
    Feed(SocketAddr, std::io::Error),
    /// The account key file.
    #[error(transparent)]
    Keys(#[from] peregrine_client::keys::KeyError),
}

impl App {
    /// Builds the gateway and starts its background work on the current runtime:
    /// one session per API key's account, the feed thread, the history writer.
    pub async fn start(
        config: GatewayConfig,
        stop: Arc<AtomicBool>,
    ) -> Result<Arc<App>, StartError> {
        let venue = Venue::from_config(&config)?;
        let symbols = Symbols::new(&venue.instruments);
        let accounts_list: Vec<u32> = config.api_keys.iter().map(|k| k.account).collect();
        let hub = Arc::new(Hub::new(&symbols, &accounts_list, config.ws.lag_limit));
        let market = Arc::new(Market::new(symbols.clone()));
        if venue.recovery.is_empty() {
            for i in 0..symbols.all().len() {
                market.state(i).synced = true;
            }
        }
        let pool = history::open(&config.history.url).await?;
        // The ticker streams' last 24 hours, from the store.
        let now = crate::market::feed::now_ms() as i64;
        for (i, sym) in symbols.all().iter().enumerate() {
            let id = sym.id().0;
            let start = now - crate::market::ticker::DAY_MS;
            let bars = history::read::klines(
                &pool,
                id,
                crate::market::kline::Interval::M1,
                Some(start),
                Some(now),
                1441,
                now,
            )
            .await?;
            let prev = history::read::last_trade_before(&pool, id, start.max(0) as u64).await?;
            market.state(i).day = crate::market::ticker::Rolling::seed(bars, prev.map(|t| t.price));
        }
        let writer_stats = Arc::new(WriterStats::default());
        let (feed_tx, feed_rx) = mpsc::channel::<FeedBatch>(FEED_QUEUE);
        let (orders_tx, orders_rx) = mpsc::unbounded_channel::<HistoryRecord>();
        // Records are counted on their way to the writer.
        let (counted_tx, mut counted_rx) = mpsc::unbounded_channel::<HistoryRecord>();
        {
            let stats = Arc::clone(&writer_stats);
            tokio::spawn(async move {
                while let Some(r) = counted_rx.recv().await {
                    stats.records.sent.fetch_add(1, Ordering::AcqRel);
                    if orders_tx.send(r).is_err() {
                        break;
                    }
                }
            });
        }
        let accounts = Arc::new(Accounts::new(
            &accounts_list,
            symbols.clone(),
            Arc::clone(&hub),
            Some(counted_tx),
            venue.assets.clone(),
            Duration::from_millis(config.exchange.answer_timeout_ms),
        ));
        // Open orders left from an earlier run.
        let symbol_of = |id: u32| symbols.index_of(peregrine_types::InstrumentId(id));
        for &a in &accounts_list {
            for o in history::read::open_orders(&pool, a, &symbol_of).await? {
                accounts.lock(AccountId(a)).restore(o);
            }
        }
        // One session per account, logged in with its key, resuming its report stream
        // where the history store left it.
        let sink = AccountsSink(Arc::clone(&accounts));
        let key_file = match &config.exchange.keys {
            Some(path) => Some((path, KeyFile::load(path)?)),
            None => None,
        };
        let mut sessions = HashMap::new();
        for k in &config.api_keys {
            let account = AccountId(k.account);
            let key = match &key_file {
                Some((path, file)) => file.key(account).ok_or(KeyError::Missing {
                    path: path.display().to_string(),
                    account: k.account,
                })?,
                None => continue, // validate() refuses api_keys without a key file
            };
            let spec = SessionSpec {
                addrs: venue.order_entry.clone(),
                account,
                key,
                resume_from: history::read::report_cursor(&pool, k.account).await?,
                queue: 16_384,
            };
            sessions.insert(k.account, session::spawn(spec, Arc::new(sink.clone())));
        }
        accounts.attach(sessions);
        let writer = Writer::new(
            pool.clone(),
            venue.recovery.clone(),
            config.history.batch,
            Arc::clone(&writer_stats),
        )
        .await?
        .with_linger(std::time::Duration::from_millis(config.history.linger_ms));
        tokio::spawn(writer.run(feed_rx, orders_rx));
        let settings = FeedSettings {
            bind: venue.feed,
            interface: venue.feed_interface,
            recovery: venue.recovery.clone(),
            instruments: venue.instruments.iter().map(|s| s.id).collect(),
        };
        let consumer = MarketFeed::new(Arc::clone(&market), Arc::clone(&hub), Some(feed_tx));
        feed::spawn(settings, consumer, Arc::clone(&stop))
            .map_err(|e| StartError::Feed(venue.feed, e))?;
        let keys = Keys::new(&config.api_keys);
        let limits = RateLimits::new(&config.limits);
        let listen_keys = ListenKeys::new(Duration::from_secs(config.ws.listen_key_ttl_min * 60));
        let engine = config.engine.control_socket.clone();
        Ok(Arc::new(App {
            config,
            venue,
            market,
            hub,
            accounts,
            keys,
            limits,
            listen_keys,
            pool,
            writer: writer_stats,
            engine,
            started: Instant::now(),
            stop,
        }))
    }
}
