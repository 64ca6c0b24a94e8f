//! A small Streamable HTTP endpoint for the pack mocks: one JSON-RPC request per POST, answered
//! with one `application/json` body (as Percolate's FastMCP endpoint does), optional sessions
//! (`initialize` hands out an `Mcp-Session-Id`, `DELETE` ends it), never a panic on bad input.

use std::collections::HashSet;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::response::{IntoResponse, Response};
use futures::future::BoxFuture;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use serde_json::{Value, json};

/// JSON-RPC error codes (JSON-RPC 2.0 and the packs' custom ones).
pub(crate) mod code {
    pub const PARSE: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL: i64 = -32603;
}

/// A JSON-RPC error answer.
#[derive(Debug, Clone)]
pub(crate) struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub(crate) fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub(crate) fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    fn to_json(&self) -> Value {
        let mut e = json!({"code": self.code, "message": self.message});
        if let Some(d) = &self.data {
            e["data"] = d.clone();
        }
        e
    }
}

/// One request as the pack sees it.
#[derive(Debug, Clone)]
pub(crate) struct RpcCall {
    /// The path scope (mcpctl: the project of the session; empty otherwise).
    pub scope: String,
    pub method: String,
    pub params: Value,
    pub headers: HeaderMap,
}

/// What a pack serves over the endpoint. `initialize`, `ping` and notifications are answered by
/// the endpoint itself.
pub(crate) trait McpHandler: Send + Sync + 'static {
    /// `serverInfo.name` for a scope; `None` when nothing is served there (404).
    fn server_name(&self, scope: &str) -> Option<String>;
    /// `capabilities` of the `initialize` result.
    fn capabilities(&self) -> Value;
    /// The code answering a body that is not JSON (a defect may change it).
    fn parse_error_code(&self) -> i64 {
        code::PARSE
    }
    /// Every other method.
    fn handle(self: Arc<Self>, call: RpcCall) -> BoxFuture<'static, Result<Value, RpcError>>;
}

/// Sessions handed out by `initialize`.
#[derive(Debug, Default)]
pub(crate) struct Sessions(Mutex<HashSet<String>>);

impl Sessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A random hex id (32 digits).
pub(crate) fn random_id() -> String {
    let s = std::collections::hash_map::RandomState::new();
    let mut a = s.build_hasher();
    a.write_u64(1);
    let mut b = s.build_hasher();
    b.write_u64(2);
    format!("{:016x}{:016x}", a.finish(), b.finish())
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut r = (status, body.to_string()).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

fn error_body(id: Value, e: &RpcError) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": e.to_json()})
}

/// `POST` on the endpoint.
pub(crate) async fn post<H: McpHandler>(
    handler: Arc<H>,
    sessions: &Sessions,
    scope: String,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(server_name) = handler.server_name(&scope) else {
        return json_response(
            StatusCode::NOT_FOUND,
            &json!({"error": format!("no MCP server `{scope}` here")}),
        );
    };
    let msg: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            let err = RpcError::new(handler.parse_error_code(), "Parse error")
                .with_data(json!({"details": e.to_string()}));
            return json_response(StatusCode::BAD_REQUEST, &error_body(Value::Null, &err));
        }
    };
    let id = msg.get("id").cloned();
    let method = msg.get("method").and_then(Value::as_str).map(str::to_owned);
    let (Some(method), true) = (method, msg.get("jsonrpc") == Some(&json!("2.0"))) else {
        let err = RpcError::new(code::INVALID_REQUEST, "Invalid request")
            .with_data(json!({"details": "expected a JSON-RPC 2.0 request object with a method"}));
        return json_response(
            StatusCode::BAD_REQUEST,
            &error_body(id.unwrap_or(Value::Null), &err),
        );
    };
    let session = headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if let Some(s) = &session
        && method != "initialize"
        && !sessions.lock().contains(s)
    {
        return json_response(
            StatusCode::NOT_FOUND,
            &error_body(
                id.unwrap_or(Value::Null),
                &RpcError::new(code::INVALID_REQUEST, "Session not found"),
            ),
        );
    }
    let Some(id) = id else {
        // A notification: accepted, nothing to answer.
        return StatusCode::ACCEPTED.into_response();
    };
    let params = msg.get("params").cloned().unwrap_or_else(|| json!({}));
    match method.as_str() {
        "initialize" => {
            let version = params
                .get("protocolVersion")
                .and_then(Value::as_str)
                .filter(|v| ["2025-03-26", "2025-06-18", "2025-11-25"].contains(v))
                .unwrap_or("2025-11-25")
                .to_owned();
            let result = json!({
                "protocolVersion": version,
                "capabilities": handler.capabilities(),
                "serverInfo": {"name": server_name, "version": env!("CARGO_PKG_VERSION")},
            });
            let sid = random_id();
            sessions.lock().insert(sid.clone());
            let mut r = json_response(
                StatusCode::OK,
                &json!({"jsonrpc": "2.0", "id": id, "result": result}),
            );
            if let Ok(v) = HeaderValue::from_str(&sid) {
                r.headers_mut().insert("mcp-session-id", v);
            }
            r
        }
        "ping" => json_response(
            StatusCode::OK,
            &json!({"jsonrpc": "2.0", "id": id, "result": {}}),
        ),
        _ => {
            let call = RpcCall {
                scope,
                method,
                params,
                headers,
            };
            match handler.handle(call).await {
                Ok(result) => json_response(
                    StatusCode::OK,
                    &json!({"jsonrpc": "2.0", "id": id, "result": result}),
                ),
                Err(e) => json_response(StatusCode::OK, &error_body(id, &e)),
            }
        }
    }
}

/// `DELETE` on the endpoint: ends the session.
pub(crate) fn delete(sessions: &Sessions, headers: &HeaderMap) -> Response {
    let sid = headers.get("mcp-session-id").and_then(|v| v.to_str().ok());
    match sid {
        Some(s) if sessions.lock().remove(s) => StatusCode::OK.into_response(),
        Some(_) => StatusCode::NOT_FOUND.into_response(),
        None => StatusCode::BAD_REQUEST.into_response(),
    }
}

/// A tool result holding one text block of JSON.
pub(crate) fn json_text_result(value: &Value, is_error: bool) -> Value {
    let mut r = json!({"content": [{"type": "text", "text": value.to_string()}]});
    if is_error {
        r["isError"] = json!(true);
    }
    r
}

/// A tool result holding one text block.
pub(crate) fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

/// `tools/call` params split into name and arguments (`{}` when absent).
pub(crate) fn tool_call(
    params: &Value,
) -> Result<(String, serde_json::Map<String, Value>), RpcError> {
    let name = params.get("name").and_then(Value::as_str).ok_or_else(|| {
        RpcError::new(
            code::INVALID_PARAMS,
            "Invalid params: tool name is required",
        )
    })?;
    let args = match params.get("arguments") {
        None | Some(Value::Null) => serde_json::Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => {
            return Err(RpcError::new(
                code::INVALID_PARAMS,
                "Invalid params: arguments must be an object",
            ));
        }
    };
    Ok((name.to_owned(), args))
}
