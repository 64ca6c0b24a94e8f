//! Helpers the check families share: step selection, parameters, result and journal readers.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Value, json};

use super::{Evidence, Observed, Outcome, StepRecord, select_steps};
use crate::scenario::CheckSpec;

pub(super) fn steps_of<'a>(
    o: &'a Observed,
    c: &CheckSpec,
    actions: &[&str],
) -> Vec<&'a StepRecord> {
    select_steps(&o.steps, &c.steps)
        .into_iter()
        .filter(|s| actions.contains(&s.action.as_str()))
        .collect()
}

pub(super) fn na(what: &str) -> Outcome {
    Outcome::NotApplicable(format!("no {what} step ran"))
}

pub(super) fn fail(reason: impl Into<String>, ev: Vec<Evidence>) -> Outcome {
    Outcome::Fail(reason.into(), ev)
}

pub(super) fn param<'a>(c: &'a CheckSpec, key: &str) -> Option<&'a Value> {
    c.with.as_ref().and_then(|w| w.get(key))
}

pub(super) fn progress_of(s: &StepRecord) -> Vec<Value> {
    s.output
        .get("progress")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

pub(super) fn within(time: &str, s: &StepRecord) -> bool {
    time >= s.started_at.as_str() && time <= s.ended_at.as_str()
}

/// Step actions that talk MCP to an agent.
pub(super) const MCP_ACTIONS: &[&str] = &crate::scenario::StepAction::MCP_KEYS;

/// A parameter that may be one string or a list of strings.
pub(super) fn param_strs(c: &CheckSpec, key: &str) -> Vec<String> {
    match param(c, key) {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// Steps named by `with: {key: …}` (globs), when the key is present.
pub(super) fn named_steps<'a>(
    o: &'a Observed,
    c: &CheckSpec,
    key: &str,
) -> Option<Vec<&'a StepRecord>> {
    let names = param_strs(c, key);
    (!names.is_empty()).then(|| select_steps(&o.steps, &names))
}

pub(super) fn status(s: &StepRecord) -> u64 {
    s.output.get("status").and_then(Value::as_u64).unwrap_or(0)
}

pub(super) fn is_error_result(s: &StepRecord) -> bool {
    s.output
        .pointer("/result/isError")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

pub(super) fn jsonrpc_error(s: &StepRecord) -> Option<&Value> {
    s.output.get("error").filter(|e| !e.is_null())
}

pub(super) fn result_text(s: &StepRecord) -> String {
    let mut out = String::new();
    collect_text(s.output.get("result").unwrap_or(&Value::Null), &mut out);
    out
}

/// Every `text` string inside a value, newline-separated.
pub(super) fn collect_text(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
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
        }
        Value::Array(a) => a.iter().for_each(|x| collect_text(x, out)),
        _ => {}
    }
}

/// Whether two steps ran at the same time.
pub(super) fn overlap(a: &StepRecord, b: &StepRecord) -> bool {
    a.started_at < b.ended_at && b.started_at < a.ended_at
}

pub(super) fn header<'a>(request: &'a Value, name: &str) -> Option<&'a str> {
    request
        .get("headers")
        .and_then(Value::as_object)?
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .and_then(|(_, v)| v.as_str())
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

pub(super) fn cancelled(s: &StepRecord) -> bool {
    s.request
        .get("cancel_after_progress")
        .is_some_and(|v| !v.is_null())
        || s.output.get("cancelled_at_ms").is_some()
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
    match s.action.as_str() {
        "raw" => {
            s.request
                .get("with_session")
                .and_then(Value::as_bool)
                .unwrap_or(true)
                && header(&s.request, "mcp-session-id").is_none()
        }
        "connect" => false,
        a => MCP_ACTIONS.contains(&a),
    }
}

pub(super) fn raw_method(s: &StepRecord) -> Option<String> {
    let body: Value = serde_json::from_str(s.request.get("body")?.as_str()?).ok()?;
    body.get("method")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// The tool name and arguments a `call` or raw `tools/call` step sent.
pub(super) fn tool_call_of(s: &StepRecord) -> Option<(String, Value)> {
    match s.action.as_str() {
        "call" => Some((
            s.request.get("tool")?.as_str()?.to_owned(),
            s.request
                .get("arguments")
                .cloned()
                .filter(|a| !a.is_null())
                .unwrap_or(json!({})),
        )),
        "raw" => {
            let body: Value = serde_json::from_str(s.request.get("body")?.as_str()?).ok()?;
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
