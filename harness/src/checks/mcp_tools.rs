//! Tool-call checks of the MCP family: an unknown tool gets a protocol error (MCP-007), and
//! tool inputs are validated against the target's own `inputSchema` (MCP-011).

use crate::client::JsonRef;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::common::*;
use super::params::OneOrMany;
use super::read::excerpt;
use super::verdict::{Evidence, Outcome, Witness};
use crate::observation::{Observed, StepRecord};
use crate::scenario::{ActionKind, CheckSpec, StepAction};
use pallas_mocks::LlmJournalEntry;

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
                .into_iter()
                .map(|t| (s.agent.clone(), t.to_value()))
                .collect::<Vec<_>>()
        })
        .collect();
    let p: McpToolErrors = params(c)?;
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
    // An unknown tool is a protocol error (SHOULD); an error's code is an integer (MUST).
    let mut kept = Vec::new();
    for s in calls.unknown {
        let Some(error) = jsonrpc_error(s) else {
            return Outcome::breaks(
                "mcp.unknown-tool-protocol-error",
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
        };
        let code = error.get("code");
        if !code.is_some_and(|c| c.is_i64() || c.is_u64()) {
            return Outcome::breaks(
                "mcp.error-code-integer",
                format!("`{}`: the JSON-RPC error's code is not an integer", s.name),
                vec![Evidence::new(
                    &s.name,
                    "an integer `error.code`",
                    code.map_or_else(|| "no `code`".to_owned(), |c| excerpt(c, 100)),
                )],
            );
        }
        kept.push(Witness::new(&s.name, excerpt(error, 200)));
    }
    Outcome::Kept(kept)
}

/// The model requests (POSTs to a mock LLM) that arrived while step `s` ran, with the mock's
/// name.
fn model_requests_during<'a>(
    o: &'a Observed,
    s: &StepRecord,
) -> Vec<(&'a str, &'a LlmJournalEntry)> {
    o.llm_journals
        .iter()
        .flat_map(|(llm, j)| j.iter().map(move |e| (llm.as_str(), e)))
        .filter(|(_, e)| e.method.eq_ignore_ascii_case("POST") && within(&e.time, s))
        .collect()
}

/// A model request reached a mock LLM at some point of the run: the journal observes the
/// target's model, so its silence during a call means the call did not ask the model.
fn model_observed(o: &Observed) -> bool {
    o.llm_journals
        .values()
        .flatten()
        .any(|e| e.method.eq_ignore_ascii_case("POST"))
}

/// The answer a call got, for evidence.
fn answer_of(s: &StepRecord) -> String {
    s.error.clone().unwrap_or_else(|| {
        excerpt(
            s.observation
                .exchange()
                .and_then(|x| x.response.as_deref())
                .map_or_else(JsonRef::null, JsonDoc::root),
            240,
        )
    })
}

/// MCP-011: "Servers MUST validate all tool inputs": a call whose arguments the target's own
/// listed `inputSchema` rejects is refused — an `isError` result or a -32602 error — without
/// running: no model request reaches the mock LLM while it runs (`with: {invalid_arguments:
/// [steps]}` names candidates; a named call the target's schema accepts is not judged). A model
/// request during the call means the tool ran on input it had not validated, whatever it
/// answered; a refusal counts only when the run's model is observed (some request reached a mock
/// LLM) and no other step ran beside the call.
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
    let mut undecided: Vec<String> = Vec::new();
    let mut kept = Vec::new();
    for s in calls.invalid {
        let asked = model_requests_during(o, s);
        let beside = o
            .steps
            .iter()
            .find(|x| !std::ptr::eq(*x, s) && overlap(x, s));
        if let Some(&(llm, first)) = asked.first() {
            if let Some(other) = beside {
                undecided.push(format!(
                    "a model request arrived while `{}` ran, but `{}` ran beside it: the request cannot be told apart",
                    s.name, other.name
                ));
                continue;
            }
            return fail(
                format!(
                    "`{}` sent arguments its inputSchema rejects, and the model was asked {} time(s) while it ran: the input was not validated before the tool ran",
                    s.name,
                    asked.len()
                ),
                vec![Evidence::new(
                    &s.name,
                    "refused without running: no model request, then an isError result or -32602",
                    format!(
                        "{} {} at mock LLM `{llm}` ({}), then {}",
                        first.method,
                        first.path,
                        first.time,
                        answer_of(s)
                    ),
                )],
            );
        }
        let code = jsonrpc_error(s)
            .and_then(|e| e.get("code"))
            .and_then(JsonRef::as_i64);
        if is_error_result(s) || code == Some(-32602) {
            if !model_observed(o) {
                undecided.push(format!(
                    "`{}` was answered as refused, but no request reached a mock LLM in the whole run: whether it ran the agent is not observable",
                    s.name
                ));
            } else if let Some(other) = beside {
                undecided.push(format!(
                    "`{}` was answered as refused, but `{}` ran beside it: the model journal cannot show that it did not run",
                    s.name, other.name
                ));
            } else {
                // The refusal named first: the answer's excerpt may be cut before its `isError`.
                let refusal = if code == Some(-32602) {
                    "JSON-RPC error -32602"
                } else {
                    "a result with `isError: true`"
                };
                kept.push(Witness::new(
                    &s.name,
                    format!(
                        "no model request while it ran, then {refusal}: {}",
                        answer_of(s)
                    ),
                ));
            }
            continue;
        }
        // Refused with another JSON-RPC error: validated, but not reported the way the tools
        // page says input validation errors are, and the schema's isError SHOULD asks. Executed: not
        // validated.
        if jsonrpc_error(s).is_some() {
            return Outcome::breaks(
                "mcp.tool-execution-errors",
                format!(
                    "`{}` sent arguments its inputSchema rejects and got JSON-RPC error {} instead of an isError result or -32602",
                    s.name,
                    code.map_or_else(|| "without an integer code".to_owned(), |c| c.to_string())
                ),
                vec![Evidence::new(
                    &s.name,
                    "result.isError = true or error.code = -32602",
                    excerpt(jsonrpc_error(s).unwrap_or_else(JsonRef::null), 240),
                )],
            );
        }
        return fail(
            format!(
                "`{}` sent arguments its inputSchema rejects and got neither an isError result nor -32602",
                s.name
            ),
            vec![Evidence::new(
                &s.name,
                "result.isError = true or error.code = -32602",
                answer_of(s),
            )],
        );
    }
    if undecided.is_empty() {
        Outcome::Kept(kept)
    } else {
        Outcome::Inconclusive(undecided.join("; "))
    }
}

/// The `with:` parameters of `MCP-007`, `MCP-011`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct McpToolErrors {
    /// Steps calling a tool that was not listed (names or globs).
    pub(super) unknown_tool: Option<OneOrMany>,
    /// Steps calling a tool with arguments its `inputSchema` rejects (names or globs).
    pub(super) invalid_arguments: Option<OneOrMany>,
}
