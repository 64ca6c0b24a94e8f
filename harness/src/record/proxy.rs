//! The recording proxy: a registry document whose remotes are rewritten to point at the proxy,
//! and per agent `/agents/{name}/mcp`, forwarded to the bridge as they come (method, MCP
//! headers, body), every exchange kept in order for the scenario writer. A standalone `GET`
//! SSE stream is answered 405, which MCP allows, so nothing stays open through the proxy.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::Response;
use serde_json::Value;

use super::RecordError;
use crate::client::{SseDecoder, registry_document_url, server_id, streamable_http_url};

/// Headers forwarded each way (lower case); others are the proxy's own business.
const FORWARDED: &[&str] = &[
    "accept",
    "content-type",
    "authorization",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "last-event-id",
];

/// One exchange that passed through.
#[derive(Debug, Clone, PartialEq)]
pub enum Recorded {
    /// The registry document was fetched.
    Registry {
        /// HTTP status of the bridge's answer.
        status: u16,
        /// The document (before rewriting), when JSON.
        body: Option<Value>,
    },
    /// One MCP request to an agent.
    Mcp {
        /// The agent (server id, or the `--agent` name).
        agent: String,
        /// `POST` or `DELETE`.
        method: String,
        /// The JSON-RPC message sent (POST).
        request: Option<Value>,
        /// The bearer the client sent, if any (kept in memory only, never written).
        bearer: Option<String>,
        /// The session the request carried.
        session: Option<String>,
        /// HTTP status of the answer.
        status: u16,
        /// The session id the answer issued (`initialize`).
        issued_session: Option<String>,
        /// Every JSON-RPC message of the answer (JSON body or SSE events), in order.
        messages: Vec<Value>,
    },
}

/// The proxy's state: where the bridge is, what passed through.
#[derive(Debug)]
pub struct ProxyState {
    registry: Option<String>,
    agents: Mutex<BTreeMap<String, String>>,
    base: String,
    http: reqwest::Client,
    log: Mutex<Vec<Recorded>>,
}

impl ProxyState {
    /// What passed through so far, in order.
    pub fn recorded(&self) -> Vec<Recorded> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    fn push(&self, r: Recorded) {
        if let Ok(mut l) = self.log.lock() {
            l.push(r);
        }
    }

    fn upstream(&self, agent: &str) -> Option<String> {
        self.agents.lock().ok()?.get(agent).cloned()
    }
}

/// A running proxy.
pub struct Proxy {
    /// Its address.
    pub addr: SocketAddr,
    state: Arc<ProxyState>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    /// Starts the proxy on `listen` in front of a registry (its agents are discovered from
    /// the document) and/or fixed agents (`name → MCP URL`).
    pub async fn start(
        listen: SocketAddr,
        registry: Option<String>,
        agents: BTreeMap<String, String>,
    ) -> Result<Proxy, RecordError> {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|source| RecordError::Listen {
                addr: listen,
                source,
            })?;
        let addr = listener.local_addr().map_err(RecordError::Bound)?;
        let http = pallas_mocks::http_client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(RecordError::Client)?;
        let state = Arc::new(ProxyState {
            registry,
            agents: Mutex::new(agents),
            base: format!("http://{addr}"),
            http,
            log: Mutex::new(Vec::new()),
        });
        let app = axum::Router::new()
            .route(
                "/.well-known/mcp/server.json",
                axum::routing::get(registry_doc),
            )
            .route("/agents/{agent}/mcp", axum::routing::any(agent_endpoint))
            .with_state(state.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Proxy { addr, state, task })
    }

    /// The proxy's registry base URL.
    pub fn registry_url(&self) -> String {
        self.state.base.clone()
    }

    /// The proxied endpoint of agent `name`.
    pub fn agent_url(&self, name: &str) -> String {
        format!("{}/agents/{name}/mcp", self.state.base)
    }

    /// What passed through so far.
    pub fn recorded(&self) -> Vec<Recorded> {
        self.state.recorded()
    }

    /// Stops serving; returns what passed through.
    pub fn stop(self) -> Vec<Recorded> {
        self.task.abort();
        self.state.recorded()
    }
}

fn plain(status: StatusCode, text: &str) -> Response {
    let mut r = Response::new(Body::from(text.to_owned()));
    *r.status_mut() = status;
    r
}

