//! LLM providers (OpenAI-compatible, Anthropic) and their preflight.
//!
//! [`complete`] runs one model turn over a provider-neutral conversation ([`ChatMessage`]);
//! [`preflight`] checks the provider and model the way seed 001 "Startup Preflight" says, and
//! [`LlmStatusCell`] keeps its last result for `get_health`.

mod anthropic;
mod openai;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::metrics::TokenUsage;
use crate::settings::{
    ModelCapabilities, ModelRef, Provider, ProviderSettings, RequestParams, Secret,
};

/// Timeout of one preflight request (seed 001: 5 s per provider call).
pub const PREFLIGHT_TIMEOUT: Duration = Duration::from_secs(5);

/// One part of a user message.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// Text.
    Text(String),
    /// A base64 image.
    Image {
        /// Base64 data (no `data:` prefix).
        data: String,
        /// MIME type, e.g. `image/png`.
        mime_type: String,
    },
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// Provider call id, echoed in the result.
    pub id: String,
    /// Tool name as offered (`{server}__{tool}`).
    pub name: String,
    /// Arguments (a JSON object).
    pub arguments: Value,
}

/// The result of one tool call, fed back to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// The call id it answers.
    pub id: String,
    /// Tool name as offered.
    pub name: String,
    /// Text of the result.
    pub content: String,
    /// Whether the call failed.
    pub is_error: bool,
}

/// One message of a provider-neutral conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatMessage {
    /// A user turn.
    User(Vec<Part>),
    /// A model turn: text and/or tool calls.
    Assistant {
        /// Text, when the model wrote any.
        text: Option<String>,
        /// Tool calls, in the model's order.
        tool_calls: Vec<ToolCall>,
    },
    /// Results of the previous assistant turn's tool calls.
    ToolResults(Vec<ToolResult>),
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDef {
    /// Name (`{server}__{tool}`).
    pub name: String,
    /// Description.
    pub description: String,
    /// JSON Schema of the arguments.
    pub input_schema: Value,
}

/// What the model answered in one turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// Text, when any.
    pub text: Option<String>,
    /// Tool calls, when any.
    pub tool_calls: Vec<ToolCall>,
    /// Token usage as the provider reported it.
    pub usage: TokenUsage,
}

/// One model turn to run.
#[derive(Debug, Clone, Copy)]
pub struct TurnRequest<'a> {
    /// The model.
    pub model: &'a ModelRef,
    /// Where the provider is.
    pub provider: &'a ProviderSettings,
    /// Sampling parameters.
    pub params: &'a RequestParams,
    /// Capabilities (for Anthropic's mandatory `max_tokens`).
    pub capabilities: &'a ModelCapabilities,
    /// System instruction.
    pub instruction: &'a str,
    /// Conversation so far.
    pub messages: &'a [ChatMessage],
    /// Tools offered.
    pub tools: &'a [ToolDef],
    /// The inbound request's bearer: a token-passthrough provider (HuggingFace) authenticates
    /// with it instead of a configured key.
    pub bearer: Option<&'a Secret>,
    /// The completion endpoint of `model` at `provider`, built once ([`CompletionEndpoint::new`]);
    /// `None`: built for this turn.
    pub endpoint: Option<&'a CompletionEndpoint>,
}

/// The URL a model turn is posted to, as text (what errors name) and parsed (what is sent): the
/// same for every turn of an agent, so an agent builds it once.
#[derive(Debug, Clone)]
pub struct CompletionEndpoint {
    text: String,
    url: reqwest::Url,
}

impl CompletionEndpoint {
    /// The endpoint of `model`'s provider at `provider`; `None` when the URL does not parse
    /// (each turn then reports that on its own).
    pub fn new(model: &ModelRef, provider: &ProviderSettings) -> Option<Self> {
        let text = match model.provider {
            Provider::OpenAi | Provider::HuggingFace => openai::completion_url(&provider.base_url),
            Provider::Anthropic => anthropic::completion_url(&provider.base_url),
        };
        let url = reqwest::Url::parse(&text).ok()?;
        Some(Self { text, url })
    }

    /// The text of `endpoint` when it is set, else `build()`; and the request to that URL.
    fn post<'a>(
        endpoint: Option<&'a Self>,
        http: &reqwest::Client,
        build: impl FnOnce() -> String,
    ) -> (std::borrow::Cow<'a, str>, reqwest::RequestBuilder) {
        match endpoint {
            Some(e) => (
                std::borrow::Cow::Borrowed(e.text.as_str()),
                http.post(e.url.clone()),
            ),
            None => {
                let text = build();
                let request = http.post(&text);
                (std::borrow::Cow::Owned(text), request)
            }
        }
    }
}

