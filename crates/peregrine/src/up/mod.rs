//! `peregrine up`: the whole stack on one machine, with no config to write.
//!
//! It writes the embedded configs ([`plan`]) into a run directory, starts an exchange,
//! the FIX gateway in front of it, the order engine (a simulated venue, the exchange
//! as a second venue and the exchange through the FIX gateway as a third), the
//! example strategies and the HTTP gateway as child processes of the current
//! executable ([`procs`]), prints progress once a second from the engine's
//! control socket, and at the end (Ctrl-C or `--duration`) prints the latency table,
//! positions and PnL, rejects, demonstrates the global kill switch and shuts
//! everything down in order ([`finish`]; [`report`] renders the text).

mod configs;
mod finish;
mod plan;
mod procs;
mod python;
mod report;
mod supervise;
mod tui;

use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context};
use clap::Args;
use peregrine_engine::summary::{self, EngineSummary};
use peregrine_strategy::paths;

use plan::{Ports, StrategySpec, STRATEGIES};
use procs::{describe, Proc, Procs};

/// How long a child may take to come up.
const START_TIMEOUT: Duration = Duration::from_secs(15);
/// Kill switch: how long the venues have to confirm every cancel.
const KILL_TIMEOUT_MS: u64 = 5_000;
/// How long the strategies are watched against the engaged kill switch.
const KILL_WATCH: Duration = Duration::from_secs(1);
/// Control-socket timeout for `summary` and `shutdown`.
const CONTROL_TIMEOUT: Duration = Duration::from_secs(5);
/// The FIX gateway's process name (and log file stem).
const FIX_GATEWAY: &str = "fix-gateway";

/// `peregrine up [--duration S] [--dir DIR] [--port-base P] [--http-port P] [--quiet] [--keep]`.
#[derive(Debug, Args)]
pub(crate) struct UpArgs {
    /// Stop after this many seconds (default: run until Ctrl-C).
    #[arg(long)]
    duration: Option<f64>,
    /// Run directory for the configs, logs and the exchange journal (default: a fresh
    /// temporary directory, removed at the end unless --keep). Files of an earlier
    /// run in DIR are replaced.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Six consecutive ports: exchange order entry P, market data P+1, snapshot
    /// recovery P+2, exchange metrics P+3, engine metrics P+4, FIX gateway P+5
    /// (default: free ports picked at start). The web gateway's port is
    /// `--http-port`.
    #[arg(long)]
    port_base: Option<u16>,
    /// The HTTP gateway's port on 127.0.0.1 (the trading and operations pages, the
    /// Binance-style API; default: a free port, printed at start).
    #[arg(long)]
    http_port: Option<u16>,
    /// No live progress lines.
    #[arg(long)]
    quiet: bool,
    /// Keep the temporary run directory (it is always kept after a failure).
    #[arg(long)]
    keep: bool,
    /// Use only the simulated venue, even in a build whose engine has the exchange
    /// venue (no FIX gateway either).
    #[arg(long)]
    sim_only: bool,
    /// No FIX gateway and no FIX venue in the engine (fix-taker then trades at the
    /// exchange venue).
    #[arg(long)]
    no_fix: bool,
    /// Run from the config templates in DIR (`exchange.toml`, `engine.toml`,
    /// `gateway-fix.toml`; write a starting point with --write-config) instead of the
    /// built-in ones.
    #[arg(long, value_name = "DIR")]
    config: Option<PathBuf>,
    /// Write the built-in config templates into DIR and exit.
    #[arg(long, value_name = "DIR")]
    write_config: Option<PathBuf>,
    /// Plain progress lines even when stdout is a terminal (no live view).
    #[arg(long)]
    plain: bool,
    /// Also run this Python strategy file (docs/python.md) as strategy `py` on the
    /// simulated venue; needs the `peregrine` Python package in --python-bin's reach.
    #[arg(long, value_name = "FILE")]
    python: Option<PathBuf>,
    /// The interpreter for --python (a virtual environment's `bin/python`).
    #[arg(long, value_name = "PY", default_value = "python3")]
    python_bin: PathBuf,
}

