//! The agent loop of one `send_message`: model turns, concurrent downstream tool calls, results
//! fed back, until final text or the iteration cap.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use futures::future::join_all;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::AgentCore;
use crate::downstream::{Downstream, DownstreamError, Lease, outbound_bearer};
use crate::llm::{self, ChatMessage, ToolCall, ToolDef, ToolResult, TurnRequest};
use crate::metrics::TokenUsage;
use crate::progress::Progress;
use crate::settings::{DownstreamSettings, Secret};

/// Why a loop ended without final text.
#[derive(Debug, thiserror::Error)]
pub enum LoopError {
    /// The provider failed.
    #[error("LLM request failed: {0}")]
    Llm(#[from] llm::LlmError),
    /// The model kept calling tools.
    #[error(
        "the agent stopped after {0} model turns without a final answer (request_params.max_iterations)"
    )]
    IterationCap(u32),
    /// The client cancelled the request.
    #[error("cancelled by the client")]
    Cancelled,
    /// `qx-progress-send-failure-aborts-call`: a progress notification could not be sent.
    #[cfg(feature = "defects")]
    #[error("progress notification could not be sent: {0}")]
    ProgressSend(String),
}

/// What one loop produced: the messages it added (after the user message) and the final text.
pub struct LoopOutcome {
    /// Messages added to the conversation.
    pub added: Vec<ChatMessage>,
    /// Final text, or why there is none.
    pub result: Result<String, LoopError>,
    /// Model turns the loop took.
    pub turns: u64,
    /// Tokens those turns reported, together.
    pub usage: TokenUsage,
}

impl LoopOutcome {
    /// The outcome of a loop that added `added` (one assistant message per model turn).
    fn new(added: Vec<ChatMessage>, result: Result<String, LoopError>, usage: TokenUsage) -> Self {
        let turns = added
            .iter()
            .filter(|m| matches!(m, ChatMessage::Assistant { .. }))
            .count() as u64;
        Self {
            added,
            result,
            turns,
            usage,
        }
    }
}

/// One tool offered to the model, and where it goes.
struct Route {
    downstream: Arc<Downstream>,
    lease: Arc<Lease>,
    tool: String,
}

/// Per-request context of the loop.
pub struct LoopRequest<'a> {
    /// Conversation so far, user message last.
    pub messages: Vec<ChatMessage>,
    /// Inbound bearer of the `send_message` request.
    pub bearer: Option<Secret>,
    /// Progress reporter of the request.
    pub progress: &'a Progress,
    /// Cancelled by `notifications/cancelled` (or shutdown).
    pub cancel: &'a CancellationToken,
}

/// The bearer one outbound call to `server` carries ([`outbound_bearer`]); the
/// `bearer-per-agent` defect forwards it to every server of an agent that has one opted in.
fn forwarded_bearer(
    core: &AgentCore,
    server: &DownstreamSettings,
    inbound: Option<&Secret>,
) -> Option<Secret> {
    if crate::defect!("bearer-per-agent")
        && core.settings.servers.iter().any(|s| s.forward_inbound_auth)
    {
        return inbound.cloned();
    }
    // `nx-bearer-never-revoked`: `publish_bearer` only when there is a bearer, no
    // `revoke_bearer`: a call without one finds the previous caller's still published.
    #[cfg(feature = "defects")]
    if crate::defect!("nx-bearer-never-revoked") && server.forward_inbound_auth {
        let published = crate::defects::published_bearer(&server.name, inbound);
        return outbound_bearer(server, published.as_ref());
    }
    outbound_bearer(server, inbound)
}

