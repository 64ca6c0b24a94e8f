//! `get_health`: downstream probes and the active provider status.
//!
//! Every downstream server is probed in parallel with a raw `initialize` POST (configured headers,
//! `Accept: application/json, text/event-stream`), then a `DELETE` of the session it returned; a
//! server that refuses `initialize` but answers a 2026-07-28 `server/discover` is reachable too.
//! The active provider's status comes from the shared [`LlmStatusCell`], re-probed when stale.
//! A server is unreachable when its probe fails or gets no answer within the probe timeout (seed
//! 000: "On failure (HTTP error, timeout, connection refused), record the server as
//! unreachable"); one that answers within it is reachable, however slowly.
//! The LLM itself is never called and no progress is ever sent.

use std::time::{Duration, Instant};

use futures::future::join_all;
use serde::Serialize;
use serde_json::{Value, json};

use crate::llm::{LlmStatusCell, ProviderStatus};
use crate::metrics::Metrics;
use crate::settings::{AgentSettings, DownstreamSettings};

/// Aggregate health.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HealthStatus {
    /// Everything reachable.
    Ok,
    /// Serving, with problems.
    Degraded,
    /// Cannot process requests.
    Error,
}

impl HealthStatus {
    /// `ok`, `degraded`, `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            HealthStatus::Ok => "ok",
            HealthStatus::Degraded => "degraded",
            HealthStatus::Error => "error",
        }
    }
}

/// The JSON object `get_health` answers (seed 000 §2).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HealthReport {
    /// `ok`, `degraded` or `error`.
    pub status: HealthStatus,
    /// When the check ran (RFC 3339, UTC, seconds).
    pub timestamp: String,
    /// What is wrong; absent when ok.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The result of probing one downstream server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeResult {
    /// Server key.
    pub server: String,
    /// `None` when reachable; otherwise why not.
    pub problem: Option<String>,
    /// How long the probe took.
    pub elapsed: Duration,
}

/// `health-slow-degraded`: a reachable server whose probe took longer than this counts as a slow
/// response, `degraded` (a threshold no seed sets).
const SLOW_PROBE: Duration = Duration::from_secs(1);

const ACCEPT: &str = "application/json, text/event-stream";

/// Probes one downstream server; `Err` says why it is unreachable. Never carries an inbound
/// bearer: only the server's configured headers.
pub async fn probe(
    http: &reqwest::Client,
    server: &DownstreamSettings,
    timeout: Duration,
) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    // `px-probe-url-trailing-slash-stripped`: the URL normalised with `url.rstrip("/")`, sent by
    // a client with redirects off.
    #[cfg(feature = "defects")]
    let stripped = crate::defect!("px-probe-url-trailing-slash-stripped").then(|| {
        let url = crate::defects::without_trailing_slash(&server.url);
        let server = DownstreamSettings {
            url,
            ..server.clone()
        };
        (crate::defects::no_redirect_client(), server)
    });
    #[cfg(feature = "defects")]
    let (http, server) = stripped.as_ref().map_or((http, server), |(h, s)| (h, s));
    // `qx-probe-timeout-connect-only`: `httpx.Timeout(None, connect=…)`: the connection is
    // bounded, the exchange is not.
    #[cfg(feature = "defects")]
    if crate::defect!("qx-probe-timeout-connect-only") {
        crate::defects::connect_within(&server.url, timeout).await?;
        let unbounded = Instant::now() + Duration::from_secs(24 * 60 * 60);
        return probe_inner(http, server, unbounded).await;
    }
    match tokio::time::timeout(timeout, probe_inner(http, server, deadline)).await {
        Ok(result) => result,
        Err(_) if crate::defect!("probe-timeout-reachable") => Ok(()),
        Err(_) => Err(format!(
            "no answer within {}",
            humantime::format_duration(timeout)
        )),
    }
}

