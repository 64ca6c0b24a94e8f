//! What the eighth set of contract mutants (`rx-…`) keeps from the configuration or from the
//! running agents, and the machinery it needs besides: whether the configuration loaded last set
//! a `namespace`, which downstream servers have a header referencing an unset variable, which
//! agents last looked unhealthy, the bearer of the `get_health` call being answered, a progress
//! sink that goes quiet once its call is cancelled, a JSON log record rendered as a plain-text
//! line, and two HTTP middlewares: one that answers every POST with a single JSON body, one that
//! asks every chat request for a bearer.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::ProgressNotificationParam;
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::progress::ProgressSink;
use crate::settings::Secret;

/// `rx-registry-name-without-namespace`: whether `agents.yaml` sets `namespace`.
static NAMESPACE_CONFIGURED: AtomicBool = AtomicBool::new(true);
/// `rx-unset-header-var-blocks-agent`: servers with a header whose variable is unset.
static UNSET_HEADER_SERVERS: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
/// `rx-registry-hides-unhealthy-agents`: agents whose last check said they cannot serve.
static UNHEALTHY: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

tokio::task_local! {
    /// `rx-probe-forwards-bearer-to-all-servers`: the bearer of the `get_health` call whose
    /// probes run in this task.
    static HEALTH_BEARER: Option<Secret>;
}

/// Forgets what the running agents left (a new defect set starts clean).
pub(super) fn forget() {
    if let Ok(mut unhealthy) = UNHEALTHY.lock() {
        unhealthy.clear();
    }
}

/// What the configuration just loaded says about `namespace`.
pub fn remember_namespace_configured(configured: bool) {
    NAMESPACE_CONFIGURED.store(configured, Ordering::Relaxed);
}

/// Whether the configuration loaded last sets `namespace`.
pub fn namespace_configured() -> bool {
    NAMESPACE_CONFIGURED.load(Ordering::Relaxed)
}

/// A configuration load starts: no server has an unset header variable yet.
pub fn forget_unset_header_servers() {
    if let Ok(mut servers) = UNSET_HEADER_SERVERS.lock() {
        servers.clear();
    }
}

/// The downstream server `server` has a header that references an unset variable.
pub fn remember_unset_header_server(server: &str) {
    if let Ok(mut servers) = UNSET_HEADER_SERVERS.lock() {
        servers.insert(server.to_owned());
    }
}

/// Whether the downstream server `server` has a header that references an unset variable.
pub fn has_unset_header_var(server: &str) -> bool {
    UNSET_HEADER_SERVERS
        .lock()
        .is_ok_and(|servers| servers.contains(server))
}

/// Records whether `agent` failed its last check (`error`, or a failed readiness probe).
pub fn remember_health(agent: &str, failed: bool) {
    if let Ok(mut unhealthy) = UNHEALTHY.lock() {
        if failed {
            unhealthy.insert(agent.to_owned());
        } else {
            unhealthy.remove(agent);
        }
    }
}

/// Whether `agent` failed its last check.
pub fn unhealthy(agent: &str) -> bool {
    UNHEALTHY
        .lock()
        .is_ok_and(|unhealthy| unhealthy.contains(agent))
}

/// Runs `check` (a `get_health` check) with `bearer` visible to its probes.
pub async fn with_health_bearer<F: Future>(bearer: Option<Secret>, check: F) -> F::Output {
    HEALTH_BEARER.scope(bearer, check).await
}

/// The bearer of the `get_health` call whose probes run in this task, if any.
pub fn health_bearer() -> Option<Secret> {
    HEALTH_BEARER.try_with(Clone::clone).ok().flatten()
}

/// `rx-cancel-does-not-stop-loop`: a sink that sends through `peer` until `cancelled`, then
/// drops every notification (the loop itself goes on).
pub struct QuietAfterCancel {
    peer: Peer<RoleServer>,
    cancelled: CancellationToken,
}

impl QuietAfterCancel {
    /// The sink of a call whose client cancellation is `cancelled`.
    pub fn new(peer: Peer<RoleServer>, cancelled: CancellationToken) -> Self {
        Self { peer, cancelled }
    }
}

