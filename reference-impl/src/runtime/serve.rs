//! Binding, preflight, serving and stopping agents, and readiness probes.

use crate::config::AgentEntry;
use crate::llm::{self, LlmStatusCell};
use crate::metrics::Metrics;
use crate::registry::{self, PublishedAgent};
use crate::settings::{ModelRef, Provider, ProviderSettings};
use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;

use super::*;

/// Disables Nagle on every accepted connection: a Streamable HTTP answer is several small writes
/// (priming event, then the result), and Nagle with delayed ACKs would hold the last one ~40 ms.
pub(super) fn nodelay(listener: TcpListener) -> impl axum::serve::Listener<Addr = SocketAddr> {
    use axum::serve::ListenerExt;
    listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "TCP_NODELAY could not be set");
        }
    })
}

/// The address an agent listens on: the bind address (`0.0.0.0`) with its port;
/// `nx-agent-binds-registry-host`: the first address of the `agents.yaml` `host`, as uvicorn
/// would bind `host=cfg["host"]` (`localhost` → loopback).
pub(super) async fn agent_addr(bind: IpAddr, host: &str, port: u16) -> SocketAddr {
    let fallback = SocketAddr::new(bind, port);
    if !crate::defect!("nx-agent-binds-registry-host") {
        return fallback;
    }
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match tokio::net::lookup_host((host, port)).await {
        Ok(mut addrs) => addrs.next().unwrap_or(fallback),
        Err(error) => {
            tracing::warn!(%host, %error, "host does not resolve; binding the default address");
            fallback
        }
    }
}

pub(super) async fn bind(
    addr: SocketAddr,
    what: &str,
    file: &str,
) -> Result<TcpListener, RuntimeError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| RuntimeError::Bind {
            what: what.to_owned(),
            addr,
            file: file.to_owned(),
            source,
        })
}

/// The defects that leave one provider's key-only preflight out.
fn key_only_skipped(provider: Provider) -> bool {
    match provider {
        Provider::OpenAi => crate::defect!("key-only-openai-unchecked"),
        Provider::Anthropic => crate::defect!("key-only-anthropic-unchecked"),
        Provider::HuggingFace => false,
    }
}

/// The key of one provider status cell: provider, base URL and model.
pub(super) fn provider_key(model: &ModelRef, provider: &ProviderSettings) -> String {
    format!("{}|{}|{}", model.provider, provider.base_url, model.model)
}

pub(super) async fn preflight_all(
    agents: &[AgentEntry],
    keyed: &[(Provider, ProviderSettings)],
    existing: &HashMap<String, LlmStatusCell>,
    http: &reqwest::Client,
    metrics: &Metrics,
) -> HashMap<String, LlmStatusCell> {
    let mut todo: BTreeMap<String, (ModelRef, ProviderSettings)> = BTreeMap::new();
    for a in agents {
        let key = provider_key(&a.settings.model, &a.settings.provider);
        if !existing.contains_key(&key) {
            let todo_key = if crate::defect!("preflight-per-agent") {
                format!("{key}|{}", a.name())
            } else {
                key
            };
            todo.insert(
                todo_key,
                (a.settings.model.clone(), a.settings.provider.clone()),
            );
        }
    }
    // At startup, the providers with a key that no agent makes active: once each (the
    // deployment lists each provider once), warn-only.
    let key_only = keyed
        .iter()
        .filter(|_| existing.is_empty())
        // `ms-preflight-active-providers-only`: only the provider `default_model` makes active.
        .filter(|_| !crate::defect!("ms-preflight-active-providers-only"))
        .filter(|(provider, settings)| {
            !key_only_skipped(*provider)
                && !agents.iter().any(|a| {
                    a.settings.model.provider == *provider
                        && a.settings.provider.base_url == settings.base_url
                })
        })
        .map(|(provider, settings)| async move {
            let problem = llm::preflight_key_only(*provider, settings, http).await;
            // `ms-provider-up-for-key-only-providers`, `llm-gauge-for-inactive-providers`: the
            // gauge of every provider validated.
            if crate::defect!("ms-provider-up-for-key-only-providers")
                || crate::defect!("llm-gauge-for-inactive-providers")
            {
                metrics.set_llm_provider_up(provider.as_str(), problem.is_none());
            }
            problem
        });
    let checks = todo.into_iter().map(|(key, (model, provider))| async move {
        let status = llm::preflight(&provider, &model, http).await;
        (key, status)
    });
    let (key_only_problems, checks) = futures::future::join(
        futures::future::join_all(key_only),
        futures::future::join_all(checks),
    )
    .await;
    let mut cells = existing.clone();
    for (key, status) in checks {
        let key = if crate::defect!("preflight-per-agent") {
            key.rsplit_once('|')
                .map_or(key.clone(), |(k, _)| k.to_owned())
        } else {
            key
        };
        if !crate::defect!("llm-gauge-unset-at-preflight")
            && !crate::defect!("nx-provider-up-set-by-health-only")
        {
            metrics.set_llm_provider_up(status.provider.as_str(), status.is_ok());
        }
        if let Some(problem) = status.describe() {
            let definitive = problem.contains("API key rejected") || problem.contains("not found");
            if crate::defect!("preflight-blocks-startup")
                || (definitive && crate::defect!("fm-preflight-fatal-definitive"))
            {
                tracing::error!(%problem, "LLM preflight failed; stopping");
                eprintln!("pallas: LLM preflight failed: {problem}");
                std::process::exit(3);
            }
            tracing::warn!(%problem, "LLM preflight failed; agents start anyway");
        }
        cells.insert(key, LlmStatusCell::with_status(status));
    }
    // `key-only-failure-degrades`: a provider no agent uses fails every agent's health.
    if let Some(problem) = key_only_problems
        .into_iter()
        .flatten()
        .next()
        .filter(|_| crate::defect!("key-only-failure-degrades"))
    {
        for cell in cells.values() {
            if let Some((status, _)) = cell.get() {
                cell.set(llm::ProviderStatus {
                    problem: Some(problem.clone()),
                    ..status
                });
            }
        }
    }
    cells
}