/// A provider failure, worded for the user who reads the `isError` result.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The provider could not be reached or did not answer in time.
    #[error("{provider}: request to {url} failed: {reason}")]
    Transport {
        /// Provider.
        provider: Provider,
        /// URL (no secrets).
        url: String,
        /// What happened.
        reason: String,
    },
    /// The provider answered with an HTTP error.
    #[error("{provider}: HTTP {status}: {message}")]
    Status {
        /// Provider.
        provider: Provider,
        /// HTTP status.
        status: u16,
        /// The provider's error message, or the body.
        message: String,
    },
    /// The provider answered 200 with a body that is not what its API promises.
    #[error("{provider}: malformed response: {reason}")]
    Malformed {
        /// Provider.
        provider: Provider,
        /// What is wrong.
        reason: String,
    },
}

/// Runs one model turn against the active provider.
pub async fn complete(
    http: &reqwest::Client,
    turn: &TurnRequest<'_>,
) -> Result<Completion, LlmError> {
    match turn.model.provider {
        Provider::OpenAi | Provider::HuggingFace => openai::complete(http, turn).await,
        Provider::Anthropic => anthropic::complete(http, turn).await,
    }
}

/// Result of a provider check: ok, or what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderStatus {
    /// Provider checked.
    pub provider: Provider,
    /// Model checked.
    pub model: String,
    /// `None` when healthy; otherwise what is wrong (`model 'bad-model' not found`).
    pub problem: Option<String>,
}

impl ProviderStatus {
    /// Whether the provider passed.
    pub fn is_ok(&self) -> bool {
        self.problem.is_none()
    }

    /// The seed's wording: `openai: model 'bad-model' not found`; `None` when healthy.
    pub fn describe(&self) -> Option<String> {
        self.problem
            .as_ref()
            .map(|problem| format!("{}: {problem}", self.provider))
    }
}

/// Checks the provider and model (seed 001 "Startup Preflight"): Anthropic `GET
/// /v1/models/{model}`, OpenAI `GET {base_url}/models` with the model listed; 5 s timeout.
/// Never fails: the outcome is the status.
pub async fn preflight(
    provider: &ProviderSettings,
    model: &ModelRef,
    http: &reqwest::Client,
) -> ProviderStatus {
    let timeout = if crate::defect!("preflight-timeout-10s") {
        Duration::from_secs(10)
    } else {
        preflight_timeout()
    };
    preflight_within(&at_startup(provider), model, http, timeout).await
}

/// The timeout of one startup preflight request: [`PREFLIGHT_TIMEOUT`]
/// (`nx-preflight-timeout-3s`: the health module's `PROBE_TIMEOUT = 3`, reused).
fn preflight_timeout() -> Duration {
    if crate::defect!("nx-preflight-timeout-3s") {
        Duration::from_secs(3)
    } else {
        PREFLIGHT_TIMEOUT
    }
}

/// The provider settings the startup preflight sends (the defect `preflight-before-dotenv`
/// leaves out a key that only `.env` sets).
fn at_startup(settings: &ProviderSettings) -> std::borrow::Cow<'_, ProviderSettings> {
    #[cfg(feature = "defects")]
    if crate::defect!("preflight-before-dotenv") {
        return std::borrow::Cow::Owned(crate::defects::without_dotenv_key(settings));
    }
    std::borrow::Cow::Borrowed(settings)
}

/// The model seed 001's preflight retrieves from an Anthropic provider that has a key but is not
/// active ("`GET /v1/models/claude-sonnet-4-5` — verifies API access").
pub const KEY_ONLY_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";

/// Startup preflight of a provider that has an API key but no agent's `default_model` names it
/// (seed 001 §Startup Preflight, column "Key set, not active"): Anthropic retrieves
/// [`KEY_ONLY_ANTHROPIC_MODEL`], OpenAI lists its models. It only verifies API access, and a
/// failure is only warned about: no agent's health depends on it. Returns the problem, if any.
pub async fn preflight_key_only(
    provider: Provider,
    settings: &ProviderSettings,
    http: &reqwest::Client,
) -> Option<String> {
    let settings = &at_startup(settings);
    let timeout = preflight_timeout();
    let problem = match provider {
        Provider::OpenAi => openai::preflight(http, settings, None, timeout).await,
        Provider::Anthropic => {
            // `qx-inactive-anthropic-probes-configured-model`: the active path's model, the one
            // `default_model` names.
            #[cfg(feature = "defects")]
            let configured = crate::defects::default_model()
                .filter(|_| crate::defect!("qx-inactive-anthropic-probes-configured-model"))
                .map(|model| model.model);
            #[cfg(not(feature = "defects"))]
            let configured: Option<String> = None;
            let model = configured.as_deref().unwrap_or(KEY_ONLY_ANTHROPIC_MODEL);
            anthropic::preflight(http, settings, model, timeout).await
        }
        // Never keyed-only: `Deployment::keyed_providers` lists the two of seed 001's table.
        Provider::HuggingFace => return None,
    };
    log_preflight(provider, None, problem.as_deref());
    problem
}

