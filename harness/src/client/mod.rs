//! The scripted Daedalus client on the raw wire: JSON-RPC over Streamable HTTP with its own SSE
//! reader, so the harness sees exactly what an implementation sent, in order.
//!
//! rmcp's client is deliberately not used: it rewrites `_meta.progressToken` and delivers
//! progress callbacks from spawned tasks. Every HTTP exchange, SSE event and JSON-RPC message
//! goes through a shared [`Recorder`] (secrets redacted).
//!
//! ```no_run
//! # async fn demo() -> Result<(), pallas_conformance::client::ClientError> {
//! use pallas_conformance::client::{CallOptions, Era, McpConnection, Recorder, WireClient};
//! use std::time::Duration;
//! let client = WireClient::new(Recorder::new(), Duration::from_secs(10))?;
//! let opts = CallOptions::default();
//! let (conn, _init) =
//!     McpConnection::connect(&client, "harper", "http://127.0.0.1:24101/mcp", Era::V2025_11_25, &opts).await?;
//! let call = conn
//!     .call_tool("send_message", serde_json::json!({"message": "hi"}),
//!         &CallOptions { progress_token: Some("tok-1".into()), ..CallOptions::default() })
//!     .await?;
//! for progress in call.notifications() { println!("{}", progress.message); }
//! # Ok(()) }
//! ```

pub mod cli;
pub mod daedalus;
pub mod metrics;
pub mod observe;
pub mod registry;
pub mod sse;

use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::StreamExt;
use serde::Serialize;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc::UnboundedSender;

pub use cli::{ClientCommand, run_client};
pub use daedalus::{
    ChatGate, HealthParseError, HealthReport, chat_gate, display_title, first_icon, parse_health,
    server_id, streamable_http_url,
};
pub use metrics::{MetricFamily, MetricsScrape, Sample, parse_prometheus_text, scrape_metrics};
pub use observe::{
    HttpExchange, Observation, ObservationKind, REDACTED, Recorder, SseEventRecord, redact_header,
    redact_headers,
};
pub use registry::{RegistryFetch, fetch_registry, registry_document_url};
pub use sse::{SseDecoder, SseEvent};

/// The client's name in `clientInfo`.
pub const CLIENT_NAME: &str = "pallas-conformance";
/// The `Accept` header every MCP POST carries unless a call overrides it.
pub const MCP_ACCEPT: &str = "application/json, text/event-stream";
/// How long a stream is still read after the response arrived, to catch late messages
/// (a progress notification after the result breaks the contract).
pub const DEFAULT_AFTER_RESPONSE_GRACE: Duration = Duration::from_millis(250);

/// Why the client could not complete an exchange. HTTP error statuses and JSON-RPC errors are
/// not client errors: they come back in an [`Exchange`] for the checks to judge.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClientError {
    /// The HTTP client could not be built.
    #[error("could not build the HTTP client: {0}")]
    Build(String),
    /// A header name or value is not valid HTTP.
    #[error("invalid header `{name}`: {reason}")]
    InvalidHeader {
        /// Header name.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// Connection refused, reset, DNS failure: no response at all.
    #[error("could not reach {url}: {reason}")]
    Transport {
        /// Request URL.
        url: String,
        /// Transport error text.
        reason: String,
    },
    /// No complete response before the deadline.
    #[error("{url} did not answer within {after_ms} ms")]
    Timeout {
        /// Request URL.
        url: String,
        /// The deadline, in milliseconds.
        after_ms: u64,
    },
    /// `initialize` or `server/discover` did not produce a usable result.
    #[error("handshake with {url} failed (HTTP {status}): {detail}")]
    Handshake {
        /// Endpoint URL.
        url: String,
        /// HTTP status of the handshake response (0 when none).
        status: u16,
        /// What went wrong.
        detail: String,
    },
}

/// Build-once HTTP client plus the shared recorder. Cheap to clone.
#[derive(Debug, Clone)]
pub struct WireClient {
    http: reqwest::Client,
    recorder: Recorder,
    default_timeout: Duration,
    after_response_grace: Duration,
}

impl WireClient {
    /// A client recording into `recorder`; calls without their own timeout use `default_timeout`.
    pub fn new(recorder: Recorder, default_timeout: Duration) -> Result<Self, ClientError> {
        let http = reqwest::Client::builder()
            .no_proxy()
            .connect_timeout(default_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| ClientError::Build(e.to_string()))?;
        Ok(Self {
            http,
            recorder,
            default_timeout,
            after_response_grace: DEFAULT_AFTER_RESPONSE_GRACE,
        })
    }

