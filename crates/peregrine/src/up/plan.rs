//! What `peregrine up` runs: the embedded configs, filled in for one run, and the
//! strategy processes with their venues.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;

use super::configs::Doc;

/// Whether the engine gets its second venue, the exchange `up` starts, over TCP.
///
/// Off until the engine's exchange venue adapter (`[[venues]] exchange = {...}`) is on
/// main: an engine without it refuses the key. Switch it on and the maker and taker
/// trade at the real exchange (venue 1, `px`) while `sim-maker` stays on the
/// simulated venue; off, all three use the simulated venue and the exchange idles.
pub(super) const EXCHANGE_VENUE: bool = true;

/// The multicast group of the run's market data (on loopback; the port is per run).
pub(super) const MD_GROUP: &str = "239.255.76.1";

/// The exchange config template (values a run decides are set at their keys: see
/// [`Templates::exchange_toml`]).
const EXCHANGE_TOML: &str = include_str!("../../../../configs/up/exchange.toml");
/// The engine config template ([`Templates::engine_toml`]).
const ENGINE_TOML: &str = include_str!("../../../../configs/up/engine.toml");
/// The FIX gateway's config template ([`Templates::gateway_fix_toml`]).
const GATEWAY_FIX_TOML: &str = include_str!("../../../../configs/up/gateway-fix.toml");
/// The HTTP gateway's config template ([`gateway_toml`]).
const GATEWAY_TOML: &str = include_str!("../../../../configs/up/gateway-http.toml");

/// The HTTP gateway config for this run, checked by the gateway's config parser.
pub(super) fn gateway_toml(
    exchange: SocketAddr,
    recovery: SocketAddr,
    dir: &std::path::Path,
    control: &std::path::Path,
) -> anyhow::Result<String> {
    let mut d = Doc::parse("gateway-http.toml", GATEWAY_TOML)?;
    d.set("exchange.order_entry", exchange.to_string())?;
    d.set("exchange.recovery", recovery.to_string())?;
    d.set("exchange.keys", path_text(&dir.join("keys.toml")))?;
    d.set(
        "history.url",
        format!("sqlite://{}", path_text(&dir.join("history.db"))),
    )?;
    d.set("engine.control_socket", path_text(control))?;
    let text = d.text()?;
    let cfg = peregrine_http::config::GatewayConfig::parse(&text)
        .context("the HTTP gateway config for this run")?;
    cfg.validate()
        .map_err(|e| anyhow::anyhow!("the HTTP gateway config for this run: {}", e.join("; ")))?;
    Ok(text)
}

/// A path as a config value.
fn path_text(p: &std::path::Path) -> String {
    p.display().to_string()
}

