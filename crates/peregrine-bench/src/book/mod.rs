//! The order-book bench (placeholder until the book lands).

/// Arguments of `peregrine bench book`.
#[derive(Debug, clap::Args)]
pub struct BookArgs {
    /// Write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<std::path::PathBuf>,
}

/// Runs the book bench.
pub fn run(_args: BookArgs) -> anyhow::Result<()> {
    anyhow::bail!("the book bench is not built yet")
}