fn with_headers(
    mut request: reqwest::RequestBuilder,
    server: &DownstreamSettings,
) -> reqwest::RequestBuilder {
    // `rx-probe-forwards-bearer-to-all-servers`: the bearer of the `get_health` call, set as the
    // probe's own auth, on every server.
    #[cfg(feature = "defects")]
    let forwarded = crate::defects::health_bearer()
        .filter(|_| crate::defect!("rx-probe-forwards-bearer-to-all-servers"));
    #[cfg(not(feature = "defects"))]
    let forwarded: Option<crate::settings::Secret> = None;
    for (name, value) in &server.headers {
        if forwarded.is_some() && name.eq_ignore_ascii_case("authorization") {
            continue;
        }
        // `mr-probe-authorization-only`: "auth headers" read as `Authorization` alone.
        if crate::defect!("mr-probe-authorization-only")
            && !name.eq_ignore_ascii_case("authorization")
        {
            continue;
        }
        request = request.header(name.as_str(), value.expose());
    }
    if let Some(bearer) = forwarded {
        request = request.bearer_auth(bearer.expose());
    }
    #[cfg(feature = "defects")]
    if crate::defect!("probe-with-bearer")
        && let Some(bearer) = crate::defects::last_inbound()
    {
        request = request.bearer_auth(bearer.expose());
    }
    request
}

async fn probe_inner(
    http: &reqwest::Client,
    server: &DownstreamSettings,
    deadline: Instant,
) -> Result<(), String> {
    let response = with_headers(http.post(&server.url), server)
        .header(http::header::ACCEPT, probe_accept(true))
        .json(&initialize_request())
        .send()
        .await
        .map_err(|error| describe(&error))?;
    let status = redirect_refused(response.status())?;
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    // `ms-probe-sse-initialize-unreachable`: `resp.json()` fails on an SSE answer; the probe
    // stops there, before its teardown.
    if status.is_success() && crate::defect!("ms-probe-sse-initialize-unreachable") {
        sse_unread(&response)?;
    }
    // `nx-probe-requires-session-id`: `resp.headers["Mcp-Session-Id"]` read unconditionally for
    // the teardown; its `KeyError` lands in the probe's catch-all.
    if status.is_success() && session.is_none() && crate::defect!("nx-probe-requires-session-id") {
        return Err("no Mcp-Session-Id in the initialize answer".to_owned());
    }
    let reply = if status.is_success() {
        read_reply(response).await
    } else {
        None
    };
    if let Some(session) = session.filter(|_| !crate::defect!("probe-skip-delete")) {
        // Tear the probe's session down whatever the reply said.
        let remaining = deadline.saturating_duration_since(Instant::now());
        // `mr-probe-delete-without-headers`: the session id alone, no configured header.
        let mut delete = if crate::defect!("mr-probe-delete-without-headers") {
            http.delete(&server.url)
        } else {
            with_headers(http.delete(&server.url), server)
        };
        if !crate::defect!("probe-delete-without-session-id") {
            delete = delete.header("mcp-session-id", &session);
        }
        let delete = delete
            .header("mcp-protocol-version", "2025-11-25")
            .timeout(remaining.max(Duration::from_millis(1)))
            .send()
            .await;
        // `ms-probe-delete-rejection-unreachable`: the teardown's `raise_for_status()` is part of
        // the probe.
        if crate::defect!("ms-probe-delete-rejection-unreachable") {
            delete_accepted(&delete)?;
        }
        if let Err(error) = delete {
            tracing::debug!(target: "pallas::health", server = %server.name, error = %describe(&error), "probe DELETE failed");
        }
    }
    match reply {
        Some(reply)
            if (reply.get("result").is_some() && !crate::defect!("probe-discover-only"))
                || crate::defect!("probe-any-reply-ok") =>
        {
            return Ok(());
        }
        _ if status.is_server_error() && crate::defect!("probe-http-error-reachable") => {
            return Ok(());
        }
        // `mr-probe-4xx-reachable`: any answer below 500 means the server is there.
        _ if !status.is_server_error() && crate::defect!("mr-probe-4xx-reachable") => {
            return Ok(());
        }
        _ if status.is_server_error() => return Err(format!("HTTP {}", status.as_u16())),
        _ if status == reqwest::StatusCode::UNAUTHORIZED
            || status == reqwest::StatusCode::FORBIDDEN =>
        {
            return Err(format!(
                "HTTP {} (check the configured headers)",
                status.as_u16()
            ));
        }
        _ => {}
    }
    // `rx-initialize-probe-minimal-params`: the probe is that one `initialize`.
    if crate::defect!("rx-initialize-probe-minimal-params") {
        return Err(format!("initialize answered HTTP {}", status.as_u16()));
    }
    // No session era: a 2026-07-28 server answers `server/discover`.
    let discover = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "server/discover",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "pallas-health", "version": env!("CARGO_PKG_VERSION")},
            "io.modelcontextprotocol/clientCapabilities": {},
        }},
    });
    let response = with_headers(http.post(&server.url), server)
        .header(http::header::ACCEPT, probe_accept(false))
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "server/discover")
        .json(&discover)
        .send()
        .await
        .map_err(|error| describe(&error))?;
    let modern_status = response.status();
    if modern_status.is_success()
        && read_reply(response)
            .await
            .is_some_and(|reply| reply.get("result").is_some())
    {
        return Ok(());
    }
    Err(format!(
        "initialize answered HTTP {}, server/discover HTTP {}",
        status.as_u16(),
        modern_status.as_u16()
    ))
}

