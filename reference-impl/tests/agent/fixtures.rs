//! Small in-process fixtures: an OpenAI-compatible model with the in-band `CALL_TOOL` directive,
//! downstream MCP servers (rmcp) with a request journal, dead ports, and a raw MCP client that
//! reads the SSE stream of a call in order.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context as _;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use pallas_reference::agent::{AgentDeps, router};
use pallas_reference::llm::LlmStatusCell;
use pallas_reference::metrics::Metrics;
use pallas_reference::settings::{AgentSettings, ModelRef, Provider, ProviderSettings};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Serves `router` on an ephemeral loopback port until `ct` is cancelled.
pub async fn serve(router: Router, ct: CancellationToken) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // Small SSE writes must not wait for delayed ACKs (Nagle).
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    tokio::spawn(async move {
        let _ = axum::serve(listener, router)
            .with_graceful_shutdown(ct.cancelled_owned())
            .await;
    });
    addr
}

#[path = "mock_openai.rs"]
mod mock_openai;
// Not every file that includes the fixtures (tests, benches) uses every fixture.
#[allow(unused_imports)]
pub use mock_openai::{LlmFault, MockOpenAi};

// ---------------------------------------------------------------- mock MCP server

/// One HTTP request a mock MCP server received.
#[derive(Debug, Clone)]
pub struct McpRecord {
    pub method: String,
    pub authorization: Option<String>,
    /// Read by the defect tests (the fixtures are shared by two test binaries).
    #[allow(dead_code)]
    pub accept: Option<String>,
    pub rpc_method: Option<String>,
    pub tool: Option<String>,
    pub arguments: Option<Value>,
    pub session: Option<String>,
}

#[derive(Clone, Default)]
pub struct McpJournal(Arc<Mutex<Vec<McpRecord>>>);

impl McpJournal {
    pub fn records(&self) -> Vec<McpRecord> {
        self.0.lock().unwrap().clone()
    }
    pub fn calls(&self) -> Vec<McpRecord> {
        self.records()
            .into_iter()
            .filter(|r| r.rpc_method.as_deref() == Some("tools/call"))
            .collect()
    }
    pub fn count(&self, method: &str, rpc: Option<&str>) -> usize {
        self.records()
            .iter()
            .filter(|r| r.method == method && (rpc.is_none() || r.rpc_method.as_deref() == rpc))
            .count()
    }
}

async fn record(State(journal): State<McpJournal>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, 16 << 20)
        .await
        .unwrap_or_default();
    let json: Option<Value> = serde_json::from_slice(&bytes).ok();
    let header = |name: &str| {
        parts
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    journal.0.lock().unwrap().push(McpRecord {
        method: parts.method.to_string(),
        authorization: header("authorization"),
        accept: header("accept"),
        rpc_method: json
            .as_ref()
            .and_then(|j| j["method"].as_str().map(str::to_owned)),
        tool: json
            .as_ref()
            .and_then(|j| j["params"]["name"].as_str().map(str::to_owned)),
        arguments: json.as_ref().map(|j| j["params"]["arguments"].clone()),
        session: header("mcp-session-id"),
    });
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
        .await
}

async fn refuse_initialize(request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, 16 << 20)
        .await
        .unwrap_or_default();
    let json: Option<Value> = serde_json::from_slice(&bytes).ok();
    if json.as_ref().is_some_and(|j| j["method"] == "initialize") {
        return (
            axum::http::StatusCode::BAD_REQUEST,
            Json(json!({"jsonrpc": "2.0", "id": json.as_ref().map(|j| j["id"].clone()),
                        "error": {"code": -32601, "message": "initialize is not supported: use 2026-07-28"}})),
        )
            .into_response();
    }
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
        .await
}

/// The tools every mock MCP server offers:
/// `whoami` (answers the `Authorization` it saw), `echo` (answers its arguments), `fail`
/// (isError), `slow` (answers after `ms` milliseconds), `hang` (never answers).
#[derive(Clone)]
struct MockMcp {
    name: String,
    rendezvous: Arc<tokio::sync::Barrier>,
}

fn tool(name: &str, description: &str) -> Tool {
    let schema = json!({"type": "object"});
    let Value::Object(schema) = schema else {
        unreachable!()
    };
    Tool::new(name.to_owned(), description.to_owned(), Arc::new(schema))
}

