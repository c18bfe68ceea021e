//! The market-data side of the server: the UDP socket the core's feed packets leave
//! through ([`udp`]) and the TCP recovery service that answers snapshot and replay
//! requests from the core's state ([`recovery`]).

mod admission;
pub(crate) mod recovery;
pub(crate) mod udp;

use peregrine_exchange_core::{CommandLog, Core};

use recovery::{RecoveryServer, Source};
use udp::UdpFeed;

/// The feed's I/O, owned by the thread that owns the core.
#[derive(Debug, Default)]
pub(crate) struct FeedIo {
    /// The UDP socket (`None`: market data off).
    pub udp: Option<UdpFeed>,
    /// The recovery service (`None`: off).
    pub recovery: Option<RecoveryServer>,
}

impl FeedIo {
    /// Answers recovery clients from the core's state. Call between batches, after
    /// the batch's feed packets were sent. A snapshot is answered only while no feed
    /// message waits (see [`recovery::Source::consistent`]).
    pub(crate) fn poll_recovery<L: CommandLog>(&mut self, core: &Core<L>) {
        let Some(r) = self.recovery.as_mut() else {
            return;
        };
        let feed = core.feed();
        r.poll(Source {
            engine: core.engine(),
            session_id: feed.map_or(0, |f| f.session_id()),
            as_of_seq: feed.map_or(0, |f| f.next_seq() - 1),
            now: core.now(),
            engine_seq: core.engine_seq(),
            retained: feed.map(|f| f.retained()),
            consistent: feed.is_none_or(|f| f.pending() == 0),
        });
    }

    /// A snapshot request waits for the feed to catch up with the book.
    pub(crate) fn snapshot_waiting(&self) -> bool {
        self.recovery.as_ref().is_some_and(RecoveryServer::waiting)
    }
}
