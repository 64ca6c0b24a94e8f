//! Startup, `depends_on` ordering, live reload and shutdown of a whole Pallas.
//!
//! [`start`] loads and validates the configuration, binds every listener (so a port clash fails
//! before anything serves), runs the LLM preflight, then serves the registry and the agents in
//! dependency order. [`RunningPallas`] reloads (`agents.yaml` changes, SIGHUP) and shuts down.

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use axum::Router;
use indexmap::IndexMap;
use tokio::net::TcpListener;
use tokio::sync::Mutex;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub mod cli;

use crate::config::{self, AgentEntry, ConfigError, Deployment, LoadOptions};
use crate::llm::{self, LlmStatusCell};
use crate::metrics::Metrics;
use crate::registry::{self, PublishedAgent, RegistryState};
use crate::settings::{AgentSettings, ModelRef, ProviderSettings};

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
pub async fn start(dir: &Path, options: StartOptions) -> Result<RunningPallas, RuntimeError> {
    let deployment = config::load(dir, &options.load)?;
    // Taken now, not when the watch task first runs, so every later change triggers a reload.
    let watched = deployment.watched_files.clone();
    let initial_fingerprint = fingerprint(&watched);
    let file = deployment.agents_file.display().to_string();
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
    let registry_listener = if options.agent.is_none() {
        let addr = SocketAddr::new(options.bind, deployment.registry_port);
        Some(bind(addr, "the registry", &file).await?)
    } else {
        None
    };
    let selected: Vec<AgentEntry> = deployment
        .start_order()
        .into_iter()
        .filter(|a| options.agent.as_deref().is_none_or(|n| n == a.name()))
        .cloned()
        .collect();
    let mut listeners = HashMap::new();
    for entry in &selected {
        let addr = SocketAddr::new(options.bind, entry.port);
        let listener = bind(addr, &format!("agent `{}`", entry.name()), &file).await?;
        listeners.insert(entry.name().to_owned(), listener);
    }

    let metrics = options.metrics.clone().unwrap_or_default();
    let http = crate::net::client(&deployment.network).map_err(RuntimeError::Network)?;
    let registry = RegistryState::new(metrics.clone());
    let root = CancellationToken::new();
    let factory = options
        .agent_factory
        .clone()
        .unwrap_or_else(default_agent_factory);

    // Preflight, once per active provider, in parallel and warn-only.
    let cells = preflight_all(&selected, &HashMap::new(), &http, &metrics).await;
    registry.set_providers(cells.values().cloned().collect());

    let (registry_addr, registry_task) = match registry_listener {
        Some(listener) => {
            let addr = listener.local_addr().ok();
            let router = registry::router(registry.clone());
            let token = root.clone();
            let task = tokio::spawn(async move {
                let serve = axum::serve(nodelay(listener), router)
                    .with_graceful_shutdown(token.cancelled_owned());
                if let Err(e) = serve.await {
                    tracing::error!(error = %e, "registry server stopped");
                }
            });
            tracing::info!(addr = ?addr, "registry serving");
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
            wait_for_dependencies(&entry, &state, shared.options.ready_timeout)
                .await
                .inspect_err(|_| shared.root.cancel())?;
            let running = serve_agent(&shared, &state, entry, listener);
            state
                .agents
                .insert(running.entry.name().to_owned(), running);
        }
    }

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

/// Disables Nagle on every accepted connection: a Streamable HTTP answer is several small writes
/// (priming event, then the result), and Nagle with delayed ACKs would hold the last one ~40 ms.
fn nodelay(listener: TcpListener) -> impl axum::serve::Listener<Addr = SocketAddr> {
    use axum::serve::ListenerExt;
    listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "TCP_NODELAY could not be set");
        }
    })
}

async fn bind(addr: SocketAddr, what: &str, file: &str) -> Result<TcpListener, RuntimeError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| RuntimeError::Bind {
            what: what.to_owned(),
            addr,
            file: file.to_owned(),
            source,
        })
}

/// The key of one provider status cell: provider, base URL and model.
fn provider_key(model: &ModelRef, provider: &ProviderSettings) -> String {
    format!("{}|{}|{}", model.provider, provider.base_url, model.model)
}

async fn preflight_all(
    agents: &[AgentEntry],
    existing: &HashMap<String, LlmStatusCell>,
    http: &reqwest::Client,
    metrics: &Metrics,
) -> HashMap<String, LlmStatusCell> {
    let mut todo: BTreeMap<String, (ModelRef, ProviderSettings)> = BTreeMap::new();
    for a in agents {
        let key = provider_key(&a.settings.model, &a.settings.provider);
        if !existing.contains_key(&key) {
            todo.insert(key, (a.settings.model.clone(), a.settings.provider.clone()));
        }
    }
    let checks = todo.into_iter().map(|(key, (model, provider))| async move {
        let status = llm::preflight(&provider, &model, http).await;
        (key, status)
    });
    let mut cells = existing.clone();
    for (key, status) in futures::future::join_all(checks).await {
        metrics.set_llm_provider_up(status.provider.as_str(), status.is_ok());
        if let Some(problem) = status.describe() {
            tracing::warn!(%problem, "LLM preflight failed; agents start anyway");
        }
        cells.insert(key, LlmStatusCell::with_status(status));
    }
    cells
}