    /// Changes how long a stream is still read after its response arrived.
    pub fn with_after_response_grace(mut self, grace: Duration) -> Self {
        self.after_response_grace = grace;
        self
    }

    /// The shared recorder.
    pub fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    /// The timeout of calls that set none.
    pub fn default_timeout(&self) -> Duration {
        self.default_timeout
    }

    /// Sends one HTTP request, records it, and reads the response (JSON, SSE or text) until the
    /// JSON-RPC response to `request.response_id` arrived and the stream ended, or the deadline.
    pub async fn send(
        &self,
        label: &str,
        request: RawRequest,
        live: Option<&UnboundedSender<TimedMessage>>,
    ) -> Result<Exchange, ClientError> {
        let timeout = request.timeout.unwrap_or(self.default_timeout);
        let mut builder = self
            .http
            .request(request.method.clone(), request.url.as_str());
        for (name, value) in &request.headers {
            let header_name = reqwest::header::HeaderName::from_str(name).map_err(|e| {
                ClientError::InvalidHeader {
                    name: name.clone(),
                    reason: e.to_string(),
                }
            })?;
            let header_value = reqwest::header::HeaderValue::from_str(value).map_err(|e| {
                ClientError::InvalidHeader {
                    name: name.clone(),
                    reason: e.to_string(),
                }
            })?;
            builder = builder.header(header_name, header_value);
        }
        for (name, value) in &request.headers {
            if let Some(secret) = observe::header_secret(name, value) {
                self.recorder.add_secret(&secret);
            }
        }
        let request_body = request
            .body
            .as_ref()
            .map(|b| String::from_utf8_lossy(b).into_owned());
        if let Some(body) = request.body.clone() {
            builder = builder.body(body);
        }
        if let Some(sent) = &request.sent {
            self.recorder
                .record(label, ObservationKind::Sent(sent.clone()));
        }

        let started = Instant::now();
        let deadline = tokio::time::Instant::from_std(started + timeout);
        let mut http = HttpExchange {
            method: request.method.to_string(),
            url: request.url.clone(),
            request_headers: redact_headers(&request.headers),
            request_body,
            status: None,
            response_headers: Vec::new(),
            content_type: None,
            response_body: None,
            elapsed_ms: 0.0,
            completed_ms: None,
            error: None,
        };
        let response = match tokio::time::timeout_at(deadline, builder.send()).await {
            Err(_) => {
                http.elapsed_ms = ms_since(started);
                http.error = Some(format!("timeout after {} ms", timeout.as_millis()));
                self.recorder.record(label, ObservationKind::Http(http));
                return Ok(Exchange::timed_out(ms_since(started)));
            }
            Ok(Err(e)) => {
                http.elapsed_ms = ms_since(started);
                let reason = error_chain(&e);
                http.error = Some(reason.clone());
                self.recorder.record(label, ObservationKind::Http(http));
                return Err(ClientError::Transport {
                    url: request.url,
                    reason,
                });
            }
            Ok(Ok(response)) => response,
        };

        let status = response.status().as_u16();
        let headers: Vec<(String, String)> = response
            .headers()
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        http.status = Some(status);
        http.response_headers = redact_headers(&headers);
        http.content_type = content_type.clone();
        http.elapsed_ms = ms_since(started);
        let http_seq = self.recorder.record(label, ObservationKind::Http(http));

        let mut exchange = Exchange {
            status,
            headers,
            content_type: content_type.clone(),
            elapsed_ms: 0.0,
            messages: Vec::new(),
            response: None,
            body_text: None,
            timed_out: false,
        };
        let mime = content_type.as_deref().map(|c| {
            c.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        });
        let mut reader = MessageSink {
            recorder: &self.recorder,
            label,
            http_seq,
            response_id: request.response_id.as_ref(),
            live,
            exchange: &mut exchange,
        };
        if mime.as_deref() == Some("text/event-stream") {
            let grace = self.after_response_grace;
            let mut stream = response.bytes_stream();
            let mut decoder = SseDecoder::new();
            let mut read_deadline = deadline;
            loop {
                match tokio::time::timeout_at(read_deadline, stream.next()).await {
                    Err(_) => {
                        if reader.exchange.response.is_none() {
                            reader.exchange.timed_out = true;
                        }
                        break;
                    }
                    Ok(None) => {
                        if let Some(tail) = decoder.finish() {
                            reader.malformed(tail, "stream ended inside an unterminated event");
                        }
                        break;
                    }
                    Ok(Some(Err(e))) => {
                        let reason = error_chain(&e);
                        self.recorder.update_http(http_seq, |h| {
                            h.error = Some(reason);
                        });
                        break;
                    }
                    Ok(Some(Ok(chunk))) => {
                        for event in decoder.push(&chunk) {
                            let had_response = reader.exchange.response.is_some();
                            reader.sse_event(event);
                            if !had_response && reader.exchange.response.is_some() {
                                read_deadline =
                                    read_deadline.min(tokio::time::Instant::now() + grace);
                            }
                        }
                    }
                }
            }
        } else {
            let body = match tokio::time::timeout_at(deadline, response.bytes()).await {
                Err(_) => {
                    reader.exchange.timed_out = true;
                    None
                }
                Ok(Err(e)) => {
                    let reason = error_chain(&e);
                    self.recorder
                        .update_http(http_seq, |h| h.error = Some(reason));
                    None
                }
                Ok(Ok(bytes)) => Some(bytes),
            };
            if let Some(bytes) = body {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                self.recorder
                    .update_http(http_seq, |h| h.response_body = Some(text.clone()));
                let is_json =
                    request.jsonrpc && mime.as_deref().is_some_and(|m| m.ends_with("json"));
                if is_json && !text.trim().is_empty() {
                    match serde_json::from_str::<Value>(&text) {
                        Ok(value) => reader.message(value, None),
                        Err(e) => {
                            reader.malformed(text.clone(), &format!("invalid JSON: {e}"));
                            reader.exchange.body_text = Some(text);
                        }
                    }
                } else if !text.is_empty() {
                    reader.exchange.body_text = Some(text);
                }
            }
        }
        let completed = ms_since(started);
        exchange.elapsed_ms = completed;
        self.recorder
            .update_http(http_seq, |h| h.completed_ms = Some(completed));
        Ok(exchange)
    }