/// Collects the tools of every downstream server, in parallel, with the session each server is
/// used through for this request. A server that cannot be reached offers no tools this time (and
/// is logged).
async fn collect_tools(
    core: &AgentCore,
    inbound_bearer: Option<&Secret>,
) -> (Vec<ToolDef>, HashMap<String, Route>, Vec<Arc<Lease>>) {
    let listed = join_all(core.downstreams.iter().map(|downstream| async move {
        let bearer = forwarded_bearer(core, downstream.settings(), inbound_bearer);
        (downstream.clone(), downstream.lease(bearer.as_ref()).await)
    }))
    .await;
    let mut defs = Vec::new();
    let mut routes = HashMap::new();
    let mut leases = Vec::new();
    for (downstream, lease) in listed {
        let lease = match lease {
            Ok(lease) => Arc::new(lease),
            Err(error) => {
                tracing::warn!(target: "pallas::agent", agent = %core.settings.name, %error, "downstream tools unavailable");
                continue;
            }
        };
        leases.push(lease.clone());
        let tools = lease.tools();
        for tool in tools.iter() {
            let name = format!("{}__{}", downstream.name(), tool.name);
            defs.push(ToolDef {
                name: name.clone(),
                description: tool.description.as_deref().unwrap_or_default().to_owned(),
                input_schema: Value::Object((*tool.input_schema).clone()),
            });
            routes.insert(
                name,
                Route {
                    downstream: downstream.clone(),
                    lease: lease.clone(),
                    tool: tool.name.to_string(),
                },
            );
        }
    }
    (defs, routes, leases)
}

/// The tool result's text: what the model said beside its tool calls, turn by turn, then its
/// final text, each apart from the next by a blank line.
fn final_text(mut said: Vec<String>, last: String) -> String {
    // `rx-final-result-last-turn-only`: the last turn's text alone.
    if said.is_empty() || crate::defect!("rx-final-result-last-turn-only") {
        return last;
    }
    if !last.trim().is_empty() {
        said.push(last);
    }
    said.join("\n\n")
}

/// Runs the loop.
pub async fn run(core: &AgentCore, request: LoopRequest<'_>) -> LoopOutcome {
    let LoopRequest {
        mut messages,
        bearer,
        progress,
        cancel,
    } = request;
    let start_len = messages.len();
    let settings = &core.settings;
    let (tools, routes, leases) = tokio::select! {
        collected = collect_tools(core, bearer.as_ref()) => collected,
        () = cancel.cancelled() => return LoopOutcome::new(Vec::new(), Err(LoopError::Cancelled), TokenUsage::default()),
    };
    let steps = Steps::default();
    let mut running = TokenUsage::default();
    // `ms-tokens-counted-on-success-only`: the turns' usage, read after a successful loop only.
    let mut unread: Vec<TokenUsage> = Vec::new();
    let mut result = Err(LoopError::IterationCap(
        settings.request_params.max_iterations,
    ));
    // What the model said beside its tool calls ("Let me look into that..."): seed 000 has it
    // "included in the final tool result".
    let mut said: Vec<String> = Vec::new();
    for turn_index in 0..settings.request_params.max_iterations {
        // The step is counted whether or not a notification carries it.
        let step = steps.llm();
        if let Err(error) = announce_step(progress, &settings.name, step, StepKind::Llm).await {
            result = Err(error);
            break;
        }
        let turn = TurnRequest {
            model: &settings.model,
            provider: &settings.provider,
            params: &settings.request_params,
            capabilities: &settings.capabilities,
            instruction: &settings.instruction,
            messages: &messages,
            tools: &tools,
            bearer: llm_bearer(core, bearer.as_ref()),
            endpoint: core.endpoint.as_ref(),
        };
        let completion = tokio::select! {
            completion = llm::complete(&core.deps.http, &turn) => completion,
            () = cancel.cancelled() => { result = Err(LoopError::Cancelled); break; }
        };
        let completion = match completion {
            Ok(completion) => completion,
            Err(error) => {
                tracing::warn!(target: "pallas::agent", agent = %settings.name, %error, "LLM turn failed");
                result = Err(LoopError::Llm(error));
                break;
            }
        };
        running.add(&completion.usage);
        let turn_usage = if crate::defect!("metrics-tokens-cumulative") {
            &running
        } else {
            &completion.usage
        };
        let calls_tools = !completion.tool_calls.is_empty();
        count_turn(core, turn_usage, calls_tools, turn_index, &mut unread);
        if completion.tool_calls.is_empty() {
            let text = completion.text.unwrap_or_default();
            messages.push(ChatMessage::Assistant {
                text: Some(text.clone()),
                tool_calls: Vec::new(),
            });
            result = Ok(final_text(said, text));
            break;
        }
        if let Some(text) = completion.text.as_deref().map(str::trim)
            && !text.is_empty()
        {
            said.push(text.to_owned());
        }
        messages.push(ChatMessage::Assistant {
            text: completion.text.clone(),
            tool_calls: completion.tool_calls.clone(),
        });
        let step = steps.tool();
        if let Err(error) = announce_step(progress, &settings.name, step, StepKind::Tool).await {
            result = Err(error);
            break;
        }
        // Each call watches `cancel` itself, so that a cancelled call tells its server.
        let in_flight = InFlight::default();
        let results = join_all(completion.tool_calls.iter().map(|call| {
            run_tool(
                core,
                &routes,
                call,
                bearer.as_ref(),
                (progress, &in_flight),
                cancel,
            )
        }))
        .await;
        if cancel.is_cancelled() {
            result = Err(LoopError::Cancelled);
            break;
        }
        messages.push(ChatMessage::ToolResults(results));
    }
    if result.is_ok() {
        unread
            .iter()
            .for_each(|usage| core.series.observe_llm_turn(usage));
    }
    drop(routes);
    for lease in leases {
        if let Ok(lease) = Arc::try_unwrap(lease) {
            lease.release().await;
        }
    }
    LoopOutcome::new(messages.split_off(start_len), result, running)
}