/// The engine venues `up` may leave out, by name.
const OPTIONAL_VENUES: [&str; 2] = ["px", "fix"];

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

    /// The exchange config for `ports`, with `keys`' accounts (their stored hashes),
    /// checked by the exchange's config parser.
    pub(super) fn exchange_toml(
        &self,
        ports: Ports,
        keys: &peregrine_client::keys::KeyFile,
    ) -> anyhow::Result<String> {
        let mut d = Doc::parse(EXCHANGE_FILE, &self.exchange)?;
        d.set("listen", format!("127.0.0.1:{}", ports.order))?;
        d.set("recovery_listen", format!("127.0.0.1:{}", ports.recovery))?;
        d.set("market_data.target", format!("{MD_GROUP}:{}", ports.md))?;
        d.set(
            "metrics.listen",
            format!("127.0.0.1:{}", ports.exchange_metrics),
        )?;
        let generated = keys
            .exchange_accounts(&[], &[])
            .parse::<toml::Table>()
            .context("the generated accounts")?;
        let generated = generated
            .get("accounts")
            .and_then(toml::Value::as_array)
            .cloned()
            .unwrap_or_default();
        let accounts = d.tables_mut("accounts")?;
        let ours = |v: &toml::Value| {
            v.get("id")
                .and_then(toml::Value::as_integer)
                .is_some_and(|id| ACCOUNTS.iter().any(|&a| i64::from(a) == id))
        };
        accounts.retain(|v| !ours(v));
        accounts.extend(generated);
        let text = d.text()?;
        let cfg =
            peregrine_exchange::Config::parse(&text).context("the exchange config for this run")?;
        cfg.validate()
            .map_err(|e| anyhow::anyhow!("the exchange config for this run: {}", e.join("; ")))?;
        Ok(text)
    }

    /// The engine config for `run`: the optional venues kept as `run.venues` says,
    /// in the order sim, px, fix (the indices [`SIM_VENUE`], [`EXCHANGE_VENUE_INDEX`],
    /// [`FIX_VENUE_INDEX`]), with `extra` strategies (engine-config TOML) added. The
    /// caller checks the result with the engine's parser (it needs the key file).
    pub(super) fn engine_toml(&self, run: &RunValues<'_>, extra: &str) -> anyhow::Result<String> {
        let mut d = Doc::parse(ENGINE_FILE, &self.engine)?;
        d.set("name", run.name)?;
        d.set("shm_dir", path_text(run.shm_dir))?;
        d.set(
            "metrics.listen",
            format!("127.0.0.1:{}", run.ports.engine_metrics),
        )?;
        let keep = run.venues.names();
        d.tables_mut("venues")?.retain(|v| {
            let name = v.get("name").and_then(toml::Value::as_str).unwrap_or("");
            !OPTIONAL_VENUES.contains(&name) || keep.contains(&name)
        });
        let names: Vec<String> = d
            .tables_mut("venues")?
            .iter()
            .map(|v| {
                v.get("name")
                    .and_then(toml::Value::as_str)
                    .unwrap_or("")
                    .to_owned()
            })
            .collect();
        anyhow::ensure!(
            names.len() >= keep.len() && names[..keep.len()] == keep,
            "{ENGINE_FILE}: `up` needs its venues first and in the order {keep:?}; it has {names:?}"
        );
        let exchange = run
            .exchange
            .map_or_else(|| "127.0.0.1:0".to_owned(), |a| a.to_string());
        if run.venues.exchange {
            let mut px = d.entry_mut("venues", "name", "px")?;
            px.set("exchange.addr", exchange.as_str())?;
            px.set("exchange.key_file", path_text(run.key_file))?;
            px.set("exchange.feed.addr", format!("{MD_GROUP}:{}", run.ports.md))?;
            px.set(
                "exchange.feed.recovery",
                format!("127.0.0.1:{}", run.ports.recovery),
            )?;
            if run.venues.fix {
                let mut fix = d.entry_mut("venues", "name", "fix")?;
                fix.set("fix.addr", format!("127.0.0.1:{}", run.ports.fix))?;
                fix.set("fix.password", run.fix_password)?;
            }
        } else {
            // Without the exchange, strategies that follow its book follow the
            // simulated venue's.
            for s in d.tables_mut("strategies")? {
                let subs = s.get_mut("subscribe").and_then(toml::Value::as_array_mut);
                for sub in subs.into_iter().flatten() {
                    if let Some(t) = sub.as_table_mut() {
                        if t.get("venue").and_then(toml::Value::as_str) == Some("px") {
                            t.insert("venue".into(), "sim".into());
                        }
                    }
                }
            }
        }
        if !extra.trim().is_empty() {
            let extra = Doc::parse("the added strategies", extra)?;
            let mut added = extra.into_table();
            if let Some(toml::Value::Array(more)) = added.remove("strategies") {
                d.tables_mut("strategies")?.extend(more);
            }
            anyhow::ensure!(added.is_empty(), "only strategies may be added");
        }
        d.text()
    }

    /// The FIX gateway config for `run` (its listener, exchange, key file, and the
    /// engine session's password); the gateway's parser checks it before it starts.
    pub(super) fn gateway_fix_toml(&self, run: &RunValues<'_>) -> anyhow::Result<String> {
        let mut d = Doc::parse(GATEWAY_FIX_FILE, &self.gateway_fix)?;
        d.set("listen", format!("127.0.0.1:{}", run.ports.fix))?;
        let exchange = run
            .exchange
            .map_or_else(|| "127.0.0.1:0".to_owned(), |a| a.to_string());
        d.set("exchange", exchange)?;
        d.set("keys_file", path_text(run.key_file))?;
        d.entry_mut("sessions", "comp_id", FIX_COMP_ID)?
            .set("password", run.fix_password)?;
        d.text()
    }
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

    fn engine_toml(run: &RunValues<'_>) -> String {
        Templates::embedded().engine_toml(run, "").unwrap()
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
        let cfg = EngineConfig::from_toml(&text, Path::new("engine.toml")).unwrap();
        assert_eq!(cfg.name, "up-test");
        assert_eq!(
            cfg.shm_dir.as_deref(),
            Some(Path::new("/dev/shm/peregrine-up-test"))
        );
        assert_eq!(cfg.venues.len(), 1, "no exchange, so no FIX venue: {text}");
        assert_eq!(cfg.venues[SIM_VENUE as usize].name, "sim");
        assert_eq!(venues.names(), ["sim"]);
        assert_eq!(cfg.spinning_threads(), 0, "nothing may spin on 2 cores");
        let names: Vec<_> = cfg.strategies.iter().map(|s| s.name.as_str()).collect();
        let planned: Vec<_> = STRATEGIES.iter().map(|s| s.name).collect();
        assert_eq!(names, planned);
        // The maker that followed the exchange's book follows the simulated one.
        assert!(!text.contains("\"px\""), "{text}");
    }

    #[test]
    fn engine_config_with_the_exchange_venue_names_the_address() {
        let addr: SocketAddr = "127.0.0.1:7712".parse().unwrap();
        let venues = Venues {
            exchange: true,
            fix: false,
        };
        let text = engine_toml(&run(venues, Some(addr), Ports::from_base(7710).unwrap()));
        // With the key file `up` generates, the config is valid.
        let dir = tempfile::tempdir().unwrap();
        let text = with_real_keys(&text, dir.path());
        let cfg = EngineConfig::from_toml(&text, Path::new("engine.toml")).unwrap();
        let names: Vec<_> = cfg.venues.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, venues.names());
        assert_eq!(
            names,
            ["sim", "px"],
            "the exchange venue at EXCHANGE_VENUE_INDEX"
        );
        let px = cfg.venues[EXCHANGE_VENUE_INDEX as usize]
            .exchange
            .clone()
            .unwrap();
        assert_eq!(px.addr, "127.0.0.1:7712");
    }

    #[test]
    fn an_edited_template_keeps_its_own_values_and_venues() {
        let mut t = Templates::embedded();
        t.engine = t
            .engine
            .replace("ring_capacity = 4096", "ring_capacity = 8192");
        t.engine
            .push_str("\n[[venues]]\nname = \"extra\"\nsim = { seed = 9 }\n");
        let text = t
            .engine_toml(&run(ALL, None, Ports::from_base(7740).unwrap()), "")
            .unwrap();
        let back: toml::Table = text.parse().unwrap();
        assert_eq!(back["ring_capacity"].as_integer(), Some(8192));
        let names: Vec<_> = back["venues"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["sim", "px", "fix", "extra"]);
        // Venues out of the order `up` relies on are refused with the reason.
        let mut t = Templates::embedded();
        t.engine = t.engine.replacen("name = \"sim\"", "name = \"sim0\"", 1);
        let err = format!(
            "{:#}",
            t.engine_toml(&run(ALL, None, Ports::from_base(7740).unwrap()), "")
                .unwrap_err()
        );
        assert!(err.contains("in the order"), "{err}");
        // An old template with @...@ placeholders is refused with what to do.
        let mut t = Templates::embedded();
        t.exchange.push_str("\n@ACCOUNTS@\n");
        let err = format!(
            "{:#}",
            t.exchange_toml(Ports::from_base(7740).unwrap(), &run_keys().unwrap())
                .unwrap_err()
        );
        assert!(err.contains("--write-config"), "{err}");
    }

    #[test]
    fn added_strategies_join_the_engine_config() {
        let t = Templates::embedded();
        let extra = "[[strategies]]\nname = \"py\"\n[strategies.limits]\nmax_order_qty = 1\n";
        let text = t
            .engine_toml(&run(ALL, None, Ports::from_base(7750).unwrap()), extra)
            .unwrap();
        let back: toml::Table = text.parse().unwrap();
        let names: Vec<_> = back["strategies"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["name"].as_str().unwrap())
            .collect();
        assert_eq!(names.last(), Some(&"py"));
        assert_eq!(names.len(), STRATEGIES.len() + 1);
        assert!(t
            .engine_toml(&run(ALL, None, Ports::from_base(7750).unwrap()), "x = 1\n")
            .is_err());
    }

    #[test]
    fn engine_and_fix_gateway_configs_agree_on_the_session() {
        let addr: SocketAddr = "127.0.0.1:7732".parse().unwrap();
        let ports = Ports::from_base(7730).unwrap();
        let values = run(ALL, Some(addr), ports);
        let t = Templates::embedded();
        let engine = t.engine_toml(&values, "").unwrap();
        let gateway = t.gateway_fix_toml(&values).unwrap();
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
        let keys = run_keys().unwrap();
        let mut t = Templates::embedded();
        // An account of the template with one of `up`'s ids is replaced, others kept.
        let stored = "00".repeat(32);
        t.exchange.push_str(&format!(
            "\n[[accounts]]\nid = 1\nstored_key = \"{stored}\"\n[[accounts]]\nid = 9\nstored_key = \"{stored}\"\n"
        ));
        let text = t.exchange_toml(ports, &keys).unwrap();
        let cfg = peregrine_exchange::Config::parse(&text).unwrap();
        cfg.validate().unwrap();
        assert_eq!(cfg.listen.port(), 7710);
        assert_eq!(cfg.market_data.target.port(), 7711);
        assert_eq!(cfg.recovery_listen.port(), ports.recovery);
        assert_eq!(cfg.metrics.listen.port(), 7713);
        let back: toml::Table = text.parse().unwrap();
        let ids: Vec<_> = back["accounts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["id"].as_integer().unwrap())
            .collect();
        assert_eq!(ids, [9, 1, 2, 3]);
        let keys_of = |id: i64| {
            back["accounts"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|a| a["id"].as_integer() == Some(id))
                .map(|a| a["stored_key"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(keys_of(9), std::slice::from_ref(&stored));
        assert_ne!(keys_of(1), [stored], "the template's account 1 is replaced");
    }

    #[test]
    fn the_http_gateway_config_is_valid_and_filled_in() {
        let dir = Path::new("/tmp/run");
        let exchange: SocketAddr = "127.0.0.1:7760".parse().unwrap();
        let recovery: SocketAddr = "127.0.0.1:7762".parse().unwrap();
        let text = gateway_toml(exchange, recovery, dir, &dir.join("control.sock")).unwrap();
        let cfg = peregrine_http::config::GatewayConfig::parse(&text).unwrap();
        assert_eq!(cfg.exchange.order_entry.unwrap().addrs(), [exchange]);
        assert!(text.contains("sqlite:///tmp/run/history.db"), "{text}");
        assert!(text.contains("/tmp/run/control.sock"), "{text}");
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
        let text = t.engine_toml(&run(off, None, ports), "").unwrap();
        let cfg = EngineConfig::from_toml(&text, Path::new("engine.toml")).unwrap();
        assert_eq!(cfg.metrics.listen.port(), 7724);
        // With the exchange venue, the engine takes the exchange's feed and recovery.
        let addr: SocketAddr = "127.0.0.1:7720".parse().unwrap();
        let engine: toml::Table = t
            .engine_toml(&run(ALL, Some(addr), ports), "")
            .unwrap()
            .parse()
            .unwrap();
        let exchange: toml::Table = t
            .exchange_toml(ports, &run_keys().unwrap())
            .unwrap()
            .parse()
            .unwrap();
        let feed = &engine["venues"][EXCHANGE_VENUE_INDEX as usize]["exchange"]["feed"];
        assert_eq!(feed["addr"], exchange["market_data"]["target"]);
        assert_eq!(
            feed["interface"],
            exchange["market_data"]["multicast_interface"]
        );
        assert_eq!(feed["recovery"], exchange["recovery_listen"]);
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