/// Runs `peregrine up`.
pub(crate) fn run(args: UpArgs) -> anyhow::Result<()> {
    if let Some(dir) = &args.write_config {
        for p in plan::Templates::embedded().write(dir)? {
            println!("wrote {}", p.display());
        }
        println!(
            "edit them, then: peregrine up --config {} (values marked \"per run\" are set by up)",
            dir.display()
        );
        return Ok(());
    }
    let templates = match &args.config {
        Some(dir) => plan::Templates::load(dir)?,
        None => plan::Templates::embedded(),
    };
    if let Some(d) = args.duration {
        ensure!(
            d.is_finite() && d > 0.0 && d < 1e9,
            "--duration must be a positive number of seconds"
        );
    }
    let ports = match args.port_base {
        Some(base) => Ports::from_base(base)?,
        None => Ports::automatic()?,
    };
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(signal, Arc::clone(&stop))
            .context("installing the signal handler")?;
    }
    let exe = std::env::current_exe().context("finding the peregrine executable")?;
    let (name, shm) = plan::unique_name();
    let (dir, temporary) = run_dir(args.dir.as_deref(), &name)?;
    let exchange = plan::EXCHANGE_VENUE && !args.sim_only;
    let mut session = Session {
        exe,
        dir: dir.clone(),
        shm: shm.clone(),
        name,
        venues: plan::Venues {
            exchange,
            fix: exchange && !args.no_fix,
        },
        fix_password: plan::fix_password()?,
        stop,
        procs: Procs::default(),
        quiet: args.quiet,
        tui: None,
        live_view: !args.quiet && !args.plain && std::io::stdout().is_terminal(),
        templates,
        ports,
        strategy_names: Vec::new(),
        sup: supervise::Supervisor::default(),
        t0: Instant::now(),
        http_port: args.http_port,
        python: match &args.python {
            Some(file) => Some(python::PythonStrategy {
                file: std::path::absolute(file)
                    .with_context(|| format!("the Python strategy {}", file.display()))?,
                // A path (not a bare name looked up in PATH) is made absolute: the
                // processes start in the run directory.
                interpreter: if args.python_bin.components().count() > 1 {
                    std::path::absolute(&args.python_bin)?
                } else {
                    args.python_bin.clone()
                },
            }),
            None => None,
        },
    };
    let result = session.go(ports, args.duration);
    drop(session); // terminates whatever still runs (only after a failure)
    let _ = std::fs::remove_dir_all(&shm);
    match &result {
        Ok(()) if temporary && !args.keep => {
            let _ = std::fs::remove_dir_all(&dir);
        }
        Ok(()) => println!("run directory kept: {}", dir.display()),
        Err(_) => eprintln!("logs and configs kept in {}", dir.display()),
    }
    result
}

/// The run directory, and whether `up` created it as a temporary one.
fn run_dir(dir: Option<&Path>, name: &str) -> anyhow::Result<(PathBuf, bool)> {
    let (dir, temporary) = match dir {
        Some(d) => {
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
            // A fresh book: an earlier run's journal would be recovered otherwise, and
            // the FIX stores would continue a session with an exchange that is gone.
            for old in ["journal", "fix-store", "engine-fix.store"] {
                let p = d.join(old);
                let removed = if p.is_dir() {
                    std::fs::remove_dir_all(&p)
                } else if p.exists() {
                    std::fs::remove_file(&p)
                } else {
                    Ok(())
                };
                removed.with_context(|| format!("removing the old {}", p.display()))?;
            }
            (d.to_owned(), false)
        }
        None => {
            let d = std::env::temp_dir().join(format!("peregrine-{name}"));
            std::fs::create_dir(&d).with_context(|| format!("creating {}", d.display()))?;
            (d, true)
        }
    };
    let dir = dir
        .canonicalize()
        .with_context(|| format!("resolving {}", dir.display()))?;
    ensure!(
        dir.to_str().is_some(),
        "the run directory {} is not valid UTF-8",
        dir.display()
    );
    Ok((dir, temporary))
}