    /// A plain GET with the given headers (used for the registry and `/metrics`).
    pub async fn get(
        &self,
        label: &str,
        url: &str,
        headers: Vec<(String, String)>,
        timeout: Option<Duration>,
    ) -> Result<Exchange, ClientError> {
        self.send(
            label,
            RawRequest {
                method: reqwest::Method::GET,
                url: url.to_owned(),
                headers,
                body: None,
                sent: None,
                response_id: None,
                timeout,
                jsonrpc: false,
            },
            None,
        )
        .await
    }
}

/// One HTTP request as [`WireClient::send`] takes it.
#[derive(Debug, Clone)]
pub struct RawRequest {
    /// HTTP method.
    pub method: reqwest::Method,
    /// URL.
    pub url: String,
    /// Headers, in order (secret values are redacted only in the recording).
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Option<Bytes>,
    /// The JSON-RPC message the body holds, recorded as [`ObservationKind::Sent`].
    pub sent: Option<Value>,
    /// The id whose JSON-RPC response ends the exchange.
    pub response_id: Option<Value>,
    /// Deadline of the whole exchange; the client's default when `None`.
    pub timeout: Option<Duration>,
    /// The response carries JSON-RPC: parse JSON bodies into messages. When false (registry,
    /// metrics) the body stays text in [`Exchange::body_text`].
    pub jsonrpc: bool,
}

struct MessageSink<'a> {
    recorder: &'a Recorder,
    label: &'a str,
    http_seq: u64,
    response_id: Option<&'a Value>,
    live: Option<&'a UnboundedSender<TimedMessage>>,
    exchange: &'a mut Exchange,
}

