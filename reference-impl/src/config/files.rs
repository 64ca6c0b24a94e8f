//! What each configuration file declares, as read (before defaults and validation).
//!
//! Pallas's own files (`agents.yaml`) and the blocks whose keys carry behaviour (`mcp.servers.*`,
//! card front matter, `request_params`) reject unknown keys; fast-agent keys the reference does not
//! use are listed and accepted. Other sections of fast-agent's config ignore keys they do not know.

use std::time::Duration;

use indexmap::IndexMap;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_saphyr::Spanned;

/// `agents.yaml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AgentsFileSpec {
    pub name: Spanned<String>,
    pub version: Option<Spanned<String>>,
    pub host: Option<Spanned<String>>,
    pub namespace: Option<Spanned<String>>,
    pub registry_port: Option<Spanned<u16>>,
    pub health: Option<HealthSpec>,
    #[serde(default)]
    pub agents: IndexMap<String, AgentEntrySpec>,
}

/// `agents.yaml` `health:` (reference extension).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HealthSpec {
    #[serde(default, with = "humantime_serde")]
    pub probe_timeout: Option<Duration>,
    #[serde(default, with = "humantime_serde")]
    pub llm_ttl: Option<Duration>,
}

/// `agents.yaml` `agents.<name>`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AgentEntrySpec {
    pub module: Option<Spanned<String>>,
    pub card: Option<Spanned<String>>,
    pub port: Spanned<u16>,
    pub title: Option<String>,
    pub description: Option<String>,
    #[serde(default)]
    pub icons: Vec<IconSpec>,
    #[serde(default)]
    pub depends_on: Vec<Spanned<String>>,
    pub instance_scope: Option<Spanned<String>>,
}

/// A registry icon (`{src, sizes, mimeType, theme}`).
#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct IconSpec {
    /// Icon URL.
    pub src: String,
    /// Sizes (`48x48`, `any`); a single string is accepted.
    #[serde(
        default,
        deserialize_with = "one_or_many",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub sizes: Vec<String>,
    /// MIME type override.
    #[serde(
        default,
        rename = "mimeType",
        alias = "mime_type",
        skip_serializing_if = "Option::is_none"
    )]
    pub mime_type: Option<String>,
    /// `light` or `dark`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
}

fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(s) => vec![s],
        OneOrMany::Many(v) => v,
    })
}

/// `fastagent.config.yaml` and `fastagent.secrets.yaml` (same shape; secrets override).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct FastAgentSpec {
    pub default_model: Option<Spanned<String>>,
    pub model_capabilities: Option<CapabilitiesSpec>,
    pub mcp: Option<McpSpec>,
    pub openai: Option<ProviderSpec>,
    pub anthropic: Option<ProviderSpec>,
    pub hf: Option<ProviderSpec>,
    pub logger: Option<LoggerSpec>,
    pub tls: Option<TlsSpec>,
}

/// `tls` (reference extension): extra trusted CAs for providers and downstream servers.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TlsSpec {
    /// A PEM bundle, relative to the project directory.
    pub ca_file: Option<Spanned<String>>,
}

/// `model_capabilities`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CapabilitiesSpec {
    pub vision: Option<bool>,
    pub context_window: Option<u64>,
    pub max_output_tokens: Option<u64>,
}

/// `mcp`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct McpSpec {
    #[serde(default)]
    pub servers: IndexMap<String, ServerSpec>,
}

/// `mcp.servers.<name>`: the keys the reference uses, plus fast-agent's other server keys
/// (accepted, not used). Anything else is an error, so `forward_inbound_auth` can never be lost
/// to a typo.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // fast-agent keys are accepted and never read
pub(crate) struct ServerSpec {
    pub transport: Option<Spanned<String>>,
    pub url: Option<Spanned<String>>,
    #[serde(default)]
    pub headers: IndexMap<String, Spanned<String>>,
    pub forward_inbound_auth: Option<bool>,
    // fast-agent keys accepted and not used by the reference.
    pub name: Option<IgnoredAny>,
    pub description: Option<IgnoredAny>,
    pub command: Option<IgnoredAny>,
    pub args: Option<IgnoredAny>,
    pub env: Option<IgnoredAny>,
    pub cwd: Option<IgnoredAny>,
    pub auth: Option<IgnoredAny>,
    pub roots: Option<IgnoredAny>,
    pub sampling: Option<IgnoredAny>,
    pub elicitation: Option<IgnoredAny>,
    pub read_timeout_seconds: Option<IgnoredAny>,
    pub read_transport_sse_timeout_seconds: Option<IgnoredAny>,
    pub http_timeout_seconds: Option<IgnoredAny>,
    pub http_read_timeout_seconds: Option<IgnoredAny>,
    pub load_on_start: Option<IgnoredAny>,
    pub include_instructions: Option<IgnoredAny>,
    pub reconnect_on_disconnect: Option<IgnoredAny>,
    pub ping_interval_seconds: Option<IgnoredAny>,
    pub max_missed_pings: Option<IgnoredAny>,
    pub implementation: Option<IgnoredAny>,
}

/// `openai` / `anthropic`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ProviderSpec {
    pub base_url: Option<Spanned<String>>,
    pub api_key: Option<Spanned<String>>,
}

/// `logger`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct LoggerSpec {
    pub level: Option<String>,
}

/// An AgentCard's front matter.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // fast-agent keys are accepted and never read
pub(crate) struct CardSpec {
    pub name: Option<String>,
    pub description: Option<String>,
    pub model: Option<Spanned<String>>,
    #[serde(default)]
    pub servers: Vec<Spanned<String>>,
    pub request_params: Option<RequestParamsSpec>,
    pub instance_scope: Option<Spanned<String>>,
    /// Used when the card has no body.
    pub instruction: Option<String>,
    // fast-agent card keys accepted and not used by the reference.
    #[serde(rename = "type")]
    pub kind: Option<IgnoredAny>,
    pub use_history: Option<IgnoredAny>,
    pub human_input: Option<IgnoredAny>,
    pub default: Option<IgnoredAny>,
    pub tools: Option<IgnoredAny>,
    pub resources: Option<IgnoredAny>,
    pub prompts: Option<IgnoredAny>,
    pub skills: Option<IgnoredAny>,
    pub agents: Option<IgnoredAny>,
    pub messages: Option<IgnoredAny>,
    pub history_source: Option<IgnoredAny>,
    pub elicitation: Option<IgnoredAny>,
    pub api_key: Option<IgnoredAny>,
}

/// `request_params` of a card.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // fast-agent keys are accepted and never read
pub(crate) struct RequestParamsSpec {
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub top_k: Option<u32>,
    #[serde(alias = "maxTokens")]
    pub max_tokens: Option<u32>,
    pub max_iterations: Option<u32>,
    // fast-agent keys accepted and not used by the reference.
    pub use_history: Option<IgnoredAny>,
    pub parallel_tool_calls: Option<IgnoredAny>,
    pub model: Option<IgnoredAny>,
    #[serde(rename = "stopSequences")]
    pub stop_sequences: Option<IgnoredAny>,
    pub response_format: Option<IgnoredAny>,
    pub template_vars: Option<IgnoredAny>,
    pub metadata: Option<IgnoredAny>,
    pub streaming_timeout: Option<IgnoredAny>,
}
