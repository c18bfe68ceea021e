//! Order requests, client → exchange: `NewOrder`, `Cancel`, `Replace`, `MassCancel`.
//! Unchanged since version 1; declared in `schema/protocol.xml`.

include!(concat!(env!("OUT_DIR"), "/msg_orders.rs"));
