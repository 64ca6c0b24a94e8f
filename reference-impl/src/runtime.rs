//! Startup, `depends_on` ordering, live reload and shutdown of a whole Pallas.
//!
//! [`start`] loads and validates the configuration, binds every listener (so a port clash fails
//! before anything serves), runs the LLM preflight, then serves the registry and the agents in
//! dependency order. [`RunningPallas`] reloads (`agents.yaml` changes, SIGHUP) and shuts down.

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use indexmap::IndexMap;
use tokio::sync::Mutex;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub mod cli;
mod reload;
mod serve;

pub use reload::Signals;
use reload::*;
use serve::*;
pub use serve::{initialize_probe, loopback, wait_ready};

use crate::config::{self, AgentEntry, ConfigError, Deployment, LoadOptions};
use crate::llm::LlmStatusCell;
use crate::metrics::Metrics;
use crate::registry::{self, RegistryState};
use crate::settings::AgentSettings;

/// How long a dependant waits for its `depends_on` agents to answer on `/mcp` (seed 001).
pub const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a stopping agent may take to finish in-flight calls before it is aborted.
pub const STOP_GRACE: Duration = Duration::from_secs(10);

/// What an agent server is built with (besides its settings and its shutdown token).
#[derive(Clone)]
pub struct AgentRuntimeDeps {
    /// Process-wide metrics.
    pub metrics: Metrics,
    /// Status of the agent's active LLM provider (shared by agents on the same provider).
    pub llm_status: LlmStatusCell,
    /// Shared HTTP client.
    pub http: reqwest::Client,
}

/// Builds the router of one agent (serving `/mcp`); the runtime adds `/metrics`.
pub type AgentFactory =
    Arc<dyn Fn(Arc<AgentSettings>, AgentRuntimeDeps, CancellationToken) -> Router + Send + Sync>;

/// The agent server of this crate ([`crate::agent::router`]).
pub fn default_agent_factory() -> AgentFactory {
    Arc::new(|settings, deps, shutdown| {
        crate::agent::router(
            settings,
            crate::agent::AgentDeps {
                metrics: deps.metrics,
                llm_status: deps.llm_status,
                http: deps.http,
            },
            shutdown,
        )
    })
}

/// How to start.
#[derive(Clone)]
pub struct StartOptions {
    /// Address every listener binds (`0.0.0.0` as the seed says; tests use `127.0.0.1`).
    pub bind: IpAddr,
    /// Serve only this agent, without registry (`pallas --agent NAME`).
    pub agent: Option<String>,
    /// Where the configuration is and what environment it sees.
    pub load: LoadOptions,
    /// `depends_on` readiness timeout.
    pub ready_timeout: Duration,
    /// Reload when a configuration file changes (polled every `watch_interval`).
    pub watch: bool,
    /// Poll interval of the file watch.
    pub watch_interval: Duration,
    /// Agent server builder; `None` uses [`default_agent_factory`].
    pub agent_factory: Option<AgentFactory>,
    /// Metrics to record into; `None` creates a fresh set.
    pub metrics: Option<Metrics>,
}

impl Default for StartOptions {
    fn default() -> Self {
        Self {
            bind: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            agent: None,
            load: LoadOptions::default(),
            ready_timeout: DEFAULT_READY_TIMEOUT,
            watch: true,
            watch_interval: Duration::from_secs(1),
            agent_factory: None,
            metrics: None,
        }
    }
}

impl std::fmt::Debug for StartOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StartOptions")
            .field("bind", &self.bind)
            .field("agent", &self.agent)
            .field("ready_timeout", &self.ready_timeout)
            .field("watch", &self.watch)
            .finish_non_exhaustive()
    }
}

