//! What a step observed, typed by action. The runner records one [`Observation`] per step and
//! the checks match on it; its JSON face ([`Observation::to_json`], in `json.rs`) is the step
//! output that `output:` assertions, `capture:` and `until:` query and that reports show.

use std::time::Duration;

use super::output::{FileRead, ProcessOutput};
use crate::client::http::HttpAnswer;
use crate::client::{Exchange, HealthReport, JsonRef, MetricsScrape, RegistryFetch};

/// What one step observed.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Observation {
    /// Nothing: the step could not run (its error says why), or ran into its deadline.
    #[default]
    Nothing,
    /// `registry:` the registry document as fetched.
    RegistryFetched(RegistryFetch),
    /// `connect:` the `initialize` exchange and the session it opened.
    Connected(Connected),
    /// `list_tools:`, `call:`, `history:`, `request:`, `raw:`, `delete:` one MCP exchange.
    Exchanged(Exchange),
    /// `health:` the `get_health` call and how Daedalus reads its answer.
    HealthAnswered(HealthAnswered),
    /// `send:` the message tool's call, and its cancellation when the step asked for one.
    MessageSent(MessageSent),
    /// `metrics:` the scraped exposition.
    MetricsScraped(MetricsScrape),
    /// `http:` one plain HTTP request's answer.
    HttpAnswered(HttpAnswer),
    /// `process:` the implementation's exit state and output so far.
    ProcessRead(ProcessOutput),
    /// `file:` a file the implementation wrote.
    FileRead(FileRead),
    /// `wait:` the pause taken.
    Waited(Duration),
    /// `reload:` the files rewritten for the new deployment.
    Reloaded(Vec<String>),
}

/// The `initialize` exchange of a `connect:` step.
#[derive(Debug, Clone, PartialEq)]
pub struct Connected {
    /// The `initialize` exchange.
    pub exchange: Exchange,
    /// The `Mcp-Session-Id` the server issued, if any.
    pub session_id: Option<String>,
    /// The negotiated protocol revision.
    pub protocol_version: String,
    /// The wire era the client spoke.
    pub era: &'static str,
    /// The answer to the `notifications/initialized` the handshake POSTed (2025-11-25; `None`
    /// in the 2026-07-28 era).
    pub initialized: Option<Exchange>,
}

/// A `get_health` call.
#[derive(Debug, Clone, PartialEq)]
pub struct HealthAnswered {
    /// The call's exchange (none when the request could not be made).
    pub exchange: Option<Exchange>,
    /// The answer read as a health report, or why it is not one. The reason is a `String` on
    /// purpose: it is itself what the step observed (shown as the step's output and judged by
    /// the checks as written), whichever way the call went wrong.
    pub health: Result<HealthReport, String>,
    /// How Daedalus gates chat on it: `allowed`, `warning: …` or `blocked: …`.
    pub gate: String,
}

/// A message-tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageSent {
    /// The call's exchange (none when the request could not be made).
    pub exchange: Option<Exchange>,
    /// Present when the step cancels the call after some progress: when the cancellation was
    /// sent (ms on the recorder's clock), if it was.
    pub cancellation: Option<Option<f64>>,
    /// When the step closed the call's response stream after some progress (ms on the
    /// recorder's clock); the exchange is then `None`.
    pub dropped: Option<f64>,
    /// The answer read with the profile's `reply_path` from the result's text block, or why it
    /// could not be read there (the text is not JSON, the path selects no single string). `None`
    /// when the profile sets no `reply_path`, or the call brought no text result to read it in
    /// (no result, an `isError` result, no text block): the text block is then read as written.
    pub reply: Option<Result<String, ReplyError>>,
}

impl MessageSent {
    /// A message-tool call as observed, its answer read with `reply_path` when there is one.
    pub fn new(
        exchange: Option<Exchange>,
        cancellation: Option<Option<f64>>,
        reply_path: Option<&serde_json_path::JsonPath>,
    ) -> Self {
        let reply = reply_path.and_then(|p| exchange.as_ref().and_then(|x| read_reply(x, p)));
        Self {
            exchange,
            cancellation,
            dropped: None,
            reply,
        }
    }
}

/// Why a message-tool call's answer could not be read where the profile's `reply_path` says.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReplyError {
    /// The text block is not JSON.
    #[error("the text is not the JSON document `reply_path` reads ({0})")]
    NotJson(String),
    /// The path selects nothing in it.
    #[error("`reply_path` {path} selects nothing in the text's JSON")]
    Nothing {
        /// The profile's `reply_path`.
        path: String,
    },
    /// The path selects one value that is not a string.
    #[error("`reply_path` {path} selects {kind}, not a string")]
    NotAString {
        /// The profile's `reply_path`.
        path: String,
        /// What it selects (`a number`, `an object`…).
        kind: &'static str,
    },
    /// The path selects several values.
    #[error("`reply_path` {path} selects {count} values, not one string")]
    Several {
        /// The profile's `reply_path`.
        path: String,
        /// How many.
        count: usize,
    },
}

