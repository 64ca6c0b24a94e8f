//! What a scenario run observed: a record per step, every JSON-RPC message received, the mock
//! journals, the implementation's logs. The runner fills it; the checks read it.

use std::borrow::Cow;
use std::collections::BTreeMap;

use pallas_mocks::{LlmJournalEntry, McpJournalEntry, SessionStats};
use serde::Serialize;
use serde_json::Value;

use super::Observation;
use crate::scenario::template::Vars;
use crate::scenario::{ActionKind, DeploymentSpec, StepAction, StepSpec};

/// What one step did: filled by the runner, read by the checks.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StepRecord {
    /// Name (`send#3`, `calls[7]`).
    pub name: String,
    /// Action key.
    pub action: String,
    /// Connection name, if any.
    pub agent: Option<String>,
    /// Milliseconds since the run's recorder started, at the start and end.
    pub started_ms: f64,
    /// End.
    pub ended_ms: f64,
    /// Wall-clock start and end (RFC 3339, to correlate with mock journals).
    pub started_at: String,
    /// End.
    pub ended_at: String,
    /// Duration.
    pub elapsed_ms: f64,
    /// What the step observed, typed by action: what the checks read.
    #[serde(skip)]
    pub observation: Observation,
    /// The observation as JSON without the keys that hold received messages
    /// ([`Observation::to_light_json`]; with `expect_error`, the error as its `error` key).
    /// `output:` assertions and captures query it through [`StepRecord::output_query`], which
    /// reads or builds the message keys a path reaches; reports show
    /// [`StepRecord::output_shown`].
    pub output: Value,
    /// Why the step could not run (a harness or transport error).
    pub error: Option<String>,
    /// The step hit its timeout.
    pub timed_out: bool,
    /// The bearer it sent (raw; redacted in reports).
    #[serde(skip)]
    pub bearer: Option<String>,
    /// The progress token it sent.
    pub progress_token: Option<Value>,
    /// The step as run, templates rendered; kept out of reports (it may hold secrets).
    #[serde(skip)]
    pub spec: StepSpec,
    /// Where the step is written: `file:line` of the step (of its group, for a step inside
    /// `repeat` or `parallel`); empty when unknown.
    #[serde(skip)]
    pub source: String,
}

impl StepRecord {
    /// What the step's MCP exchange observed, in one line for reports (so a reader can see what
    /// a pass judged): the HTTP status and content type, the messages received and how many of
    /// them were progress notifications, and whether the response was a result, an `isError`
    /// result or an error. `None` for a step without an MCP exchange.
    pub fn observed_summary(&self) -> Option<String> {
        let x = self.observation.exchange()?;
        let progress = x
            .messages
            .iter()
            .filter(|m| m.method() == Some("notifications/progress"))
            .count();
        let response = match &x.response {
            None => "no response",
            Some(r) if r.get("error").is_some() => "a JSON-RPC error",
            Some(r) => match r.get("result").and_then(|v| v.get("isError")) {
                Some(e) if e.as_bool() == Some(true) => "an isError result",
                _ => "a result",
            },
        };
        let content_type = x
            .content_type
            .as_deref()
            .map(|c| format!(" {}", c.split(';').next().unwrap_or(c).trim()))
            .unwrap_or_default();
        Some(format!(
            "HTTP {}{content_type}; {} message(s) received, {progress} progress notification(s); {response}",
            x.status,
            x.messages.len()
        ))
    }

    /// The step's action, typed.
    pub fn action(&self) -> Option<StepAction<'_>> {
        self.spec.action()
    }

    /// Whether the step's action is one of `kinds`.
    pub fn is(&self, kinds: &[ActionKind]) -> bool {
        self.action().is_some_and(|a| kinds.contains(&a.kind()))
    }

    /// Where a JSONPath over the step's whole output is evaluated: the root and the path to
    /// query it with (see [`super::json::output_query`]).
    pub fn output_query<'a>(&'a self, path: &'a str) -> (Cow<'a, Value>, Cow<'a, str>) {
        super::json::output_query(&self.output, &self.observation, path)
    }

    /// The one node a plain path selects in a received message, read in place (see
    /// [`super::json::output_node`]); `None` when the path needs [`Self::output_query`].
    pub fn output_node(&self, path: &str) -> Option<crate::client::JsonRef<'_>> {
        super::json::output_node(&self.output, &self.observation, path)
    }

    /// The exchange ended without its JSON-RPC response.
    pub fn response_missing(&self) -> bool {
        self.output.get("response").is_some_and(Value::is_null)
            || self
                .observation
                .exchange()
                .is_some_and(|x| x.response.is_none())
    }

    /// A redacted preview of the step's whole output for a transcript, with its full size
    /// stated when the preview shortened it; a huge answer costs its preview.
    pub fn output_shown(&self, redactor: &crate::redact::Redactor) -> Value {
        let (preview, full) = super::json::output_preview(
            &self.output,
            &self.observation,
            crate::client::evidence::SHOWN_BUDGET,
        );
        crate::client::evidence::shown_preview(&preview, full, redactor)
    }

    /// The rendered action as written in the scenario (`{message, images}`, `{tool,
    /// arguments}`, `{body, headers, with_session}`…), for evidence.
    pub fn request_json(&self) -> Value {
        serde_json::to_value(&self.spec)
            .ok()
            .and_then(|v| v.get(&self.action).cloned())
            .unwrap_or(Value::Null)
    }
}

/// Everything a scenario run observed.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// Steps in completion order.
    pub steps: Vec<StepRecord>,
    /// Journals of the mock MCP servers.
    pub mcp_journals: BTreeMap<String, Vec<McpJournalEntry>>,
    /// Journals of the mock LLMs.
    pub llm_journals: BTreeMap<String, Vec<LlmJournalEntry>>,
    /// Session accounting of the mock MCP servers.
    pub sessions: BTreeMap<String, SessionStats>,
    /// The implementation's stdout, stderr and log files, concatenated.
    pub logs: String,
    /// Whether logs could be read at all.
    pub logs_available: bool,
    /// The deployment in force at the end (after reloads).
    pub deployment: Option<DeploymentSpec>,
    /// Every JSON-RPC message received.
    pub received: Vec<ReceivedMessage>,
    /// Template variables at the end of the run (captures included).
    pub vars: Vars,
    /// The message tool's name per agent.
    pub message_tools: BTreeMap<String, String>,
    /// Where the message tool's arguments carry the message (`message` when unset).
    pub message_key: Option<crate::target::MessageKey>,
    /// The health tool's name.
    pub health_tool: String,
    /// Agent key → URL.
    pub agent_urls: BTreeMap<String, String>,
}

/// A JSON-RPC message received from the implementation.
#[derive(Debug, Clone, Default)]
pub struct ReceivedMessage {
    /// Connection label.
    pub label: String,
    /// Negotiated protocol version of the connection.
    pub version: String,
    /// The message (the copy the exchange holds, shared).
    pub message: crate::client::SharedMessage,
    /// The method of the request this message answers, when it is a response.
    pub request_method: Option<String>,
}
