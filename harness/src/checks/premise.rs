//! Premises: the observations a check needs before it can say anything. A check whose premise
//! did not occur is `inconclusive` — a bridge that does nothing must not pass it.
//!
//! Each premise is a shared function: `None` when what it needs was observed, else why not. A
//! check names its premise beside its evaluator, in its family's `CHECKS` table (a premise only
//! one family needs may live in that family's file, like the registry's). This file imports no
//! family file, so no family and its premise import each other.

use crate::observation::Observed;

/// A premise: why what a check needs was not observed (`None`: it was).
pub(crate) type Premise = fn(&Observed) -> Option<&'static str>;

/// `None` when `yes`, else `why`: a premise's answer.
pub(super) fn held(yes: bool, why: &'static str) -> Option<&'static str> {
    if yes { None } else { Some(why) }
}

fn downstream(o: &Observed, method: &str) -> bool {
    o.mcp_journals
        .values()
        .flatten()
        .any(|e| e.jsonrpc_method.as_deref() == Some(method))
}

fn progress_count(o: &Observed) -> usize {
    o.steps.iter().map(|s| s.observation.progress().len()).sum()
}

fn llm_requested(o: &Observed) -> bool {
    o.llm_journals.values().any(|j| !j.is_empty())
}

/// A request reached a mock LLM.
pub(super) fn llm_requests(o: &Observed) -> Option<&'static str> {
    held(
        llm_requested(o),
        "no request reached the mock LLM: the agent loop never ran",
    )
}

/// The mock LLM or a downstream tool was called.
pub(super) fn llm_or_downstream_call(o: &Observed) -> Option<&'static str> {
    held(
        llm_requested(o) || downstream(o, "tools/call"),
        "neither the mock LLM nor a downstream server was called",
    )
}

/// At least one progress notification was received.
pub(super) fn progress_seen(o: &Observed) -> Option<&'static str> {
    held(
        progress_count(o) >= 1,
        "no progress notification was received",
    )
}

/// At least two progress notifications were received.
pub(super) fn progress_twice(o: &Observed) -> Option<&'static str> {
    held(
        progress_count(o) >= 2,
        "fewer than two progress notifications were received",
    )
}

/// A downstream tool call reached a mock MCP server.
pub(super) fn downstream_call(o: &Observed) -> Option<&'static str> {
    held(
        downstream(o, "tools/call"),
        "no downstream tool call reached a mock MCP server",
    )
}

/// A call was cancelled after it got progress.
pub(super) fn cancelled_after_progress(o: &Observed) -> Option<&'static str> {
    let cancelled = o
        .steps
        .iter()
        .any(|s| s.observation.cancelled_at_ms().is_some());
    held(
        cancelled && progress_count(o) >= 1,
        "no call was cancelled after progress",
    )
}

/// A health probe (`initialize`) reached a mock MCP server.
pub(super) fn health_probe(o: &Observed) -> Option<&'static str> {
    held(
        downstream(o, "initialize"),
        "no health probe reached a mock MCP server",
    )
}

/// A `get_health` call was answered with a tool result (whatever its content).
pub(super) fn health_answered(o: &Observed) -> Option<&'static str> {
    held(
        o.steps.iter().any(|s| {
            matches!(
                s.observation,
                crate::observation::Observation::HealthAnswered(_)
            ) && s.observation.result().is_some()
        }),
        "no `get_health` call was answered with a result",
    )
}

/// A `tools/list` answer was received.
pub(super) fn tools_listed(o: &Observed) -> Option<&'static str> {
    held(
        o.steps.iter().any(|s| {
            s.observation
                .result()
                .is_some_and(|r| r.get("tools").is_some())
        }),
        "no `tools/list` answer was received",
    )
}

/// A registry URL was answered (whatever the answer).
pub(super) fn registry_answered(o: &Observed) -> Option<&'static str> {
    held(
        o.steps.iter().any(|s| {
            matches!(
                s.observation,
                crate::observation::Observation::RegistryFetched(_)
            )
        }),
        "the registry URL was not fetched",
    )
}