/// One run's state.
#[derive(Debug)]
struct Session {
    exe: PathBuf,
    dir: PathBuf,
    shm: PathBuf,
    name: String,
    venues: plan::Venues,
    fix_password: String,
    stop: Arc<AtomicBool>,
    procs: Procs,
    quiet: bool,
    tui: Option<tui::Tui>,
    live_view: bool,
    templates: plan::Templates,
    ports: Ports,
    strategy_names: Vec<String>,
    /// Restarts children that die once everything is started (and strategies that
    /// die while the rest still starts).
    sup: supervise::Supervisor,
    /// When `up` started (restarts are reported relative to it).
    t0: Instant,
    http_port: Option<u16>,
    python: Option<python::PythonStrategy>,
}

impl Session {
    fn go(&mut self, ports: Ports, duration: Option<f64>) -> anyhow::Result<()> {
        let addr = self.start_exchange(ports)?;
        self.start_engine(addr)?;
        self.start_strategies()?;
        let http = self.start_gateway(addr)?;
        self.header(addr, ports.md);
        println!(
            "  gateway     pid {:<8} trade by hand: {http}/  operations: {http}/ops  metrics: {http}/metrics",
            self.pid("gateway")
        );
        let started = Instant::now();
        self.t0 = started;
        if self.live_view {
            let venues = self.venues.names().into_iter().map(String::from).collect();
            let strategy_venues = self
                .strategy_names
                .iter()
                .map(|n| (n.clone(), self.venue_name(n)))
                .collect();
            self.tui = Some(tui::Tui::start(
                &self.shm,
                Arc::clone(&self.stop),
                venues,
                strategy_venues,
            ));
        }
        let watched = self.watch(duration.map(Duration::from_secs_f64), started);
        self.tui = None; // the terminal is ours again
        watched?;
        let elapsed = started.elapsed().as_secs_f64();
        // A child restarting right now (the engine, say) is waited for, not a failure.
        let last = self.summary_patiently()?;
        println!();
        print!(
            "{}",
            report::summary(&last, elapsed, &|s| self.venue_name(s))
        );
        println!();
        print!("{}", supervise::restarts_text(&self.procs));
        println!();
        let demo = self.kill_demo()?;
        print!("{}", demo.render());
        println!();
        self.shutdown()?;
        ensure!(
            demo.cancels_confirmed(),
            "the kill switch demonstration failed: {}",
            demo.reply.trim()
        );
        Ok(())
    }

    /// The run's key file (written at each exchange start).
    fn key_file(&self) -> PathBuf {
        self.dir.join("keys.toml")
    }

    fn socket(&self) -> PathBuf {
        paths::control_socket(&self.shm)
    }

    fn spawn(&mut self, name: &str, args: Vec<String>) -> anyhow::Result<()> {
        let p = Proc::spawn(&self.exe, name, &args, &self.dir)?;
        self.procs.list.push(p);
        Ok(())
    }

    /// Starts the exchange and returns its order-entry address.
    fn start_exchange(&mut self, ports: Ports) -> anyhow::Result<SocketAddr> {
        let config = self.dir.join("exchange.toml");
        // Fresh keys for this run: the engine reads its account's key from the key
        // file, the exchange gets only the hashes.
        let keys = plan::run_keys()?;
        let key_file = self.key_file();
        if key_file.exists() {
            std::fs::remove_file(&key_file)
                .with_context(|| format!("removing the previous {}", key_file.display()))?;
        }
        keys.save_new(&key_file)?;
        let text = self.templates.exchange_toml(ports, &keys)?;
        std::fs::write(&config, text).with_context(|| format!("writing {}", config.display()))?;
        self.spawn(
            "exchange",
            vec!["exchange".into(), "--config".into(), path_arg(&config)],
        )?;
        let log = self.dir.join("exchange.log");
        let mut addr = None;
        self.wait_until("the exchange to listen", |_| {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            addr = text
                .lines()
                .find_map(|l| l.strip_prefix("listening on "))
                .and_then(|a| a.trim().parse().ok());
            addr.is_some()
        })?;
        addr.context("the exchange printed no address")
    }

    /// What this run fills into the engine and FIX gateway templates.
    fn run_values<'a>(&'a self, exchange: SocketAddr, key_file: &'a Path) -> plan::RunValues<'a> {
        plan::RunValues {
            name: &self.name,
            shm_dir: &self.shm,
            exchange: Some(exchange),
            venues: self.venues,
            ports: self.ports,
            key_file,
            fix_password: &self.fix_password,
        }
    }

