//! The steps of a scenario: one action each (registry, connect, send, call, health, raw…).

use crate::vocab::Capability;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

use super::*;

/// One step of the scripted client. Exactly one action key is set; `name` labels the step for
/// checks and captures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    /// Label used by checks (`step: …`) and in reports; default `<action>#<index>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Limit of this step (default: the scenario's step timeout).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub timeout: Option<Duration>,
    /// Values to capture from the step's output: capture name → JSONPath
    /// (`$.result.content[0].text`); later steps use `{{capture.NAME}}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub capture: BTreeMap<String, String>,
    /// Repeat the action until this assertion holds on its output, within this deadline
    /// (e.g. a registry that reflects a reload).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<UntilSpec>,
    /// Capabilities the target must claim for this step to run; otherwise it is left out
    /// (guard checks on it with the same `requires`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<Capability>,
    /// The action is expected to fail (e.g. a port nothing listens on): its error goes into the
    /// output as `$.error` (absent when it did not fail) instead of being a harness error.
    #[serde(default, skip_serializing_if = "is_false")]
    pub expect_error: bool,

    /// Fetch the registry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<RegistryStep>,
    /// Connect to an agent (`initialize` + session, or discover).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<ConnectStep>,
    /// `tools/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_tools: Option<AgentRef>,
    /// Call `get_health`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<CallStep>,
    /// Call the message tool (`send_message`, or as the target names it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send: Option<SendStep>,
    /// Call any tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<ToolCallStep>,
    /// `prompts/get` of `{agent}_history`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<AgentRef>,
    /// Any JSON-RPC request (or notification).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<RequestStep>,
    /// A raw POST (malformed bodies, wrong headers, unknown sessions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<RawStep>,
    /// `DELETE` the agent's session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete: Option<AgentRef>,
    /// `GET` of the agent's endpoint with the session: its standalone SSE stream, read for a while.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listen: Option<ListenStep>,
    /// Scrape `/metrics`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<MetricsStep>,
    /// Rewrite the deployment files and signal the implementation to reload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reload: Option<ReloadStep>,
    /// Run the inner steps `count` times (`{{i}}` = 0…count-1), concurrently or in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<RepeatStep>,
    /// Run the inner steps concurrently.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel: Option<Vec<StepSpec>>,
    /// Any HTTP request (APIs beside MCP: mcpd's REST API, SSE chat streams, mock journals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<super::http::HttpStep>,
    /// Pause (for timing windows and expiry; never needed for readiness).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub wait: Option<Duration>,
    /// Observe the implementation's process: running or exit code, stdout, stderr (and their
    /// lines parsed as JSON where they are).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<ProcessStep>,
    /// Read a file the implementation wrote (path templated, relative to the run directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<FileStep>,
}

/// `process:` step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcessStep {
    /// Wait up to this long for the process to exit (without it: its state now).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub wait_exit: Option<Duration>,
}

/// `file:` step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileStep {
    /// The file (templated; relative paths are under the run directory).
    pub path: String,
    /// Read only whether it exists and its size (`text` empty, `lines` `[]`): for large files.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stat_only: bool,
}

/// `until:` of a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UntilSpec {
    /// The assertion on the step's output (`step` must be absent).
    pub that: PathAssert,
    /// Give up after this long (the step then fails with its last output).
    #[serde(with = "humantime_serde")]
    #[schemars(with = "String")]
    pub within: Duration,
}

/// `registry:` step (no options yet: `registry: {}`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RegistryStep {}

/// A step that only names an agent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentRef {
    /// Agent key (or connection name given to `connect: {as: …}`).
    pub agent: String,
    /// Bearer sent with the request (a secret).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer: Option<String>,
}

/// `listen:` step: the session's standalone SSE stream (MCP Streamable HTTP, "Listening for
/// Messages from the Server"), opened with `GET` and read for `for`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListenStep {
    /// Agent key (or connection name given to `connect: {as: …}`).
    pub agent: String,
    /// Bearer sent with the request (a secret).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer: Option<String>,
    /// How long to read the stream; its end then is the step's normal end, not a timeout.
    #[serde(rename = "for", with = "humantime_serde")]
    #[schemars(with = "String")]
    pub duration: Duration,
}

/// `connect:` step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnectStep {
    /// Agent key.
    pub agent: String,
    /// Connection name (default: the agent key); later steps refer to it as `agent`.
    #[serde(default, rename = "as", skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// Era to speak (default: the scenario's first era).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub era: Option<EraSpec>,
    /// Bearer sent with the handshake.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer: Option<String>,
}

/// `health:` step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallStep {
    /// Agent (connection) name.
    pub agent: String,
    /// Bearer sent with the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer: Option<String>,
    /// `_meta.progressToken` (string or number, sent exactly as written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_token: Option<Value>,
}

