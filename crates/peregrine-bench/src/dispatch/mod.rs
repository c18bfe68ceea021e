//! The dispatch bench (placeholder until it lands).

/// Arguments of `peregrine bench dispatch`.
#[derive(Debug, clap::Args)]
pub struct DispatchArgs {
    /// The `key: value` config file.
    #[arg(long, default_value = "config.small.yaml")]
    pub config: std::path::PathBuf,
}

/// Runs the dispatch bench.
pub fn run(_args: DispatchArgs) -> anyhow::Result<()> {
    anyhow::bail!("the dispatch bench is not built yet")
}