    /// Starts the FIX gateway (docs/fix.md) in front of the exchange, on the run's
    /// fixed FIX port, and waits for its exchange session.
    fn start_fix_gateway(&mut self, exchange: SocketAddr) -> anyhow::Result<()> {
        let config = self.dir.join(plan::GATEWAY_FIX_FILE);
        let key_file = self.key_file();
        let text = self
            .templates
            .gateway_fix_toml(&self.run_values(exchange, &key_file))?;
        std::fs::write(&config, text).with_context(|| format!("writing {}", config.display()))?;
        peregrine_fix_gateway::GatewayConfig::load(&config).with_context(|| {
            format!("the FIX gateway config for this run ({})", config.display())
        })?;
        self.spawn(
            FIX_GATEWAY,
            vec![
                "gateway".into(),
                "fix".into(),
                "--config".into(),
                path_arg(&config),
            ],
        )?;
        let log = self.dir.join(format!("{FIX_GATEWAY}.log"));
        self.wait_until("the FIX gateway's exchange session", |_| {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            text.contains("fix gateway listening on ") && text.contains("logged in")
        })
    }

    fn start_engine(&mut self, exchange: SocketAddr) -> anyhow::Result<()> {
        let config = self.dir.join("engine.toml");
        let key_file = self.key_file();
        let extra = if self.python.is_some() {
            python::ENGINE_SECTION
        } else {
            ""
        };
        let text = self
            .templates
            .engine_toml(&self.run_values(exchange, &key_file), extra)?;
        let parsed = peregrine_engine::config::EngineConfig::from_toml(&text, &config)
            .with_context(|| format!("the engine config for this run ({})", config.display()))?;
        self.strategy_names = parsed.strategies.iter().map(|s| s.name.clone()).collect();
        // A user's engine config (`--config`) may leave the FIX venue out.
        let fix = self.venues.fix && parsed.venues.iter().any(|v| v.fix.is_some());
        self.venues.fix = fix;
        if fix {
            self.start_fix_gateway(exchange)?;
        }
        std::fs::write(&config, text).with_context(|| format!("writing {}", config.display()))?;
        self.spawn(
            "engine",
            vec!["engine".into(), "--config".into(), path_arg(&config)],
        )?;
        let socket = self.socket();
        self.wait_until("the engine's control socket", |_| {
            summary::fetch(&socket, CONTROL_TIMEOUT).is_ok()
        })?;
        if fix {
            // The engine's FIX venue logs on to the gateway (it retries every 200 ms).
            let log = self.dir.join(format!("{FIX_GATEWAY}.log"));
            let logged_on = format!("{} logged on", plan::FIX_COMP_ID);
            self.wait_until("the engine's FIX session", |_| {
                std::fs::read_to_string(&log).is_ok_and(|t| t.contains(&logged_on))
            })?;
        }
        Ok(())
    }

    /// Starts the HTTP gateway (docs/http.md); returns its URL.
    fn start_gateway(&mut self, exchange: SocketAddr) -> anyhow::Result<String> {
        let config = self.dir.join("gateway-http.toml");
        let recovery = std::fs::read_to_string(self.dir.join("exchange.log"))
            .unwrap_or_default()
            .lines()
            .find_map(|l| {
                l.split("recovery (snapshots) on ")
                    .nth(1)
                    .and_then(|a| a.trim().parse::<SocketAddr>().ok())
            })
            .context("the exchange logged no recovery address")?;
        let text = plan::gateway_toml(exchange, recovery, &self.dir, &self.socket())?;
        std::fs::write(&config, text).with_context(|| format!("writing {}", config.display()))?;
        let mut args = vec![
            "gateway".into(),
            "http".into(),
            "--config".into(),
            path_arg(&config),
        ];
        if let Some(port) = self.http_port {
            args.extend(["--listen".into(), format!("127.0.0.1:{port}")]);
        }
        self.spawn("gateway", args)?;
        let log = self.dir.join("gateway.log");
        let mut url = None;
        self.wait_until("the HTTP gateway", |_| {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            url = text
                .lines()
                .find_map(|l| l.strip_prefix("http gateway on "))
                .map(|u| u.trim().to_owned());
            url.is_some()
        })?;
        url.context("the gateway printed no address")
    }