/// `send:` step: the message tool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendStep {
    /// Agent (connection) name.
    pub agent: String,
    /// The message.
    pub message: String,
    /// Images: `[{data, mime_type}]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Value>,
    /// Bearer sent with the call (a secret).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer: Option<String>,
    /// How `Authorization` spells the bearer's scheme (default `Bearer`): an HTTP
    /// authentication scheme is case-insensitive (RFC 9110 §11.1), so `bearer` and `BEARER`
    /// carry the same token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_scheme: Option<String>,
    /// `_meta.progressToken` (string or number, sent exactly as written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_token: Option<Value>,
    /// Send `notifications/cancelled` for this call after this many progress notifications.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_after_progress: Option<u32>,
    /// With `cancel_after_progress`: cancel only once the scenario's mock MCP server has also
    /// received a call of this tool (`server/tool`, e.g. `kernos/stuck`), so the cancellation
    /// finds the downstream call in flight; after the step's timeout less a second, it cancels
    /// anyway.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_once_called: Option<String>,
    /// Close the call's response stream after this many progress notifications, without
    /// `notifications/cancelled` (a client that went away; MCP: "Disconnection **SHOULD NOT** be
    /// interpreted as the client cancelling its request").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_after_progress: Option<u32>,
}

/// `call:` step: any tool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolCallStep {
    /// Agent (connection) name.
    pub agent: String,
    /// Tool name.
    pub tool: String,
    /// Arguments (default `{}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// Bearer sent with the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer: Option<String>,
    /// `_meta.progressToken`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_token: Option<Value>,
}

/// `request:` step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestStep {
    /// Agent (connection) name.
    pub agent: String,
    /// JSON-RPC method.
    pub method: String,
    /// Params (default `{}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// Send as a notification (no id, no response expected).
    #[serde(default, skip_serializing_if = "is_false")]
    pub notification: bool,
    /// Bearer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer: Option<String>,
}

/// `raw:` step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawStep {
    /// Agent (connection) name.
    pub agent: String,
    /// Body, sent verbatim.
    pub body: String,
    /// Headers replacing the defaults (`Accept`, `Content-Type`…).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Send the connection's session id (default true); `false` tests the missing-session rule.
    #[serde(default = "default_true")]
    pub with_session: bool,
}

pub(super) fn default_true() -> bool {
    true
}

/// Where `/metrics` is scraped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetricsStep {
    /// An agent whose port serves `/metrics`; absent: the registry port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// `reload:` step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReloadStep {
    /// Replace the whole deployment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<DeploymentSpec>,
    /// Add these agents.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub add_agents: BTreeMap<String, AgentSpec>,
    /// Remove these agents.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove_agents: Vec<String>,
}

/// `repeat:` step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RepeatStep {
    /// How many times.
    pub count: u32,
    /// Run all iterations at once.
    #[serde(default, skip_serializing_if = "is_false")]
    pub concurrent: bool,
    /// Steps of one iteration; their names get `[i]` appended.
    pub steps: Vec<StepSpec>,
}

impl StepSpec {
    /// Every action key that is set, typed, in declaration order (a valid step has exactly one).
    pub fn set_actions(&self) -> Vec<StepAction<'_>> {
        use StepAction as A;
        [
            self.registry.as_ref().map(A::Registry),
            self.connect.as_ref().map(A::Connect),
            self.list_tools.as_ref().map(A::ListTools),
            self.health.as_ref().map(A::Health),
            self.send.as_ref().map(A::Send),
            self.call.as_ref().map(A::Call),
            self.history.as_ref().map(A::History),
            self.request.as_ref().map(A::Request),
            self.raw.as_ref().map(A::Raw),
            self.delete.as_ref().map(A::Delete),
            self.listen.as_ref().map(A::Listen),
            self.metrics.as_ref().map(A::Metrics),
            self.reload.as_ref().map(A::Reload),
            self.repeat.as_ref().map(A::Repeat),
            self.parallel.as_deref().map(A::Parallel),
            self.http.as_ref().map(A::Http),
            self.process.as_ref().map(A::Process),
            self.file.as_ref().map(A::File),
            self.wait.map(A::Wait),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// The step's action (the first set, for a step validation has not seen).
    pub fn action(&self) -> Option<StepAction<'_>> {
        self.set_actions().into_iter().next()
    }

    /// The action keys that are set, in declaration order.
    pub fn actions(&self) -> Vec<&'static str> {
        self.set_actions().iter().map(StepAction::key).collect()
    }

    /// The agent (connection) a step talks to, if any.
    pub fn agent(&self) -> Option<&str> {
        self.action().and_then(|a| a.agent())
    }
}
