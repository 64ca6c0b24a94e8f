//! What stands in front of each agent's MCP endpoint: the journal, the required bearer, expired
//! sessions, HTTP errors, the token of `without-token-too`, and the rewriting of a call's stream
//! ([`super::stream`]).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{StatusCode, header};
use rmcp::transport::streamable_http_server::session::SessionManager;
use serde_json::{Value, json};

use super::progress::UNREQUESTED_TOKEN;
use super::spec::ProgressMode;
use super::stream::{self, Rewrite};
use super::{AgentShared, Fault, SessionState};
use crate::common::{lock, now_rfc3339};
use crate::journal::PallasJournalEntry;
use crate::redact::redacted_header_map;

/// Largest request body read (rmcp's own default limit).
const MAX_BODY: usize = 4 * 1024 * 1024;

/// What the journal and the faults need of a request body.
#[derive(Debug, Default)]
pub(crate) struct Rpc {
    pub(crate) method: Option<String>,
    pub(crate) id: Option<Value>,
    pub(crate) progress_token: Option<Value>,
    pub(crate) tool: Option<String>,
    pub(crate) arguments: Option<Value>,
}

impl Rpc {
    /// Reads the first JSON-RPC message of `json` (a batch's first).
    pub(crate) fn of(json: Option<&Value>) -> Self {
        let msg = match json {
            Some(Value::Array(a)) => a.first(),
            other => other,
        };
        let Some(msg) = msg else {
            return Self::default();
        };
        let method = msg.get("method").and_then(Value::as_str).map(str::to_owned);
        let params = msg.get("params");
        let call = method.as_deref() == Some("tools/call");
        Self {
            id: msg.get("id").cloned(),
            progress_token: params
                .and_then(|p| p.pointer("/_meta/progressToken"))
                .cloned(),
            tool: params
                .filter(|_| call)
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .map(str::to_owned),
            arguments: params
                .filter(|_| call)
                .and_then(|p| p.get("arguments"))
                .cloned(),
            method,
        }
    }

    /// A JSON-RPC request (not a notification or a response).
    fn is_request(&self) -> bool {
        self.method.is_some() && self.id.is_some()
    }

    fn is_send_message(&self) -> bool {
        self.tool.as_deref() == Some("send_message")
    }
}

/// Journals the request, answers the scripted faults, and passes the rest to rmcp.
pub(crate) async fn observe(
    State(agent): State<Arc<AgentShared>>,
    req: Request,
    next: Next,
) -> Response {
    let (parts, body) = req.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY).await else {
        return (StatusCode::PAYLOAD_TOO_LARGE, "request body too large").into_response();
    };
    let mut json: Option<Value> = serde_json::from_slice(&bytes).ok();
    let rpc = Rpc::of(json.as_ref());
    let session_id = parts
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let ticket = agent.journal.push(PallasJournalEntry {
        time: now_rfc3339(),
        agent: Some(agent.key.clone()),
        method: parts.method.as_str().to_owned(),
        path: parts
            .uri
            .path_and_query()
            .map_or_else(|| parts.uri.path().to_owned(), |p| p.as_str().to_owned()),
        headers: redacted_header_map(&parts.headers),
        jsonrpc_method: rpc.method.clone(),
        progress_token: rpc.progress_token.clone(),
        tool: rpc.tool.clone(),
        arguments: rpc.arguments.clone(),
        session_id: session_id.clone(),
        status: None,
        fault: None,
        answered_session_id: None,
        finished: None,
    });

    let (resp, fault) = if let Some(r) = unauthorized(&agent, &parts.headers) {
        (r, Some(Fault::Unauthorized))
    } else if let Some(sid) = &session_id
        && expired(&agent, sid, &rpc).await
    {
        let r = (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response();
        (r, Some(Fault::SessionExpired))
    } else if let Some(status) = http_error(&agent, &rpc) {
        let r = (
            status,
            format!(
                "mock Pallas agent `{}` answers {} (scripted http_error)",
                agent.key,
                status.as_u16()
            ),
        )
            .into_response();
        (r, Some(Fault::HttpError))
    } else {
        let progress = &agent.spec.progress;
        let mut bytes = bytes;
        if rpc.is_send_message()
            && rpc.progress_token.is_none()
            && progress.mode == ProgressMode::WithoutTokenToo
            && let Some(params) = json
                .as_mut()
                .and_then(|j| j.get_mut("params"))
                .and_then(Value::as_object_mut)
        {
            let meta = params.entry("_meta").or_insert_with(|| json!({}));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert("progressToken".to_owned(), json!(UNREQUESTED_TOKEN));
            }
            if let Some(j) = &json
                && let Ok(b) = serde_json::to_vec(j)
            {
                bytes = b.into();
            }
        }
        let is_initialize = rpc.method.as_deref() == Some("initialize");
        let resp = next
            .run(Request::from_parts(parts, Body::from(bytes)))
            .await;
        if is_initialize
            && resp.status().is_success()
            && let Some(sid) = resp
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
        {
            let mut sessions = lock(&agent.sessions);
            let ordinal = u32::try_from(sessions.len()).unwrap_or(u32::MAX);
            sessions.insert(
                sid.to_owned(),
                SessionState {
                    ordinal,
                    opened: Instant::now(),
                    requests: 0,
                    expired: false,
                },
            );
        }
        if rpc.is_send_message() && is_sse(&resp) {
            call_stream(&agent, resp)
        } else {
            (resp, None)
        }
    };
    let status = resp.status().as_u16();
    let answered_session_id = resp
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let streamed = is_sse(&resp);
    agent.journal.update(ticket, |e| {
        e.status = Some(status);
        e.fault = fault.map(|f| f.as_str().to_owned());
        e.answered_session_id = answered_session_id;
        if !streamed {
            e.finished = Some(now_rfc3339());
        }
    });
    if streamed && rpc.method.as_deref() == Some("tools/call") {
        return finished_when_done(resp, agent.journal.clone(), ticket);
    }
    resp
}