    /// Starts the example strategies the engine config names (a user's config may
    /// leave some out).
    fn start_strategies(&mut self) -> anyhow::Result<()> {
        let planned: Vec<&StrategySpec> = STRATEGIES
            .iter()
            .filter(|s| self.strategy_names.iter().any(|n| n == s.name))
            .collect();
        for s in &planned {
            let args = self.strategy_args(s);
            self.spawn(s.name, args)?;
        }
        let mut names: Vec<&str> = planned.iter().map(|s| s.name).collect();
        if let Some(py) = &self.python {
            let p = Proc::spawn(
                &py.interpreter,
                python::NAME,
                &py.args(&self.shm),
                &self.dir,
            )?;
            self.procs.list.push(p);
            names.push(python::NAME);
        }
        let socket = self.socket();
        self.wait_until("every strategy to attach", |_| {
            summary::fetch(&socket, CONTROL_TIMEOUT).is_ok_and(|s| {
                s.strategies
                    .iter()
                    .filter(|st| names.contains(&st.name.as_str()))
                    .all(|st| st.state == "alive")
            })
        })
    }

    fn strategy_args(&self, s: &StrategySpec) -> Vec<String> {
        let mut args = vec![
            "strategy".into(),
            s.kind.into(),
            "--dir".into(),
            path_arg(&self.shm),
            "--name".into(),
            s.name.into(),
            "--venue".into(),
            s.venue(self.venues).to_string(),
            "--qty".into(),
            s.qty.to_string(),
            "--interval-us".into(),
            s.interval_us.to_string(),
            "--seed".into(),
            s.seed.to_string(),
            "--wait".into(),
            "park".into(),
        ];
        if let Some(v) = s.book_venue(self.venues) {
            args.extend(["--book-venue".into(), v.to_string()]);
        }
        if s.anchor_per_mille > 0 {
            args.extend(["--anchor-per-mille".into(), s.anchor_per_mille.to_string()]);
        }
        args
    }

    /// The venue name strategy `name` trades on.
    fn venue_name(&self, name: &str) -> String {
        STRATEGIES
            .iter()
            .find(|s| s.name == name)
            .and_then(|s| {
                self.venues
                    .names()
                    .get(s.venue(self.venues) as usize)
                    .copied()
            })
            .or((name == python::NAME).then_some("sim"))
            .unwrap_or("?")
            .to_owned()
    }

