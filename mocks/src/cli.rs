//! The `pallas-mocks` command line: `up` starts an ecosystem file's mocks, `pallas` a default mock
//! Pallas, `validate` checks a file, `record` writes one from real upstreams.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::ecosystem::Ecosystem;
use crate::record::{RecordConfig, Recorder, Upstream, parse_named};
use crate::spec::Dialect;
use crate::spec::{EcosystemSpec, MockPallasSpec};
use crate::validate::parse_ecosystem;

/// The example ecosystem (`mocks/examples/ecosystem.yaml`), embedded: what `up` and `validate`
/// serve without a file, and `example` prints.
pub const EXAMPLE_ECOSYSTEM: &str = include_str!("../examples/ecosystem.yaml");

/// How diagnostics name the embedded example.
pub const EXAMPLE_NAME: &str = "<embedded example ecosystem>";

/// Exit code: everything went well.
pub const EXIT_OK: u8 = 0;
/// Exit code: the mocks could not start or run (port in use, I/O error…).
pub const EXIT_RUNTIME: u8 = 1;
/// Exit code: the ecosystem file is unreadable, malformed or invalid; nothing was started.
pub const EXIT_BAD_INPUT: u8 = 2;

/// Mock LLM providers and mock MCP servers for local development and tests.
#[derive(Debug, Parser)]
#[command(name = "pallas-mocks", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start every mock an ecosystem file declares; stop on Ctrl-C or SIGTERM. Without a file,
    /// the embedded example ecosystem (`pallas-mocks example` prints it): mock OpenAI and
    /// Anthropic models and five mock MCP servers.
    Up {
        /// The ecosystem file (YAML); default: the embedded example.
        file: Option<PathBuf>,
        /// Write `{"name": "url", …}` to this file once everything listens (with HTTPS mocks,
        /// also `"ca_file": path`).
        #[arg(long)]
        urls_out: Option<PathBuf>,
        /// Serve every mock over HTTPS with a generated CA (as `tls: true` in the file).
        #[arg(long)]
        tls: bool,
        /// Where to write the CA certificate (PEM) of the HTTPS mocks; default
        /// `pallas-mocks-ca.pem` beside the `--urls-out` file, else in the working directory.
        #[arg(long)]
        ca_out: Option<PathBuf>,
    },
    /// Start a mock Pallas (seed 000) to develop a Daedalus-side client against: a registry and
    /// two agents, `research` and `jarvis`, healthy, echoing messages with seed 000's progress.
    /// Prints the registry URL; stops on Ctrl-C or SIGTERM. For scripted health, progress
    /// variants and faults, write a `pallas:` section and use `up` (see
    /// `mocks/examples/pallas.yaml`).
    Pallas {
        /// The registry's port; `research` and `jarvis` take the next two (`P+1`, `P+2`), as
        /// in seed 000's layout. Ephemeral ports when absent.
        #[arg(long)]
        port: Option<u16>,
        /// Host name in the registry's agent URLs (default `127.0.0.1`); the mock still binds
        /// `127.0.0.1`.
        #[arg(long)]
        host: Option<String>,
        /// Write `{"pallas": registry URL, "pallas.research": URL, "pallas.jarvis": URL}` to
        /// this file once everything listens.
        #[arg(long)]
        urls_out: Option<PathBuf>,
    },
    /// Record real upstreams: a proxy in front of each provider and MCP server that returns the
    /// real answers and writes an ecosystem file `pallas-mocks up FILE` replays offline (rewritten
    /// after every exchange; secrets redacted). Stops on Ctrl-C or SIGTERM.
    Record {
        /// The ecosystem file to write.
        #[arg(long)]
        out: PathBuf,
        /// An OpenAI-compatible provider, `[NAME=]URL` (e.g. `https://api.openai.com/v1`;
        /// name `openai` by default). Repeatable.
        #[arg(long, value_name = "[NAME=]URL")]
        openai: Vec<String>,
        /// An Anthropic provider, `[NAME=]URL` (e.g. `https://api.anthropic.com`; name
        /// `anthropic` by default). Repeatable.
        #[arg(long, value_name = "[NAME=]URL")]
        anthropic: Vec<String>,
        /// A downstream MCP server, `NAME=URL` (its Streamable HTTP endpoint). Repeatable.
        #[arg(long, value_name = "NAME=URL")]
        mcp: Vec<String>,
        /// Extra CA certificates (PEM) to trust, besides the system roots and `SSL_CERT_FILE`.
        #[arg(long, value_name = "PEM")]
        ca_file: Vec<PathBuf>,
        /// Write `{"name": "url", …}` (the local URLs) to this file once everything listens.
        #[arg(long)]
        urls_out: Option<PathBuf>,
    },
    /// Check an ecosystem file and report the first problem with file:line:col.
    Validate {
        /// The ecosystem file (YAML); default: the embedded example.
        file: Option<PathBuf>,
    },
    /// Print the embedded example ecosystem, to copy and edit.
    Example,
}