fn serve_agent(
    shared: &Arc<Shared>,
    state: &State,
    entry: AgentEntry,
    listener: TcpListener,
) -> RunningAgent {
    let addr = listener
        .local_addr()
        .unwrap_or_else(|_| SocketAddr::new(shared.options.bind, entry.port));
    let token = shared.root.child_token();
    let cell = state
        .cells
        .get(&provider_key(
            &entry.settings.model,
            &entry.settings.provider,
        ))
        .cloned()
        .unwrap_or_default();
    let deps = AgentRuntimeDeps {
        metrics: shared.metrics.clone(),
        llm_status: cell,
        http: shared.http.clone(),
    };
    let router = (shared.factory)(entry.settings.clone(), deps, token.clone())
        .merge(registry::metrics_router(shared.metrics.clone()));
    // Published before the server task runs: a client whose connection already waits in the
    // listen backlog must never see the agent answer while the registry does not list it.
    let d = &state.deployment;
    shared.registry.publish(PublishedAgent::new(
        &entry,
        &d.namespace,
        &d.version,
        &d.host,
        addr.port(),
        d.publish_capabilities,
    ));
    shared.metrics.set_agent_info(entry.name(), addr.port());
    let name = entry.name().to_owned();
    let serve_token = token.clone();
    let task = tokio::spawn(async move {
        let serve = axum::serve(nodelay(listener), router)
            .with_graceful_shutdown(serve_token.cancelled_owned());
        if let Err(e) = serve.await {
            tracing::error!(agent = %name, error = %e, "agent server stopped");
        }
    });
    tracing::info!(agent = %entry.name(), %addr, "agent serving");
    RunningAgent {
        entry,
        addr,
        token,
        task,
    }
}

async fn stop_agent(shared: &Shared, agent: RunningAgent) {
    let name = agent.entry.name().to_owned();
    shared.registry.withdraw(&name);
    shared.metrics.remove_agent(&name);
    agent.token.cancel();
    let abort = agent.task.abort_handle();
    if tokio::time::timeout(STOP_GRACE, agent.task).await.is_err() {
        tracing::warn!(agent = %name, "in-flight calls did not finish in time; cancelled");
        abort.abort();
    }
    tracing::info!(agent = %name, "agent stopped");
}

async fn wait_for_dependencies(
    entry: &AgentEntry,
    state: &State,
    timeout: Duration,
) -> Result<(), RuntimeError> {
    for dep in &entry.depends_on {
        // In single-agent mode dependencies are not started here (seed 001).
        let Some(running) = state.agents.get(dep) else {
            continue;
        };
        let url = format!("http://{}/mcp", loopback(running.addr));
        if let Err(reason) = wait_ready(&url, timeout).await {
            return Err(RuntimeError::DependencyNotReady {
                agent: entry.name().to_owned(),
                dependency: dep.clone(),
                url,
                timeout,
                reason,
            });
        }
    }
    Ok(())
}

/// The address to probe a listener bound on `addr` (unspecified → loopback).
pub fn loopback(addr: SocketAddr) -> SocketAddr {
    match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => {
            SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), addr.port())
        }
        IpAddr::V6(ip) if ip.is_unspecified() => {
            SocketAddr::new(IpAddr::V6(std::net::Ipv6Addr::LOCALHOST), addr.port())
        }
        _ => addr,
    }
}

/// Polls `url` with MCP `initialize` until it answers 2xx (then closes the session), or `timeout`.
pub async fn wait_ready(url: &str, timeout: Duration) -> Result<(), String> {
    let client = crate::net::loopback_client();
    let deadline = Instant::now() + timeout;
    let mut last = String::from("no answer");
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(last);
        }
        match initialize_probe(&client, url, left.min(Duration::from_secs(3))).await {
            Ok(()) => return Ok(()),
            Err(e) => last = e,
        }
        tokio::time::sleep(Duration::from_millis(20).min(left)).await;
    }
}

/// One MCP `initialize` on `url` answered 2xx; the session it opened is deleted.
pub async fn initialize_probe(
    client: &reqwest::Client,
    url: &str,
    timeout: Duration,
) -> Result<(), String> {
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "pallas-readiness", "version": env!("CARGO_PKG_VERSION")}
        }
    });
    let response = client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .timeout(timeout)
        .send()
        .await
        .map_err(|e| {
            if e.is_connect() {
                "connection refused".to_owned()
            } else if e.is_timeout() {
                "timed out".to_owned()
            } else {
                e.to_string()
            }
        })?;
    let status = response.status();
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    drop(response);
    if let Some(session) = session {
        let _ = client
            .delete(url)
            .header("mcp-session-id", session)
            .timeout(timeout)
            .send()
            .await;
    }
    if status.is_success() {
        Ok(())
    } else {
        Err(format!("HTTP {status}"))
    }
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