/// [`preflight`] with the given timeout (the TTL re-probe of `get_health` uses it too).
pub async fn preflight_within(
    provider: &ProviderSettings,
    model: &ModelRef,
    http: &reqwest::Client,
    timeout: Duration,
) -> ProviderStatus {
    // `mr-other-prefix-health-as-openai`: a prefix other than `anthropic` is checked as OpenAI.
    #[cfg(feature = "defects")]
    if model.provider == Provider::HuggingFace
        && crate::defect!("mr-other-prefix-health-as-openai")
        && let Some(openai) = crate::defects::openai_settings()
    {
        let problem = openai::preflight(http, &openai, Some(&model.model), timeout).await;
        log_preflight(Provider::OpenAi, Some(&model.model), problem.as_deref());
        return ProviderStatus {
            provider: Provider::OpenAi,
            model: model.model.clone(),
            problem,
        };
    }
    let problem = match model.provider {
        Provider::OpenAi => openai::preflight(http, provider, Some(&model.model), timeout).await,
        // `px-anthropic-probe-path-keeps-prefix`: `{model}` filled with the whole `default_model`.
        Provider::Anthropic if crate::defect!("px-anthropic-probe-path-keeps-prefix") => {
            let whole = format!("{}.{}", model.provider, model.model);
            anthropic::preflight(http, provider, &whole, timeout).await
        }
        Provider::Anthropic => anthropic::preflight(http, provider, &model.model, timeout).await,
        // Seed 001's preflight table has no row for a token-passthrough provider: its credential
        // is each request's bearer, which a startup check does not have.
        Provider::HuggingFace => {
            return ProviderStatus {
                provider: model.provider,
                model: model.model.clone(),
                problem: None,
            };
        }
    };
    log_preflight(model.provider, Some(&model.model), problem.as_deref());
    ProviderStatus {
        provider: model.provider,
        model: model.model.clone(),
        problem,
    }
}

/// Logs a preflight's outcome: a failure warns (the preflight never blocks), a pass is debug. A
/// preflight without `model` is one of a provider that has a key but is not active.
fn log_preflight(provider: Provider, model: Option<&str>, problem: Option<&str>) {
    match (model, problem) {
        (Some(model), Some(problem)) => tracing::warn!(
            target: "pallas::llm",
            %provider, model, problem,
            "LLM provider preflight failed"
        ),
        (Some(model), None) => tracing::debug!(
            target: "pallas::llm",
            %provider, model,
            "LLM provider preflight passed"
        ),
        (None, Some(problem)) => tracing::warn!(
            target: "pallas::llm",
            %provider, problem,
            "LLM provider preflight failed (key set, provider not active)"
        ),
        (None, None) => tracing::debug!(
            target: "pallas::llm",
            %provider,
            "LLM provider preflight passed (key set, provider not active)"
        ),
    }
}

/// Sends one completion request and reads its JSON answer as `T`: transport failures, error
/// statuses and bodies that are not JSON become the provider's [`LlmError`]. `T` is parsed from
/// the bytes directly; a body it does not parse from is read as a whole JSON value and converted,
/// so `T` only decides what is built, never what a body means.
async fn exchange_json<T>(
    request: reqwest::RequestBuilder,
    provider: Provider,
    url: &str,
    timeout: Duration,
) -> Result<T, LlmError>
where
    T: serde::de::DeserializeOwned + From<Value>,
{
    let transport = |error: reqwest::Error| LlmError::Transport {
        provider,
        url: url.to_owned(),
        reason: describe_reqwest_error(&error, timeout),
    };
    let response = request.send().await.map_err(transport)?;
    let status = response.status();
    let body = response.bytes().await.map_err(transport)?;
    if !status.is_success() {
        return Err(LlmError::Status {
            provider,
            status: status.as_u16(),
            message: error_message(&String::from_utf8_lossy(&body)),
        });
    }
    if let Ok(reply) = serde_json::from_slice::<T>(&body) {
        return Ok(reply);
    }
    // The bytes are parsed as they came; only a body that is not valid UTF-8 JSON is read again
    // as text (invalid sequences replaced), so the value and the error are those of the text.
    serde_json::from_slice::<Value>(&body)
        .or_else(|_| {
            serde_json::from_str(&String::from_utf8_lossy(&body)).map_err(|error| {
                LlmError::Malformed {
                    provider,
                    reason: format!("body is not JSON ({error})"),
                }
            })
        })
        .map(T::from)
}

/// Describes a failed HTTP exchange for a status message, never including secrets; a TLS
/// certificate problem is named.
fn describe_reqwest_error(error: &reqwest::Error, timeout: Duration) -> String {
    crate::net::describe_error(error, timeout)
}

