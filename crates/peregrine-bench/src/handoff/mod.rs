//! Two-thread hand-off bench (placeholder until it lands).

/// Arguments of `peregrine bench handoff`.
#[derive(Debug, clap::Args)]
pub struct HandoffArgs {
    /// Write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<std::path::PathBuf>,
}

/// Runs the hand-off bench.
pub fn run(_args: HandoffArgs) -> anyhow::Result<()> {
    anyhow::bail!("the hand-off bench is not built yet")
}
