//! One MCP connection to an agent endpoint: handshake, session, requests and notifications.

use crate::client::JsonRef;
use bytes::Bytes;
use serde_json::{Map, Value, json};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use tokio::sync::mpsc::UnboundedSender;

use super::*;

#[derive(Debug)]
struct ConnectionInner {
    client: WireClient,
    label: String,
    url: String,
    era: Era,
    session_id: Option<String>,
    protocol_version: String,
    /// The handshake is done: send `MCP-Protocol-Version` on every request.
    handshaken: bool,
    next_id: AtomicU64,
    /// The answer to the handshake's `notifications/initialized` (2025-11-25).
    initialized: OnceLock<Exchange>,
}

/// One connection to one agent endpoint. Cloning shares it, so calls can run concurrently.
#[derive(Debug, Clone)]
pub struct McpConnection(Arc<ConnectionInner>);

impl McpConnection {
    /// Opens a connection: `initialize` + `notifications/initialized` (2025-11-25, keeping the
    /// `Mcp-Session-Id`), or `server/discover` (2026-07-28). Returns the handshake exchange.
    pub async fn connect(
        client: &WireClient,
        label: &str,
        url: &str,
        era: Era,
        opts: &CallOptions,
    ) -> Result<(McpConnection, Exchange), ClientError> {
        let provisional = McpConnection(Arc::new(ConnectionInner {
            client: client.clone(),
            label: label.to_owned(),
            url: url.to_owned(),
            era,
            session_id: None,
            protocol_version: era.as_str().to_owned(),
            handshaken: era == Era::V2026_07_28,
            next_id: AtomicU64::new(0),
            initialized: OnceLock::new(),
        }));
        let handshake_err = |exchange: &Exchange, detail: String| ClientError::Handshake {
            url: url.to_owned(),
            status: exchange.status,
            detail,
        };
        match era {
            Era::V2025_11_25 => {
                let params = json!({
                    "protocolVersion": era.as_str(),
                    "capabilities": {},
                    "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")},
                });
                let init = provisional
                    .request_inner("initialize", params, opts, None, false)
                    .await?;
                let Some(result) = init.result() else {
                    let detail = describe_failure(&init, "initialize");
                    return Err(handshake_err(&init, detail));
                };
                let negotiated = result
                    .get("protocolVersion")
                    .and_then(JsonRef::as_str)
                    .unwrap_or(era.as_str())
                    .to_owned();
                let session_id = init.header("mcp-session-id").map(str::to_owned);
                let conn = McpConnection(Arc::new(ConnectionInner {
                    client: client.clone(),
                    label: label.to_owned(),
                    url: url.to_owned(),
                    era,
                    session_id,
                    protocol_version: negotiated,
                    handshaken: true,
                    next_id: AtomicU64::new(provisional.0.next_id.load(Ordering::SeqCst)),
                    initialized: OnceLock::new(),
                }));
                let ack = conn
                    .notify("notifications/initialized", json!({}), opts)
                    .await?;
                if !(200..300).contains(&ack.status) {
                    let detail = format!(
                        "notifications/initialized answered HTTP {}{}",
                        ack.status,
                        ack.body_text
                            .as_deref()
                            .map(|b| format!(": {}", excerpt(b)))
                            .unwrap_or_default()
                    );
                    return Err(handshake_err(&ack, detail));
                }
                let _ = conn.0.initialized.set(ack);
                Ok((conn, init))
            }
            Era::V2026_07_28 => {
                let discover = provisional
                    .request_inner("server/discover", json!({}), opts, None, true)
                    .await?;
                if discover.result().is_none() {
                    let detail = describe_failure(&discover, "server/discover");
                    return Err(handshake_err(&discover, detail));
                }
                Ok((provisional, discover))
            }
        }
    }

    /// Sends a JSON-RPC request and reads until its response (or the deadline).
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        opts: &CallOptions,
    ) -> Result<Exchange, ClientError> {
        self.request_inner(method, params, opts, None, true).await
    }

    /// Like [`request`](Self::request), also forwarding each received message to `tx` as it
    /// arrives (for live progress output and for cancelling mid-call).
    pub async fn request_streaming(
        &self,
        method: &str,
        params: Value,
        opts: &CallOptions,
        tx: UnboundedSender<TimedMessage>,
    ) -> Result<Exchange, ClientError> {
        self.request_inner(method, params, opts, Some(&tx), true)
            .await
    }

    /// `tools/call`.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        opts: &CallOptions,
    ) -> Result<Exchange, ClientError> {
        self.request(
            "tools/call",
            json!({"name": name, "arguments": arguments}),
            opts,
        )
        .await
    }

    /// `tools/list`.
    pub async fn list_tools(&self, opts: &CallOptions) -> Result<Exchange, ClientError> {
        self.request("tools/list", json!({}), opts).await
    }

    /// `prompts/get` (prompt arguments are strings on the wire).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Value,
        opts: &CallOptions,
    ) -> Result<Exchange, ClientError> {
        let mut params = Map::new();
        params.insert("name".into(), Value::String(name.to_owned()));
        if !arguments.is_null() {
            params.insert("arguments".into(), arguments);
        }
        self.request("prompts/get", Value::Object(params), opts)
            .await
    }

    /// `notifications/cancelled` for an earlier request id.
    pub async fn cancel(
        &self,
        request_id: &Value,
        reason: Option<&str>,
        opts: &CallOptions,
    ) -> Result<Exchange, ClientError> {
        let mut params = json!({"requestId": request_id});
        if let (Some(reason), Some(obj)) = (reason, params.as_object_mut()) {
            obj.insert("reason".into(), Value::String(reason.to_owned()));
        }
        self.notify("notifications/cancelled", params, opts).await
    }

    /// Sends a JSON-RPC notification (expects `202 Accepted`, which the checks judge).
    pub async fn notify(
        &self,
        method: &str,
        params: Value,
        opts: &CallOptions,
    ) -> Result<Exchange, ClientError> {
        let params = self.decorate_params(params, opts);
        let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.post_message(message, None, opts, None).await
    }

    /// `DELETE` of the session (with `Mcp-Session-Id` when the connection has one).
    pub async fn delete(&self, opts: &CallOptions) -> Result<Exchange, ClientError> {
        let mut headers = self.base_headers(opts, true);
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case("content-type"));
        let headers = merge_headers(headers, &opts.headers);
        self.0
            .client
            .send(
                &self.0.label,
                RawRequest {
                    method: reqwest::Method::DELETE,
                    url: self.0.url.clone(),
                    headers,
                    body: None,
                    sent: None,
                    response_id: None,
                    timeout: opts.timeout,
                    jsonrpc: true,
                },
                None,
            )
            .await
    }

    /// `GET` of the endpoint with the session (MCP Streamable HTTP: "Listening for Messages from
    /// the Server"): the standalone SSE stream, read for `duration`. Its end at `duration` is the
    /// step's normal end, not a timeout. A server may answer 405 (it offers no such stream).
    pub async fn listen(
        &self,
        duration: std::time::Duration,
        opts: &CallOptions,
    ) -> Result<Exchange, ClientError> {
        let mut headers = self.base_headers(opts, true);
        headers.retain(|(n, _)| {
            !n.eq_ignore_ascii_case("content-type") && !n.eq_ignore_ascii_case("accept")
        });
        headers.push(("Accept".to_owned(), "text/event-stream".to_owned()));
        let headers = merge_headers(headers, &opts.headers);
        let mut exchange = self
            .0
            .client
            .send(
                &self.0.label,
                RawRequest {
                    method: reqwest::Method::GET,
                    url: self.0.url.clone(),
                    headers,
                    body: None,
                    sent: None,
                    response_id: None,
                    timeout: Some(duration),
                    // JSON-RPC messages come on the stream only: MCP answers this GET with an
                    // SSE stream or 405, so any other body stays text (`body_text`), judged as
                    // the answer it is (MCP-012), not as a message.
                    jsonrpc: false,
                },
                None,
            )
            .await?;
        if exchange.status != 0 {
            // The stream was open: reading it until `duration` is what was asked.
            exchange.timed_out = false;
        }
        Ok(exchange)
    }

    /// POSTs arbitrary bytes (malformed JSON, wrong `Accept`, unknown session). Default headers
    /// (`Content-Type`, `Accept`, protocol version, bearer) are sent unless `headers` or
    /// `opts.headers` replace them; `with_session` adds `Mcp-Session-Id`.
    pub async fn post_raw(
        &self,
        body: Bytes,
        headers: Vec<(String, String)>,
        with_session: bool,
        opts: &CallOptions,
    ) -> Result<Exchange, ClientError> {
        let sent = serde_json::from_slice::<Value>(&body).ok();
        let mut base = self.base_headers(opts, with_session);
        if let Some(message) = &sent {
            base.extend(self.routing_headers(message));
        }
        let headers = merge_headers(merge_headers(base, &headers), &opts.headers);
        let response_id = sent.as_ref().and_then(|v| v.get("id")).cloned();
        self.0
            .client
            .send(
                &self.0.label,
                RawRequest {
                    method: reqwest::Method::POST,
                    url: self.0.url.clone(),
                    headers,
                    body: Some(body),
                    sent,
                    response_id,
                    timeout: opts.timeout,
                    jsonrpc: true,
                },
                None,
            )
            .await
    }

    /// The answer to the handshake's `notifications/initialized` (2025-11-25; `None` in the
    /// 2026-07-28 era, which has no such notification).
    pub fn initialized_ack(&self) -> Option<&Exchange> {
        self.0.initialized.get()
    }

    /// The session id the server assigned, if any.
    pub fn session_id(&self) -> Option<&str> {
        self.0.session_id.as_deref()
    }

    /// The negotiated protocol version.
    pub fn protocol_version(&self) -> &str {
        &self.0.protocol_version
    }

    /// The wire era.
    pub fn era(&self) -> Era {
        self.0.era
    }

    /// The endpoint URL.
    pub fn url(&self) -> &str {
        &self.0.url
    }

    /// The connection label used in recordings.
    pub fn label(&self) -> &str {
        &self.0.label
    }

    /// The client this connection records through.
    pub fn client(&self) -> &WireClient {
        &self.0.client
    }

    /// Takes the next numeric JSON-RPC id (1, 2, 3, …).
    pub fn next_id(&self) -> Value {
        Value::from(self.0.next_id.fetch_add(1, Ordering::SeqCst) + 1)
    }

    async fn request_inner(
        &self,
        method: &str,
        params: Value,
        opts: &CallOptions,
        live: Option<&UnboundedSender<TimedMessage>>,
        initialized: bool,
    ) -> Result<Exchange, ClientError> {
        let id = opts.id.clone().unwrap_or_else(|| self.next_id());
        let params = if initialized {
            self.decorate_params(params, opts)
        } else {
            with_progress_token(params, opts)
        };
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let result = self
            .post_message(message, Some(id.clone()), opts, live)
            .await;
        if matches!(result, Err(ClientError::Timeout { .. }))
            && initialized
            && method != "initialize"
        {
            // The harness gave up waiting: tell the implementation, so the request does not
            // keep running into the next step (MCP: "the sender SHOULD issue a cancellation
            // notification"). Best effort, bounded by its own short timeout.
            let cancel = CallOptions {
                bearer: opts.bearer.clone(),
                timeout: Some(std::time::Duration::from_secs(2)),
                ..CallOptions::default()
            };
            let _ = self
                .cancel(&id, Some("timed out in the conformance client"), &cancel)
                .await;
        }
        result
    }

    async fn post_message(
        &self,
        message: Value,
        response_id: Option<Value>,
        opts: &CallOptions,
        live: Option<&UnboundedSender<TimedMessage>>,
    ) -> Result<Exchange, ClientError> {
        let mut headers = self.base_headers(opts, true);
        headers.extend(self.routing_headers(&message));
        let headers = merge_headers(headers, &opts.headers);
        let body = Bytes::from(message.to_string());
        self.0
            .client
            .send(
                &self.0.label,
                RawRequest {
                    method: reqwest::Method::POST,
                    url: self.0.url.clone(),
                    headers,
                    body: Some(body),
                    sent: Some(message),
                    response_id,
                    timeout: opts.timeout,
                    jsonrpc: true,
                },
                live,
            )
            .await
    }

    fn base_headers(&self, opts: &CallOptions, with_session: bool) -> Vec<(String, String)> {
        let mut headers = vec![
            ("content-type".to_owned(), "application/json".to_owned()),
            ("accept".to_owned(), MCP_ACCEPT.to_owned()),
        ];
        if self.0.handshaken {
            headers.push((
                "mcp-protocol-version".to_owned(),
                self.0.protocol_version.clone(),
            ));
        }
        if with_session && let Some(session) = &self.0.session_id {
            headers.push(("mcp-session-id".to_owned(), session.clone()));
        }
        if let Some(bearer) = &opts.bearer {
            headers.push(("authorization".to_owned(), format!("Bearer {bearer}")));
        }
        headers
    }

    /// The 2026-07-28 routing headers (SEP-2243): `Mcp-Method`, and `Mcp-Name` for methods
    /// addressing a named tool, prompt or resource. None in the session era.
    fn routing_headers(&self, message: &Value) -> Vec<(String, String)> {
        if self.0.era != Era::V2026_07_28 {
            return Vec::new();
        }
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            return Vec::new();
        };
        let mut headers = vec![("mcp-method".to_owned(), method.to_owned())];
        let key = match method {
            "tools/call" | "prompts/get" => Some("name"),
            "resources/read" | "resources/subscribe" | "resources/unsubscribe" => Some("uri"),
            "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
            _ => None,
        };
        if let Some(name) = key
            .and_then(|k| message.get("params")?.get(k))
            .and_then(Value::as_str)
        {
            headers.push(("mcp-name".to_owned(), encode_header_value(name)));
        }
        headers
    }

    /// Adds `_meta.progressToken` and, in the 2026-07-28 era, the per-request lifecycle keys.
    fn decorate_params(&self, params: Value, opts: &CallOptions) -> Value {
        let mut params = with_progress_token(params, opts);
        if self.0.era == Era::V2026_07_28
            && let Some(obj) = params.as_object_mut()
        {
            {
                let meta = obj
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Some(meta) = meta.as_object_mut() {
                    meta.entry("io.modelcontextprotocol/protocolVersion")
                        .or_insert_with(|| Value::String(self.0.protocol_version.clone()));
                    meta.entry("io.modelcontextprotocol/clientCapabilities")
                        .or_insert_with(|| json!({}));
                    meta.entry("io.modelcontextprotocol/clientInfo")
                        .or_insert_with(
                            || json!({"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")}),
                        );
                }
            }
        }
        params
    }
}

