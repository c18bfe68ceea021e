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

/// The exchange config, with `@ORDER_PORT@`, `@RECOVERY_PORT@`, `@MD_PORT@` to fill.
const EXCHANGE_TOML: &str = include_str!("../../../../configs/up/exchange.toml");
/// The engine config, with `@NAME@`, `@SHM_DIR@`, `@EXCHANGE_ADDR@` to fill, and the
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

/// The strategies, in engine-config order. The maker quotes and the taker crosses
/// its quotes at the exchange; `sim-maker` quotes 2 lots on the simulated venue,
/// which fills half of each quote and rests the other half.
pub const STRATEGIES: [StrategySpec; 3] = [
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

/// The ports of the exchange; 0 lets the OS pick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ports {
    /// TCP order entry.
    pub order: u16,
    /// UDP market-data target.
    pub md: u16,
    /// TCP snapshot recovery.
    pub recovery: u16,
}

impl Ports {
    /// `base`, `base + 1`, `base + 2`; an error if that passes 65535 or `base` is 0.
    pub fn from_base(base: u16) -> anyhow::Result<Ports> {
        anyhow::ensure!(base > 0, "--port-base must be 1..=65533");
        let md = base.checked_add(1);
        let recovery = base.checked_add(2);
        match (md, recovery) {
            (Some(md), Some(recovery)) => Ok(Ports {
                order: base,
                md,
                recovery,
            }),
            _ => anyhow::bail!("--port-base {base}: needs three ports, the last above 65535"),
        }
    }

    /// Order entry and recovery chosen by the exchange; the market-data target a UDP
    /// port that was free a moment ago (nobody needs to listen there).
    pub fn automatic() -> anyhow::Result<Ports> {
        let probe = std::net::UdpSocket::bind("127.0.0.1:0").context("picking a UDP port")?;
        Ok(Ports {
            order: 0,
            md: probe.local_addr()?.port(),
            recovery: 0,
        })
    }
}

/// The exchange config for `ports`.
pub fn exchange_toml(ports: Ports) -> String {
    EXCHANGE_TOML
        .replace("@ORDER_PORT@", &ports.order.to_string())
        .replace("@RECOVERY_PORT@", &ports.recovery.to_string())
        .replace("@MD_PORT@", &ports.md.to_string())
}

/// The engine config: named `name`, rings in `shm_dir`, the exchange venue (at
/// `exchange`) kept only if `exchange_venue`.
pub fn engine_toml(
    name: &str,
    shm_dir: &std::path::Path,
    exchange: Option<SocketAddr>,
    exchange_venue: bool,
) -> String {
    let mut out = String::with_capacity(ENGINE_TOML.len());
    let mut inside = false;
    for line in ENGINE_TOML.lines() {
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
    }

    #[test]
    fn exchange_config_is_valid_and_filled_in() {
        let ports = Ports::from_base(7710).unwrap();
        let text = exchange_toml(ports);
        assert_eq!(placeholders(&text), Vec::<&str>::new(), "{text}");
        let cfg = peregrine_exchange::config::Config::parse(&text).unwrap();
        cfg.validate().unwrap();
        assert_eq!(cfg.listen.port(), 7710);
        assert_eq!(cfg.market_data.target.port(), 7711);
    }

    #[test]
    fn ports_from_base_stay_in_range() {
        assert!(Ports::from_base(0).is_err());
        assert!(Ports::from_base(65_534).is_err());
        assert_eq!(Ports::from_base(65_533).unwrap().recovery, 65_535);
    }

    #[test]
    fn strategies_route_to_the_right_venue() {
        assert!(STRATEGIES.iter().all(|s| s.venue(false) == SIM_VENUE));
        assert_eq!(STRATEGIES[0].venue(true), EXCHANGE_VENUE_INDEX);
        assert_eq!(STRATEGIES[1].venue(true), EXCHANGE_VENUE_INDEX);
        assert_eq!(STRATEGIES[2].venue(true), SIM_VENUE);
    }

    #[test]
    fn unique_names_fit_a_socket_path() {
        let (name, dir) = unique_name();
        assert!(name.len() <= 64);
        // sun_path is 108 bytes.
        assert!(dir.join("control.sock").as_os_str().len() < 100);
    }
}