/// `ms-single-agent-models-unregistered`: fast-agent's `max_tokens` for a model its
/// `ModelDatabase` does not know (`get_default_max_tokens`).
const UNREGISTERED_MAX_OUTPUT_TOKENS: u64 = 2048;

/// Serves `entry` on `listener`; `listed`: published in the registry before it serves.
pub(super) fn serve_agent(
    shared: &Arc<Shared>,
    state: &State,
    entry: AgentEntry,
    listener: TcpListener,
    listed: bool,
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
    // `ms-single-agent-models-unregistered`: single-agent preflight registers no model, so the
    // model runs with fast-agent's fallback parameters for an unknown model.
    let settings = if shared.options.agent.is_some()
        && crate::defect!("ms-single-agent-models-unregistered")
    {
        Arc::new(crate::settings::AgentSettings {
            capabilities: crate::settings::ModelCapabilities {
                vision: false,
                max_output_tokens: UNREGISTERED_MAX_OUTPUT_TOKENS,
                ..entry.settings.capabilities
            },
            ..(*entry.settings).clone()
        })
    } else {
        entry.settings.clone()
    };
    let mut router = (shared.factory)(settings, deps, token.clone());
    // `mr-single-agent-no-metrics`: `/metrics` belongs to the registry's app, which single-agent
    // mode does not run.
    let no_metrics = crate::defect!("metrics-agent-port-absent")
        || (shared.options.agent.is_some() && crate::defect!("mr-single-agent-no-metrics"))
        // `nx-agent-port-no-metrics`: `/metrics` is mounted on the registry's app alone.
        || crate::defect!("nx-agent-port-no-metrics");
    if !no_metrics {
        let metrics = registry::metrics_router(shared.metrics.clone());
        #[cfg(feature = "defects")]
        let metrics = crate::defects::own_agent_metrics_only(metrics, &entry.settings.name);
        router = router.merge(metrics);
    }
    // Published before the server task runs: a client whose connection already waits in the
    // listen backlog must never see the agent answer while the registry does not list it.
    let d = &state.deployment;
    // `mr-registry-omits-subagents`: an agent named in a `depends_on` is not listed.
    let listed = listed
        && !(crate::defect!("mr-registry-omits-subagents")
            && d.agents
                .iter()
                .any(|a| a.depends_on.iter().any(|dep| dep == entry.name())));
    if listed {
        shared.registry.publish(PublishedAgent::new(
            &entry,
            &d.namespace,
            &d.version,
            &d.host,
            published_port(d, entry.name(), addr.port()),
            d.publish_capabilities,
        ));
    }
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

/// The port a registry entry advertises for `agent` serving on `port`
/// (`px-remote-port-from-registry-offset`: the diagram's N / N+1 / N+2 taken as the port rule,
/// `registry_port + 1 + i` with i the agent's place in `agents.yaml`).
pub(super) fn published_port(d: &crate::config::Deployment, agent: &str, port: u16) -> u16 {
    match d.agents.iter().position(|a| a.name() == agent) {
        Some(i) if crate::defect!("px-remote-port-from-registry-offset") => {
            u16::try_from(usize::from(d.registry_port) + 1 + i).unwrap_or(u16::MAX)
        }
        _ => port,
    }
}

pub(super) async fn stop_agent(shared: &Shared, agent: RunningAgent) {
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

pub(super) async fn wait_for_dependencies(
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
        // `rx-readiness-probe-uses-public-host`: the URL built for the registry, with the
        // `agents.yaml` host; a probe that never passes is a warning at the timeout.
        if crate::defect!("rx-readiness-probe-uses-public-host") {
            let host = &state.deployment.host;
            let host = if host.contains(':') && !host.starts_with('[') {
                format!("[{host}]")
            } else {
                host.clone()
            };
            let url = format!("http://{host}:{}/mcp", running.addr.port());
            if let Err(reason) = wait_ready(&url, timeout).await {
                tracing::warn!(agent = %entry.name(), dependency = %dep, %url, %reason, "dependency not ready in time; starting anyway");
            }
            continue;
        }
        if crate::defect!("mr-readiness-get-200") {
            // `mr-readiness-get-200`: ready only when a plain GET answers 200; at the timeout,
            // a warning and startup goes on.
            if !wait_get_200(&url, timeout).await {
                tracing::warn!(agent = %entry.name(), dependency = %dep, %url, "dependency not ready in time; starting anyway");
            }
            continue;
        }
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

/// `mr-readiness-get-200`: polls `url` with a plain `GET` until it answers 200, or `timeout`.
async fn wait_get_200(url: &str, timeout: Duration) -> bool {
    let client = crate::net::loopback_client();
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        let answer = client
            .get(url)
            .timeout(left.min(Duration::from_secs(3)))
            .send()
            .await;
        if answer.is_ok_and(|r| r.status() == reqwest::StatusCode::OK) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(500).min(left)).await;
    }
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
