//! MCP wire checks (MCP-*): schema validity, handshake, sessions, content types, tool errors, SSE and responses.

use serde_json::{Value, json};

use super::common::*;
use super::{Evidence, Observed, Outcome, StepRecord, excerpt, wire};
use crate::catalog::params;
use crate::observation::Observation;
use crate::scenario::{ActionKind, CheckSpec, StepAction};

/// The evaluators of this family, by check ID.
pub(super) const EVALUATORS: &[(&str, super::Evaluator)] = &[
    ("MCP-001", |_, o| wire_valid(o)),
    ("MCP-002", handshake),
    ("MCP-003", mcp_delete),
    ("MCP-004", content_types),
    ("MCP-005", mcp_accept),
    ("MCP-006", mcp_sessions),
    ("MCP-007", mcp_tool_errors),
    ("MCP-008", mcp_sse),
    ("MCP-009", responses),
    ("MCP-011", mcp_tool_inputs),
];

/// The actions that send an MCP request and expect its response.
const REQUESTS: &[ActionKind] = &[
    ActionKind::ListTools,
    ActionKind::Health,
    ActionKind::Send,
    ActionKind::Call,
    ActionKind::History,
];

/// [`REQUESTS`] and `connect`'s `initialize`.
const REQUESTS_AND_CONNECT: &[ActionKind] = &[
    ActionKind::ListTools,
    ActionKind::Health,
    ActionKind::Send,
    ActionKind::Call,
    ActionKind::History,
    ActionKind::Connect,
];

pub(super) fn wire_valid(o: &Observed) -> Outcome {
    if o.received.is_empty() {
        return Outcome::NotApplicable("no JSON-RPC message received".into());
    }
    let mut ev = Vec::new();
    // JSON-RPC 2.0 §5 gives an error to a request whose id could not be determined
    // `"id": null`; MCP's error responses may omit the id "in error cases where the ID could
    // not be read". Such an error is judged as the id-less error MCP's schema describes, so
    // the null id alone is no violation. An id answering no request is MCP-009's matter.
    for m in &o.received {
        let message = if is_null_id_error(&m.message) {
            let mut copy = m.message.clone();
            if let Some(obj) = copy.as_object_mut() {
                obj.remove("id");
            }
            copy
        } else {
            m.message.clone()
        };
        match wire::validate_mcp(&m.version, &message, m.request_method.as_deref()) {
            Ok(v) => ev.extend(v.into_iter().map(|v| Evidence {
                what: format!(
                    "{} message {}",
                    m.label,
                    m.message
                        .get("method")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .or_else(|| m.message.get("id").map(|i| format!("id {i}")))
                        .unwrap_or_default()
                ),
                expected: Some(format!("valid against MCP {} schema", m.version)),
                seen: Some(format!("{} — {}", v.message, v.excerpt)),
                path: Some(v.path),
            })),
            Err(e) => return Outcome::Error(e),
        }
        if ev.len() >= 10 {
            break;
        }
    }
    if !ev.is_empty() {
        fail(format!("{} schema violation(s)", ev.len()), ev)
    } else {
        Outcome::Pass
    }
}

/// A JSON-RPC error response whose `id` is `null`.
pub(super) fn is_null_id_error(m: &Value) -> bool {
    m.get("id").is_some_and(Value::is_null) && m.get("error").is_some()
}

pub(super) fn handshake(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, &[ActionKind::Connect]);
    if steps.is_empty() {
        return na("connect");
    }
    for s in steps {
        if let Some(e) = &s.error {
            return fail(format!("`{}` failed: {e}", s.name), vec![]);
        }
        let Observation::Connected(connected) = &s.observation else {
            return fail(
                format!("`{}` observed no `initialize` answer", s.name),
                vec![],
            );
        };
        let v = connected.protocol_version.as_str();
        if !["2025-11-25", "2026-07-28", "2025-06-18", "2025-03-26"].contains(&v) {
            return fail(
                format!("negotiated `{v}`"),
                vec![Evidence::new(&s.name, "a supported revision", v)],
            );
        }
        // Issuing a session is optional (MCP transports: a server MAY assign one); an issued
        // id MUST only contain visible ASCII (0x21–0x7E).
        if let Some(id) = connected.session_id.as_deref()
            && (id.is_empty() || !id.bytes().all(|b| (0x21..=0x7e).contains(&b)))
        {
            return fail(
                "the `Mcp-Session-Id` is not visible ASCII",
                vec![Evidence::new(
                    &s.name,
                    "characters 0x21–0x7E",
                    format!("{id:?}"),
                )],
            );
        }
    }
    Outcome::Pass
}