/// The answer `path` selects in the JSON document the exchange's text result carries: `None`
/// when there is no such result to read (no result, `isError: true`, no text block).
fn read_reply(
    x: &Exchange,
    path: &serde_json_path::JsonPath,
) -> Option<Result<String, ReplyError>> {
    let result = x.result()?;
    if result.get("isError").and_then(JsonRef::as_bool) == Some(true) {
        return None;
    }
    let text = first_text(x)?;
    let doc: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return Some(Err(ReplyError::NotJson(e.to_string()))),
    };
    let nodes = path.query(&doc).all();
    let path = path.to_string();
    Some(match nodes.as_slice() {
        [serde_json::Value::String(answer)] => Ok(answer.clone()),
        [] => Err(ReplyError::Nothing { path }),
        [other] => Err(ReplyError::NotAString {
            path,
            kind: kind(other),
        }),
        many => Err(ReplyError::Several {
            path,
            count: many.len(),
        }),
    })
}

fn kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

impl Observation {
    /// The MCP exchange the step made, if it made one.
    pub fn exchange(&self) -> Option<&Exchange> {
        match self {
            Self::Exchanged(x) => Some(x),
            Self::Connected(c) => Some(&c.exchange),
            Self::HealthAnswered(h) => h.exchange.as_ref(),
            Self::MessageSent(m) => m.exchange.as_ref(),
            _ => None,
        }
    }

    /// The HTTP status of the answer (0 when there was none).
    pub fn status(&self) -> u16 {
        match self {
            Self::RegistryFetched(f) => f.status,
            Self::MetricsScraped(m) => m.status,
            Self::HttpAnswered(h) => h.status,
            other => other.exchange().map_or(0, |x| x.status),
        }
    }

    /// The answer's `Content-Type`, if any.
    pub fn content_type(&self) -> Option<&str> {
        match self {
            Self::RegistryFetched(f) => f.content_type.as_deref(),
            Self::MetricsScraped(m) => m.content_type.as_deref(),
            Self::HttpAnswered(h) => Some(h.content_type.as_str()),
            other => other.exchange().and_then(|x| x.content_type.as_deref()),
        }
    }

    /// The JSON-RPC `result` of the MCP exchange.
    pub fn result(&self) -> Option<JsonRef<'_>> {
        self.exchange().and_then(Exchange::result)
    }

    /// The JSON-RPC `error` of the MCP exchange.
    pub fn jsonrpc_error(&self) -> Option<JsonRef<'_>> {
        self.exchange()
            .and_then(Exchange::error)
            .filter(|e| !e.is_null())
    }

    /// The answer text: the first text block of a tool result, or, for a message-tool call
    /// whose profile sets `reply_path`, the answer read there (`None` when it could not be:
    /// [`Observation::reply_error`] says why).
    pub fn text(&self) -> Option<&str> {
        match self {
            Self::MessageSent(MessageSent { reply: Some(r), .. }) => r.as_deref().ok(),
            _ => self.exchange().and_then(first_text),
        }
    }

    /// Why a message-tool call's answer could not be read with the profile's `reply_path`.
    pub fn reply_error(&self) -> Option<&ReplyError> {
        match self {
            Self::MessageSent(MessageSent {
                reply: Some(Err(e)),
                ..
            }) => Some(e),
            _ => None,
        }
    }

    /// The `notifications/progress` messages received during the exchange.
    pub fn progress(&self) -> Vec<JsonRef<'_>> {
        self.exchange()
            .into_iter()
            .flat_map(Exchange::progress)
            .map(|m| m.message.root())
            .collect()
    }

    /// The health report of a `get_health` answer that is one.
    pub fn health(&self) -> Option<&HealthReport> {
        match self {
            Self::HealthAnswered(h) => h.health.as_ref().ok(),
            _ => None,
        }
    }

    /// When a cancelled call's cancellation was sent.
    pub fn cancelled_at_ms(&self) -> Option<f64> {
        match self {
            Self::MessageSent(m) => m.cancellation.flatten(),
            _ => None,
        }
    }
}

/// The first `text` content block of the exchange's tool result.
pub(super) fn first_text(x: &Exchange) -> Option<&str> {
    x.result()?
        .get("content")?
        .as_array()?
        .iter()
        .find(|b| b.get("type").and_then(JsonRef::as_str) == Some("text"))?
        .get("text")?
        .as_str()
}