/// The probe's `initialize` request (`rx-initialize-probe-minimal-params`: `protocolVersion`
/// alone, "only reachability matters").
fn initialize_request() -> Value {
    if crate::defect!("rx-initialize-probe-minimal-params") {
        return json!({
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": "2025-06-18"},
        });
    }
    json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "pallas-health", "version": env!("CARGO_PKG_VERSION")},
        },
    })
}

/// The `Accept` of a probe request: JSON and SSE (`probe-accept-json-only`: JSON alone for the
/// `initialize`; `qx-probe-accept-json-only`: JSON alone for every request, "it expects a JSON
/// reply").
fn probe_accept(initialize: bool) -> &'static str {
    if crate::defect!("qx-probe-accept-json-only")
        || (initialize && crate::defect!("probe-accept-json-only"))
    {
        "application/json"
    } else {
        ACCEPT
    }
}

/// Probes the server `server` of `agent` ([`probe`]; `qx-probe-pings-persistent-session`: an MCP
/// `ping` over the agent's own session with it, opened if needed).
async fn probe_of(
    agent: &str,
    http: &reqwest::Client,
    server: &DownstreamSettings,
    timeout: Duration,
) -> Result<(), String> {
    #[cfg(feature = "defects")]
    if crate::defect!("qx-probe-pings-persistent-session")
        && let Some(downstream) = crate::downstream::remembered::downstream_of(agent, &server.name)
    {
        return match tokio::time::timeout(timeout, downstream.ping()).await {
            Ok(answer) => answer,
            Err(_) => Err(format!(
                "no answer within {}",
                humantime::format_duration(timeout)
            )),
        };
    }
    #[cfg(not(feature = "defects"))]
    let _ = agent;
    probe(http, server, timeout).await
}

/// `px-probe-url-trailing-slash-stripped`: an unfollowed redirect fails the probe.
fn redirect_refused(status: reqwest::StatusCode) -> Result<reqwest::StatusCode, String> {
    if status.is_redirection() && crate::defect!("px-probe-url-trailing-slash-stripped") {
        return Err(format!("HTTP {}", status.as_u16()));
    }
    Ok(status)
}

/// `ms-probe-sse-initialize-unreachable`: an SSE answer is no JSON body.
fn sse_unread(response: &reqwest::Response) -> Result<(), String> {
    let sse = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"));
    if sse {
        return Err("initialize answer is not JSON".to_owned());
    }
    Ok(())
}

/// `ms-probe-delete-rejection-unreachable`: the teardown `DELETE` failed or was refused.
fn delete_accepted(delete: &Result<reqwest::Response, reqwest::Error>) -> Result<(), String> {
    match delete {
        Ok(answer) if !answer.status().is_success() => {
            Err(format!("DELETE answered HTTP {}", answer.status().as_u16()))
        }
        Err(error) => Err(describe(error)),
        Ok(_) => Ok(()),
    }
}

