//! Proves encoding and decoding never allocate: a counting global allocator wraps the
//! system allocator and counts allocations made by the current thread while a
//! closure runs (thread-local, so the test harness's own threads do not interfere).
use peregrine_testkit::allocations_during;
use peregrine_wire::auth::AccountKey;
use peregrine_wire::md::packet::{PacketBuilder, PacketReader, DEFAULT_MTU};
use peregrine_wire::md::recovery::Recovery;
use peregrine_wire::md::MdMessage;
use peregrine_wire::stream::RecvBuffer;
use peregrine_wire::v2::Message;
use peregrine_wire::{v2, WireMessage};

#[global_allocator]
static GLOBAL: peregrine_testkit::CountingAllocator = peregrine_testkit::CountingAllocator;

fn v2_round_trips() {
    let mut buf = [0u8; 128];
    for i in 0..v2::Message::MESSAGES.len() {
        let m = v2::Message::sample(i, &[i as u64, 7, 9, 11]);
        let n = m.encode(&mut buf).unwrap();
        let (got, used) = v2::decode(&buf[..n]).unwrap();
        assert!(got == m && used == n);
        assert!(v2::decode(&buf[..n - 1]).unwrap_err().is_incomplete());
        let _ = v2::Inbound::decode(&buf[..n]);
        if let Ok((mut o, _)) = v2::Outbound::decode(&buf[..n]) {
            o.set_report_seq(5);
            std::hint::black_box(o.report());
        }
    }
    buf[2] = 0x7f;
    assert!(v2::decode(&buf).is_err());
}

/// The server's side of a login: verify a proof (SHA-256 and HMAC on the stack).
fn login_verify(key: &AccountKey, login: &v2::session::Login) {
    assert!(login.verify(&key.stored(), &[9; 32]));
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
    let mut wire = [0u8; 4096];
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
    v2_round_trips();
    assert_eq!(allocations_during(v2_round_trips), 0, "order entry");
    let key = AccountKey([3; 32]);
    let mut login = v2::session::Login::sample(&[1, 2, 3]);
    login.proof = login.proof_for(&key, &[9; 32]);
    login_verify(&key, &login);
    assert_eq!(
        allocations_during(|| login_verify(&key, &login)),
        0,
        "login proof check"
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