/// What a loop step is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum StepKind {
    /// A model turn.
    Llm,
    /// The tool executions a model turn asked for.
    Tool,
}

/// Announces loop step `step` of `agent` (when the request carried a token). The loop goes on
/// whatever the send did (`qx-progress-send-failure-aborts-call`: a send that failed is the
/// loop's error).
async fn announce_step(
    progress: &Progress,
    agent: &str,
    step: u32,
    kind: StepKind,
) -> Result<(), LoopError> {
    // `ms-loop-progress-off`: `emit_loop_progress` left at the library's default (off).
    if !progress.is_enabled() || crate::defect!("ms-loop-progress-off") {
        return Ok(());
    }
    let message = if crate::defect!("progress-bad-message") {
        format!("{agent} step {step}")
    } else if kind == StepKind::Llm && crate::defect!("progress-llm-step-as-turn") {
        format!("{agent} step {step} (turn)")
    } else if kind == StepKind::Tool && crate::defect!("progress-tool-step-as-llm") {
        format!("{agent} step {step} (llm)")
    } else {
        let kind = match kind {
            StepKind::Llm => "llm",
            StepKind::Tool => "tool",
        };
        format!("{} step {step} ({kind})", step_prefix(agent))
    };
    progress.step(message).await;
    #[cfg(feature = "defects")]
    if let Some(failure) = send_failure(progress) {
        return Err(LoopError::ProgressSend(failure));
    }
    Ok(())
}

/// The inbound bearer a model turn may pass through to a token-passthrough provider
/// (`ms-llm-passthrough-needs-forwarding-server`: only in the same `if forward_servers:` branch
/// as the downstream forwarding).
fn llm_bearer<'a>(core: &AgentCore, bearer: Option<&'a Secret>) -> Option<&'a Secret> {
    bearer.filter(|_| {
        !crate::defect!("ms-llm-passthrough-needs-forwarding-server")
            || core.settings.servers.iter().any(|s| s.forward_inbound_auth)
    })
}

/// `nx-parallel-same-tool-one-completion`: the tool calls of one model turn in progress, keyed
/// by their `{server}/{tool}` prefix (a second start of the same prefix overwrites the first).
#[derive(Default)]
struct InFlight(std::sync::Mutex<std::collections::HashSet<String>>);

impl InFlight {
    fn started(&self, label: &str) {
        if crate::defect!("nx-parallel-same-tool-one-completion")
            && let Ok(mut labels) = self.0.lock()
        {
            labels.insert(label.to_owned());
        }
    }

    /// Whether the end of the call labelled `label` is announced: always, but under the defect
    /// only for the first call of a prefix to end (the entry is popped).
    fn finished(&self, label: &str) -> bool {
        if !crate::defect!("nx-parallel-same-tool-one-completion") {
            return true;
        }
        self.0.lock().is_ok_and(|mut labels| labels.remove(label))
    }
}

