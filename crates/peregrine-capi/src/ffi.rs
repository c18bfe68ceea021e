//! The exported C symbols (`engine_*`): one process-wide engine behind a mutex,
//! reports pushed into the caller's transport.
//!
//! Every entry point takes the mutex, so calls from several threads are serialised
//! (the harness calls from one thread; the lock is then uncontended). A call before
//! `engine_init` or after `engine_shutdown` does nothing (queries answer as for an
//! empty book). Matching is synchronous: every report is pushed before the call
//! returns, so `engine_flush` has nothing to wait for.
#![allow(unsafe_code)] // C entry points: raw pointers from the caller.

use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard};

use peregrine_book::prefetch;

use crate::abi::{CancelMsg, ModifyMsg, NewOrderMsg, Report, TaggedMsg, Transport};
use crate::adapter::{Adapter, Msg, ReportSink};

/// The caller's report queue.
struct TransportSink {
    push: Option<unsafe extern "C" fn(*mut c_void, *const Report) -> i32>,
    handle: *mut c_void,
}

// SAFETY: the handle is only used under the ENGINE mutex, one thread at a time, and
// the transport's contract is that its producer side may be driven from the thread
// that drives the engine; the pointer itself carries no thread affinity.
unsafe impl Send for TransportSink {}

impl ReportSink for TransportSink {
    #[inline]
    fn push(&mut self, report: &Report) {
        let Some(push) = self.push else { return };
        // SAFETY: `push` and `handle` come from `engine_init`, whose caller keeps the
        // transport alive until `engine_shutdown`; `report` is a valid 64-byte report.
        while unsafe { push(self.handle, report) } == 0 {
            std::hint::spin_loop();
        }
    }
}

struct Engine {
    adapter: Adapter,
    sink: TransportSink,
}

static ENGINE: Mutex<Option<Engine>> = Mutex::new(None);

fn engine() -> MutexGuard<'static, Option<Engine>> {
    // A panic cannot unwind out of an `extern "C"` function (it aborts), so a
    // poisoned lock only means an earlier caller's thread died: the state is whole.
    ENGINE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Creates the engine (allocating all of its memory) and keeps the transport that
/// reports are pushed into. A second call replaces the engine with an empty one.
/// `transport` may be null: reports are then dropped.
///
/// # Safety
/// `transport`, if not null, points to a valid transport whose functions and
/// `report_sink` stay valid until `engine_shutdown`.
#[no_mangle]
pub unsafe extern "C" fn engine_init(
    _seed: u64,
    transport: *const Transport,
    report_sink: *mut c_void,
) {
    // SAFETY: the caller passes a valid transport or null.
    let push = unsafe { transport.as_ref() }.and_then(|t| t.push);
    let e = Engine {
        adapter: Adapter::new(),
        sink: TransportSink {
            push,
            handle: report_sink,
        },
    };
    *engine() = Some(e);
}

/// Frees the engine.
#[no_mangle]
pub extern "C" fn engine_shutdown() {
    let old = engine().take();
    drop(old);
}

/// Processes a new order.
///
/// # Safety
/// `order` points to a valid `new_order_t` (null is ignored).
#[no_mangle]
pub unsafe extern "C" fn engine_on_new_order(order: *const NewOrderMsg) {
    // SAFETY: the caller passes a valid message or null.
    let Some(m) = (unsafe { order.as_ref() }) else {
        return;
    };
    if let Some(e) = engine().as_mut() {
        e.adapter.on_new(m, &mut e.sink);
    }
}

/// Processes a cancel.
///
/// # Safety
/// `cancel` points to a valid `cancel_t` (null is ignored).
#[no_mangle]
pub unsafe extern "C" fn engine_on_cancel(cancel: *const CancelMsg) {
    // SAFETY: the caller passes a valid message or null.
    let Some(m) = (unsafe { cancel.as_ref() }) else {
        return;
    };
    if let Some(e) = engine().as_mut() {
        e.adapter.on_cancel(m, &mut e.sink);
    }
}