    /// Polls `ready` every 50 ms until it holds; fails if a child exits, Ctrl-C
    /// arrives or [`START_TIMEOUT`] passes.
    fn wait_until(
        &mut self,
        what: &str,
        mut ready: impl FnMut(&mut Procs) -> bool,
    ) -> anyhow::Result<()> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            self.check_children()?;
            if ready(&mut self.procs) {
                return Ok(());
            }
            if self.stop.load(Ordering::Relaxed) {
                bail!("interrupted while waiting for {what}");
            }
            if Instant::now() >= deadline {
                bail!(
                    "timed out after {} s waiting for {what}",
                    START_TIMEOUT.as_secs()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// While `up` starts: a strategy that dies (the engine declared it dead, say) is
    /// restarted by the supervisor; any other child that exits fails the run (it
    /// failed at its own start: its config or its port).
    fn check_children(&mut self) -> anyhow::Result<()> {
        if let Some((p, status)) = self.procs.first_exited() {
            if STRATEGIES.iter().any(|s| s.name == p.name) {
                return self.sup.tend(&mut self.procs, self.t0);
            }
            bail!(
                "the {} process exited unexpectedly ({}); last lines of {}:\n{}",
                p.name,
                describe(status),
                p.log.display(),
                p.log_excerpt(12)
            );
        }
        Ok(())
    }

    fn summary(&self) -> anyhow::Result<EngineSummary> {
        summary::fetch(&self.socket(), CONTROL_TIMEOUT).context("reading the engine's summary")
    }

    /// The engine's summary, waiting (and restarting children) up to
    /// [`START_TIMEOUT`] while the engine is being restarted.
    pub(super) fn summary_patiently(&mut self) -> anyhow::Result<EngineSummary> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            self.sup.tend(&mut self.procs, self.t0)?;
            match self.summary() {
                Ok(s) => return Ok(s),
                Err(e) if Instant::now() >= deadline => return Err(e),
                Err(_) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
    }

    fn header(&mut self, addr: SocketAddr, md_port: u16) {
        println!("peregrine up: run directory {}", self.dir.display());
        println!(
            "  exchange    pid {:<8} orders on tcp {addr}, market data to udp {}:{md_port} (multicast on loopback)",
            self.pid("exchange"),
            plan::MD_GROUP,
        );
        if self.venues.fix {
            println!(
                "  {FIX_GATEWAY} pid {:<8} FIX 4.4 on 127.0.0.1:{}, session {} trading as account {} (the engine's venue fix)",
                self.pid(FIX_GATEWAY),
                self.ports.fix,
                plan::FIX_COMP_ID,
                plan::FIX_ACCOUNT,
            );
        }
        println!(
            "  engine      pid {:<8} shm {}",
            self.pid("engine"),
            self.shm.display()
        );
        let names = self.strategy_names.clone();
        for s in STRATEGIES
            .iter()
            .filter(|s| names.iter().any(|n| n == s.name))
        {
            println!(
                "  {:<11} pid {:<8} {} on venue {} ({})",
                s.name,
                self.pid(s.name),
                s.kind,
                s.venue(self.venues),
                self.venue_name(s.name)
            );
        }
        if let Some(file) = self.python.as_ref().map(|py| py.file.display().to_string()) {
            println!(
                "  {:<11} pid {:<8} python {file} on venue 0 (sim)",
                python::NAME,
                self.pid(python::NAME),
            );
        }
        if !self.venues.exchange {
            println!(
                "  note: the engine's exchange venue is off in this build (see docs/up.md): \
                 every strategy trades on the simulated venue"
            );
        }
        println!(
            "  metrics     exchange http://127.0.0.1:{}/metrics  engine http://127.0.0.1:{}/metrics",
            self.ports.exchange_metrics, self.ports.engine_metrics
        );
        println!("Ctrl-C stops and prints the summary.");
        let _ = std::io::stdout().flush();
    }

    fn pid(&mut self, name: &str) -> String {
        self.procs
            .get(name)
            .map_or_else(|| "-".to_owned(), |p| p.pid().to_string())
    }

    /// Prints progress once a second until the duration passes or a signal arrives.
    fn watch(&mut self, duration: Option<Duration>, started: Instant) -> anyhow::Result<()> {
        let mut prev: Option<(EngineSummary, Instant)> = None;
        let mut next_line = started + Duration::from_secs(1);
        loop {
            self.sup.tend(&mut self.procs, started)?;
            let now = Instant::now();
            if self.stop.load(Ordering::Relaxed) || duration.is_some_and(|d| now - started >= d) {
                return Ok(());
            }
            if now >= next_line {
                // After a stall, the next line comes a second from now, not a burst of
                // lines catching up (each would cover a sliver of a second).
                next_line =
                    (next_line + Duration::from_secs(1)).max(now + Duration::from_millis(500));
                // The engine may be restarting: no line this second.
                let Ok(s) = self.summary() else {
                    if !self.quiet {
                        println!(
                            "[{:>6.1} s] engine not answering (restarting?)",
                            (now - started).as_secs_f64()
                        );
                    }
                    prev = None;
                    continue;
                };
                if let Some(tui) = self.tui.as_mut() {
                    tui.draw(
                        &s,
                        prev.as_ref().map(|(p, _)| p),
                        &self.procs,
                        (now - started).as_secs_f64(),
                    );
                } else if !self.quiet {
                    let dt = prev
                        .as_ref()
                        .map_or(0.0, |(_, at)| (now - *at).as_secs_f64());
                    let line = report::progress_line(
                        (now - started).as_secs_f64(),
                        &s,
                        prev.as_ref().map(|(p, _)| p),
                        dt,
                    );
                    println!("{line}");
                    let _ = std::io::stdout().flush();
                }
                prev = Some((s, now));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A path as a command-line argument (`run_dir` refuses non-UTF-8 paths).
fn path_arg(p: &Path) -> String {
    p.display().to_string()
}