/// The SSE answer of a call, its journal entry's `finished` set when its last byte has gone.
fn finished_when_done(
    resp: Response,
    journal: Arc<crate::common::Journal<PallasJournalEntry>>,
    ticket: crate::common::Ticket,
) -> Response {
    use futures::StreamExt;
    let (parts, body) = resp.into_parts();
    let end = futures::stream::once(async move {
        journal.update(ticket, |e| e.finished = Some(now_rfc3339()));
        Ok::<_, axum::Error>(bytes::Bytes::new())
    });
    let stream = body.into_data_stream().chain(end);
    Response::from_parts(parts, Body::from_stream(stream))
}

fn is_sse(resp: &Response) -> bool {
    resp.status().is_success()
        && resp
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// The 401 of an agent that requires a bearer the request lacks.
fn unauthorized(agent: &AgentShared, headers: &http::HeaderMap) -> Option<Response> {
    let want = agent.spec.require_bearer.as_deref()?;
    let got = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if got == Some(want) {
        return None;
    }
    Some(crate::common::unauthorized())
}

/// Whether session `sid` has expired (counting this request when it is a JSON-RPC request). An
/// expired session is also closed in rmcp, which ends its standalone stream.
async fn expired(agent: &AgentShared, sid: &str, rpc: &Rpc) -> bool {
    let Some(expiry) = &agent.spec.faults.session_expiry else {
        return false;
    };
    let newly = {
        let mut sessions = lock(&agent.sessions);
        let Some(state) = sessions.get_mut(sid) else {
            return false;
        };
        if state.expired {
            return true;
        }
        if expiry.sessions.is_some_and(|n| state.ordinal >= n) {
            return false;
        }
        let timed_out = expiry.after.is_some_and(|d| state.opened.elapsed() >= d);
        let used_up =
            rpc.is_request() && expiry.after_requests.is_some_and(|n| state.requests >= n);
        if rpc.is_request() {
            state.requests = state.requests.saturating_add(1);
        }
        state.expired = timed_out || used_up;
        state.expired
    };
    if newly {
        let id: Arc<str> = Arc::from(sid);
        if let Err(e) = agent.sessions_manager.close_session(&id).await {
            tracing::debug!(agent = %agent.key, "closing an expired session: {e}");
        }
    }
    newly
}

/// The status of a scripted HTTP error for this request, when it is one.
fn http_error(agent: &AgentShared, rpc: &Rpc) -> Option<StatusCode> {
    let spec = agent.spec.faults.http_error.as_ref()?;
    if spec
        .method
        .as_deref()
        .is_some_and(|m| rpc.method.as_deref() != Some(m))
    {
        return None;
    }
    let n = agent.http_matched.fetch_add(1, Ordering::SeqCst);
    let n = u32::try_from(n).unwrap_or(u32::MAX);
    let hit = n >= spec.skip && spec.times.is_none_or(|t| n - spec.skip < t);
    hit.then(|| StatusCode::from_u16(spec.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
}

/// A `send_message` call's SSE response with the agent's progress variant and stream fault.
fn call_stream(agent: &AgentShared, resp: Response) -> (Response, Option<Fault>) {
    let drop_after = agent.spec.faults.drop_stream.as_ref().and_then(|d| {
        let n = agent.drops.fetch_add(1, Ordering::SeqCst);
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        d.times
            .is_none_or(|t| n < t)
            .then_some(d.after_notifications)
    });
    let mode = agent.spec.progress.mode;
    let rw = Rewrite {
        wrong_token: mode == ProgressMode::WrongToken,
        after_result: mode == ProgressMode::AfterResult,
        drop_after,
    };
    if rw.is_identity() {
        return (resp, None);
    }
    let (parts, body) = resp.into_parts();
    let resp = Response::from_parts(parts, stream::rewrite(body, rw));
    (resp, drop_after.map(|_| Fault::DropStream))
}
