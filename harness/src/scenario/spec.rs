//! What a scenario file declares (`*Spec` types). They derive `JsonSchema`; the checked-in
//! `scenarios/scenario.schema.json` is generated from them.

use std::collections::BTreeMap;
use std::time::Duration;

use pallas_mocks::EcosystemSpec;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::vocab::{Capability, Level};

fn is_false(b: &bool) -> bool {
    !*b
}

/// One conformance scenario: mocks, a deployment, scripted client steps and checks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSpec {
    /// Stable identifier (`health-degraded-refused`); unique across a run.
    pub id: String,
    /// One-line title shown in reports.
    pub title: String,
    /// Longer explanation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Where the rules come from: seed file and section (`001 §Health System`) or MCP spec section.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refs: Vec<String>,
    /// Wire eras the scenario applies to (default: `2025-11-25`).
    #[serde(default = "default_eras")]
    pub eras: Vec<EraSpec>,
    /// Capabilities the target must claim; otherwise every check is `skip` with the reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<Capability>,
    /// Free-form tags for `--filter`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Mock LLM providers and mock downstream MCP servers (the `pallas-mocks` format).
    #[serde(default)]
    pub ecosystem: EcosystemSpec,
    /// What the implementation under test is configured with. Absent: the scenario needs no
    /// deployment of its own and can run in attach mode (`--registry-url`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<DeploymentSpec>,
    /// Time limits.
    #[serde(default, skip_serializing_if = "TimeoutsSpec::is_default")]
    pub timeouts: TimeoutsSpec,
    /// Values redacted in every output, besides bearers, API keys and configured headers, which
    /// are collected automatically.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<String>,
    /// The scripted client's steps, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepSpec>,
    /// Checks: catalog check IDs (with parameters) and generic assertions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<CheckSpec>,
}

fn default_eras() -> Vec<EraSpec> {
    vec![EraSpec::V2025_11_25]
}

/// An MCP wire era.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub enum EraSpec {
    /// Sessions: `initialize`, `Mcp-Session-Id`, `DELETE`.
    #[serde(rename = "2025-11-25")]
    V2025_11_25,
    /// Stateless: `server/discover`, no sessions.
    #[serde(rename = "2026-07-28")]
    V2026_07_28,
}

impl EraSpec {
    /// The protocol revision string.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V2025_11_25 => "2025-11-25",
            Self::V2026_07_28 => "2026-07-28",
        }
    }
}

/// Time limits of a scenario.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimeoutsSpec {
    /// Default limit of one step (default 10s).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub step: Option<Duration>,
    /// Limit of the whole scenario, startup included (default 60s).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub scenario: Option<Duration>,
}

impl TimeoutsSpec {
    fn is_default(&self) -> bool {
        self == &Self::default()
    }
}

/// The deployment the implementation under test is configured with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeploymentSpec {
    /// Project name (`agents.yaml` `name`).
    #[serde(default = "default_project")]
    pub name: String,
    /// Version published in registry entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Reverse-domain namespace of registry names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// `provider.model` (e.g. `openai.mock-model`).
    #[serde(default = "default_model")]
    pub model: String,
    /// `model_capabilities`; published in the registry when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_capabilities: Option<ModelCapabilitiesSpec>,
    /// LLM providers: which mock (or URL) backs `openai` and `anthropic`, and their keys.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub providers: BTreeMap<String, ProviderSpec>,
    /// Agents by key.
    pub agents: BTreeMap<String, AgentSpec>,
    /// Downstream MCP servers by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub servers: BTreeMap<String, ServerSpec>,
    /// Log level (`logger.level`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_level: Option<String>,
    /// Extra environment for the implementation.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Lines of the `.env` file only (not the process environment); a name also in `env` is
    /// written here instead of its `env` value, so the two can disagree.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub dotenv: BTreeMap<String, String>,
    /// Literal files written after the generated ones (path relative to the run directory →
    /// text, templated); a path the target also generates is overwritten.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, String>,
    /// Extra command-line arguments appended to the target's command (templated).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// What readiness means: `all` (default: every probe of the target), `agents` (only the
    /// per-agent probes, for a start without the registry), `none` (do not wait: the scenario
    /// observes the start itself, e.g. a start that must fail, with a `process` step).
    #[serde(default, skip_serializing_if = "Readiness::is_default")]
    pub ready: Readiness,
    /// The agents whose per-agent readiness probes run (default: every agent), e.g. the one
    /// agent a single-agent start serves.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ready_agents: Vec<String>,
}

/// What the harness waits for after launching the implementation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Readiness {
    /// Every readiness probe of the target profile.
    #[default]
    All,
    /// Only the per-agent probes (`each_agent: true`).
    Agents,
    /// Nothing: the steps start at once.
    None,
}

impl Readiness {
    fn is_default(&self) -> bool {
        *self == Self::All
    }
}

fn default_project() -> String {
    "kit".to_owned()
}

