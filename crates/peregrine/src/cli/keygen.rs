//! `peregrine keygen`: new random account keys. The keys go to a client key file
//! (mode 0600, never overwritten); what the exchange needs — the SHA-256 of each key,
//! never the key — goes to an accounts file (or stdout) for its `accounts_file` or
//! `[[accounts]]`.

use std::path::PathBuf;

use anyhow::{bail, Context};
use peregrine_client::keys::KeyFile;
use peregrine_types::AccountId;

/// `peregrine keygen` arguments.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct KeygenArgs {
    /// Accounts to make keys for: ids and ranges, e.g. `1-16,99`.
    #[arg(long)]
    pub accounts: String,
    /// Of those, the admin accounts (deposits, withdrawals): e.g. `99`.
    #[arg(long, default_value = "")]
    pub admin: String,
    /// Of those, the operator accounts (drop copies of any account or all).
    #[arg(long, default_value = "")]
    pub operator: String,
    /// Where the keys go (the clients' secret; created with mode 0600).
    #[arg(long)]
    pub keys_out: PathBuf,
    /// Where the exchange's `[[accounts]]` entries go (stored key hashes only);
    /// default: printed on stdout.
    #[arg(long)]
    pub accounts_out: Option<PathBuf>,
}

/// Parses `1-16,99` into account ids.
pub(crate) fn parse_ids(text: &str) -> anyhow::Result<Vec<AccountId>> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse::<u32>()?, b.trim().parse::<u32>()?),
            None => {
                let v = part.parse::<u32>()?;
                (v, v)
            }
        };
        if lo > hi || hi == u32::MAX {
            bail!("bad account range {part:?}");
        }
        out.extend((lo..=hi).map(AccountId));
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Writes the key file and the accounts file (or prints the entries).
pub(crate) fn run(args: KeygenArgs) -> anyhow::Result<()> {
    let accounts = parse_ids(&args.accounts).context("--accounts")?;
    let admins = parse_ids(&args.admin).context("--admin")?;
    let operators = parse_ids(&args.operator).context("--operator")?;
    if accounts.is_empty() {
        bail!("--accounts names no account");
    }
    for a in admins.iter().chain(&operators) {
        if !accounts.contains(a) {
            bail!("account {a} has a role but is not in --accounts");
        }
    }
    if let Some(out) = &args.accounts_out {
        if out.exists() {
            bail!("{} exists: refusing to overwrite it", out.display());
        }
    }
    let file = KeyFile::generate(&accounts)?;
    file.save_new(&args.keys_out)?;
    let entries = file.exchange_accounts(&admins, &operators);
    match &args.accounts_out {
        Some(out) => {
            if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)?;
            }
            let header = "# Peregrine exchange accounts (stored key hashes, no secrets): \
                          use it as accounts_file.\n";
            std::fs::write(out, format!("{header}{entries}"))
                .with_context(|| format!("writing {}", out.display()))?;
            println!(
                "{} key(s) written to {} (secret, mode 0600); the exchange's entries to {}",
                accounts.len(),
                args.keys_out.display(),
                out.display()
            );
        }
        None => print!("{entries}"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_ranges() {
        let ids = parse_ids("3, 1-2,99,2").unwrap();
        assert_eq!(ids, [1, 2, 3, 99].map(AccountId));
        assert!(parse_ids("5-1").is_err());
        assert!(parse_ids("x").is_err());
        assert!(parse_ids("").unwrap().is_empty());
    }
}
