//! Mock downstream MCP servers: tools declared as data, server-level faults (down, blackhole, HTTP
//! status, slow `initialize`, required bearer), both wire eras, a journal and session accounting,
//! `Host`/`Origin` validation (DNS-rebinding protection; `lenient` turns it off), optional HTTPS
//! and the `conformance` preset ([`conformance`]).

mod conformance;
mod server;

use server::MockServer;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http::{Method, StatusCode};
use rmcp::model::Tool;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::common::{Journal, ServerHandle, header_map, now_rfc3339};
use crate::error::MockError;
use crate::journal::{McpJournalEntry, SessionStats};
use crate::spec::{McpMockSpec, McpPreset, Reachability, ToolResultSpec, WireEra};
use crate::tls::MockTls;

/// The host names a loopback server answers to (`Host` and `Origin` checks).
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Largest request body the mock reads (rmcp's own default limit).
const MAX_BODY: usize = 4 * 1024 * 1024;

/// A running mock MCP server. Stops when dropped.
#[derive(Debug)]
pub struct McpMock {
    addr: SocketAddr,
    tls: Option<Arc<MockTls>>,
    shared: Arc<McpShared>,
    server: ServerHandle,
    /// A `down` server's port, bound but never listening: connections are refused, and no other
    /// process can take the port while the mock lives.
    _reserved: Option<tokio::net::TcpSocket>,
}

#[derive(Debug)]
struct McpShared {
    name: String,
    spec: McpMockSpec,
    tools: Vec<Tool>,
    journal: Arc<Journal<McpJournalEntry>>,
    /// Bumped at each `tools/call` journaled, for the calls that wait on another one
    /// (`until_called`).
    calls: tokio::sync::watch::Sender<u64>,
    opened: AtomicU64,
    deleted: AtomicU64,
    ct: CancellationToken,
}

impl McpShared {
    /// Returns once a call of `tool` is in the journal (at once if one already is).
    async fn called(&self, tool: &str) {
        let mut calls = self.calls.subscribe();
        loop {
            let seen = self
                .journal
                .snapshot()
                .iter()
                .any(|e| e.tool.as_deref() == Some(tool));
            if seen || calls.changed().await.is_err() {
                return;
            }
        }
    }

    fn stats(&self) -> SessionStats {
        let opened = self.opened.load(Ordering::SeqCst);
        let deleted = self.deleted.load(Ordering::SeqCst);
        SessionStats {
            opened,
            deleted,
            open_now: opened.saturating_sub(deleted),
        }
    }

    fn reset(&self) {
        self.journal.clear();
        self.opened.store(0, Ordering::SeqCst);
        self.deleted.store(0, Ordering::SeqCst);
    }
}

impl McpMock {
    /// Starts the mock named `name` on `addr` (port 0 for an ephemeral port). Returns once it
    /// listens (for `down`: once its port is known to be closed). With `tls: true` in the spec it
    /// serves HTTPS with a certificate of its own CA ([`McpMock::tls`]).
    pub async fn start(
        name: &str,
        spec: McpMockSpec,
        addr: SocketAddr,
    ) -> Result<McpMock, MockError> {
        let tls = MockTls::generate_if(spec.tls)?;
        Self::start_with_tls(name, spec, addr, tls).await
    }

    /// Like [`McpMock::start`], serving HTTPS with `tls` when given (whatever `spec.tls`).
    pub async fn start_with_tls(
        name: &str,
        spec: McpMockSpec,
        addr: SocketAddr,
        tls: Option<Arc<MockTls>>,
    ) -> Result<McpMock, MockError> {
        let bind_err = |source| MockError::Bind {
            name: name.to_owned(),
            addr,
            source,
        };
        let mut tools = spec
            .tools
            .iter()
            .map(to_rmcp_tool)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|message| MockError::InvalidSpec {
                name: name.to_owned(),
                message,
            })?;
        if spec.preset == Some(McpPreset::Conformance) {
            let declared: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
            tools.extend(
                conformance::tools()
                    .into_iter()
                    .filter(|t| !declared.iter().any(|d| *d == t.name)),
            );
        }
        let shared = Arc::new(McpShared {
            name: name.to_owned(),
            spec: spec.clone(),
            tools,
            journal: Journal::new(),
            calls: tokio::sync::watch::Sender::new(0),
            opened: AtomicU64::new(0),
            deleted: AtomicU64::new(0),
            ct: CancellationToken::new(),
        });
        let mut reserved = None;
        let (bound, server) = match spec.reachability {
            Reachability::Down => {
                // Hold a free port bound without listening: connections to it are refused.
                let bound = if addr.port() == 0 {
                    let socket = if addr.is_ipv4() {
                        tokio::net::TcpSocket::new_v4()
                    } else {
                        tokio::net::TcpSocket::new_v6()
                    }
                    .map_err(bind_err)?;
                    socket.bind(addr).map_err(bind_err)?;
                    let bound = socket.local_addr().map_err(bind_err)?;
                    reserved = Some(socket);
                    bound
                } else {
                    addr
                };
                (bound, ServerHandle::idle())
            }
            Reachability::Blackhole => {
                let l = tokio::net::TcpListener::bind(addr)
                    .await
                    .map_err(bind_err)?;
                let bound = l.local_addr().map_err(bind_err)?;
                let ct = shared.ct.clone();
                let task = tokio::spawn(blackhole(l, ct.clone()));
                (bound, ServerHandle::from_task(ct, task))
            }
            Reachability::Up => {
                let l = tokio::net::TcpListener::bind(addr)
                    .await
                    .map_err(bind_err)?;
                let bound = l.local_addr().map_err(bind_err)?;
                let server = ServerHandle::serve_with(l, router(shared.clone()), tls.as_deref());
                let server_ct = server.ct.clone();
                let ct = shared.ct.clone();
                tokio::spawn(async move {
                    server_ct.cancelled().await;
                    ct.cancel();
                });
                (bound, server)
            }
        };
        tracing::debug!(name, %bound, reachability = ?spec.reachability, "mock MCP server ready");
        Ok(McpMock {
            addr: bound,
            tls,
            shared,
            server,
            _reserved: reserved,
        })
    }

    /// `http://127.0.0.1:P/mcp` (also for `down` and `blackhole` servers); `https` with TLS;
    /// `…/mcp/` when the spec asks for a trailing slash.
    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        let slash = if self.shared.spec.trailing_slash {
            "/"
        } else {
            ""
        };
        format!("{scheme}://{}/mcp{slash}", self.addr)
    }

    /// The certificate authority of an HTTPS mock.
    pub fn tls(&self) -> Option<&MockTls> {
        self.tls.as_deref()
    }

    /// The bound (or, for `down`, reserved-then-closed) address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The mock's name.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// Every HTTP request received since start or the last reset.
    pub fn journal(&self) -> Vec<McpJournalEntry> {
        self.shared.journal.snapshot()
    }

    /// Returns once a `tools/call` of `tool` is in the journal (at once if one already is).
    pub async fn called(&self, tool: &str) {
        self.shared.called(tool).await;
    }

    /// Sessions opened by `initialize` and closed by `DELETE`.
    pub fn sessions(&self) -> SessionStats {
        self.shared.stats()
    }

    /// Clears the journal and the session counters.
    pub fn reset(&self) {
        self.shared.reset();
    }

    /// Stops the mock, waiting briefly for in-flight requests.
    pub async fn shutdown(self) {
        self.server.shutdown().await;
    }
}

