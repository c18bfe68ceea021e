//! The exported `engine_*` symbols, driven as the harness drives them: a transport of
#![allow(unsafe_code)] // Drives the exported C symbols and is their transport.
//! C function pointers, one message per call and in batches.

use std::ffi::c_void;
use std::sync::Mutex;

use peregrine_capi::ffi::*;
use peregrine_capi::{Adapter, MsgBody, Report, TaggedMsg, Transport};

use super::util::*;

/// The reports the transport received (the handle is unused: one transport).
static RECEIVED: Mutex<Vec<Report>> = Mutex::new(Vec::new());

unsafe extern "C" fn push(_handle: *mut c_void, report: *const Report) -> i32 {
    // SAFETY: the engine passes a valid report.
    RECEIVED.lock().unwrap().push(unsafe { *report });
    1
}

fn transport() -> Transport {
    Transport {
        create: None,
        push: Some(push),
        drain: None,
        flush: None,
        destroy: None,
    }
}

fn tagged(kind: u8, body: MsgBody) -> TaggedMsg {
    TaggedMsg {
        kind,
        reserved: [0; 7],
        body,
    }
}

/// A short session touching every report kind, per message and then as one batch,
/// checked against the same messages through the in-process adapter.
#[test]
fn exported_symbols_emit_the_adapters_reports_per_message_and_in_batches() {
    let msgs = [
        tagged(
            0,
            MsgBody {
                new_order: new(1, 1, SELL, 100, 5),
            },
        ),
        tagged(
            0,
            MsgBody {
                new_order: new(2, 2, SELL, 101, 5),
            },
        ),
        tagged(
            0,
            MsgBody {
                new_order: ioc(3, 3, BUY, 100, 7),
            },
        ),
        tagged(
            2,
            MsgBody {
                modify: modify(2, 4, SELL, 99, 6),
            },
        ),
        tagged(
            0,
            MsgBody {
                new_order: new(4, 5, BUY, 98, 5),
            },
        ),
        tagged(
            2,
            MsgBody {
                modify: modify(4, 6, BUY, 99, 2),
            },
        ),
        tagged(
            1,
            MsgBody {
                cancel: cancel(2, 7),
            },
        ),
        tagged(
            1,
            MsgBody {
                cancel: cancel(2, 8),
            },
        ),
        tagged(
            2,
            MsgBody {
                modify: modify(2, 9, SELL, 99, 1),
            },
        ),
        tagged(
            9,
            MsgBody {
                cancel: cancel(4, 10),
            },
        ),
        tagged(
            0,
            MsgBody {
                new_order: new(5, 11, BUY, 97, 3),
            },
        ),
    ];
    let mut expected = Vec::new();
    let mut adapter = Adapter::new();
    for m in &msgs {
        // SAFETY: the tags above name the live arms.
        unsafe {
            match m.kind {
                0 => adapter.on_new(&m.body.new_order, &mut expected),
                1 => adapter.on_cancel(&m.body.cancel, &mut expected),
                2 => adapter.on_modify(&m.body.modify, &mut expected),
                _ => {}
            }
        }
    }
    let kinds: std::collections::BTreeSet<u8> = expected.iter().map(|r| r.kind).collect();
    assert_eq!(kinds.len(), 6, "the session covers every report kind");

    let t = transport();
    // Queries before init answer as for an empty book.
    assert_eq!(engine_query_best_bid(), i64::MIN);
    for batched in [false, true] {
        RECEIVED.lock().unwrap().clear();
        // SAFETY: `t` outlives the engine (shut down below); the handle is unused.
        unsafe { engine_init(23, &t, std::ptr::null_mut()) };
        if batched {
            // SAFETY: a valid array of tagged messages.
            unsafe { engine_on_batch(msgs.as_ptr(), msgs.len() as u32) };
        } else {
            for m in &msgs {
                // SAFETY: valid messages, tags naming the live arms.
                unsafe {
                    match m.kind {
                        0 => engine_on_new_order(&m.body.new_order),
                        1 => engine_on_cancel(&m.body.cancel),
                        2 => engine_on_modify(&m.body.modify),
                        _ => {}
                    }
                }
            }
        }
        engine_flush();
        assert_eq!(*RECEIVED.lock().unwrap(), expected, "batched: {batched}");
        assert_eq!(engine_query_best_bid(), adapter.best_bid());
        assert_eq!(engine_query_best_ask(), adapter.best_ask());
        assert_eq!(engine_query_depth_at(97, BUY), adapter.depth_at(97, BUY));
        assert_eq!(engine_query_depth_at(97, BUY), 3);
        assert_eq!(peregrine_capi_refused_new(), 0);
        engine_shutdown();
    }
    assert_eq!(engine_query_best_ask(), i64::MAX);
}
