//! A mock Pallas (seed 000) for developing a Daedalus-side client: a registry listing agents,
//! each agent a Streamable HTTP MCP server with `send_message` and `get_health`, scriptable
//! health over time, replies, progress (right and deliberately wrong), faults, and one journal
//! of every request at `GET /__mock/journal` on the registry's port.
//!
//! ```no_run
//! # async fn demo() -> Result<(), pallas_mocks::MockError> {
//! let pallas = pallas_mocks::MockPallas::start(&pallas_mocks::MockPallasSpec::two_agents()).await?;
//! println!("register {} in Daedalus", pallas.registry_url());
//! # Ok(()) }
//! ```

mod agent;
mod progress;
pub mod registry;
mod script;
pub mod spec;
mod stream;
mod validate;
mod wire;

pub use agent::HEALTH_DESCRIPTION;
pub use progress::UNREQUESTED_TOKEN;
pub use registry::{
    SERVER_JSON_PATH, SERVER_SCHEMA_URL, default_title, registry_name, sse_remote_url,
};
pub(crate) use validate::{validate_pallas, validate_pallas_into};

use std::collections::{BTreeMap, HashMap};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::Router;
use rmcp::model::Tool;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::common::{Journal, ServerHandle, lock};
use crate::error::MockError;
use crate::journal::PallasJournalEntry;
use crate::tls::MockTls;
use script::{Phases, Until};
use spec::{HealthPhaseSpec, MockPallasSpec, PallasAgentSpec, RegistryPhaseSpec};

/// What is wrong with a mock Pallas spec (each issue at its path under `pallas`), before
/// anything starts: the checks `pallas-mocks validate` makes of a `pallas:` section.
pub fn validate_spec(spec: &MockPallasSpec) -> Vec<crate::SpecIssue> {
    validate_pallas(spec, "pallas")
}

/// The host names an agent always answers to (`Host` and `Origin` checks).
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Which scripted fault answered a request (the journal's `fault`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    Unauthorized,
    SessionExpired,
    HttpError,
    DropStream,
    RegistryStatus,
}

impl Fault {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Unauthorized => "unauthorized",
            Self::SessionExpired => "session_expired",
            Self::HttpError => "http_error",
            Self::DropStream => "drop_stream",
            Self::RegistryStatus => "registry_status",
        }
    }
}

/// What the registry shares with its handlers.
#[derive(Debug)]
pub(crate) struct PallasShared {
    spec: MockPallasSpec,
    journal: Arc<Journal<PallasJournalEntry>>,
    registry: Phases<RegistryPhaseSpec>,
    /// The agents listed from now on, set by [`MockPallas::list_agents`] (an operator's change);
    /// the schedule's when `None`.
    listed: Mutex<Option<Vec<String>>>,
    /// Agent key → the URL its registry entry gives.
    agent_urls: BTreeMap<String, String>,
    agents: Vec<Arc<AgentShared>>,
    /// The entries' `updatedAt`: when the mock started.
    updated_at: String,
    ct: CancellationToken,
}

impl PallasShared {
    /// Clears the journal and starts every script and counter over.
    fn reset(&self) {
        self.journal.clear();
        self.registry.restart();
        *lock(&self.listed) = None;
        for a in &self.agents {
            a.reset();
        }
    }
}

/// Where one session of an agent stands (for `session_expiry`).
#[derive(Debug)]
pub(crate) struct SessionState {
    /// The agent's sessions opened before this one.
    ordinal: u32,
    opened: Instant,
    requests: u32,
    expired: bool,
}

/// What one agent shares with its handler and its middleware.
#[derive(Debug)]
pub(crate) struct AgentShared {
    key: String,
    spec: PallasAgentSpec,
    pallas_version: String,
    tools: Vec<Tool>,
    health: Phases<HealthPhaseSpec>,
    journal: Arc<Journal<PallasJournalEntry>>,
    sessions: Mutex<HashMap<String, SessionState>>,
    sessions_manager: Arc<LocalSessionManager>,
    /// Requests matched by `http_error` so far.
    http_matched: AtomicU64,
    /// `send_message` streams seen by `drop_stream` so far.
    drops: AtomicU64,
    ct: CancellationToken,
}