async fn blackhole(listener: tokio::net::TcpListener, ct: CancellationToken) {
    let mut held = Vec::new();
    loop {
        tokio::select! {
            () = ct.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((socket, _)) => held.push(socket),
                Err(e) => tracing::debug!("blackhole accept failed: {e}"),
            },
        }
    }
}

fn to_rmcp_tool(t: &crate::spec::ToolSpec) -> Result<Tool, String> {
    let schema = match &t.input_schema {
        None => json!({"type": "object"}),
        Some(s) => s.clone(),
    };
    let Value::Object(schema) = schema else {
        return Err(format!(
            "tool `{}`: input_schema must be a JSON object",
            t.name
        ));
    };
    Ok(Tool::new_with_raw(
        t.name.clone(),
        t.description.clone().map(Into::into),
        Arc::new(schema),
    ))
}

fn router(shared: Arc<McpShared>) -> Router {
    let stateless = shared.spec.era == WireEra::V2026_07_28;
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(!stateless)
        .with_json_response(stateless)
        .with_cancellation_token(shared.ct.child_token());
    // The mocks bind loopback: refuse a foreign Host or Origin (403), as the MCP transport spec
    // asks of local servers, unless the spec is lenient.
    let config = if shared.spec.lenient {
        config.disable_allowed_hosts().disable_allowed_origins()
    } else {
        config
            .with_allowed_hosts(LOOPBACK_HOSTS)
            .with_allowed_origins(LOOPBACK_HOSTS.iter().flat_map(|h| {
                let h = if h.contains(':') {
                    format!("[{h}]")
                } else {
                    (*h).to_owned()
                };
                [format!("http://{h}:*"), format!("https://{h}:*")]
            }))
    };
    let handler_shared = shared.clone();
    let service = StreamableHttpService::new(
        move || {
            Ok(MockServer {
                shared: handler_shared.clone(),
            })
        },
        LocalSessionManager::default().into(),
        config,
    );
    let inner = match shared.spec.pack.as_ref().map(crate::packs::router) {
        Some(Ok(pack)) => pack,
        Some(Err(e)) => {
            tracing::warn!("pack of `{}` not served: {e}", shared.name);
            Router::new()
        }
        // Served at `/mcp/`; `/mcp` is redirected there, as a Starlette mount does.
        None if shared.spec.trailing_slash => Router::new().route_service("/mcp/", service).route(
            "/mcp",
            axum::routing::any(|| async {
                (
                    StatusCode::TEMPORARY_REDIRECT,
                    [(axum::http::header::LOCATION, "/mcp/")],
                )
            }),
        ),
        None => Router::new().nest_service("/mcp", service),
    };
    let mcp = inner.layer(axum::middleware::from_fn_with_state(
        shared.clone(),
        observe,
    ));
    Router::new()
        .route("/__mock/journal", get(journal_handler))
        .route("/__mock/reset", post(reset_handler))
        .route("/__mock/sessions", get(sessions_handler))
        .with_state(shared)
        .merge(mcp)
}

