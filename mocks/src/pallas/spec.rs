//! What the `pallas:` section of an ecosystem file declares: a mock Pallas (seed 000), its
//! registry, its agents and what each one is scripted to do.

use std::collections::BTreeMap;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A mock Pallas: a registry (plain HTTP, its own port) at `/.well-known/mcp/server.json` listing
/// agents, each a Streamable HTTP MCP server on its own port with `send_message` and
/// `get_health`. Every request, to the registry or to an agent, is journaled at
/// `GET /__mock/journal` on the registry's port.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MockPallasSpec {
    /// The registry's fixed port (only honoured by `pallas-mocks up` and `pallas-mocks pallas`);
    /// ephemeral when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Reverse-domain prefix of the registry names: an agent is `{namespace}/{slug}`, the slug
    /// being its key with `_` replaced by `-` (seed 001).
    #[serde(default = "default_namespace")]
    pub namespace: String,
    /// Version published in every registry entry unless an agent says otherwise.
    #[serde(default = "default_version")]
    pub version: String,
    /// Host name in the registry's `remotes[].url`; `127.0.0.1` when absent. The mock still
    /// binds `127.0.0.1` only; agents accept this name in `Host` besides the loopback names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The agents, by key (the key is the agent's name in progress messages and the slug's
    /// source).
    pub agents: BTreeMap<String, PallasAgentSpec>,
    /// What the registry answers over time; every agent, always, when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<RegistrySpec>,
}

pub(crate) fn default_namespace() -> String {
    "io.pallas.mock".to_owned()
}

pub(crate) fn default_version() -> String {
    "1.0.0".to_owned()
}

/// One agent of a mock Pallas.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PallasAgentSpec {
    /// Fixed port of its MCP endpoint (`/mcp`); ephemeral when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Registry `title`; the key with its first letter upper-cased when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Registry `description` (1 to 100 characters); `Mock Pallas agent {key}` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Registry `version`; the Pallas `version` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Registry `icons`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<IconSpec>,
    /// Registry `capabilities` (what `model_capabilities` publishes in a real Pallas); absent
    /// from the entry when absent here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<ModelCapabilitiesSpec>,
    /// Health over time: phases, each held `for` a duration or for `after_calls` calls of
    /// `get_health`, the last one holding for good. `[{status: ok}]` when absent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub health: Vec<HealthPhaseSpec>,
    /// What `send_message` answers.
    #[serde(default)]
    pub reply: ReplySpec,
    /// The progress notifications of `send_message`.
    #[serde(default)]
    pub progress: ProgressSpec,
    /// Faults of this agent's endpoint.
    #[serde(default, skip_serializing_if = "AgentFaultsSpec::is_empty")]
    pub faults: AgentFaultsSpec,
    /// Require `Authorization: Bearer <token>` on every request; otherwise 401 with
    /// `WWW-Authenticate`. Any bearer, or none, is accepted when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require_bearer: Option<String>,
    /// The registry entry lists a `type: "sse"` remote (the agent's port, path `/sse`, which
    /// serves no MCP) before its `streamable-http` one, as the registry schema allows: a client
    /// must choose the remote by its type (seed 000: "Daedalus looks for `type:
    /// \"streamable-http\"` and uses its `url`").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sse_remote_first: bool,
}

/// An icon of a registry entry (the registry schema's `Icon`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IconSpec {
    /// The icon's URL.
    pub src: String,
    /// Sizes (`48x48`, `any`); the registry schema wants a list, where seed 000's example shows
    /// one string.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<String>,
}

/// Model capabilities published in a registry entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelCapabilitiesSpec {
    /// Model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Whether the model takes images.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vision: Option<bool>,
    /// Context window, in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// Most output tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u64>,
}

/// A health status of seed 000 §2.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HealthStatus {
    /// Healthy.
    #[default]
    Ok,
    /// Answers, with issues.
    Degraded,
    /// Cannot process requests.
    Error,
}

impl HealthStatus {
    /// The word on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Degraded => "degraded",
            Self::Error => "error",
        }
    }
}

/// One phase of an agent's health.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HealthPhaseSpec {
    /// The status `get_health` answers.
    #[serde(default)]
    pub status: HealthStatus,
    /// The `message` (seed 000 requires one with `degraded` and `error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Wait this long before answering `get_health`.
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub latency: Option<Duration>,
    /// Answer with this text as the one text block instead of the health JSON: a deliberately
    /// malformed answer (`status` and `message` are then not used).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// The phase lasts this long (from the end of the previous one).
    #[serde(
        rename = "for",
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub lasts: Option<Duration>,
    /// The phase lasts this many calls of `get_health`, whatever the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_calls: Option<u32>,
}

/// What `send_message` answers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ReplySpec {
    /// One text block: the `message` argument as it came.
    #[default]
    Echo,
    /// One text block with this text.
    Text(String),
    /// A result with `isError: true` and this text.
    IsError(String),
}

/// How `send_message` reports progress.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ProgressMode {
    /// Seed 000 §4: with a `progressToken` only, `{server}/{tool}: started` (progress 0), then
    /// `{agent} step N (llm|tool)` (progress N), then `{server}/{tool}: completed` (progress 1,
    /// total 1), all before the result, on the call's stream.
    #[default]
    Seed,
    /// Nothing, even with a token.
    None,
    /// The seed's notifications, each carrying another token than the call's.
    WrongToken,
    /// The seed's messages with strictly decreasing `progress` values (the last one 1, total 1).
    Decreasing,
    /// The seed's notifications, sent on the call's stream after the result.
    AfterResult,
    /// The seed's notifications, also for a call without a token (under the token
    /// `pallas-mock-unrequested`).
    WithoutTokenToo,
}