pub(super) fn with_progress_token(mut params: Value, opts: &CallOptions) -> Value {
    if let Some(token) = &opts.progress_token {
        if params.is_null() {
            params = Value::Object(Map::new());
        }
        if let Some(obj) = params.as_object_mut() {
            let meta = obj
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert("progressToken".into(), token.clone());
            }
        }
    }
    params
}

/// Replaces headers of the same name (case-insensitive) and appends the others.
pub(super) fn merge_headers(
    mut base: Vec<(String, String)>,
    extra: &[(String, String)],
) -> Vec<(String, String)> {
    for (name, _) in extra {
        base.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    }
    base.extend(extra.iter().cloned());
    base
}

pub(super) fn describe_failure(exchange: &Exchange, what: &str) -> String {
    let base = describe_symptom(exchange, what);
    match &exchange.problem {
        Some(cause) => format!("{base}: {cause}"),
        None => base,
    }
}

fn describe_symptom(exchange: &Exchange, what: &str) -> String {
    if exchange.timed_out {
        return format!("{what} timed out");
    }
    if let Some(error) = exchange.error() {
        return format!("{what} returned a JSON-RPC error: {error}");
    }
    match (&exchange.body_text, &exchange.problem) {
        (Some(body), None) => format!(
            "{what} answered HTTP {} without a result: {}",
            exchange.status,
            excerpt(body)
        ),
        _ => format!("{what} answered HTTP {} without a result", exchange.status),
    }
}
