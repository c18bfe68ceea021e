//! What `peregrine up` runs: the embedded configs, filled in for one run, and the
//! strategy processes with their venues.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;

/// Whether the engine gets its second venue, the exchange `up` starts, over TCP.
///
/// Off until the engine's exchange venue adapter (`[[venues]] exchange = {...}`) is on
/// main: an engine without it refuses the key. Switch it on and the maker and taker
/// trade at the real exchange (venue 1, `px`) while `sim-maker` stays on the
/// simulated venue; off, all three use the simulated venue and the exchange idles.
pub const EXCHANGE_VENUE: bool = true;

/// The multicast group of the run's market data (on loopback; the port is per run).
pub const MD_GROUP: &str = "239.255.76.1";

/// The exchange config, with `@ORDER_PORT@`, `@RECOVERY_PORT@`, `@MD_PORT@`, `@MD_GROUP@` and
/// `@ACCOUNTS@` (the generated accounts' stored keys) to fill.
const EXCHANGE_TOML: &str = include_str!("../../../../configs/up/exchange.toml");
/// The engine config, with `@NAME@`, `@SHM_DIR@`, `@EXCHANGE_ADDR@`, `@KEY_FILE@` to
/// fill, and the
/// exchange venue between the `#@exchange-venue-begin` / `-end` marker lines.
const ENGINE_TOML: &str = include_str!("../../../../configs/up/engine.toml");

/// The HTTP gateway's config, with `@EXCHANGE_ADDR@`, `@RECOVERY_ADDR@`, `@DIR@`,
/// `@CONTROL_SOCKET@`.
const GATEWAY_TOML: &str = include_str!("../../../../configs/up/gateway-http.toml");

/// The HTTP gateway config for this run.
pub fn gateway_toml(
    exchange: SocketAddr,
    recovery: SocketAddr,
    dir: &std::path::Path,
    control: &std::path::Path,
) -> String {
    GATEWAY_TOML
        .replace("@EXCHANGE_ADDR@", &exchange.to_string())
        .replace("@RECOVERY_ADDR@", &recovery.to_string())
        .replace("@DIR@", &dir.display().to_string())
        .replace("@CONTROL_SOCKET@", &control.display().to_string())
}

const VENUE_BEGIN: &str = "#@exchange-venue-begin";
const VENUE_END: &str = "#@exchange-venue-end";

/// Index of the simulated venue in the engine config.
pub const SIM_VENUE: u32 = 0;
/// Index of the exchange venue in the engine config (when it is on).
pub const EXCHANGE_VENUE_INDEX: u32 = 1;

/// Where a strategy sends its orders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// The exchange venue when it is on, else the simulated venue.
    Exchange,
    /// Always the simulated venue.
    Sim,
}

/// One strategy process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StrategySpec {
    /// Its name in the engine config.
    pub name: &'static str,
    /// `maker` or `taker` (the `peregrine strategy` subcommand).
    pub kind: &'static str,
    /// Its venue.
    pub route: Route,
    /// Order quantity, lots.
    pub qty: i64,
    /// Timer / order-gap scale, µs.
    pub interval_us: u64,
    /// Random seed.
    pub seed: u64,
}

/// The strategies, in engine-config order. At the exchange the maker quotes around
/// the mid it sees and the taker takes its quotes at the touch (IOC); on the
/// simulated market `sim-maker` quotes against the flow and `reverter` trades a
/// moving average of the mid.
pub const STRATEGIES: [StrategySpec; 4] = [
    StrategySpec {
        name: "maker",
        kind: "maker",
        route: Route::Exchange,
        qty: 1,
        interval_us: 1_000,
        seed: 1,
    },
    StrategySpec {
        name: "taker",
        kind: "taker",
        route: Route::Exchange,
        qty: 1,
        interval_us: 1_000,
        seed: 2,
    },
    StrategySpec {
        name: "sim-maker",
        kind: "maker",
        route: Route::Sim,
        qty: 2,
        interval_us: 2_000,
        seed: 3,
    },
    StrategySpec {
        name: "reverter",
        kind: "reverter",
        route: Route::Sim,
        qty: 1,
        interval_us: 5_000,
        seed: 4,
    },
];

impl StrategySpec {
    /// The venue index it uses.
    pub fn venue(&self, exchange_venue: bool) -> u32 {
        match self.route {
            Route::Exchange if exchange_venue => EXCHANGE_VENUE_INDEX,
            Route::Exchange | Route::Sim => SIM_VENUE,
        }
    }
}

