//! ExecIDs unique across the venue (and so per day): `<account>-<n>` for the report
//! the account's report stream numbers `n` (the same report always gets the same
//! ExecID, whichever run of the gateway makes it), `<account>-G<n>` for a report
//! the gateway makes itself (refusals, status), `n` from a counter started at the
//! wall clock in ns and continued from the store. Each account's report stream is
//! its own, so the account makes the numbers of different sessions differ.

use super::Bridge;

/// An ExecID as text, on the stack (no allocation per report).
#[derive(Debug, Clone, Copy)]
pub(super) struct ExecId {
    buf: [u8; 44],
    len: usize,
}

impl ExecId {
    fn new(account: u32, gateway: bool, n: u64) -> ExecId {
        let mut id = ExecId {
            buf: [0; 44],
            len: 0,
        };
        id.number(u64::from(account));
        id.push(b'-');
        if gateway {
            id.push(b'G');
        }
        id.number(n);
        id
    }

    fn push(&mut self, b: u8) {
        self.buf[self.len] = b;
        self.len += 1;
    }

    fn number(&mut self, mut n: u64) {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        for &d in &digits[i..] {
            self.push(d);
        }
    }

    /// The text of tag 17.
    pub(super) fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl Bridge {
    /// The ExecID of the report being made: the exchange report's, if one is being
    /// turned into FIX, else a fresh gateway one.
    pub(super) fn exec_id(&mut self) -> ExecId {
        match self.current_report {
            Some(n) => ExecId::new(self.account, false, n),
            None => self.gateway_exec_id(),
        }
    }

    /// A fresh ExecID for a report the gateway makes itself.
    pub(super) fn gateway_exec_id(&mut self) -> ExecId {
        ExecId::new(self.account, true, self.table.exec_id())
    }
}

#[cfg(test)]
mod tests {
    use super::ExecId;

    #[test]
    fn exec_ids_name_the_account() {
        assert_eq!(ExecId::new(3, false, 17).as_bytes(), b"3-17");
        assert_eq!(ExecId::new(4, false, 17).as_bytes(), b"4-17");
        assert_eq!(ExecId::new(3, true, 17).as_bytes(), b"3-G17");
        let max = ExecId::new(u32::MAX, true, u64::MAX);
        assert_eq!(max.as_bytes(), b"4294967295-G18446744073709551615");
    }
}