pub(super) fn content_types(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, REQUESTS_AND_CONNECT);
    if steps.is_empty() {
        return na("MCP request");
    }
    for s in steps {
        if status(s) != 200 {
            continue;
        }
        let ct = s
            .observation
            .content_type()
            .unwrap_or("")
            .to_ascii_lowercase();
        if !(ct.starts_with("application/json") || ct.starts_with("text/event-stream")) {
            return fail(
                format!("`{}` answered Content-Type {ct:?}", s.name),
                vec![Evidence::new(
                    &s.name,
                    "application/json or text/event-stream",
                    ct,
                )],
            );
        }
    }
    Outcome::Pass
}

pub(super) fn responses(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps = steps_of(o, c, REQUESTS);
    if steps.is_empty() {
        return na("MCP request");
    }
    for s in steps {
        if s.timed_out {
            return Outcome::Error(format!(
                "`{}` got no response before its step timeout: nothing observed to judge (a timeout is not a failure)",
                s.name
            ));
        }
        if s.observation.cancelled_at_ms().is_some() {
            continue; // the client cancelled it: the receiver should not answer
        }
        if s.error.is_none()
            && s.observation
                .exchange()
                .is_some_and(|x| x.response.as_ref().is_none_or(Value::is_null) && x.status == 200)
        {
            return fail(
                format!("`{}` got no JSON-RPC response", s.name),
                vec![Evidence::new(
                    &s.name,
                    "a response with the request id",
                    "none",
                )],
            );
        }
    }
    Outcome::Pass
}

/// MCP-003: `DELETE` ends the session; the old session id then gets 404.
pub(super) fn mcp_delete(c: &CheckSpec, o: &Observed) -> Outcome {
    let deletes = steps_of(o, c, &[ActionKind::Delete]);
    if deletes.is_empty() {
        return na("delete");
    }
    for d in deletes {
        let st = status(d);
        if st == 405 {
            return Outcome::NotApplicable(format!(
                "`{}` got 405: the server does not let clients end sessions (allowed by the spec)",
                d.name
            ));
        }
        if !(200..300).contains(&st) {
            return fail(
                format!("DELETE `{}` answered HTTP {st}", d.name),
                vec![Evidence::new(
                    &d.name,
                    "2xx",
                    d.error.clone().unwrap_or_else(|| st.to_string()),
                )],
            );
        }
        let mut later: Vec<&StepRecord> = o
            .steps
            .iter()
            .filter(|x| x.agent == d.agent && x.started_at >= d.ended_at)
            .collect();
        later.sort_by(|a, b| a.started_at.cmp(&b.started_at));
        if let Some(next) = later
            .into_iter()
            .take_while(|x| !matches!(x.action(), Some(StepAction::Connect(_))))
            .find(|x| sends_session(x))
            && status(next) != 404
        {
            return fail(
                format!(
                    "`{}` reused the deleted session and got HTTP {}",
                    next.name,
                    status(next)
                ),
                vec![Evidence::new(&next.name, "404", status(next).to_string())],
            );
        }
    }
    Outcome::Pass
}

/// MCP-005: a POST whose `Accept` lacks `application/json` or `text/event-stream` gets 406.
pub(super) fn mcp_accept(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps: Vec<&StepRecord> = steps_of(o, c, &[ActionKind::Raw])
        .into_iter()
        .filter(|s| {
            raw_header(s, "accept").is_some_and(|a| {
                let a = a.to_ascii_lowercase();
                !(a.contains("application/json") && a.contains("text/event-stream"))
            })
        })
        .collect();
    if steps.is_empty() {
        return na("raw step with an incomplete Accept");
    }
    for s in steps {
        if status(s) != 406 {
            return fail(
                format!(
                    "`{}` (Accept {:?}) got HTTP {}",
                    s.name,
                    raw_header(s, "accept").unwrap_or(""),
                    status(s)
                ),
                vec![Evidence::new(&s.name, "406", status(s).to_string())],
            );
        }
    }
    Outcome::Pass
}

