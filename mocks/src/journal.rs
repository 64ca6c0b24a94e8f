//! What the mocks received: one entry per HTTP request, readable from Rust and as JSON over HTTP
//! (`GET /__mock/journal`, cleared by `POST /__mock/reset`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One request received by a mock LLM provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmJournalEntry {
    /// When the request arrived (RFC 3339, UTC, microseconds).
    pub time: String,
    /// HTTP method.
    pub method: String,
    /// Request path (with query string, if any).
    pub path: String,
    /// Request headers, names lower-cased; repeated headers joined with `, `.
    pub headers: BTreeMap<String, String>,
    /// JSON body, when the body parsed as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    /// Model named by the request (body `model` or the `/models/{id}` path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Index in the script of the turn that answered, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched_turn: Option<usize>,
    /// HTTP status answered (absent when the mock hung or disconnected before a status).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// When the client gave up a request the mock held unanswered (a `hang` fault) by closing
    /// its connection (RFC 3339, UTC, microseconds): with `time`, how long the client waited,
    /// e.g. its timeout. Absent for an answered request and for one still held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abandoned: Option<String>,
}

/// One HTTP request received by a mock MCP server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpJournalEntry {
    /// When the request arrived (RFC 3339, UTC, microseconds).
    pub time: String,
    /// HTTP method (`POST`, `GET`, `DELETE`).
    pub method: String,
    /// Request headers, names lower-cased (`authorization` included).
    pub headers: BTreeMap<String, String>,
    /// JSON-RPC method of the body (`initialize`, `tools/call`…), when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jsonrpc_method: Option<String>,
    /// Tool name, for `tools/call`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Tool arguments, for `tools/call`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// `Mcp-Session-Id` the request carried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// HTTP status answered (absent when the mock hung).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The `Mcp-Session-Id` the answer gave (an `initialize` that opened a session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opened_session: Option<String>,
}

impl McpJournalEntry {
    /// The `Authorization` header, if the request carried one.
    pub fn authorization(&self) -> Option<&str> {
        self.headers.get("authorization").map(String::as_str)
    }
}

/// One HTTP request received by a mock Pallas (its registry or one of its agents).
///
/// Credentials never appear: `authorization`, `proxy-authorization` and `x-api-key` hold the
/// value's fingerprint (`Bearer [redacted:1a2b3c4d]`, the first 8 hex digits of the SHA-256 of
/// the token), as the conformance kit's reports show them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PallasJournalEntry {
    /// When the request arrived (RFC 3339, UTC, microseconds).
    pub time: String,
    /// The agent (its key) the request reached; absent for the registry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// HTTP method.
    pub method: String,
    /// Request path (with query string, if any).
    pub path: String,
    /// Request headers, names lower-cased, credentials fingerprinted.
    pub headers: BTreeMap<String, String>,
    /// JSON-RPC method of the body, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jsonrpc_method: Option<String>,
    /// `params._meta.progressToken`, when the request carried one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_token: Option<Value>,
    /// Tool name, for `tools/call`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Tool arguments, for `tools/call`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// `Mcp-Session-Id` the request carried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// HTTP status answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The scripted fault that answered instead of the agent (`http_error`, `session_expired`,
    /// `drop_stream`, `unauthorized`, `registry_status`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
    /// `Mcp-Session-Id` of the answer (an `initialize` that opened a session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_session_id: Option<String>,
    /// When the answer ended (RFC 3339, UTC, microseconds): a `tools/call`'s SSE stream at its
    /// last byte, any other answer when it was sent; absent while a stream is still open or when
    /// the client left before its end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished: Option<String>,
}

/// Session accounting of a mock MCP server (2025-11-25 era).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionStats {
    /// Sessions created by `initialize`.
    pub opened: u64,
    /// Sessions ended by `DELETE`.
    pub deleted: u64,
    /// Sessions open now (`opened - deleted`; a session the server drops after 5 minutes idle
    /// still counts as open, as it was never closed by its client).
    pub open_now: u64,
}
