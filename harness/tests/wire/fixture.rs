//! A tiny HTTP fixture that answers each request with an exact byte sequence chosen by a
//! closure: SSE priming events, multi-line data, chunk delays, hangs, odd statuses.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderMap, Method, Response, StatusCode};
use bytes::Bytes;
use futures::StreamExt;
use serde_json::Value;

/// One request the fixture received.
#[derive(Debug, Clone)]
pub struct Captured {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Captured {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }

    /// The JSON-RPC id of the request body, as JSON text (`1`, `"a"`).
    pub fn id(&self) -> String {
        self.json()
            .get("id")
            .cloned()
            .unwrap_or(Value::Null)
            .to_string()
    }

    pub fn rpc_method(&self) -> Option<String> {
        self.json()
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned)
    }
}

/// What to answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub chunks: Vec<String>,
    pub chunk_delay: Option<Duration>,
    /// Keep the body open forever after the chunks.
    pub hang: bool,
}

impl Reply {
    pub fn sse(chunks: Vec<String>) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            chunks,
            chunk_delay: None,
            hang: false,
        }
    }

    pub fn json(body: Value) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            chunks: vec![body.to_string()],
            chunk_delay: None,
            hang: false,
        }
    }

    pub fn status(status: u16, content_type: &str, body: &str) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), content_type.into())],
            chunks: vec![body.to_owned()],
            chunk_delay: None,
            hang: false,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}

type Handler = Arc<dyn Fn(&Captured) -> Reply + Send + Sync>;

pub struct Fixture {
    pub base: String,
    pub requests: Arc<Mutex<Vec<Captured>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Fixture {
    pub async fn start(handler: impl Fn(&Captured) -> Reply + Send + Sync + 'static) -> Fixture {
        let handler: Handler = Arc::new(handler);
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        let app = axum::Router::new().fallback(
            move |method: Method, uri: axum::http::Uri, headers: HeaderMap, body: Bytes| {
                let handler = handler.clone();
                let seen = seen.clone();
                async move {
                    let captured = Captured {
                        method: method.to_string(),
                        path: uri.path().to_owned(),
                        headers: headers
                            .iter()
                            .map(|(n, v)| {
                                (n.as_str().to_owned(), v.to_str().unwrap_or("").to_owned())
                            })
                            .collect(),
                        body: String::from_utf8_lossy(&body).into_owned(),
                    };
                    seen.lock().unwrap().push(captured.clone());
                    respond(handler(&captured))
                }
            },
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Fixture {
            base: format!("http://{addr}"),
            requests,
            task,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn captured(&self) -> Vec<Captured> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn respond(reply: Reply) -> Response<Body> {
    let chunks: Vec<Result<Bytes, std::io::Error>> = reply
        .chunks
        .into_iter()
        .map(|c| Ok(Bytes::from(c)))
        .collect();
    let delay = reply.chunk_delay;
    let stream = futures::stream::iter(chunks).then(move |c| async move {
        if let Some(d) = delay {
            tokio::time::sleep(d).await;
        }
        c
    });
    let body = if reply.hang {
        Body::from_stream(stream.chain(futures::stream::pending()))
    } else {
        Body::from_stream(stream)
    };
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::from_u16(reply.status).unwrap();
    for (n, v) in reply.headers {
        response.headers_mut().insert(
            axum::http::HeaderName::from_bytes(n.as_bytes()).unwrap(),
            v.parse().unwrap(),
        );
    }
    response
}

/// One SSE event carrying `data` (a JSON text), with an id.
pub fn event(id: &str, data: &Value) -> String {
    format!("id: {id}\ndata: {data}\n\n")
}

/// rmcp's priming event: empty data, an id and a retry.
pub const PRIMING: &str = "data: \nid: 0/0\nretry: 3000\n\n";

pub fn progress(token: &Value, progress: f64, message: &str) -> Value {
    serde_json::json!({"jsonrpc": "2.0", "method": "notifications/progress",
        "params": {"progressToken": token, "progress": progress, "message": message}})
}

pub fn result_for(id_json: &str, result: Value) -> Value {
    serde_json::json!({"jsonrpc": "2.0", "id": serde_json::from_str::<Value>(id_json).unwrap(), "result": result})
}

/// A fixture that behaves like a minimal session-era MCP server for `initialize` and
/// `notifications/initialized`, delegating every other request to `rest`.
pub async fn mcp_fixture(rest: impl Fn(&Captured) -> Reply + Send + Sync + 'static) -> Fixture {
    Fixture::start(move |req| match req.rpc_method().as_deref() {
        Some("initialize") => Reply::sse(vec![
            PRIMING.to_owned(),
            event(
                "1/0",
                &result_for(
                    &req.id(),
                    serde_json::json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                        "serverInfo": {"name": "fixture", "version": "0"}}),
                ),
            ),
        ])
        .header("mcp-session-id", "sess-1"),
        Some("notifications/initialized") => Reply::status(202, "text/plain", ""),
        _ => rest(req),
    })
    .await
}
