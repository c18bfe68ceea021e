//! Reference data: instrument definitions, sent after `LoginAccepted` on order entry
//! and on request on the feed's recovery channel.

include!(concat!(env!("OUT_DIR"), "/msg_v2__reference.rs"));