/// Reads and validates an ecosystem file (`None`: the embedded example); on failure prints the
/// diagnostic to stderr.
pub fn load(file: Option<&Path>) -> Result<EcosystemSpec, ExitCode> {
    let (name, text) = match file {
        None => (EXAMPLE_NAME.to_owned(), EXAMPLE_ECOSYSTEM.to_owned()),
        Some(file) => match std::fs::read_to_string(file) {
            Ok(t) => (file.display().to_string(), t),
            Err(e) => {
                eprintln!("error: cannot read {}: {e}", file.display());
                return Err(ExitCode::from(EXIT_BAD_INPUT));
            }
        },
    };
    parse_ecosystem(&name, &text).map_err(|e| {
        eprintln!("{:?}", miette::Report::new(e));
        ExitCode::from(EXIT_BAD_INPUT)
    })
}

/// Runs the command line.
pub async fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Example => {
            print!("{EXAMPLE_ECOSYSTEM}");
            ExitCode::from(EXIT_OK)
        }
        Command::Validate { file } => match load(file.as_deref()) {
            Ok(spec) => {
                let pallas = spec
                    .pallas
                    .as_ref()
                    .map(|p| format!(", a mock Pallas with {} agents", p.agents.len()))
                    .unwrap_or_default();
                println!(
                    "{}: ok ({} LLM mocks, {} MCP servers{pallas})",
                    file.as_deref()
                        .map_or_else(|| EXAMPLE_NAME.to_owned(), |f| f.display().to_string()),
                    spec.llms.len(),
                    spec.mcp_servers.len()
                );
                ExitCode::from(EXIT_OK)
            }
            Err(code) => code,
        },
        Command::Pallas {
            port,
            host,
            urls_out,
        } => {
            let spec = match default_pallas(port, host) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(EXIT_BAD_INPUT);
                }
            };
            let ca_out = Path::new("pallas-mocks-ca.pem");
            up(&spec, urls_out.as_deref(), ca_out).await
        }
        Command::Record {
            out,
            openai,
            anthropic,
            mcp,
            ca_file,
            urls_out,
        } => match record_config(out, &openai, &anthropic, &mcp, &ca_file) {
            Ok(config) => record(config, urls_out.as_deref()).await,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(EXIT_BAD_INPUT)
            }
        },
        Command::Up {
            file,
            urls_out,
            tls,
            ca_out,
        } => {
            let mut spec = match load(file.as_deref()) {
                Ok(s) => s,
                Err(code) => return code,
            };
            for pack in spec
                .mcp_servers
                .values_mut()
                .filter_map(|m| m.pack.as_mut())
            {
                pack.apply_env();
            }
            spec.tls |= tls;
            let ca_out = ca_out.unwrap_or_else(|| {
                urls_out
                    .as_deref()
                    .and_then(Path::parent)
                    .unwrap_or(Path::new(""))
                    .join("pallas-mocks-ca.pem")
            });
            up(&spec, urls_out.as_deref(), &ca_out).await
        }
    }
}