/// The ports of the run. Fixed for the whole run, so that a restarted exchange
/// listens where the engine reconnects and every metrics URL stays valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ports {
    /// TCP order entry.
    pub order: u16,
    /// UDP market-data target.
    pub md: u16,
    /// TCP snapshot recovery.
    pub recovery: u16,
    /// The exchange's `/metrics`.
    pub exchange_metrics: u16,
    /// The engine's `/metrics`.
    pub engine_metrics: u16,
}

impl Ports {
    /// `base`, `base + 1`, `base + 2`; an error if that passes 65535 or `base` is 0.
    pub fn from_base(base: u16) -> anyhow::Result<Ports> {
        anyhow::ensure!(base > 0, "--port-base must be 1..=65531");
        let p = |k: u16| base.checked_add(k);
        match (p(1), p(2), p(3), p(4)) {
            (Some(md), Some(recovery), Some(exchange_metrics), Some(engine_metrics)) => Ok(Ports {
                order: base,
                md,
                recovery,
                exchange_metrics,
                engine_metrics,
            }),
            _ => anyhow::bail!("--port-base {base}: needs five ports, the last above 65535"),
        }
    }

    /// Ports that were free a moment ago (bound to port 0, then released).
    pub fn automatic() -> anyhow::Result<Ports> {
        let tcp = || -> anyhow::Result<u16> {
            let l = std::net::TcpListener::bind("127.0.0.1:0").context("picking a TCP port")?;
            Ok(l.local_addr()?.port())
        };
        let probe = std::net::UdpSocket::bind("127.0.0.1:0").context("picking a UDP port")?;
        let (order, recovery, exchange_metrics, engine_metrics) = (tcp()?, tcp()?, tcp()?, tcp()?);
        Ok(Ports {
            order,
            md: probe.local_addr()?.port(),
            recovery,
            exchange_metrics,
            engine_metrics,
        })
    }
}

/// The config templates a run is made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Templates {
    /// The exchange's.
    pub exchange: String,
    /// The engine's.
    pub engine: String,
}

/// File names of the templates in a config directory.
pub const EXCHANGE_FILE: &str = "exchange.toml";
/// See [`EXCHANGE_FILE`].
pub const ENGINE_FILE: &str = "engine.toml";

impl Templates {
    /// The ones built into the binary.
    pub fn embedded() -> Templates {
        Templates {
            exchange: EXCHANGE_TOML.to_owned(),
            engine: ENGINE_TOML.to_owned(),
        }
    }

    /// A user's copy (`up --config DIR`).
    pub fn load(dir: &std::path::Path) -> anyhow::Result<Templates> {
        let read = |f: &str| {
            let p = dir.join(f);
            std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))
        };
        Ok(Templates {
            exchange: read(EXCHANGE_FILE)?,
            engine: read(ENGINE_FILE)?,
        })
    }

    /// Writes them into `dir` (`up --write-config DIR`); refuses to overwrite.
    pub fn write(&self, dir: &std::path::Path) -> anyhow::Result<Vec<std::path::PathBuf>> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let mut written = Vec::new();
        for (f, text) in [(EXCHANGE_FILE, &self.exchange), (ENGINE_FILE, &self.engine)] {
            let p = dir.join(f);
            anyhow::ensure!(!p.exists(), "{} exists; not overwriting it", p.display());
            std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
            written.push(p);
        }
        Ok(written)
    }

    /// The exchange config for `ports`, with `accounts` (`[[accounts]]` entries).
    pub fn exchange_toml(&self, ports: Ports, accounts: &str) -> String {
        fill_exchange(&self.exchange, ports, accounts)
    }

    /// The engine config: named `name`, rings in `shm_dir`, the exchange venue (at
    /// `exchange`) kept only if `exchange_venue`, metrics on `ports.engine_metrics`.
    pub fn engine_toml(
        &self,
        name: &str,
        shm_dir: &std::path::Path,
        exchange: Option<SocketAddr>,
        exchange_venue: bool,
        ports: Ports,
        key_file: &std::path::Path,
    ) -> String {
        fill_engine(&self.engine, name, shm_dir, exchange, exchange_venue)
            .replace("@ENGINE_METRICS_PORT@", &ports.engine_metrics.to_string())
            .replace("@MD_PORT@", &ports.md.to_string())
            .replace("@MD_GROUP@", MD_GROUP)
            .replace("@RECOVERY_PORT@", &ports.recovery.to_string())
            .replace("@KEY_FILE@", &key_file.display().to_string())
    }
}

/// The embedded exchange config for `ports`.
#[cfg(test)]
pub fn exchange_toml(ports: Ports) -> String {
    let keys = run_keys().expect("random keys");
    fill_exchange(EXCHANGE_TOML, ports, &keys.exchange_accounts(&[], &[]))
}

