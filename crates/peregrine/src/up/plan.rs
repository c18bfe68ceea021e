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
pub(super) const EXCHANGE_VENUE: bool = true;

/// The multicast group of the run's market data (on loopback; the port is per run).
pub(super) const MD_GROUP: &str = "239.255.76.1";

/// The exchange config, with `@ORDER_PORT@`, `@RECOVERY_PORT@`, `@MD_PORT@`, `@MD_GROUP@` and
/// `@ACCOUNTS@` (the generated accounts' stored keys) to fill.
const EXCHANGE_TOML: &str = include_str!("../../../../configs/up/exchange.toml");
/// The engine config, with `@NAME@`, `@SHM_DIR@`, `@EXCHANGE_ADDR@`, `@KEY_FILE@`,
/// `@FIX_PORT@`, `@FIX_PASSWORD@` to fill, the exchange venue between the
/// `#@exchange-venue-begin` / `-end` marker lines and the FIX venue between the
/// `#@fix-venue-begin` / `-end` ones.
const ENGINE_TOML: &str = include_str!("../../../../configs/up/engine.toml");

/// The FIX gateway's config, with `@FIX_PORT@`, `@EXCHANGE_ADDR@`, `@KEY_FILE@` and
/// `@FIX_PASSWORD@` to fill.
const GATEWAY_FIX_TOML: &str = include_str!("../../../../configs/up/gateway-fix.toml");

/// The HTTP gateway's config, with `@EXCHANGE_ADDR@`, `@RECOVERY_ADDR@`, `@DIR@`,
/// `@CONTROL_SOCKET@`.
const GATEWAY_TOML: &str = include_str!("../../../../configs/up/gateway-http.toml");

/// The HTTP gateway config for this run.
pub(super) fn gateway_toml(
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

/// The marker lines around the engine config's optional venues.
const EXCHANGE_MARKERS: (&str, &str) = ("#@exchange-venue-begin", "#@exchange-venue-end");
/// See [`EXCHANGE_MARKERS`].
const FIX_MARKERS: (&str, &str) = ("#@fix-venue-begin", "#@fix-venue-end");

/// Index of the simulated venue in the engine config.
pub(super) const SIM_VENUE: u32 = 0;
/// Index of the exchange venue in the engine config (when it is on).
pub(super) const EXCHANGE_VENUE_INDEX: u32 = 1;
/// Index of the FIX venue in the engine config (when it and the exchange venue are
/// on).
pub(super) const FIX_VENUE_INDEX: u32 = 2;

/// The FIX session the engine's venue `fix` logs on as (gateway-fix.toml).
pub(super) const FIX_COMP_ID: &str = "ENGINE";
/// The exchange account that session trades for (gateway-fix.toml).
pub(super) const FIX_ACCOUNT: u32 = 3;

/// Which of the optional venues a run's engine has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Venues {
    /// `px`: the exchange over its native protocol.
    pub exchange: bool,
    /// `fix`: the exchange through the FIX gateway (only with `exchange`).
    pub fix: bool,
}

impl Venues {
    /// The engine's venues by index.
    pub(super) fn names(self) -> Vec<&'static str> {
        let mut names = vec!["sim"];
        if self.exchange {
            names.push("px");
            if self.fix {
                names.push("fix");
            }
        }
        names
    }
}

/// Where a strategy sends its orders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Route {
    /// The exchange venue when it is on, else the simulated venue.
    Exchange,
    /// The FIX venue when it is on, else like [`Route::Exchange`].
    Fix,
    /// Always the simulated venue.
    Sim,
}

/// One strategy process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct StrategySpec {
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
    /// Maker only: how far its mid leans towards the reference, per mille (see
    /// `peregrine strategy maker --anchor-per-mille`).
    pub anchor_per_mille: i64,
}

