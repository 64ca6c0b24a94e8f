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
mod connection;
pub mod daedalus;
pub mod evidence;
pub mod http;
pub mod limits;
pub mod metrics;
pub mod observe;
pub mod reasons;
pub mod registry;
pub mod sse;
mod wire;

use std::str::FromStr;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

pub use crate::compact::{JsonDoc, JsonRef};

pub use cli::{ClientCommand, run_client};
pub use connection::McpConnection;
pub use daedalus::{
    ChatGate, HealthParseError, HealthReport, chat_gate, display_title, first_icon, parse_health,
    server_id, streamable_http_url,
};
pub use limits::{LimitOverrides, ReadLimits};
pub use metrics::{MetricFamily, MetricsScrape, Sample, parse_prometheus_text, scrape_metrics};
pub use observe::{
    HttpExchange, REDACTED, Recorder, SseEventRecord, WireEvent, WireEventKind, redact_header,
    redact_headers,
};
pub use registry::{RegistryFetch, fetch_registry, registry_document_url};
pub use sse::{SseDecoder, SseEvent};
pub use wire::{RawRequest, WireClient};

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
    /// The answer passed a read limit of the harness; reading stopped there.
    #[error("answer exceeded {} MiB: {what} from {url} passed the harness's limit of {limit} bytes (reading stopped at {read} bytes)", limits::mib_text(*limit))]
    TooLarge {
        /// Request URL.
        url: String,
        /// What passed the limit (`the body`, `one SSE event`…).
        what: String,
        /// The limit, in bytes.
        limit: u64,
        /// Bytes read when reading stopped.
        read: u64,
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

/// A received JSON-RPC message, parsed once into a compact document and shared: the recorder,
/// the exchange's messages and its response hold the same copy (a 26 MB answer is held once,
/// at about its own size).
pub type SharedMessage = std::sync::Arc<crate::compact::JsonDoc>;

/// A received JSON-RPC message with its arrival time (ms since the recorder's clock started: in
/// a scenario run, when its steps began).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimedMessage {
    /// Arrival time, milliseconds since the recorder's clock started.
    pub at_ms: f64,
    /// The message.
    pub message: SharedMessage,
    /// The SSE event id that carried it, if any.
    pub sse_event_id: Option<String>,
}

impl TimedMessage {
    /// The `method` of a notification or request, if it is one.
    pub fn method(&self) -> Option<&str> {
        self.message.get("method").and_then(JsonRef::as_str)
    }

    /// The `params` of a notification or request.
    pub fn params(&self) -> Option<JsonRef<'_>> {
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
    pub response: Option<SharedMessage>,
    /// A body that was neither SSE nor valid JSON.
    pub body_text: Option<String>,
    /// Bytes of the body read (0: the answer had no body, or none was read before the deadline).
    pub body_bytes: u64,
    /// The deadline passed before the response arrived.
    pub timed_out: bool,
    /// Why no usable response was read, when the cause is known: an unreadable body (not
    /// UTF-8, not JSON, nested too deep), a connection cut short, an answer to an id that
    /// matches no request.
    pub problem: Option<String>,
    /// An SSE answer: the server ended the stream (its end was read) after the response,
    /// within the time the client reads on after it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stream_ended: bool,
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
            body_bytes: 0,
            timed_out: true,
            problem: None,
            stream_ended: false,
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
    pub fn result(&self) -> Option<JsonRef<'_>> {
        self.response.as_ref().and_then(|r| r.get("result"))
    }

    /// The `error` of the response.
    pub fn error(&self) -> Option<JsonRef<'_>> {
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
        let position = self.messages.iter().position(|m| {
            self.response
                .as_ref()
                .is_some_and(|r| std::sync::Arc::ptr_eq(r, &m.message) || **r == *m.message)
        });
        self.messages
            .iter()
            .skip(position.map_or(self.messages.len(), |p| p + 1))
    }
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
    use super::connection::{merge_headers, with_progress_token};
    use super::*;
    use serde_json::json;

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