fn default_model() -> String {
    "openai.mock-model".to_owned()
}

/// `model_capabilities` of `fastagent.config.yaml`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelCapabilitiesSpec {
    /// Vision support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vision: Option<bool>,
    /// Context window in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// Max output tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u64>,
}

/// One LLM provider of the deployment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProviderSpec {
    /// Name of a mock LLM of the ecosystem; its URL becomes the provider's `base_url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mock: Option<String>,
    /// Explicit base URL (templated), instead of a mock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// API key (a secret: redacted in every output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
}

/// One agent of the deployment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentSpec {
    /// Registry title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Registry description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// System instruction (agent card body).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruction: Option<String>,
    /// Model override (`provider.model`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Downstream servers the agent may call (names of `deployment.servers`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<String>,
    /// Agents that must be ready first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<String>,
    /// `request_params` of the agent card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_params: Option<Value>,
    /// `instance_scope` (`shared`, `connection`, `request`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_scope: Option<String>,
}

/// One downstream MCP server of the deployment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerSpec {
    /// Name of a mock MCP server of the ecosystem; its URL becomes the server's `url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mock: Option<String>,
    /// Explicit URL (templated), instead of a mock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Configured headers (values are secrets when the name is `Authorization`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Forward the inbound bearer to this server.
    #[serde(default, skip_serializing_if = "is_false")]
    pub forward_inbound_auth: bool,
}

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
    /// `_meta.progressToken` (string or number, sent exactly as written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_token: Option<Value>,
    /// Send `notifications/cancelled` for this call after this many progress notifications.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_after_progress: Option<u32>,
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

fn default_true() -> bool {
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

/// One entry of `checks:`: a catalog check (`check: PROG-002`), optionally with parameters
/// (`with:`), scoped to steps (`steps:`), or proven by a generic assertion (`assert:`) whose
/// verdict is then reported under that check ID.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckSpec {
    /// Catalog check ID. Absent: the assertion is reported as `ASSERT` (level from `level`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    /// What this entry verifies, in words (default: the catalog description).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Step names (globs, e.g. `send*`) the check looks at; default: every step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<String>,
    /// Parameters of a catalog check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with: Option<Value>,
    /// A generic assertion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assert: Option<AssertSpec>,
    /// Level of an unattributed assertion (required: there is no default). An entry that
    /// names a catalog check takes the check's level from its rules and states none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<Level>,
    /// The assertion states a premise of the scenario (the script really exercised what the
    /// other checks judge): when it does not hold the entry is `inconclusive`, not a failure.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub premise: bool,
    /// Expand the entry once per value of a variable (`{{i}}` in every string of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_each: Option<ForEachSpec>,
    /// Capabilities the target must claim for this entry to be judged; otherwise `skip`
    /// with the reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<Capability>,
}

/// `for_each:` of a check: a variable over an integer range `[from, to)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForEachSpec {
    /// Variable name (used as `{{NAME}}`).
    #[serde(default = "default_var")]
    pub var: String,
    /// First value.
    #[serde(default)]
    pub from: u32,
    /// One past the last value.
    pub to: u32,
}

fn default_var() -> String {
    "i".to_owned()
}

/// A generic assertion. Exactly one kind is set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AssertSpec {
    /// A JSONPath assertion on one step's output (`step:` names it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<PathAssert>,
    /// The duration of steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<TimingAssert>,
    /// What a mock MCP server received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal: Option<JournalAssert>,
    /// What a mock LLM received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_journal: Option<LlmJournalAssert>,
    /// Session accounting of a mock MCP server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<SessionsAssert>,
    /// The implementation's stdout, stderr and log files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logs: Option<LogsAssert>,
}

/// A predicate on the values a JSONPath selects. Every field present must hold.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PathAssert {
    /// The step whose output is examined (`output:` assertions only): a name or a glob, and
    /// with a glob every matching step must satisfy the predicate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// JSONPath (RFC 9535), e.g. `$.result.content[0].text`.
    pub path: String,
    /// The path selects something (true) or nothing (false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exists: Option<bool>,
    /// The first selected value equals this (templated strings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<Value>,
    /// The first selected value, as text, matches this regular expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matches: Option<String>,
    /// The first selected value, as text, contains this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<String>,
    /// The first selected value, when a string holding JSON, is parsed before comparing.
    #[serde(default, skip_serializing_if = "is_false")]
    pub parse_json: bool,
    /// Every selected value is valid against this JSON Schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
    /// How many values the path selects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<CountSpec>,
    /// `schema` judges only the first N selected values (in document order), e.g. the
    /// first three tool notes of a fan-out are all `started`; fewer than N is a failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<usize>,
}

/// A count window.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CountSpec {
    /// Exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<u64>,
    /// At least.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<u64>,
    /// At most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u64>,
}