/// The accounts `up` makes keys for at every start: 1 (the engine's exchange
/// venue) and 2.
pub const ACCOUNTS: [u32; 2] = [1, 2];

/// Fresh keys of [`ACCOUNTS`].
pub fn run_keys() -> anyhow::Result<peregrine_client::keys::KeyFile> {
    let ids: Vec<_> = ACCOUNTS
        .iter()
        .map(|&a| peregrine_types::AccountId(a))
        .collect();
    Ok(peregrine_client::keys::KeyFile::generate(&ids)?)
}

fn fill_exchange(template: &str, ports: Ports, accounts: &str) -> String {
    template
        .replace("@ACCOUNTS@", accounts.trim_end())
        .replace("@ORDER_PORT@", &ports.order.to_string())
        .replace("@RECOVERY_PORT@", &ports.recovery.to_string())
        .replace("@MD_PORT@", &ports.md.to_string())
        .replace("@MD_GROUP@", MD_GROUP)
        .replace(
            "@EXCHANGE_METRICS_PORT@",
            &ports.exchange_metrics.to_string(),
        )
}

/// The engine config: named `name`, rings in `shm_dir`, the exchange venue (at
/// `exchange`) kept only if `exchange_venue`.
#[cfg(test)]
pub fn engine_toml(
    name: &str,
    shm_dir: &std::path::Path,
    exchange: Option<SocketAddr>,
    exchange_venue: bool,
) -> String {
    fill_engine(ENGINE_TOML, name, shm_dir, exchange, exchange_venue)
        .replace("@ENGINE_METRICS_PORT@", "0")
        .replace("@MD_PORT@", "0")
        .replace("@MD_GROUP@", MD_GROUP)
        .replace("@RECOVERY_PORT@", "0")
        .replace("@KEY_FILE@", "keys.toml")
}