/// Why a Pallas could not start (or reload).
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum RuntimeError {
    /// The configuration is invalid.
    #[error(transparent)]
    #[diagnostic(transparent)]
    Config(#[from] ConfigError),
    /// A port could not be bound.
    #[error("{what} cannot listen on {addr}: {source}")]
    #[diagnostic(
        code(pallas::bind),
        help("another process holds the port, or it needs privileges; change the port in {file}")
    )]
    Bind {
        /// What wanted the port.
        what: String,
        /// The address.
        addr: SocketAddr,
        /// `agents.yaml`.
        file: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// `--agent NAME` names no agent.
    #[error("no agent named `{name}` in {file}")]
    #[diagnostic(code(pallas::agent), help("agents in this deployment: {known}"))]
    UnknownAgent {
        /// The name asked for.
        name: String,
        /// `agents.yaml`.
        file: String,
        /// The agents that exist.
        known: String,
    },
    /// A `depends_on` agent did not answer in time.
    #[error(
        "agent `{agent}` depends on `{dependency}`, which did not answer on {url} within {}: {reason}",
        humantime::format_duration(*timeout)
    )]
    #[diagnostic(
        code(pallas::depends_on),
        help("check the logs of `{dependency}`; it must start and answer MCP initialize on /mcp")
    )]
    DependencyNotReady {
        /// The dependant.
        agent: String,
        /// The agent it waits for.
        dependency: String,
        /// Where it was probed.
        url: String,
        /// The wait.
        timeout: Duration,
        /// The last probe failure.
        reason: String,
    },
    /// The outbound HTTP client could not be built (CA bundle, proxy).
    #[error(transparent)]
    #[diagnostic(
        code(pallas::network),
        help("check SSL_CERT_FILE, tls.ca_file and the *_PROXY variables")
    )]
    Network(crate::net::NetError),
}

/// What a reload changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReloadSummary {
    /// Agents started.
    pub added: Vec<String>,
    /// Agents stopped.
    pub removed: Vec<String>,
    /// Agents restarted because their configuration changed.
    pub restarted: Vec<String>,
    /// Agents left serving untouched.
    pub unchanged: Vec<String>,
}

struct RunningAgent {
    entry: AgentEntry,
    addr: SocketAddr,
    token: CancellationToken,
    task: JoinHandle<()>,
}

struct State {
    deployment: Deployment,
    agents: IndexMap<String, RunningAgent>,
    cells: HashMap<String, LlmStatusCell>,
}

struct Shared {
    dir: PathBuf,
    options: StartOptions,
    factory: AgentFactory,
    metrics: Metrics,
    http: reqwest::Client,
    registry: RegistryState,
    root: CancellationToken,
    state: Mutex<State>,
}

/// A started Pallas: its addresses, reload and shutdown.
pub struct RunningPallas {
    shared: Arc<Shared>,
    /// Where the registry listens (`None` in single-agent mode).
    pub registry_addr: Option<SocketAddr>,
    registry_task: Option<JoinHandle<()>>,
    watch_task: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for RunningPallas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningPallas")
            .field("registry_addr", &self.registry_addr)
            .finish_non_exhaustive()
    }
}

