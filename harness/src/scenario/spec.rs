//! What a scenario file declares (`*Spec` types). They derive `JsonSchema`; the checked-in
//! `scenarios/scenario.schema.json` is generated from them.

use std::collections::BTreeMap;
use std::time::Duration;

use pallas_mocks::EcosystemSpec;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::vocab::{Capability, InstanceScope};

use super::{CheckSpec, StepSpec};

pub(super) fn is_false(b: &bool) -> bool {
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
    /// The scenario uses a fixed port (`deployment.default_registry_port`): a run starts it only
    /// when no other scenario of the process runs, and never two such scenarios at once.
    #[serde(default, skip_serializing_if = "is_false")]
    pub serial: bool,
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
    /// LLM providers: which mock (or URL) backs `openai`, `anthropic` or `hf`, and their keys.
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
    /// Variables the implementation's environment must not have at all: removed from the
    /// target profile's `env` and from the environment the harness passes on (an unset
    /// variable, which is not the same as one set to `""`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unset_env: Vec<String>,
    /// Lines of the `.env` file only (not the process environment); a name also in `env` is
    /// written here instead of its `env` value, so the two can disagree.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub dotenv: BTreeMap<String, String>,
    /// Literal files written after the generated ones (path relative to the run directory →
    /// text, templated); a path the target also generates is overwritten.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, String>,
    /// Files filled before the start with whole copies of one line, up to a size (path relative
    /// to the run directory → what), e.g. a log file just under its rotation limit.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub prefill: BTreeMap<String, PrefillSpec>,
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
    /// Leave `registry_port` out of `agents.yaml`, so that the registry listens on seed 001's
    /// default port, [`DEFAULT_REGISTRY_PORT`] (`{{registry.url}}` names it). A fixed port: the
    /// scenario must be `serial`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub default_registry_port: bool,
}

impl DeploymentSpec {
    /// `value` with each `${NAME}` expanded as seed 001 says a Pallas expands it ("`${ENV_VAR}`
    /// placeholders are expanded at runtime from environment variables"; `.env` is loaded
    /// "without overwriting existing variables"): from `env`, else from `dotenv`; a name in
    /// neither stays as written.
    pub fn expand_placeholders(&self, value: &str) -> String {
        let mut out = String::with_capacity(value.len());
        let mut rest = value;
        while let Some(i) = rest.find("${") {
            let Some(len) = rest[i + 2..].find('}') else {
                break;
            };
            let name = &rest[i + 2..i + 2 + len];
            out.push_str(&rest[..i]);
            match self.env.get(name).or_else(|| self.dotenv.get(name)) {
                Some(v) => out.push_str(v),
                None => out.push_str(&rest[i..i + 3 + len]),
            }
            rest = &rest[i + 3 + len..];
        }
        out.push_str(rest);
        out
    }
}

/// The provider sections of `fastagent.config.yaml` a deployment can configure: seed 001's
/// `openai` and `anthropic`, and fast-agent's `hf` (HuggingFace, a token-passthrough provider:
/// seed 001 §Bearer Token Propagation).
pub const PROVIDERS: [&str; 3] = ["openai", "anthropic", "hf"];

/// Seed 001 §agents.yaml: "`registry_port` | no | Port for the registry server. Default: `24200`".
pub const DEFAULT_REGISTRY_PORT: u16 = 24200;

/// A file filled with copies of one line (`deployment.prefill`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrefillSpec {
    /// The most bytes the file may have: as many whole copies of `line` as fit.
    pub bytes: u64,
    /// The line (templated; a newline is added when it has none).
    pub line: String,
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
    /// The agent's Python module name, when the deployment names it apart from its key (seed
    /// 001: `agents.<name>.module`, "Importable Python module path"): `agents.yaml` then points
    /// at `agents.<module>`, and the profile's per-agent module file is written under that name.
    /// Absent: the key with hyphens as underscores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
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
    /// The instance scope the scenario needs (`shared`, `connection`, `request`): seed 001 names
    /// `instance_scope` without saying where a deployment sets it, so the target profile's
    /// `instance_scope` says how; on a profile that cannot set it, a scenario asking for another
    /// scope than the profile's `default` is skipped. Absent: the implementation's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_scope: Option<InstanceScope>,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_expand_from_the_environment_before_dotenv() {
        let mut d: DeploymentSpec = serde_json::from_value(
            serde_json::json!({"name": "p", "model": "openai.m", "agents": {}}),
        )
        .expect("a minimal deployment");
        d.env.insert("A".into(), "from-env".into());
        d.dotenv.insert("A".into(), "from-dotenv".into());
        d.dotenv.insert("B".into(), "b".into());
        assert_eq!(
            d.expand_placeholders("Bearer ${A}/${B}/${C}/${"),
            "Bearer from-env/b/${C}/${"
        );
    }
}
