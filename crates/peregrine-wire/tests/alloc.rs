//! Proves encoding and decoding never allocate: a counting global allocator wraps the
//! system allocator and counts allocations made by the current thread while a
//! closure runs (thread-local, so the test harness's own threads do not interfere).
#![allow(
    unsafe_code,
    reason = "a #[global_allocator] must implement the unsafe GlobalAlloc trait; test-only, \
              each block forwards to System unchanged"
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use peregrine_wire::md::packet::{PacketBuilder, PacketReader, DEFAULT_MTU};
use peregrine_wire::md::recovery::Recovery;
use peregrine_wire::md::MdMessage;
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::{decode, Inbound, Message, Outbound};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: every method forwards to `System` with the same arguments, so `System`'s
// guarantees hold unchanged. The only addition is a thread-local counter bump; the
// counter is a `const`-initialised `Cell`, so touching it never allocates or reenters.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` above with this `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations_during(f: impl FnOnce()) -> u64 {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

fn order_entry_round_trips() {
    let mut buf = [0u8; 128];
    for i in 0..Message::MESSAGES.len() {
        let m = Message::sample(i, &[i as u64, 7, 9, 11]);
        let n = m.encode(&mut buf).unwrap();
        let (got, used) = decode(&buf[..n]).unwrap();
        assert!(got == m && used == n);
        let _ = Inbound::decode(&buf[..n]);
        let _ = Outbound::decode(&buf[..n]);
        assert!(decode(&buf[..n - 1]).unwrap_err().is_incomplete());
    }
    buf[2] = 0x7f;
    assert!(decode(&buf).is_err());
}

fn recovery_round_trips() {
    let mut buf = [0u8; 128];
    for i in 0..Recovery::MESSAGES.len() {
        let m = Recovery::sample(i, &[i as u64, 3]);
        let n = m.encode(&mut buf).unwrap();
        assert_eq!(Recovery::decode(&buf[..n]), Ok((m, n)));
    }
}

fn packet_round_trip() {
    let mut buf = [0u8; DEFAULT_MTU];
    let mut b = PacketBuilder::new(&mut buf, 1, 1).unwrap();
    let mut i = 0;
    while b.push(MdMessage::sample(i, &[i as u64])).is_ok() {
        i += 1;
    }
    let packet = b.finish();
    let mut seen = 0;
    for item in PacketReader::new(packet).unwrap() {
        let (seq, _) = item.unwrap();
        seen += 1;
        assert_eq!(seq, seen);
    }
    assert_eq!(seen as usize, i);
}

fn stream_reassembly(rx: &mut RecvBuffer<512>) {
    let mut wire = [0u8; 1024];
    let mut len = 0;
    for i in 0..Message::MESSAGES.len() {
        len += Message::sample(i, &[3]).encode(&mut wire[len..]).unwrap();
    }
    let (mut sent, mut got) = (0, 0);
    while sent < len {
        let spare = rx.spare();
        let n = spare.len().min(13).min(len - sent);
        spare[..n].copy_from_slice(&wire[sent..sent + n]);
        rx.commit(n);
        sent += n;
        while rx.next(Message::decode).unwrap().is_some() {
            got += 1;
        }
    }
    assert_eq!(got, Message::MESSAGES.len());
}

#[test]
fn encode_and_decode_allocate_nothing() {
    // Warm up once: the first run may touch lazily initialised runtime state.
    order_entry_round_trips();
    assert_eq!(
        allocations_during(order_entry_round_trips),
        0,
        "order entry"
    );
    assert_eq!(allocations_during(recovery_round_trips), 0, "recovery");
    assert_eq!(
        allocations_during(packet_round_trip),
        0,
        "market-data packets"
    );
    let mut rx = RecvBuffer::<512>::new();
    assert_eq!(
        allocations_during(|| stream_reassembly(&mut rx)),
        0,
        "stream reassembly"
    );
    // The counter works: a Vec does allocate.
    assert_eq!(
        allocations_during(|| drop(std::hint::black_box(vec![1u8; 16]))),
        1
    );
}
