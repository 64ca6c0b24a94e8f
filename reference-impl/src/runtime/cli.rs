//! The `pallas` command line: arguments, logging setup, exit codes.

use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use super::{RuntimeError, Signals, StartOptions, start};
use crate::config::{self, Deployment, LoadOptions};
use crate::logging::{self, LogSettings};

/// Exit code of a configuration error.
pub const EXIT_CONFIG: u8 = 2;
/// Exit code of any other startup failure (a port that cannot be bound, a dependency not ready).
pub const EXIT_STARTUP: u8 = 3;

const ENV_HELP: &str = "\
Environment variables:
  PALLAS_AGENTS_CONFIG   path of agents.yaml (default: ./agents.yaml)
  PALLAS_BIND_HOST       address every server binds (default: 0.0.0.0)
  PALLAS_LOG_LEVEL       level of Pallas's own logs (fallback: logger.level, then info)
  PALLAS_ROOT_LOG_LEVEL  level of dependency logs (default: the less verbose of PALLAS_LOG_LEVEL and info;
                         dependencies stay at warn unless this is set)
  PALLAS_LOG_STDERR      1: also write the JSON logs to stderr
  PALLAS_LOG_FILE        rotating JSON log file, 10 MB x 5 (default: ~/.local/state/pallas/pallas.log)
  OPENAI_API_KEY         OpenAI key when fastagent.secrets.yaml sets none
  OPENAI_BASE_URL        OpenAI-compatible endpoint (default: https://api.openai.com/v1)
  ANTHROPIC_API_KEY      Anthropic key when fastagent.secrets.yaml sets none
  ANTHROPIC_BASE_URL     Anthropic endpoint (default: https://api.anthropic.com)
A .env file in the working directory fills variables the environment does not set.

Files read from the working directory: agents.yaml, fastagent.config.yaml, fastagent.secrets.yaml,
.env, and one AgentCard per agent (module: agents.jarvis -> agents/jarvis.md).
Signals: SIGHUP reloads agents.yaml (so does any change of the configuration files);
SIGTERM or Ctrl-C shuts down gracefully.
Exit codes: 0 clean shutdown, 2 configuration error, 3 other startup failure.";

/// `pallas`: serve every agent of `agents.yaml` and the registry, or one agent.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "pallas",
    version,
    about = "Reference Pallas: serve agents as MCP Streamable HTTP servers, with a registry",
    long_about = "Reference Pallas: serve agents as MCP Streamable HTTP servers, with a registry.\n\n\
        `pallas` starts the registry and every agent of agents.yaml (depends_on agents first).\n\
        `pallas --agent NAME` starts that one agent, without registry and without its dependencies.",
    after_help = ENV_HELP
)]
pub struct Cli {
    /// Start only this agent (no registry, no dependency resolution).
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// Project directory (default: the working directory).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// Path of agents.yaml, relative to the project directory.
    #[arg(long, value_name = "FILE", env = "PALLAS_AGENTS_CONFIG")]
    pub agents_config: Option<PathBuf>,
    /// Address every server binds.
    #[arg(
        long,
        value_name = "ADDR",
        env = "PALLAS_BIND_HOST",
        default_value = "0.0.0.0"
    )]
    pub bind: IpAddr,
    /// Do not reload when configuration files change (SIGHUP still reloads).
    #[arg(long)]
    pub no_watch: bool,
    /// Validate the configuration, print a summary, and exit.
    #[arg(long)]
    pub check: bool,
}

fn report(error: &dyn miette::Diagnostic) {
    let handler =
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor());
    let mut out = String::new();
    if handler.render_report(&mut out, error).is_err() {
        out = error.to_string();
    }
    eprintln!("{out}");
}

/// Secret values of a deployment (API keys, configured headers), scrubbed from logs.
pub fn secrets_of(deployment: &Deployment) -> Vec<String> {
    let mut out = Vec::new();
    for a in &deployment.agents {
        if let Some(k) = &a.settings.provider.api_key {
            out.push(k.expose().to_owned());
        }
        for s in &a.settings.servers {
            for (_, v) in &s.headers {
                let v = v.expose();
                out.push(v.to_owned());
                if let Some(token) = v.strip_prefix("Bearer ") {
                    out.push(token.to_owned());
                }
            }
        }
    }
    out
}

/// Runs the command line to completion.
pub async fn run(cli: Cli) -> ExitCode {
    #[cfg(feature = "defects")]
    match crate::defects::init_from_env() {
        Ok(active) if !active.is_empty() => {
            eprintln!("pallas: defects active: {}", active.join(", "));
        }
        Ok(_) => {}
        Err(e) => {
            report(&e);
            return ExitCode::from(EXIT_CONFIG);
        }
    }
    let load = LoadOptions {
        agents_config: cli
            .agents_config
            .clone()
            .filter(|_| !crate::defect!("agents-config-env-ignored")),
        env: None,
    };
    let deployment = match config::load(&cli.dir, &load) {
        Ok(d) => d,
        Err(e) => {
            report(&e);
            if crate::defect!("config-error-exit-zero") {
                return ExitCode::SUCCESS;
            }
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    if cli.check {
        println!(
            "{}: {} agent(s) valid: {}",
            deployment.agents_file.display(),
            deployment.agents.len(),
            deployment
                .start_order()
                .iter()
                .map(|a| format!("{} (port {})", a.name(), a.port))
                .collect::<Vec<_>>()
                .join(", ")
        );
        return ExitCode::SUCCESS;
    }
    let log = match LogSettings::from_env(deployment.log_level.as_deref()) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("pallas: {e}");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    if let Err(e) = logging::init(&log, secrets_of(&deployment)) {
        eprintln!("pallas: {e}");
        return ExitCode::from(EXIT_STARTUP);
    }
    // Before anything serves: a SIGHUP sent right after the ready line must reload, not kill.
    let signals = Signals::install();
    let bind = if cli.bind.is_unspecified() && crate::defect!("bind-loopback-default") {
        IpAddr::from([127, 0, 0, 1])
    } else {
        cli.bind
    };
    let options = StartOptions {
        bind,
        agent: cli.agent.clone(),
        load,
        watch: !cli.no_watch,
        ..StartOptions::default()
    };
    let running = match start(&cli.dir, options).await {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(error = %e, "startup failed");
            report(&e);
            return ExitCode::from(match e {
                RuntimeError::Config(_) | RuntimeError::UnknownAgent { .. } => EXIT_CONFIG,
                _ => EXIT_STARTUP,
            });
        }
    };
    let agents = running.agent_addrs().await;
    let mut line = String::from("pallas ready:");
    if let Some(addr) = running.registry_addr {
        line.push_str(&format!(" registry={addr}"));
    }
    for (name, addr) in &agents {
        line.push_str(&format!(" {name}={addr}"));
    }
    eprintln!("{line}");
    tracing::info!(registry = ?running.registry_addr, agents = ?agents, "pallas ready");
    running.run_until_signalled(signals).await;
    // `rx-sigterm-exits-with-traceback`: `asyncio.run(_start_all())` with no shutdown handling:
    // the cancelled gather's `CancelledError` escapes, one error record per agent task.
    if crate::defect!("rx-sigterm-exits-with-traceback") {
        for name in agents.keys() {
            tracing::error!(agent = %name, "agent task failed: CancelledError");
        }
        eprintln!(
            "Traceback (most recent call last):\n  File \"pallas/__main__.py\", line 1, in main\n    asyncio.run(_start_all())\nasyncio.exceptions.CancelledError"
        );
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