/// The strategies, in engine-config order. At the exchange the maker quotes around
/// the mid it sees and the taker takes its quotes at the touch (IOC); `fix-taker`
/// takes them too, through the FIX gateway, reading the book of `px` (the same
/// exchange book: the FIX venue has no feed of its own); on the simulated market `sim-maker` quotes
/// against the flow and `reverter` trades a moving average of the mid. The exchange's
/// maker leans its mid 1‰ towards the instrument's reference price at each book
/// update: orders placed by hand move the market, which drifts back once they are
/// gone (within ±10.00 of the reference the pull rounds to nothing).
pub(super) const STRATEGIES: [StrategySpec; 5] = [
    StrategySpec {
        name: "maker",
        kind: "maker",
        route: Route::Exchange,
        qty: 1,
        interval_us: 1_000,
        seed: 1,
        anchor_per_mille: 1,
    },
    StrategySpec {
        name: "taker",
        kind: "taker",
        route: Route::Exchange,
        qty: 1,
        interval_us: 1_000,
        seed: 2,
        anchor_per_mille: 0,
    },
    StrategySpec {
        name: "fix-taker",
        kind: "taker",
        route: Route::Fix,
        qty: 1,
        interval_us: 1_000,
        seed: 5,
        anchor_per_mille: 0,
    },
    StrategySpec {
        name: "sim-maker",
        kind: "maker",
        route: Route::Sim,
        qty: 2,
        interval_us: 2_000,
        seed: 3,
        anchor_per_mille: 0,
    },
    StrategySpec {
        name: "reverter",
        kind: "reverter",
        route: Route::Sim,
        qty: 1,
        interval_us: 5_000,
        seed: 4,
        anchor_per_mille: 0,
    },
];

impl StrategySpec {
    /// The venue index it uses.
    pub(super) fn venue(&self, venues: Venues) -> u32 {
        match self.route {
            Route::Fix if venues.exchange && venues.fix => FIX_VENUE_INDEX,
            Route::Exchange | Route::Fix if venues.exchange => EXCHANGE_VENUE_INDEX,
            Route::Exchange | Route::Fix | Route::Sim => SIM_VENUE,
        }
    }

    /// The venue whose book it reads, when not its own: the FIX route reads the
    /// exchange's book (`px`), the market its orders reach.
    pub(super) fn book_venue(&self, venues: Venues) -> Option<u32> {
        (self.venue(venues) == FIX_VENUE_INDEX).then_some(EXCHANGE_VENUE_INDEX)
    }
}

/// The ports of the run. Fixed for the whole run, so that a restarted exchange
/// listens where the engine reconnects and every metrics URL stays valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Ports {
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
    /// The FIX gateway's listener.
    pub fix: u16,
}

impl Ports {
    /// `base`, `base + 1`, ... `base + 5`; an error if that passes 65535 or `base`
    /// is 0.
    pub(super) fn from_base(base: u16) -> anyhow::Result<Ports> {
        anyhow::ensure!(base > 0, "--port-base must be 1..=65530");
        let p = |k: u16| base.checked_add(k);
        match (p(1), p(2), p(3), p(4), p(5)) {
            (Some(md), Some(recovery), Some(exchange_metrics), Some(engine_metrics), Some(fix)) => {
                Ok(Ports {
                    order: base,
                    md,
                    recovery,
                    exchange_metrics,
                    engine_metrics,
                    fix,
                })
            }
            _ => anyhow::bail!("--port-base {base}: needs six ports, the last above 65535"),
        }
    }

    /// Ports that were free a moment ago (bound to port 0, then released).
    pub(super) fn automatic() -> anyhow::Result<Ports> {
        let tcp = || -> anyhow::Result<u16> {
            let l = std::net::TcpListener::bind("127.0.0.1:0").context("picking a TCP port")?;
            Ok(l.local_addr()?.port())
        };
        let probe = std::net::UdpSocket::bind("127.0.0.1:0").context("picking a UDP port")?;
        let (order, recovery, exchange_metrics, engine_metrics, fix) =
            (tcp()?, tcp()?, tcp()?, tcp()?, tcp()?);
        Ok(Ports {
            order,
            md: probe.local_addr()?.port(),
            recovery,
            exchange_metrics,
            engine_metrics,
            fix,
        })
    }
}