impl CountSpec {
    /// Whether `n` is inside the window.
    pub fn holds(&self, n: u64) -> bool {
        self.equals.is_none_or(|e| n == e)
            && self.min.is_none_or(|m| n >= m)
            && self.max.is_none_or(|m| n <= m)
    }

    /// The window in words.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(e) = self.equals {
            parts.push(format!("= {e}"));
        }
        if let Some(m) = self.min {
            parts.push(format!(">= {m}"));
        }
        if let Some(m) = self.max {
            parts.push(format!("<= {m}"));
        }
        if parts.is_empty() {
            "any".to_owned()
        } else {
            parts.join(" and ")
        }
    }
}

/// `timing:` assertion: every matching step took a time inside the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimingAssert {
    /// Step name or glob.
    pub step: String,
    /// At most this long.
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub max: Option<Duration>,
    /// At least this long.
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub min: Option<Duration>,
}

/// `journal:` assertion on a mock MCP server's journal.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JournalAssert {
    /// Mock MCP server name.
    pub server: String,
    /// Only entries with this JSON-RPC method (`tools/call`, `initialize`…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Only entries for this tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Only entries whose JSON view satisfies this predicate (e.g. `$.arguments.i` equals 7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<PathAssert>,
    /// How many entries select.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<CountSpec>,
    /// A header (lower-case name, e.g. `authorization`) examined on every selected entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
    /// Expected value of `header` on every selected entry (templated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_equals: Option<String>,
    /// `header` is absent from every selected entry.
    #[serde(default, skip_serializing_if = "is_false")]
    pub header_absent: bool,
    /// Only entries recorded while these steps ran (names or globs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub during: Vec<String>,
}

/// `llm_journal:` assertion.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmJournalAssert {
    /// Mock LLM name.
    pub llm: String,
    /// Only requests to paths containing this (`/chat/completions`, `/models`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_contains: Option<String>,
    /// Only entries recorded while these steps ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub during: Vec<String>,
    /// How many requests select.
    pub count: CountSpec,
}

/// `sessions:` assertion.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionsAssert {
    /// Mock MCP server name; absent: every mock MCP server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// Sessions open at the end of the steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_now: Option<CountSpec>,
    /// Sessions opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opened: Option<CountSpec>,
}

/// `logs:` assertion.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogsAssert {
    /// No scenario secret (bearers, keys, configured headers) appears.
    #[serde(default, skip_serializing_if = "is_false")]
    pub no_secrets: bool,
    /// None of these strings appears (templated).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub never_contains: Vec<String>,
    /// Each of these strings appears.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contains: Vec<String>,
}

impl StepSpec {
    /// The action keys that are set, in declaration order.
    pub fn actions(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        let flags: [(&'static str, bool); 17] = [
            ("registry", self.registry.is_some()),
            ("connect", self.connect.is_some()),
            ("list_tools", self.list_tools.is_some()),
            ("health", self.health.is_some()),
            ("send", self.send.is_some()),
            ("call", self.call.is_some()),
            ("history", self.history.is_some()),
            ("request", self.request.is_some()),
            ("raw", self.raw.is_some()),
            ("delete", self.delete.is_some()),
            ("metrics", self.metrics.is_some()),
            ("reload", self.reload.is_some()),
            ("repeat", self.repeat.is_some()),
            ("parallel", self.parallel.is_some()),
            ("http", self.http.is_some()),
            ("process", self.process.is_some()),
            ("file", self.file.is_some()),
        ];
        for (name, set) in flags {
            if set {
                out.push(name);
            }
        }
        if self.wait.is_some() {
            out.push("wait");
        }
        out
    }

    /// The agent (connection) a step talks to, if any.
    pub fn agent(&self) -> Option<&str> {
        self.connect
            .as_ref()
            .map(|c| c.alias.as_deref().unwrap_or(&c.agent))
            .or(self.list_tools.as_ref().map(|a| a.agent.as_str()))
            .or(self.health.as_ref().map(|a| a.agent.as_str()))
            .or(self.send.as_ref().map(|a| a.agent.as_str()))
            .or(self.call.as_ref().map(|a| a.agent.as_str()))
            .or(self.history.as_ref().map(|a| a.agent.as_str()))
            .or(self.request.as_ref().map(|a| a.agent.as_str()))
            .or(self.raw.as_ref().map(|a| a.agent.as_str()))
            .or(self.delete.as_ref().map(|a| a.agent.as_str()))
            .or(self.http.as_ref().and_then(|h| h.agent.as_deref()))
    }
}

impl AssertSpec {
    /// The assertion kinds that are set.
    pub fn kinds(&self) -> Vec<&'static str> {
        let flags = [
            ("output", self.output.is_some()),
            ("timing", self.timing.is_some()),
            ("journal", self.journal.is_some()),
            ("llm_journal", self.llm_journal.is_some()),
            ("sessions", self.sessions.is_some()),
            ("logs", self.logs.is_some()),
        ];
        flags.iter().filter(|(_, s)| *s).map(|(n, _)| *n).collect()
    }
}
