//! Degenerate stand-ins for a pack mock (test support): servers that hold no state and run no
//! agent, so that no pack check may pass against them unless its premise holds. Chosen with
//! [`DEGENERATE_ENV`] (`do-nothing`, `echo`, `reject-all`); the MCP endpoint answers
//! `initialize` at every path, everything else is answered by the mode:
//!
//! - `do-nothing`: every request succeeds with nothing (`{}` results, empty lists, an empty
//!   tool result; `200 {}` on any other HTTP request);
//! - `echo`: every tool call answers its own arguments as one JSON text block, every other
//!   request its params (`200` with the request's body on HTTP);
//! - `reject-all`: every request is refused (`-32602` on MCP, `403` on HTTP).

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use futures::future::BoxFuture;
use http::{HeaderMap, Method, StatusCode, header};
use serde_json::{Value, json};

use super::jsonrpc::{self, McpHandler, RpcCall, RpcError, Sessions, code};

/// Environment variable turning every pack `pallas-mocks up` starts into a degenerate stand-in.
pub const DEGENERATE_ENV: &str = "PALLAS_MOCK_DEGENERATE";

/// The degenerate modes, with what they do.
pub const MODES: &[(&str, &str)] = &[
    ("do-nothing", "every request succeeds with nothing"),
    ("echo", "every call answers its own arguments"),
    ("reject-all", "every request is refused"),
];

struct Degenerate {
    mode: String,
    sessions: Sessions,
}

impl McpHandler for Degenerate {
    fn server_name(&self, scope: &str) -> Option<String> {
        Some(if scope.is_empty() {
            "degenerate".to_owned()
        } else {
            scope.to_owned()
        })
    }

    fn capabilities(&self) -> Value {
        json!({"tools": {}, "resources": {}})
    }

    fn handle(self: Arc<Self>, call: RpcCall) -> BoxFuture<'static, Result<Value, RpcError>> {
        Box::pin(async move {
            match (self.mode.as_str(), call.method.as_str()) {
                ("reject-all", _) => Err(RpcError::new(code::INVALID_PARAMS, "Invalid params")),
                (_, "tools/list") => Ok(json!({"tools": []})),
                (_, "resources/list") => Ok(json!({"resources": []})),
                ("echo", "tools/call") => {
                    let args = call.params.get("arguments").cloned().unwrap_or(json!({}));
                    Ok(jsonrpc::json_text_result(&args, false))
                }
                ("echo", _) => Ok(call.params),
                (_, "tools/call") => Ok(json!({"content": []})),
                _ => Ok(json!({})),
            }
        })
    }
}

/// The stand-in's routes: every path, every method.
pub(crate) fn router(mode: &str) -> Result<Router, String> {
    if !MODES.iter().any(|(m, _)| *m == mode) {
        return Err(format!("unknown degenerate mode `{mode}`"));
    }
    let d = Arc::new(Degenerate {
        mode: mode.to_owned(),
        sessions: Sessions::default(),
    });
    Ok(Router::new().fallback(any).with_state(d))
}

fn is_jsonrpc(body: &[u8]) -> bool {
    serde_json::from_slice::<Value>(body)
        .ok()
        .is_some_and(|v| v.get("jsonrpc").is_some())
}

async fn any(State(d): State<Arc<Degenerate>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let headers: HeaderMap = parts.headers;
    let body: Bytes = match axum::body::to_bytes(body, 1 << 20).await {
        Ok(b) => b,
        Err(_) => Bytes::new(),
    };
    if parts.method == Method::POST && is_jsonrpc(&body) {
        let path = parts.uri.path().trim_start_matches('/');
        let scope = path
            .strip_prefix("mcp")
            .unwrap_or(path)
            .trim_start_matches('/')
            .to_owned();
        return jsonrpc::post(d.clone(), &d.sessions, scope, headers, body).await;
    }
    if parts.method == Method::DELETE && headers.contains_key("mcp-session-id") {
        return jsonrpc::delete(&d.sessions, &headers);
    }
    let (status, text) = match d.mode.as_str() {
        "reject-all" => (
            StatusCode::FORBIDDEN,
            json!({"error": "forbidden"}).to_string(),
        ),
        "echo" if !body.is_empty() => (StatusCode::OK, String::from_utf8_lossy(&body).into_owned()),
        _ => (StatusCode::OK, "{}".to_owned()),
    };
    let mut r = (status, text).into_response();
    if let Ok(v) = http::HeaderValue::from_str("application/json") {
        r.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    r
}