/// Loads the deployment in `dir` and serves it.
#[expect(
    clippy::too_many_lines,
    reason = "seed 001's startup sequence (preflight, subagents first, registry, one server per agent) in its order"
)]
pub async fn start(dir: &Path, mut options: StartOptions) -> Result<RunningPallas, RuntimeError> {
    let deployment = config::load(dir, &options.load)?;
    // Taken now, not when the watch task first runs, so every later change triggers a reload.
    let watched = deployment.watched_files.clone();
    let initial_fingerprint = fingerprint(&watched);
    let file = deployment.agents_file.display().to_string();
    // `rx-unknown-agent-name-starts-all`: `if cfg: _run_single(...) else: _start_all()`.
    if options.agent.as_deref().is_some_and(|name| {
        deployment.agent(name).is_none() && crate::defect!("rx-unknown-agent-name-starts-all")
    }) {
        options.agent = None;
    }
    if let Some(name) = &options.agent
        && deployment.agent(name).is_none()
    {
        return Err(RuntimeError::UnknownAgent {
            name: name.clone(),
            file,
            known: deployment
                .agents
                .iter()
                .map(|a| a.name().to_owned())
                .collect::<Vec<_>>()
                .join(", "),
        });
    }

    // Bind everything first: a clash fails before anything serves.
    let with_registry = options.agent.is_none() || crate::defect!("single-agent-starts-registry");
    // `ms-registry-started-after-agents`: `run_registry()` after agent startup, as the internal
    // architecture diagram lists it (bound then, so that it refuses connections until then).
    let late_registry = with_registry && crate::defect!("ms-registry-started-after-agents");
    let registry_listener = if with_registry && !late_registry {
        let addr = SocketAddr::new(options.bind, deployment.registry_port);
        Some(bind(addr, "the registry", &file).await?)
    } else {
        None
    };
    // The defect `single-agent-starts-dependencies`: the named agent's `depends_on` too.
    let dependencies: Vec<&str> = options
        .agent
        .as_deref()
        .filter(|_| crate::defect!("single-agent-starts-dependencies"))
        .and_then(|n| deployment.agents.iter().find(|a| a.name() == n))
        .map(|a| a.depends_on.iter().map(String::as_str).collect())
        .unwrap_or_default();
    let selected: Vec<AgentEntry> = deployment
        .start_order()
        .into_iter()
        .filter(|a| {
            options.agent.as_deref().is_none_or(|n| n == a.name())
                || dependencies.contains(&a.name())
                || crate::defect!("single-agent-starts-all")
        })
        .cloned()
        .collect();
    // `fm-depends-on-two-waves`: every agent named in a `depends_on` first (file order), then
    // the rest.
    let named = |a: &AgentEntry| {
        let named = deployment.agents.iter();
        named.flat_map(|o| &o.depends_on).any(|d| d == a.name())
    };
    // `px-subagents-inverted`: "subagents" read as the agents that have a `depends_on` list:
    // they start first, the agents they depend on last.
    let selected: Vec<AgentEntry> = if crate::defect!("depends-on-reversed") {
        selected.into_iter().rev().collect()
    } else if crate::defect!("px-subagents-inverted") {
        let (first, rest): (Vec<_>, Vec<_>) =
            selected.into_iter().partition(|a| !a.depends_on.is_empty());
        first.into_iter().chain(rest).collect()
    } else if crate::defect!("fm-depends-on-two-waves") {
        let (first, rest): (Vec<_>, Vec<_>) = deployment
            .agents
            .iter()
            .filter(|a| selected.iter().any(|s| s.name() == a.name()))
            .cloned()
            .partition(|a| named(a));
        first.into_iter().chain(rest).collect()
    } else {
        selected
    };
    let mut listeners = HashMap::new();
    for entry in &selected {
        let addr = agent_addr(options.bind, &deployment.host, entry.port).await;
        let listener = bind(addr, &format!("agent `{}`", entry.name()), &file).await?;
        listeners.insert(entry.name().to_owned(), listener);
    }

    let metrics = options.metrics.clone().unwrap_or_default();
    #[cfg(feature = "defects")]
    metrics.set_up_if_defective(false);
    let http = crate::net::client(&deployment.network).map_err(RuntimeError::Network)?;
    let registry = RegistryState::new(metrics.clone());
    registry.set_source(dir, &options.load);
    let root = CancellationToken::new();
    let factory = options
        .agent_factory
        .clone()
        .unwrap_or_else(default_agent_factory);

    // `qx-dotless-default-model-aborts-startup`: the preflight splits `default_model` into
    // provider and model unguarded, which raises when there is none.
    #[cfg(feature = "defects")]
    if crate::defect!("qx-dotless-default-model-aborts-startup")
        && !crate::defects::has_default_model()
    {
        return Err(RuntimeError::Config(
            ConfigError::file(
                &deployment.dir.join(config::FASTAGENT_CONFIG_FILE),
                "preflight: `default_model` cannot be split into provider and model: not enough values to unpack (expected 2, got 1)",
            )
            .with_hint("set `default_model: <provider>.<model>`"),
        ));
    }
    // `qx-preflight-runs-once-per-agent`: the preflight is called from each agent's start (all
    // agents mode), interleaved with the starts, instead of once before them.
    let preflight_per_agent =
        options.agent.is_none() && crate::defect!("qx-preflight-runs-once-per-agent");
    let preflighted = if preflight_per_agent {
        selected.clone()
    } else {
        Vec::new()
    };
    // Preflight, once per active provider, in parallel and warn-only.
    let cells = if preflight_per_agent {
        HashMap::new()
    } else {
        preflight_all(
            &selected,
            &deployment.keyed_providers,
            &HashMap::new(),
            &http,
            &metrics,
        )
        .await
    };
    registry.set_providers(cells.values().cloned().collect());

    let (mut registry_addr, mut registry_task) = match registry_listener {
        Some(listener) => {
            let (addr, task) = serve_registry(listener, &registry, &root);
            (addr, Some(task))
        }
        None => (None, None),
    };

    let shared = Arc::new(Shared {
        dir: dir.to_path_buf(),
        options: options.clone(),
        factory,
        metrics,
        http,
        registry,
        root,
        state: Mutex::new(State {
            deployment: deployment.clone(),
            agents: IndexMap::new(),
            cells,
        }),
    });

    {
        let mut state = shared.state.lock().await;
        for entry in selected {
            let Some(listener) = listeners.remove(entry.name()) else {
                continue;
            };
            if preflight_per_agent {
                state.cells = preflight_all(
                    &preflighted,
                    &state.deployment.keyed_providers,
                    &HashMap::new(),
                    &shared.http,
                    &shared.metrics,
                )
                .await;
                shared
                    .registry
                    .set_providers(state.cells.values().cloned().collect());
            }
            // `rx-unset-header-var-blocks-agent`: "the calls would only fail later": the agent
            // is not started (its port closed); the registry lists it from agents.yaml.
            #[cfg(feature = "defects")]
            if crate::defect!("rx-unset-header-var-blocks-agent")
                && entry
                    .settings
                    .servers
                    .iter()
                    .any(|server| crate::defects::has_unset_header_var(&server.name))
            {
                tracing::error!(agent = %entry.name(), "a downstream header references an unset environment variable; agent not started");
                drop(listener);
                let d = &state.deployment;
                shared.registry.publish(registry::PublishedAgent::new(
                    &entry,
                    &d.namespace,
                    &d.version,
                    &d.host,
                    entry.port,
                    d.publish_capabilities,
                ));
                continue;
            }
            if crate::defect!("fm-depends-on-two-waves") && named(&entry) {
                // The first wave starts together: it waits for nothing.
            } else if !crate::defect!("depends-on-reversed") {
                let waited =
                    wait_for_dependencies(&entry, &state, shared.options.ready_timeout).await;
                match waited {
                    // `qx-dependents-of-late-subagent-skipped`: the dependant is left out (its
                    // port closed) and startup goes on; the registry lists it from agents.yaml.
                    Err(error) if crate::defect!("qx-dependents-of-late-subagent-skipped") => {
                        tracing::error!(agent = %entry.name(), %error, "dependency not ready; agent not started");
                        drop(listener);
                        let d = &state.deployment;
                        shared.registry.publish(registry::PublishedAgent::new(
                            &entry,
                            &d.namespace,
                            &d.version,
                            &d.host,
                            entry.port,
                            d.publish_capabilities,
                        ));
                        continue;
                    }
                    waited => waited.inspect_err(|_| shared.root.cancel())?,
                }
            } else if state
                .deployment
                .agents
                .iter()
                .any(|a| a.depends_on.iter().any(|d| d == entry.name()))
            {
                // A slow subagent, served after the agents that depend on it.
                tokio::time::sleep(std::time::Duration::from_secs(3)).await;
            }
            let running = serve_agent(&shared, &state, entry, listener, true);
            // `px-subagents-inverted`: each of the agents started first is waited for until it
            // answers (a warning at the timeout), before the next one starts.
            if crate::defect!("px-subagents-inverted") && !running.entry.depends_on.is_empty() {
                let url = format!("http://{}/mcp", loopback(running.addr));
                if let Err(reason) = wait_ready(&url, shared.options.ready_timeout).await {
                    tracing::warn!(agent = %running.entry.name(), %url, %reason, "agent not ready in time; starting the next one");
                }
            }
            // `rx-registry-hides-unhealthy-agents`: each agent's port probed once it serves; one
            // that does not pass counts as unhealthy.
            #[cfg(feature = "defects")]
            if crate::defect!("rx-registry-hides-unhealthy-agents") {
                let url = format!("http://{}/mcp", loopback(running.addr));
                let ready = wait_ready(&url, shared.options.ready_timeout).await;
                crate::defects::remember_health(running.entry.name(), ready.is_err());
            }
            state
                .agents
                .insert(running.entry.name().to_owned(), running);
        }
    }

    if late_registry {
        let addr = SocketAddr::new(shared.options.bind, deployment.registry_port);
        let listener = bind(addr, "the registry", &file)
            .await
            .inspect_err(|_| shared.root.cancel())?;
        let (addr, task) = serve_registry(listener, &shared.registry, &shared.root);
        (registry_addr, registry_task) = (addr, Some(task));
    }
    shared.registry.freeze_if_defective();
    shared.metrics.freeze_agent_info_if_defective();
    #[cfg(feature = "defects")]
    shared.metrics.set_up_if_defective(true);
    let watch_task = shared
        .options
        .watch
        .then(|| tokio::spawn(watch_files(shared.clone(), watched, initial_fingerprint)));

    Ok(RunningPallas {
        shared,
        registry_addr,
        registry_task,
        watch_task,
    })
}