impl MessageSink<'_> {
    fn sse_event(&mut self, event: SseEvent) {
        self.recorder.record(
            self.label,
            ObservationKind::SseEvent(SseEventRecord {
                http_seq: self.http_seq,
                id: event.id.clone(),
                event: event.event.clone(),
                data: event.data.clone(),
                retry: event.retry,
            }),
        );
        if event.data.trim().is_empty() {
            return; // priming event or keep-alive
        }
        match serde_json::from_str::<Value>(&event.data) {
            Ok(value) => self.message(value, event.id),
            Err(e) => self.malformed(event.data, &format!("invalid JSON in SSE data: {e}")),
        }
    }

    fn message(&mut self, message: Value, sse_event_id: Option<String>) {
        let at_ms = self.recorder.now_ms();
        self.recorder.record(
            self.label,
            ObservationKind::Received {
                message: message.clone(),
                sse_event_id: sse_event_id.clone(),
                http_seq: self.http_seq,
            },
        );
        let is_response = message.get("method").is_none()
            && (message.get("result").is_some() || message.get("error").is_some());
        if is_response
            && self.exchange.response.is_none()
            && self
                .response_id
                .is_some_and(|id| message.get("id") == Some(id))
        {
            self.exchange.response = Some(message.clone());
        }
        let timed = TimedMessage {
            at_ms,
            message,
            sse_event_id,
        };
        if let Some(tx) = self.live {
            // The receiver may have gone; the exchange still records everything.
            let _ = tx.send(timed.clone());
        }
        self.exchange.messages.push(timed);
    }

    fn malformed(&mut self, text: String, reason: &str) {
        self.recorder.record(
            self.label,
            ObservationKind::Malformed {
                http_seq: self.http_seq,
                text,
                reason: reason.to_owned(),
            },
        );
    }
}

fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Per-call options. Build with `CallOptions { bearer: Some(..), ..CallOptions::default() }`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallOptions {
    /// Sent as `Authorization: Bearer <token>`.
    pub bearer: Option<String>,
    /// Put into `params._meta.progressToken` exactly as given (string or number).
    pub progress_token: Option<Value>,
    /// Deadline of the whole exchange; the client's default when `None`.
    pub timeout: Option<Duration>,
    /// Extra headers; one with the same name as a default header replaces it.
    pub headers: Vec<(String, String)>,
    /// The JSON-RPC id to use instead of the connection's next number.
    pub id: Option<Value>,
}

/// The MCP wire era a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
pub enum Era {
    /// `initialize` handshake, `Mcp-Session-Id`, `DELETE`.
    #[serde(rename = "2025-11-25")]
    V2025_11_25,
    /// No sessions: `server/discover` and per-request `_meta`.
    #[serde(rename = "2026-07-28")]
    V2026_07_28,
}

impl Era {
    /// The protocol version string.
    pub fn as_str(self) -> &'static str {
        match self {
            Era::V2025_11_25 => "2025-11-25",
            Era::V2026_07_28 => "2026-07-28",
        }
    }
}

impl std::fmt::Display for Era {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Era {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "2025-11-25" => Ok(Era::V2025_11_25),
            "2026-07-28" => Ok(Era::V2026_07_28),
            other => Err(format!(
                "unknown MCP era `{other}` (expected 2025-11-25 or 2026-07-28)"
            )),
        }
    }
}

/// A received JSON-RPC message with its arrival time (ms since the recorder started).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimedMessage {
    /// Arrival time, milliseconds since the recorder was created.
    pub at_ms: f64,
    /// The message.
    pub message: Value,
    /// The SSE event id that carried it, if any.
    pub sse_event_id: Option<String>,
}

impl TimedMessage {
    /// The `method` of a notification or request, if it is one.
    pub fn method(&self) -> Option<&str> {
        self.message.get("method").and_then(Value::as_str)
    }

    /// The `params` of a notification or request.
    pub fn params(&self) -> Option<&Value> {
        self.message.get("params")
    }
}

/// What one HTTP exchange produced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Exchange {
    /// HTTP status (0 when the request timed out before any response).
    pub status: u16,
    /// Response headers, unredacted (the recorder keeps the redacted copy).
    pub headers: Vec<(String, String)>,
    /// Response `Content-Type`.
    pub content_type: Option<String>,
    /// Milliseconds from sending until the exchange ended.
    pub elapsed_ms: f64,
    /// Every JSON-RPC message received, in arrival order.
    pub messages: Vec<TimedMessage>,
    /// The JSON-RPC response to this request's id.
    pub response: Option<Value>,
    /// A body that was neither SSE nor valid JSON.
    pub body_text: Option<String>,
    /// The deadline passed before the response arrived.
    pub timed_out: bool,
}

impl Exchange {
    fn timed_out(elapsed_ms: f64) -> Self {
        Self {
            status: 0,
            headers: Vec::new(),
            content_type: None,
            elapsed_ms,
            messages: Vec::new(),
            response: None,
            body_text: None,
            timed_out: true,
        }
    }

