//! `pallas-conformance record`: a proxy between any MCP client and a bridge (its registry and
//! agent endpoints) that writes a scenario from what passed through ([`proxy`] forwards and
//! keeps each exchange; [`scenario`] turns them into steps and assertions, bearers replaced by
//! placeholders). The file is rewritten after every exchange, so it is complete whenever the
//! command is stopped.

pub mod proxy;
pub mod scenario;

use std::collections::BTreeMap;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::exit;
pub use proxy::{Proxy, Recorded};
pub use scenario::Naming;

/// Why recording cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The proxy's address cannot be bound.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The bound address cannot be read back.
    #[error("{0}")]
    Bound(#[source] std::io::Error),
    /// The proxy's HTTP client cannot be built.
    #[error("{0}")]
    Client(#[source] reqwest::Error),
    /// The scenario cannot be written as YAML.
    #[error("{0}")]
    Yaml(#[source] serde_saphyr::SerializeError),
    /// The scenario's folder cannot be created.
    #[error("{0}")]
    Folder(#[source] std::io::Error),
    /// The scenario file cannot be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// `record` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct RecordArgs {
    /// Registry base URL of the bridge: the proxy serves its document with every remote
    /// pointed at the proxy.
    #[arg(long, required_unless_present = "agent")]
    pub registry: Option<String>,
    /// An agent endpoint without a registry, `NAME=URL` (repeatable); proxied at
    /// `/agents/NAME/mcp`.
    #[arg(long, value_parser = crate::args::name_url)]
    pub agent: Vec<(String, String)>,
    /// Address the proxy listens on (port 0: a free port; the bound address is printed).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// The scenario file to write.
    #[arg(long, short = 'o')]
    pub out: PathBuf,
    /// The scenario's id.
    #[arg(long, default_value = "recorded-session")]
    pub id: String,
    /// The scenario's title.
    #[arg(long, default_value = "a recorded client session")]
    pub title: String,
    /// The message tool: its calls with only `message` become `send` steps.
    #[arg(long, default_value = "send_message")]
    pub message_tool: String,
    /// Stop after this long (default: until Ctrl-C).
    #[arg(long, value_parser = humantime::parse_duration)]
    pub duration: Option<Duration>,
}

/// Writes the scenario of `recorded` to `path`.
pub fn write(
    recorded: &[Recorded],
    naming: &Naming,
    path: &std::path::Path,
) -> Result<(), RecordError> {
    let text = scenario::yaml(&scenario::scenario(recorded, naming))?;
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(RecordError::Folder)?;
    }
    std::fs::write(path, text).map_err(|source| RecordError::Write {
        path: path.to_owned(),
        source,
    })
}

/// Runs `record` until Ctrl-C or `--duration`, rewriting the scenario after each exchange.
pub async fn run_command(args: &RecordArgs, out: &mut impl Write, err: &mut impl Write) -> u8 {
    let agents: BTreeMap<String, String> = args.agent.iter().cloned().collect();
    let proxy = match Proxy::start(args.listen, args.registry.clone(), agents.clone()).await {
        Ok(p) => p,
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            return exit::HARNESS_ERROR;
        }
    };
    if args.registry.is_some() {
        let _ = writeln!(out, "registry: {}", proxy.registry_url());
    }
    for name in agents.keys() {
        let _ = writeln!(out, "agent {name}: {}", proxy.agent_url(name));
    }
    let _ = writeln!(out, "recording into {}", args.out.display());
    let _ = out.flush();
    let naming = Naming {
        id: args.id.clone(),
        title: args.title.clone(),
        message_tool: args.message_tool.clone(),
    };
    let started = tokio::time::Instant::now();
    let mut written = usize::MAX;
    let mut ticker = tokio::time::interval(Duration::from_millis(200));
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            _ = tokio::signal::ctrl_c() => break,
        }
        let recorded = proxy.recorded();
        if recorded.len() != written {
            if let Err(e) = write(&recorded, &naming, &args.out) {
                let _ = writeln!(err, "error: {e}");
                return exit::HARNESS_ERROR;
            }
            written = recorded.len();
        }
        if args.duration.is_some_and(|d| started.elapsed() >= d) {
            break;
        }
    }
    let recorded = proxy.stop();
    if let Err(e) = write(&recorded, &naming, &args.out) {
        let _ = writeln!(err, "error: {e}");
        return exit::HARNESS_ERROR;
    }
    let _ = writeln!(
        out,
        "wrote {} exchange(s) to {}",
        recorded.len(),
        args.out.display()
    );
    exit::SUCCESS
}