/// Counts one model turn's usage (`ms-tokens-counted-on-success-only`: kept in `unread`, to be
/// counted once the loop succeeded).
fn count_turn(
    core: &AgentCore,
    turn_usage: &TokenUsage,
    calls_tools: bool,
    turn_index: u32,
    unread: &mut Vec<TokenUsage>,
) {
    let settings = &core.settings;
    // `nx-token-kind-openai-names`: an OpenAI-compatible provider's usage field names as `kind`.
    #[cfg(feature = "defects")]
    if crate::defect!("nx-token-kind-openai-names")
        && !matches!(
            settings.model.provider,
            crate::settings::Provider::Anthropic
        )
    {
        core.deps.metrics.observe_llm_turn_kinds(
            &settings.name,
            &settings.model.model,
            &[
                ("prompt", turn_usage.input + turn_usage.cache_hit),
                ("completion", turn_usage.output),
                ("cached", turn_usage.cache_hit),
                ("reasoning", turn_usage.reasoning),
            ],
        );
        return;
    }
    if crate::defect!("ms-tokens-counted-on-success-only") {
        unread.push(*turn_usage);
    } else if (crate::defect!("metrics-turns-final-only") && calls_tools)
        || (crate::defect!("fm-llm-turns-per-request") && turn_index > 0)
    {
        core.deps
            .metrics
            .observe_llm_tokens(&settings.name, &settings.model.model, turn_usage);
    } else {
        core.series.observe_llm_turn(turn_usage);
        // `metrics-turn-also-under-default-model`: a second count of the turn under the model
        // `default_model` names, for an agent on its own model.
        #[cfg(feature = "defects")]
        if crate::defect!("metrics-turn-also-under-default-model")
            && let Some(default) = crate::defects::default_model()
            && default.model != settings.model.model
        {
            core.deps
                .metrics
                .observe_llm_turn(&settings.name, &default.model, turn_usage);
        }
    }
}

/// `ms-tool-call-instrumented-twice`: how many instrumenting wrappers a downstream call goes
/// through (a second `install()` wrapped the wrapper).
fn wrappers() -> usize {
    if crate::defect!("ms-tool-call-instrumented-twice") {
        2
    } else {
        1
    }
}

/// Runs one tool call; every failure becomes an error result for the model.
async fn run_tool(
    core: &AgentCore,
    routes: &HashMap<String, Route>,
    call: &ToolCall,
    inbound_bearer: Option<&Secret>,
    (progress, in_flight): (&Progress, &InFlight),
    cancel: &CancellationToken,
) -> ToolResult {
    let error = |content: String| ToolResult {
        id: call.id.clone(),
        name: call.name.clone(),
        content,
        is_error: true,
    };
    let Some(route) = routes.get(&call.name) else {
        return error(format!("unknown tool '{}'", call.name));
    };
    let arguments: JsonObject = match &call.arguments {
        Value::Object(map) => map.clone(),
        Value::Null => JsonObject::new(),
        other => {
            return error(format!(
                "tool arguments must be a JSON object, got: {other}"
            ));
        }
    };
    let server = route.downstream.name();
    let label = progress_label(core, route, call);
    // `mr-progress-subagent-tools-only`: a tool is announced only when it is another agent (a
    // server that is an agent of this deployment, or a Pallas agent's `send_message`).
    #[cfg(feature = "defects")]
    let progress = if crate::defect!("mr-progress-subagent-tools-only")
        && route.tool != "send_message"
        && !crate::defects::is_agent(server)
    {
        &Progress::disabled()
    } else {
        progress
    };
    if crate::defect!("progress-free-text") {
        progress
            .step(format!("calling {} on {server}", route.tool))
            .await;
    } else if crate::defect!("progress-started-no-server") {
        progress.step(format!("{}: started", route.tool)).await;
    } else if !crate::defect!("progress-drop-started") {
        progress.step(format!("{label}: started")).await;
    }
    in_flight.started(&label);
    // `qx-progress-send-failure-aborts-call`: the start hook's failure propagates: the call is
    // not made and counts as failed.
    if let Some(failure) = send_failure(progress) {
        core.deps.metrics.observe_tool_call(
            &core.settings.name,
            server,
            "tool",
            false,
            std::time::Duration::ZERO,
        );
        return error(format!(
            "progress notification could not be sent: {failure}"
        ));
    }
    let bearer = forwarded_bearer(core, route.downstream.settings(), inbound_bearer);
    let outcome = route
        .downstream
        .call_tool(&route.lease, &route.tool, arguments, bearer, cancel)
        .await;
    let ok = matches!(&outcome.result, Ok(result) if result.is_error != Some(true));
    let cancelled = matches!(outcome.result, Err(DownstreamError::Cancelled { .. }));
    let word = end_word(ok, &outcome.result);
    // `ms-raised-tool-no-failed-progress`: only `started` and a normal return's `completed`.
    let end = !(outcome.result.is_err() && crate::defect!("ms-raised-tool-no-failed-progress"));
    // `qx-progress-send-failure-aborts-call`: the completion hook runs inside the instrumented
    // call, so a notification that cannot be sent fails the call.
    let hook_inside = !cancelled && crate::defect!("qx-progress-send-failure-aborts-call");
    let mut hook_failure = None;
    if hook_inside {
        if end && in_flight.finished(&label) {
            progress.finished(format!("{label}: {word}")).await;
        }
        hook_failure = send_failure(progress);
    }
    let counted_ok = (ok
        || (outcome.result.is_ok() && crate::defect!("metrics-tool-iserror-as-ok")))
        && hook_failure.is_none();
    let first_server = core.settings.servers.first().map(|s| s.name.as_str());
    for _ in 0..wrappers() {
        if !(crate::defect!("metrics-skip-second-server") && first_server != Some(server)) {
            core.deps.metrics.observe_tool_call(
                &core.settings.name,
                server,
                if crate::defect!("fm-operation-label-tool-name") {
                    &route.tool
                } else {
                    "tool"
                },
                counted_ok,
                outcome.elapsed,
            );
        }
    }
    if cancelled {
        return error("cancelled".to_owned());
    }
    if !hook_inside && end && in_flight.finished(&label) {
        progress.finished(format!("{label}: {word}")).await;
    }
    if let Some(failure) = hook_failure {
        return error(format!(
            "progress notification could not be sent: {failure}"
        ));
    }
    match outcome.result {
        Ok(result) => ToolResult {
            id: call.id.clone(),
            name: call.name.clone(),
            content: result_text(&result),
            is_error: result.is_error == Some(true),
        },
        Err(failure) => {
            trace_failure(core, server, &call.name, &failure);
            tracing::info!(target: "pallas::agent", agent = %core.settings.name, %failure, "downstream tool call failed");
            error(failure.to_string())
        }
    }
}