    /// Received messages that are not the response (notifications and server requests).
    pub fn notifications(&self) -> impl Iterator<Item = &TimedMessage> {
        self.messages
            .iter()
            .filter(|m| m.message.get("method").is_some())
    }

    /// `notifications/progress` messages, in arrival order.
    pub fn progress(&self) -> impl Iterator<Item = &TimedMessage> {
        self.notifications()
            .filter(|m| m.method() == Some("notifications/progress"))
    }

    /// The `result` of the response.
    pub fn result(&self) -> Option<&Value> {
        self.response.as_ref().and_then(|r| r.get("result"))
    }

    /// The `error` of the response.
    pub fn error(&self) -> Option<&Value> {
        self.response.as_ref().and_then(|r| r.get("error"))
    }

    /// A response header (case-insensitive name).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Messages received after the response (each one breaks "none after the result").
    pub fn after_response(&self) -> impl Iterator<Item = &TimedMessage> {
        let position = self
            .messages
            .iter()
            .position(|m| Some(&m.message) == self.response.as_ref());
        self.messages
            .iter()
            .skip(position.map_or(self.messages.len(), |p| p + 1))
    }
}

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
                    .and_then(Value::as_str)
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

fn with_progress_token(mut params: Value, opts: &CallOptions) -> Value {
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

/// A header value as SEP-2243 carries it: as is when it is plain visible ASCII without
/// surrounding blanks, else wrapped as `=?base64?…?=`.
pub fn encode_header_value(value: &str) -> String {
    use base64::Engine;
    let needs_base64 = !value.is_empty()
        && (value.starts_with([' ', '\t'])
            || value.ends_with([' ', '\t'])
            || value.chars().any(|c| !(' '..='~').contains(&c))
            || (value.starts_with("=?base64?") && value.ends_with("?=")));
    if needs_base64 {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value)
        )
    } else {
        value.to_owned()
    }
}

/// Replaces headers of the same name (case-insensitive) and appends the others.
fn merge_headers(
    mut base: Vec<(String, String)>,
    extra: &[(String, String)],
) -> Vec<(String, String)> {
    for (name, _) in extra {
        base.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    }
    base.extend(extra.iter().cloned());
    base
}

fn describe_failure(exchange: &Exchange, what: &str) -> String {
    if exchange.timed_out {
        return format!("{what} timed out");
    }
    if let Some(error) = exchange.error() {
        return format!("{what} returned a JSON-RPC error: {error}");
    }
    match &exchange.body_text {
        Some(body) => format!(
            "{what} answered HTTP {} without a result: {}",
            exchange.status,
            excerpt(body)
        ),
        None => format!("{what} answered HTTP {} without a result", exchange.status),
    }
}

/// The first 200 characters of a text, on one line.
pub fn excerpt(text: &str) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    match one_line.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &one_line[..i]),
        None => one_line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_headers_replace_defaults_case_insensitively() {
        let merged = merge_headers(
            vec![
                ("accept".into(), MCP_ACCEPT.into()),
                ("x".into(), "1".into()),
            ],
            &[("Accept".into(), "text/plain".into())],
        );
        assert_eq!(
            merged,
            vec![
                ("x".to_owned(), "1".to_owned()),
                ("Accept".to_owned(), "text/plain".to_owned())
            ]
        );
    }

    #[test]
    fn progress_token_is_inserted_verbatim_beside_existing_meta() {
        let opts = CallOptions {
            progress_token: Some(json!(7)),
            ..CallOptions::default()
        };
        let p = with_progress_token(json!({"name": "t", "_meta": {"k": 1}}), &opts);
        assert_eq!(p["_meta"], json!({"k": 1, "progressToken": 7}));
    }

    #[test]
    fn routing_header_values_are_base64_wrapped_only_when_needed() {
        assert_eq!(encode_header_value("get_health"), "get_health");
        assert_eq!(encode_header_value(" x"), "=?base64?IHg=?=");
        assert_eq!(encode_header_value("é"), "=?base64?w6k=?=");
    }

    #[test]
    fn eras_parse_from_their_version_strings() {
        assert_eq!("2026-07-28".parse::<Era>(), Ok(Era::V2026_07_28));
        assert!("2024-01-01".parse::<Era>().is_err());
    }
}