async fn up(spec: &EcosystemSpec, urls_out: Option<&Path>, ca_out: &Path) -> ExitCode {
    let eco = match Ecosystem::start_with_fixed_ports(spec).await {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{:?}", miette::Report::new(e));
            return ExitCode::from(EXIT_RUNTIME);
        }
    };
    let mut urls = eco.urls();
    println!("{}", url_table(spec, &urls));
    if let Some(p) = eco.pallas() {
        println!(
            "Mock Pallas registry (register this URL in Daedalus): {}\n  {}\n  journal: {}/__mock/journal",
            p.registry_url(),
            p.server_json_url(),
            p.registry_url()
        );
    }
    if let Some(tls) = eco.tls() {
        if let Err(e) = tls.write_ca(ca_out) {
            eprintln!("error: cannot write {}: {e}", ca_out.display());
            eco.shutdown().await;
            return ExitCode::from(EXIT_RUNTIME);
        }
        let path = std::fs::canonicalize(ca_out).unwrap_or_else(|_| ca_out.to_path_buf());
        println!("CA certificate of the HTTPS mocks: {}", path.display());
        urls.insert("ca_file".to_owned(), path.display().to_string());
    }
    if let Some(path) = urls_out
        && let Err(e) = write_urls(path, &urls)
    {
        eprintln!("error: cannot write {}: {e}", path.display());
        eco.shutdown().await;
        return ExitCode::from(EXIT_RUNTIME);
    }
    wait_for_signal().await;
    tracing::info!("stopping mocks");
    eco.shutdown().await;
    ExitCode::from(EXIT_OK)
}

/// The ecosystem of `pallas-mocks pallas`: [`MockPallasSpec::two_agents`], the registry on
/// `port` and the agents on the next ports when given.
pub fn default_pallas(port: Option<u16>, host: Option<String>) -> Result<EcosystemSpec, String> {
    let mut pallas = MockPallasSpec::two_agents();
    pallas.host = host;
    if let Some(p) = port {
        pallas.port = Some(p);
        for (offset, key) in (1u16..).zip(crate::spec::DEFAULT_AGENTS) {
            let agent_port = p
                .checked_add(offset)
                .ok_or_else(|| format!("--port {p} leaves no room for the agents' ports"))?;
            if let Some(agent) = pallas.agents.get_mut(key) {
                agent.port = Some(agent_port);
            }
        }
    }
    let spec = EcosystemSpec {
        pallas: Some(pallas),
        ..EcosystemSpec::default()
    };
    if let Some(issue) = crate::validate::validate_ecosystem(&spec).first() {
        return Err(format!("{}: {}", issue.path, issue.message));
    }
    Ok(spec)
}

/// The recorder's configuration from the command line (and `SSL_CERT_FILE`).
pub fn record_config(
    out: PathBuf,
    openai: &[String],
    anthropic: &[String],
    mcp: &[String],
    ca_files: &[PathBuf],
) -> Result<RecordConfig, String> {
    let mut config = RecordConfig {
        out,
        ..RecordConfig::default()
    };
    let mut add = |arg: &String, default: Option<&str>, up: &dyn Fn(String) -> Upstream| {
        let (name, url) = parse_named(arg, default)?;
        if config.upstreams.insert(name.clone(), up(url)).is_some() {
            return Err(format!(
                "`{name}` is named twice; use NAME=URL to tell them apart"
            ));
        }
        Ok::<(), String>(())
    };
    for a in openai {
        add(a, Some("openai"), &|url| Upstream::Llm {
            dialect: Dialect::Openai,
            url,
        })?;
    }
    for a in anthropic {
        add(a, Some("anthropic"), &|url| Upstream::Llm {
            dialect: Dialect::Anthropic,
            url,
        })?;
    }
    for a in mcp {
        add(a, None, &|url| Upstream::Mcp { url })?;
    }
    if config.upstreams.is_empty() {
        return Err("nothing to record: give --openai, --anthropic or --mcp".to_owned());
    }
    let env_ca = std::env::var_os("SSL_CERT_FILE").map(PathBuf::from);
    for path in env_ca.iter().chain(ca_files) {
        let pem =
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        config.ca_pems.push(pem);
    }
    Ok(config)
}