async fn journal_handler(State(shared): State<Arc<McpShared>>) -> Response {
    axum::Json(shared.journal.snapshot()).into_response()
}

async fn reset_handler(State(shared): State<Arc<McpShared>>) -> StatusCode {
    shared.reset();
    StatusCode::NO_CONTENT
}

async fn sessions_handler(State(shared): State<Arc<McpShared>>) -> Response {
    axum::Json(shared.stats()).into_response()
}

/// Journals every request, applies the server-level faults and counts sessions.
async fn observe(State(shared): State<Arc<McpShared>>, req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(b) => b,
        Err(_) => {
            return (StatusCode::PAYLOAD_TOO_LARGE, "request body too large").into_response();
        }
    };
    let json: Option<Value> = serde_json::from_slice(&bytes).ok();
    // Batches are not part of 2025-11-25; look at the first message if one arrives.
    let msg = match &json {
        Some(Value::Array(a)) => a.first(),
        other => other.as_ref(),
    };
    let jsonrpc_method = msg
        .and_then(|m| m.get("method"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let request_id = msg.and_then(|m| m.get("id")).cloned();
    let (tool, arguments) = if jsonrpc_method.as_deref() == Some("tools/call") {
        let params = msg.and_then(|m| m.get("params"));
        (
            params
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .map(str::to_owned),
            params.and_then(|p| p.get("arguments")).cloned(),
        )
    } else {
        (None, None)
    };
    let session_id = parts
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let is_call = tool.is_some();
    let ticket = shared.journal.push(McpJournalEntry {
        time: now_rfc3339(),
        method: parts.method.as_str().to_owned(),
        headers: header_map(&parts.headers),
        jsonrpc_method: jsonrpc_method.clone(),
        tool,
        arguments,
        session_id,
        status: None,
        opened_session: None,
    });
    if is_call {
        shared.calls.send_modify(|n| *n += 1);
    }

    let resp = if let Some(status) = shared.spec.http_status {
        let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (
            code,
            format!("mock `{}` answers every request with {status}", shared.name),
        )
            .into_response()
    } else if lacks_credentials(&shared.spec, &parts.headers, is_call) {
        crate::common::unauthorized()
    } else if let Some(status) = shared.spec.delete_status
        && parts.method == Method::DELETE
    {
        let code = StatusCode::from_u16(status).unwrap_or(StatusCode::METHOD_NOT_ALLOWED);
        (code, "this server does not let clients end sessions").into_response()
    } else if shared.spec.refuse_discover && jsonrpc_method.as_deref() == Some("server/discover") {
        (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({"jsonrpc": "2.0", "id": request_id,
                "error": {"code": -32600, "message": "Bad Request: this server speaks MCP 2025-11-25 only"}})),
        )
            .into_response()
    } else if let Some(message) = shared.spec.initialize_error.as_deref()
        && matches!(
            jsonrpc_method.as_deref(),
            Some("initialize" | "server/discover")
        )
    {
        axum::Json(json!({"jsonrpc": "2.0", "id": request_id,
            "error": {"code": -32603, "message": message}}))
        .into_response()
    } else {
        if jsonrpc_method.as_deref() == Some("initialize")
            && let Some(d) = shared.spec.initialize_delay
        {
            tokio::select! {
                () = tokio::time::sleep(d) => {}
                () = shared.ct.cancelled() => {}
            }
        }
        let is_delete = parts.method == Method::DELETE;
        let resp = next
            .run(Request::from_parts(parts, Body::from(bytes)))
            .await;
        if jsonrpc_method.as_deref() == Some("initialize")
            && resp.status().is_success()
            && resp.headers().contains_key("mcp-session-id")
        {
            shared.opened.fetch_add(1, Ordering::SeqCst);
        }
        if is_delete && resp.status().is_success() {
            shared.deleted.fetch_add(1, Ordering::SeqCst);
        }
        resp
    };
    let status = resp.status().as_u16();
    let opened = resp
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    shared.journal.update(ticket, |e| {
        e.status = Some(status);
        e.opened_session = opened;
    });
    resp
}

/// Whether a request lacks what the server requires: its `require_bearer` (on calls only with
/// `bearer_on_calls_only`) or one of its `require_headers`.
fn lacks_credentials(spec: &McpMockSpec, headers: &axum::http::HeaderMap, is_call: bool) -> bool {
    let value = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let bearer_missing = spec.require_bearer.as_deref().is_some_and(|token| {
        (is_call || !spec.bearer_on_calls_only)
            && value("authorization").and_then(|v| v.strip_prefix("Bearer ")) != Some(token)
    });
    bearer_missing
        || spec.require_headers.iter().any(|(name, want)| {
            !value(&name.to_ascii_lowercase())
                .is_some_and(|seen| crate::redact::same_header_value(name, seen, want))
        })
}