/// Serves the registry on `listener` until `root` is cancelled.
fn serve_registry(
    listener: tokio::net::TcpListener,
    registry: &RegistryState,
    root: &CancellationToken,
) -> (Option<SocketAddr>, JoinHandle<()>) {
    let addr = listener.local_addr().ok();
    let router = registry::router(registry.clone());
    let token = root.clone();
    let task = tokio::spawn(async move {
        let serve =
            axum::serve(nodelay(listener), router).with_graceful_shutdown(token.cancelled_owned());
        if let Err(e) = serve.await {
            tracing::error!(error = %e, "registry server stopped");
        }
    });
    tracing::info!(addr = ?addr, "registry serving");
    (addr, task)
}

impl RunningPallas {
    /// Where each served agent listens.
    pub async fn agent_addrs(&self) -> BTreeMap<String, SocketAddr> {
        let state = self.shared.state.lock().await;
        state
            .agents
            .iter()
            .map(|(k, v)| (k.clone(), v.addr))
            .collect()
    }

    /// The registry's live catalogue.
    pub fn registry(&self) -> &RegistryState {
        &self.shared.registry
    }

    /// The metrics every server renders.
    pub fn metrics(&self) -> &Metrics {
        &self.shared.metrics
    }

    /// The deployment currently served.
    pub async fn deployment(&self) -> Deployment {
        self.shared.state.lock().await.deployment.clone()
    }