/// The config templates a run is made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Templates {
    /// The exchange's.
    pub exchange: String,
    /// The engine's.
    pub engine: String,
    /// The FIX gateway's.
    pub gateway_fix: String,
}

/// File names of the templates in a config directory.
pub(super) const EXCHANGE_FILE: &str = "exchange.toml";
/// See [`EXCHANGE_FILE`].
pub(super) const ENGINE_FILE: &str = "engine.toml";
/// See [`EXCHANGE_FILE`].
pub(super) const GATEWAY_FIX_FILE: &str = "gateway-fix.toml";

/// What a run fills into the engine and FIX gateway templates.
#[derive(Debug, Clone)]
pub(super) struct RunValues<'a> {
    /// The engine's name.
    pub name: &'a str,
    /// The engine's shm directory.
    pub shm_dir: &'a std::path::Path,
    /// The exchange's order entry (`None` before it runs, in tests).
    pub exchange: Option<SocketAddr>,
    /// The optional venues kept.
    pub venues: Venues,
    /// The run's ports.
    pub ports: Ports,
    /// The run's key file.
    pub key_file: &'a std::path::Path,
    /// The FIX session's password for this run.
    pub fix_password: &'a str,
}

impl RunValues<'_> {
    /// The `@...@` values both templates share.
    fn fill(&self, text: &str) -> String {
        let addr = self
            .exchange
            .map_or_else(|| "127.0.0.1:0".to_owned(), |a| a.to_string());
        text.replace("@EXCHANGE_ADDR@", &addr)
            .replace("@KEY_FILE@", &self.key_file.display().to_string())
            .replace("@FIX_PORT@", &self.ports.fix.to_string())
            .replace("@FIX_PASSWORD@", self.fix_password)
    }
}

impl Templates {
    /// The ones built into the binary.
    pub(super) fn embedded() -> Templates {
        Templates {
            exchange: EXCHANGE_TOML.to_owned(),
            engine: ENGINE_TOML.to_owned(),
            gateway_fix: GATEWAY_FIX_TOML.to_owned(),
        }
    }

    fn files(&self) -> [(&'static str, &String); 3] {
        [
            (EXCHANGE_FILE, &self.exchange),
            (ENGINE_FILE, &self.engine),
            (GATEWAY_FIX_FILE, &self.gateway_fix),
        ]
    }

    /// A user's copy (`up --config DIR`).
    pub(super) fn load(dir: &std::path::Path) -> anyhow::Result<Templates> {
        let read = |f: &str| {
            let p = dir.join(f);
            std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))
        };
        Ok(Templates {
            exchange: read(EXCHANGE_FILE)?,
            engine: read(ENGINE_FILE)?,
            gateway_fix: read(GATEWAY_FIX_FILE)?,
        })
    }

    /// Writes them into `dir` (`up --write-config DIR`); refuses to overwrite.
    pub(super) fn write(&self, dir: &std::path::Path) -> anyhow::Result<Vec<std::path::PathBuf>> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let mut written = Vec::new();
        for (f, text) in self.files() {
            let p = dir.join(f);
            anyhow::ensure!(!p.exists(), "{} exists; not overwriting it", p.display());
            std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
            written.push(p);
        }
        Ok(written)
    }

    /// The exchange config for `ports`, with `accounts` (`[[accounts]]` entries).
    pub(super) fn exchange_toml(&self, ports: Ports, accounts: &str) -> String {
        fill_exchange(&self.exchange, ports, accounts)
    }

    /// The engine config for `run`: the optional venues kept as `run.venues` says.
    pub(super) fn engine_toml(&self, run: &RunValues<'_>) -> String {
        fill_engine(&self.engine, run)
    }

    /// The FIX gateway config for `run`.
    pub(super) fn gateway_fix_toml(&self, run: &RunValues<'_>) -> String {
        run.fill(&self.gateway_fix)
    }
}

