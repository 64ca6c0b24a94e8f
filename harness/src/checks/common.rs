//! Helpers the check families share: step selection, parameters, result and journal readers.

use std::sync::LazyLock;

pub(super) use crate::client::{JsonDoc, JsonRef};
use regex::Regex;
use serde_json::{Value, json};

use super::read::select_steps;
use super::verdict::{Evidence, Outcome};
use crate::observation::{Observed, StepRecord};
use crate::scenario::{ActionKind, CheckSpec, StepAction};

/// The steps in the check's scope whose action is one of `kinds`.
pub(super) fn steps_of<'a>(
    o: &'a Observed,
    c: &CheckSpec,
    kinds: &[ActionKind],
) -> Vec<&'a StepRecord> {
    select_steps(&o.steps, &c.steps)
        .into_iter()
        .filter(|s| s.is(kinds))
        .collect()
}

pub(super) fn na(what: &str) -> Outcome {
    Outcome::Inconclusive(format!("no {what} step ran"))
}

pub(super) fn fail(reason: impl Into<String>, ev: Vec<Evidence>) -> Outcome {
    Outcome::Fail(reason.into(), ev)
}

/// The check's typed `with:` parameters (validated when the scenario was loaded; a value that
/// does not fit is an error outcome, never a silently weaker check).
pub(super) fn params<T: serde::de::DeserializeOwned + Default>(
    c: &CheckSpec,
) -> Result<T, Outcome> {
    super::params::read(c.with.as_ref()).map_err(|e| Outcome::Error(e.to_string()))
}

pub(super) fn progress_of(s: &StepRecord) -> Vec<JsonRef<'_>> {
    s.observation.progress()
}

pub(super) fn within(time: &str, s: &StepRecord) -> bool {
    time >= s.started_at.as_str() && time <= s.ended_at.as_str()
}

/// Step actions that talk MCP to an agent.
pub(super) const MCP_ACTIONS: &[ActionKind] = &ActionKind::MCP;

/// Steps named by a `with:` step parameter (names or globs), when it is present.
pub(super) fn named_steps<'a>(
    o: &'a Observed,
    names: Option<&super::params::OneOrMany>,
) -> Option<Vec<&'a StepRecord>> {
    let names = super::params::strings(names);
    (!names.is_empty()).then(|| select_steps(&o.steps, &names))
}

pub(super) fn status(s: &StepRecord) -> u16 {
    s.observation.status()
}

pub(super) fn is_error_result(s: &StepRecord) -> bool {
    s.observation
        .result()
        .and_then(|r| r.get("isError"))
        .and_then(JsonRef::as_bool)
        .unwrap_or(false)
}

pub(super) fn jsonrpc_error(s: &StepRecord) -> Option<JsonRef<'_>> {
    s.observation.jsonrpc_error()
}

/// The step's JSON-RPC result, or `null` (for evidence).
pub(super) fn result_or_null(s: &StepRecord) -> JsonRef<'_> {
    s.observation.result().unwrap_or_else(JsonRef::null)
}

pub(super) fn result_text(s: &StepRecord) -> String {
    let mut out = String::new();
    collect_text(result_or_null(s), &mut out);
    out
}

/// Every `text` string inside a value, newline-separated.
pub(super) fn collect_text(v: JsonRef<'_>, out: &mut String) {
    if let Some(m) = v.as_object() {
        for (k, x) in m {
            if k == "text"
                && let Some(t) = x.as_str()
            {
                out.push_str(t);
                out.push('\n');
            } else {
                collect_text(x, out);
            }
        }
    } else if let Some(a) = v.as_array() {
        a.iter().for_each(|x| collect_text(x, out));
    }
}

/// Whether two steps ran at the same time.
pub(super) fn overlap(a: &StepRecord, b: &StepRecord) -> bool {
    a.started_at < b.ended_at && b.started_at < a.ended_at
}

/// A header a `raw` step sent (case-insensitive name).
pub(super) fn raw_header<'a>(s: &'a StepRecord, name: &str) -> Option<&'a str> {
    let Some(StepAction::Raw(r)) = s.action() else {
        return None;
    };
    r.headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

// ---------------------------------------------------------------- bearer

pub(super) static BEARER_RE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"Bearer ([A-Za-z0-9._~+/=-]+)").ok());

pub(super) fn bearer_tokens(text: &str) -> Vec<String> {
    BEARER_RE
        .as_ref()
        .map(|re| re.captures_iter(text).map(|c| c[1].to_owned()).collect())
        .unwrap_or_default()
}

// ---------------------------------------------------------------- messages

/// A `send` step that cancels its call after some progress (only such a step records a
/// cancellation in its observation).
pub(super) fn cancelled(s: &StepRecord) -> bool {
    matches!(s.action(), Some(StepAction::Send(m)) if m.cancel_after_progress.is_some())
}

pub(super) fn llm_requests_during(o: &Observed, s: &StepRecord) -> Vec<String> {
    o.llm_journals
        .values()
        .flatten()
        .filter(|e| within(&e.time, s))
        .map(|e| e.body.as_ref().map(Value::to_string).unwrap_or_default())
        .collect()
}

// ---------------------------------------------------------------- MCP

pub(super) fn sends_session(s: &StepRecord) -> bool {
    match s.action() {
        Some(StepAction::Raw(r)) => r.with_session && raw_header(s, "mcp-session-id").is_none(),
        Some(StepAction::Connect(_)) => false,
        _ => s.is(MCP_ACTIONS),
    }
}

/// The JSON-RPC body a `raw` step posted, when it is JSON.
pub(super) fn raw_body(s: &StepRecord) -> Option<Value> {
    let Some(StepAction::Raw(r)) = s.action() else {
        return None;
    };
    serde_json::from_str(&r.body).ok()
}

pub(super) fn raw_method(s: &StepRecord) -> Option<String> {
    raw_body(s)?
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// The tool name and arguments a `call` or raw `tools/call` step sent.
pub(super) fn tool_call_of(s: &StepRecord) -> Option<(String, Value)> {
    match s.action()? {
        StepAction::Call(t) => Some((
            t.tool.clone(),
            t.arguments
                .clone()
                .filter(|a| !a.is_null())
                .unwrap_or(json!({})),
        )),
        StepAction::Raw(_) => {
            let body = raw_body(s)?;
            (body.get("method")? == "tools/call").then_some(())?;
            Some((
                body.pointer("/params/name")?.as_str()?.to_owned(),
                body.pointer("/params/arguments")
                    .cloned()
                    .unwrap_or(json!({})),
            ))
        }
        _ => None,
    }
}