impl ServerHandler for MockMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(vec![
            tool("whoami", "Returns the Authorization header"),
            tool("echo", "Echoes the arguments"),
            tool("fail", "Always fails"),
            tool("slow", "Answers after `ms` milliseconds"),
            tool("hang", "Never answers"),
            tool(
                "rendezvous",
                "Answers once two calls are in flight at the same time",
            ),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let text = |t: String| CallToolResult::success(vec![ContentBlock::text(t)]).into();
        match request.name.as_ref() {
            "whoami" => {
                let auth = ctx
                    .extensions
                    .get::<axum::http::request::Parts>()
                    .and_then(|p| p.headers.get("authorization"))
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("none")
                    .to_owned();
                Ok(text(format!("{}:{auth}", self.name)))
            }
            "echo" => Ok(text(
                serde_json::to_string(&request.arguments).unwrap_or_default(),
            )),
            "fail" => Ok(CallToolResult::error(vec![ContentBlock::text("it failed")]).into()),
            "slow" => {
                let ms = request
                    .arguments
                    .as_ref()
                    .and_then(|a| a.get("ms"))
                    .and_then(Value::as_u64)
                    .unwrap_or(100);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Ok(text(format!("slept {ms}")))
            }
            "rendezvous" => {
                let met = tokio::time::timeout(Duration::from_secs(5), self.rendezvous.wait())
                    .await
                    .is_ok();
                Ok(text(if met { "met".into() } else { "alone".into() }))
            }
            "hang" => {
                ctx.ct.cancelled().await;
                Ok(text("cancelled".into()))
            }
            other => Err(McpError::invalid_params(format!("no tool {other}"), None)),
        }
    }
}

/// A running mock MCP server.
pub struct McpServer {
    pub url: String,
    pub journal: McpJournal,
    _ct: tokio_util::sync::DropGuard,
}

impl McpServer {
    /// A 2025-11-25 server with sessions.
    pub async fn start(name: &str) -> Self {
        Self::start_with(name, true).await
    }

    /// `sessions: false`: stateless, as a 2026-07-28-only server (GET/DELETE answer 405,
    /// `initialize` refused with 400).
    pub async fn start_with(name: &str, sessions: bool) -> Self {
        let journal = McpJournal::default();
        let ct = CancellationToken::new();
        let handler = MockMcp {
            name: name.into(),
            rendezvous: Arc::new(tokio::sync::Barrier::new(2)),
        };
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(sessions)
            .with_cancellation_token(ct.child_token());
        let service = StreamableHttpService::new(
            move || Ok(handler.clone()),
            LocalSessionManager::default().into(),
            config,
        );
        let mut router = Router::new().nest_service("/mcp", service);
        if !sessions {
            router = router.layer(axum::middleware::from_fn(refuse_initialize));
        }
        let router = router.layer(axum::middleware::from_fn_with_state(
            journal.clone(),
            record,
        ));
        let addr = serve(router, ct.clone()).await;
        Self {
            url: format!("http://{addr}/mcp"),
            journal,
            _ct: ct.drop_guard(),
        }
    }
}

/// A URL where nothing listens (connection refused).
pub async fn refused_url() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}/mcp")
}

/// A URL that accepts connections and never answers. Lives as long as the returned guard.
pub async fn blackhole_url() -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    (format!("http://{addr}/mcp"), task)
}

// ---------------------------------------------------------------- the agent under test

pub struct Agent {
    pub url: String,
    pub metrics: Metrics,
    pub shutdown: CancellationToken,
}