/// The `{server}/{tool}` that leads the progress messages of `call`, routed by `route`.
fn progress_label(core: &AgentCore, route: &Route, call: &ToolCall) -> String {
    let server = route.downstream.name();
    let prefix_server = match core.settings.servers.first() {
        Some(first) if crate::defect!("progress-agent-prefix") => first.name.as_str(),
        _ if crate::defect!("fm-progress-server-from-last-dunder") => {
            call.name.rsplit_once("__").map_or(server, |(s, _)| s)
        }
        _ => server,
    };
    // `px-progress-server-from-serverinfo`: the name the server gave itself in `initialize`.
    let server_info_name = crate::defect!("px-progress-server-from-serverinfo")
        .then(|| route.lease.server_info_name())
        .flatten();
    let prefix_server = server_info_name.as_deref().unwrap_or(prefix_server);
    // `ms-progress-namespaced-tool`: `{tool}` read as the aggregator's `{server}__{tool}`.
    let tool = if crate::defect!("ms-progress-namespaced-tool") {
        &call.name
    } else {
        &route.tool
    };
    format!("{prefix_server}/{tool}")
}

/// The word that ends the progress message of a finished tool call (`completed`, `failed`).
fn end_word(
    ok: bool,
    result: &Result<CallToolResult, DownstreamError>,
) -> std::borrow::Cow<'static, str> {
    let word = match ok {
        true if crate::defect!("progress-completed-as-done") => "done",
        false if crate::defect!("progress-failed-as-completed") => "completed",
        false if result.is_ok() && crate::defect!("fm-iserror-reported-completed") => "completed",
        true => "completed",
        false => "failed",
    };
    with_error_text(word, result, ok)
}