/// MCP-006: a non-initialize request without a session gets 400; an unknown session 404
/// (`with: {missing_session: [steps], unknown_session: [steps]}`; default: raw steps with
/// `with_session: false`, and raw steps sending their own `Mcp-Session-Id`).
pub(super) fn mcp_sessions(c: &CheckSpec, o: &Observed) -> Outcome {
    let p: params::McpSessions = match params(c) {
        Ok(p) => p,
        Err(o) => return o,
    };
    let missing = named_steps(o, p.missing_session.as_ref()).unwrap_or_else(|| {
        steps_of(o, c, &[ActionKind::Raw])
            .into_iter()
            .filter(|s| {
                matches!(s.action(), Some(StepAction::Raw(r)) if !r.with_session)
                    && raw_header(s, "mcp-session-id").is_none()
                    && raw_method(s).is_some_and(|m| m != "initialize")
            })
            .collect()
    });
    let unknown = named_steps(o, p.unknown_session.as_ref()).unwrap_or_else(|| {
        steps_of(o, c, &[ActionKind::Raw])
            .into_iter()
            .filter(|s| raw_header(s, "mcp-session-id").is_some())
            .collect()
    });
    if missing.is_empty() && unknown.is_empty() {
        return na("raw step without a session or with an unknown one");
    }
    for (steps, want, what) in [
        (missing, 400, "without a session"),
        (unknown, 404, "with an unknown session"),
    ] {
        for s in steps {
            if status(s) != want {
                return fail(
                    format!("`{}` ({what}) got HTTP {}", s.name, status(s)),
                    vec![Evidence::new(
                        &s.name,
                        want.to_string(),
                        status(s).to_string(),
                    )],
                );
            }
        }
    }
    Outcome::Pass
}

/// `call`/raw `tools/call` steps classified against the tools their agent listed: calls of a
/// tool not listed, calls whose arguments the listed `inputSchema` rejects, and calls a
/// scenario names as invalid that the target's own schema accepts.
struct ToolCalls<'a> {
    unknown: Vec<&'a StepRecord>,
    invalid: Vec<&'a StepRecord>,
    schema_allows: Vec<&'a StepRecord>,
}

/// What the target's listing says of one call: `None` when its agent listed no tools,
/// `Some(None)` for an unknown tool, `Some(Some(valid))` for a listed one.
fn against_listing(listed: &[(Option<String>, Value)], s: &StepRecord) -> Option<Option<bool>> {
    let (tool, args) = tool_call_of(s)?;
    let of_agent: Vec<&Value> = listed
        .iter()
        .filter(|(a, _)| *a == s.agent)
        .map(|(_, t)| t)
        .collect();
    if of_agent.is_empty() {
        return None; // nothing to classify the call against
    }
    Some(
        of_agent
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(tool.as_str()))
            .map(|t| {
                let schema = t.get("inputSchema").cloned().unwrap_or(json!({}));
                jsonschema::validator_for(&schema).map_or(true, |v| v.is_valid(&args))
            }),
    )
}

fn tool_calls<'a>(c: &CheckSpec, o: &'a Observed) -> Result<ToolCalls<'a>, Outcome> {
    let listed: Vec<(Option<String>, Value)> = o
        .steps
        .iter()
        .filter(|s| matches!(s.action(), Some(StepAction::ListTools(_))))
        .flat_map(|s| {
            super::health::tools_listed(s)
                .iter()
                .map(|t| (s.agent.clone(), t.clone()))
                .collect::<Vec<_>>()
        })
        .collect();
    let p: params::McpToolErrors = params(c)?;
    let named_unknown = named_steps(o, p.unknown_tool.as_ref());
    let named_invalid = named_steps(o, p.invalid_arguments.as_ref());
    let mut calls = ToolCalls {
        unknown: Vec::new(),
        invalid: Vec::new(),
        schema_allows: Vec::new(),
    };
    if named_unknown.is_none() && named_invalid.is_none() {
        for s in steps_of(o, c, &[ActionKind::Call, ActionKind::Raw]) {
            match against_listing(&listed, s) {
                Some(None) => calls.unknown.push(s),
                Some(Some(false)) => calls.invalid.push(s),
                _ => {}
            }
        }
    }
    if let Some(named) = named_unknown {
        calls.unknown = named;
    }
    // A call the scenario names as invalid is judged against the target's own schema.
    for s in named_invalid.unwrap_or_default() {
        match against_listing(&listed, s) {
            Some(Some(false)) => calls.invalid.push(s),
            Some(Some(true)) => calls.schema_allows.push(s),
            _ => {}
        }
    }
    Ok(calls)
}