/// Reads a JSON-RPC reply from a JSON body or from an SSE stream (first `data:` event that is a
/// response), stopping as soon as it is found.
async fn read_reply(mut response: reqwest::Response) -> Option<Value> {
    let is_sse = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"));
    if is_sse && crate::defect!("probe-sse-reply-unread") {
        return None;
    }
    let mut buffer = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        buffer.extend_from_slice(&chunk);
        if is_sse && let Some(reply) = sse_reply(&buffer) {
            return Some(reply);
        }
        if buffer.len() > 1 << 20 {
            return None;
        }
    }
    if is_sse {
        sse_reply(&buffer)
    } else {
        serde_json::from_slice(&buffer).ok()
    }
}

fn sse_reply(buffer: &[u8]) -> Option<Value> {
    let text = std::str::from_utf8(buffer).ok()?;
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|value| value.get("result").is_some() || value.get("error").is_some())
}

fn describe(error: &reqwest::Error) -> String {
    if let Some(tls) = crate::net::tls_problem(error) {
        tls
    } else if error.is_timeout() {
        "timed out".to_owned()
    } else if error.is_connect() {
        "connection refused or failed".to_owned()
    } else {
        "request failed".to_owned()
    }
}

/// Runs the whole check for one agent: probes in parallel, the provider status (re-probed when
/// older than the TTL), metrics gauges updated. `serving` is false when the agent cannot process
/// requests (e.g. shutting down).
pub async fn check(
    settings: &AgentSettings,
    http: &reqwest::Client,
    llm: &LlmStatusCell,
    metrics: &Metrics,
    serving: bool,
) -> HealthReport {
    let timeout = if crate::defect!("probe-timeout-5s") {
        Duration::from_secs(5)
    } else {
        settings.health.probe_timeout
    };
    // `mr-probe-timeout-1s`: the downstream probes (not the provider's) get 1 s.
    let probe_timeout = if crate::defect!("mr-probe-timeout-1s") {
        Duration::from_secs(1)
    } else {
        timeout
    };
    #[cfg(feature = "defects")]
    let every_server = if crate::defect!("mr-health-probes-all-servers") {
        crate::defects::all_servers()
    } else {
        Vec::new()
    };
    #[cfg(not(feature = "defects"))]
    let every_server: Vec<DownstreamSettings> = Vec::new();
    // `mr-health-probes-all-servers`: every server of `mcp.servers`, not only the agent's.
    let servers = if every_server.is_empty() {
        &settings.servers[..]
    } else {
        &every_server[..]
    };
    let servers = match servers.len() {
        n if n > 1 && crate::defect!("probe-skips-last-server") => &servers[..n - 1],
        _ => servers,
    };
    let servers = &probe_targets(servers)[..];
    let timeout_for_provider = timeout;
    let timeout = probe_timeout;
    let probes = async {
        // `px-health-probes-run-sequentially`: a `for` loop awaiting each probe (and its
        // teardown) in turn.
        if crate::defect!("probe-serially") || crate::defect!("px-health-probes-run-sequentially") {
            let mut results = Vec::new();
            for server in servers {
                let started = Instant::now();
                let problem = probe_of(&settings.name, http, server, timeout).await.err();
                results.push(ProbeResult {
                    server: server.name.clone(),
                    problem,
                    elapsed: started.elapsed(),
                });
            }
            return results;
        }
        join_all(servers.iter().map(|server| async move {
            let started = Instant::now();
            let problem = probe_of(&settings.name, http, server, timeout).await.err();
            ProbeResult {
                server: server.name.clone(),
                problem,
                elapsed: started.elapsed(),
            }
        }))
        .await
    };
    // `ms-llm-reprobed-every-health`: the re-probe inside `get_health` without its TTL cache.
    let llm_ttl = if crate::defect!("ms-llm-reprobed-every-health") {
        Duration::ZERO
    } else {
        settings.health.llm_ttl
    };
    let provider = llm.current(
        &settings.provider,
        &settings.model,
        http,
        llm_ttl,
        timeout_for_provider,
    );
    let (probes, (provider_status, reprobed)) = tokio::join!(probes, provider);
    for probe in &probes {
        if probe.problem.is_none() || !crate::defect!("fm-downstream-up-not-zeroed") {
            let label = gauge_label(servers, &probe.server);
            metrics.set_downstream_up(&settings.name, label, probe.problem.is_none());
        }
        if let Some(problem) = &probe.problem {
            tracing::info!(target: "pallas::health", agent = %settings.name, server = %probe.server, %problem, "downstream unreachable");
        }
    }
    // `nx-provider-up-set-by-health-only`: every `get_health` copies the stored result.
    if reprobed || crate::defect!("nx-provider-up-set-by-health-only") {
        metrics.set_llm_provider_up(provider_status.provider.as_str(), provider_status.is_ok());
    } else if crate::defect!("llm-gauge-up-after-health") {
        metrics.set_llm_provider_up(provider_status.provider.as_str(), true);
    }
    // `mr-health-message-urls`: the message names servers by URL.
    let named: Vec<ProbeResult>;
    let probes_for_report = if crate::defect!("mr-health-message-urls") {
        named = probes
            .iter()
            .map(|probe| ProbeResult {
                server: servers
                    .iter()
                    .find(|s| s.name == probe.server)
                    .map_or_else(|| probe.server.clone(), |s| s.url.clone()),
                ..probe.clone()
            })
            .collect();
        &named
    } else {
        &probes
    };
    let mut report = summarize(probes_for_report, &provider_status, serving);
    if probes.is_empty()
        && report.status == HealthStatus::Ok
        && crate::defect!("cm-health-degraded-without-servers")
    {
        report.status = HealthStatus::Degraded;
        report.message = Some("no downstream servers".to_owned());
    }
    // `mr-health-error-as-tool-error`: no `error` report is built, so no gauge is set for it.
    if !(report.status == HealthStatus::Error && crate::defect!("mr-health-error-as-tool-error")) {
        metrics.set_agent_health(&settings.name, report.status.as_str());
    }
    // `rx-registry-hides-unhealthy-agents`: the registry leaves out an agent that reports `error`.
    #[cfg(feature = "defects")]
    if crate::defect!("rx-registry-hides-unhealthy-agents") {
        crate::defects::remember_health(&settings.name, report.status == HealthStatus::Error);
    }
    report
}