/// The embedded exchange config for `ports`.
#[cfg(test)]
pub(super) fn exchange_toml(ports: Ports) -> String {
    let keys = run_keys().expect("random keys");
    fill_exchange(EXCHANGE_TOML, ports, &keys.exchange_accounts(&[], &[]))
}

/// The accounts `up` makes keys for at every start: 1 (the engine's exchange
/// venue), 2 (free for a person, through the HTTP gateway) and 3 (the FIX gateway's
/// session, the engine's FIX venue).
pub(super) const ACCOUNTS: [u32; 3] = [1, 2, 3];

/// Fresh keys of [`ACCOUNTS`].
pub(super) fn run_keys() -> anyhow::Result<peregrine_client::keys::KeyFile> {
    let ids: Vec<_> = ACCOUNTS
        .iter()
        .map(|&a| peregrine_types::AccountId(a))
        .collect();
    Ok(peregrine_client::keys::KeyFile::generate(&ids)?)
}

/// A fresh FIX password (32 hex digits from the operating system's generator).
pub(super) fn fix_password() -> anyhow::Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("the random generator: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
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

/// The embedded engine config for `run`.
#[cfg(test)]
pub(super) fn engine_toml(run: &RunValues<'_>) -> String {
    fill_engine(ENGINE_TOML, run)
}

/// `template` without the marker sections of the venues `run` leaves out, filled in.
fn fill_engine(template: &str, run: &RunValues<'_>) -> String {
    let venues = run.venues;
    let sections = [
        (EXCHANGE_MARKERS, venues.exchange),
        (FIX_MARKERS, venues.exchange && venues.fix),
    ];
    let mut out = String::with_capacity(template.len());
    let mut skipping = false;
    for line in template.lines() {
        let t = line.trim();
        if let Some(&(_, keep)) = sections.iter().find(|((b, _), _)| *b == t) {
            skipping = !keep;
            continue;
        }
        if sections.iter().any(|((_, e), _)| *e == t) {
            skipping = false;
            continue;
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        }
    }
    if !venues.exchange {
        // Without the exchange, strategies routed to it trade on the simulated venue.
        out = out.replace("venue = \"px\"", "venue = \"sim\"");
    }
    run.fill(&out)
        .replace("@NAME@", run.name)
        .replace("@SHM_DIR@", &run.shm_dir.display().to_string())
        .replace(
            "@ENGINE_METRICS_PORT@",
            &run.ports.engine_metrics.to_string(),
        )
        .replace("@MD_PORT@", &run.ports.md.to_string())
        .replace("@MD_GROUP@", MD_GROUP)
        .replace("@RECOVERY_PORT@", &run.ports.recovery.to_string())
}

/// A shared-memory directory and engine name no other run uses: the process id and
/// the clock, so two runs (or two tests) coexist.
pub(super) fn unique_name() -> (String, PathBuf) {
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

    const ALL: Venues = Venues {
        exchange: true,
        fix: true,
    };

    fn run<'a>(venues: Venues, exchange: Option<SocketAddr>, ports: Ports) -> RunValues<'a> {
        RunValues {
            name: "up-test",
            shm_dir: Path::new("/dev/shm/peregrine-up-test"),
            exchange,
            venues,
            ports,
            key_file: Path::new("keys.toml"),
            fix_password: "pw",
        }
    }

    /// `text` with its key file replaced by a real one (the engine validates it).
    fn with_real_keys(text: &str, dir: &Path) -> String {
        let keys = dir.join("keys.toml");
        if !keys.exists() {
            run_keys().unwrap().save_new(&keys).unwrap();
        }
        text.replace(
            "\"keys.toml\"",
            &format!("{:?}", keys.display().to_string()),
        )
    }

    #[test]
    fn engine_config_without_the_exchange_venue_is_valid() {
        let venues = Venues {
            exchange: false,
            fix: true,
        };
        let text = engine_toml(&run(venues, None, Ports::from_base(7700).unwrap()));
        assert!(!text.contains("exchange ="), "{text}");
        assert!(
            !text.contains("fix ="),
            "no FIX venue without the exchange: {text}"
        );
        assert_eq!(placeholders(&text), Vec::<&str>::new(), "{text}");
        let cfg = EngineConfig::from_toml(&text, Path::new("engine.toml")).unwrap();
        assert_eq!(cfg.name, "up-test");
        assert_eq!(cfg.venues.len(), 1);
        assert_eq!(cfg.venues[SIM_VENUE as usize].name, "sim");
        assert_eq!(venues.names(), ["sim"]);
        assert_eq!(cfg.spinning_threads(), 0, "nothing may spin on 2 cores");
        let names: Vec<_> = cfg.strategies.iter().map(|s| s.name.as_str()).collect();
        let planned: Vec<_> = STRATEGIES.iter().map(|s| s.name).collect();
        assert_eq!(names, planned);
    }

    #[test]
    fn engine_config_with_the_exchange_venue_names_the_address() {
        let addr: SocketAddr = "127.0.0.1:7712".parse().unwrap();
        let venues = Venues {
            exchange: true,
            fix: false,
        };
        let text = engine_toml(&run(venues, Some(addr), Ports::from_base(7710).unwrap()));
        assert!(text.contains("name = \"px\""), "{text}");
        assert!(text.contains("addr = \"127.0.0.1:7712\""), "{text}");
        assert!(!text.contains("name = \"fix\""), "{text}");
        assert_eq!(placeholders(&text), Vec::<&str>::new(), "{text}");
        // The exchange venue is the second one, as `EXCHANGE_VENUE_INDEX` says.
        let sim = text.find("name = \"sim\"").unwrap();
        assert!(sim < text.find("name = \"px\"").unwrap());
        // With the key file `up` generates, the config is valid.
        let dir = tempfile::tempdir().unwrap();
        let text = with_real_keys(&text, dir.path());
        let cfg = EngineConfig::from_toml(&text, Path::new("engine.toml")).unwrap();
        assert_eq!(cfg.venues.len(), 2);
        assert_eq!(venues.names(), ["sim", "px"]);
    }

    #[test]
    fn engine_and_fix_gateway_configs_agree_on_the_session() {
        let addr: SocketAddr = "127.0.0.1:7732".parse().unwrap();
        let ports = Ports::from_base(7730).unwrap();
        let values = run(ALL, Some(addr), ports);
        let t = Templates::embedded();
        let engine = t.engine_toml(&values);
        let gateway = t.gateway_fix_toml(&values);
        assert_eq!(placeholders(&engine), Vec::<&str>::new(), "{engine}");
        assert_eq!(placeholders(&gateway), Vec::<&str>::new(), "{gateway}");
        let dir = tempfile::tempdir().unwrap();
        let cfg = EngineConfig::from_toml(
            &with_real_keys(&engine, dir.path()),
            Path::new("engine.toml"),
        )
        .unwrap();
        let names: Vec<_> = cfg.venues.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ALL.names());
        assert_eq!(names[FIX_VENUE_INDEX as usize], "fix");
        let fix = cfg.venues[FIX_VENUE_INDEX as usize].fix.clone().unwrap();
        let path = dir.path().join(GATEWAY_FIX_FILE);
        std::fs::write(&path, with_real_keys(&gateway, dir.path())).unwrap();
        let gw = peregrine_fix_gateway::GatewayConfig::load(&path).unwrap();
        assert_eq!(gw.listen, fix.addr);
        assert_eq!(fix.addr, format!("127.0.0.1:{}", ports.fix));
        assert_eq!(gw.exchange, addr.to_string());
        assert_eq!(gw.comp_id, fix.target_comp_id);
        let [session] = gw.sessions.as_slice() else {
            panic!("one session: {:?}", gw.sessions);
        };
        assert_eq!(session.comp_id, FIX_COMP_ID);
        assert_eq!(fix.sender_comp_id, FIX_COMP_ID);
        assert_eq!(session.password.as_deref(), Some("pw"));
        assert_eq!(fix.password.as_deref(), Some("pw"));
        // Its own account, with a key in the run's key file.
        assert_eq!(session.account, FIX_ACCOUNT);
        assert!(ACCOUNTS.contains(&FIX_ACCOUNT));
        assert!(gw.store_dir.is_relative(), "in the run directory");
    }

    #[test]
    fn fix_passwords_are_fresh() {
        let (a, b) = (fix_password().unwrap(), fix_password().unwrap());
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()), "{a}");
        assert_ne!(a, b);
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
        let written = t.write(dir.path()).unwrap();
        assert_eq!(written.len(), 3);
        assert!(written.iter().any(|p| p.ends_with(GATEWAY_FIX_FILE)));
        assert_eq!(Templates::load(dir.path()).unwrap(), t);
        assert!(t.write(dir.path()).is_err(), "never overwrites");
        let ports = Ports::from_base(7720).unwrap();
        let off = Venues {
            exchange: false,
            fix: false,
        };
        let text = t.engine_toml(&run(off, None, ports));
        let cfg = EngineConfig::from_toml(&text, Path::new("engine.toml")).unwrap();
        assert_eq!(cfg.metrics.listen.port(), 7724);
        // With the exchange venue, the engine takes the exchange's feed and recovery.
        let addr: SocketAddr = "127.0.0.1:7720".parse().unwrap();
        let text = t.engine_toml(&run(ALL, Some(addr), ports));
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
        // A config directory without the FIX gateway's template is refused by name.
        std::fs::remove_file(dir.path().join(GATEWAY_FIX_FILE)).unwrap();
        let err = format!("{:#}", Templates::load(dir.path()).unwrap_err());
        assert!(err.contains(GATEWAY_FIX_FILE), "{err}");
    }

    #[test]
    fn ports_from_base_stay_in_range() {
        assert!(Ports::from_base(0).is_err());
        assert!(Ports::from_base(65_531).is_err());
        let top = Ports::from_base(65_530).unwrap();
        assert_eq!((top.engine_metrics, top.fix), (65_534, 65_535));
    }

    #[test]
    fn strategies_route_to_the_right_venue() {
        let route =
            |venues: Venues| -> Vec<u32> { STRATEGIES.iter().map(|s| s.venue(venues)).collect() };
        let none = Venues {
            exchange: false,
            fix: true,
        };
        assert!(route(none).iter().all(|&v| v == SIM_VENUE));
        let px = EXCHANGE_VENUE_INDEX;
        assert_eq!(route(ALL), [px, px, FIX_VENUE_INDEX, SIM_VENUE, SIM_VENUE]);
        let no_fix = Venues {
            exchange: true,
            fix: false,
        };
        assert_eq!(route(no_fix), [px, px, px, SIM_VENUE, SIM_VENUE]);
        // Only the FIX route reads another venue's book: the exchange's, same market.
        let books = |venues: Venues| -> Vec<Option<u32>> {
            STRATEGIES.iter().map(|s| s.book_venue(venues)).collect()
        };
        assert_eq!(books(ALL), [None, None, Some(px), None, None]);
        assert!(books(no_fix)
            .iter()
            .chain(&books(none))
            .all(Option::is_none));
        // Every index names a venue of that run's engine.
        for venues in [ALL, no_fix, none] {
            assert!(route(venues)
                .iter()
                .all(|&v| (v as usize) < venues.names().len()));
        }
    }

    #[test]
    fn unique_names_fit_a_socket_path() {
        let (name, dir) = unique_name();
        assert!(name.len() <= 64);
        // sun_path is 108 bytes.
        assert!(dir.join("control.sock").as_os_str().len() < 100);
    }
}