/// MCP-007: a call of a tool the target did not list gets a JSON-RPC error (`with:
/// {unknown_tool: [steps]}`; default: calls of tools no `tools/list` listed).
pub(super) fn mcp_tool_errors(c: &CheckSpec, o: &Observed) -> Outcome {
    let calls = match tool_calls(c, o) {
        Ok(calls) => calls,
        Err(o) => return o,
    };
    if calls.unknown.is_empty() {
        return na("call of an unknown tool");
    }
    // An unknown tool "should be reported as an MCP error response": SHOULD.
    for s in calls.unknown {
        if jsonrpc_error(s).is_none() {
            return Outcome::Should(
                format!(
                    "`{}` called an unknown tool without a JSON-RPC error",
                    s.name
                ),
                vec![Evidence::new(
                    &s.name,
                    "a JSON-RPC error",
                    s.error
                        .clone()
                        .unwrap_or_else(|| excerpt(result_or_null(s), 200)),
                )],
            );
        }
    }
    Outcome::Pass
}

/// MCP-011: "Servers MUST validate all tool inputs": a call whose arguments the target's own
/// listed `inputSchema` rejects gets an `isError` result or a -32602 error (`with:
/// {invalid_arguments: [steps]}` names candidates; a named call the target's schema accepts is
/// not judged).
pub(super) fn mcp_tool_inputs(c: &CheckSpec, o: &Observed) -> Outcome {
    let calls = match tool_calls(c, o) {
        Ok(calls) => calls,
        Err(o) => return o,
    };
    if calls.invalid.is_empty() {
        if let Some(s) = calls.schema_allows.first() {
            return Outcome::NotApplicable(format!(
                "the target's own inputSchema accepts the arguments of `{}`{}: no invalid input to judge",
                s.name,
                if calls.schema_allows.len() > 1 {
                    format!(" (and {} more)", calls.schema_allows.len() - 1)
                } else {
                    String::new()
                }
            ));
        }
        return na("call with arguments its listed inputSchema rejects");
    }
    for s in calls.invalid {
        let code = jsonrpc_error(s)
            .and_then(|e| e.get("code"))
            .and_then(Value::as_i64);
        if !(is_error_result(s) || code == Some(-32602)) {
            return fail(
                format!(
                    "`{}` sent arguments its inputSchema rejects and got neither an isError result nor -32602",
                    s.name
                ),
                vec![Evidence::new(
                    &s.name,
                    "result.isError = true or error.code = -32602",
                    s.error.clone().unwrap_or_else(|| {
                        excerpt(
                            s.observation
                                .exchange()
                                .and_then(|x| x.response.as_ref())
                                .unwrap_or(&Value::Null),
                            240,
                        )
                    }),
                )],
            );
        }
    }
    Outcome::Pass
}

/// MCP-008: SSE events carry ids and one JSON-RPC message per `data:`.
pub(super) fn mcp_sse(c: &CheckSpec, o: &Observed) -> Outcome {
    let steps: Vec<&StepRecord> = steps_of(o, c, MCP_ACTIONS)
        .into_iter()
        .filter(|s| {
            s.observation
                .content_type()
                .is_some_and(|ct| ct.to_ascii_lowercase().starts_with("text/event-stream"))
        })
        .collect();
    if steps.is_empty() {
        return Outcome::NotApplicable("no SSE response was received".into());
    }
    for s in steps {
        let Some(x) = s.observation.exchange() else {
            continue;
        };
        if let Some(b) = &x.body_text {
            return fail(
                format!("`{}` SSE data that is not a JSON-RPC message", s.name),
                vec![Evidence::new(
                    &s.name,
                    "one JSON-RPC message per data:",
                    excerpt(&json!(b), 240),
                )],
            );
        }
        for (i, m) in x.messages.iter().enumerate() {
            if m.sse_event_id.is_none() {
                return fail(
                    format!("an SSE event of `{}` has no id", s.name),
                    vec![Evidence {
                        path: Some(format!("/messages/{i}")),
                        ..Evidence::new(&s.name, "an `id:` field", excerpt(&m.message, 200))
                    }],
                );
            }
        }
    }
    Outcome::Pass
}
