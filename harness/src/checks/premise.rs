//! Premises: the observations a check needs before it can say anything. A check whose premise
//! did not occur is `inconclusive` — a bridge that does nothing must not pass it.

use super::Observed;

fn registry_entries(o: &Observed) -> bool {
    o.steps
        .iter()
        .any(|s| super::registry::servers_of(s).is_some_and(|a| !a.is_empty()))
}

fn llm_requests(o: &Observed) -> bool {
    o.llm_journals.values().any(|j| !j.is_empty())
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

fn sse_answer(o: &Observed) -> bool {
    o.steps.iter().any(|s| {
        s.observation
            .content_type()
            .is_some_and(|c| c.starts_with("text/event-stream"))
    })
}

fn cancelled(o: &Observed) -> bool {
    o.steps
        .iter()
        .any(|s| s.observation.cancelled_at_ms().is_some())
}

/// Why the premise of check `id` did not occur in `o` (`None`: it did, or the check needs
/// nothing beyond what its evaluator already requires).
pub fn missing(id: &str, o: &Observed) -> Option<&'static str> {
    let family = crate::catalog::family_of(id);
    let held = match (family, id) {
        (_, "REG-002") => true, // judges the answer itself, whatever it is
        ("REG", _) => registry_entries(o),
        (_, "MSG-002" | "MSG-003" | "MSG-004" | "MSG-005") => llm_requests(o),
        (_, "PROG-001") => llm_requests(o) || downstream(o, "tools/call"),
        (_, "PROG-003") => progress_count(o) >= 2,
        (_, "PROG-002" | "PROG-004" | "PROG-005" | "PROG-007" | "PROG-009") => {
            progress_count(o) >= 1
        }
        (_, "PROG-006" | "PROG-008") => downstream(o, "tools/call"),
        (_, "PROG-010") => cancelled(o) && progress_count(o) >= 1,
        (_, "AUTH-001" | "AUTH-002" | "AUTH-003" | "AUTH-004" | "AUTH-005") => {
            downstream(o, "tools/call")
        }
        (_, "AUTH-006" | "HEALTH-007" | "HEALTH-010") => downstream(o, "initialize"),
        (_, "MCP-008") => sse_answer(o),
        _ => true,
    };
    if held {
        return None;
    }
    Some(match (family, id) {
        ("REG", _) => "no registry document with an entry was fetched",
        (_, "MSG-002" | "MSG-003" | "MSG-004" | "MSG-005") => {
            "no request reached the mock LLM: the agent loop never ran"
        }
        (_, "PROG-001") => "neither the mock LLM nor a downstream server was called",
        (_, "PROG-003") => "fewer than two progress notifications were received",
        (
            _,
            "PROG-006" | "PROG-008" | "AUTH-001" | "AUTH-002" | "AUTH-003" | "AUTH-004"
            | "AUTH-005",
        ) => "no downstream tool call reached a mock MCP server",
        (_, "PROG-010") => "no call was cancelled after progress",
        (_, "MCP-008") => "no request was answered with an SSE stream",
        (_, "AUTH-006" | "HEALTH-007" | "HEALTH-010") => {
            "no health probe reached a mock MCP server"
        }
        _ => "no progress notification was received",
    })
}