impl ProgressSink for QuietAfterCancel {
    fn send(
        &self,
        param: ProgressNotificationParam,
    ) -> futures::future::BoxFuture<'_, Result<(), String>> {
        Box::pin(async move {
            if self.cancelled.is_cancelled() {
                return Ok(());
            }
            self.peer.send(param).await
        })
    }
}

/// `rx-stderr-handler-plain-text`: the JSON record `line` as `%(levelname)s %(name)s:
/// %(message)s` (the line itself when it is not a JSON record).
pub fn plain_text_line(line: &str) -> String {
    let Ok(Value::Object(record)) = serde_json::from_str::<Value>(line.trim_end()) else {
        return line.to_owned();
    };
    let field = |keys: &[&str]| {
        keys.iter()
            .find_map(|key| record.get(*key).and_then(Value::as_str))
            .unwrap_or_default()
            .to_owned()
    };
    format!(
        "{} {}: {}\n",
        field(&["level", "levelname"]),
        field(&["logger", "name", "target"]),
        field(&["message"])
    )
}

/// The JSON-RPC messages of an SSE body, in order.
fn sse_messages(body: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(body)
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .collect()
}

/// `rx-json-response-mode-drops-progress`: the server in JSON response mode: a POST answered
/// with an SSE stream is answered instead with one `application/json` body, the JSON-RPC
/// response alone; every notification the stream carried is dropped.
pub async fn json_response_only(request: Request, next: Next) -> Response {
    if !crate::defect!("rx-json-response-mode-drops-progress")
        || request.method() != http::Method::POST
    {
        return next.run(request).await;
    }
    let response = next.run(request).await;
    let is_sse = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"));
    if !is_sse {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 64 << 20).await else {
        return http::StatusCode::BAD_GATEWAY.into_response();
    };
    let Some(answer) = sse_messages(&bytes)
        .into_iter()
        .find(|m| m.get("result").is_some() || m.get("error").is_some())
    else {
        // A call that got no response (cancelled): an empty accepted body.
        parts.headers.remove(http::header::CONTENT_TYPE);
        parts.headers.remove(http::header::CONTENT_LENGTH);
        parts.status = http::StatusCode::ACCEPTED;
        return Response::from_parts(parts, Body::empty());
    };
    parts.headers.remove(http::header::CONTENT_LENGTH);
    parts.headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    Response::from_parts(parts, Body::from(answer.to_string()))
}

/// `rx-auth-middleware-on-pallas-tools`: every `tools/call` but `get_health`, and every
/// `prompts/get`, needs `Authorization: Bearer …`; without it the answer is 401.
pub async fn bearer_required(request: Request, next: Next) -> Response {
    if !crate::defect!("rx-auth-middleware-on-pallas-tools")
        || request.method() != http::Method::POST
    {
        return next.run(request).await;
    }
    let has_bearer = request
        .headers()
        .get(http::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().split_once(' '))
        .is_some_and(|(scheme, token)| {
            scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty()
        });
    if has_bearer {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 16 << 20).await else {
        return http::StatusCode::PAYLOAD_TOO_LARGE.into_response();
    };
    let message = serde_json::from_slice::<Value>(&bytes).unwrap_or_default();
    let method = message.get("method").and_then(Value::as_str);
    let tool = message.pointer("/params/name").and_then(Value::as_str);
    let guarded = match method {
        Some("tools/call") => tool != Some("get_health"),
        Some("prompts/get") => true,
        _ => false,
    };
    if guarded {
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        return (
            http::StatusCode::UNAUTHORIZED,
            [(http::header::CONTENT_TYPE, "application/json")],
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32001, "message": "unauthorized"}})
                .to_string(),
        )
            .into_response();
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_record_becomes_a_levelname_name_message_line() {
        let line = r#"{"time":"t","level":"INFO","logger":"pallas.runtime","message":"pallas ready","x":1}"#;
        assert_eq!(plain_text_line(line), "INFO pallas.runtime: pallas ready\n");
        assert_eq!(plain_text_line("not json\n"), "not json\n");
    }
}