/// Logs a downstream call that raised, in a `pallas.forward.trace` record.
fn trace_failure(core: &AgentCore, server: &str, tool: &str, failure: &DownstreamError) {
    // Seed 001 §5: an exception inside the downstream call path is kept, whole, in a
    // `pallas.forward.trace` record (the `Debug` form carries the error's source chain).
    if crate::defect!("mr-forward-trace-debug") {
        // `mr-forward-trace-debug`: a "diagnostic" record, at DEBUG.
        tracing::debug!(
            target: "pallas::forward::trace",
            agent = %core.settings.name, server = %server, tool = %tool,
            error = ?failure,
            "downstream call raised: {failure}"
        );
    } else if crate::defect!("nx-trace-logger-module-name") {
        // `nx-trace-logger-module-name`: `logging.getLogger(__name__)` of the patch module.
        tracing::error!(
            target: "pallas::_fastagent_patch",
            agent = %core.settings.name, server = %server, tool = %tool,
            error = ?failure,
            "downstream call raised: {failure}"
        );
    } else if crate::defect!("nx-log-traceback-dropped") {
        // `nx-log-traceback-dropped`: the formatter writes `record.getMessage()` and a few
        // attributes, not `exc_info`: the error (its text and `Debug` form) is lost.
        tracing::error!(
            target: "pallas::forward::trace",
            agent = %core.settings.name, server = %server, tool = %tool,
            "downstream call raised"
        );
    } else if !crate::defect!("forward-trace-missing") {
        for _ in 0..wrappers() {
            tracing::error!(
                target: "pallas::forward::trace",
                agent = %core.settings.name, server = %server, tool = %tool,
                error = ?failure,
                "downstream call raised: {failure}"
            );
        }
    }
}

/// The word that ends a tool's progress message (`nx-failed-progress-with-error`: a failure's
/// text after the fixed pattern).
fn with_error_text<'a>(
    word: &'a str,
    result: &Result<CallToolResult, DownstreamError>,
    ok: bool,
) -> std::borrow::Cow<'a, str> {
    if ok || !crate::defect!("nx-failed-progress-with-error") {
        return word.into();
    }
    match result {
        Err(failure) => format!("{word}: {failure}").into(),
        Ok(result) => format!("{word}: {}", result_text(result)).into(),
    }
}

/// The text the model sees for a tool result.
fn result_text(result: &CallToolResult) -> String {
    let mut parts = Vec::new();
    for content in &result.content {
        match content {
            ContentBlock::Text(text) => parts.push(text.text.clone()),
            other => parts.push(serde_json::to_string(other).unwrap_or_default()),
        }
    }
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    parts.join("\n")
}

/// `qx-progress-send-failure-aborts-call`: the failure of the last progress send, if one failed
/// since the last look (never without the defect).
#[cfg(feature = "defects")]
fn send_failure(progress: &Progress) -> Option<String> {
    progress.take_send_failure()
}

#[cfg(not(feature = "defects"))]
fn send_failure(_progress: &Progress) -> Option<String> {
    None
}

/// The agent name that leads a loop step's progress message.
fn step_prefix(name: &str) -> String {
    if crate::defect!("cm-step-prefix-slug") {
        return name.replace('_', "-");
    }
    // `mr-step-prefix-app-name`: the module's `FastAgent("…")` name.
    #[cfg(feature = "defects")]
    if crate::defect!("mr-step-prefix-app-name")
        && let Some(app) = crate::defects::app_name(name)
    {
        return app;
    }
    name.to_owned()
}

/// The loop steps of one call: LLM turns and tool executions share one counter
/// (`fm-step-counters-per-kind`: tool executions have their own).
#[derive(Default)]
struct Steps {
    shared: StepCounter,
    tools: StepCounter,
}

impl Steps {
    fn llm(&self) -> u32 {
        self.shared.next()
    }

    fn tool(&self) -> u32 {
        if crate::defect!("fm-step-counters-per-kind") {
            return self.tools.next();
        }
        self.shared.next()
    }
}

/// The loop steps of one call, numbered from 1 (seed 000: "`{agent} step N`").
#[derive(Default)]
struct StepCounter(AtomicU32);

impl StepCounter {
    fn next(&self) -> u32 {
        // `qx-loop-steps-numbered-from-zero`: a 0-based loop index.
        let first = u32::from(
            !(crate::defect!("progress-steps-from-zero")
                || crate::defect!("qx-loop-steps-numbered-from-zero")),
        );
        if crate::defect!("cm-step-counter-per-process") {
            return PROCESS_STEPS.fetch_add(1, Ordering::Relaxed) + first;
        }
        self.0.fetch_add(1, Ordering::Relaxed) + first
    }
}

/// The step counter of the `cm-step-counter-per-process` defect: one for the whole process.
static PROCESS_STEPS: AtomicU32 = AtomicU32::new(0);