/// The servers `get_health` probes: the agent's own (`nx-probe-placeholders-unexpanded`: as
/// written in the files, `${VAR}` unexpanded).
fn probe_targets(servers: &[DownstreamSettings]) -> std::borrow::Cow<'_, [DownstreamSettings]> {
    #[cfg(feature = "defects")]
    if crate::defect!("nx-probe-placeholders-unexpanded") {
        return servers
            .iter()
            .map(|s| crate::defects::raw_server(&s.name).unwrap_or_else(|| s.clone()))
            .collect();
    }
    std::borrow::Cow::Borrowed(servers)
}

/// The `server` label of `pallas_downstream_up` for the server called `server`: its name
/// (`nx-downstream-up-labelled-by-url`: its URL, the probe loop walking the resolved URLs).
fn gauge_label<'a>(servers: &'a [DownstreamSettings], server: &'a str) -> &'a str {
    servers
        .iter()
        .find(|s| s.name == server)
        .filter(|_| crate::defect!("nx-downstream-up-labelled-by-url"))
        .map_or(server, |s| s.url.as_str())
}

/// Turns probe results and the provider status into the seed's report.
pub fn summarize(probes: &[ProbeResult], provider: &ProviderStatus, serving: bool) -> HealthReport {
    let timestamp = if crate::defect!("health-timestamp-epoch") {
        chrono::Utc::now().timestamp().to_string()
    } else {
        chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    };
    if !serving {
        return HealthReport {
            status: HealthStatus::Error,
            timestamp,
            message: Some("agent is shutting down and cannot process requests".to_owned()),
        };
    }
    let mut unreachable: Vec<&str> = probes
        .iter()
        .filter(|probe| probe.problem.is_some() && !crate::defect!("health-ok-when-down"))
        .map(|probe| probe.server.as_str())
        .collect();
    if unreachable.len() < probes.len() && crate::defect!("health-ok-when-some-down") {
        unreachable.clear();
    }
    let slow: Vec<String> = probes
        .iter()
        .filter(|probe| probe.problem.is_none() && probe.elapsed > SLOW_PROBE)
        .filter(|_| crate::defect!("health-slow-degraded"))
        .map(|probe| format!("{} ({:.1} s)", probe.server, probe.elapsed.as_secs_f64()))
        .collect();
    let mut parts = Vec::new();
    if !unreachable.is_empty() {
        parts.push(format!("Unreachable: {}", unreachable.join(", ")));
    }
    // `rx-slow-probe-reported-degraded`: "slow responses" as a check of its own, against the
    // "under 1 second" target.
    parts.extend(
        probes
            .iter()
            .filter(|probe| probe.problem.is_none() && probe.elapsed > SLOW_PROBE)
            .filter(|_| crate::defect!("rx-slow-probe-reported-degraded"))
            .map(|probe| {
                format!(
                    "{} slow ({:.1}s)",
                    probe.server,
                    probe.elapsed.as_secs_f64()
                )
            }),
    );
    if !slow.is_empty() {
        parts.push(format!("Slow: {}", slow.join(", ")));
    }
    let misread = (provider.provider == crate::settings::Provider::Anthropic
        && crate::defect!("health-anthropic-misread"))
    .then(|| "anthropic: status unknown".to_owned());
    let mut llm_failed = false;
    if let Some(problem) = provider
        .describe()
        .or(misread)
        .filter(|_| !crate::defect!("health-ignores-provider"))
    {
        llm_failed = true;
        // `mr-health-message-urls`: the LLM part first.
        if crate::defect!("mr-health-message-urls") {
            parts.insert(0, format!("LLM: {problem}"));
        } else {
            parts.push(format!("LLM: {problem}"));
        }
    }
    if parts.is_empty() && crate::defect!("health-degraded-when-all-up") {
        parts.push(format!("{} downstream server(s) reachable", probes.len()));
    }
    if parts.is_empty() {
        HealthReport {
            status: HealthStatus::Ok,
            timestamp,
            message: None,
        }
    } else {
        let message = if crate::defect!("health-message-json") {
            json!({"unreachable": unreachable, "slow": slow}).to_string()
        } else {
            parts.join("; ")
        };
        let all_down = !probes.is_empty() && unreachable.len() == probes.len();
        // `fm-health-llm-only-no-message`: the message names the unreachable servers only.
        let message = match parts.first() {
            Some(first) if crate::defect!("fm-health-llm-only-no-message") => {
                Some(first.clone()).filter(|_| !unreachable.is_empty())
            }
            _ => Some(message),
        };
        HealthReport {
            status: if (all_down && crate::defect!("fm-health-all-down-error"))
                // `nx-llm-failure-error`: an agent without a working LLM "cannot process
                // requests".
                || (llm_failed && crate::defect!("nx-llm-failure-error"))
            {
                HealthStatus::Error
            } else {
                HealthStatus::Degraded
            },
            timestamp,
            message: message.filter(|_| !crate::defect!("health-no-message")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Provider;

    #[test]
    fn degraded_message_has_the_seed_form() {
        let probes = [
            ProbeResult {
                server: "argos".into(),
                problem: None,
                elapsed: Duration::from_millis(20),
            },
            ProbeResult {
                server: "neo4j_cypher".into(),
                problem: Some("refused".into()),
                elapsed: Duration::from_millis(2),
            },
        ];
        let provider = ProviderStatus {
            provider: Provider::OpenAi,
            model: "bad-model".into(),
            problem: Some("model 'bad-model' not found".into()),
        };
        let report = summarize(&probes, &provider, true);
        assert_eq!(report.status, HealthStatus::Degraded);
        assert_eq!(
            report.message.as_deref(),
            Some("Unreachable: neo4j_cypher; LLM: openai: model 'bad-model' not found")
        );
        let healthy = ProviderStatus {
            problem: None,
            ..provider
        };
        let report = summarize(&probes[..1], &healthy, true);
        assert_eq!(report.status, HealthStatus::Ok);
        let json = serde_json::to_value(&report).unwrap();
        assert!(json.get("message").is_none());
        assert!(json["timestamp"].as_str().unwrap().ends_with('Z'));
        assert_eq!(summarize(&[], &healthy, false).status, HealthStatus::Error);
        // Reachable, however slowly: seed 000 maps only a failed or timed-out probe to
        // unreachable.
        let slow = ProbeResult {
            elapsed: Duration::from_millis(2900),
            ..probes[0].clone()
        };
        let report = summarize(&[slow], &healthy, true);
        assert_eq!(report.status, HealthStatus::Ok);
    }
}
