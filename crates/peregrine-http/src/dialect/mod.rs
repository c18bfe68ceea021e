//! What the REST API and the WebSocket API share of Binance's dialect: error codes and
//! statuses ([`error`]), parameters ([`params`]), API keys and signatures ([`auth`]),
//! rate limits ([`limits`]), connection slots ([`slots`]) and the user data stream's
//! listen keys ([`listen`]). Plain code below the app: it knows no handler.

pub mod auth;
pub mod error;
pub mod limits;
pub mod listen;
pub mod params;
pub mod slots;