impl AgentShared {
    fn reset(&self) {
        self.health.restart();
        lock(&self.sessions).clear();
        self.http_matched.store(0, Ordering::SeqCst);
        self.drops.store(0, Ordering::SeqCst);
    }
}

/// A running mock Pallas. Stops when dropped.
#[derive(Debug)]
pub struct MockPallas {
    registry_addr: SocketAddr,
    agent_addrs: BTreeMap<String, SocketAddr>,
    scheme: &'static str,
    shared: Arc<PallasShared>,
    servers: Vec<ServerHandle>,
}

impl MockPallas {
    /// Starts the registry and every agent on `127.0.0.1` ephemeral ports (ignoring `port`
    /// fields). Returns once all listen.
    pub async fn start(spec: &MockPallasSpec) -> Result<MockPallas, MockError> {
        Self::start_with(spec, false, None).await
    }

    /// Same, honouring fixed `port` fields.
    pub async fn start_with_fixed_ports(spec: &MockPallasSpec) -> Result<MockPallas, MockError> {
        Self::start_with(spec, true, None).await
    }

    /// Starts it with fixed ports or not, serving HTTPS with `tls` when given.
    pub(crate) async fn start_with(
        spec: &MockPallasSpec,
        fixed: bool,
        tls: Option<Arc<MockTls>>,
    ) -> Result<MockPallas, MockError> {
        if let Some(issue) = validate_pallas(spec, "pallas").into_iter().next() {
            return Err(MockError::InvalidSpec {
                name: issue.path,
                message: issue.message,
            });
        }
        let addr = |port: Option<u16>| {
            SocketAddr::from((
                Ipv4Addr::LOCALHOST,
                if fixed { port.unwrap_or(0) } else { 0 },
            ))
        };
        let bind = |name: String, addr: SocketAddr| async move {
            let l = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|source| MockError::Bind {
                    name: name.clone(),
                    addr,
                    source,
                })?;
            let bound = l
                .local_addr()
                .map_err(|source| MockError::Bind { name, addr, source })?;
            Ok::<_, MockError>((l, bound))
        };
        let scheme = if tls.is_some() { "https" } else { "http" };
        let host = spec.host.clone().unwrap_or_else(|| "127.0.0.1".to_owned());
        let mut listeners = Vec::new();
        let mut agent_addrs = BTreeMap::new();
        let mut agent_urls = BTreeMap::new();
        for (key, a) in &spec.agents {
            let (l, bound) = bind(format!("pallas.{key}"), addr(a.port)).await?;
            agent_urls.insert(
                key.clone(),
                format!("{scheme}://{host}:{}/mcp", bound.port()),
            );
            agent_addrs.insert(key.clone(), bound);
            listeners.push((key.clone(), l));
        }
        let (registry_listener, registry_addr) = bind("pallas".to_owned(), addr(spec.port)).await?;