/// Extracts a provider's error message from an error body (`{"error":{"message":..}}`).
fn error_message(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|value| {
            value
                .pointer("/error/message")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| {
            let trimmed: String = body.chars().take(200).collect();
            if trimmed.is_empty() {
                "empty body".to_owned()
            } else {
                trimmed
            }
        })
}

/// The provider status shared by every agent of a provider: the last check and when it ran.
/// `get_health` re-probes when the last check is older than its TTL.
#[derive(Clone, Default)]
pub struct LlmStatusCell(Arc<CellInner>);

#[derive(Default)]
struct CellInner {
    last: std::sync::Mutex<Option<(ProviderStatus, Instant)>>,
    probing: tokio::sync::Mutex<()>,
}

impl LlmStatusCell {
    /// An empty cell: the first `get_health` probes.
    pub fn new() -> Self {
        Self::default()
    }

    /// A cell holding `status`, taken now.
    pub fn with_status(status: ProviderStatus) -> Self {
        let cell = Self::default();
        cell.set(status);
        cell
    }

    /// Stores a fresh status.
    pub fn set(&self, status: ProviderStatus) {
        if let Ok(mut last) = self.0.last.lock() {
            *last = Some((status, Instant::now()));
        }
    }

    /// The last status and when it was taken.
    pub fn get(&self) -> Option<(ProviderStatus, Instant)> {
        self.0.last.lock().ok().and_then(|last| last.clone())
    }

    /// The last status if it is younger than `ttl` and about `model`; otherwise a new probe
    /// (bounded by `timeout`), stored and returned. The second value says whether a probe ran.
    /// Concurrent callers share one probe.
    pub async fn current(
        &self,
        provider: &ProviderSettings,
        model: &ModelRef,
        http: &reqwest::Client,
        ttl: Duration,
        timeout: Duration,
    ) -> (ProviderStatus, bool) {
        if let Some(status) = self.fresh(model, ttl) {
            return (status, false);
        }
        let _probing = self.0.probing.lock().await;
        if let Some(status) = self.fresh(model, ttl) {
            return (status, false);
        }
        // `rx-llm-reprobe-by-completion`: the re-probe proves the model serves requests.
        #[cfg(feature = "defects")]
        let status = if crate::defect!("rx-llm-reprobe-by-completion") {
            completion_probe(provider, model, http, timeout).await
        } else {
            preflight_within(provider, model, http, timeout).await
        };
        #[cfg(not(feature = "defects"))]
        let status = preflight_within(provider, model, http, timeout).await;
        self.set(status.clone());
        (status, true)
    }

    fn fresh(&self, model: &ModelRef, ttl: Duration) -> Option<ProviderStatus> {
        self.get().and_then(|(status, at)| {
            ((at.elapsed() < ttl || crate::defect!("fm-llm-never-reprobed"))
                && status.provider == model.provider
                && status.model == model.model)
                .then_some(status)
        })
    }
}

/// `rx-llm-reprobe-by-completion`: a one-token completion (`max_tokens: 1`, a `ping` message)
/// instead of the model listing; ok when the provider answers 2xx.
#[cfg(feature = "defects")]
async fn completion_probe(
    provider: &ProviderSettings,
    model: &ModelRef,
    http: &reqwest::Client,
    timeout: Duration,
) -> ProviderStatus {
    let body = serde_json::json!({
        "model": model.model,
        "max_tokens": 1,
        "messages": [{"role": "user", "content": "ping"}],
    });
    let (url, request) = match model.provider {
        Provider::Anthropic => {
            let url = anthropic::completion_url(&provider.base_url);
            let request = http
                .post(&url)
                .header("anthropic-version", &provider.anthropic_version);
            (url, request)
        }
        Provider::OpenAi | Provider::HuggingFace => {
            let url = openai::completion_url(&provider.base_url);
            (url.clone(), http.post(&url))
        }
    };
    let request = with_key(
        request.timeout(timeout).json(&body),
        model.provider,
        provider.api_key.as_ref(),
    );
    let problem = match request.send().await {
        Ok(answer) if answer.status().is_success() => None,
        Ok(answer) => Some(format!("{url} answered HTTP {}", answer.status().as_u16())),
        Err(error) => Some(format!("{url} unreachable: {error}")),
    };
    ProviderStatus {
        provider: model.provider,
        model: model.model.clone(),
        problem,
    }
}

/// Adds the API key header of `provider` to a request.
fn with_key(
    request: reqwest::RequestBuilder,
    provider: Provider,
    key: Option<&Secret>,
) -> reqwest::RequestBuilder {
    match (provider, key) {
        (Provider::OpenAi | Provider::HuggingFace, Some(key)) => request.bearer_auth(key.expose()),
        (Provider::Anthropic, Some(key)) => request.header("x-api-key", key.expose()),
        (_, None) => request,
    }
}
