//! Every `peregrine` command in README.md and docs/*.md, as written, parses with the
//! real binary (issue 32: documented commands had rotted: a subcommand that no longer
//! existed, flags that had been removed). Each fenced `sh`/`bash`/plain block is read;
//! continuation lines are joined, comments, redirections and `&`/`;`/`|` separators
//! split off, `[optional]` parts dropped, and the documented placeholders (`N`, `T`,
//! `ADMIN_ADDR`, `$i`, ...) given sample values. The binary is run with
//! `PEREGRINE_PARSE_ONLY=1`, which parses the command line exactly as a user's run would
//! and stops there. The README's exchange sequence is also run for real
//! (`readme_exchange_commands_work_on_a_fresh_copy` in cli.rs).

use std::path::{Path, PathBuf};
use std::process::Command;

/// A documented command: where it is, and its arguments after the binary's name.
#[derive(Debug)]
pub(crate) struct Documented {
    pub file: String,
    pub line: usize,
    pub args: Vec<String>,
}

pub(crate) fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md and every docs/*.md, in a stable order.
fn doc_files() -> Vec<PathBuf> {
    let root = repo_root();
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// Splits one shell word list: quotes group, `#` at a word's start ends the line.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut started = false;
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    started = true;
                }
                '#' if !started => break,
                c if c.is_whitespace() => {
                    if started {
                        out.push(std::mem::take(&mut cur));
                        started = false;
                    }
                }
                c => {
                    cur.push(c);
                    started = true;
                }
            },
        }
    }
    if started {
        out.push(cur);
    }
    out
}

/// Sample values for the placeholders the docs use.
fn sample(word: &str) -> String {
    match word {
        "N" | "T" | "I" | "$i" => "1".into(),
        "ADMIN_ADDR" => "127.0.0.1:7731".into(),
        w if w.contains("$i") => w.replace("$i", "1"),
        w => w.into(),
    }
}

/// The arguments after `peregrine` in one command (a word list between separators),
/// or None when the command does not run `peregrine`.
fn peregrine_args(cmd: &[String]) -> Option<Vec<String>> {
    // Environment assignments (`VAR=value`) before the command word.
    let first = cmd
        .iter()
        .position(|w| !w.contains('=') || w.starts_with('-'))?;
    let cmd = &cmd[first..];
    let at = if cmd[0] == "cargo" {
        // `cargo run --release -p peregrine -- ARGS`: only the `peregrine` package's binary.
        let p = cmd.iter().position(|w| w == "-p")?;
        if cmd.get(p + 1).map(String::as_str) != Some("peregrine")
            || cmd.get(1).map(String::as_str) != Some("run")
        {
            return None;
        }
        cmd.iter().position(|w| w == "--")?
    } else if cmd[0] == "peregrine" || cmd[0].ends_with("/peregrine") {
        0
    } else {
        return None;
    };
    let mut args = Vec::new();
    let mut skip_next = false;
    let mut depth = 0usize;
    for w in &cmd[at + 1..] {
        if skip_next {
            skip_next = false;
            continue;
        }
        // `[optional parts]` of a synopsis are dropped.
        if depth > 0 || w.starts_with('[') {
            depth += w.matches('[').count();
            depth -= w.matches(']').count().min(depth);
            continue;
        }
        if matches!(w.as_str(), ">" | "2>" | ">>" | "2>>" | "<") {
            skip_next = true;
            continue;
        }
        if w.starts_with('>') || w.starts_with("2>") || w.starts_with("2>&") {
            continue;
        }
        args.push(sample(w));
    }
    Some(args)
}

/// Every documented `peregrine` command line.
pub(crate) fn documented_commands() -> Vec<Documented> {
    let root = repo_root();
    let mut found = Vec::new();
    for path in doc_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .display()
            .to_string();
        let mut in_block = false;
        let mut shell = false;
        let mut pending = String::new();
        let mut pending_line = 0;
        for (i, line) in text.lines().enumerate() {
            if let Some(tag) = line.trim_start().strip_prefix("```") {
                if in_block {
                    in_block = false;
                } else {
                    in_block = true;
                    shell = matches!(tag.trim(), "" | "sh" | "bash" | "shell");
                }
                pending.clear();
                continue;
            }
            if !in_block || !shell {
                continue;
            }
            if pending.is_empty() {
                pending_line = i + 1;
            }
            match line.trim_end().strip_suffix('\\') {
                Some(head) => {
                    pending.push_str(head);
                    pending.push(' ');
                    continue;
                }
                None => pending.push_str(line),
            }
            let full = std::mem::take(&mut pending);
            let ws = words(&full);
            for cmd in
                ws.split(|w| matches!(w.as_str(), "&" | "&&" | ";" | "|" | "||" | "do" | "done"))
            {
                // `a & b` written without spaces around `&` still splits.
                let cmd: Vec<String> = cmd
                    .iter()
                    .flat_map(|w| {
                        w.split('&')
                            .filter(|p| !p.is_empty())
                            .map(String::from)
                            .collect::<Vec<_>>()
                    })
                    .collect();
                if let Some(args) = peregrine_args(&cmd) {
                    if !args.is_empty() {
                        found.push(Documented {
                            file: file.clone(),
                            line: pending_line,
                            args,
                        });
                    }
                }
            }
        }
    }
    found
}

#[test]
fn every_documented_command_parses() {
    let commands = documented_commands();
    // The docs hold dozens of them; an extractor that finds none is broken.
    assert!(
        commands.len() >= 30,
        "only {} commands found",
        commands.len()
    );
    let mut failures = Vec::new();
    for c in &commands {
        // `peregrine bench ...` hands its arguments to the peregrine-bench binary.
        if c.args.first().map(String::as_str) == Some("bench") {
            continue;
        }
        let out = Command::new(env!("CARGO_BIN_EXE_peregrine"))
            .args(&c.args)
            .env("PEREGRINE_PARSE_ONLY", "1")
            .output()
            .unwrap();
        if !out.status.success() {
            failures.push(format!(
                "{}:{}: peregrine {}\n{}",
                c.file,
                c.line,
                c.args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} documented command(s) do not parse:\n\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_extractor_reads_shell_as_a_user_would() {
    let w = words(r#"peregrine admin deposit --asset "US D" 2> x.log & # comment"#);
    assert_eq!(
        w,
        [
            "peregrine",
            "admin",
            "deposit",
            "--asset",
            "US D",
            "2>",
            "x.log",
            "&"
        ]
    );
    let args = peregrine_args(&w[..7]).unwrap();
    assert_eq!(args, ["admin", "deposit", "--asset", "US D"]);
    let cargo: Vec<String> = words("cargo run --release -p peregrine -- up --duration 20");
    assert_eq!(peregrine_args(&cargo).unwrap(), ["up", "--duration", "20"]);
    let bench = words("cargo run --release -p peregrine-bench -- book");
    assert_eq!(peregrine_args(&bench), None);
    let env = words("QUICKFIX_DEFS=/x cargo test -p peregrine --test fix_gateway");
    assert_eq!(peregrine_args(&env), None);
    let opt = words("peregrine verify trade --dir d [--config exchange.toml] --tick N");
    assert_eq!(
        peregrine_args(&opt).unwrap(),
        ["verify", "trade", "--dir", "d", "--tick", "1"]
    );
}

/// The README's "Running the exchange" commands, as written, in a fresh directory holding
/// only the shipped exchange.toml (its ports moved to free ones so parallel tests cannot
/// collide): keygen, then the exchange, then loadgen against it, an order by hand,
/// then md.
#[test]
fn readme_exchange_commands_work_on_a_fresh_copy() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    peregrine_testkit::with_timeout(120, || {
        let readme: Vec<Documented> = documented_commands()
            .into_iter()
            .filter(|c| c.file == "README.md")
            .collect();
        let find = |sub: &str| {
            readme
                .iter()
                .find(|c| c.args[0] == sub)
                .unwrap_or_else(|| panic!("README has no `peregrine {sub}` command"))
                .args
                .clone()
        };
        let dir = tempfile::tempdir().unwrap();
        let mut config = std::fs::read_to_string(repo_root().join("exchange.toml")).unwrap();
        for port in ["7700", "7701", "7702", "7790"] {
            let free = peregrine_testkit::free_port().to_string();
            config = config.replace(&format!("127.0.0.1:{port}"), &format!("127.0.0.1:{free}"));
        }
        std::fs::write(dir.path().join("exchange.toml"), config).unwrap();
        let run = |args: &[String]| {
            let mut c = Command::new(env!("CARGO_BIN_EXE_peregrine"));
            c.args(args).current_dir(dir.path());
            c
        };

        let keygen = run(&find("keygen")).output().unwrap();
        assert!(
            keygen.status.success(),
            "keygen: {}",
            String::from_utf8_lossy(&keygen.stderr)
        );

        let mut exchange = run(&find("exchange"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(exchange.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.starts_with("listening on"), "exchange: {line:?}");

        let loadgen = run(&find("loadgen")).output().unwrap();
        let text = String::from_utf8_lossy(&loadgen.stdout);
        assert!(
            loadgen.status.success() && text.contains("lost 0"),
            "loadgen: {text}\n{}",
            String::from_utf8_lossy(&loadgen.stderr)
        );

        let order = run(&find("order")).output().unwrap();
        let text = String::from_utf8_lossy(&order.stdout);
        assert!(
            order.status.success() && text.contains("ACK"),
            "order: {text}\n{}",
            String::from_utf8_lossy(&order.stderr)
        );

        let mut md = run(&find("md")).stdout(Stdio::piped()).spawn().unwrap();
        let mut out = BufReader::new(md.stdout.take().unwrap());
        let mut seen = Vec::new();
        loop {
            let mut l = String::new();
            assert!(
                out.read_line(&mut l).unwrap() > 0,
                "md ended early: {seen:?}"
            );
            let book = l.starts_with("BOOK");
            seen.push(l);
            if book {
                break;
            }
        }
        let _ = md.kill();
        let _ = md.wait();
        let _ = exchange.kill();
        let _ = exchange.wait();
    });
}