        let ct = CancellationToken::new();
        let journal = Journal::new();
        let agents: Vec<Arc<AgentShared>> = spec
            .agents
            .iter()
            .map(|(key, a)| Arc::new(agent_shared(key, a, spec, &journal, &ct)))
            .collect();
        let registry = spec.registry.as_ref().map_or_else(Vec::new, |r| {
            r.schedule
                .iter()
                .map(|p| (p.clone(), Until::of(p.lasts, p.after_calls)))
                .collect()
        });
        let shared = Arc::new(PallasShared {
            spec: spec.clone(),
            journal,
            registry: Phases::new(registry),
            listed: Mutex::new(None),
            agent_urls,
            agents: agents.clone(),
            updated_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            ct: ct.clone(),
        });
        let mut servers = Vec::new();
        for ((_, listener), agent) in listeners.into_iter().zip(agents) {
            let app = agent_router(agent, spec.host.as_deref());
            servers.push(ServerHandle::serve_with(listener, app, tls.as_deref()));
        }
        servers.push(ServerHandle::serve_with(
            registry_listener,
            registry::router(shared.clone()),
            tls.as_deref(),
        ));
        tracing::debug!(%registry_addr, agents = agent_addrs.len(), "mock Pallas ready");
        Ok(MockPallas {
            registry_addr,
            agent_addrs,
            scheme,
            shared,
            servers,
        })
    }

    /// The registry URL a Daedalus registers: `http://127.0.0.1:P` (no path).
    pub fn registry_url(&self) -> String {
        format!("{}://{}", self.scheme, self.registry_addr)
    }

    /// The registry document's URL: `http://127.0.0.1:P/.well-known/mcp/server.json`.
    pub fn server_json_url(&self) -> String {
        format!("{}{SERVER_JSON_PATH}", self.registry_url())
    }

    /// The registry's address.
    pub fn registry_addr(&self) -> SocketAddr {
        self.registry_addr
    }

    /// The MCP endpoint of agent `key` as its registry entry gives it.
    pub fn agent_url(&self, key: &str) -> Option<&str> {
        self.shared.agent_urls.get(key).map(String::as_str)
    }

    /// The address agent `key` listens on.
    pub fn agent_addr(&self, key: &str) -> Option<SocketAddr> {
        self.agent_addrs.get(key).copied()
    }

    /// `pallas` → the registry URL, `pallas.{key}` → each agent's MCP endpoint.
    pub fn urls(&self) -> BTreeMap<String, String> {
        std::iter::once(("pallas".to_owned(), self.registry_url()))
            .chain(
                self.shared
                    .agent_urls
                    .iter()
                    .map(|(k, u)| (format!("pallas.{k}"), u.clone())),
            )
            .collect()
    }

    /// From now on the registry lists these agents (keys, in this order), whatever its
    /// schedule says: an operator adding or removing agents while a client runs. The agents not
    /// listed keep serving. `None` gives the listing back to the schedule.
    pub fn list_agents(&self, agents: Option<Vec<String>>) {
        *lock(&self.shared.listed) = agents;
    }

    /// Every request received (registry and agents) since start or the last reset.
    pub fn journal(&self) -> Vec<PallasJournalEntry> {
        self.shared.journal.snapshot()
    }

    /// Clears the journal; health, registry schedule and fault counters start over.
    pub fn reset(&self) {
        self.shared.reset();
    }

    /// Stops the registry and every agent, waiting briefly for in-flight requests.
    pub async fn shutdown(mut self) {
        self.shared.ct.cancel();
        let servers = std::mem::take(&mut self.servers);
        futures::future::join_all(servers.into_iter().map(ServerHandle::shutdown)).await;
    }
}

impl Drop for MockPallas {
    fn drop(&mut self) {
        // Held calls (`slow`, latencies) end with the servers.
        self.shared.ct.cancel();
    }
}

fn agent_shared(
    key: &str,
    a: &PallasAgentSpec,
    spec: &MockPallasSpec,
    journal: &Arc<Journal<PallasJournalEntry>>,
    ct: &CancellationToken,
) -> AgentShared {
    let health = if a.health.is_empty() {
        vec![(HealthPhaseSpec::default(), Until::Forever)]
    } else {
        a.health
            .iter()
            .map(|p| (p.clone(), Until::of(p.lasts, p.after_calls)))
            .collect()
    };
    AgentShared {
        key: key.to_owned(),
        spec: a.clone(),
        pallas_version: spec.version.clone(),
        tools: agent::tools(key),
        health: Phases::new(health),
        journal: journal.clone(),
        sessions: Mutex::new(HashMap::new()),
        sessions_manager: Arc::new(LocalSessionManager::default()),
        http_matched: AtomicU64::new(0),
        drops: AtomicU64::new(0),
        ct: ct.child_token(),
    }
}

fn agent_router(agent: Arc<AgentShared>, host: Option<&str>) -> Router {
    let mut hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| (*h).to_owned()).collect();
    hosts.extend(host.map(str::to_owned));
    let origins: Vec<String> = hosts
        .iter()
        .flat_map(|h| {
            let h = if h.contains(':') {
                format!("[{h}]")
            } else {
                h.clone()
            };
            [format!("http://{h}:*"), format!("https://{h}:*")]
        })
        .collect();
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(agent.ct.child_token())
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins);
    let handler_agent = agent.clone();
    let service = StreamableHttpService::new(
        move || {
            Ok(agent::AgentServer {
                agent: handler_agent.clone(),
            })
        },
        agent.sessions_manager.clone(),
        config,
    );
    Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(agent, wire::observe))
}
