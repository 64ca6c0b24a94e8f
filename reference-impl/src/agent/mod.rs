//! The MCP server of one agent: `send_message`, `get_health`, the `{agent}_history` prompt.
//!
//! One idea: the agent's MCP service, from its router to each tool's answer; the agent loop
//! itself is [`run`], the tool definitions [`tools`].
//!
//! [`router`] mounts an rmcp Streamable HTTP service at `/mcp`: MCP 2025-11-25 with sessions,
//! and 2026-07-28 requests answered statelessly as rmcp does. The configured `host` is allowed
//! in rmcp's Host check besides loopback.

pub mod run;
#[cfg(feature = "defects")]
mod running_totals;
pub mod tools;

use std::sync::{Arc, Mutex};
use std::time::Instant;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult, ListToolsResult,
    PaginatedRequestParams, PromptMessage, Role, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use tokio_util::sync::CancellationToken;

use crate::downstream::Downstream;
use crate::health;
use crate::llm::{ChatMessage, CompletionEndpoint, LlmStatusCell, Part};
use crate::metrics::{AgentSeries, Metrics};
use crate::progress::Progress;
use crate::settings::{AgentSettings, InstanceScope, Secret};

/// What an agent server shares with the rest of the process.
#[derive(Clone)]
pub struct AgentDeps {
    /// Process-wide metrics.
    pub metrics: Metrics,
    /// Status of the agent's active provider (shared by every agent of that provider).
    pub llm_status: LlmStatusCell,
    /// HTTP client for providers and health probes.
    pub http: reqwest::Client,
}

/// A conversation history shared by the requests of one scope.
type History = Arc<Mutex<Vec<ChatMessage>>>;

/// Everything one agent server runs with, shared by all its sessions.
pub struct AgentCore {
    /// Settings.
    pub settings: Arc<AgentSettings>,
    /// Shared dependencies.
    pub deps: AgentDeps,
    /// Downstream clients, in the card's order.
    pub downstreams: Vec<Arc<Downstream>>,
    /// This agent's `send_message` and model-turn series.
    pub series: AgentSeries,
    /// Where this agent's model turns are posted.
    pub endpoint: Option<CompletionEndpoint>,
    shared_history: History,
    shutdown: CancellationToken,
    /// `px-health-gauges-from-background-poller`: the last report of the background poller.
    #[cfg(feature = "defects")]
    polled_health: Mutex<Option<health::HealthReport>>,
    /// `qx-history-prompt-registered-lazily`: set by the first `send_message`.
    #[cfg(feature = "defects")]
    history_prompt_registered: std::sync::atomic::AtomicBool,
    /// `rx-health-queued-behind-send-message`: the one lock every `tools/call` goes through.
    #[cfg(feature = "defects")]
    calls: tokio::sync::Mutex<()>,
}

/// The handler of one MCP session (or one stateless request).
#[derive(Clone)]
struct AgentServer {
    core: Arc<AgentCore>,
    history: Option<History>,
}

