//! Brings TradingView's Lightweight Charts (Apache-2.0, from the npm registry) into the
//! build for the trading page's price chart: `npm pack lightweight-charts@VERSION`
//! into `OUT_DIR`, the tarball checked against a pinned SHA-256, its standalone
//! production file extracted and compiled into the binary (`ui/mod.rs`). Nothing is
//! copied into the repository.
//!
//! Without npm or the registry (or with `PEREGRINE_NO_NPM` set) the build still
//! succeeds, with a warning: the page then draws its own simpler canvas charts.
//! `PEREGRINE_CHARTS_TGZ=PATH` uses a tarball already downloaded (it must have the
//! pinned checksum). docs/http.md, "The web pages".

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

const PACKAGE: &str = "lightweight-charts";
const VERSION: &str = "5.2.1";
/// SHA-256 of `lightweight-charts-5.2.1.tgz` as the registry serves it.
const SHA256: &str = "64310292298df4dd527494865e5d91d447f8bb397b68de3912c2a6465025ee5e";
const INSIDE: &str = "package/dist/lightweight-charts.standalone.production.js";
/// Longest `npm pack` may take (a registry that does not answer must not hang the build).
const NPM_TIMEOUT: Duration = Duration::from_secs(120);

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PEREGRINE_NO_NPM");
    println!("cargo:rerun-if-env-changed=PEREGRINE_CHARTS_TGZ");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let js = match fetch(&out) {
        Ok(js) => js,
        Err(e) => {
            println!(
                "cargo:warning=lightweight-charts {VERSION} not built in ({e}); the trading page \
                 draws its own simpler charts (docs/http.md, \"The web pages\")"
            );
            String::new()
        }
    };
    std::fs::write(out.join("lightweight-charts.js"), js).expect("writing OUT_DIR");
}

fn fetch(out: &Path) -> Result<String, String> {
    let tgz = match std::env::var_os("PEREGRINE_CHARTS_TGZ") {
        Some(p) => PathBuf::from(p),
        None if std::env::var_os("PEREGRINE_NO_NPM").is_some() => {
            return Err("PEREGRINE_NO_NPM is set".into())
        }
        None => {
            let tgz = out.join(format!("{PACKAGE}-{VERSION}.tgz"));
            if !checksum_ok(&tgz) {
                npm_pack(out)?;
            }
            tgz
        }
    };
    if !checksum_ok(&tgz) {
        return Err(format!(
            "{} is missing or not the pinned {PACKAGE} {VERSION}",
            tgz.display()
        ));
    }
    let status = Command::new("tar")
        .arg("xzf")
        .arg(&tgz)
        .arg("-C")
        .arg(out)
        .arg(INSIDE)
        .status()
        .map_err(|e| format!("running tar: {e}"))?;
    if !status.success() {
        return Err(format!("tar could not extract {INSIDE}"));
    }
    std::fs::read_to_string(out.join(INSIDE)).map_err(|e| format!("reading {INSIDE}: {e}"))
}

fn checksum_ok(tgz: &Path) -> bool {
    let Ok(bytes) = std::fs::read(tgz) else {
        return false;
    };
    let digest = Sha256::digest(&bytes);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    hex == SHA256
}

fn npm_pack(out: &Path) -> Result<(), String> {
    let mut child = Command::new("npm")
        .args([
            "pack",
            &format!("{PACKAGE}@{VERSION}"),
            "--silent",
            "--pack-destination",
        ])
        .arg(out)
        .current_dir(out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("running npm: {e}"))?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(s)) if s.success() => return Ok(()),
            Ok(Some(s)) => return Err(format!("npm pack failed ({s})")),
            Ok(None) if started.elapsed() > NPM_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("npm pack took over {NPM_TIMEOUT:?}"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => return Err(format!("waiting for npm: {e}")),
        }
    }
}