    /// A token cancelled when this Pallas shuts down.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shared.root.clone()
    }

    /// Re-reads the configuration: starts added agents, stops removed ones, restarts changed
    /// ones and leaves the others serving untouched. An invalid configuration changes nothing.
    pub async fn reload(&self) -> Result<ReloadSummary, RuntimeError> {
        reload(&self.shared).await
    }

    /// Serves until SIGTERM or Ctrl-C (reloading on SIGHUP), then shuts down. Install `signals`
    /// before announcing readiness, so that an early SIGHUP reloads instead of killing.
    pub async fn run_until_signalled(self, mut signals: Signals) {
        let shared = self.shared.clone();
        let hup = signals.hup.take();
        let hup_task = tokio::spawn(async move {
            #[cfg(unix)]
            if let Some(mut hup) = hup {
                while hup.recv().await.is_some() {
                    tracing::info!("SIGHUP: reloading the configuration");
                    if let Err(e) = reload(&shared).await {
                        tracing::error!(error = %e, "reload failed; the previous configuration stays in force");
                    }
                }
            }
            #[cfg(not(unix))]
            let _ = hup;
        });
        let root = self.shared.root.clone();
        tokio::select! {
            () = signals.terminated() => tracing::info!("shutting down"),
            () = root.cancelled() => {}
        }
        hup_task.abort();
        self.shutdown().await;
    }

    /// Stops every agent (in-flight calls finish or are cancelled after a grace period) and the
    /// registry.
    pub async fn shutdown(mut self) {
        if let Some(w) = self.watch_task.take() {
            w.abort();
        }
        let agents: Vec<RunningAgent> = {
            let mut state = self.shared.state.lock().await;
            state.agents.drain(..).map(|(_, a)| a).collect()
        };
        // Dependants first: reverse start order.
        futures::future::join_all(
            agents
                .into_iter()
                .rev()
                .map(|a| stop_agent(&self.shared, a)),
        )
        .await;
        self.shared.root.cancel();
        if let Some(task) = self.registry_task.take() {
            let abort = task.abort_handle();
            if tokio::time::timeout(STOP_GRACE, task).await.is_err() {
                abort.abort();
            }
        }
    }
}