fn fill_engine(
    template: &str,
    name: &str,
    shm_dir: &std::path::Path,
    exchange: Option<SocketAddr>,
    exchange_venue: bool,
) -> String {
    let mut out = String::with_capacity(template.len());
    let mut inside = false;
    for line in template.lines() {
        match line.trim() {
            VENUE_BEGIN => inside = true,
            VENUE_END => inside = false,
            _ if inside && !exchange_venue => {}
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    if !exchange_venue {
        // Without the exchange, strategies routed to it trade on the simulated venue.
        out = out.replace("venue = \"px\"", "venue = \"sim\"");
    }
    let addr = exchange.map_or_else(|| "127.0.0.1:0".to_owned(), |a| a.to_string());
    out.replace("@NAME@", name)
        .replace("@SHM_DIR@", &shm_dir.display().to_string())
        .replace("@EXCHANGE_ADDR@", &addr)
}

/// A shared-memory directory and engine name no other run uses: the process id and
/// the clock, so two runs (or two tests) coexist.
pub fn unique_name() -> (String, PathBuf) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let name = format!("up-{}-{nanos:x}", std::process::id());
    let dir = PathBuf::from(format!("/dev/shm/peregrine-{name}"));
    (name, dir)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use peregrine_engine::config::EngineConfig;

    use super::*;

    /// `@NAME@` tokens still in `text`.
    fn placeholders(text: &str) -> Vec<&str> {
        text.split('@')
            .skip(1)
            .step_by(2)
            .filter(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
            .collect()
    }

    #[test]
    fn placeholders_are_found() {
        assert_eq!(placeholders("a = \"@X_Y@\" # @...@"), vec!["X_Y"]);
        assert!(placeholders(&ENGINE_TOML.replace("@NAME@", "n")).contains(&"SHM_DIR"));
    }

    #[test]
    fn engine_config_without_the_exchange_venue_is_valid() {
        let text = engine_toml(
            "up-test",
            Path::new("/dev/shm/peregrine-up-test"),
            None,
            false,
        );
        assert!(!text.contains("exchange ="), "{text}");
        assert_eq!(placeholders(&text), Vec::<&str>::new(), "{text}");
        let cfg = EngineConfig::from_toml(&text, Path::new("engine.toml")).unwrap();
        assert_eq!(cfg.name, "up-test");
        assert_eq!(cfg.venues.len(), 1);
        assert_eq!(cfg.venues[SIM_VENUE as usize].name, "sim");
        assert_eq!(cfg.spinning_threads(), 0, "nothing may spin on 2 cores");
        let names: Vec<_> = cfg.strategies.iter().map(|s| s.name.as_str()).collect();
        let planned: Vec<_> = STRATEGIES.iter().map(|s| s.name).collect();
        assert_eq!(names, planned);
    }

    #[test]
    fn engine_config_with_the_exchange_venue_names_the_address() {
        let addr: SocketAddr = "127.0.0.1:7712".parse().unwrap();
        let text = engine_toml("x", Path::new("/dev/shm/x"), Some(addr), true);
        assert!(text.contains("name = \"px\""), "{text}");
        assert!(text.contains("addr = \"127.0.0.1:7712\""), "{text}");
        assert_eq!(placeholders(&text), Vec::<&str>::new(), "{text}");
        // The exchange venue is the second one, as `EXCHANGE_VENUE_INDEX` says.
        let sim = text.find("name = \"sim\"").unwrap();
        assert!(sim < text.find("name = \"px\"").unwrap());
        // With the key file `up` generates, the config is valid.
        let dir = tempfile::tempdir().unwrap();
        let keys = dir.path().join("keys.toml");
        run_keys().unwrap().save_new(&keys).unwrap();
        let text = text.replace(
            "\"keys.toml\"",
            &format!("{:?}", keys.display().to_string()),
        );
        let cfg = EngineConfig::from_toml(&text, Path::new("engine.toml")).unwrap();
        assert_eq!(cfg.venues.len(), 2);
    }

    #[test]
    fn exchange_config_is_valid_and_filled_in() {
        let ports = Ports::from_base(7710).unwrap();
        let text = exchange_toml(ports);
        assert_eq!(placeholders(&text), Vec::<&str>::new(), "{text}");
        let cfg = peregrine_exchange::Config::parse(&text).unwrap();
        cfg.validate().unwrap();
        assert_eq!(cfg.listen.port(), 7710);
        assert_eq!(cfg.market_data.target.port(), 7711);
        assert_eq!(cfg.metrics.listen.port(), 7713);
    }

    #[test]
    fn templates_write_load_and_refuse_to_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let t = Templates::embedded();
        assert_eq!(t.write(dir.path()).unwrap().len(), 2);
        assert_eq!(Templates::load(dir.path()).unwrap(), t);
        assert!(t.write(dir.path()).is_err(), "never overwrites");
        let ports = Ports::from_base(7720).unwrap();
        let text = t.engine_toml(
            "x",
            Path::new("/dev/shm/x"),
            None,
            false,
            ports,
            Path::new("keys.toml"),
        );
        let cfg = EngineConfig::from_toml(&text, Path::new("engine.toml")).unwrap();
        assert_eq!(cfg.metrics.listen.port(), 7724);
        // With the exchange venue, the engine takes the exchange's feed and recovery.
        let addr: SocketAddr = "127.0.0.1:7720".parse().unwrap();
        let text = t.engine_toml(
            "x",
            Path::new("/dev/shm/x"),
            Some(addr),
            true,
            ports,
            Path::new("keys.toml"),
        );
        let (md, recovery) = (
            format!("{MD_GROUP}:{}", ports.md),
            format!("127.0.0.1:{}", ports.recovery),
        );
        let exchange = t.exchange_toml(ports, "");
        assert!(
            exchange.contains(&format!("target = \"{md}\"")),
            "{exchange}"
        );
        assert!(exchange.contains(&format!("recovery_listen = \"{recovery}\"")));
        assert!(exchange.contains("multicast_interface = \"127.0.0.1\""));
        let feed = format!(
            "feed = {{ addr = \"{md}\", interface = \"127.0.0.1\", recovery = \"{recovery}\" }}"
        );
        assert!(text.contains(&feed), "{feed} in {text}");
        assert!(Templates::load(&dir.path().join("nope")).is_err());
    }

    #[test]
    fn ports_from_base_stay_in_range() {
        assert!(Ports::from_base(0).is_err());
        assert!(Ports::from_base(65_532).is_err());
        assert_eq!(Ports::from_base(65_531).unwrap().engine_metrics, 65_535);
    }

    #[test]
    fn strategies_route_to_the_right_venue() {
        assert!(STRATEGIES.iter().all(|s| s.venue(false) == SIM_VENUE));
        assert_eq!(STRATEGIES[0].venue(true), EXCHANGE_VENUE_INDEX);
        assert_eq!(STRATEGIES[1].venue(true), EXCHANGE_VENUE_INDEX);
        assert_eq!(STRATEGIES[2].venue(true), SIM_VENUE);
        assert_eq!(STRATEGIES[3].venue(true), SIM_VENUE);
    }

    #[test]
    fn unique_names_fit_a_socket_path() {
        let (name, dir) = unique_name();
        assert!(name.len() <= 64);
        // sun_path is 108 bytes.
        assert!(dir.join("control.sock").as_os_str().len() < 100);
    }
}
