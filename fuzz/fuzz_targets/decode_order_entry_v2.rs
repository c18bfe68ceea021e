//! Version-2 order-entry stream decoder (both directions): never panics; decoded
//! messages re-encode exactly; report accessors never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use peregrine_wire::v2;

fuzz_target!(|data: &[u8]| {
    if let Ok((msg, used)) = v2::Message::decode(data) {
        let mut buf = [0u8; peregrine_wire::MAX_MESSAGE_SIZE];
        let n = msg.encode(&mut buf).expect("a decoded message fits the size cap");
        assert_eq!(&buf[..n], &data[..used]);
    }
    if let Ok((mut out, _)) = v2::Outbound::decode(data) {
        let _ = out.report();
        out.set_report_seq(1);
        out.set_session_seq(1);
    }
    let _ = v2::Inbound::decode(data);
});