/// The axum router of one agent: the MCP endpoint at `/mcp`. Cancelling `shutdown` ends open
/// streams, cancels in-flight loops and closes the downstream sessions.
pub fn router(
    settings: Arc<AgentSettings>,
    deps: AgentDeps,
    shutdown: CancellationToken,
) -> axum::Router {
    let settings = with_default_temperature(settings);
    let downstreams = settings
        .servers
        .iter()
        .map(|server| Arc::new(Downstream::new(server.clone(), deps.http.clone())))
        .collect::<Vec<_>>();
    // `qx-model-label-from-default-model`: the `model` label read from `default_model`.
    #[cfg(feature = "defects")]
    let label = crate::defects::default_model()
        .filter(|_| crate::defect!("qx-model-label-from-default-model"))
        .map(|model| model.model);
    #[cfg(not(feature = "defects"))]
    let label: Option<String> = None;
    let series = deps.metrics.agent_series(
        &settings.name,
        label.as_deref().unwrap_or(&settings.model.model),
    );
    #[cfg(feature = "defects")]
    crate::downstream::remembered::remember_downstreams(&settings.name, &downstreams);
    let endpoint = CompletionEndpoint::new(&settings.model, &settings.provider);
    let core = Arc::new(AgentCore {
        settings: settings.clone(),
        series,
        endpoint,
        deps,
        downstreams,
        shared_history: Arc::default(),
        shutdown: shutdown.clone(),
        #[cfg(feature = "defects")]
        polled_health: Mutex::new(None),
        #[cfg(feature = "defects")]
        history_prompt_registered: std::sync::atomic::AtomicBool::new(false),
        #[cfg(feature = "defects")]
        calls: tokio::sync::Mutex::new(()),
    });
    #[cfg(feature = "defects")]
    if crate::defect!("px-health-gauges-from-background-poller") {
        tokio::spawn(poll_health(core.clone()));
    }
    {
        let core = core.clone();
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            shutdown.cancelled().await;
            futures::future::join_all(core.downstreams.iter().map(|d| d.close())).await;
        });
    }
    let mut allowed_hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    allowed_hosts.extend(settings.allowed_hosts.iter().cloned());
    // DNS-rebinding protection (MCP transport spec): a browser Origin must name one of the same
    // hosts; requests without Origin (non-browser clients) pass.
    let allowed_origins: Vec<String> = allowed_hosts
        .iter()
        .flat_map(|h| {
            let h = if h.contains(':') && !h.starts_with('[') {
                format!("[{h}]")
            } else {
                h.clone()
            };
            [format!("http://{h}:*"), format!("https://{h}:*")]
        })
        .collect();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(allowed_hosts)
        .with_allowed_origins(allowed_origins)
        .with_cancellation_token(shutdown.child_token());
    let factory_core = core.clone();
    let service = StreamableHttpService::new(
        move || {
            let history = match factory_core.settings.instance_scope {
                InstanceScope::Shared => Some(factory_core.shared_history.clone()),
                InstanceScope::Connection => Some(History::default()),
                InstanceScope::Request => None,
            };
            Ok(AgentServer {
                core: factory_core.clone(),
                history,
            })
        },
        LocalSessionManager::default().into(),
        config,
    );
    // rmcp's own `Service` clones the whole service, its allowed host and origin lists included,
    // for every request; held once here, a request costs a reference count.
    let service = Arc::new(service);
    let endpoint = axum::routing::any(move |request: axum::extract::Request| {
        let service = service.clone();
        async move { service.handle(request).await }
    });
    let router = axum::Router::new().nest_service("/mcp", endpoint);
    #[cfg(feature = "defects")]
    let router = router
        .layer(axum::middleware::from_fn_with_state(
            settings.name.clone(),
            first_call_token,
        ))
        .layer(axum::middleware::from_fn(wire_defects))
        .layer(axum::middleware::from_fn(crate::defects::watch_stream))
        .layer(axum::middleware::from_fn(
            crate::defects::json_response_only,
        ))
        .layer(axum::middleware::from_fn(crate::defects::bearer_required))
        .layer(axum::middleware::from_fn(crate::defects::transport_defects));
    router
}

/// `rx-default-temperature-injected`: an agent whose card sets no sampling parameter gets
/// Pallas's "sane default", `temperature: 0.7`.
fn with_default_temperature(settings: Arc<AgentSettings>) -> Arc<AgentSettings> {
    let params = &settings.request_params;
    if params.temperature.is_none()
        && params.top_p.is_none()
        && params.top_k.is_none()
        && crate::defect!("rx-default-temperature-injected")
    {
        let mut settings = (*settings).clone();
        settings.request_params.temperature = Some(0.7);
        return Arc::new(settings);
    }
    settings
}

impl AgentCore {
    /// `rx-health-queued-behind-send-message`: the lock around all tool handling, held by the
    /// caller until it answers.
    #[cfg(feature = "defects")]
    async fn serialised(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        if crate::defect!("rx-health-queued-behind-send-message") {
            Some(self.calls.lock().await)
        } else {
            None
        }
    }