/// Processes a modify (cancel + reinsert).
///
/// # Safety
/// `modify` points to a valid `modify_t` (null is ignored).
#[no_mangle]
pub unsafe extern "C" fn engine_on_modify(modify: *const ModifyMsg) {
    // SAFETY: the caller passes a valid message or null.
    let Some(m) = (unsafe { modify.as_ref() }) else {
        return;
    };
    if let Some(e) = engine().as_mut() {
        e.adapter.on_modify(m, &mut e.sink);
    }
}

/// Processes `n` tagged messages in order, each exactly as if delivered alone. An
/// unknown tag is skipped.
///
/// # Safety
/// `msgs` points to `n` valid `me_msg_t` whose `type` names the live union arm
/// (null is ignored).
#[no_mangle]
pub unsafe extern "C" fn engine_on_batch(msgs: *const TaggedMsg, n: u32) {
    if msgs.is_null() || n == 0 {
        return;
    }
    // SAFETY: the caller passes `n` valid messages.
    let msgs = unsafe { std::slice::from_raw_parts(msgs, n as usize) };
    let mut guard = engine();
    let Some(e) = guard.as_mut() else { return };
    e.adapter.on_batch(
        msgs.len(),
        |i| {
            // The messages stream in from the caller's memory: ask for each one
            // MSG_AHEAD messages before it is decoded (the adapter's own lookahead reads
            // a message a few places ahead, which otherwise waits for that line).
            if let Some(ahead) = msgs.get(i + MSG_AHEAD) {
                prefetch(ahead);
            }
            decode(&msgs[i])
        },
        &mut e.sink,
    );
}

/// How many messages ahead of its decoding [`engine_on_batch`] starts loading a
/// message (40 bytes each: 16 is ten cache lines, about 1.5 us of matching).
const MSG_AHEAD: usize = 16;

/// The message a tagged message holds (`None`: unknown tag).
#[inline]
fn decode(m: &TaggedMsg) -> Option<Msg<'_>> {
    // SAFETY: `kind` names the live arm (the caller's contract); every arm is plain
    // old data, so reading it cannot produce an invalid value.
    unsafe {
        match m.kind {
            0 => Some(Msg::New(&m.body.new_order)),
            1 => Some(Msg::Cancel(&m.body.cancel)),
            2 => Some(Msg::Modify(&m.body.modify)),
            _ => None,
        }
    }
}

/// The pipeline barrier: matching is synchronous, so every report is already pushed.
#[no_mangle]
pub extern "C" fn engine_flush() {}

/// Best bid in ticks, or `INT64_MIN` when no bid rests.
#[no_mangle]
pub extern "C" fn engine_query_best_bid() -> i64 {
    engine().as_ref().map_or(i64::MIN, |e| e.adapter.best_bid())
}

/// Best ask in ticks, or `INT64_MAX` when no ask rests.
#[no_mangle]
pub extern "C" fn engine_query_best_ask() -> i64 {
    engine().as_ref().map_or(i64::MAX, |e| e.adapter.best_ask())
}

/// Resting quantity at one price on one side (0 buy, 1 sell).
#[no_mangle]
pub extern "C" fn engine_query_depth_at(price_ticks: i64, side: u8) -> u64 {
    engine()
        .as_ref()
        .map_or(0, |e| e.adapter.depth_at(price_ticks, side))
}

/// Peregrine's own addition: how many new orders were refused without a report
/// (input outside the domain: see docs/capi.md).
#[no_mangle]
pub extern "C" fn peregrine_capi_refused_new() -> u64 {
    engine()
        .as_ref()
        .map_or(0, |e| e.adapter.stats().refused_new)
}

/// Peregrine's own addition: how many modifies of a resting order were answered
/// with a ModifyReject because the new price or quantity is outside the domain.
#[no_mangle]
pub extern "C" fn peregrine_capi_refused_modify() -> u64 {
    engine()
        .as_ref()
        .map_or(0, |e| e.adapter.stats().refused_modify)
}