async fn record(config: RecordConfig, urls_out: Option<&Path>) -> ExitCode {
    let out = config.out.clone();
    let kinds: std::collections::BTreeMap<String, &'static str> = config
        .upstreams
        .iter()
        .map(|(n, u)| {
            let kind = match u {
                Upstream::Llm {
                    dialect: Dialect::Openai,
                    ..
                } => "openai",
                Upstream::Llm {
                    dialect: Dialect::Anthropic,
                    ..
                } => "anthropic",
                Upstream::Mcp { .. } => "mcp",
            };
            (n.clone(), kind)
        })
        .collect();
    let recorder = match Recorder::start(config).await {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{:?}", miette::Report::new(e));
            return ExitCode::from(EXIT_RUNTIME);
        }
    };
    let urls = recorder.urls();
    let width = urls.keys().map(String::len).max().unwrap_or(4).max(4);
    let mut table = format!(
        "{:width$}  {:9}  URL (point the bridge here)\n",
        "NAME", "KIND"
    );
    for (name, url) in &urls {
        let kind = kinds.get(name).copied().unwrap_or("");
        table.push_str(&format!("{name:width$}  {kind:9}  {url}\n"));
    }
    println!("{table}Recording to {}; stop with Ctrl-C.", out.display());
    if let Some(path) = urls_out
        && let Err(e) = write_urls(path, &urls)
    {
        eprintln!("error: cannot write {}: {e}", path.display());
        return ExitCode::from(EXIT_RUNTIME);
    }
    wait_for_signal().await;
    let (turns, calls) = recorder.counts();
    match recorder.finish().await {
        Ok(()) => {
            println!(
                "Wrote {} ({turns} model answers, {calls} tool calls); replay with `pallas-mocks up {}`.",
                out.display(),
                out.display()
            );
            ExitCode::from(EXIT_OK)
        }
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", out.display());
            ExitCode::from(EXIT_RUNTIME)
        }
    }
}

/// The name → URL table `up` prints.
pub fn url_table(
    spec: &EcosystemSpec,
    urls: &std::collections::BTreeMap<String, String>,
) -> String {
    let width = urls.keys().map(String::len).max().unwrap_or(4).max(4);
    let mut out = format!("{:width$}  {:9}  URL\n", "NAME", "KIND");
    for (name, url) in urls {
        let kind = if spec.pallas.is_some() && name == "pallas" {
            "pallas".to_owned()
        } else if spec.pallas.is_some() && name.starts_with("pallas.") {
            "agent".to_owned()
        } else if let Some(l) = spec.llms.get(name) {
            match l.dialect {
                crate::spec::Dialect::Openai => "openai".to_owned(),
                crate::spec::Dialect::Anthropic => "anthropic".to_owned(),
            }
        } else {
            let r = spec.mcp_servers.get(name).map(|m| m.reachability);
            match r {
                Some(crate::spec::Reachability::Down) => "mcp/down".to_owned(),
                Some(crate::spec::Reachability::Blackhole) => "mcp/hole".to_owned(),
                _ => "mcp".to_owned(),
            }
        };
        out.push_str(&format!("{name:width$}  {kind:9}  {url}\n"));
    }
    out
}

/// Writes the URL map as JSON, atomically (readers never see a partial file).
pub fn write_urls(
    path: &Path,
    urls: &std::collections::BTreeMap<String, String>,
) -> std::io::Result<()> {
    let json = serde_json::to_string_pretty(urls).map_err(std::io::Error::other)?;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, json)?;
    std::fs::rename(&tmp, path)
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(e) => {
                tracing::warn!("cannot listen for SIGTERM: {e}");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