impl Drop for Agent {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

pub fn settings(name: &str, llm_url: &str) -> AgentSettings {
    let mut settings = AgentSettings::new(
        name,
        ModelRef {
            provider: Provider::OpenAi,
            model: "mock-model".into(),
        },
        ProviderSettings::new(llm_url),
    );
    settings.instruction = "You are a test agent.".into();
    settings
}

pub async fn start_agent(settings: AgentSettings) -> Agent {
    start_agent_with(settings, LlmStatusCell::new()).await
}

pub async fn start_agent_with(settings: AgentSettings, llm_status: LlmStatusCell) -> Agent {
    let metrics = Metrics::new();
    let shutdown = CancellationToken::new();
    let deps = AgentDeps {
        metrics: metrics.clone(),
        llm_status,
        http: pallas_reference::net::builder().build().unwrap(),
    };
    let app = router(Arc::new(settings), deps, shutdown.clone());
    let addr = serve(app, shutdown.clone()).await;
    Agent {
        url: format!("http://{addr}/mcp"),
        metrics,
        shutdown,
    }
}

// ---------------------------------------------------------------- raw MCP client

/// A raw MCP client over reqwest: sees exactly what the server sends, in order.
pub struct RawClient {
    pub http: reqwest::Client,
    pub url: String,
    pub session: Option<String>,
    next_id: u64,
}

/// Everything a POST answered: the JSON-RPC messages, in order.
#[derive(Debug)]
pub struct Exchange {
    pub status: u16,
    pub messages: Vec<Value>,
}

impl Exchange {
    pub fn result(&self) -> &Value {
        self.messages
            .iter()
            .find(|m| m.get("result").is_some() || m.get("error").is_some())
            .expect("a response")
    }
    pub fn progress(&self) -> Vec<Value> {
        self.messages
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .map(|m| m["params"].clone())
            .collect()
    }
    /// The text of the first content block of the result.
    pub fn text(&self) -> String {
        self.result()["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
    pub fn is_error(&self) -> bool {
        self.result()["result"]["isError"] == json!(true)
    }
}

impl RawClient {
    pub async fn connect(url: &str) -> anyhow::Result<Self> {
        let mut client = Self {
            http: pallas_reference::net::builder().build().unwrap(),
            url: url.to_owned(),
            session: None,
            next_id: 1,
        };
        let init = client
            .post_raw(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "test", "version": "0"}}}),
                None,
            )
            .await?;
        anyhow::ensure!(
            init.0.status == 200,
            "initialize answered {}",
            init.0.status
        );
        client.session = init.1;
        client
            .post_raw(
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                None,
            )
            .await?;
        Ok(client)
    }

    async fn post_raw(
        &self,
        body: Value,
        bearer: Option<&str>,
    ) -> anyhow::Result<(Exchange, Option<String>)> {
        let mut request = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .json(&body);
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        if let Some(bearer) = bearer {
            request = request.bearer_auth(bearer);
        }
        let response = request.send().await.context("POST")?;
        let status = response.status().as_u16();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let text = response.text().await.context("body")?;
        let messages = if sse {
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
                .collect()
        } else if text.trim().is_empty() {
            Vec::new()
        } else {
            vec![serde_json::from_str(&text).context("JSON body")?]
        };
        Ok((Exchange { status, messages }, session))
    }

    pub async fn request(
        &mut self,
        method: &str,
        params: Value,
        bearer: Option<&str>,
    ) -> anyhow::Result<Exchange> {
        let id = self.next_id;
        self.next_id += 1;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        Ok(self.post_raw(body, bearer).await?.0)
    }

    pub async fn call(
        &mut self,
        tool: &str,
        arguments: Value,
        token: Option<Value>,
        bearer: Option<&str>,
    ) -> anyhow::Result<Exchange> {
        let mut params = json!({"name": tool, "arguments": arguments});
        if let Some(token) = token {
            params["_meta"] = json!({"progressToken": token});
        }
        self.request("tools/call", params, bearer).await
    }

    pub async fn send(&mut self, message: &str) -> anyhow::Result<Exchange> {
        self.call("send_message", json!({"message": message}), None, None)
            .await
    }

    /// A second handle on the same session, numbering its requests from `next_id`.
    pub fn fork(&self, next_id: u64) -> RawClient {
        RawClient {
            http: self.http.clone(),
            url: self.url.clone(),
            session: self.session.clone(),
            next_id,
        }
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) -> anyhow::Result<u16> {
        let body = json!({"jsonrpc": "2.0", "method": method, "params": params});
        Ok(self.post_raw(body, None).await?.0.status)
    }

    pub async fn close(&self) {
        if let Some(session) = &self.session {
            let _ = self
                .http
                .delete(&self.url)
                .header("mcp-session-id", session)
                .send()
                .await;
        }
    }
}
