//! Writes seed inputs for the fuzz targets of the version-2 decoders: one file per
//! message type (a valid encoding), plus a few truncated and corrupted variants.
//!
//! `cargo run -p peregrine-wire --example fuzz_seeds -- fuzz/seeds`

use std::path::PathBuf;

use peregrine_wire::md::recovery::Recovery;
use peregrine_wire::{v2, MAX_MESSAGE_SIZE};

fn main() -> std::io::Result<()> {
    let root = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "fuzz/seeds".into()),
    );
    let dir = root.join("decode_order_entry_v2");
    std::fs::create_dir_all(&dir)?;
    let mut buf = [0u8; MAX_MESSAGE_SIZE];
    for (i, d) in v2::Message::MESSAGES.iter().enumerate() {
        let n = v2::Message::sample(i, &[i as u64 + 1, 7, 42, 1 << 40])
            .encode(&mut buf)
            .map_err(std::io::Error::other)?;
        std::fs::write(dir.join(d.name), &buf[..n])?;
        std::fs::write(dir.join(format!("{}-cut", d.name)), &buf[..n / 2])?;
    }
    let dir = root.join("decode_recovery");
    std::fs::create_dir_all(&dir)?;
    for (i, d) in Recovery::MESSAGES.iter().enumerate() {
        let n = Recovery::sample(i, &[i as u64 + 1, 3, 99])
            .encode(&mut buf)
            .map_err(std::io::Error::other)?;
        std::fs::write(dir.join(d.name), &buf[..n])?;
    }
    println!("seeds written under {}", root.display());
    Ok(())
}