/// The kind of one agent-loop step (`{agent} step N (llm)` or `(tool)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StepKind {
    /// An LLM turn.
    Llm,
    /// A tool execution.
    Tool,
}

impl StepKind {
    /// The word in the message.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Llm => "llm",
            Self::Tool => "tool",
        }
    }
}

/// The progress of one `send_message` call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProgressSpec {
    /// Which behaviour, right or deliberately wrong.
    #[serde(default)]
    pub mode: ProgressMode,
    /// The downstream `{server}/{tool}` of the `started` and `completed` messages.
    #[serde(default = "default_progress_tool")]
    pub tool: String,
    /// The agent-loop steps between them, in order.
    #[serde(default = "default_steps")]
    pub steps: Vec<StepKind>,
    /// The downstream tool reports `{server}/{tool}: failed` instead of `completed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub failed: bool,
    /// Pause before each notification after the first.
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub interval: Option<Duration>,
}

impl Default for ProgressSpec {
    fn default() -> Self {
        Self {
            mode: ProgressMode::Seed,
            tool: default_progress_tool(),
            steps: default_steps(),
            failed: false,
            interval: None,
        }
    }
}

fn default_progress_tool() -> String {
    "argos/search_web".to_owned()
}

fn default_steps() -> Vec<StepKind> {
    vec![StepKind::Tool, StepKind::Llm]
}

/// Faults of one agent's endpoint. They combine.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentFaultsSpec {
    /// `send_message` answers this much later (its progress spread around the wait).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub slow: Option<Duration>,
    /// Requests answered with an HTTP error status instead of MCP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_error: Option<HttpErrorSpec>,
    /// The SSE stream of a `send_message` call is cut (the connection dropped) before its
    /// result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_stream: Option<DropStreamSpec>,
    /// Sessions expire: every later request with the session's id gets 404, as the MCP
    /// transport answers a session it no longer knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_expiry: Option<SessionExpirySpec>,
}

impl AgentFaultsSpec {
    /// No fault at all.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// HTTP error answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpErrorSpec {
    /// The status (e.g. 500, 502, 503).
    pub status: u16,
    /// Only requests with this JSON-RPC method (`tools/call`, `initialize`…); every request
    /// when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Let this many matching requests through first.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skip: u32,
    /// Then fail this many; every later one when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u32>,
}

// serde's `skip_serializing_if` passes a reference.
fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A dropped SSE stream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DropStreamSpec {
    /// Deliver this many messages (progress notifications) of the call's stream, then cut the
    /// connection; the result is never delivered.
    #[serde(default)]
    pub after_notifications: u32,
    /// Only the first N `send_message` calls; every one when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u32>,
}

/// When sessions expire (one of the two).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionExpirySpec {
    /// A session answers this many JSON-RPC requests after `initialize` (`tools/list`,
    /// `tools/call`…; notifications not counted), then 404 to anything with its id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_requests: Option<u32>,
    /// A session lives this long after `initialize`, then 404 to anything with its id.
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub after: Option<Duration>,
    /// Only the agent's first N sessions expire; later ones never do (a client that starts a new
    /// session after the 404 can then finish its task). Every session expires when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<u32>,
}

/// What the registry answers over time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RegistrySpec {
    /// Phases, each held `for` a duration or for `after_calls` registry requests, the last one
    /// holding for good.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schedule: Vec<RegistryPhaseSpec>,
}

/// One phase of the registry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RegistryPhaseSpec {
    /// The agents listed (keys, in this order); every agent when absent. Unlisted agents keep
    /// serving.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents: Option<Vec<String>>,
    /// Answer this HTTP status instead of the list (e.g. 503).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Wait this long before answering.
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub latency: Option<Duration>,
    /// The phase lasts this long (from the end of the previous one).
    #[serde(
        rename = "for",
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub lasts: Option<Duration>,
    /// The phase lasts this many registry requests, whatever the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_calls: Option<u32>,
}

/// The agents of [`MockPallasSpec::two_agents`], in the order `pallas-mocks pallas --port P`
/// gives them ports (`P+1`, `P+2`): seed 000's research agent first.
pub const DEFAULT_AGENTS: [&str; 2] = ["research", "jarvis"];

impl MockPallasSpec {
    /// The default mock Pallas of `pallas-mocks pallas`: two healthy agents, `research` and
    /// `jarvis` ([`DEFAULT_AGENTS`]), echoing messages with seed 000's progress.
    pub fn two_agents() -> Self {
        let agent = |title: &str, description: &str| PallasAgentSpec {
            title: Some(title.to_owned()),
            description: Some(description.to_owned()),
            capabilities: Some(ModelCapabilitiesSpec {
                model: Some("mock-model".to_owned()),
                vision: Some(false),
                context_window: Some(200_000),
                max_output_tokens: Some(32_000),
            }),
            ..PallasAgentSpec::default()
        };
        Self {
            port: None,
            namespace: default_namespace(),
            version: default_version(),
            host: None,
            agents: BTreeMap::from([
                (
                    "research".to_owned(),
                    agent("Research Agent", "Web search and knowledge graph (mock)"),
                ),
                (
                    "jarvis".to_owned(),
                    agent("Jarvis", "General assistant (mock)"),
                ),
            ]),
            registry: None,
        }
    }
}
