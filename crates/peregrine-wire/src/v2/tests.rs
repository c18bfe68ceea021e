use super::*;
use crate::WireMessage;

#[test]
fn families_partition_message() {
    assert_eq!(
        Inbound::MESSAGES.len() + Outbound::MESSAGES.len(),
        Message::MESSAGES.len()
    );
    for d in Inbound::MESSAGES {
        assert!(
            d.msg_type < 0x80,
            "{}: inbound codes have the top bit clear",
            d.name
        );
        assert_eq!(Outbound::size_of_type(d.msg_type), None);
    }
    for d in Outbound::MESSAGES {
        assert!(
            d.msg_type >= 0x80,
            "{}: outbound codes have the top bit set",
            d.name
        );
    }
}

#[test]
fn type_codes_are_unique_and_v1_types_keep_their_code_and_prefix() {
    let mut codes: Vec<u8> = Message::MESSAGES.iter().map(|d| d.msg_type).collect();
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), Message::MESSAGES.len());
    // A v2 layout of a v1 type is the v1 layout with fields appended: same code,
    // every v1 field at the same offset with the same size and type.
    for v1 in crate::Message::MESSAGES {
        let Some(v2) = Message::MESSAGES.iter().find(|d| d.msg_type == v1.msg_type) else {
            continue;
        };
        assert_eq!(v1.name, v2.name);
        assert!(v2.size >= v1.size, "{}", v1.name);
        let shape = |f: &crate::FieldDesc| (f.name, f.offset, f.size, f.wire_type);
        let v1_shape: Vec<_> = v1.fields.iter().map(shape).collect();
        let v2_shape: Vec<_> = v2.fields[..v1.fields.len()].iter().map(shape).collect();
        assert_eq!(v2_shape, v1_shape, "{} is a v1 prefix", v1.name);
        assert_eq!(
            v2.version == 1,
            v2.size == v1.size,
            "{}: bigger means version 2",
            v1.name
        );
    }
}

#[test]
fn appended_eight_byte_fields_stay_aligned() {
    for d in Message::MESSAGES {
        for f in d.fields {
            if f.size == 8 || f.size == 4 || f.size == 2 {
                assert_eq!(
                    f.offset % f.size,
                    0,
                    "{}.{} at {}",
                    d.name,
                    f.name,
                    f.offset
                );
            }
        }
    }
}

#[test]
fn report_accessors_stamp_every_stream_message() {
    for i in 0..Outbound::MESSAGES.len() {
        let mut m = Outbound::sample(i, &[7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
        m.set_session_seq(42);
        assert_eq!(m.session_seq(), 42);
        assert_eq!((m.engine_seq(), m.engine_time().0), (8, 9));
        m.set_report_seq(5);
        match m.report() {
            Some((_, seq)) => assert_eq!(seq, 5),
            None => assert!(!m.is_report_type(), "{}", m.desc().name),
        }
        m.set_report_seq(0);
        assert_eq!(m.report(), None);
        assert_eq!(Message::from(m).msg_type(), m.msg_type());
    }
}

#[test]
fn a_v1_login_and_v1_reports_are_refused_by_version_2_decoders() {
    let mut buf = [0u8; 128];
    let n = crate::session::Login::sample(&[1])
        .encode(&mut buf)
        .unwrap();
    assert_eq!(
        Inbound::decode(&buf[..n]),
        Err(DecodeError::UnknownType(0x01))
    );
    let n = crate::reports::Fill::sample(&[1]).encode(&mut buf).unwrap();
    assert_eq!(
        Outbound::decode(&buf[..n]),
        Err(DecodeError::BadVersion {
            msg_type: 0x92,
            version: 1
        })
    );
    // ... and a version-1 decoder refuses a version-3 fill.
    let n = reports::Fill::sample(&[1]).encode(&mut buf).unwrap();
    assert_eq!(
        crate::Outbound::decode(&buf[..n]),
        Err(DecodeError::BadVersion {
            msg_type: 0x92,
            version: 3
        })
    );
}

#[test]
fn unchanged_requests_decode_in_both_versions() {
    for i in 0..crate::Inbound::MESSAGES.len() {
        let m = crate::Inbound::sample(i, &[3, 4, 5, 6]);
        let mut buf = [0u8; 128];
        let n = m.encode(&mut buf).unwrap();
        if matches!(m, crate::Inbound::Login(_)) {
            continue;
        }
        let (v2, used) = Inbound::decode(&buf[..n]).unwrap();
        assert_eq!(used, n);
        assert_eq!(Message::from(v2).msg_type(), m.msg_type());
    }
}
