//! Resolved settings of one agent: what the agent server and its loop run with.
//!
//! Plain data with no parsing: the configuration layer maps `agents.yaml`, `fastagent.config.yaml`,
//! the secrets file and the agent card into one [`AgentSettings`] per agent.

use std::fmt;
use std::time::Duration;

/// A secret value (API key, bearer token, configured header value). `Debug` and `Display` print
/// `[redacted]`; [`Secret::expose`] gives the value to the one place that sends it.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret value itself. Never log it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Self(value.to_owned())
    }
}

/// Which provider's wire format an agent's model speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    /// OpenAI-compatible chat completions (`POST {base_url}/chat/completions`).
    OpenAi,
    /// Anthropic messages (`POST {base_url}/v1/messages`).
    Anthropic,
    /// HuggingFace's OpenAI-compatible router (`POST {base_url}/chat/completions`): a
    /// token-passthrough provider, authenticated with the inbound request's bearer when it has one
    /// (seed 001 §Bearer Token Propagation, "LLM-provider passthrough").
    HuggingFace,
}

impl Provider {
    /// The provider prefix as written in `default_model` (`openai`, `anthropic`, `hf`).
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
            Provider::HuggingFace => "hf",
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A model reference: `openai.my-model` is `{ provider: OpenAi, model: "my-model" }`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ModelRef {
    /// Provider prefix.
    pub provider: Provider,
    /// Model name after the prefix.
    pub model: String,
}

impl fmt::Display for ModelRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.provider, self.model)
    }
}

/// Where and how to reach the provider of the active model.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderSettings {
    /// OpenAI: the base URL including `/v1` (`https://api.openai.com/v1`). Anthropic: the API
    /// root (`https://api.anthropic.com`; a trailing `/v1` is accepted).
    pub base_url: String,
    /// API key: `Authorization: Bearer` for OpenAI, `x-api-key` for Anthropic.
    pub api_key: Option<Secret>,
    /// `anthropic-version` header value.
    pub anthropic_version: String,
    /// Timeout of one provider request.
    pub timeout: Duration,
}

/// The default `anthropic-version` header value.
pub const DEFAULT_ANTHROPIC_VERSION: &str = "2023-06-01";
/// The default timeout of one provider request.
pub const DEFAULT_PROVIDER_TIMEOUT: Duration = Duration::from_secs(120);

impl ProviderSettings {
    /// Settings for `provider` at `base_url`, no key, default version and timeout.
    pub fn new(base_url: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            api_key: None,
            anthropic_version: DEFAULT_ANTHROPIC_VERSION.to_owned(),
            timeout: DEFAULT_PROVIDER_TIMEOUT,
        }
    }
}

/// Sampling and loop parameters (the card's `request_params`).
#[derive(Debug, Clone, PartialEq)]
pub struct RequestParams {
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    pub top_p: Option<f64>,
    /// Top-k sampling (not sent to native OpenAI).
    pub top_k: Option<u32>,
    /// Output token cap of one model turn.
    pub max_tokens: Option<u32>,
    /// Cap on model turns per `send_message` (default 20).
    pub max_iterations: u32,
}

/// The default iteration cap of the agent loop.
pub const DEFAULT_MAX_ITERATIONS: u32 = 20;

impl Default for RequestParams {
    fn default() -> Self {
        Self {
            temperature: None,
            top_p: None,
            top_k: None,
            max_tokens: None,
            max_iterations: DEFAULT_MAX_ITERATIONS,
        }
    }
}

/// What the model can do (`model_capabilities`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelCapabilities {
    /// Accepts image parts.
    pub vision: bool,
    /// Context window in tokens.
    pub context_window: u64,
    /// Output token limit.
    pub max_output_tokens: u64,
}

impl Default for ModelCapabilities {
    fn default() -> Self {
        Self {
            vision: false,
            context_window: 131_072,
            max_output_tokens: 16_384,
        }
    }
}

/// One downstream MCP server the agent uses as tools (`mcp.servers.<name>`).
#[derive(Debug, Clone, PartialEq)]
pub struct DownstreamSettings {
    /// Server key; tools are offered as `{name}__{tool}`.
    pub name: String,
    /// Streamable HTTP endpoint.
    pub url: String,
    /// Configured headers, sent on every request (probes included).
    pub headers: Vec<(String, Secret)>,
    /// Forward the inbound `Authorization: Bearer` of a `send_message` to this server's calls.
    pub forward_inbound_auth: bool,
}

impl DownstreamSettings {
    /// A server with no headers and no forwarding.
    pub fn new(name: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            url: url.into(),
            headers: Vec::new(),
            forward_inbound_auth: false,
        }
    }

    /// Whether a configured `Authorization` header exists (it wins over a forwarded bearer).
    pub fn has_configured_authorization(&self) -> bool {
        self.headers.iter().any(|(name, _)| {
            name.eq_ignore_ascii_case("authorization")
                && (name == "Authorization" || !crate::defect!("fm-explicit-auth-case-sensitive"))
        })
    }
}

/// How long conversation history lives (fast-agent's `instance_scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InstanceScope {
    /// One history shared by every client.
    #[default]
    Shared,
    /// One history per MCP session.
    Connection,
    /// No history; no `{agent}_history` prompt.
    Request,
}

/// `get_health` parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HealthSettings {
    /// Timeout of one downstream probe; also bounds the whole probe phase.
    pub probe_timeout: Duration,
    /// Age after which the LLM provider status is re-probed.
    pub llm_ttl: Duration,
}

impl Default for HealthSettings {
    fn default() -> Self {
        Self {
            probe_timeout: Duration::from_secs(3),
            llm_ttl: Duration::from_secs(60),
        }
    }
}

/// Everything one agent server runs with.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentSettings {
    /// Agent key in `agents.yaml`.
    pub name: String,
    /// The card body: the system instruction.
    pub instruction: String,
    /// The active model.
    pub model: ModelRef,
    /// How to reach the active model's provider.
    pub provider: ProviderSettings,
    /// Sampling and loop parameters.
    pub request_params: RequestParams,
    /// Model capabilities.
    pub capabilities: ModelCapabilities,
    /// Downstream MCP servers, in the card's order.
    pub servers: Vec<DownstreamSettings>,
    /// History scope.
    pub instance_scope: InstanceScope,
    /// Extra `Host` header values accepted besides loopback (the configured `host`).
    pub allowed_hosts: Vec<String>,
    /// `get_health` parameters.
    pub health: HealthSettings,
}

impl AgentSettings {
    /// Settings with defaults everywhere but the name, model and provider.
    pub fn new(name: impl Into<String>, model: ModelRef, provider: ProviderSettings) -> Self {
        Self {
            name: name.into(),
            instruction: String::new(),
            model,
            provider,
            request_params: RequestParams::default(),
            capabilities: ModelCapabilities::default(),
            servers: Vec::new(),
            instance_scope: InstanceScope::default(),
            allowed_hosts: Vec::new(),
            health: HealthSettings::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_in_debug_and_display() {
        let secret = Secret::new("sk-very-secret");
        assert_eq!(format!("{secret:?}"), "[redacted]");
        assert_eq!(format!("{secret}"), "[redacted]");
        assert_eq!(secret.expose(), "sk-very-secret");
        let server = DownstreamSettings {
            headers: vec![("Authorization".into(), Secret::new("Bearer abc"))],
            ..DownstreamSettings::new("m", "http://x/mcp")
        };
        assert!(!format!("{server:?}").contains("abc"));
        assert!(server.has_configured_authorization());
    }
}
