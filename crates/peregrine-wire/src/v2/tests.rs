use super::*;

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
fn type_codes_are_unique() {
    let mut codes: Vec<u8> = Message::MESSAGES.iter().map(|d| d.msg_type).collect();
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), Message::MESSAGES.len());
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

/// A version-1 message: its header (the given type, version 1, `size` bytes) and
/// zeros.
fn v1_frame(msg_type: u8, size: u8) -> [u8; 128] {
    let mut buf = [0u8; 128];
    buf[0] = size;
    buf[2] = msg_type;
    buf[3] = 1;
    buf
}

#[test]
fn a_v1_login_and_v1_reports_are_refused_by_version_2_decoders() {
    let login = v1_frame(0x01, 32);
    assert_eq!(
        Inbound::decode(&login[..32]),
        Err(DecodeError::UnknownType(0x01))
    );
    let fill = v1_frame(0x92, 86);
    assert_eq!(
        Outbound::decode(&fill[..86]),
        Err(DecodeError::BadVersion {
            msg_type: 0x92,
            version: 1
        })
    );
}

#[test]
fn the_report_types_are_exactly_the_account_stream_reports() {
    let reports: Vec<&str> = (0..Outbound::MESSAGES.len())
        .filter(|&i| Outbound::sample(i, &[1]).is_report_type())
        .map(|i| Outbound::MESSAGES[i].name)
        .collect();
    assert_eq!(
        reports,
        [
            "Accepted",
            "Rejected",
            "Fill",
            "Cancelled",
            "Replaced",
            "CancelRejected",
            "MassCancelDone",
            "Balance",
            "AdminRejected"
        ],
        "a query answer that reflects a report_seq is not a report"
    );
}
