//! The `http:` step: one HTTP request of any method to an API beside MCP (mcpd's REST API, an
//! SSE chat stream, a mock's journal), its body read as JSON or as SSE `data:` events.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `http:` step. Exactly one of `url` or `agent` (+ `path`) says where the request goes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpStep {
    /// HTTP method (default `GET`).
    #[serde(default = "default_method")]
    pub method: String,
    /// Full URL (templated, e.g. `{{mocks.openai.url}}/../__mock/journal`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// An agent of the deployment: `path` is resolved against the origin (scheme, host and port)
    /// of its endpoint URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Path (with query) on the agent's origin, e.g. `/api/v1/agents`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Request headers.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// `Authorization: Bearer …` (a secret).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer: Option<String>,
    /// A JSON body (sent with `Content-Type: application/json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json: Option<Value>,
    /// A raw body, sent verbatim (malformed requests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
}

fn default_method() -> String {
    "GET".to_owned()
}