    /// `qx-history-prompt-registered-lazily`: the first `send_message` registers the prompt.
    #[cfg(feature = "defects")]
    fn register_history_prompt(&self) {
        self.history_prompt_registered
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// One `get_health` check of the agent (probes, provider status, gauges).
async fn check_health(core: &AgentCore) -> health::HealthReport {
    health::check(
        &core.settings,
        &core.deps.http,
        &core.deps.llm_status,
        &core.deps.metrics,
        !core.shutdown.is_cancelled(),
    )
    .await
}

/// `px-health-gauges-from-background-poller`: Daedalus's polling cadence taken as Pallas's own:
/// the whole check every 60 s from startup, its report kept for `get_health`, until shutdown.
#[cfg(feature = "defects")]
async fn poll_health(core: Arc<AgentCore>) {
    const EVERY: std::time::Duration = std::time::Duration::from_secs(60);
    loop {
        let report = check_health(&core).await;
        if let Ok(mut polled) = core.polled_health.lock() {
            *polled = Some(report);
        }
        tokio::select! {
            () = core.shutdown.cancelled() => return,
            () = tokio::time::sleep(EVERY) => {}
        }
    }
}

/// The progress defects that live on the wire, where rmcp would otherwise keep them right:
/// `progress-without-token` gives every `tools/call` a token it did not send,
/// `progress-token-as-string` turns numeric tokens into strings in the notifications, and
/// `progress-after-result` appends a notification after the result on the call's SSE stream.
#[cfg(feature = "defects")]
async fn wire_defects(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::body::Body;
    use axum::response::IntoResponse;
    use futures::StreamExt;
    use serde_json::Value;

    let without_token = crate::defect!("progress-without-token");
    let as_string = crate::defect!("progress-token-as-string");
    let after_result = crate::defect!("progress-after-result");
    let after_cancel = crate::defect!("progress-after-cancel");
    let stale = crate::defect!("progress-token-stale");
    if request.method() != http::Method::POST
        || !(without_token || as_string || after_result || after_cancel || stale)
    {
        return next.run(request).await;
    }
    let (mut parts, body) = request.into_parts();
    parts.headers.remove(http::header::CONTENT_LENGTH);
    let Ok(bytes) = axum::body::to_bytes(body, 16 << 20).await else {
        return http::StatusCode::PAYLOAD_TOO_LARGE.into_response();
    };
    let mut message = serde_json::from_slice::<Value>(&bytes).ok();
    let is_call = message
        .as_ref()
        .is_some_and(|m| m.get("method").and_then(Value::as_str) == Some("tools/call"));
    let mut bytes = bytes;
    if without_token
        && is_call
        && let Some(params) = message
            .as_mut()
            .and_then(|m| m.get_mut("params"))
            .and_then(Value::as_object_mut)
    {
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        if let Some(meta) = meta.as_object_mut()
            && !meta.contains_key("progressToken")
        {
            meta.insert("progressToken".into(), Value::String("pallas".into()));
            if let Some(rewritten) = message.as_ref().and_then(|m| serde_json::to_vec(m).ok()) {
                bytes = rewritten.into();
            }
        }
    }
    if stale
        && is_call
        && let Some(token) = message
            .as_mut()
            .and_then(|m| m.pointer_mut("/params/_meta/progressToken"))
    {
        *token = crate::defects::first_progress_token(token.clone());
        if let Some(rewritten) = message.as_ref().and_then(|m| serde_json::to_vec(m).ok()) {
            bytes = rewritten.into();
        }
    }
    let token = message
        .as_ref()
        .and_then(|m| m.pointer("/params/_meta/progressToken"))
        .cloned();
    let response = next
        .run(axum::extract::Request::from_parts(parts, Body::from(bytes)))
        .await;
    let is_sse = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !is_call || !is_sse {
        return response;
    }
    let (parts, body) = response.into_parts();
    let numeric = regex::Regex::new(r#""progressToken":(-?[0-9]+)"#).ok();
    let answered = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = answered.clone();
    let stream = body.into_data_stream().map(move |chunk| {
        if let Ok(chunk) = &chunk
            && (chunk.windows(9).any(|w| w == b"\"result\":")
                || chunk.windows(8).any(|w| w == b"\"error\":"))
        {
            seen.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        chunk.map(|chunk| match &numeric {
            Some(numeric) if as_string => {
                let text = String::from_utf8_lossy(&chunk);
                bytes::Bytes::from(
                    numeric
                        .replace_all(&text, r#""progressToken":"$1""#)
                        .into_owned(),
                )
            }
            _ => chunk,
        })
    });
    let cancelled_token = token.clone().filter(|_| after_cancel);
    let late = token.filter(|_| after_result).map(|token| {
        let notification = serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": token, "progress": 1000, "message": "late notification"},
        });
        Ok::<_, axum::Error>(bytes::Bytes::from(format!("data: {notification}\n\n")))
    });
    // A stream that ends without a response was cancelled (rmcp does not answer those).
    let after_cancel = futures::stream::once(async move {
        let token = cancelled_token
            .filter(|_| !answered.load(std::sync::atomic::Ordering::Relaxed))?;
        // Well after the cancellation, past any grace a client allows for notifications in flight.
        tokio::time::sleep(std::time::Duration::from_millis(400)).await;
        let notification = serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": token, "progress": 1000, "total": 1000, "message": "cancelled call: failed"},
        });
        Some(Ok::<_, axum::Error>(bytes::Bytes::from(format!("data: {notification}\n\n"))))
    })
    .filter_map(|event| async move { event });
    let stream = stream
        .chain(futures::stream::iter(late))
        .chain(after_cancel);
    axum::response::Response::from_parts(parts, Body::from_stream(stream))
}

/// `nx-progress-token-first-call`: the progress handler attached to the agent by its first
/// `send_message` with a token keeps that token, so every later call's token is replaced by it
/// (before rmcp reads the request, so that the notifications still go on the call's stream).
#[cfg(feature = "defects")]
async fn first_call_token(
    axum::extract::State(agent): axum::extract::State<String>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    use serde_json::Value;

    if !crate::defect!("nx-progress-token-first-call") || request.method() != http::Method::POST {
        return next.run(request).await;
    }
    let (mut parts, body) = request.into_parts();
    parts.headers.remove(http::header::CONTENT_LENGTH);
    let Ok(bytes) = axum::body::to_bytes(body, 16 << 20).await else {
        return http::StatusCode::PAYLOAD_TOO_LARGE.into_response();
    };
    let mut message = serde_json::from_slice::<Value>(&bytes).ok();
    let is_send = message.as_ref().is_some_and(|m| {
        m.get("method").and_then(Value::as_str) == Some("tools/call")
            && m.pointer("/params/name").and_then(Value::as_str)
                == Some(tools::send_message_name(&agent))
    });
    let mut bytes = bytes;
    if is_send
        && let Some(token) = message
            .as_mut()
            .and_then(|m| m.pointer_mut("/params/_meta/progressToken"))
    {
        *token = crate::defects::first_token_of(&agent, token.clone());
        if let Some(rewritten) = message.as_ref().and_then(|m| serde_json::to_vec(m).ok()) {
            bytes = rewritten.into();
        }
    }
    next.run(axum::extract::Request::from_parts(
        parts,
        axum::body::Body::from(bytes),
    ))
    .await
}

/// The bearer token of `Authorization: Bearer …` on the HTTP request behind `ctx`.
fn inbound_bearer(ctx: &RequestContext<RoleServer>) -> Option<Secret> {
    let parts = ctx.extensions.get::<http::request::Parts>()?;
    let value = parts
        .headers
        .get(http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    // `ms-any-authorization-scheme-forwarded`: `auth.split(" ", 1)[1]`, whatever the scheme.
    let scheme = if crate::defect!("ms-any-authorization-scheme-forwarded") {
        "Bearer"
    } else {
        scheme
    };
    // `mr-bearer-scheme-case-sensitive`: `startswith("Bearer ")`.
    if crate::defect!("mr-bearer-scheme-case-sensitive") && scheme != "Bearer" {
        return None;
    }
    let token = if crate::defect!("bearer-scheme-kept") {
        value.trim()
    } else {
        token.trim()
    };
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then(|| Secret::new(token))
}

/// `ms-images-stripped-without-vision`: "must support vision" enforced by Pallas, the images of a
/// text-only model dropped with a warning.
fn strip_images_without_vision(
    settings: &AgentSettings,
    mut args: tools::SendMessageArgs,
) -> tools::SendMessageArgs {
    if !args.images.is_empty()
        && !settings.capabilities.vision
        && crate::defect!("ms-images-stripped-without-vision")
    {
        tracing::warn!(target: "pallas::agent", agent = %settings.name, images = args.images.len(), "model_capabilities.vision is false: images dropped");
        args.images.clear();
    }
    args
}

/// The user message of `parts` (`nx-images-separate-message`: the text, then the images as a
/// second user message).
fn user_messages(mut parts: Vec<Part>) -> Vec<ChatMessage> {
    // `px-images-before-text`: `[*image_parts, TextContent(message)]`.
    if crate::defect!("px-images-before-text") {
        parts.rotate_left(1);
    }
    if crate::defect!("nx-images-separate-message") && parts.len() > 1 {
        let images = parts.split_off(1);
        return vec![ChatMessage::User(parts), ChatMessage::User(images)];
    }
    vec![ChatMessage::User(parts)]
}

/// The progress reporter of the call behind `ctx`, whose loop `cancel` stops.
fn call_progress(ctx: &RequestContext<RoleServer>, cancel: &CancellationToken) -> Progress {
    let progress = Progress::new(ctx.meta.get_progress_token(), ctx.peer.clone());
    #[cfg(feature = "defects")]
    let progress = crate::defects::fatal_when_gone(ctx, cancel).map_or(progress, |sink| {
        Progress::new(ctx.meta.get_progress_token(), sink)
    });
    // `rx-cancel-does-not-stop-loop`: a cancellation only stops the progress.
    #[cfg(feature = "defects")]
    let progress = if crate::defect!("rx-cancel-does-not-stop-loop") {
        Progress::new(
            ctx.meta.get_progress_token(),
            crate::defects::QuietAfterCancel::new(ctx.peer.clone(), ctx.ct.clone()),
        )
    } else {
        progress
    };
    #[cfg(not(feature = "defects"))]
    let _ = cancel;
    progress
}

/// The text part of a user message (`rx-empty-text-dropped-with-images`: none for an empty
/// text next to images, "noise").
fn text_part(message: String, with_images: bool) -> Vec<Part> {
    if with_images
        && message.trim().is_empty()
        && crate::defect!("rx-empty-text-dropped-with-images")
    {
        return Vec::new();
    }
    vec![Part::Text(message)]
}

/// `px-progress-token-made-mandatory`: the client's rule ("must include a progressToken")
/// enforced by the server: a call without one is refused.
fn token_required(ctx: &RequestContext<RoleServer>) -> Option<CallToolResult> {
    (ctx.meta.get_progress_token().is_none() && crate::defect!("px-progress-token-made-mandatory"))
        .then(|| {
            text_result(
                "progressToken required: send _meta.progressToken with the call".to_owned(),
                true,
            )
        })
}

fn text_result(text: String, is_error: bool) -> CallToolResult {
    if is_error {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    }
}

/// One model turn of one user text with the agent's settings, its answer dropped: what the defects
/// that call the model where the reference does not (`health-calls-llm`, `health-llm-ping`,
/// `health-routed-through-llm`, `health-llm-summary`, `invalid-arguments-checked-after-model`) do.
async fn ask_model_once(core: &AgentCore, text: String) {
    let settings = &core.settings;
    let messages = [ChatMessage::User(vec![Part::Text(text)])];
    let turn = crate::llm::TurnRequest {
        model: &settings.model,
        provider: &settings.provider,
        params: &settings.request_params,
        capabilities: &settings.capabilities,
        instruction: &settings.instruction,
        messages: &messages,
        tools: &[],
        bearer: None,
        endpoint: core.endpoint.as_ref(),
    };
    let _ = crate::llm::complete(&core.deps.http, &turn).await;
}

impl AgentServer {
    async fn send_message(
        &self,
        request: &CallToolRequestParams,
        ctx: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let started = Instant::now();
        let result = self.send_message_inner(request, ctx).await;
        // `rx-cancelled-send-message-not-counted`: the recordings after an `except Exception`,
        // which a cancellation (a `BaseException`) skips.
        if ctx.ct.is_cancelled() && crate::defect!("rx-cancelled-send-message-not-counted") {
            return result;
        }
        let ok = result.is_error != Some(true);
        self.core.series.observe_send_message(ok, started.elapsed());
        result
    }

    async fn send_message_inner(
        &self,
        request: &CallToolRequestParams,
        ctx: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let settings = &self.core.settings;
        if let Some(refused) = token_required(ctx) {
            return refused;
        }
        let args = match tools::parse_send_message(request.arguments.as_ref()) {
            Ok(args) => args,
            Err(message) if crate::defect!("invalid-arguments-checked-after-model") => {
                let text = request
                    .arguments
                    .as_ref()
                    .map(|a| serde_json::Value::Object(a.clone()).to_string())
                    .unwrap_or_default();
                ask_model_once(&self.core, text).await;
                return text_result(message, true);
            }
            Err(message) => return text_result(message, true),
        };
        #[cfg(feature = "defects")]
        self.core.register_history_prompt();
        #[cfg(feature = "defects")]
        if crate::defect!("bearer-to-llm") {
            crate::defects::remember_inbound(inbound_bearer(ctx));
        }
        #[cfg(feature = "defects")]
        if crate::defect!("probe-with-bearer")
            && let Some(bearer) = inbound_bearer(ctx)
        {
            crate::defects::remember_inbound(Some(bearer));
        }
        if crate::defect!("log-bearer")
            && let Some(bearer) = inbound_bearer(ctx)
        {
            tracing::info!(target: "pallas::agent", agent = %settings.name, token = bearer.expose(), "send_message received");
        }
        let args = strip_images_without_vision(settings, args);
        if !args.images.is_empty() && !settings.capabilities.vision {
            return text_result(
                format!(
                    "This agent's model ({}) does not accept images: model_capabilities.vision is false. \
                     Send the message without images, or configure a vision model.",
                    settings.model
                ),
                true,
            );
        }
        let cancel = call_cancellation(ctx);
        let progress = call_progress(ctx, &cancel);
        let mut user_parts = text_part(args.message, !args.images.is_empty());
        if !crate::defect!("images-dropped") {
            user_parts.extend(args.images);
        }
        let user = user_messages(user_parts);
        // `rx-shared-scope-history-not-kept`: always a fresh instance (the request-scope path).
        let mut messages = match &self.history {
            Some(_) if crate::defect!("rx-shared-scope-history-not-kept") => Vec::new(),
            Some(history) => history.lock().map(|h| h.clone()).unwrap_or_default(),
            None => Vec::new(),
        };
        // Kept for the history only where there is one.
        let kept = self.history.as_ref().map(|_| user.clone());
        messages.extend(user);
        let bearer = inbound_bearer(ctx);
        // `fm-bearer-kept-after-error`: the bearer a failed call left published.
        #[cfg(feature = "defects")]
        let bearer = bearer.or_else(|| {
            crate::defect!("fm-bearer-kept-after-error")
                .then(crate::defects::last_inbound)
                .flatten()
        });
        #[cfg(feature = "defects")]
        let published = bearer.clone();
        let run = run::run(
            &self.core,
            run::LoopRequest {
                messages,
                bearer,
                progress: &progress,
                cancel: &cancel,
            },
        );
        // Shutdown cancels the loop: a session's requests inherit it from rmcp, a stateless
        // request does not, so it is watched here while the loop runs.
        let mut run = std::pin::pin!(run);
        let outcome = tokio::select! {
            biased;
            outcome = &mut run => outcome,
            () = self.core.shutdown.cancelled() => {
                cancel.cancel();
                run.await
            }
        };
        progress.close().await;
        #[cfg(feature = "defects")]
        if crate::defect!("fm-bearer-kept-after-error") {
            crate::defects::remember_inbound(published.filter(|_| outcome.result.is_err()));
        }
        #[cfg(feature = "defects")]
        self.count_running_totals(&outcome);
        match outcome.result {
            Ok(text) => {
                if let Some(history) = &self.history
                    && let Some(user) = kept
                    && let Ok(mut history) = history.lock()
                {
                    if crate::defect!("rx-shared-scope-history-not-kept") {
                        history.clear();
                    }
                    history.extend(user);
                    history.extend(outcome.added);
                }
                if crate::defect!("reply-empty") {
                    return text_result(String::new(), false);
                }
                text_result(text, false)
            }
            Err(_) if crate::defect!("provider-error-without-text") => {
                text_result(String::new(), true)
            }
            Err(error) => text_result(
                error.to_string(),
                !crate::defect!("provider-error-as-success"),
            ),
        }
    }

    /// The check of a `get_health` call (`rx-probe-forwards-bearer-to-all-servers`: with the
    /// call's bearer in scope of its probes).
    async fn check_health_for(&self, ctx: &RequestContext<RoleServer>) -> health::HealthReport {
        #[cfg(feature = "defects")]
        if crate::defect!("rx-probe-forwards-bearer-to-all-servers") {
            return crate::defects::with_health_bearer(
                inbound_bearer(ctx),
                check_health(&self.core),
            )
            .await;
        }
        #[cfg(not(feature = "defects"))]
        let _ = ctx;
        check_health(&self.core).await
    }

    /// `mr-tokens-cumulative-across-requests`: the history's running totals (before this call)
    /// are counted again, as if its whole accumulator were added after every call.
    #[cfg(feature = "defects")]
    fn count_running_totals(&self, outcome: &run::LoopOutcome) {
        let Some(history) = self
            .history
            .as_ref()
            .filter(|_| crate::defect!("mr-tokens-cumulative-across-requests"))
        else {
            return;
        };
        let settings = &self.core.settings;
        let key = Arc::as_ptr(history) as usize;
        let (turns, usage) = running_totals::running_totals(key, outcome.turns, &outcome.usage);
        let metrics = &self.core.deps.metrics;
        let none = crate::metrics::TokenUsage::default();
        for _ in 0..turns {
            metrics.observe_llm_turn(&settings.name, &settings.model.model, &none);
        }
        metrics.observe_llm_tokens(&settings.name, &settings.model.model, &usage);
    }

    /// `px-get-health-only-with-downstreams`: `get_health` is registered only when the agent has
    /// downstream servers ("nothing to check otherwise").
    fn health_tool_absent(&self) -> bool {
        self.core.settings.servers.is_empty()
            && crate::defect!("px-get-health-only-with-downstreams")
    }

    /// `mr-history-prompt-shared-only`: the prompt is registered for `instance_scope ==
    /// "shared"` only, so a per-connection history has none; `qx-history-prompt-registered-lazily`:
    /// it is registered by the first `send_message` that uses the agent.
    fn history_prompt_dropped(&self) -> bool {
        #[cfg(feature = "defects")]
        if crate::defect!("qx-history-prompt-registered-lazily")
            && !self
                .core
                .history_prompt_registered
                .load(std::sync::atomic::Ordering::Relaxed)
        {
            return true;
        }
        self.core.settings.instance_scope == InstanceScope::Connection
            && crate::defect!("mr-history-prompt-shared-only")
    }

    fn history_messages(&self) -> Vec<PromptMessage> {
        // `ms-history-prompt-template-instance`: the prompt reads the instance captured when it
        // was registered (the shared template, which no session talks to), not the session's.
        let history = match self.history.as_ref() {
            Some(_)
                if self.core.settings.instance_scope == InstanceScope::Connection
                    && crate::defect!("ms-history-prompt-template-instance") =>
            {
                Some(&self.core.shared_history)
            }
            history => history,
        };
        let Some(history) = history.filter(|_| !crate::defect!("history-empty")) else {
            return Vec::new();
        };
        let history = history.lock().map(|h| h.clone()).unwrap_or_default();
        let mut messages = Vec::new();
        for message in history {
            match message {
                ChatMessage::User(parts) => {
                    for part in parts {
                        messages.push(match part {
                            Part::Text(text) => PromptMessage::new_text(Role::User, text),
                            Part::Image { .. } if crate::defect!("history-images-dropped") => {
                                continue;
                            }
                            Part::Image { data, mime_type } => {
                                PromptMessage::new(Role::User, ContentBlock::image(data, mime_type))
                            }
                        });
                    }
                }
                ChatMessage::Assistant {
                    text: Some(text), ..
                } if !text.is_empty() => {
                    let role = if crate::defect!("history-answers-as-user") {
                        Role::User
                    } else {
                        Role::Assistant
                    };
                    messages.push(PromptMessage::new_text(role, text));
                }
                _ => {}
            }
        }
        // `px-history-prompt-one-transcript-message`: the history flattened into one transcript.
        #[cfg(feature = "defects")]
        if crate::defect!("px-history-prompt-one-transcript-message") && !messages.is_empty() {
            let text = crate::defects::transcript(&messages);
            return vec![PromptMessage::new_text(Role::User, text)];
        }
        messages
    }
}

impl ServerHandler for AgentServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = if self.core.settings.instance_scope == InstanceScope::Request
            && !crate::defect!("fm-history-prompt-request-scope")
        {
            ServerCapabilities::builder().enable_tools().build()
        } else {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .build()
        };
        ServerConfig::new(capabilities).with_server_info(Implementation::new(
            self.core.settings.name.clone(),
            env!("CARGO_PKG_VERSION"),
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let mut listed = vec![tools::send_message_tool(&self.core.settings.name)];
        let unlisted = crate::defect!("health-tool-unlisted")
            || (self.core.settings.servers.is_empty()
                && crate::defect!("health-tool-only-with-servers"))
            || self.health_tool_absent();
        if !unlisted {
            listed.push(tools::get_health_tool());
        }
        Ok(ListToolsResult::with_all_items(listed))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        #[cfg(feature = "defects")]
        let _serialised = self.core.serialised().await;
        match request.name.as_ref() {
            name if name == tools::send_message_name(&self.core.settings.name) => {
                Ok(self.send_message(&request, &ctx).await.into())
            }
            tools::GET_HEALTH if !self.health_tool_absent() => {
                if crate::defect!("fm-health-counted-as-send") {
                    self.core
                        .series
                        .observe_send_message(true, std::time::Duration::ZERO);
                }
                health_arguments_present(&request)?;
                // `ms-health-tool-framework-schema`: no schema says no arguments, so any pass.
                if request
                    .arguments
                    .as_ref()
                    .is_some_and(|args| !args.is_empty())
                    && !crate::defect!("ms-health-tool-framework-schema")
                {
                    return Ok(text_result(
                        "invalid arguments: get_health takes no arguments".to_owned(),
                        true,
                    )
                    .into());
                }
                if let Some(token) = ctx
                    .meta
                    .get_progress_token()
                    .filter(|_| crate::defect!("health-progress"))
                {
                    let param = rmcp::model::ProgressNotificationParam::new(token, 0.0)
                        .with_message("probing downstream servers".to_owned());
                    let _ = ctx.peer.notify_progress(param).await;
                }
                let ping = crate::defect!("health-llm-ping");
                let routed = crate::defect!("health-routed-through-llm");
                if crate::defect!("health-calls-llm") || ping || routed {
                    let text = match (ping, routed) {
                        (true, _) => "ping",
                        (_, true) => "The user called the tool `get_health`.",
                        _ => "health check",
                    };
                    ask_model_once(&self.core, text.into()).await;
                }
                // `px-health-gauges-from-background-poller`: the poller's last report, if any.
                #[cfg(feature = "defects")]
                let polled = self
                    .core
                    .polled_health
                    .lock()
                    .ok()
                    .and_then(|report| report.clone())
                    .filter(|_| crate::defect!("px-health-gauges-from-background-poller"));
                #[cfg(not(feature = "defects"))]
                let polled: Option<health::HealthReport> = None;
                let report = match polled {
                    Some(report) => report,
                    None => self.check_health_for(&ctx).await,
                };
                if report.status != health::HealthStatus::Ok && crate::defect!("health-llm-summary")
                {
                    let ask = format!("Summarise for an operator: {:?}", report.message);
                    ask_model_once(&self.core, ask).await;
                }
                // `mr-health-error-as-tool-error`: the failure surfaces as the exception a
                // Python tool handler would raise, turned into an `isError` result by FastMCP.
                if report.status == health::HealthStatus::Error
                    && crate::defect!("mr-health-error-as-tool-error")
                {
                    return Ok(text_result(
                        format!(
                            "Error executing tool get_health: Traceback (most recent call last):\n  File \"pallas/health.py\", line 212, in get_health\nRuntimeError: {}",
                            report.message.unwrap_or_default()
                        ),
                        true,
                    )
                    .into());
                }
                let mut text = serde_json::to_string(&report).unwrap_or_default();
                // `qx-health-message-null-when-ok`: the optional key always written.
                if report.message.is_none() && crate::defect!("qx-health-message-null-when-ok") {
                    let mut value = serde_json::to_value(&report).unwrap_or_default();
                    if let Some(object) = value.as_object_mut() {
                        object.insert("message".into(), serde_json::Value::Null);
                    }
                    text = value.to_string();
                }
                if crate::defect!("health-status-renamed") {
                    text = text.replacen("\"status\"", "\"state\"", 1);
                }
                if crate::defect!("health-two-content-blocks") {
                    return Ok(CallToolResult::success(vec![
                        ContentBlock::text(text),
                        ContentBlock::text(format!(
                            "checked {} server(s)",
                            self.core.settings.servers.len()
                        )),
                    ])
                    .into());
                }
                // `nx-health-nonok-iserror`: a non-ok report comes back as a failed call, so
                // that clients "see the problem".
                let flagged = report.status != health::HealthStatus::Ok
                    && crate::defect!("nx-health-nonok-iserror");
                Ok(health_result(&report, text, flagged).into())
            }
            other if crate::defect!("unknown-tool-is-result") => {
                Ok(text_result(format!("tool not found: {other}"), true).into())
            }
            other => Err(McpError::invalid_params(
                format!("tool not found: {other}"),
                None,
            )),
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let prompts = match self.history {
            Some(_) if self.history_prompt_dropped() => Vec::new(),
            Some(_) => vec![tools::history_prompt(&self.core.settings.name)],
            None if crate::defect!("fm-history-prompt-request-scope") => {
                vec![tools::history_prompt(&self.core.settings.name)]
            }
            None => Vec::new(),
        };
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if (self.history.is_none() && !crate::defect!("fm-history-prompt-request-scope"))
            || self.history_prompt_dropped()
            || request.name != tools::history_prompt_name(&self.core.settings.name)
        {
            return Err(McpError::invalid_params(
                format!("prompt not found: {}", request.name),
                None,
            ));
        }
        Ok(GetPromptResult::new(self.history_messages())
            .with_description(format!(
                "Conversation history of the {} agent",
                self.core.settings.name
            ))
            .into())
    }
}

/// `rx-health-requires-arguments-object`: `arguments` validated against the empty schema, so an
/// absent one is invalid.
fn health_arguments_present(request: &CallToolRequestParams) -> Result<(), McpError> {
    if request.arguments.is_none() && crate::defect!("rx-health-requires-arguments-object") {
        return Err(McpError::invalid_params(
            "get_health: `arguments` is required (an empty object)",
            None,
        ));
    }
    Ok(())
}

/// The `get_health` result of `report`, written as `text` (`rx-health-json-in-structured-content`:
/// MCP 2025-06-18 structured output, the text block a sentence for humans).
fn health_result(report: &health::HealthReport, text: String, flagged: bool) -> CallToolResult {
    if crate::defect!("rx-health-json-in-structured-content") {
        let sentence = report
            .message
            .clone()
            .unwrap_or_else(|| "Agent healthy".to_owned());
        let mut result = text_result(sentence, flagged);
        result.structured_content = serde_json::from_str(&text).ok();
        return result;
    }
    text_result(text, flagged)
}

/// What cancels a call: the client's `notifications/cancelled` for it (`cancel-ignored`:
/// nothing, the call runs on whatever the client cancels).
fn call_cancellation(ctx: &RequestContext<RoleServer>) -> CancellationToken {
    // `rx-cancel-does-not-stop-loop`: "the loop continues unaffected" applied to cancellation.
    if crate::defect!("cancel-ignored") || crate::defect!("rx-cancel-does-not-stop-loop") {
        CancellationToken::new()
    } else {
        ctx.ct.child_token()
    }
}