async fn registry_doc(State(s): State<Arc<ProxyState>>) -> Response {
    let Some(reg) = &s.registry else {
        return plain(StatusCode::NOT_FOUND, "no registry behind this proxy");
    };
    let answer = match s
        .http
        .get(registry_document_url(reg))
        .header("accept", "application/json")
        .send()
        .await
    {
        Ok(a) => a,
        Err(e) => return plain(StatusCode::BAD_GATEWAY, &format!("registry: {e}")),
    };
    let status = answer.status().as_u16();
    let ct = answer
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .to_owned();
    let bytes = answer.bytes().await.unwrap_or_default();
    let body: Option<Value> = serde_json::from_slice(&bytes).ok();
    s.push(Recorded::Registry {
        status,
        body: body.clone(),
    });
    let out = match body {
        Some(mut doc) => {
            rewrite_remotes(&s, &mut doc);
            Bytes::from(doc.to_string())
        }
        None => bytes,
    };
    let mut r = Response::new(Body::from(out));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    if let Ok(v) = ct.parse() {
        r.headers_mut().insert("content-type", v);
    }
    r
}

/// Points every `streamable-http` remote at the proxy, remembering the bridge's URL.
fn rewrite_remotes(s: &ProxyState, doc: &mut Value) {
    let Some(servers) = doc.get_mut("servers").and_then(Value::as_array_mut) else {
        return;
    };
    for entry in servers {
        let Some(server) = entry.get_mut("server") else {
            continue;
        };
        let name = server
            .get("name")
            .and_then(Value::as_str)
            .map(|n| server_id(n).to_owned());
        let (Some(name), Some(url)) = (name, streamable_http_url(server).map(str::to_owned)) else {
            continue;
        };
        if let Ok(mut a) = s.agents.lock() {
            a.insert(name.clone(), url.clone());
        }
        let proxied = format!("{}/agents/{name}/mcp", s.base);
        if let Some(remotes) = server.get_mut("remotes").and_then(Value::as_array_mut) {
            for r in remotes {
                if r.get("url").and_then(Value::as_str) == Some(url.as_str()) {
                    r["url"] = Value::String(proxied.clone());
                }
            }
        }
    }
}

async fn agent_endpoint(
    State(s): State<Arc<ProxyState>>,
    Path(agent): Path<String>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if method == Method::GET {
        // No standalone stream through the proxy: MCP lets a server answer 405 here.
        return plain(StatusCode::METHOD_NOT_ALLOWED, "");
    }
    let Some(url) = s.upstream(&agent) else {
        return plain(StatusCode::NOT_FOUND, "unknown agent");
    };
    let mut request = s.http.request(method.clone(), &url);
    for name in FORWARDED {
        if let Some(v) = headers.get(*name) {
            request = request.header(*name, v.as_bytes());
        }
    }
    if !body.is_empty() {
        request = request.body(body.clone());
    }
    let answer = match request.send().await {
        Ok(a) => a,
        Err(e) => return plain(StatusCode::BAD_GATEWAY, &format!("{agent}: {e}")),
    };
    let status = answer.status();
    let answer_headers = answer.headers().clone();
    let bytes = answer.bytes().await.unwrap_or_default();
    let header = |h: &HeaderMap, n: &str| h.get(n).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let bearer = header(&headers, "authorization")
        .and_then(|a| a.strip_prefix("Bearer ").map(str::to_owned));
    s.push(Recorded::Mcp {
        agent: agent.clone(),
        method: method.to_string(),
        request: serde_json::from_slice(&body).ok(),
        bearer,
        session: header(&headers, "mcp-session-id"),
        status: status.as_u16(),
        issued_session: header(&answer_headers, "mcp-session-id"),
        messages: messages_of(&answer_headers, &bytes),
    });
    let mut r = Response::new(Body::from(bytes));
    *r.status_mut() = status;
    for name in ["content-type", "mcp-session-id", "www-authenticate"] {
        if let Some(v) = answer_headers.get(name) {
            r.headers_mut().insert(name, v.clone());
        }
    }
    r
}

/// The JSON-RPC messages of an answer: a JSON body (one message or a batch) or SSE events.
fn messages_of(headers: &reqwest::header::HeaderMap, body: &[u8]) -> Vec<Value> {
    let sse = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.starts_with("text/event-stream"));
    let parsed: Vec<Value> = if sse {
        let mut d = SseDecoder::new();
        d.push(body)
            .into_iter()
            .filter_map(|e| serde_json::from_str(&e.data).ok())
            .collect()
    } else {
        serde_json::from_slice(body).ok().into_iter().collect()
    };
    parsed
        .into_iter()
        .flat_map(|v| match v {
            Value::Array(items) => items,
            v => vec![v],
        })
        .collect()
}