/// The process signals Pallas reacts to, installed up front (SIGHUP's default action would
/// otherwise end the process).
pub struct Signals {
    #[cfg(unix)]
    hup: Option<tokio::signal::unix::Signal>,
    #[cfg(not(unix))]
    hup: Option<()>,
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
}

impl std::fmt::Debug for Signals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signals").finish_non_exhaustive()
    }
}

impl Signals {
    /// Installs the SIGHUP and SIGTERM handlers (Ctrl-C is watched when waiting).
    pub fn install() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Self {
                hup: signal(SignalKind::hangup()).ok(),
                term: signal(SignalKind::terminate()).ok(),
            }
        }
        #[cfg(not(unix))]
        {
            Self { hup: None }
        }
    }

    async fn terminated(&mut self) {
        #[cfg(unix)]
        if let Some(term) = self.term.as_mut() {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
        let _ = tokio::signal::ctrl_c().await;
    }
}

async fn reload(shared: &Arc<Shared>) -> Result<ReloadSummary, RuntimeError> {
    let deployment = config::load(&shared.dir, &shared.options.load)?;
    let file = deployment.agents_file.display().to_string();
    let mut state = shared.state.lock().await;
    let mut summary = ReloadSummary::default();
    if deployment.registry_port != state.deployment.registry_port {
        tracing::warn!("registry_port changed; it takes effect at the next start");
    }
    let wanted: Vec<AgentEntry> = deployment
        .start_order()
        .into_iter()
        .filter(|a| {
            shared
                .options
                .agent
                .as_deref()
                .is_none_or(|n| n == a.name())
        })
        .cloned()
        .collect();

    // Stop removed and changed agents.
    let names: Vec<String> = state.agents.keys().cloned().collect();
    for name in names {
        let keep = wanted.iter().find(|w| w.name() == name);
        let changed = match keep {
            None => true,
            Some(w) => state.agents.get(&name).is_some_and(|r| r.entry != *w),
        };
        if changed {
            if let Some(running) = state.agents.shift_remove(&name) {
                stop_agent(shared, running).await;
            }
            if keep.is_some() {
                summary.restarted.push(name);
            } else {
                summary.removed.push(name);
            }
        }
    }
    let registry_meta_changed = (
        &deployment.namespace,
        &deployment.version,
        &deployment.host,
        deployment.publish_capabilities,
    ) != (
        &state.deployment.namespace,
        &state.deployment.version,
        &state.deployment.host,
        state.deployment.publish_capabilities,
    );
    state.cells = preflight_all(&wanted, &state.cells, &shared.http, &shared.metrics).await;
    shared
        .registry
        .set_providers(state.cells.values().cloned().collect());
    state.deployment = deployment;

    for entry in wanted {
        if let Some(running) = state.agents.get(entry.name()) {
            if registry_meta_changed {
                let d = &state.deployment;
                shared.registry.publish(PublishedAgent::new(
                    &running.entry,
                    &d.namespace,
                    &d.version,
                    &d.host,
                    running.addr.port(),
                    d.publish_capabilities,
                ));
            }
            summary.unchanged.push(entry.name().to_owned());
            continue;
        }
        let addr = SocketAddr::new(shared.options.bind, entry.port);
        let listener = match bind(addr, &format!("agent `{}`", entry.name()), &file).await {
            Ok(l) => l,
            Err(e) => {
                tracing::error!(error = %e, "agent not started");
                continue;
            }
        };
        if let Err(e) = wait_for_dependencies(&entry, &state, shared.options.ready_timeout).await {
            tracing::error!(error = %e, "agent not started");
            continue;
        }
        let name = entry.name().to_owned();
        if !summary.restarted.contains(&name) {
            summary.added.push(name.clone());
        }
        let running = serve_agent(shared, &state, entry, listener);
        state.agents.insert(name, running);
    }
    tracing::info!(
        added = ?summary.added, removed = ?summary.removed,
        restarted = ?summary.restarted, "configuration reloaded"
    );
    Ok(summary)
}

/// A cheap fingerprint of the watched files: modification time and length of each.
fn fingerprint(files: &[PathBuf]) -> Vec<Option<(SystemTime, u64)>> {
    files
        .iter()
        .map(|f| {
            std::fs::metadata(f)
                .ok()
                .and_then(|m| Some((m.modified().ok()?, m.len())))
        })
        .collect()
}

/// Reloads whenever the fingerprint of `files` differs from `last` (taken before they were read).
async fn watch_files(
    shared: Arc<Shared>,
    mut files: Vec<PathBuf>,
    mut last: Vec<Option<(SystemTime, u64)>>,
) {
    let mut tick = tokio::time::interval(shared.options.watch_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = shared.root.cancelled() => return,
            _ = tick.tick() => {}
        }
        let now = fingerprint(&files);
        if now == last {
            continue;
        }
        last = now;
        tracing::info!("configuration file changed: reloading");
        match reload(&shared).await {
            Ok(_) => {
                files = shared.state.lock().await.deployment.watched_files.clone();
                last = fingerprint(&files);
            }
            Err(e) => {
                tracing::error!(error = %e, "reload failed; the previous configuration stays in force");
            }
        }
    }
}
