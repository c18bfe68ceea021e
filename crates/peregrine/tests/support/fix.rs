//! The FIX gateway as a process, for the FIX tests.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};

/// A running `peregrine gateway fix`.
pub struct Gateway {
    /// The process.
    pub child: Child,
    /// Its FIX listen address.
    pub addr: SocketAddr,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts a gateway for session CLIENT1 (account 1, FIX password `fix-pw`) in front
/// of the exchange at `exchange`; its log is `dir/gateway.log`.
pub fn start_gateway(dir: &std::path::Path, exchange: SocketAddr) -> Gateway {
    let config = dir.join("gateway-fix.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"127.0.0.1:0\"\nexchange = \"{exchange}\"\nstore_dir = \"{}\"\n\
             [[instruments]]\nsymbol = \"PGN-USD\"\nid = 1\nprice_decimals = 2\nqty_decimals = 0\n\
             [[sessions]]\ncomp_id = \"CLIENT1\"\npassword = \"fix-pw\"\naccount = 1\nexchange_password = \"pw1\"\n",
            dir.join("fix-store").display()
        ),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_peregrine"))
        .args(["gateway", "fix", "--config"])
        .arg(&config)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.join("gateway.log")).unwrap())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .strip_prefix("fix gateway listening on ")
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .parse()
        .unwrap();
    Gateway { child, addr }
}
